"""The statistical rules' constants, fixed before any data, written once: every table, the check of a
plan, the sequential rule and the report's Method read them from here.  docs/statistics.md explains
them; each assumption is stated beside the code that relies on it (paired, unpaired,
multiplicity, scaling).

This module imports nothing from the plan, run or store layers, so the plan's validation can
use it.
"""
from __future__ import annotations

ALPHA = 0.05  # false discovery rate of the "faster"/"smaller" verdicts of one table and metric
MARGIN = 0.02  # equivalence margin on the ratio: [1 - MARGIN, 1 + MARGIN]
CONFIDENCE = 0.95  # confidence of a lone interval (a cell's median, one comparison on its own)
POWER = 0.8  # the power at which the minimum detectable effect is stated
MIN_PAIRS_FRACTION = 0.5  # paired when at least this share of the smaller side's samples pair up
# The fewest pairs at which the decision rule's error rate was measured and holds on every shape
# simulated (tests/test_simulations.py): a plan whose first look has fewer is refused (smoke aside).
MIN_PAIRS = 6
TIME_METRICS = frozenset({"elapsed_s", "wall_s", "cpu_s", "user_s", "sys_s", "setup_s"})
# The grid a metric is measured on, where it is known: the clocks count nanoseconds, the kernel
# counts resident memory in pages (4 KiB on the x86_64 machines this package is run on).  The
# decision rule reads the grid off the samples (paired.grid_step) and uses this only for cells
# whose samples never vary.
PAGE_BYTES = 4096
RESOLUTION = {**{m: 1e-9 for m in TIME_METRICS}, "peak_rss_mib": PAGE_BYTES / 2 ** 20, "peak_rss_bytes": PAGE_BYTES,
              "maxrss_kb": PAGE_BYTES / 1024}


def resolution(metric: str) -> float:
    return RESOLUTION.get(metric, 0.0)
# The sequential rule: the metrics whose comparisons decide when a cell stops (every metric the
# report gives a verdict on), the number of looks when a plan gives a budget but no number of
# looks, and the share of ALPHA spent at the pilot look (the rest is split evenly over the later
# looks).
SEQUENTIAL_METRICS = ("elapsed_s", "peak_rss_mib")
# A comparison the rule leaves inconclusive stops sampling once it would have shown a difference of
# this size (its minimum detectable effect is at most this): "no difference of 5% or more".
PRECISION_TARGET = 0.05
DEFAULT_LOOKS = 3
PILOT_SPEND = 0.5

PAIRED_METHOD = ("Student's t on the per-block differences of log values where no exact test can reach the "
                 "family's level, the exact Wilcoxon signed-rank test (Hodges-Lehmann estimate, Tukey-Moses "
                 "interval) where it can")
UNPAIRED_METHOD = ("Welch's t on the log values where the exact Mann-Whitney test cannot reach the family's level, "
                   "the Mann-Whitney test with the two-sample Hodges-Lehmann shift where it can")


def word(metric: str) -> str:
    return "faster" if metric in TIME_METRICS else "smaller"


def verdict_text(kind: str, within_margin: bool, a: str, b: str, metric: str, margin: float = MARGIN) -> str:
    pct = f"{margin * 100:g}%"
    if kind in ("a", "b"):
        text = f"{a if kind == 'a' else b} {word(metric)}"
        return f"{text}, by less than {pct}" if within_margin else text
    if kind == "equivalent":
        return f"equivalent within ±{pct}"
    return "inconclusive"


def look_spending(looks: int, pilot_spend: float = PILOT_SPEND) -> tuple[float, ...]:
    """The share of alpha spent at each look (summing to 1)."""
    if looks <= 1:
        return (1.0,)
    rest = (1 - pilot_spend) / (looks - 1)
    return (pilot_spend, *([rest] * (looks - 1)))


def look_counts(samples: int, max_samples: int, looks: int) -> tuple[int, ...]:
    """The block counts (pairs per comparison) at which the sequential rule looks: the pilot,
    evenly spaced counts, and the budget."""
    if max_samples <= samples or looks <= 1:
        return (samples,)
    counts = [samples + round(k * (max_samples - samples) / (looks - 1)) for k in range(looks)]
    return tuple(dict.fromkeys(counts))
