"""The client of a cluster run: the hosts are Dask workers, the results directory, the checksums
and the sequential rule stay here.

`Hosts.start` starts a `LocalCluster` ("local:N": N workers, one thread and the resource `host=1`
each, each pinned to its own CPUs: cpus.split; on loopback, mutual TLS with a temporary CA) or
connects to a running scheduler (its security is the user's Dask configuration, docs/cluster.md), and refuses,
before the first sample, a worker that is not one host (not one thread, no `host` resource) or
whose programs are not the session's (host.HostPlugin.programs; a host without programs gets the
client's, shipped).  Each host's description (its machine fingerprint) goes into meta.json.

`Hosts.take_blocks` is the runner's take_blocks: each block is one task placed whole on whichever
host is free (`resources={"host": 1}`); at most one block per host is handed out at a time, so the
sequential rule and the time budget decide here, between blocks.  Samples arrive as events the
moment a host takes them and are stored at once (appended and fsync'ed by the runner's keeper);
a block's result repeats them, and a sample is stored once per attempt.  A host lost mid-block:
Dask runs the block again whole elsewhere (or on the same host when it returns; a host that joins
mid-run is checked the same way and described in meta.json before its first sample); what the lost
attempt delivered stays in samples.jsonl with its host, and the store keeps one complete attempt
per block.  The client hears of every host removed from the scheduler (its event "remove-worker",
`SCHEDULER_EVENTS`): one line names the host, the block it ran and why, and the session's
`hosts_lost` in meta.json records it (host, worker, time, block, attempt, samples it delivered,
reason), so that the samples set aside carry their reason (store.ledger.set_aside_reasons).  A
host whose scratch directory is full sends back its ScratchFull, which stops the run with the one
line of a full disk, naming the host (the runner's DiskFull).  A block Dask gives up on
(its hosts kept dying) is stored as `host_lost` samples with the reason (those of its samples that
never arrived), taken again on the next resume; no host for `NO_HOST_S` seconds ends the run, and
so does the scheduler gone (the client gave up reconnecting, or a call to it could not connect:
`scheduler_unreachable`), each with one line.
"""
from __future__ import annotations

import logging
import os
import queue
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections import deque
from typing import Any, Callable

import dask
from distributed import Client, Event, KilledWorker, LocalCluster, Semaphore, TimeoutError as DaskTimeout
from distributed.comm import CommClosedError
from distributed.security import Security

from ... import cpus, paths
from ...cluster_spec import ClusterError, ClusterSpec
from ...plan import Plan, Slot
from ...statuses import HOST_LOST, SKIPPED
from ...store import now_utc
from ...store.hosts import host_id, machine_id
from ...store.lock import LOCK_NAME, DirLock
from ...store.space import ScratchFull
from ..measure import LOCAL_CLUSTER_PREFIX
from ..sample import record
from . import host, watch

# The Dask settings a host runs with: no statistical profiler (a thread sampling every 10 ms), no
# GIL monitor (1 ms), slow event-loop and system monitors; a worker's memory is not limited (the
# launcher's guard watches the programs).  Workers started by hand take them from the environment
# (docs/cluster.md); `Hosts.start` warns about a worker whose profiler is on.
QUIET_WORKERS = {
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "5s",
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.system-monitor.gil.enabled": False,
    # the nanny's MALLOC_TRIM_THRESHOLD_ and *_NUM_THREADS: not in the workers' environment
    "distributed.nanny.pre-spawn-environ": {},
}
# The local cluster's own HTTP servers: Dask's scheduler and workers serve HTTP beside their TLS
# ports even with the dashboard off (the scheduler on port 8787 of loopback by default): pages of
# workers, logs and counts, unauthenticated, readable by any local user.  A local cluster serves
# none of them (no routes), and the scheduler's listens on a free port of loopback, not 8787.
PRIVATE_HTTP = {
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
}
LOCAL_SCHEDULER_HTTP = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}
# What a nanny may put in a worker's environment: the programs get the client's values instead
# (host.HostPlugin.program_env), whatever the hosts' Dask configuration.
NANNY_ENVIRONMENT = ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
POLL_S = 0.5  # how often the client looks at its blocks when no sample arrives (the hosts do not poll)
HOSTS_EVERY_S = 5.0  # how often it counts the hosts
NO_HOST_S = 120.0  # a run with no host for this long ends
CONNECT_S = 60.0
REACH_S = 5.0  # how long the check before the build waits for a scheduler's port to take a connection
# One run per scheduler at a time: the hosts' plugin, its events and acknowledgements have one name
# on a scheduler, and two runs' samples would run at once on the same hosts.  The run holds a Dask
# `Semaphore` of one lease; a client killed keeps it until the scheduler drops its lease (Dask's
# distributed.scheduler.locks.lease-timeout, 30 s by default), so a run waits that long for it.
RUN_LEASE = "bench-run"
LEASE_WAIT_S = 60.0
# The scheduler's topic of its own events, a worker's removal among them ("remove-worker": the worker,
# the tasks it was processing, why: its `stimulus_id`), which the client subscribes to.
SCHEDULER_EVENTS = "all"
# Why the scheduler removed a worker, by the start of its stimulus_id (distributed's Scheduler.remove_worker).
REMOVED_BECAUSE = {
    "handle-worker-cleanup": "the scheduler lost its connection to the worker (killed, stopped, or its network "
                             "went)",
    "check-worker-ttl": "the worker sent the scheduler no heartbeat for distributed.scheduler.worker-ttl",
}
SCHEDULER_LOST = ("the connection to the cluster's scheduler was lost while the block ran; taken again on the "
                  "next resume")
