"""What the scheduler does for a cluster run: when the run's client is gone (killed, its machine
down) and has not come back within GRACE_S, unregister the hosts' plugin, so that each host stops the private servers it started and
removes its scratch directory at once, not when the next run registers its own.

Kept apart from `host` and `engine` so that the scheduler, which unpickles this plugin, imports
nothing of the harness but this module.  A scheduler that cannot (bench_src not installed there,
pickled plugins refused by its configuration) runs without it: the client says so in a note, and
the hosts' servers then stop when the next run registers its plugin, or with their worker.
"""
from __future__ import annotations

import asyncio

from distributed.diagnostics.plugin import SchedulerPlugin

NAME = "bench-client-watch"
# How long a client may be away before its run counts as gone: a client whose connection dropped
# reconnects with the same id (the engine waits for it, engine.CONNECT_S), and its hosts must not
# be torn down meanwhile.
GRACE_S = 90.0


class ClientWatch(SchedulerPlugin):
    """On the scheduler: the hosts' plugin `worker_plugin` unregistered when the client `client_id`
    leaves, and this plugin removed with it; nothing done if another client's watch has replaced it
    by then (the run resumed: the hosts are that client's)."""

    name = NAME

    def __init__(self, client_id: str, worker_plugin: str, grace_s: float = GRACE_S):
        self.client_id, self.worker_plugin, self.grace_s = client_id, worker_plugin, grace_s

    def remove_client(self, scheduler, client: str) -> None:
        if client != self.client_id:
            return
        asyncio.get_running_loop().create_task(self.stop_hosts(scheduler))

    async def stop_hosts(self, scheduler) -> None:
        await asyncio.sleep(self.grace_s)
        if self.client_id in scheduler.clients:  # it came back (a dropped connection): its run goes on
            return
        if scheduler.plugins.get(self.name) is not self:
            # The run was resumed by a new client within the grace: its watch replaced this one, and
            # the hosts' plugin under the same name is the resumed run's, whose servers must stay.
            return
        try:
            if self.worker_plugin in scheduler.worker_plugins:  # a client that closed unregistered it already
                await scheduler.unregister_worker_plugin(None, self.worker_plugin)
        finally:
            if self.name in scheduler.plugins:
                scheduler.remove_plugin(name=self.name)
