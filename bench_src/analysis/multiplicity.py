"""A family of paired comparisons (one table, one metric) decided together: the false discovery
rate over the family, the looks of a sequential run, and intervals that agree with the verdicts.

- **Looks** (a sequential run): look k tests a comparison on its first L_k pairs with the share
  w_k of alpha (Bonferroni over the looks).  A comparison's p-value is P = min_k p_k / w_k, valid
  whatever the stopping did (union bound).  Its 1 - level interval is the intersection over the
  looks of the 1 - level x w_k intervals: it excludes 0 exactly when some look's interval does,
  that is exactly when P <= level, and it covers with probability >= 1 - level (union bound).
  A fixed design is one look with w = 1 on all pairs.
- **False discovery rate** (Benjamini-Hochberg): R = the largest r with r p-values P <= r q / m;
  those R comparisons are the family's differences.  Assumption: the p-values of one family are
  independent or positively dependent.  Comparisons that share a cell (every variant against the
  same baseline) are positively correlated, the case Benjamini and Yekutieli (2001) cover;
  `tests/test_simulations.py` measures the rate on families built like real runs.  Then the
  expected share of false differences (no difference, or the wrong direction) among those
  called is at most q.
- **Intervals that agree** (the false coverage-statement rate of Benjamini and Yekutieli, 2005):
  every comparison's interval is shown at level 1 - max(R, 1) q / m.  Since P <= R q / m exactly
  for the R called, an interval excludes 0 exactly when its comparison is a difference: the
  verdict is read off the interval.  Among the called, the expected share of intervals that miss
  their true value is at most q.
- **Equivalence**: not a difference, and the interval lies inside the margin.

The per-comparison tests (exact signed-rank, Student's t below its floor or where values tie) are in
`paired`.  Every function here is vectorised over families (leading axes), so the simulations
run the code the tables use.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from scipy import stats as sps

from . import paired

KINDS = ("a", "b", "equivalent", "inconclusive")


def benjamini_hochberg(p, q: float, m: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per family (leading axes; comparisons on the last axis): R, the number of differences BH
    calls at rate q (a NaN p-value is never called), and the BH-adjusted p-values (a comparison
    is called exactly when its adjusted p-value is <= q).  `m`: the family's size when it holds
    more comparisons than those given (planned ones without data)."""
    p = np.asarray(p, dtype=float)
    p = np.where(np.isnan(p), 1.0, p)
    k = p.shape[-1]
    m = max(int(m or k), k, 1)
    if k == 0:
        return np.zeros(p.shape[:-1], dtype=int), p
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1)
    ranks = np.arange(1, k + 1)
    passing = ranked <= ranks * q / m * (1 + 1e-12)
    r = np.where(passing.any(axis=-1), k - np.argmax(passing[..., ::-1], axis=-1), 0)
    stepped = np.minimum.accumulate((ranked * m / ranks)[..., ::-1], axis=-1)[..., ::-1]
    adjusted = np.empty_like(p)
    np.put_along_axis(adjusted, order, np.minimum(1.0, stepped), axis=-1)
    return r, adjusted


@dataclass(frozen=True)
class Looks:
    """Pair counts at which a comparison is tested and the share of alpha spent at each (summing
    to 1).  One look with share 1 is the fixed design: it uses every pair."""

    counts: tuple[int, ...]
    shares: tuple[float, ...] = (1.0,)

    @property
    def sequential(self) -> bool:
        """More than one look, or the first looks of a sequential design (their shares below 1):
        a lone look with share 1 is the fixed design."""
        return len(self.counts) > 1 or tuple(self.shares) != (1.0,)

    def reached(self, n: int) -> list[tuple[int, float]]:
        """The looks a comparison with n pairs took part in, as (pairs tested, share): the first
        look always; a later look when it had pairs beyond the previous look's count; the last
        planned look on every pair there is.  Looks without a share are left out."""
        if not self.sequential:
            return [(n, 1.0)]
        out = []
        for k, (count, share) in enumerate(zip(self.counts, self.shares)):
            if k > 0 and n <= self.counts[k - 1]:
                break
            pairs = n if k == len(self.counts) - 1 else min(count, n)
            if share > 0:
                out.append((pairs, share))
        return out


