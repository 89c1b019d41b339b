"""Taking a sample in this process and keeping it: the sample measured (its attempt, a warm-up
taken again under a name of its own), checked against its work key's checksum and stored at once,
with the run's counts and progress line; and what the store keeps of earlier sessions at the end."""
from __future__ import annotations

import time
from typing import Any, Callable, Mapping

from ..plan import Plan, Slot
from ..statuses import CHECKSUM_MISMATCH, HOST_LOST, OK, SKIPPED
from ..store import ChecksumBook, ResultsStore
from ..store.ledger import in_process_attempt, not_taken_again, warmup_again_id
from ..store.results import BinariesChanged
from ..store.timelines import write_timeline
from . import build, sample
from .interrupts import held
from .measure import default_env
from .progress import Progress


class SampleKeeper:
    """keep(slot, record, timeline): a taken sample checked and stored at once: its timeline file,
    the checksum verdict (the first ok sample of a work key sets the checksum every other must
    match), the append, the run's counts (`report`, the run's RunReport), a line for a failure,
    the progress line."""

    def __init__(self, store: ResultsStore, book: ChecksumBook, report, bar: Progress, log,
                 done_before: set[str] | frozenset[str] = frozenset()):
        self.store, self.book, self.report, self.bar, self.log = store, book, report, bar, log
        self.skipped_cells: set[str] = set()
        # Progress counts a sample once it is newly done: a cluster's host that takes a block whole
        # again (its first attempt lost, or left incomplete by an earlier session) stores samples
        # already done; they cost time but are no more done
        self.done_before = frozenset(done_before)
        self.stored_ids: set[str] = set()  # the samples stored in this session

    def __call__(self, slot: Slot, rec: dict[str, Any], timeline) -> None:
        if timeline is not None:
            rec["timeline_file"] = write_timeline(self.store, rec["sample_id"], timeline)
        if rec["status"] == OK:
            want, problem = self.book.verdict(rec["equiv_key"], rec["checksum"], rec["cell_id"])
            rec["expected_checksum"] = want
            if problem:
                rec["status"], rec["reason"] = CHECKSUM_MISMATCH, problem
        # a sample lost with its host was never taken: its record says so, and a resume takes it
        lost = rec["status"] == HOST_LOST
        first = rec["sample_id"] not in self.stored_ids
        again = rec["sample_id"] in self.done_before
        with held():  # stored and counted, or neither: the session's count is what the file holds
            self.store.append(rec)
            self.report.lost += lost
            self.report.taken += not lost
            self.report.statuses[rec["status"]] += 1
            self.stored_ids.add(rec["sample_id"])
            self.report.retaken += first and again
            self.report.retaken_now += not first
            if rec["status"] == SKIPPED:
                self.skipped_cells.add(slot.cell.id)
            elif rec["status"] != OK:
                self.log(f"sample {rec['sample_id']}: {rec['status']}: {rec['reason']}"
                         + (f" (host {rec['host']})" if rec.get("host") else ""))
        self.bar.update(slot.cell, f"{slot.phase} {slot.cell.workload} {slot.cell.lang} n={slot.cell.n} {rec['status']}",
                        counted=first and not again and not lost)


def sample_taker(plan: Plan, store: ResultsStore, context, measure_fn, keep: SampleKeeper,
                  watch: build.BinaryWatch | None = None, attempt_of: Mapping[tuple, str] | None = None,
                  before_first_measured: Callable[[], None] | None = None):
    """take(seq, slot, again=False): one sample, measured here, checked and stored at once."""
    env = default_env()

    first_measured = [before_first_measured]

    def take(seq: int, slot: Slot, again: bool = False, alone: bool = False) -> None:
        """again: a warm-up taken once more by a resumed session, stored under a name of its own;
        alone: a measured sample taken again without its block (it was skipped), which joins the
        attempt its block's other samples belong to."""
        if slot.phase == "measured" and first_measured[0] is not None:
            warm, first_measured[0] = first_measured[0], None
            warm()
        replaced = watch.changed() if watch is not None else []
        if replaced:
            names = ", ".join(str(p) for p in replaced)
            raise BinariesChanged(
                f"{names} changed during this session (rebuilt or replaced): its samples would be recorded under "
                f"the digest of the program the session started with; every sample taken so far is stored, "
                f"and the same command resumes (refused unless new_binaries / --new-binaries, which starts a "
                f"session of the new programs)")
        rec, timeline = sample.measure_slot(plan, context, measure_fn, env, slot, seq, store.run_id, store.session,
                                            store.scrubber)
        if slot.phase == "measured":  # one attempt per block and session (store.current_attempts)
            joined = (attempt_of or {}).get((slot.phase, slot.block)) if alone else None
            if joined is None:
                rec["attempt"] = in_process_attempt(store.session)
            elif joined:
                rec["attempt"] = joined  # (a block written without attempts keeps none)
        elif again:
            rec["sample_id"] = warmup_again_id(slot.sample_id, in_process_attempt(store.session))
        keep(slot, rec, timeline)
        if plan.cooldown_s:
            time.sleep(plan.cooldown_s)

    return take


def kept_from_before(store: ResultsStore) -> int | None:
    """The samples of earlier sessions the store keeps now (done ones: the closing line's "kept
    from before"); None when the store cannot be read (the session's error says why)."""
    try:
        return sum(r.get("session") != store.session for r in not_taken_again(store.latest_records()))
    except (OSError, ValueError):
        return None
