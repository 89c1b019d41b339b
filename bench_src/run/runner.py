"""Run a plan: warm-up blocks, then measured blocks in a seeded random order, every sample stored
the moment it is taken.  Re-running the same plan into the same directory resumes it.

A sample that fails (non-zero exit, timeout, memory guard, wrong checksum, even a harness error)
is stored with its status and reason and the run goes on.  One process at a time writes into a
results directory (its lock names the owner).  SIGINT and SIGTERM end a run cleanly: the session
is marked interrupted, the servers are stopped and the scratch directories removed.  The run takes
its warm-ups first (they time the machine, plan/estimate.speed_factor), then prints an estimate of
its duration before the first measured sample (a run without warm-ups to take prints it first),
during it a progress line on stderr (samples done / planned, elapsed, ETA), and at the end the real
duration beside the estimate.  A cluster run whose samples were lost with their hosts (`host_lost`)
ends incomplete (`RunIncomplete`: its closing line as one error line, which says that the same
command takes them).
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from .. import cpus, paths
from ..analysis import sequential
from ..plan import Cell, Plan, Slot
from ..plan.estimate import Estimate, format_duration
from ..plan.dsn import resolve_dsn
from ..plan.feasibility import no_comparisons_note
from ..plan.validate import threads_note
from ..cluster_spec import ClusterError, ClusterSpec
from ..statuses import HOST_LOST, SKIPPED
from ..store import ChecksumBook, DiskFull, ResultsStore, is_disk_full, now_utc
from ..store.secrets import Scrubber, dsn_secrets
from . import build, machine, other_load, servers
from . import measure as measure_module
from .measure import measure
from .interrupts import SigtermAsInterrupt, Terminated
from .keeper import SampleKeeper, kept_from_before, sample_taker
from .engines import engine_name, engines_take_blocks, refuse_other_engine
from .progress import Growing, Progress
from .resources import Resources, raise_nofile_limit
from .session_estimate import SessionEstimate, SessionTakes, session_takes


class SampleContext(Protocol):
    """What a workload needs around its samples (fixtures, servers): see resources.Resources."""

    def start(self, plan: Plan, store: ResultsStore) -> dict[str, Any]: ...

    def before_sample(self, cell: Cell) -> dict[str, Any]: ...

    def stop(self) -> None: ...

    # optional: after_sample(cell, record) may annotate a failed record; secrets() lists passwords;
    # sample_note() says what it did before the sample just taken (a server restarted: the `note`)


class NoContext:
    """A context that prepares nothing (for workloads without fixtures, and for tests)."""
    def start(self, plan: Plan, store: ResultsStore) -> dict[str, Any]:
        return {}

    def before_sample(self, cell: Cell) -> dict[str, Any]:
        return {}

    def stop(self) -> None:
        pass


@dataclass
class RunReport:
    results_dir: Path
    planned: int
    already_done: int
    taken: int = 0
    retaken: int = 0  # samples done in an earlier session taken again (a cluster's host takes a block whole)
    # samples of this session taken again: the block of a host lost mid-block, run again whole elsewhere
    retaken_now: int = 0
    # samples of earlier sessions the store keeps at the session's end (None: not counted, read
    # as already_done - retaken); a block taken again and cut again keeps the larger attempt, so
    # an earlier session's samples can stay kept although some of them were taken again
    kept_before: int | None = None
    statuses: Counter = field(default_factory=Counter)
    # samples stored as host_lost: lost with their host (a cluster's block Dask gave up on), never
    # taken, not counted in `taken`; a resume takes them
    lost: int = 0
    interrupted: bool = False
    ended: str = "finished"
    duration_s: float = 0.0
    estimate: Estimate | None = None
    other_cpu: dict | None = None  # other processes' use of the CPUs meanwhile (other_load.other_use)

    def __str__(self) -> str:
        st = ", ".join(f"{k}: {v}" for k, v in sorted(self.statuses.items())) or "none"
        head = (f"interrupted ({self.ended})" if self.interrupted else "incomplete" if self.lost else "finished")
        est = f" (estimated {format_duration(self.estimate.seconds)})" if self.estimate else ""
        again = (f" ({self.retaken + self.retaken_now} of them again: their blocks, left incomplete, were taken "
                 "whole)" if self.retaken + self.retaken_now else "")
        taken = f"{self.taken} sample{'s' if self.taken != 1 else ''}"
        lost = (f", {self.lost} lost with their hosts ({HOST_LOST}, never taken)" if self.lost else "")
        return (f"{head} after {format_duration(self.duration_s)}{est}: {taken} taken now{again}{lost}, "
                f"{self.already_done - self.retaken if self.kept_before is None else self.kept_before} kept from "
                f"before, {self.planned} planned; statuses of the new "
                f"samples: {st}; "
                f"results in {self.results_dir}"
                + (f"; the same command takes the {self.lost} missing sample{'s' if self.lost != 1 else ''}"
                   if self.lost else ""))

    @property
    def incomplete(self) -> bool:
        """A session that ran to its end with samples lost with their hosts (`lost`): the same
        command takes them."""
        return bool(self.lost) and not self.interrupted


class RunIncomplete(ClusterError):
    """A run that ended with samples lost with their hosts (its `report`, RunReport.incomplete):
    every sample taken is stored, the closing line says how many are missing, and the same command
    takes them.  Raised by `run` after the session's end is recorded, as an error a user can fix
    (one line, exit 2, a notebook's cell stopped), so that no report is made of part of a run
    without a word, as for a run the scheduler's loss ended."""

    def __init__(self, report: RunReport):
        self.report = report
        super().__init__(str(report))


class _WarmUps:
    """The warm-ups a session takes in this process, and how they count.  A resumed session starts
    cold as the first did (the programs were just evicted from the page cache): right before its
    first measured sample, if it takes one, it takes the warm-ups done before (`again`) again, under
    names of its own.  `take` is the session's taker, given once it is made (the taker calls
    `take_again` before its first measured sample)."""

    def __init__(self, takes: SessionTakes, bar: Progress, report: RunReport, log: Callable[[str], None]):
        self.bar, self.report, self.log = bar, report, log
        self.again = takes.warm_again
        # whether their count is in the planned one, whether they were taken
        self.planned = False
        self.taken = False
        self.take: Callable[..., None] | None = None
        if self.again and takes.measured:  # the schedule has a measured sample to take: planned from the start
            self.plan(self.again)
            self.planned = True

    def plan(self, slots: list[tuple[int, Slot]]) -> None:
        """Warm-ups this session adds to its count."""
        self.bar.add_planned(len(slots))
        self.bar.expect([s.cell for _, s in slots])
        self.report.planned += len(slots)

    def take_slots(self, slots: list[tuple[int, Slot]], retaken: bool = False, say: str = "",
                   planned: bool = False) -> None:
        """Warm-ups this session takes (retaken: under names of its own; planned: counted
        already)."""
        if not planned:
            self.plan(slots)
        if say:
            self.bar.say(say, self.log)
        for q, s in slots:
            self.take(q, s, again=retaken)

    def take_again(self) -> None:
        """The warm-ups done before, taken again right before the session's first measured sample."""
        self.taken = True
        again = self.again
        self.take_slots(again, retaken=True, planned=self.planned, say=(
            f"warming up again: this session resumes the run; the {len(again)} warm-up "
            f"sample{'s' if len(again) != 1 else ''} taken before {'are' if len(again) != 1 else 'is'}"
            " taken again (discarded) before its first measured sample"))

    @property
    def again_to_come(self) -> bool:
        """Warm-ups done before are still to be taken again (the estimate after the pilot counts them)."""
        return bool(self.again) and not self.taken


@dataclass
class _Session:
    """A session of a run as its parts share it: the results directory opened for it, the log that
    masks its secrets, the report it fills, and what its end stops or closes (the context once
    started, the cluster's hosts, a scheduler's lease its hosts have not adopted yet)."""
    plan: Plan
    cluster: ClusterSpec | None
    engines: bool
    started: float  # time.monotonic() at the start of run()
    scrubber: Scrubber
    log: Callable[[str], None]
    store: ResultsStore
    context: SampleContext
    watch: build.BinaryWatch
    binaries: dict[str, str | None]
    relevant: list[str]  # the names of the programs whose change refuses a resume
    held: Any  # a scheduler's one lease (cluster/engine.hold_scheduler) until the hosts adopt it
    report: RunReport
    clock: Any  # other_load.read_clock() at the start; None on a cluster (its hosts are elsewhere)
    context_started: bool = False
    hosts: Any = None  # the cluster's hosts (cluster runs only)
    bar: Progress | None = None
    failure: BaseException | None = None  # the error that stopped the session


def _open_session(plan: Plan, results_dir: str | Path | None, context: SampleContext | None,
                  log: Callable[[str], None], repair: bool, new_binaries: bool, cluster: ClusterSpec | None,
                  engines: bool, started: float) -> _Session:
    """Open a session: the plan's secrets masked in the log, what killed harness processes left
    removed, the arguments checked, the results directory opened with the session's entry in
    meta.json (the programs, the machine, the engine), and the notes said."""
    scrubber = Scrubber()
    for kind, value in plan.dsn.items():
        scrubber.add(*dsn_secrets(resolve_dsn(kind, value)))
    log = scrubber.wrap(log)
    store = ResultsStore(results_dir or machine.default_results_dir(plan), scrubber)
    _remove_stale(log)
    if cluster is not None and context is not None and not engines:
        raise ValueError("a cluster run prepares its samples on each host: give no context")
    if engines and (cluster is None or not plan.aa or cluster.kind != "local" or cluster.workers != 1):
        raise ValueError("the engines' A/A check takes an A/A plan (aa=True) and one local host (cluster local:1): "
                         "arm A here, arm B on the host, on the same machine")
    refuse_other_engine(store, cluster, engines)
    context = context or Resources(log=log)
    nofile = raise_nofile_limit()
    # the programs as this session found them, before their digests: one replaced later stops it
    watch = build.BinaryWatch([paths.launcher()] + [paths.program(lang) for lang in plan.languages])
    binaries = build.binary_digests()
    relevant = [paths.launcher().name] + [paths.program(lang).name for lang in plan.languages]
    session = {"toolchains": build.toolchains(), "machine": machine.describe(),
               "nofile_limit_for_programs": {"soft": nofile[0], "hard": nofile[1]}, "binaries": binaries,
               "sources": build.source_digests(), "engine": engine_name(cluster, engines)}
    share = cpus.share_text()
    if share:  # a run pinned to a share of the machine (taskset): a host of its own, as on a cluster
        session["cpu_set"] = share
    # a scheduler's one lease before the results directory is opened: a run refused because another
    # holds the hosts leaves nothing behind (the hosts adopt the client and lease: Hosts.held)
    held = None
    if cluster is not None and cluster.kind == "scheduler":
        from .cluster import engine  # the default path imports nothing of Dask

        held = engine.hold_scheduler(cluster, log)
    try:
        store.open(plan, session, repair=repair, binaries=relevant, new_binaries=new_binaries)
    except BaseException:
        if held is not None:
            held.close()
        raise
    try:
        _say_notes(plan, store, session, cluster, log)
        # what other processes take of this machine's CPUs meanwhile (a cluster's hosts are elsewhere)
        clock = other_load.read_clock() if cluster is None else None
    except BaseException:  # the store (its lock) and the lease are not left open
        store.close()
        if held is not None:
            held.close()
        raise
    report = RunReport(store.dir, 0, 0)
    return _Session(plan, cluster, engines, started, scrubber, log, store, context, watch, binaries, relevant,
                    held, report, clock)


def _remove_stale(log: Callable[[str], None]) -> None:
    """What harness processes that were killed left behind, removed."""
    for stale in measure_module.remove_stale_scratch():  # sample directories, a local cluster's scratch
        log(f"removed {stale}, left by a harness process that was killed")
    # a private server's directory left by a killed harness (its data, up to some 120 MB) goes at the
    # next run, whatever that run's workloads
    for stale in servers.remove_stale_servers():
        log(f"removed {stale}, a database server's directory left by a harness process that was killed")


def _say_notes(plan: Plan, store: ResultsStore, session: Mapping[str, Any], cluster: ClusterSpec | None,
               log: Callable[[str], None]) -> None:
    """The notes of a session just opened: a results directory other users can read, a program's
    source changed while its binary did not, the threads, a plan that compares nothing, and the
    variables of this environment the programs run without."""
    for note in (store.access_note, store.sources_note, threads_note(plan, cluster=cluster), no_comparisons_note(plan)):
        if note:
            log(f"note: {note}")
    removed = session["machine"].get("runtime_variables_removed")
    if removed:
        log(f"note: the programs run without {', '.join(removed)} of this environment (each changes a runtime or "
            "the C library's allocator, which would make one language slower or larger unseen)")


def _interrupted(sess: _Session, exc: KeyboardInterrupt) -> None:
    """SIGINT or SIGTERM ended the session: every sample taken so far is stored."""
    report = sess.report
    report.interrupted = True
    report.ended = "SIGTERM" if isinstance(exc, Terminated) else "SIGINT"
    sess.log(f"interrupted ({report.ended}): every sample taken so far is stored; "
             "run the same plan again to resume")


def _failed(sess: _Session, exc: BaseException) -> DiskFull | None:
    """An error ended the session: recorded as the session's end.  Returns the DiskFull error to
    raise in its place when it means a full disk outside the store (fixtures, scratch files: the
    same error as the store's own), else None (the error is raised as it is)."""
    report, store = sess.report, sess.store
    report.interrupted = True
    if is_disk_full(exc):  # outside the store (fixtures, scratch files): the same error
        store.reserve.release()
        failure = sess.failure = store.disk_full(exc)
        report.ended = f"error: {failure.what}"
        return failure
    sess.failure = exc
    report.ended = (f"error: {exc.what}" if isinstance(exc, DiskFull)
                    else f"error: {type(exc).__name__}: {exc}")
    return None


def _end_session(sess: _Session) -> None:
    """End the session, however it ended: the last progress line, the context stopped, the hosts
    (or a scheduler's lease they never adopted) closed, the sample directories removed, what other
    processes took of the CPUs read, and the session's end written into meta.json (unless the disk
    that stopped the session is full: its empty reserve tells the next run why)."""
    report, store, bar = sess.report, sess.store, sess.bar
    if report.incomplete:
        report.ended = (f"incomplete: {report.lost} sample{'s' if report.lost != 1 else ''} lost with their hosts "
                        f"({HOST_LOST}); a resume takes {'them' if report.lost != 1 else 'it'}")
    if bar is not None:
        bar.emit("interrupted" if report.interrupted else "incomplete" if report.incomplete else "done", final=True)
        report.planned = max(report.planned, bar.planned)  # with the sequential rule's blocks
        if report.already_done:
            report.kept_before = kept_from_before(store)
    try:
        try:
            if sess.context_started:
                sess.context.stop()
        finally:  # a context that fails to stop leaves no host or lease open
            if sess.hosts is not None:
                sess.hosts.close()
            elif sess.held is not None:  # the run ended before its hosts were started
                sess.held.close()
    finally:
        measure_module.remove_sample_dirs()
        report.duration_s = time.monotonic() - sess.started
        end_clock = other_load.read_clock() if sess.clock is not None else None
        report.other_cpu = other_load.other_use(sess.clock, end_clock) if end_clock is not None else None
        try:
            store.end_session(finished_at=now_utc(), taken=report.taken, interrupted=report.interrupted,
                              ended=report.ended, duration_s=round(report.duration_s, 1),
                              **({"samples_lost": report.lost} if report.lost else {}),
                              **({"other_cpu": report.other_cpu} if report.other_cpu else {}))
        except DiskFull:
            if not isinstance(sess.failure, DiskFull):
                raise
            sess.failure.end_recorded = False  # the empty reserve tells the next run why


def _say_the_end(sess: _Session) -> None:
    """After the session: its real duration beside the estimate, and a warning when other processes
    (or the hypervisor's other guests) competed with the samples for the CPUs."""
    report, bar, log = sess.report, sess.bar, sess.log
    if bar is not None and report.estimate is not None:
        bar.say(f"took {format_duration(report.duration_s)}; estimated {format_duration(report.estimate.seconds)}", log)
    if other_load.competed(report.other_cpu):  # on the terminal under make run too (its stderr), as the duration
        warning = other_load.warning(report.other_cpu)
        bar.say(warning, log) if bar is not None else log(warning)


@dataclass
class _SessionWork:
    """The plan's schedule as a session finds it in the results directory: what is done, what it
    takes, and the estimates of its duration."""
    schedule: list[Slot]  # a cluster's without the warm-ups (every host takes them itself)
    done: set[str]
    kept: list[dict[str, Any]]  # one record per sample, of each block's kept attempt
    skipped: set[str]
    attempt_of: dict[tuple, str]
    book: ChecksumBook
    todo: list[tuple[int, Slot]]
    blocks: list[list[tuple[int, Slot]]]
    warm_first: list[list[tuple[int, Slot]]]
    takes: SessionTakes
    spent_before: float  # the seconds of the earlier sessions
    estimates: SessionEstimate


def _read_work(sess: _Session, expected_samples: Mapping[str, float] | float | None) -> _SessionWork:
    """What the session takes of the plan's schedule, read from the results directory; the report's
    planned and already done samples are counted from it."""
    plan, store, report, cluster = sess.plan, sess.store, sess.report, sess.cluster
    schedule = plan.schedule()
    records = store.records()
    done = store.done_ids()
    kept = store.latest_records()  # one record per sample, of each block's kept attempt
    skipped = {r["sample_id"] for r in kept if r.get("status") == SKIPPED}
    # the attempt each measured block's kept samples belong to: a skipped sample taken
    # again alone joins it (a block taken again whole is an attempt of this session's)
    attempt_of = {(r["phase"], r.get("block")): r.get("attempt") or ""
                  for r in kept if r.get("phase") == "measured"}
    book = ChecksumBook(records)
    if cluster is not None:  # every host takes the warm-ups itself (cluster/host.py)
        schedule = [s for s in schedule if s.phase != "warmup"]
    todo = [(seq, s) for seq, s in enumerate(schedule) if s.sample_id not in done]
    # done before outside the schedule: the sequential rule's extra blocks, warm-ups taken again
    outside = len(done - {s.sample_id for s in schedule})
    report.planned, report.already_done = len(schedule) + outside, len(schedule) - len(todo) + outside
    blocks = sequential.blocks_of(enumerate(schedule))
    # here the warm-ups come first, and time this machine for the estimate (a cluster's hosts
    # take their own warm-ups, each in its first block)
    warm_first = [b for b in blocks if b[0][1].phase == "warmup"] if cluster is None else []
    # what this session takes of the schedule: a cluster's hosts take whole blocks and their
    # own warm-ups (Hosts), counted apart
    takes = session_takes(blocks, done, skipped) if cluster is None else SessionTakes(todo, [], set())
    spent_before = sum(float(s.get("duration_s") or 0) for s in store.read_meta()["sessions"][:-1])
    estimates = SessionEstimate.read(plan, takes, records, expected_samples, spent_before, store.dir)
    return _SessionWork(schedule, done, kept, skipped, attempt_of, book, todo, blocks, warm_first, takes,
                        spent_before, estimates)


def _say_warmups_competed(sess: _Session) -> None:
    """What other processes (and the hypervisor's other guests) took of the CPUs during the
    warm-ups, recorded in meta.json (`other_cpu_warmups`) and warned of where they competed."""
    if sess.clock is None:  # a cluster's hosts are elsewhere
        return
    now = other_load.read_clock()
    use = other_load.other_use(sess.clock, now) if now is not None else None
    if not use:
        return
    sess.store.update_session(other_cpu_warmups=use)
    if other_load.competed(use):
        sess.bar.say(other_load.warmup_warning(use), sess.log)


def _taker_here(sess: _Session, work: _SessionWork, warm: _WarmUps, keep: SampleKeeper,
                measure_fn: Callable[..., dict[str, Any]], est: Estimate,
                warmups: int) -> tuple[Callable[..., None], Callable[[list, float | None], bool]]:
    """The samples taken in this process: the session's first line (the warm-ups to come, or the
    estimate when there are none), its taker and its blocks one after the other, and its context
    started.  Returns (take, take_blocks)."""
    plan, store, context, bar = sess.plan, sess.store, sess.context, sess.bar
    bar.say(f"warming up first: {warmups} warm-up sample{'s' if warmups != 1 else ''}, discarded, "
            "which also time this machine for the estimate that follows them" if warmups > 0
            else str(est), sess.log)
    take = sample_taker(plan, store, context, measure_fn, keep, sess.watch, work.attempt_of,
                        warm.take_again if warm.again else None)
    warm.take = take
    take_blocks = sequential.blocks_in_order(take, work.done, work.skipped)
    sess.context_started = True
    info = context.start(plan, store)
    sess.scrubber.add(*(context.secrets() if hasattr(context, "secrets") else ()))
    store.update_session(context=info)
    return take, take_blocks


def _taker_on_hosts(sess: _Session, work: _SessionWork, warm: _WarmUps, keep: SampleKeeper,
                    measure_fn: Callable[..., dict[str, Any]],
                    est: Estimate) -> tuple[Callable[..., None] | None, Callable[[list, float | None], bool]]:
    """The samples taken on the hosts of a Dask cluster (cluster/engine.Hosts): the hosts started
    (they adopt a scheduler's lease), their warm-ups counted, the estimate spread over them and
    said; the engines' A/A check takes arm A here (_arm_a_here).  Returns (take, take_blocks): take
    is None where every sample is a host's."""
    from .cluster import engine  # the default path imports nothing of Dask

    plan, store, report, bar = sess.plan, sess.store, sess.report, sess.bar
    hosts = sess.hosts = engine.Hosts(sess.cluster, plan, store, keep, work.done, sess.log)
    hosts.held, sess.held = sess.held, None
    hosts.start(binaries={k: sess.binaries.get(k) for k in sess.relevant})
    bar.hosts = hosts.count
    hosts.on_count = lambda n: setattr(bar, "hosts", max(n, 1))  # the progress line's "on N hosts"

    def more_warmups(n: int) -> None:  # a host that joined or started again: planned, not "110%"
        bar.add_planned(n)
        bar.expect([s.cell for s in hosts.warmup_slots.values()])
        report.planned += n

    hosts.on_warmups = more_warmups
    if not sess.engines:
        est.spread_over(hosts.count, hosts.warmup_seconds(work.estimates.seconds), len(hosts.warmup_slots))
    else:  # the host takes every warm-up of the plan, counted once in the estimate; arm A's again here
        fresh, again = _arm_a_warmups(plan, work.done)
        here = fresh + (again if work.takes.measured else [])
        if here:
            est.seconds += sum(work.estimates.seconds(s.cell) for _, s in here)
            est.samples += len(here)
            est.notes.append(f"arm A's {len(here)} warm-up sample{'s' if len(here) != 1 else ''} taken here "
                             "as well as on the host")
    store.update_session(hosts=hosts.describe(), estimate_s=round(est.seconds, 1))
    bar.add_planned(hosts.warmup_samples())
    bar.expect([s.cell for s in hosts.warmup_slots.values()] * hosts.count)
    report.planned += hosts.warmup_samples()
    bar.say(str(est), sess.log)
    if not sess.engines:
        return None, hosts.take_blocks
    take = _arm_a_here(sess, work, warm, keep, measure_fn)
    return take, engines_take_blocks(plan, take, hosts.take_blocks, work.done, work.skipped)


def _arm_a_warmups(plan: Plan, done: set[str]) -> tuple[list[tuple[int, Slot]], list[tuple[int, Slot]]]:
    """Arm A's warm-ups of the engines' A/A check, taken in this process: those not done (fresh),
    and those done before, taken again (under names of this session's) right before this
    session's first measured arm A sample, if it takes one: each session starts cold, as the host
    of arm B does."""
    here = [(seq, s) for seq, s in enumerate(plan.schedule()) if s.phase == "warmup" and s.cell.arm == "A"]
    return ([(seq, s) for seq, s in here if s.sample_id not in done],
            [(seq, s) for seq, s in here if s.sample_id in done])


def _arm_a_here(sess: _Session, work: _SessionWork, warm: _WarmUps, keep: SampleKeeper,
                measure_fn: Callable[..., dict[str, Any]]) -> Callable[..., None]:
    """Arm A of the engines' A/A check, taken here: the session's context (the caller's, else its
    own resources) and warm-ups, as an in-process run has them (its fresh warm-ups taken now).
    Returns its taker."""
    plan, store, context = sess.plan, sess.store, sess.context
    sess.context_started = True
    store.update_session(context=context.start(plan, store))
    sess.scrubber.add(*(context.secrets() if hasattr(context, "secrets") else ()))
    fresh, again_here = _arm_a_warmups(plan, work.done)
    take = sample_taker(plan, store, context, measure_fn, keep, sess.watch, work.attempt_of,
                        (lambda: warm.take_slots(again_here, retaken=True)) if again_here else None)
    warm.take = take
    warm.take_slots(fresh)
    return take


def _sequential(sess: _Session, work: _SessionWork, warm: _WarmUps, take: Callable[..., None] | None,
                take_blocks: Callable[[list, float | None], bool]) -> None:
    """The sequential rule: blocks for the open cells after the pilot, within the plan's time
    budget; once the pilot is in, the estimate of the rest is said and recorded."""
    plan, store, bar, log, started = sess.plan, sess.store, sess.bar, sess.log, sess.started
    deadline = started + plan.time_budget_s - work.spent_before if plan.time_budget_s else None

    def after_pilot() -> None:
        # what remains, projected from this run's own pilot and the times measured so far
        rest = work.estimates.after_pilot(store.latest_records(), store.done_ids(),
                                          time.monotonic() - started,
                                          warm_again_to_come=warm.again_to_come)
        if sess.hosts is not None:
            rest.spread_over(sess.hosts.count, 0.0)
        bar.say(f"after the pilot: {format_duration(time.monotonic() - started)} spent; "
                f"{rest}".replace("estimated duration:", "estimated rest:"), log)
        store.update_session(estimate_after_pilot_s=round(time.monotonic() - started + rest.seconds, 1))

    sequential.run_blocks(plan, store, take, work.done, Growing(bar), log, deadline=deadline,
                          take_blocks=take_blocks, after_pilot=after_pilot)


def _take_samples(sess: _Session, progress: bool, measure_fn: Callable[..., dict[str, Any]],
                  expected_samples: Mapping[str, float] | float | None) -> bool:
    """The session's samples: the programs evicted from the page cache, the estimate, the warm-ups
    first (they time the machine for a better estimate), then every block with a sample missing,
    then the sequential rule's blocks.  Returns False when every planned sample was there already
    (nothing taken)."""
    plan, store, report, log = sess.plan, sess.store, sess.report, sess.log
    # every session starts with the programs out of the page cache (their RSS depends on it)
    not_evicted = build.evict_from_page_cache([paths.launcher()]
                                              + [paths.program(lang) for lang in plan.languages])
    store.update_session(page_cache="binaries evicted at the start of the session"
                         + (f" except: {'; '.join(not_evicted)}" if not_evicted else ""))
    work = _read_work(sess, expected_samples)
    est = work.estimates.now(work.kept, work.done)
    report.estimate = est
    store.update_session(estimate_s=round(est.seconds, 1), estimate_basis=est.basis)
    if not work.todo and not plan.max_samples:
        log(f"all {len(work.schedule)} planned samples are already in {store.dir}")
        return False

    bar = sess.bar = Progress(store.run_id, report.planned, report.already_done, work.estimates.seconds,
                              enabled=progress)
    keep = SampleKeeper(store, work.book, report, bar, log, done_before=work.done)
    warmups = sum(s.sample_id not in work.done for b in work.warm_first for _, s in b)
    calibrate = warmups > 0
    warm = _WarmUps(work.takes, bar, report, log)
    if sess.cluster is None:
        take, take_blocks = _taker_here(sess, work, warm, keep, measure_fn, est, warmups)
    else:
        take, take_blocks = _taker_on_hosts(sess, work, warm, keep, measure_fn, est)
    # the samples to take (a block an interruption cut, whole) count towards the ETA
    bar.expect([s.cell for _, s in work.takes.slots])
    bar.begin()
    if calibrate:
        take_blocks(work.warm_first, None)
        est = work.estimates.after_warmups(store.latest_records(), store.done_ids(),
                                           time.monotonic() - sess.started, report.taken)
        report.estimate = est
        store.update_session(estimate_s=round(est.seconds, 1), estimate_basis=est.basis)
        bar.say(str(est), log)
        _say_warmups_competed(sess)
    # every block with a sample missing (one process skips those it has; a host runs it whole)
    take_blocks([b for b in work.blocks if b[0][1].phase != "warmup"] if calibrate else work.blocks, None)
    if plan.max_samples:  # the sequential rule: blocks for the open cells after the pilot
        _sequential(sess, work, warm, take, take_blocks)
    if sess.hosts is not None:  # every block ran: warm-ups planned and never taken leave the count
        forgone = sess.hosts.warmups_forgone()
        bar.add_planned(-forgone)
        report.planned -= forgone
    if keep.skipped_cells:
        log(f"{len(keep.skipped_cells)} cells were skipped (see the status table): "
            f"{', '.join(sorted(keep.skipped_cells))}")
    return True


def run(plan: Plan, results_dir: str | Path | None = None, context: SampleContext | None = None,
        progress: bool = True, log: Callable[[str], None] = print,
        measure_fn: Callable[..., dict[str, Any]] = measure, repair: bool = False, new_binaries: bool = False,
        expected_samples: Mapping[str, float] | float | None = None, cluster: ClusterSpec | None = None,
        engines: bool = False) -> RunReport:
    """Take every sample of the plan that the results directory does not hold yet.

    repair: move unreadable or incomplete lines of samples.jsonl aside (else such lines stop the run).
    new_binaries: continue a run whose programs were rebuilt, in a new session (else refused).
    expected_samples: samples per cell the estimate assumes (default warmup + samples).
    cluster: run the blocks on the hosts of a Dask cluster (bench_src/run/cluster/); None: here.
    engines: the engines' own A/A check (analysis/engines.py), paired: an A/A plan whose arm A is
        taken here and arm B on the cluster's one host on this machine, both arms of a block one
        after the other, in an order drawn per block (`engines_take_blocks`).
    """
    started = time.monotonic()
    sess = _open_session(plan, results_dir, context, log, repair, new_binaries, cluster, engines, started)
    try:
        with SigtermAsInterrupt():
            try:
                if not _take_samples(sess, progress, measure_fn, expected_samples):
                    # nothing taken: no duration to set beside an estimate, no sample competed
                    return sess.report
            except KeyboardInterrupt as exc:
                _interrupted(sess, exc)
            except BaseException as exc:
                full = _failed(sess, exc)
                if full is not None:
                    raise full from None
                raise
            finally:
                _end_session(sess)
    finally:
        sess.store.close()
    _say_the_end(sess)
    if sess.report.incomplete:
        raise RunIncomplete(sess.report)
    return sess.report
