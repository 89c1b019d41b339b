"""A host of a cluster run: what runs inside one Dask worker.

A worker is one host: one thread, the resource `host=1`, and a block is one task, so no two
benchmark processes ever share a host.  `HostPlugin`, registered by the client, makes the worker
ready the first time a block arrives: it pins the worker to its CPUs (a local cluster's host),
checks that its programs are the session's (their sha256; a host without them gets the client's,
shipped in the plugin: on a scheduler always, so that a worker that joins later has them too; one
with other programs is refused), evicts them from the page cache,
prepares the fixtures and servers (`Resources`, in a scratch directory of its own) and takes the
plan's warm-ups itself; before its first sample it sends the client its description, so that a
host that joins mid-run (a worker restarted elsewhere, one added) is in meta.json too, and before
every sample it looks whether a program was replaced since.  Each sample of a block is taken by
the very code the in-process runner uses (bench_src/run/sample.py), its passwords masked here,
and sent back at once as an event on `TOPIC`; the host starts the next sample only when the
client has stored it (a Dask `Event` the client sets), so no sending, receiving or fsync overlaps
a sample.  The block's return value repeats the samples, so none is lost when an event is late.
A block carries an `attempt` token: when a host is lost mid-block Dask runs the block again whole, and the
store keeps per block one complete attempt (store/ledger.py `current_attempts`).

While a sample runs the worker does nothing but wait for it: the client starts workers with
Dask's profiler, GIL monitor and fast system monitors off (`engine.QUIET_WORKERS`), and this
module polls nothing.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dask
from distributed import Event, WorkerPlugin, get_worker
from distributed.utils import thread_state

from ... import cpus, paths
from ...plan import Slot, plan_from_dict
from ...store.hosts import fingerprint, host_id, host_label
from ...store.ledger import warmup_again_id
from ...store.secrets import Scrubber
from ...store.space import ScratchFull, is_disk_full
from .. import build, machine, sample
from ..measure import default_env, is_runtime_variable, measure, remove_sample_dirs
from ..resources import Resources, raise_nofile_limit

PLUGIN = "bench-host"
TOPIC = "bench-samples"
ACK_S = 60.0  # how long a host waits for the client to store a sample before it goes on
ACK_CHECK_S = 1.0  # while it waits, how often it looks whether its block is still wanted
SETTLE_S = 0.05  # then a pause, so that no message of the engine is in flight when a sample starts


class BinariesRefused(RuntimeError):
    """A host whose programs are not the session's."""


def pin_process(cpu_ids: list[int]) -> None:
    """Every thread of this process on `cpu_ids` (threads started later inherit it)."""
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpu_ids)
        except (ProcessLookupError, ValueError):
            continue


def digests(directory: Path, names) -> dict[str, str | None]:
    """sha256 of each named program in `directory` (None when it is not there)."""
    return {k: v for k, v in build.binary_digests(directory).items() if k in names}


def inspect() -> dict[str, Any]:
    """What the client checks before registering the plugin (client.run on every worker): the
    host's own programs and the Dask settings that could disturb a sample."""
    own = paths.host_bin_dir()
    return {"bin_dir": str(own), "binaries": build.binary_digests(own), "harness": harness(),
            "profiler": bool(dask.config.get("distributed.worker.profile.enabled", True))}


def harness() -> dict:
    """The harness this host runs: its commit and the digest of its code (build.harness_digest)."""
    return {"git_commit": machine.git_commit(), "digest": build.harness_digest()}


