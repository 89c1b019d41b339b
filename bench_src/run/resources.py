"""What the workloads need around their samples: fixtures and database servers.

`Resources` is the runner's sample context.  At the start of a run it makes the fixture templates
and starts the servers the plan needs; before every sample it restores mutated data (files,
SQLite database, the server's `users` table) and restarts a server that died; at the end it stops
the servers, also after an error or an interrupt.  A cell that cannot run here (no server
installed, a private server that cannot start, a full disk where it would live) raises
`SkipSample` with the reason in one line, which the runner stores as a `skipped` sample, visibly
(taken again on resuming).  A server the user named (`dsn`) is not skipped: one that refuses its
credentials stops the run before any sample (servers.ServerError names it).  When a server sample
fails and the server is found dead afterwards (or hung: no answer within seconds), the sample's
reason says so and the server is restarted at once.
"""
from __future__ import annotations

import resource
from pathlib import Path
from typing import Any

from ..catalogue import WORKLOADS
from ..plan import Cell, Plan
from ..plan.dsn import resolve_dsn
from ..store import is_disk_full
from ..store.secrets import dsn_secrets
from . import servers
from .fixtures import Fixtures

SERVER_WORKLOADS = {"mysql": "mysql", "postgres": "postgres"}


class SkipSample(Exception):
    """The cell cannot run on this machine; the message says why and what to do."""


def max_pool(plan: Plan, workload: str) -> int:
    """The largest connection pool any cell of `workload` opens (the article preset's fixed pools
    included), so that the server admits it."""
    pools = [int(dict(c.params).get("pool", 0)) for c in plan.cells() if c.workload == workload]
    return max(pools, default=64) or 64


class Resources:
    def __init__(self, log=print):
        self.log = log
        self.fixtures: Fixtures | None = None
        self.servers: dict[str, servers.Server] = {}
        self.unavailable: dict[str, str] = {}
        self._dsns: dict[str, str] = {}

    # --- SampleContext -------------------------------------------------------------------------
    def start(self, plan: Plan, store) -> dict[str, Any]:
        self.fixtures = Fixtures(Path(store.dir) / "fixtures")
        info: dict[str, Any] = {"nofile_hard_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[1]}
        for w in plan.workloads:
            if WORKLOADS[w].fixture in ("files", "sqlite"):
                getattr(self.fixtures, f"{WORKLOADS[w].fixture}_template")()
        kinds = sorted({SERVER_WORKLOADS[w] for w in plan.workloads if w in SERVER_WORKLOADS})
        self._dsns = {k: resolve_dsn(k, v) for k, v in plan.dsn.items()}
        for kind in kinds:
            dsn = self._dsns.get(kind)
            why = None if dsn else servers.missing(kind)
            if why:
                self.unavailable[kind] = why
                self.log(f"skipping the {kind} cells: {why}")
                continue
            server = servers.make_server(kind, dsn, max_connections=max_pool(plan, kind) + 50)
            try:
                server.start()
            except (servers.ServerError, OSError) as exc:
                server.close()
                if dsn:
                    raise  # the user's server: a refusal is an error of the run, not a skip
                self.unavailable[kind] = f"the private {kind} server could not be started: {exc}" + (
                    "; its samples are stored as skipped and taken when the same command runs again" if
                    is_disk_full(exc) else "")
                self.log(f"skipping the {kind} cells: {self.unavailable[kind]}")
                continue
            except BaseException:  # interrupted (Ctrl-C, SIGTERM) while starting: leave no files behind
                server.close()
                raise
            self.servers[kind] = server
            info[kind] = server.describe()
            self.log(f"{kind}: {info[kind]['version']} at {info[kind]['dsn']}")
        info["unavailable"] = dict(self.unavailable)
        return info

    def before_sample(self, cell: Cell) -> dict[str, Any]:
        w = WORKLOADS[cell.workload]
        if w.fixture in ("files", "sqlite"):
            return {"data_dir": self.fixtures.for_sample(cell.workload)}
        if w.fixture == "server":
            kind = SERVER_WORKLOADS[cell.workload]
            if kind in self.unavailable:
                raise SkipSample(self.unavailable[kind])
            server = self.servers[kind]
            try:  # a restore that succeeds is the check that the server answers: one client call, not two
                server.restore_users()
            except servers.ServerError:
                if not server.ensure_running():  # it answers: the restore's own error stands
                    raise
                self.log(f"the {kind} server had stopped; restarted it at {servers.redact(server.dsn)}")
                server.restore_users()
            return {"dsn": server.dsn}
        return {}

    def after_sample(self, cell: Cell, record: dict[str, Any]) -> None:
        """A failed server sample: say in its reason whether the server had died meanwhile."""
        kind = SERVER_WORKLOADS.get(cell.workload)
        if kind is None or record.get("status") == "ok" or kind not in self.servers:
            return
        server = self.servers[kind]
        if server.alive():
            return
        # restarted now, without a second probe (a hung one costs PROBE_TIMEOUT_S each): the next
        # sample's restore does not wait on a hung server first
        if not server.managed:
            record["reason"] = (f"{record.get('reason') or ''} [the {kind} server at {servers.redact(server.dsn)} "
                                "did not answer after this sample; it is yours, not restarted here: the next "
                                "sample tries it again]").strip()
            return
        try:
            server.restart()
            then = f"it was restarted at {servers.redact(server.dsn)}"
        except (servers.ServerError, OSError) as exc:
            if is_disk_full(exc):
                raise  # every further sample would fail alike: the run stops in one line
            then = f"restarting it failed ({exc}); the next sample tries again"
        record["reason"] = (f"{record.get('reason') or ''} [the {kind} server was found dead after this "
                            f"sample; {then}]").strip()

    def secrets(self) -> list[str]:
        """Every password of the servers in use (to be masked in anything stored or printed)."""
        out = [s for server in self.servers.values() for s in server.secrets()]
        for value in self._dsns.values():
            out += dsn_secrets(value)
        return out

    def stop(self) -> None:
        for server in self.servers.values():
            server.close()
        self.servers.clear()


def raise_nofile_limit() -> tuple[int, int]:
    """Raise this process's open-file limits as far as allowed, so the programs inherit them.
    As root the hard limit goes up to the kernel's nr_open; otherwise the soft limit to the hard."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        nr_open = int(Path("/proc/sys/fs/nr_open").read_text())
    except (OSError, ValueError):
        nr_open = hard
    for target in (max(hard, nr_open), hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, target))
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)
