"""Run a plan: warm-up blocks, then measured blocks in a seeded random order, every sample stored
the moment it is taken.  Re-running the same plan into the same directory resumes it.

A sample that fails (non-zero exit, timeout, memory guard, wrong checksum, even a harness error)
is stored with its status and reason and the run goes on.
"""
from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from tqdm.auto import tqdm

from .. import paths
from ..analysis import sequential
from ..plan import Cell, Plan, Slot
from ..store import ChecksumBook, ResultsStore, key_string, now_utc
from . import build, machine
from .measure import default_env, measure
from .resources import Resources, SkipSample, raise_nofile_limit


class SampleContext(Protocol):
    """What a workload needs around its samples (fixtures, servers): see resources.Resources."""

    def start(self, plan: Plan, store: ResultsStore) -> dict[str, Any]: ...

    def before_sample(self, cell: Cell) -> dict[str, Any]: ...

    def stop(self) -> None: ...


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
    statuses: Counter = field(default_factory=Counter)
    interrupted: bool = False

    def __str__(self) -> str:
        st = ", ".join(f"{k}: {v}" for k, v in sorted(self.statuses.items())) or "none"
        head = "interrupted" if self.interrupted else "finished"
        return (f"{head}: {self.taken} samples taken now, {self.already_done} kept from before, "
                f"{self.planned} planned; statuses of the new samples: {st}; results in {self.results_dir}")


def default_results_dir(plan: Plan) -> Path:
    """A name that is the same for the same plan at the same commit, so re-running resumes."""
    commit = (machine.git_commit() or "nogit")[:7]
    return paths.RESULTS / f"{plan.profile}-{commit}-{plan.digest[:6]}"


def _record(slot: Slot, seq: int, run_id: str, measured: dict[str, Any]) -> dict[str, Any]:
    c = slot.cell
    return {
        "run_id": run_id, "sample_id": slot.sample_id, "seq": seq, "phase": slot.phase, "block": slot.block,
        "pos": slot.pos, "cell_id": c.id, "workload": c.workload, "lang": c.lang, "variant": c.variant, "n": c.n,
        "threads_requested": c.threads, "arm": c.arm, "params": json.dumps(c.params_dict, sort_keys=True),
        "equiv_key": key_string(c), **measured,
    }


def run(plan: Plan, results_dir: str | Path | None = None, context: SampleContext | None = None,
        progress: bool = True, log: Callable[[str], None] = print,
        measure_fn: Callable[..., dict[str, Any]] = measure) -> RunReport:
    """Take every sample of the plan that the results directory does not hold yet."""
    store = ResultsStore(results_dir or default_results_dir(plan))
    context = context or Resources(log=log)
    nofile = raise_nofile_limit()
    session = {"toolchains": build.toolchains(), "machine": machine.describe(),
               "nofile_limit_for_programs": {"soft": nofile[0], "hard": nofile[1]}}
    store.open(plan, session)
    schedule = plan.schedule()
    records = store.records()
    done = store.done_ids()
    book = ChecksumBook(records)
    todo = [(seq, s) for seq, s in enumerate(schedule) if s.sample_id not in done]
    report = RunReport(store.dir, len(schedule), len(schedule) - len(todo))
    if not todo and not plan.max_samples:
        log(f"all {len(schedule)} planned samples are already in {store.dir}")
        return report

    env = default_env()
    skipped_cells: set[str] = set()
    bar = tqdm(total=len(schedule), initial=report.already_done, disable=not progress, unit="sample",
               desc=store.run_id)
    def take(seq: int, slot: Slot) -> None:
        bar.set_postfix_str(f"{slot.phase} {slot.cell.workload} {slot.cell.lang} n={slot.cell.n}", refresh=False)
        started = now_utc()
        try:
            extra_args = context.before_sample(slot.cell)
            if plan.timeline_ms:
                extra_args["timeline_ms"] = plan.timeline_ms
            measured = measure_fn(slot.cell, plan.timeout_s, plan.mem_limit_mb, env=env, **extra_args)
        except SkipSample as exc:  # cannot run here: stored visibly, taken again on the next resume
            measured = {"status": "skipped", "reason": str(exc)}
        except Exception as exc:  # a harness-side failure becomes a failed sample too
            measured = {"status": "harness_error", "reason": f"{type(exc).__name__}: {exc}"}
        timeline = measured.pop("timeline", None)
        rec = _record(slot, seq, store.run_id, measured)
        if timeline is not None:
            rec["timeline_file"] = store.write_timeline(slot.sample_id, timeline)
        rec["started_at"] = started
        if rec["status"] == "ok":
            want, problem = book.verdict(rec["equiv_key"], rec["checksum"], rec["cell_id"])
            rec["expected_checksum"] = want
            if problem:
                rec["status"], rec["reason"] = "checksum_mismatch", problem
        store.append(rec)
        report.taken += 1
        report.statuses[rec["status"]] += 1
        if rec["status"] == "skipped":
            skipped_cells.add(slot.cell.id)
        elif rec["status"] != "ok":
            bar.write(f"sample {slot.sample_id}: {rec['status']}: {rec['reason']}")
        bar.update(1)
        if plan.cooldown_s:
            time.sleep(plan.cooldown_s)

    try:
        store.update_session(context=context.start(plan, store))
        for seq, slot in todo:
            take(seq, slot)
        if plan.max_samples:  # the sequential rule: blocks for the open cells after the pilot
            sequential.run_blocks(plan, store, take, done, bar, log)
        if skipped_cells:
            log(f"{len(skipped_cells)} cells were skipped (see the status table): {', '.join(sorted(skipped_cells))}")
    except KeyboardInterrupt:
        report.interrupted = True
        log("interrupted: every sample taken so far is stored; run the same plan again to resume")
    finally:
        bar.close()
        context.stop()
        store.update_session(finished_at=now_utc(), taken=report.taken, interrupted=report.interrupted)
    return report
