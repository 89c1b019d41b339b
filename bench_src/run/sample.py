"""One sample taken and turned into a record: the part of taking a sample that needs no results
directory, so that a host of a cluster (bench_src/run/cluster/host.py) runs the very code the
in-process runner runs.  Storing the record (the checksum verdict, the timeline file, the append)
is the keeper's (`keeper.SampleKeeper`), in the one process that owns the results directory."""
from __future__ import annotations

import json
import time
from typing import Any, Callable

from ..plan import Plan, Slot
from ..statuses import HARNESS_ERROR, OK, SKIPPED
from ..store import DiskFull, is_disk_full, key_string, now_utc
from ..store.secrets import Scrubber
from .resources import SkipSample


def record(slot: Slot, seq: int, run_id: str, session: int | None, measured: dict[str, Any]) -> dict[str, Any]:
    """A sample's record: where it stands in the plan, then what was measured."""
    c = slot.cell
    return {
        "run_id": run_id, "sample_id": slot.sample_id, "seq": seq, "session": session, "phase": slot.phase,
        "block": slot.block, "pos": slot.pos, "cell_id": c.id, "workload": c.workload, "lang": c.lang,
        "variant": c.variant, "n": c.n, "threads_requested": c.threads, "arm": c.arm,
        "params": json.dumps(c.params_dict, sort_keys=True), "equiv_key": key_string(c),
        **({"cores": c.cores} if c.cores else {}), **measured,
    }


def measure_slot(plan: Plan, context, measure_fn: Callable[..., dict[str, Any]], env: dict, slot: Slot, seq: int,
                 run_id: str, session: int | None, scrubber: Scrubber,
                 **measure_args: Any) -> tuple[dict[str, Any], list | None]:
    """Take one sample: the context prepares it (fixtures, a server), `measure_fn` runs it, and a
    failure of any kind becomes the sample's status and reason (a full disk excepted: every further
    sample would fail alike).  Returns the record and the RSS timeline (None without one).  The
    passwords of servers the context (re)started are added to `scrubber`; what the context did
    before the sample (a server restarted) is the record's `note`."""
    began = time.monotonic()
    started_at = now_utc()
    secrets = getattr(context, "secrets", None)
    try:
        extra_args = context.before_sample(slot.cell)
        if secrets is not None:  # a server restarted by before_sample has a new password
            scrubber.add(*secrets())
        if plan.timeline_ms:
            extra_args["timeline_ms"] = plan.timeline_ms
        measured = measure_fn(slot.cell, plan.timeout_s, plan.mem_limit_mb, env=env, **measure_args, **extra_args)
    except SkipSample as exc:  # cannot run here: stored visibly, taken again on the next resume
        measured = {"status": SKIPPED, "reason": str(exc)}
    except Exception as exc:  # a harness-side failure becomes a failed sample too
        if is_disk_full(exc) or isinstance(exc, DiskFull):
            raise
        measured = {"status": HARNESS_ERROR, "reason": f"{type(exc).__name__}: {exc}"}
    timeline = measured.pop("timeline", None)
    rec = record(slot, seq, run_id, session, measured)
    rec["started_at"] = started_at
    sample_note = getattr(context, "sample_note", None)
    note = sample_note() if sample_note is not None else None
    if note:
        rec["note"] = note
    after_sample = getattr(context, "after_sample", None)
    if rec["status"] not in (OK, SKIPPED) and after_sample is not None:
        try:  # what the context finds out about a failure adds to its reason; it never loses the record
            after_sample(slot.cell, rec)
        except Exception as exc:
            if is_disk_full(exc) or isinstance(exc, DiskFull):
                raise
            rec["reason"] = f"{rec.get('reason') or ''} [checking the failure: {type(exc).__name__}: {exc}]".strip()
        if secrets is not None:  # a server restarted by after_sample has a new password
            scrubber.add(*secrets())
    rec["harness_s"] = round(time.monotonic() - began, 6)
    return rec, timeline
