"""One paired comparison: the per-block differences d of log values, their centre, a test of
"centre = 0" and the interval dual to it, at any level.

Two tests, chosen by the design (the number of pairs and the smallest level the comparison can be
tested at), never by the data:

- **exact signed-rank** (`SIGNED_RANK`) where it can reach that level: with n pairs no two-sided
  p-value of an exact test is below 2 / 2^n, so it is used when 2 / 2^n <= the level.  Estimate: the
  Hodges-Lehmann estimate (median of the Walsh averages (d_i + d_j) / 2, i <= j); interval: the
  Tukey-Moses interval, the Walsh averages at the ranks of the exact null distribution.
  Assumption: d is symmetric about its centre.  It is under "no difference", because the order of
  the cells inside a block is random, so the two sides of a pair are exchangeable.  Nothing else:
  valid for every shape, and robust to a wild block.
- **Student's t** (`T_TEST`) below that, where no exact distribution-free test can decide (every
  test valid for all symmetric distributions has the floor 2 / 2^n): estimate the mean of d,
  interval mean +- t x se with T_DOF_LOST degrees of freedom fewer than Student's n - 1.
  Assumption: d close enough to normal that the t distribution gives its tail probabilities.
  Heavy tails make it conservative.  Bimodal noise (two modes 20% apart, CV 5% each) makes
  Student's n - 1 up to 1.14 times too liberal at 8 to 11 pairs at the levels a family of 30 or
  72 uses (2 million draws each); n - 2 brings every shape measured to at most its nominal level
  (at the cost of about one pair on normal data).  A distribution of d with atoms (narrow modes,
  a coarse grid) also makes "every d the same" more likely than a normal model says: at 6 pairs
  with two modes of CV 1%, 2 x 4^-6 = 4.9e-4 per comparison, which no t calibration removes.
  `tests/test_simulations.py` measures the family's error on all of these.

Measurements on a grid (RSS in pages, a coarse clock) carry a rounding error of up to half a step
that does not average out when the noise is smaller than the step: every sample of a cell may
round the same way.  So where the values sit on a grid of step h (read off each cell's own
distinct values, or the metric's known resolution), the interval is widened by the bound of that
systematic error (`rounding`: half a step per cell), and for the t test the variance has a floor, the rounding variance (h / a)^2 / 12 + (h / b)^2 / 12,
so that a run of identical differences is not taken for certainty.  Where the step is far below
the noise (nanosecond clocks) both are negligible.

Every function is vectorised over leading axes (many comparisons with the same number of pairs at
once), so the simulations run the very code the tables use.

For both tests the interval at `level` (a 1 - level confidence interval) excludes 0 exactly when
the p-value is at most `level`: the p-value is the smallest level whose interval excludes 0.  For
the signed-rank test with zeros or ties among the Walsh averages, ties count against a
difference on both sides, which is conservative.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats as sps

from . import ranktests

T_TEST = "t"
SIGNED_RANK = "signed-rank"
T_DOF_LOST = 2  # the t test's degrees of freedom: n - T_DOF_LOST (see above)
TEST_NAMES = {T_TEST: "Student's t", SIGNED_RANK: "exact signed-rank"}
_TOLERANCE = 1e-12


def choose_test(n: int, level_min: float) -> str:
    """The test for n pairs whose smallest level is `level_min`: the exact signed-rank test when
    it can reach that level (2 / 2^n <= level_min), Student's t otherwise."""
    return SIGNED_RANK if n >= 1 and ranktests.min_p_paired(n) <= level_min * (1 + _TOLERANCE) else T_TEST


# --- the grid a measurement may sit on ----------------------------------------------------------
def finest_gaps(values: np.ndarray) -> np.ndarray:
    """The finest gap between distinct values over the last axis (0 when every value is the same)."""
    gaps = np.diff(np.sort(np.asarray(values, dtype=float), axis=-1), axis=-1)
    gaps = np.where(gaps > 0, gaps, np.inf)
    finest = gaps.min(axis=-1, initial=np.inf)
    return np.where(np.isfinite(finest), finest, 0.0)


