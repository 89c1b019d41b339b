"""Two cells that were not measured in the same blocks (a frame without blocks, or too few shared
blocks): the shift between their log values, a test of "shift = 0" and the interval dual to it.

Used only where pairs are missing; the same choice as `paired`, made by the design:
- **exact Mann-Whitney** (`MANN_WHITNEY`) where it can reach the level (its smallest two-sided
  p-value is 2 / C(m + n, m)): the two-sample Hodges-Lehmann shift (median of all differences
  x_i - y_j) and its exact interval.  Assumption: the two distributions of log values have the
  same shape (one is a shift of the other).
- **Welch's t** (`WELCH`) below that: difference of the means of the log values, Welch-Satterthwaite
  degrees of freedom.  Assumption: the means are close enough to normal.

As in `paired`, the p-value is the smallest level whose interval excludes 0.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from . import ranktests

WELCH = "welch"
MANN_WHITNEY = "mann-whitney"
TEST_NAMES = {WELCH: "Welch's t", MANN_WHITNEY: "exact Mann-Whitney"}


def min_p(m: int, n: int) -> float:
    """The smallest two-sided p-value an exact two-sample rank test of m and n values gives."""
    return min(1.0, 2 / math.comb(m + n, m)) if m and n else 1.0


class Shift:
    """The shift of log values x over log values y."""

    def __init__(self, x, y, level_min: float):
        self.x = np.asarray(x, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.n = int(min(self.x.size, self.y.size))
        small = self.x.size * self.y.size <= ranktests.EXACT_MAX * 4
        self.test = MANN_WHITNEY if small and min_p(self.x.size, self.y.size) <= level_min else WELCH
        if self.test == MANN_WHITNEY:
            self.diffs = np.sort((self.x[:, None] - self.y[None, :]).ravel())

    def test_at(self, level) -> str:
        """The test whose interval is shown at any level: one test for every level."""
        return self.test

    def is_hull(self, level) -> bool:
        """Never: Welch's interval is symmetric about its estimate, the Mann-Whitney interval is
        used only at the levels it reaches (paired.Location.is_hull)."""
        return False

    def _welch(self) -> tuple[float, float, float]:
        mx, my = self.x.size, self.y.size
        vx, vy = self.x.var(ddof=1) / mx, self.y.var(ddof=1) / my
        se = math.sqrt(vx + vy)
        dof = (vx + vy) ** 2 / ((vx ** 2 / (mx - 1) if vx else 0) + (vy ** 2 / (my - 1) if vy else 0)) if se > 0 else 1.0
        return float(self.x.mean() - self.y.mean()), se, max(dof, 1.0)

    @property
    def estimate(self) -> float:
        if self.x.size == 0 or self.y.size == 0:
            return math.nan
        if self.test == MANN_WHITNEY:
            return float(np.median(self.diffs))
        return float(self.x.mean() - self.y.mean())

    def p_value(self) -> float:
        if self.x.size < 2 or self.y.size < 2:
            return math.nan
        if self.test == MANN_WHITNEY:
            below = min(int(np.count_nonzero(self.diffs <= 0)), int(np.count_nonzero(self.diffs >= 0)))
            return float(min(1.0, 2 * ranktests.mann_whitney_cdf(self.x.size, self.y.size)[below]))
        est, se, dof = self._welch()
        if se == 0:
            return 1.0 if est == 0 else 0.0
        return float(2 * sps.t.sf(abs(est) / se, dof))

    def interval(self, level) -> tuple[float, float]:
        level = float(np.asarray(level))
        if self.x.size < 2 or self.y.size < 2 or not (0 < level < 1):
            return (math.nan, math.nan)
        if self.test == MANN_WHITNEY:
            c = ranktests.mann_whitney_critical(self.x.size, self.y.size, level)
            if c is None:
                return (math.nan, math.nan)
            return (float(self.diffs[c]), float(self.diffs[self.diffs.size - 1 - c]))
        est, se, dof = self._welch()
        half = float(sps.t.isf(level / 2, dof)) * se
        return (est - half, est + half)

    def coverage(self, level: float) -> float:
        if self.test == WELCH:
            return 1 - level
        c = ranktests.mann_whitney_critical(self.x.size, self.y.size, level)
        return math.nan if c is None else 1 - 2 * float(ranktests.mann_whitney_cdf(self.x.size, self.y.size)[c])
