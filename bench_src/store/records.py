"""A line of samples.jsonl: what makes it a sample record (its keys and their types, a cell of the
run's plan), what an unreadable one stands for, and the count of samples lost against those the
sessions recorded as taken."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REJECTED = "samples.rejected.jsonl"
# The keys without which a line is not a sample record.
REQUIRED = ("sample_id", "seq", "phase", "block", "cell_id", "workload", "lang", "variant", "n", "status")
# The type of each required key: a record whose N is "abc" is as unreadable as a torn one
INTEGERS = ("seq", "block", "n")
# The measurements, where a record has them (a failed sample's are null): counts and durations, never
# negative, never text.  A torn edit that made one "abc" was read as a missing value, the sample
# dropped from its cell without a word and never taken again; one made -5 entered the statistics.
MEASURED = ("elapsed_ns", "setup_ns", "wall_ns", "user_ns", "sys_ns", "maxrss_kb", "peak_rss_bytes", "harness_s",
            "tasks_ok")


@dataclass
class Lost:
    """Samples that the sessions of meta.json recorded as taken against what samples.jsonl holds.
    A session writes its `taken` only at its end, after every sample it counts was appended and
    fsync'ed: a killed session records none (it is not counted), and a count is never ahead of
    the file.  `found`: the records of those sessions still there, readable; `damaged`: their
    samples whose line is there but unreadable, in samples.jsonl or moved by a repair to
    samples.rejected.jsonl (a JSON object with a sample_id: `stands_for_a_sample`), there but not
    missing; `not_samples`: the lines of either file that stand for no sample (not JSON, no
    sample_id), counted as neither; `recorded`: losses a repair already noted."""
    taken: int = 0
    found: int = 0
    damaged: int = 0
    not_samples: int = 0
    recorded: int = 0
    torn: int = 0  # a torn last line (there, or just dropped): a sample whose write was cut, taken again

    @property
    def unexplained(self) -> int:
        """Missing samples that neither a repair recorded nor a torn last line explains."""
        return max(0, self.unrecorded - self.torn)

    @property
    def missing(self) -> int:
        return max(0, self.taken - self.found - self.damaged)

    @property
    def unrecorded(self) -> int:
        return max(0, self.missing - self.recorded)

    def describe(self, path: Path) -> str:
        damaged = (f" ({self.damaged} more there but unreadable, in it or in {REJECTED})" if self.damaged else "")
        garbage = (f"; {self.not_samples} line(s) of it or of {REJECTED} that are no sample record are not "
                   "counted" if self.not_samples else "")
        return (f"{path} holds {self.found} of the {self.taken} samples that meta.json records as taken{damaged}: "
                f"{self.unexplained} are missing (the file was deleted, emptied or cut){garbage}")


@dataclass
class BadLine:
    lineno: int
    text: str
    why: str
    raw: bytes | None = None  # a line that is not UTF-8, as it was (its text has replacement characters)


@dataclass
class Scan:
    """What samples.jsonl holds: the records, the lines that are not records, a torn last line."""
    records: list[dict[str, Any]] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    torn: bool = False

    def describe_bad(self, path: Path, limit: int = 10) -> str:
        shown = "; ".join(f"line {b.lineno}: {b.why}" for b in self.bad[:limit])
        more = f"; and {len(self.bad) - limit} more" if len(self.bad) > limit else ""
        return f"{path} has {len(self.bad)} unreadable or incomplete line(s): {shown}{more}"


def _json_object(value: Any) -> bool:
    """A dict, or a string holding a JSON object (or nothing: '')."""
    if isinstance(value, dict) or value == "":
        return True
    if not isinstance(value, str):
        return False
    try:
        return isinstance(json.loads(value), dict)
    except ValueError:
        return False


def optional_wrong(rec: dict) -> list[str]:
    """The keys a record may lack but, where it has them, the store and the analysis read with a
    type: the attempt of its block (a string), its session (an integer), its parameters and the
    program's extra figures (JSON objects).  A torn edit that made `attempt` 7 or `session` [1]
    passed the line check and stopped the report, the notebook, a resume and every later run's
    estimate with a traceback."""
    wrong = []
    if rec.get("attempt") is not None and not isinstance(rec["attempt"], str):
        wrong.append(f"attempt is {rec['attempt']!r}, not a string")
    if rec.get("session") is not None and not (isinstance(rec["session"], int) and not isinstance(rec["session"], bool)):
        wrong.append(f"session is {rec['session']!r}, not an integer")
    wrong += [f"{k} is {rec[k]!r}, not a JSON object" for k in ("params", "extra")
              if rec.get(k) is not None and not _json_object(rec[k])]
    return wrong


def why_bad(line: str) -> tuple[dict | None, str]:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg})"
    if not isinstance(rec, dict):
        return None, f"not a JSON object ({type(rec).__name__})"
    missing = [k for k in REQUIRED if rec.get(k) is None]
    if missing:
        return None, f"incomplete record (no {', '.join(missing)})"
    wrong = [f"{k} is {rec[k]!r}, not {'an integer' if k in INTEGERS else 'a string'}" for k in REQUIRED
             if not (isinstance(rec[k], int) and not isinstance(rec[k], bool) if k in INTEGERS
                     else isinstance(rec[k], str))]
    wrong += [f"{k} is {rec[k]!r}, not a number >= 0" for k in MEASURED
              if rec.get(k) is not None and not non_negative(rec[k])]
    wrong += optional_wrong(rec)
    if wrong:
        return None, f"wrong type ({'; '.join(wrong)})"
    return rec, ""


def stands_for_a_sample(line: str) -> dict | None:
    """An unreadable line as the sample it stands for, where it is one: a JSON object with a
    sample_id (a record with a key missing, of the wrong type or of no cell of the plan); None for
    a line that is no sample record (not JSON, not an object, no sample_id), which stands for no
    sample taken."""
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) and isinstance(rec.get("sample_id"), str) and rec["sample_id"] else None


def foreign_cell(rec: dict, cells: dict[str, tuple]) -> str:
    """Why a record is of no cell of the run's plan ('' when it is of one): a samples file of
    another plan (other N, parameters, threads), or a name no program of the plan has (a language,
    a workload, a variant).  `cells`: the plan's cell ids, which every record carries, each with its
    (workload, lang, variant, N), which the record's own fields must repeat."""
    if cells.get(rec["cell_id"]) == (rec["workload"], rec["lang"], rec["variant"], rec["n"]):
        return ""
    return (f"a cell the run's plan does not hold ({rec['cell_id']!r}: workload {rec['workload']!r}, lang "
            f"{rec['lang']!r}, variant {rec['variant']!r}, N {rec['n']}): another plan's sample, or a name no "
            "program has")


def non_negative(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and value >= 0)


def is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