def on_grid(values: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Whether all values (last axis) are whole multiples of `step` apart."""
    v = np.asarray(values, dtype=float)
    step = np.asarray(step, dtype=float)
    usable = np.isfinite(step) & (step > 0)
    r = (v - v.min(axis=-1, keepdims=True)) / np.where(usable, step, 1.0)[..., None]
    return (np.abs(r - np.round(r)) <= 1e-6 * np.maximum(1.0, np.abs(r))).all(axis=-1) & usable


def grid_step(a_values, b_values, resolution=0.0) -> np.ndarray:
    """The step of the grid two cells' samples sit on (last axis; 0: no grid): the coarser of the
    finest gap within either cell (each cell on its own, so two cells that never vary do not take
    their distance for a step) and the measurement's known `resolution`, provided every value of
    both cells lies on it.  Continuous values (a nanosecond clock read as seconds) lie on no
    coarse grid, and get 0 or their resolution."""
    a, b = np.asarray(a_values, dtype=float), np.asarray(b_values, dtype=float)
    both = np.concatenate([a, b], axis=-1)
    out = np.zeros(both.shape[:-1])
    for cand in (finest_gaps(a), finest_gaps(b), np.broadcast_to(float(resolution), out.shape)):
        out = np.where(on_grid(both, cand) & (cand > out), cand, out)
    return out


def rounding(step, a_typical, b_typical) -> tuple[np.ndarray, np.ndarray]:
    """What a grid of `step` does to d = log a - log b at these typical values: its variance
    ((step / a)^2 + (step / b)^2) / 12 and the bound of its systematic part, half a step per cell,
    step / (2 a) + step / (2 b): a cell whose noise is below the step may round the same way in
    every sample, and nothing in the samples tells how much a drift or the noise dithers it."""
    step, a, b = (np.asarray(x, dtype=float) for x in (step, a_typical, b_typical))
    ok = (step > 0) & (a > 0) & (b > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = ((step / a) ** 2 + (step / b) ** 2) / 12
        bias = step / (2 * a) + step / (2 * b)
    return np.where(ok, variance, 0.0), np.where(ok, bias, 0.0)


# --- Student's t ----------------------------------------------------------------------------------
@lru_cache(maxsize=8192)
def _t_isf(level: float, dof: int) -> float:
    return float(sps.t.isf(level / 2, dof))


def t_parts(d: np.ndarray, variance_floor=0.0) -> tuple[np.ndarray, np.ndarray]:
    """The mean of d over its last axis and its standard error, the variance floored."""
    d = np.asarray(d, dtype=float)
    n = d.shape[-1]
    mean = d.mean(axis=-1)
    if n < 2:
        return mean, np.full(mean.shape, np.nan)
    var = np.maximum(d.var(axis=-1, ddof=1), variance_floor)
    return mean, np.sqrt(var / n)


def t_dof(n: int) -> int:
    return n - T_DOF_LOST


def t_p(mean: np.ndarray, se: np.ndarray, n: int, bias=0.0) -> np.ndarray:
    """Two-sided p-values of mean = 0 for the interval mean +- (crit x se + bias): the smallest
    level at which it excludes 0 (se = 0: 0 when |mean| > bias, else 1)."""
    mean, se = np.asarray(mean, dtype=float), np.asarray(se, dtype=float)
    if t_dof(n) < 1:
        return np.full(np.broadcast(mean, se).shape, np.nan)
    beyond = np.maximum(np.abs(mean) - bias, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = beyond / se
    t = np.where(se > 0, t, np.where(beyond > 0, np.inf, 0.0))
    return 2 * sps.t.sf(t, t_dof(n))


def t_half_width(se: np.ndarray, n: int, level) -> np.ndarray:
    """Half-width of the 1 - level t interval (level broadcasts against se)."""
    if t_dof(n) < 1:
        return np.full(np.broadcast(np.asarray(se, float), np.asarray(level, float)).shape, np.nan)
    crit = np.vectorize(lambda lv: _t_isf(float(lv), t_dof(n)) if 0 < lv < 1 else np.nan, otypes=[float])(level)
    return crit * np.asarray(se, dtype=float)


# --- exact signed-rank ------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def _pair_index(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n)


def walsh(d: np.ndarray) -> np.ndarray:
    """The sorted Walsh averages (d_i + d_j) / 2, i <= j, over the last axis."""
    d = np.asarray(d, dtype=float)
    i, j = _pair_index(d.shape[-1])
    return np.sort((d[..., i] + d[..., j]) / 2, axis=-1)


def rank_estimate(w: np.ndarray) -> np.ndarray:
    """The Hodges-Lehmann estimate: the median of the Walsh averages."""
    return np.median(w, axis=-1)


def rank_p(w: np.ndarray, n: int, bias=0.0) -> np.ndarray:
    """Two-sided p-values of the exact signed-rank test read off the Walsh averages: the number
    of Walsh averages <= 0 (>= 0) is the statistic W- (W+) when no value ties.  With a grid's
    `bias`, for the interval widened by it on both sides."""
    w = np.asarray(w, dtype=float)
    if n < 1:
        return np.full(w.shape[:-1], np.nan)
    bias = np.asarray(bias, dtype=float)[..., None]
    fewer = np.minimum((w <= bias).sum(axis=-1), (w >= -bias).sum(axis=-1))
    if n > ranktests.EXACT_MAX:
        total = n * (n + 1) / 2
        sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        return np.minimum(1.0, 2 * sps.norm.cdf((fewer + 0.5 - total / 2) / sd))
    return np.minimum(1.0, 2 * ranktests.signed_rank_cdf(n)[fewer])


def _critical(n: int, level: float) -> int:
    c = ranktests.signed_rank_critical(n, float(level)) if 0 < level < 1 else None
    return -1 if c is None else c


def rank_interval(w: np.ndarray, n: int, level) -> tuple[np.ndarray, np.ndarray]:
    """The Tukey-Moses 1 - level interval (level broadcasts against the leading axes of w); NaN
    where the level is below what n pairs can reach."""
    w = np.asarray(w, dtype=float)
    lead = w.shape[:-1]
    level = np.broadcast_to(np.asarray(level, dtype=float), lead)
    c = np.vectorize(lambda lv: _critical(n, lv), otypes=[int])(level) if level.size else np.zeros(lead, int)
    ok = c >= 0
    cc = np.where(ok, c, 0)
    low = np.take_along_axis(w, cc[..., None], axis=-1)[..., 0]
    high = np.take_along_axis(w, (w.shape[-1] - 1 - cc)[..., None], axis=-1)[..., 0]
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)


def rank_coverage(n: int, level: float) -> float:
    """The exact coverage of the Tukey-Moses interval at `level` (at least 1 - level)."""
    c = _critical(n, level)
    if c < 0:
        return math.nan
    if n > ranktests.EXACT_MAX:
        return 1 - level
    return 1 - 2 * float(ranktests.signed_rank_cdf(n)[c])


# --- one look at one comparison, whichever test -------------------------------------------------------
class Location:
    """The centre of the per-block log ratios d (last axis) of one or many comparisons with the
    same number of pairs, tested with `test`."""

    def __init__(self, d, test: str, variance_floor=0.0, bias=0.0):
        self.d = np.asarray(d, dtype=float)
        self.n = int(self.d.shape[-1])
        self.test = test
        self.bias = np.asarray(bias, dtype=float)
        if test == T_TEST:
            self.mean, self.se = t_parts(self.d, variance_floor)
        else:
            self.w = walsh(self.d)

    @classmethod
    def of(cls, d, level_min: float, variance_floor=0.0, bias=0.0) -> "Location":
        d = np.asarray(d, dtype=float)
        return cls(d, choose_test(d.shape[-1], level_min), variance_floor, bias)

    @property
    def estimate(self) -> np.ndarray:
        return self.mean if self.test == T_TEST else rank_estimate(self.w)

    def p_value(self) -> np.ndarray:
        if self.test == T_TEST:
            return t_p(self.mean, self.se, self.n, self.bias)
        return rank_p(self.w, self.n, self.bias)

    def interval(self, level) -> tuple[np.ndarray, np.ndarray]:
        """The 1 - level interval of the centre, in log units (widened by a grid's bias)."""
        if self.test == T_TEST:
            half = t_half_width(self.se, self.n, level) + self.bias
            return self.mean - half, self.mean + half
        low, high = rank_interval(self.w, self.n, level)
        return low - self.bias, high + self.bias

    def coverage(self, level: float) -> float:
        """Exact for the signed-rank test, nominal for the t test."""
        return 1 - level if self.test == T_TEST else rank_coverage(self.n, level)
