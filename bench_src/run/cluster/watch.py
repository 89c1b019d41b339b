"""What the scheduler does for a cluster run: when the run's client is gone (killed, its machine
down), unregister the hosts' plugin, so that each host stops the private servers it started and
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


class ClientWatch(SchedulerPlugin):
    """On the scheduler: the hosts' plugin `worker_plugin` unregistered when the client `client_id`
    leaves, and this plugin removed with it."""

    name = NAME

    def __init__(self, client_id: str, worker_plugin: str):
        self.client_id, self.worker_plugin = client_id, worker_plugin

    def remove_client(self, scheduler, client: str) -> None:
        if client != self.client_id:
            return
        asyncio.get_running_loop().create_task(self.stop_hosts(scheduler))

    async def stop_hosts(self, scheduler) -> None:
        try:
            if self.worker_plugin in scheduler.worker_plugins:  # a client that closed unregistered it already
                await scheduler.unregister_worker_plugin(None, self.worker_plugin)
        finally:
            if self.name in scheduler.plugins:
                scheduler.remove_plugin(name=self.name)
