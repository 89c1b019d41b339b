"""The statuses a sample record can carry: each name with what it means (the README's table of
the samples' columns lists them in these words), and one constant per name that every module reads
instead of writing the name out.  The programs write no status: the harness gives each sample its
own (bench_src/run/measure.py from the launcher's report and the program's result line,
bench_src/run/sample.py, bench_src/run/keeper.py, bench_src/run/cluster/engine.py)."""
from __future__ import annotations

OK = "ok"
FAILED = "failed"
TIMEOUT = "timeout"
MEMORY_LIMIT = "memory_limit"
KILLED = "killed"
BAD_OUTPUT = "bad_output"
CHECKSUM_MISMATCH = "checksum_mismatch"
TOO_FAST = "too_fast"
HARNESS_ERROR = "harness_error"
SKIPPED = "skipped"
HOST_LOST = "host_lost"

# Every status in the README's order, with its meaning.
MEANINGS: dict[str, str] = {
    OK: "the program ran to its end and printed its result line",
    FAILED: "non-zero exit",
    TIMEOUT: "killed at the plan's timeout",
    MEMORY_LIMIT: "its RSS passed the plan's memory limit",
    KILLED: "signal",
    BAD_OUTPUT: "no valid result line on stdout",
    CHECKSUM_MISMATCH: "its checksum differs from the first ok sample's of the same work",
    TOO_FAST: "waiting work done in less time than its longest wait: docs/workloads.md, section 1",
    HARNESS_ERROR: "the harness failed around the sample",
    SKIPPED: "its database server is not available here; taken again on resuming",
    HOST_LOST: "a cluster run's block lost with its host; taken again on resuming",
}