SCHEDULER_LOST_BEFORE = ("the connection to the cluster's scheduler was lost before any sample of the block arrived "
                         "(it may never have started); taken again on the next resume")


class HeldScheduler:
    """A scheduler's client and its one lease (RUN_LEASE), taken before the results directory is
    opened, so that a run refused because another holds the hosts writes nothing; `Hosts` adopts
    them (`Hosts.held`), and `close` gives them back where no `Hosts` did."""

    def __init__(self, client: Client, lease: Semaphore):
        self.client, self.lease = client, lease

    def close(self) -> None:
        try:
            self.lease.release()
        finally:
            self.client.close()


def hold_scheduler(spec: ClusterSpec, log: Callable[[str], None]) -> HeldScheduler:
    """A client of the scheduler `spec` names, holding its one lease; a HostsError when no scheduler
    with a worker answers, or when another run holds the lease after LEASE_WAIT_S."""
    check_scheduler(spec)
    with dask.config.set(QUIET_WORKERS):
        try:
            client = Client(spec.address, timeout=CONNECT_S, set_as_default=False)
            client.wait_for_workers(1, timeout=CONNECT_S)
        except (OSError, DaskTimeout) as exc:
            raise HostsError(f"cluster {spec}: no scheduler with a worker answered within "
                             f"{CONNECT_S:.0f} s ({type(exc).__name__}: {exc}); start one (docs/cluster.md)"
                             ) from None
    try:
        lease = Semaphore(max_leases=1, name=RUN_LEASE, scheduler_rpc=client.scheduler, loop=client.loop)
        if not lease.acquire(timeout=1):
            log(f"note: another run holds the cluster's hosts (or a run whose client was killed, until the "
                f"scheduler drops its lease); waiting up to {LEASE_WAIT_S:.0f} s")
            if not lease.acquire(timeout=LEASE_WAIT_S):
                raise HostsError(f"cluster {spec}: another run is using its hosts (one run per scheduler at a "
                                 "time: two would take their samples at once on the same hosts); nothing was taken: "
                                 "wait until it has ended, or start a scheduler and hosts of your own")
    except BaseException:
        client.close()
        raise
    return HeldScheduler(client, lease)


class HostsError(ClusterError):
    """The cluster cannot run the plan (no host, a host refused); the message says what to do."""


def check_scheduler(spec: ClusterSpec) -> None:
    """Before anything is built: a scheduler's address takes a connection, and for a tls:// one Dask's
    configuration holds the client's TLS settings; else a HostsError naming the address and what to do.
    Nothing to check for a local cluster (this process starts it)."""
    if spec.kind != "scheduler":
        return
    scheme, name, port = spec.endpoint()
    if scheme == "tls" and Security().get_connection_args("client").get("ssl_context") is None:
        raise HostsError(f"cluster {spec}: a tls:// scheduler needs the client's TLS settings in Dask's configuration "
                         "(distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and .key; docs/cluster.md, "
                         "Security), and there are none; configure them, or give the scheduler's tcp:// address")
    try:
        socket.create_connection((name, port), timeout=REACH_S).close()
    except OSError as exc:
        raise HostsError(f"cluster {spec}: no scheduler answers at {spec.address.split('://', 1)[1]} "
                         f"({exc.strerror or type(exc).__name__}); "
                         f"start one there (`dask scheduler --host {name} --port {port}`, docs/cluster.md), or give "
                         "the address of a running one") from None
    kind = _identity(spec.address)
    if kind != "Scheduler":
        raise HostsError(f"cluster {spec}: what answers at {spec.address.split('://', 1)[1]} is not a Dask scheduler "
                         f"({kind}); a scheduler's dashboard or any other server is not its address: give the "
                         f"address `dask scheduler` printed (\"Scheduler at: tcp://...\")")


