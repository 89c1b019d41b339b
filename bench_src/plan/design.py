"""The sampling design a plan fixes before any data: when the sequential rule looks (`look_counts`),
the share of alpha each look spends (`look_spending`), and the fewest pairs a plan's first look
may have (MIN_PAIRS).  The analysis reads them (analysis/rules.py), the plan's check refuses a plan
below them (plan/feasibility.py).  docs/statistics.md explains them.
"""
from __future__ import annotations

from ..parameters import DEFAULT_LOOKS  # noqa: F401 - the plan parameter's default, read here

# The fewest pairs at which the decision rule's error rate was measured and holds on every shape
# simulated (tests/test_simulations.py): a plan whose first look has fewer is refused (smoke aside).
MIN_PAIRS = 6
# The share of alpha spent at the pilot look (the rest is split evenly over the later looks); the
# number of looks where a plan gives a budget but none is the plan parameter's default.
PILOT_SPEND = 0.5


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