class Tested:
    """Comparisons tested at every look they reached: one (share, paired.Location) per look.  The
    Locations may hold many comparisons of the same pair counts (leading axes)."""

    def __init__(self, looks: list[tuple[float, paired.Location]]):
        self.looks = looks

    @classmethod
    def of(cls, d: np.ndarray, looks: Looks, level_min: float,
           grid: paired.Rounding | Callable[[int], paired.Rounding] = paired.NO_ROUNDING) -> "Tested":
        """`d`: per-block log ratios on the last axis, in block order.  `level_min`: the family's
        smallest level at a look before that look's share (alpha / m): it chooses the test.
        `grid`: the cells' rounding on a grid (paired.rounding), or the function that reads it off
        the values of the first k blocks.  Each look reads it off the blocks it tests, as it did when
        it was taken: a tie or a grid that only later blocks show does not change what an earlier
        look found, so a decision made at a look stays made in every later table."""
        d = np.asarray(d, dtype=float)
        grid_of = grid if callable(grid) else (lambda _pairs: grid)
        return cls([(share, paired.Location.of(d[..., :pairs], level_min * share, grid_of(pairs)))
                    for pairs, share in looks.reached(d.shape[-1])])

    @property
    def last(self) -> tuple[float, paired.Location] | None:
        return self.looks[-1] if self.looks else None

    def p_value(self) -> np.ndarray:
        if not self.looks:
            return np.array(np.nan)
        ps = np.stack([loc.p_value() / share for share, loc in self.looks])
        with np.errstate(invalid="ignore"):
            return np.minimum(1.0, np.fmin.reduce(ps, axis=0))

    def interval(self, level) -> tuple[np.ndarray, np.ndarray]:
        """The 1 - level interval: the intersection of each look's 1 - level x share interval.
        Where the looks' intervals do not overlap (an event of probability at most `level`, in which
        the intersection has already missed the truth), the shortest interval that meets each of
        them: from the lowest upper bound to the highest lower bound (`disjoint` says where)."""
        low, high = self._meet(level)
        swap = low > high
        return np.where(swap, high, low), np.where(swap, low, high)

    def disjoint(self, level) -> np.ndarray:
        """Where the looks' intervals at `level` have no point in common."""
        low, high = self._meet(level)
        return low > high

    def _meet(self, level) -> tuple[np.ndarray, np.ndarray]:
        """The highest lower bound and the lowest upper bound of the looks' intervals."""
        if not self.looks:
            return np.array(np.nan), np.array(np.nan)
        bounds = [loc.interval(np.asarray(level) * share) for share, loc in self.looks]
        lows = np.stack([np.broadcast_to(lo, np.broadcast(lo, hi).shape) for lo, hi in bounds])
        highs = np.stack([np.broadcast_to(hi, np.broadcast(lo, hi).shape) for lo, hi in bounds])
        with np.errstate(invalid="ignore"):
            return np.fmax.reduce(lows, axis=0), np.fmin.reduce(highs, axis=0)


@dataclass(frozen=True)
class FamilyVerdicts:
    """The decisions of families (leading axes) of comparisons (last axis), in log units."""

    kind: np.ndarray  # "a" (first side smaller), "b", "equivalent", "inconclusive"
    within_margin: np.ndarray
    level: np.ndarray  # per family: every interval is a 1 - level interval
    low: np.ndarray
    high: np.ndarray
    p_value: np.ndarray
    p_adjusted: np.ndarray
    called: np.ndarray  # per family: R


def decide(p, interval_at: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], alpha: float, margin: float,
           m: int | None = None) -> FamilyVerdicts:
    """BH at rate alpha over the p-values of each family (last axis: its comparisons; `m` its
    planned size when larger), every interval at level max(R, 1) alpha / m (interval_at(level)
    with one level per family, shaped to broadcast against the comparisons), kinds read off the
    intervals.

    R counts only the differences the intervals show: a comparison whose p-value BH rejects but
    whose interval at the family's level holds 1 (its looks' intervals do not overlap, and the
    interval shown is the shortest meeting each) is no discovery.  It would loosen every other
    interval of the family and stand as a call in the count of differences beside a row that reads
    "inconclusive"; so it is left out of R (its adjusted p-value is blank) and the family is
    decided again, until every comparison BH calls is a difference."""
    p = np.asarray(p, dtype=float)
    size = max(int(m or 0), p.shape[-1], 1)
    counted = p.copy()
    while True:
        r, adjusted = benjamini_hochberg(counted, alpha, size)
        level = np.maximum(r, 1) * alpha / size
        low, high = interval_at(level[..., None])
        low, high = np.broadcast_to(low, p.shape), np.broadcast_to(high, p.shape)
        inside = (math.log(1 - margin) <= low) & (high <= math.log(1 + margin))
        kind = np.where(high < 0, "a", np.where(low > 0, "b", np.where(inside, "equivalent", "inconclusive")))
        kind = np.where(np.isnan(low) | np.isnan(high), "inconclusive", kind)
        stray = ~np.isnan(counted) & (adjusted <= alpha * (1 + 1e-12)) & ~np.isin(kind, ["a", "b"])
        if not stray.any():
            break
        counted = np.where(stray, np.nan, counted)
    adjusted = np.where(np.isnan(counted), np.nan, adjusted)
    return FamilyVerdicts(kind, np.isin(kind, ["a", "b"]) & inside, level, low, high, p, adjusted, r)


def detectable(half_width, level, test: str, dof: int, power: float) -> np.ndarray:
    """The smallest true difference (log units) that a comparison whose interval at `level` has
    this half-width calls with probability `power`: the half-width plus the power quantile of
    the estimate's error, so between the half-width (called half the time) and the full width."""
    half_width = np.asarray(half_width, dtype=float)
    level = np.asarray(level, dtype=float)
    t = test == paired.T_TEST and dof >= 1
    if level.ndim == 0:
        factor = _power_factor(float(level), power, int(dof) if t else 0)
    else:
        crit = sps.t.isf(level / 2, dof) if t else sps.norm.isf(level / 2)
        factor = 1 + (sps.t.ppf(power, dof) if t else sps.norm.ppf(power)) / crit
    with np.errstate(invalid="ignore"):
        return np.where(half_width >= 0, half_width * factor, np.nan)


@lru_cache(maxsize=4096)
def _power_factor(level: float, power: float, dof: int) -> float:
    """1 + q_power / q_level of Student's t on dof degrees of freedom (the normal for dof 0)."""
    if dof >= 1:
        return float(1 + sps.t.ppf(power, dof) / sps.t.isf(level / 2, dof))
    return float(1 + sps.norm.ppf(power) / sps.norm.isf(level / 2))


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values; NaN stays NaN and is not counted in the family (the drift
    check's correction over cells).  (statsmodels' multipletests gives the same values but runs a
    garbage collection on every call; tests compare the two.)"""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        q = p[ok]
        order = np.argsort(q, kind="stable")
        m = q.size
        stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * q[order]))
        adjusted = np.empty(m)
        adjusted[order] = stepped
        out[ok] = adjusted
    return out
