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
reason says so and the server is restarted at once.  A server found stopped or not answering
before a sample (the restore waits at most the plan's timeout of a sample) is restarted then, and
that sample's `note` says so.  Every restart is listed in the session's record (meta.json:
`context.<kind>.restarts`: when, what was seen, the server's address after it, passwords masked),
and `context.<kind>.dsn` names the server in use.
"""
from __future__ import annotations

import resource
from pathlib import Path
from typing import Any

from ..catalogue import WORKLOADS
from ..plan import Cell, Plan
from ..plan.dsn import resolve_dsn
from ..statuses import OK
from ..store import is_disk_full, now_utc
from ..store.secrets import dsn_secrets
from . import servers
from .fixtures import Fixtures


class SkipSample(Exception):
    """The cell cannot run on this machine; the message says why and what to do."""


def max_pool(plan: Plan, workloads: set[str]) -> int:
    """The largest connection pool any cell of `workloads` opens (the article preset's fixed pools
    included), so that their server admits it."""
    if isinstance(workloads, str):  # a name would be read letter by letter ("my" in "mysql")
        raise TypeError(f"max_pool takes a set of workloads, not the name {workloads!r}")
    pools = [int(dict(c.params).get("pool", 0)) for c in plan.cells() if c.workload in workloads]
    return max(pools, default=64) or 64


class Resources:
    def __init__(self, log=print):
        self.log = log
        self.fixtures: Fixtures | None = None
        self.servers: dict[str, servers.Server] = {}
        self.unavailable: dict[str, str] = {}
        self._dsns: dict[str, str] = {}
        self.info: dict[str, Any] = {}  # what start() returned, kept current (the session's `context`)
        self._store = None
        self._notes: list[str] = []
        self.restore_timeout_s: float = servers.CLIENT_TIMEOUT_S

    # --- SampleContext -------------------------------------------------------------------------
    def start(self, plan: Plan, store) -> dict[str, Any]:
        self.fixtures = Fixtures(Path(store.dir) / "fixtures")
        self._store = store
        self.restore_timeout_s = min(servers.CLIENT_TIMEOUT_S, max(plan.timeout_s, servers.RESTORE_MIN_TIMEOUT_S))
        info: dict[str, Any] = {"nofile_hard_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[1]}
        self.info = info
        for w in plan.workloads:
            if WORKLOADS[w].fixture in ("files", "sqlite"):
                getattr(self.fixtures, f"{WORKLOADS[w].fixture}_template")()
        kinds = sorted({WORKLOADS[w].server for w in plan.workloads if WORKLOADS[w].server})
        self._dsns = {k: resolve_dsn(k, v) for k, v in plan.dsn.items()}
        for kind in kinds:
            dsn = self._dsns.get(kind)
            why = None if dsn else servers.missing(kind)
            if why:
                self.unavailable[kind] = why
                self.log(f"skipping the {kind} cells: {why}")
                continue
            served = {w for w in plan.workloads if WORKLOADS[w].server == kind}
            server = servers.make_server(kind, dsn, max_connections=max_pool(plan, served) + 50)
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
        if w.server:
            kind = w.server
            if kind in self.unavailable:
                raise SkipSample(self.unavailable[kind])
            server = self.servers[kind]
            try:  # a restore that succeeds is the check that the server answers: one client call, not two
                server.restore_users(timeout=self.restore_timeout_s)
            except servers.ServerError as exc:
                seen = self._seen(server, exc)
                if seen is None:  # it answers: the restore's own error stands
                    raise
                if not server.managed:
                    raise servers.ServerError(f"the {kind} server at {servers.redact(server.dsn)} {seen}") from None
                try:
                    server.restart()
                except (servers.ServerError, OSError) as failed:
                    self._restarted(kind, seen, f"before a sample of {cell.id}", error=failed)
                    raise
                at = self._restarted(kind, seen, f"before a sample of {cell.id}")
                self.log(f"the {kind} server {seen}; restarted it at {servers.redact(server.dsn)}")
                self._notes.append(f"before this sample the {kind} server {seen}; restarted at {at}, it now runs "
                                   f"at {servers.redact(server.dsn)}")
                server.restore_users(timeout=self.restore_timeout_s)
            return {"dsn": server.dsn}
        return {}

    def _seen(self, server: servers.Server, exc: servers.ServerError) -> str | None:
        """What a server whose client call failed was seen to be: stopped ("had stopped (killed by
        SIGKILL)") or not answering (hung: no answer within the call's timeout, or an error while
        its process runs); None when it answers a probe (the call's own error stands).  A server
        that got no answer is restarted without a probe, which would wait as long again."""
        exited = getattr(server, "exited", None) if server.managed else None
        if exited is not None and exited():
            return f"had stopped ({exited()})"
        if isinstance(exc, servers.NoAnswer):
            stopped = "; its process was stopped by a signal" if getattr(server, "suspended", lambda: False)() else ""
            return f"was not answering (no answer within {self.restore_timeout_s:g} s{stopped})"
        if server.alive():
            return None
        if exited is not None and exited():  # it ended meanwhile
            return f"had stopped ({exited()})"
        return f"was not answering ({str(exc).removeprefix(f'{server.kind}: ')})"

    def _restarted(self, kind: str, seen: str, when: str, error: BaseException | None = None) -> str:
        """Record a restart (or a failed one) in the session's `context`: when, what was seen, the
        server's address after it; returns its time.  The address is redacted and the new password
        given to the store's scrubber before anything is written."""
        at = now_utc()
        server = self.servers[kind]
        entry: dict[str, Any] = {"at": at, "when": when, "seen": f"the {kind} server {seen}"}
        if error is None:
            entry["dsn"] = servers.redact(server.dsn)
        else:
            entry["failed"] = f"{type(error).__name__}: {error}"
        described = self.info.setdefault(kind, {})
        if error is None:
            described["dsn"] = entry["dsn"]
        described.setdefault("restarts", []).append(entry)
        scrubber = getattr(self._store, "scrubber", None)
        if scrubber is not None:
            scrubber.add(*self.secrets())
        update = getattr(self._store, "update_session", None)
        if update is not None:  # a cluster's host has no store: its samples' notes say it
            update(context=self.info)
        return at

    def after_sample(self, cell: Cell, record: dict[str, Any]) -> None:
        """A failed server sample: say in its reason whether the server had died meanwhile."""
        kind = WORKLOADS[cell.workload].server
        if kind is None or record.get("status") == OK or kind not in self.servers:
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
        exited = getattr(server, "exited", lambda: None)()
        seen = f"had stopped ({exited})" if exited else "was not answering (its process runs but answered no probe)"
        when = f"after sample {record.get('sample_id')} failed"
        try:
            server.restart()
        except (servers.ServerError, OSError) as exc:
            self._restarted(kind, seen, when, error=exc)
            if is_disk_full(exc):
                raise  # every further sample would fail alike: the run stops in one line
            then = f"restarting it failed ({exc}); the next sample tries again"
        else:
            self._restarted(kind, seen, when)
            then = f"it was restarted at {servers.redact(server.dsn)}"
        record["reason"] = (f"{record.get('reason') or ''} [the {kind} server was found dead after this "
                            f"sample; {then}]").strip()

    def sample_note(self) -> str | None:
        """What this context did before the sample just taken that its record should carry (a
        server found stopped or not answering, and restarted), once."""
        notes, self._notes = self._notes, []
        return "; ".join(notes) or None

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