def _identity(address: str) -> str:
    """What the server at `address` says it is through Dask's own protocol ("Scheduler"), asked
    with a hard deadline; else what went wrong, in a few words.  Another server behind the port (a
    dashboard, any HTTP server) answers Dask's handshake with bytes that Dask reads as a frame of
    exabytes, or not at all, so the question runs in a thread of its own (a notebook's kernel runs
    an event loop of its own) and every error is an answer."""
    import asyncio

    from distributed.comm import connect

    async def ask() -> str:
        comm = await connect(address, timeout=REACH_S, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            reply = await comm.read()
        finally:
            await comm.close()
        return str(reply.get("type")) if isinstance(reply, dict) else "no reply Dask can read"

    def run() -> str:
        try:
            return asyncio.run(asyncio.wait_for(ask(), REACH_S))
        except (Exception, MemoryError) as exc:  # noqa: BLE001 - any failure says it is no scheduler
            return ("no answer within {:g} s".format(REACH_S) if isinstance(exc, (TimeoutError, asyncio.TimeoutError))
                    else f"{type(exc).__name__} in Dask's handshake")

    answer: list[str] = []
    asking = threading.Thread(target=lambda: answer.append(run()), name="bench-scheduler-identity", daemon=True)
    asking.start()
    asking.join(2 * REACH_S + 5)  # a thread that hangs past it is left behind, a daemon
    return answer[0] if answer else f"no answer within {2 * REACH_S + 5:g} s"


def refuse_shared_cpus(described: dict[str, dict]) -> None:
    """A HostsError when two workers run on CPUs of one machine that overlap (`dask worker
    --nworkers 2`, two workers without `taskset`): their samples would run at once on the same
    CPUs.  A machine is its name and fingerprint (which holds its identity: store.hosts.IDENTITY); a
    worker's CPUs are its `cpu_set`, else all.  Two workers of one host id are such workers, or two
    machines that nothing tells apart (the same hostname and machine ID): their samples and
    descriptions would merge into one host, and the line says so."""
    seen: dict[tuple, list[tuple[str, set[int], str]]] = {}
    for addr, d in sorted(described.items()):
        m = d.get("machine", {})
        cpus_ = ({int(c) for c in d["cpu_set"].split(",")} if d.get("cpu_set")
                 else set(range(m.get("logical_cpus") or 1)))
        key = (m.get("hostname"), machine_id(d["fingerprint"]))
        hid = host_id(d["fingerprint"])
        for other, theirs, other_id in seen.get(key, []):
            if cpus_ & theirs:
                alike = (f", or are two machines that nothing tells apart (one host {hid} to this run: the same "
                         "hardware, hostname and machine ID)" if other_id == hid else "")
                raise HostsError(f"workers {other} and {addr} run on the same CPUs of machine {m.get('hostname')} "
                                 f"({', '.join(str(c) for c in sorted(cpus_ & theirs))}){alike}: their samples would "
                                 "run at once on them; start one worker per machine (`--nworkers 1`), or pin each to "
                                 "CPUs of its own (`taskset -c`)"
                                 + ("; two machines: give each a hostname of its own" if alike else ""))
        seen.setdefault(key, []).append((addr, cpus_, hid))


def refuse_too_few_cpus(plan: Plan, described: dict[str, dict]) -> None:
    """A HostsError, before the first sample, when a cell is pinned to more cores than a host may
    run on: every such sample would fail there (a local cluster's hosts are refused earlier, by the
    plan's check; a scheduler's are known only now)."""
    most = max((c.cores or 0 for c in plan.cells()), default=0)
    small = {addr: d["machine"].get("usable_cpus") for addr, d in sorted(described.items())
             if most and int(d["machine"].get("usable_cpus") or 0) < most}
    if small:
        fewest = min(int(n or 0) for n in small.values())
        raise HostsError(f"the plan pins cells to {most} cores, but "
                         + ", ".join(f"host {addr} may run on {n} CPU(s)" for addr, n in small.items())
                         + f": each of those samples would fail there; give cores of at most {max(fewest, 1)}, or "
                         "hosts with as many CPUs as the largest core count")


def scheduler_unreachable(exc: OSError) -> bool:
    """Whether an error of a call to the scheduler means it cannot be reached: a closed comm
    (CommClosedError, an OSError), or distributed's connect giving up ("Timed out trying to connect
    to ... after N s": a plain OSError).  Neither has an errno; an OSError with one (a full disk
    while a sample is stored) is not the scheduler's and is not mistaken for it."""
    return isinstance(exc, CommClosedError) or exc.errno is None


class Hosts:
    def __init__(self, spec: ClusterSpec, plan: Plan, store, keep: Callable[[Slot, dict, Any], None],
                 done: set[str], log: Callable[[str], None]):
        self.spec, self.plan, self.store, self.keep, self.done, self.log = spec, plan, store, keep, done, log
        self.cluster: LocalCluster | None = None
        self.client: Client | None = None
        self.events: queue.Queue = queue.Queue()
        self.kept: set[tuple[str, str]] = set()  # (attempt, sample_id) already stored
        self.finished: dict[tuple[str, int], str] = {}  # (phase, block) -> the attempt that completed it
        self.slots: dict[str, Slot] = {}
        self.warmup_slots = {s.sample_id: s for s in plan.schedule() if s.phase == "warmup"}
        self.hosts: dict[str, dict] = {}
        self.count = 0
        self.plugin = False  # the host plugin is registered (so its servers are to be stopped)
        self.lost: OSError | None = None  # the error that showed the scheduler unreachable
        self.running: dict = {}  # the blocks handed out and not finished: future -> block
        self.scratch: str | None = None  # a local cluster's Dask scratch directory, removed at close
        self.scratch_lock: DirLock | None = None  # held while it is in use (a killed client's is swept later)
        self.block_host: dict[tuple, str] = {}  # (phase, block) -> the host its last stored sample came from
        self.block_attempt: dict[tuple, str] = {}  # (phase, block) -> the attempt of its last stored sample
        self.delivered: dict[str, int] = {}  # attempt -> its samples stored
        self.losses: list[dict] = []  # the hosts removed from the scheduler during the session (meta.json's hosts_lost)
        self.following = False  # subscribed to the scheduler's events (SCHEDULER_EVENTS)
        self.on_count: Callable[[int], None] = lambda _n: None  # told the hosts' number when it is counted again
        # told how many warm-ups a host takes beyond those planned at the start: a worker that joined,
        # or one that started again (its nanny restarted it, at its old address or another): each
        # takes the plan's warm-ups again, and they add to the planned count
        self.on_warmups: Callable[[int], None] = lambda _n: None
        # the hosts of the start whose warm-ups are planned (warmup_samples) and that have not begun them
        self.unannounced: set[str] = set()
        self.warmup_rounds = 0  # the rounds of the plan's warm-ups planned: one per host that begins them
        self.warmups_stored = 0  # the warm-up samples of this session stored (each id is its round's own)
        self.lease: Semaphore | None = None  # held while this run uses a scheduler's hosts
        self.watched = False  # the scheduler stops the hosts' servers if this client dies (watch.py)
        self.by_worker: dict[str, dict] = {}  # each worker's host description, by its address
        self.harness: dict | None = None  # the client's harness (host.harness), which every host must run
        self.held: HeldScheduler | None = None  # a scheduler's client and lease taken before the store opened

    # --- start and stop ---------------------------------------------------------------------------
    def start_cluster(self) -> dict[str, list[int]] | None:
        """The client, and the local cluster it starts; returns the local hosts' CPUs by name."""
        with dask.config.set(QUIET_WORKERS):
            if self.spec.kind == "local":
                # on loopback, over TLS with a throw-away CA held in memory: another local user can
                # neither connect to the scheduler nor hand its workers code to run, nor read a page
                # Dask's scratch space (its lock files, spilled data) in a temporary directory of
                # the run's own, removed at close, not in the temporary directory every process shares
                # locked by its client: one killed (kill -9) before its close leaves it to the next run of
                # any kind (measure.remove_stale_scratch, at the runner's start)
                self.scratch = tempfile.mkdtemp(prefix=LOCAL_CLUSTER_PREFIX)
                self.scratch_lock = DirLock(os.path.join(self.scratch, LOCK_NAME), f"the scratch {self.scratch}").acquire()
                with dask.config.set({**PRIVATE_HTTP, "temporary-directory": self.scratch}):
                    self.cluster = LocalCluster(n_workers=self.spec.workers, threads_per_worker=1, processes=True,
                                                local_directory=self.scratch,
                                                resources={"host": 1}, memory_limit=0, dashboard_address=None,
                                                scheduler_kwargs=LOCAL_SCHEDULER_HTTP, host="127.0.0.1",
                                                security=Security.temporary(), silence_logs=logging.CRITICAL)
                self.client = Client(self.cluster, set_as_default=False)
                return {str(i): s for i, s in enumerate(cpus.split(self.spec.workers))}
            held = self.held or hold_scheduler(self.spec, self.log)
            self.held = None
            self.client, self.lease = held.client, held.lease
            return None

    def start(self, binaries: dict[str, str | None]) -> None:
        """The cluster up, every host checked and ready to take blocks (see the module docstring)."""
        relevant = list(binaries)
        cpu_sets = self.start_cluster()
        workers = self.client.scheduler_info(n_workers=-1)["workers"]
        for addr, w in workers.items():
            if w.get("nthreads") != 1 or not w.get("resources", {}).get("host"):
                raise HostsError(f"worker {addr} has {w.get('nthreads')} threads and resources "
                                 f"{w.get('resources') or {}}: a host is one thread with the resource host=1; start it "
                                 "with `dask worker SCHEDULER --nthreads 1 --resources host=1`")
        found = self.client.run(host.inspect)
        self.harness = host.harness()
        for addr, info in found.items():
            self.refuse_other_harness(addr, info.get("harness"))
        # the programs go with the plugin to a host found without them, and on a scheduler to every host
        # (a worker that joins later, on a machine without them, uses them); a host with its own uses those
        shipped = ({k: (paths.BIN / k).read_bytes() for k in relevant} if self.spec.kind == "scheduler" else None)
        for addr, info in found.items():
            own = {k: info["binaries"].get(k) for k in relevant}
            if own == binaries:
                continue
            if all(v is None for v in own.values()):
                shipped = shipped or {k: (paths.BIN / k).read_bytes() for k in relevant}
                continue
            differ = "; ".join(f"{k}: {(own[k] or 'missing')[:12]} there, {(binaries[k] or 'none')[:12]} here"
                               for k in relevant if own[k] != binaries[k])
            raise HostsError(f"host {addr} ({info['bin_dir']}) has other programs than this session ({differ}): "
                             "nothing was taken; build the same commit there, or remove its programs so that they "
                             "are shipped from here")
        for addr, info in found.items():
            if info["profiler"]:
                self.log(f"warning: host {addr} runs Dask's profiler (a thread sampling every 10 ms beside the "
                         "benchmark); start it with DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False "
                         "(docs/cluster.md)")
        keys = set(NANNY_ENVIRONMENT) | set(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {}) \
            | set(dask.config.get("distributed.nanny.environ", {}) or {})
        plugin = host.HostPlugin(self.plan.to_dict(), self.store.run_id, self.store.session, binaries, relevant,
                                 cpu_sets, shipped, client_env={k: os.environ.get(k) for k in sorted(keys)})
        if self.spec.kind == "scheduler":  # a local cluster ends with this process
            # The watch first: it replaces the watch of a killed client of the same run, whose grace
            # may end at any moment, before the hosts' plugin replaces that client's (watch.py).
            try:
                self.client.register_plugin(watch.ClientWatch(self.client.id, host.PLUGIN), name=watch.NAME)
                self.watched = True
            except Exception as exc:  # noqa: BLE001 - a scheduler that cannot import it runs without it
                self.log(f"note: the scheduler cannot stop the hosts' servers should this client die "
                         f"({type(exc).__name__}: {exc}); they stop when the next run starts, or with their worker")
        self.client.register_plugin(plugin, name=host.PLUGIN)
        self.plugin = True
        self.client.subscribe_topic(host.TOPIC, self.events.put)
        self.client.subscribe_topic(SCHEDULER_EVENTS, self.scheduler_event)
        self.following = True
        try:
            described = self.client.run(host.check)
        except host.BinariesRefused as exc:
            raise HostsError(str(exc)) from None
        refuse_shared_cpus(described)
        refuse_too_few_cpus(self.plan, described)
        self.by_worker = dict(described)
        self.hosts = {host_id(d["fingerprint"]): d for d in described.values()}
        self.count = len(described)
        self.unannounced, self.warmup_rounds = set(described), len(described)
        for addr, d in described.items():
            self.log(f"host {host_id(d['fingerprint'])}: {d['label']} at {addr}"
                     + (" (programs shipped from here)" if shipped and found[addr]["binaries"] != binaries else ""))
            usable = d["machine"].get("usable_cpus")
            # a cell pinned to `cores` runs that many threads on that many CPUs: only the others use threads
            unpinned = any(not c.cores for c in self.plan.cells())
            if unpinned and self.plan.threads is not None and usable != self.plan.threads:
                self.log(f"warning: host {addr} may run on {usable} CPUs, and the plan runs every program with "
                         f"--threads {self.plan.threads}: both languages alike, but not as the host's own default "
                         "would; set threads to the hosts' CPUs")

    def refuse_other_harness(self, addr: str, theirs: dict | None) -> None:
        """A HostsError when a host runs other harness code than the client's (another commit, other
        changes): its samples would be taken and checked by code this run does not record."""
        if theirs is not None and theirs.get("digest") == self.harness["digest"]:
            return
        there = (theirs.get("git_commit") or "no git commit")[:12] if theirs else "an older harness, which does not say"
        here = (self.harness.get("git_commit") or "no git commit")[:12]
        raise HostsError(f"host {addr} runs other harness code than this client (commit {there} there, {here} here; "
                         "bench_src differs): check out the client's commit there and restart its worker")

    def describe(self) -> dict:
        """meta.json's `hosts` of this session: each host's description by its id."""
        return dict(self.hosts)

    def warmup_samples(self) -> int:
        """The warm-up samples of this session as planned at the start: every host takes all of the plan's."""
        return len(self.warmup_slots) * self.count

    def warmups_forgone(self) -> int:
        """The warm-ups planned that no host took: those of a host lost while it took them (the
        host that starts again takes them all again, planned anew) and of a host of the start that
        was given no block.  Asked once every block has run, when no host begins warm-ups any more."""
        return max(0, len(self.warmup_slots) * self.warmup_rounds - self.warmups_stored)

    def warmup_seconds(self, seconds: Callable) -> float:
        return sum(seconds(s.cell) for s in self.warmup_slots.values())

    def close(self) -> None:
        """Every sample that arrived stored, the hosts' servers stopped, the scheduler's plugin and
        lease given back, the client closed: each step tried whatever the one before did (a full
        disk while the last samples are stored must not leave the lease held by a notebook's kernel)."""
        try:
            if self.held is not None:  # taken before the store opened, never adopted
                self.held.close()
                self.held = None
            if self.client is not None:
                try:
                    self.drain()
                finally:
                    for what, step in (("stopping the hosts' servers", self.stop_hosts),
                                       ("removing the scheduler's watch", self.stop_watch),
                                       ("leaving the scheduler's events", self.stop_events),
                                       ("releasing the cluster's lease", self.release_lease)):
                        try:
                            step()
                        except Exception as exc:  # noqa: BLE001 - a host or the scheduler gone: nothing to undo there
                            self.log(f"note: {what}: {type(exc).__name__}: {exc}")
                    self.client.close()
        finally:
            try:
                if self.cluster is not None:
                    self.cluster.close()
            finally:
                if self.scratch:
                    if self.scratch_lock is not None:
                        self.scratch_lock.release()
                    shutil.rmtree(self.scratch, ignore_errors=True)

    def stop_hosts(self) -> None:
        if self.plugin:  # a run refused before it registered the plugin started no server
            self.client.unregister_worker_plugin(host.PLUGIN)  # servers stopped, scratch removed

    def stop_watch(self) -> None:
        if self.watched:
            self.client.unregister_scheduler_plugin(watch.NAME)

    def stop_events(self) -> None:
        """No more of the scheduler's events: subscribed to, they would be sent to this client as it
        leaves (its own removal among them), and the scheduler would log the closed connection."""
        if self.following:
            self.client.unsubscribe_topic(SCHEDULER_EVENTS)
            self.following = False

    def release_lease(self) -> None:
        if self.lease is not None:
            self.lease.release()
            self.lease = None

    # --- blocks ---------------------------------------------------------------------------------
    def take_blocks(self, blocks: list[list[tuple[int, Slot]]], deadline: float | None) -> bool:
        """Run the blocks with a sample missing, each whole on one host; at most one block per
        host at a time; a block starts only before the deadline.  Returns whether every block ran."""
        try:
            return self.take_blocks_on_the_scheduler(blocks, deadline)
        except OSError as exc:
            if not scheduler_unreachable(exc):
                raise
            raise self.scheduler_lost(exc) from None

    def scheduler_lost_reason(self, block: list[tuple[int, Slot]]) -> str:
        """Why a block's samples are lost with the scheduler: while it ran (some of them arrived), or
        before any arrived (handed out as the scheduler went, perhaps never started)."""
        arrived = (block[0][1].phase, block[0][1].block) in self.block_host
        return SCHEDULER_LOST if arrived else SCHEDULER_LOST_BEFORE

    def scheduler_lost(self, exc: BaseException | None = None) -> HostsError:
        """The samples not delivered of the blocks still running stored as `HOST_LOST` samples
        with the reason (`record_lost`), and the one-line error that says so."""
        for block in self.running.values():
            self.record_lost(block, self.scheduler_lost_reason(block))
        self.running = {}
        why = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
        return HostsError(f"cluster {self.spec}: the scheduler is gone{why}; every sample delivered is stored, the "
                          f"rest of the blocks it was running as {HOST_LOST}: start the scheduler and its hosts, "
                          "and resume")

    def take_blocks_on_the_scheduler(self, blocks: list[list[tuple[int, Slot]]], deadline: float | None) -> bool:
        todo = deque(b for b in blocks if any(slot.sample_id not in self.done for _, slot in b))
        running = self.running = {}
        finished_all = True
        no_host_since = None
        hosts_now, counted = len(self.client.nthreads()), time.monotonic()
        while todo or running:
            if self.client.status in ("closing", "closed"):  # it gave up reconnecting to the scheduler
                raise self.scheduler_lost()
            if time.monotonic() - counted > HOSTS_EVERY_S:
                hosts_now, counted = len(self.client.nthreads()), time.monotonic()
                self.on_count(hosts_now)
            # a client reconnecting to its scheduler hands out nothing: a block submitted then may never run
            while todo and len(running) < max(hosts_now, 1) and self.client.status == "running":
                if deadline is not None and time.monotonic() >= deadline:
                    todo.clear()
                    finished_all = False
                    break
                block = todo.popleft()
                for _, slot in block:
                    self.slots[slot.sample_id] = slot
                phase, number = block[0][1].phase, block[0][1].block
                future = self.client.submit(host.run_block, block, key=f"block-{phase}-{number}-{uuid.uuid4().hex[:8]}",
                                            resources={"host": 1}, pure=False)
                future.add_done_callback(lambda _: self.events.put((None, {"kind": "block done"})))
                running[future] = block
            if not running:
                if todo and self.client.status != "running":  # reconnecting: it gives up (closed) or is back
                    time.sleep(POLL_S)
                    continue
                break
            # wake at a sample (the host waits for it to be stored), at a finished block, or after POLL_S
            try:
                self.receive(self.events.get(timeout=POLL_S)[1])
            except queue.Empty:
                pass
            self.drain()
            if self.lost is not None:  # an acknowledgement found the scheduler gone; every sample is stored
                raise self.scheduler_lost(self.lost)
            for future in [f for f in running if f.done()]:
                self.finish(future, running[future])  # still running if the scheduler is found gone here
                del running[future]
            if hosts_now == 0:
                no_host_since = no_host_since or time.monotonic()
                if time.monotonic() - no_host_since > NO_HOST_S:
                    raise HostsError(f"cluster {self.spec}: no host for {NO_HOST_S:.0f} s with {len(running)} blocks "
                                     "running; every sample delivered is stored: start hosts and resume")
            else:
                no_host_since = None
        self.drain()
        return finished_all

    def drain(self) -> None:
        """Store every sample that has arrived as an event (and say what the hosts logged)."""
        while True:
            try:
                _, msg = self.events.get_nowait()
            except queue.Empty:
                return
            self.receive(msg)

    def receive(self, msg: dict, replayed: bool = False) -> None:
        """Store a sample the first time it arrives (an event, or a finished block's result:
        `replayed`), then tell its host, which waits for that before its next sample."""
        if msg.get("kind") == "log":
            self.log(f"host {msg.get('host')}: {msg.get('text')}")
            return
        if msg.get("kind") == "block done":  # only wakes the loop, which looks at its blocks
            return
        if msg.get("kind") == "worker removed":
            self.worker_removed(msg)
            return
        if msg.get("kind") == "host":  # a host about to take its first sample: it waits until it is recorded
            self.record_host(msg["description"])  # or refused: then the run ends, and the host is not told
            if msg.get("ack") and not replayed:
                self.acknowledge(msg["ack"])
            return
        rec = dict(msg["record"])
        key = (rec.get("attempt"), rec["sample_id"])
        final = self.finished.get((rec["phase"], rec["block"]))
        if key in self.kept:
            pass
        elif rec.get("run_id") != self.store.run_id:  # never another run's (one run per scheduler: RUN_LEASE)
            self.log(f"note: sample {rec['sample_id']} of another run ({rec.get('run_id')}) arrived from host "
                     f"{rec.get('host')}; not stored")
        elif rec.get("session") != self.store.session:
            # a block of an earlier session whose client is gone, still running on its host: what it
            # takes belongs to no session that is running (meta.json would count it in neither)
            self.log(f"note: sample {rec['sample_id']} of session {rec.get('session')}, taken by host "
                     f"{rec.get('host')} for a client that is gone, arrived; not stored")
        elif final is not None and rec.get("attempt") != final:
            # a block already complete, run again by Dask after its host was lost: not stored twice
            self.log(f"note: sample {rec['sample_id']} of a block already complete arrived again from host "
                     f"{rec.get('host')}; not stored")
        else:
            self.kept.add(key)
            if rec.get("host"):
                self.block_host[(rec["phase"], rec["block"])] = rec["host"]
            if rec.get("attempt"):
                self.block_attempt[(rec["phase"], rec["block"])] = rec["attempt"]
                self.delivered[rec["attempt"]] = self.delivered.get(rec["attempt"], 0) + 1
            if rec["phase"] == "warmup":
                self.warmups_stored += 1
            slot = self.slots.get(rec["sample_id"]) or self.warmup_slots[rec["sample_id"].split("@", 1)[0]]
            self.keep(slot, rec, msg.get("timeline"))
            if rec["status"] != SKIPPED:
                self.done.add(rec["sample_id"])
        if msg.get("ack") and not replayed:
            self.acknowledge(msg["ack"])

    def scheduler_event(self, event: tuple) -> None:
        """One of the scheduler's own events (Dask calls this in the client's thread): a worker's
        removal goes to the events, to be recorded in order with the samples (`worker_removed`)."""
        _, msg = event
        if isinstance(msg, dict) and msg.get("action") == "remove-worker":
            self.events.put((None, {"kind": "worker removed", "worker": str(msg.get("worker")),
                                    "tasks": sorted(str(k) for k in msg.get("processing-tasks") or ()),
                                    "expected": bool(msg.get("expected")),
                                    "stimulus": str(msg.get("stimulus_id") or "")}))

    def worker_removed(self, msg: dict) -> None:
        """A host removed from the scheduler (killed, its machine or network gone, retired): one line
        naming it, the block it ran and why, and an entry in the session's `hosts_lost`.  A worker
        that was never a host of this run (not described) took no sample and is not named."""
        description = self.by_worker.get(msg["worker"])
        if description is None:
            return
        hid, gone = host_id(description["fingerprint"]), "left the run" if msg["expected"] else "was lost"
        cause = msg["stimulus"].rstrip("0123456789.").rstrip("-")
        reason = ("the worker was retired or closed" if msg["expected"]
                  else REMOVED_BECAUSE.get(cause, f"the scheduler removed the worker ({cause or 'no reason given'})"))
        tasks = set(msg["tasks"])
        blocks = [block for future, block in self.running.items() if getattr(future, "key", None) in tasks]
        entries = []
        for block in blocks or [None]:
            entry = {"host": hid, "worker": msg["worker"], "at": now_utc(), "reason": reason}
            if block is None:
                self.log(f"host {hid} at {msg['worker']} {gone} between blocks ({reason}); none of its samples is "
                         "lost")
            else:
                where = (block[0][1].phase, block[0][1].block)
                attempt = self.block_attempt.get(where) if self.block_host.get(where) == hid else None
                delivered = self.delivered.get(attempt, 0) if attempt else 0
                entry.update(phase=where[0], block=where[1], attempt=attempt, samples_delivered=delivered)
                arrived = f"{delivered or 'none'} of its {len(block)} samples had arrived"
                self.log(f"host {hid} at {msg['worker']} {gone} while it ran {where[0]} block {where[1]} ({reason}): "
                         f"{arrived}; the block runs again whole (should Dask give up on it, those that did not "
                         f"arrive are stored as {HOST_LOST})")
            entries.append(entry)
        self.losses.extend(entries)
        self.store.update_session(hosts_lost=self.losses)

    def acknowledge(self, name: str) -> None:
        """Tell a host that its sample is stored (the Dask `Event` it waits on).  Once the scheduler
        cannot be reached no host can be told, and each try would wait for distributed's connect
        timeout: the error is kept in `lost`, the rest of the events are stored without telling, and
        take_blocks ends the run (a host that is not told goes on after host.ACK_S)."""
        if self.lost is not None:
            return
        try:
            Event(name, client=self.client).set()
        except OSError as exc:
            if not scheduler_unreachable(exc):
                raise
            self.lost = exc

    def record_host(self, description: dict) -> None:
        """A host's description into this session's `hosts` in meta.json, the moment it is about to
        take its first sample: one that joined after the start (a worker restarted on another
        machine, one added to the scheduler) is described there like the others.  Then it takes
        the plan's warm-ups (`begins_warmups`)."""
        hid = host_id(description["fingerprint"])
        addr = str(description.get("worker", hid))
        if self.hosts.get(hid) != description:  # the same description again: a worker restarted as it was
            refuse_too_few_cpus(self.plan, {addr: description})
            self.refuse_other_harness(addr, description.get("harness"))
            # checked against the workers still there (a worker restarted on the same CPUs replaces its old self)
            live = set(self.client.scheduler_info(n_workers=-1)["workers"])
            refuse_shared_cpus({**{a: d for a, d in self.by_worker.items() if a in live}, addr: description})
            self.by_worker[addr] = description
            if hid not in self.hosts:
                self.log(f"host {hid}: {description['label']} at {description.get('worker')} joined the run")
            self.hosts[hid] = description
            self.store.update_session(hosts=self.describe())
        self.begins_warmups(addr)

    def begins_warmups(self, addr: str) -> None:
        """A host is about to take the plan's warm-ups (it says so once per start of its worker,
        before its first sample): one of the start's, planned then, or a round more (a worker that
        joined, or one that started again, at its old address or another)."""
        if addr in self.unannounced:
            self.unannounced.discard(addr)
            return
        self.warmup_rounds += 1
        self.on_warmups(len(self.warmup_slots))

    def finish(self, future, block: list[tuple[int, Slot]]) -> None:
        if future.status == "finished":
            result = future.result()
            future.release()  # a finished block is forgotten: Dask must not run it again if its host dies
            for msg in result["samples"]:
                self.receive(msg, replayed=True)
            phase, number = block[0][1].phase, block[0][1].block
            self.finished[(phase, number)] = result["attempt"]
            return
        exc = future.exception() if future.status == "error" else None
        future.release()
        if exc is not None and not isinstance(exc, KilledWorker):
            if isinstance(exc, host.BinariesRefused):
                raise HostsError(str(exc)) from None
            if isinstance(exc, ScratchFull):  # a host's scratch directory full: the run stops as on one machine
                raise exc from None
            raise HostsError(f"a block failed on its host: {type(exc).__name__}: {exc}") from None
        reason = (f"the block's host was lost {exc.allowed_failures + 1} times while running it (Dask's "
                  "distributed.scheduler.allowed-failures); taken again on the next resume" if exc is not None
                  else self.scheduler_lost_reason(block) if self.client.status != "running"
                  else f"the block was {future.status} on the cluster; taken again on the next resume")
        self.record_lost(block, reason)

    def record_lost(self, block: list[tuple[int, Slot]], reason: str) -> None:
        """The samples of a block that did not complete and that no attempt delivered, stored as an
        attempt of `HOST_LOST` samples with the reason; the next resume takes the block again.
        A delivered sample gets no such record: a block whose every sample arrived before its task
        was lost is complete, and a lost attempt as long as it would be the one the store keeps
        (`current_attempts`: of equally long attempts, the last written)."""
        attempt = f"lost-{uuid.uuid4().hex[:8]}"
        for seq, slot in block:
            if slot.sample_id in self.done:
                continue
            rec = record(slot, seq, self.store.run_id, self.store.session,
                         {"status": HOST_LOST, "reason": reason})
            rec["attempt"] = attempt
            host_of_block = self.block_host.get((slot.phase, slot.block))
            if host_of_block:  # the host that delivered the block's other samples
                rec["host"] = host_of_block
            self.kept.add((attempt, slot.sample_id))
            self.keep(slot, rec, None)

