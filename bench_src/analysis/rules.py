"""The statistical rules' constants, fixed before any data, written once: every table, the check of a
plan, the sequential rule and the report's Method read them from here.  docs/statistics.md explains
them; each assumption is stated beside the code that relies on it (paired, unpaired,
multiplicity, scaling).

The constants a plan needs before any data (MIN_PAIRS, the looks of the sequential rule and the
share of alpha each spends) are the plan's (bench_src/plan/design.py) and read from there.
"""
from __future__ import annotations

from ..plan.design import (DEFAULT_LOOKS, LATE_STEP_S, MIN_PAIRS, PILOT_SPEND, late_counts,  # noqa: F401
                           look_counts, look_spending)

ALPHA = 0.05  # false discovery rate of the "faster"/"smaller" verdicts of one table and metric
MARGIN = 0.02  # equivalence margin on the ratio: [1 - MARGIN, 1 + MARGIN]
# The engine check's margin (analysis/engines.py): the same plan in this process and through a
# cluster's host must agree within ±1%, tighter than the margin a reader's comparison gets, so that
# the engine is never the difference a reader sees
ENGINES_MARGIN = 0.01
CONFIDENCE = 0.95  # confidence of a lone interval (a cell's median, one comparison on its own)
POWER = 0.8  # the power at which the minimum detectable effect is stated
# What that power comes to averaged over the spread's own uncertainty (the mde takes the spread a row
# measured as the true one): per number of pairs, the lowest and highest share over the noise shapes
# (lognormal, heavy tails, bimodal) that simulate.mde_power measured, one comparison at 0.05 / 30,
# CV 2%, fixed design (docs/statistics.md, "Minimum detectable effect", has the table these are read
# from; tests/test_report_findings.py checks the two agree).
MDE_POWER_MEASURED = {6: (0.594, 0.629), 10: (0.671, 0.856), 14: (0.704, 0.754), 20: (0.722, 0.787)}
TIME_METRICS = frozenset({"elapsed_s", "wall_s", "cpu_s", "user_s", "sys_s"})
CPU_METRICS = frozenset({"cpu_s", "user_s", "sys_s"})  # the CPU a program used, not how long it took
MEMORY_METRICS = frozenset({"peak_rss_mib", "peak_rss_bytes", "maxrss_kb"})
# The grid a metric is measured on, where it is known: the clocks count nanoseconds, the kernel
# counts resident memory in pages (4 KiB on the x86_64 machines this package is run on).  The
# decision rule reads the grid off the samples (paired.grid_step) and uses this only for cells
# whose samples never vary.
PAGE_BYTES = 4096
RESOLUTION = {**{m: 1e-9 for m in TIME_METRICS}, "peak_rss_mib": PAGE_BYTES / 2 ** 20, "peak_rss_bytes": PAGE_BYTES,
              "maxrss_kb": PAGE_BYTES / 1024}


def resolution(metric: str) -> float:
    return RESOLUTION.get(metric, 0.0)


# A memory cell is dispersed where the standard deviation of its values (those that count for the
# metric) is at least this share of their mean: pyperf's rule for a result that "may be unstable"
# (its `check` warns at a standard deviation of 10% of the mean).  The peak RSS of a fixed work
# varies little (median 1.4% over the 140 cells of run V, 95% of them below 5%), so a cell at 10%
# or more held different amounts in different samples, most often two clusters (Go's files_rw at
# N = 100,000: 33 of 49 samples at 69-117 MiB, the others at 153-1,135 MiB, 111% of the mean): its
# median and every ratio read off it describe no one amount.  Its false-alarm rate on unimodal
# data is measured in tests/test_compare.py (analysis/quality.py, `dispersion_warning`).
DISPERSED_CV = 0.10

# The headline metrics, the two the package's question is about (how long the work takes, how much
# memory it holds): the sequential rule, the Findings, the verdict figures and the analysis across
# hosts read them.  (CPU time has its tables and verdicts too, but neither stops sampling nor heads
# the report.)
HEADLINE_METRICS = ("elapsed_s", "peak_rss_mib")
# The sequential rule: the metrics whose comparisons decide when a cell stops.  Its looks, the share
# of ALPHA each spends and MIN_PAIRS are fixed by the plan (bench_src/plan/design.py) and read here.
SEQUENTIAL_METRICS = HEADLINE_METRICS
# A comparison the rule leaves inconclusive stops sampling once a difference of this size is excluded
# by its interval or would have been called (its minimum detectable effect, compare._detectable, is at
# most this): "no difference of 5% or more left open".
PRECISION_TARGET = 0.05

def mde_power_measured(pairs) -> tuple[float, float, tuple[int, ...]]:
    """The power MDE_POWER_MEASURED gives comparisons of `pairs` pairs each: the lowest and highest
    share over the simulated pair counts they fall on (each the largest simulated count at or below
    it, the fewest for fewer pairs; beyond the largest, the largest, which is all that was measured),
    and those counts.  NaN and () where no count is given."""
    sims = sorted(MDE_POWER_MEASURED)
    used = sorted({max([k for k in sims if k <= p] or sims[:1]) for p in pairs if p == p})
    if not used:
        return float("nan"), float("nan"), ()
    return (min(MDE_POWER_MEASURED[k][0] for k in used), max(MDE_POWER_MEASURED[k][1] for k in used), tuple(used))


def word(metric: str) -> str:
    """What the side that needs less of `metric` is called: faster (a duration), uses less CPU (CPU
    time: a program may use more of it and finish first), smaller (memory and the rest)."""
    if metric in CPU_METRICS:
        return "uses less CPU"
    return "faster" if metric in TIME_METRICS else "smaller"


def verdict_text(kind: str, within_margin: bool, a: str, b: str, metric: str, margin: float = MARGIN) -> str:
    pct = f"{margin * 100:g}%"
    if kind in ("a", "b"):
        text = f"{a if kind == 'a' else b} {word(metric)}"
        return f"{text}, by less than {pct}" if within_margin else text
    if kind == "equivalent":
        return f"equivalent within ±{pct}"
    return "inconclusive"