class HostPlugin(WorkerPlugin):
    """The host's state across the blocks it runs (see the module's docstring)."""

    name = PLUGIN

    def __init__(self, plan: dict, run_id: str, session: int, binaries: dict[str, str | None], relevant: list[str],
                 cpu_sets: dict[str, list[int]] | None = None, shipped: dict[str, bytes] | None = None,
                 client_env: dict[str, str | None] | None = None):
        self.plan_dict, self.run_id, self.session = plan, run_id, session
        self.binaries, self.relevant = binaries, relevant
        self.cpu_sets, self.shipped = cpu_sets or {}, shipped or {}
        self.client_env = client_env or {}

    # --- Dask's WorkerPlugin ---------------------------------------------------------------------
    def setup(self, worker) -> None:
        self.worker = worker
        self.cpu_set = self.cpu_sets.get(str(worker.name))
        if self.cpu_set:
            pin_process(self.cpu_set)
        self.scratch = Path(tempfile.mkdtemp(prefix="bench-host-", dir=worker.local_directory))
        self.plan = plan_from_dict(self.plan_dict)
        self.bin_dir: Path | None = None
        self.watch: build.BinaryWatch | None = None  # the programs as the host found them (use_programs)
        self.prepared = False  # the open-file limit raised and the programs evicted (ready)
        self.context: Resources | None = None
        self.scrubber = Scrubber()
        self.description: dict | None = None
        self.host = ""
        self.warm = False
        self.announced = False  # its description sent to the client (a host that joins mid-run included)

    def teardown(self, worker) -> None:
        try:
            if self.context is not None:
                self.context.stop()
        finally:
            remove_sample_dirs()
            shutil.rmtree(self.scratch, ignore_errors=True)

    # --- the host ----------------------------------------------------------------------------------
    def full_disk(self, exc: OSError) -> ScratchFull:
        """A full disk met here (a sample's scratch files: measure's ScratchFull; the host's own
        scratch: fixtures, shipped programs) as the ScratchFull of this host, naming it, which the
        client stops the run with in one line, as a run on one machine does."""
        where = f"{self.host} at {self.worker.address}" if self.host else str(self.worker.address)
        if isinstance(exc, ScratchFull):
            return ScratchFull(exc.filename, exc.detail, host=where)
        directory = Path(exc.filename).parent if exc.filename else self.scratch
        return ScratchFull(directory, exc.strerror or str(exc), host=where)

    def log(self, text: str) -> None:
        self.worker.log_event(TOPIC, {"kind": "log", "host": self.host, "text": self.scrubber.text(text)})

    def programs(self) -> Path:
        """The directory of programs this host runs: its own when their sha256 are the session's,
        else the shipped ones; BinariesRefused when it has others and none were shipped."""
        own = paths.host_bin_dir()
        found = digests(own, self.relevant)
        want = {k: self.binaries.get(k) for k in self.relevant}
        if found == want:
            return own
        if self.shipped and all(found[k] is None for k in self.relevant):  # none here: the client's
            # (a host with other programs is refused, never given the client's in their place)
            target = self.scratch / "bin"
            target.mkdir(exist_ok=True)
            for name, data in self.shipped.items():
                (target / name).write_bytes(data)
                (target / name).chmod(0o700)
            if digests(target, self.relevant) == want:
                return target
        differ = "; ".join(f"{k}: {(found[k] or 'missing')[:12]} here, {(want[k] or 'none')[:12]} in the session"
                           for k in self.relevant if found[k] != want[k])
        if all(found[k] is None for k in self.relevant):  # none here, and none shipped (a local cluster's)
            raise BinariesRefused(
                f"host {self.worker.address} ({own}) has no programs ({differ}), and this session ships none: build "
                "the same commit there (`.venv/bin/python -m bench_src build`)")
        raise BinariesRefused(f"host {self.worker.address} ({own}): its programs are not the session's ({differ}); "
                              "build the same commit there, or remove them so that the client ships its own")

    def use_programs(self) -> None:
        """The programs this host runs (`programs`), watched from now on: a program replaced while
        the session runs stops the block before its next sample (`check_programs`)."""
        if self.bin_dir is None:
            self.bin_dir = self.programs()
            self.watch = build.BinaryWatch([self.bin_dir / name for name in self.relevant])

    def check_programs(self) -> None:
        """BinariesRefused when a program was replaced (rebuilt) since the host checked it: its
        samples would be recorded under the digest of the program the session started with."""
        replaced = self.watch.changed() if self.watch is not None else []
        if replaced:
            names = ", ".join(str(p) for p in replaced)
            raise BinariesRefused(
                f"host {self.worker.address}: {names} changed during this session (rebuilt or replaced); every "
                "sample delivered is stored, and the same command resumes once the host has the session's "
                "programs again (or remove them there, so that the client ships its own)")

    def describe(self) -> dict:
        """This host as meta.json records it: the machine, its toolchains, the programs' sha256,
        its CPU share (a local cluster's, or the CPUs a worker started by hand is pinned to), and
        its fingerprint and label.  Two workers of one machine pinned to CPUs of their own are two
        hosts, as two hosts of a local cluster are."""
        if self.description is None:
            desc = {"machine": machine.describe(), "toolchains": build.toolchains(), "binaries": self.binaries,
                    "worker": self.worker.address, "worker_name": str(self.worker.name), "harness": harness()}
            share = cpus.share_text(self.cpu_set)
            if share:
                desc["cpu_set"] = share
            fp = fingerprint(desc)
            desc.update(fingerprint=fp, label=host_label(fp))
            self.host = host_id(fp)
            self.description = desc
        return self.description

    def ready(self) -> None:
        """Programs checked, page cache evicted, fixtures and servers up, warm-ups taken (once)."""
        if self.cpu_set:
            os.sched_setaffinity(0, self.cpu_set)  # the thread that starts the samples
        if not self.prepared:  # once, before the first block (check() at the join left these undone)
            self.use_programs()
            self.describe()
            nofile = raise_nofile_limit()
            self.description["nofile_limit_for_programs"] = {"soft": nofile[0], "hard": nofile[1]}
            build.evict_from_page_cache([self.bin_dir / name for name in self.relevant])
            self.prepared = True
        if not self.announced:  # before its first sample: the client records (or refuses) every host that takes one
            self.send_and_wait({"kind": "host", "description": self.description, "ack": self.ack_name})
            self.announced = True
        if self.context is None:
            self.context = Resources(log=self.log)
            self.context.start(self.plan, SimpleNamespace(dir=self.scratch))
            self.scrubber.add(*self.context.secrets())
        if not self.warm:
            warmups = [(seq, s) for seq, s in enumerate(self.plan.schedule()) if s.phase == "warmup"]
            self.take(warmups, f"warmup-{uuid.uuid4().hex[:8]}")
            self.warm = True

    def program_env(self) -> dict:
        """The programs' environment here: the harness's (measure.default_env, without the variables
        that change a runtime or the C library, MALLOC_TRIM_THRESHOLD_ of Dask's nanny among them),
        with the other variables the nanny sets given the client's values instead (absent when the
        client has none)."""
        env = default_env()
        for key, value in self.client_env.items():
            if is_runtime_variable(key):  # out of the programs' environment here as in the client's
                continue
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def wanted(self) -> bool:
        """Whether the block this thread runs is still wanted: not once Dask has cancelled its task
        (its client gone: interrupted, killed)."""
        key = getattr(thread_state, "key", None)
        task = self.worker.state.tasks.get(key) if key is not None else None
        return key is None or (task is not None and task.state not in ("cancelled", "released", "forgotten"))

    @property
    def ack_name(self) -> str:
        return f"bench-stored-{self.worker.address}"

    def send_and_wait(self, msg: dict) -> None:
        """Send a sample to the client and wait until it is stored there: neither this worker's
        sending nor the client's append and fsync overlap the next sample.  After ACK_S without
        an answer the block goes on (the block's result repeats the sample); it stops waiting at
        once when its task is cancelled (its client gone), and `take` then ends the block."""
        stored = Event(self.ack_name)
        stored.clear()
        self.worker.log_event(TOPIC, msg)
        deadline = time.monotonic() + ACK_S
        while not stored.wait(ACK_CHECK_S):
            if time.monotonic() >= deadline or not self.wanted():
                break
        time.sleep(SETTLE_S)  # the replies and bookkeeping the acknowledgement set off end first

    def take(self, slots: list[tuple[int, Slot]], attempt: str) -> list[dict]:
        """Take the slots in order, each sample sent to the client the moment it is taken."""
        env = self.program_env()
        sent = []
        for seq, slot in slots:
            if not self.wanted():  # its client is gone: a sample now would be stored by no one
                self.log(f"stopped a block whose client is gone, after {len(sent)} of its {len(slots)} samples")
                break
            self.check_programs()
            rec, timeline = sample.measure_slot(self.plan, self.context, measure, env, slot, seq, self.run_id,
                                                self.session, self.scrubber, bin_dir=self.bin_dir)
            rec.update(host=self.host, attempt=attempt)
            if slot.phase == "warmup":  # every host takes them: one id per host and attempt
                rec["sample_id"] = warmup_again_id(rec["sample_id"], f"{self.host}:{attempt}")
            msg = self.scrubber.data({"kind": "sample", "record": rec, "timeline": timeline, "ack": self.ack_name})
            self.send_and_wait(msg)
            sent.append(msg)
            if self.plan.cooldown_s:
                time.sleep(self.plan.cooldown_s)
        return sent


def describe(dask_worker) -> dict:
    """This worker's host description (client.run passes the worker)."""
    return dask_worker.plugins[PLUGIN].describe()


def check(dask_worker) -> dict:
    """The host's programs checked (client.run): its description, or BinariesRefused."""
    plugin = dask_worker.plugins[PLUGIN]
    plugin.use_programs()
    return plugin.describe()


def run_block(block: list[tuple[int, Slot]]) -> dict:
    """One block, whole, on this host (a Dask task): its samples, with the attempt's token."""
    plugin = get_worker().plugins[PLUGIN]
    try:
        plugin.ready()
        attempt = uuid.uuid4().hex[:12]
        return {"attempt": attempt, "host": plugin.host, "samples": plugin.take(block, attempt)}
    except OSError as exc:
        if is_disk_full(exc):  # no sample's failure: the run stops, naming this host and the directory
            raise plugin.full_disk(exc) from None
        raise
