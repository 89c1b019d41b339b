"""What a run's records say, by rules over records alone (no file is read here): which attempt of a
block is kept, which sample a resumed run takes again, which records are samples of the plan and
which sessions took any."""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from ..statuses import HOST_LOST, SKIPPED

# Samples with these statuses did not run (the cell could not run here); a resumed run takes them
# again, and the newer record replaces the older one.
RETRY_STATUSES = (SKIPPED, HOST_LOST)  # taken again when the run resumes
IN_PROCESS_ATTEMPT = "session:"  # an in-process session's attempt of a block: "session:<n>"


def in_process_attempt(session: int) -> str:
    """The attempt of the blocks an in-process session takes: one per session, so that a block an
    interrupted session left incomplete, taken again whole by the next, is one attempt of its own."""
    return f"{IN_PROCESS_ATTEMPT}{session}"


def current_attempts(records: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(kept, abandoned).  Measured records carry the `attempt` of their block: a cluster's
    host lost mid-block leaves the samples it delivered, and the block runs again whole, on another
    host or the same one when it returns; an in-process session interrupted mid-block leaves the
    samples it took, and the next session takes the block again whole (`in_process_attempt`).  Per
    block (phase, number) and side (in this process, or on a cluster's host: the A/A check of the
    engines takes a block's arm A here and its arm B there) the attempt with the most records (of
    equals, the last written) is kept, so pairs form only within one complete attempt, in one
    session or on one host; the others stay in samples.jsonl, out of the frame.  Records written
    without an attempt (an in-process run before attempts were recorded) count as one attempt of
    their own: all kept, unless a later session took their block again whole."""
    records = list(records)

    def key_of(r):
        attempt = r.get("attempt") or ""
        here = not attempt or attempt.startswith(IN_PROCESS_ATTEMPT)
        return (r.get("phase"), r.get("block"), here), attempt

    size: dict[tuple, Counter] = {}
    last: dict[tuple, dict[str, int]] = {}
    for i, r in enumerate(records):
        if r.get("phase") == "measured":
            key, attempt = key_of(r)
            size.setdefault(key, Counter())[attempt] += 1
            last.setdefault(key, {})[attempt] = i
    chosen = {key: max(c, key=lambda a: (c[a], last[key][a])) for key, c in size.items()}
    kept, abandoned = [], []
    for r in records:
        if r.get("phase") == "measured":
            key, attempt = key_of(r)
            if attempt != chosen[key]:
                abandoned.append(r)
                continue
        kept.append(r)
    return kept, abandoned


# Why an attempt of a block is set aside when no loss of its host is recorded for it.
LEFT_INCOMPLETE = ("its attempt of the block was left incomplete (its host lost, or its session stopped) and the "
                   "block was taken again whole")


def set_aside_reasons(abandoned: Iterable[dict[str, Any]], sessions: Iterable[dict[str, Any]]) -> Counter:
    """Why the records `current_attempts` set aside were, counted by reason: the loss of their
    host that a session of meta.json records for their attempt (its `hosts_lost`: host, time,
    reason), else LEFT_INCOMPLETE."""
    lost = {entry["attempt"]: entry for s in sessions if isinstance(s, dict)
            for entry in (s.get("hosts_lost") or []) if isinstance(entry, dict) and entry.get("attempt")}

    def why(record: dict[str, Any]) -> str:
        entry = lost.get(record.get("attempt"))
        if entry is None:
            return LEFT_INCOMPLETE
        return (f"its host {entry.get('host')} was lost at {entry.get('at')} while it ran the block "
                f"({entry.get('reason')}), and the block was taken again whole")

    return Counter(why(r) for r in abandoned)


def latest(kept: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per sample id: the last one written (a skipped sample taken again later) of
    the block's kept attempt (the kept records of `current_attempts`)."""
    out: dict[str, dict[str, Any]] = {}
    for r in kept:
        out[r["sample_id"]] = r
    return list(out.values())


def not_taken_again(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records whose status is final: a resumed run does not take their sample again."""
    return [r for r in records if r.get("status") not in RETRY_STATUSES]


def warmup_again_id(sample_id: str, tag: str) -> str:
    """The name of a warm-up taken again, outside the plan's schedule: by a resumed session
    (tag `in_process_attempt`) or by each host of a cluster (tag "<host>:<attempt>")."""
    return f"{sample_id}@{tag}"


def is_warmup_again(record: dict[str, Any]) -> bool:
    """A warm-up taken again under a name of its own (`warmup_again_id`): no sample of the plan's."""
    return record.get("phase") == "warmup" and "@" in str(record.get("sample_id", ""))


def sampling_sessions(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The sessions that took samples, in order: a session that found every sample taken (a finished
    run opened again to re-analyse it) or was stopped before its first sample is recorded in meta.json
    but took no part in the measurements the Method describes.  A session without a count (an older
    harness's) is taken to have sampled; with none that sampled, every session."""
    sessions = [s for s in meta.get("sessions", []) if isinstance(s, dict)]
    sampled = [s for s in sessions if not isinstance(s.get("taken"), int) or s["taken"] > 0]
    return sampled or sessions


def taken_per_cell(records: Iterable[dict[str, Any]], done: set[str]) -> Counter:
    """Samples of the plan already taken per cell id: the records whose sample id is `done`
    (ResultsStore.done_ids, less those a resumed session takes again: the rest of a block an
    interruption cut, the warm-ups before its first measured sample; bench_src/run/session_estimate.py,
    `session_takes`), what a resumed run and its estimate do not take again (warm-ups taken again
    under names of their own are no sample of the plan's)."""
    return Counter(r["cell_id"] for r in records if r["sample_id"] in done and not is_warmup_again(r))
