"""The sampling design a plan fixes before any data: when the sequential rule looks (`look_counts`,
and past the budget for cheap cells, `late_counts`), the share of alpha each look spends
(`look_spending`), and the fewest pairs a plan's first look may have (MIN_PAIRS).  The analysis
reads them (analysis/rules.py), the plan's check refuses a plan below them (plan/feasibility.py).
docs/statistics.md explains them.
"""
from __future__ import annotations

from ..parameters import DEFAULT_LOOKS  # noqa: F401 - the plan parameter's default, read here
from ..parameters import MAX_SAMPLES_PER_CELL

# The fewest pairs at which the decision rule's error rate was measured and holds on every shape
# simulated (tests/test_simulations.py): a plan whose first look has fewer is refused (smoke aside).
MIN_PAIRS = 6
# The share of alpha spent at the pilot look (the rest is split evenly over the later looks); the
# number of looks where a plan gives a budget but none is the plan parameter's default.
PILOT_SPEND = 0.5
# The late looks (a plan's `late_looks`): past the budget (`max_samples`) the looks go on at the
# same ratio, and a group of open cells takes the blocks to its next late look only where they cost
# at most this many seconds of its cells' measured wall time (analysis/sequential.next_step).  So
# the budget of pairs binds the cells whose samples cost, and a comparison of cells of
# milliseconds whose noise needs thousands of pairs gets them for a minute or two of the run.  The
# looks and their shares of alpha are fixed before any data (every look, late ones included, has
# its share), so which of them a comparison reaches, by its cost or its data, leaves its error rate
# at most alpha (Bonferroni over the looks holds whatever the stopping).
LATE_STEP_S = 60.0
# The most late looks a plan may give (the article profile's fifth reaches 4,867 pairs; late_counts
# stops at parameters.MAX_SAMPLES_PER_CELL, the most samples a plan gives a cell).
MAX_LATE_LOOKS = 5


def look_spending(looks: int, pilot_spend: float = PILOT_SPEND) -> tuple[float, ...]:
    """The share of alpha spent at each look (summing to 1)."""
    if looks <= 1:
        return (1.0,)
    rest = (1 - pilot_spend) / (looks - 1)
    return (pilot_spend, *([rest] * (looks - 1)))


def look_counts(samples: int, max_samples: int, looks: int) -> tuple[int, ...]:
    """The block counts (pairs per comparison) at which the sequential rule looks: the pilot,
    counts in geometric progression, and the budget.  Geometric, because an interval narrows with
    the square root of the pairs: each look adds the same proportion of pairs, so it narrows the
    intervals by about the same factor (6, 8, 11, 15, 20 for a pilot of 6, a budget of 20 and 5
    looks), and a budget far above the pilot (for cheap cells) keeps its early looks close."""
    if max_samples <= samples or looks <= 1:
        return (samples,)
    ratio = (max_samples / samples) ** (1 / (looks - 1))
    counts = [samples] + [max(samples + k, round(samples * ratio ** k)) for k in range(1, looks - 1)] + [max_samples]
    out: list[int] = []
    for c in counts:  # strictly increasing, ending at the budget
        out.append(min(max(c, out[-1] + 1 if out else c), max_samples))
    return tuple(dict.fromkeys(out))


def late_counts(counts: tuple[int, ...], late_looks: int) -> tuple[int, ...]:
    """The late looks' pair counts: `late_looks` more after the budget (counts[-1]), each the one
    before times the ratio of the looks up to the budget (their geometric progression continued:
    912, 1,386, 2,107, 3,202 and 4,867 after 6 to 600 in 12 looks)."""
    if late_looks <= 0 or len(counts) < 2:
        return ()
    ratio = (counts[-1] / counts[0]) ** (1 / (len(counts) - 1))
    out: list[int] = []
    for k in range(1, late_looks + 1):
        count = max(round(counts[-1] * ratio ** k), (out[-1] if out else counts[-1]) + 1)
        if count > MAX_SAMPLES_PER_CELL:
            break
        out.append(count)
    return tuple(out)
