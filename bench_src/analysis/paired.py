"""One paired comparison: the per-block differences d of log values, their centre, a test of
"centre = 0" and the interval dual to it, at any level.

The exact signed-rank test at every level it can reach, Student's t only below that or where the
values tie, chosen by the design (the number of pairs and the levels the family needs) and the ties,
never by the signs of the differences:

- **exact signed-rank** (`SIGNED_RANK`), used alone where it can reach the smallest level the
  comparison may be tested at: with n pairs no two-sided p-value of an exact test is below
  2 / 2^n (its floor), so when 2 / 2^n <= that level.  Estimate: the Hodges-Lehmann estimate
  (median of the Walsh averages (d_i + d_j) / 2, i <= j); interval: the Tukey-Moses interval, the
  Walsh averages at the ranks of the exact null distribution; the estimand is the pseudo-median
  of d (its centre of symmetry where d is symmetric).  Assumption: "no difference" is d symmetric
  about 0, which holds where the two cells' values have the same distribution (the order of the
  cells inside a block is random, so the two sides of a pair are exchangeable), not wherever their
  medians are equal: cells of different shapes (one with a slow mode) lean d to one side
  (docs/statistics.md, "One estimand").  Nothing else: valid for every symmetric shape of d, and robust to a
  wild block.
- **signed-rank, Student's t below its floor** (`RANK_THEN_T`) where the family needs levels below
  2 / 2^n (every test valid for all symmetric distributions has that floor): at every level from
  the floor up, the signed-rank test and its Tukey-Moses interval, as above; below it, the
  interval mean +- t x se with T_DOF_LOST degrees of freedom fewer than Student's n - 1, widened
  where needed to hold the Tukey-Moses interval at the floor (their hull), so that the intervals
  stay nested as the level falls and exclude 0 exactly where the p-value says.  The p-value: the
  signed-rank one where it is above the floor, else the smaller of the floor and the t test's.
  So a difference called below the floor needs both the t test and the signed-rank interval at its
  floor (at 6 pairs: every d on one side of 0).  Why not Student's t at every level: one block far
  out (a burst of interference) widens Student's interval so much that the 95% intervals of 6 and
  10 pairs covered 97.6-98.2% and half of such comparisons could not be called at all, where the
  signed-rank interval covers its exact level and ignores the block.
  Assumption of the t part: d close enough to normal that the t distribution gives its tail
  probabilities.  Heavy tails make it conservative.  Bimodal noise (two modes 20% apart, CV 5%
  each) makes Student's n - 1 up to 1.14 times too liberal at 8 to 11 pairs at the levels a
  family of 30 or 72 uses (2 million draws each); n - 2 brings every shape measured to at most
  its nominal level (at the cost of about one pair on normal data).  A distribution of d with
  atoms (narrow modes, a coarse grid) also makes "every d the same" more likely than a normal
  model says: at 6 pairs with two modes of CV 1%, 2 x 4^-6 = 4.9e-4 per comparison, which no t
  calibration removes.  `tests/test_simulations.py` measures the family's error on all of these.
- **Student's t** alone (`T_TEST`) where some value occurs twice among the two cells' values
  (`repeats`: a grid coarse against the noise, as memory counted in pages often is).  A tied
  difference carries no sign, so the rank tests cannot use it, and a closed rank interval covers
  an atom of d with all of its mass: where two cells sit on the same grid point (the truth on an
  atom) the 95% signed-rank intervals of the study's quantized data covered 98-99%.  Student's t
  uses tied values as values.  Which values tie does not depend on which cell of a pair holds
  which, so the choice leaves the signs, under "no difference" fair coins, untouched.  Its
  estimate is the mean of d (the estimand: the log of the ratio of the two cells' geometric means),
  not the Hodges-Lehmann estimate.

Measurements on a grid (RSS in pages, a coarse clock) carry a rounding error of up to half a step
that does not average out when the noise is smaller than the step: every sample of a cell may
round the same way.  So where the values sit on a grid of step h (read off each cell's own
distinct values, or the metric's known resolution), the interval at level λ is widened by the
1 - λ bound of the rounding's error of d (`rounding`, `Rounding.half_width`): for a cell whose
noise dithers the rounding (at least DITHER_SD_STEPS of a step, `noise_variance`: read off
successive differences about their mean, or within the stretches either side of the largest move
if less, since one jump is not noise), the small bias left in its mean under normal noise; for any
other cell, a uniform error on ± half a step (the true value's place between grid points is as
good as uniform), the two cells' errors summed as a trapezoid.  Where the step is far below the
noise (nanosecond clocks) this is negligible.

Every function is vectorised over leading axes (many comparisons with the same number of pairs at
once), so the simulations run the very code the tables use.

For every test the interval at `level` (a 1 - level confidence interval) excludes 0 exactly when
the p-value is at most `level`: the p-value is the smallest level whose interval excludes 0.  For
the signed-rank test with zeros or ties among the Walsh averages, ties count against a
difference on both sides, which is conservative.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special, stats as sps

from . import ranktests

T_TEST = "t"
SIGNED_RANK = "signed-rank"
RANK_THEN_T = "signed-rank, t below its floor"
# above ranktests.EXACT_MAX pairs the signed-rank test's p-values and intervals are its normal
# approximation's, and the tables say so
SIGNED_RANK_NORMAL = "signed-rank, normal approximation"
T_DOF_LOST = 2  # the t test's degrees of freedom: n - T_DOF_LOST (see above)
TEST_NAMES = {T_TEST: "Student's t", SIGNED_RANK: "exact signed-rank",
              RANK_THEN_T: "exact signed-rank (Student's t below its floor)",
              SIGNED_RANK_NORMAL: f"signed-rank (its normal approximation, above {ranktests.EXACT_MAX} pairs)"}
_TOLERANCE = 1e-12


def choose_test(n: int, level_min: float) -> str:
    """The design's test for n pairs whose smallest level is `level_min`: the exact signed-rank
    test when it can reach that level (2 / 2^n <= level_min), else the signed-rank test with
    Student's t below its floor.  (Comparisons whose values tie take Student's t: `Location.of`.)"""
    return SIGNED_RANK if n >= 1 and ranktests.min_p_paired(n) <= level_min * (1 + _TOLERANCE) else RANK_THEN_T


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


@dataclass(frozen=True)
class Rounding:
    """What a grid does to d = log a - log b, per comparison (leading axes), in log units: each
    cell's mean is off its true value by a systematic rounding error.  A cell whose values lie on
    one or two grid points (its noise below the step) is off by up to half a step, `u` and `v` the
    two cells' half-steps relative to their values (u >= v); a cell whose values spread over three
    or more points is dithered by its own noise, and its error is at most `fixed` (see
    `rounding`).  `tied`: some value occurs more than once among the two cells' values (a grid
    coarse against the noise), which takes the comparison off the rank tests (`Location.of`).  No
    grid: all zero, nothing tied."""

    u: np.ndarray
    v: np.ndarray
    fixed: np.ndarray
    tied: np.ndarray | bool = False

    @property
    def any(self) -> bool:
        return bool(np.any(self.u > 0) or np.any(self.fixed > 0))

    def half_width(self, level) -> np.ndarray:
        """The 1 - level bound of |error of d| (level broadcasts against the comparisons): for the
        undithered cells, the quantile of the sum of two uniform errors on [-u, u] and [-v, v]
        (where the true value lies between two grid points is as good as uniform: nothing ties it
        to the grid), plus the dithered cells' bound.  A trapezoid: P(|X| > x) = 1 - x / u for x
        <= u - v, (u + v - x)^2 / (4 u v) above."""
        level = np.clip(np.asarray(level, dtype=float), 0.0, 1.0)
        u, v = self.u, self.v
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = u * (1 - level)
            outer = u + v - 2 * np.sqrt(level * u * v)
            q = np.where(level * u <= v, outer, inner)
        return np.where(u > 0, q, 0.0) + self.fixed

    def survival(self, reach) -> np.ndarray:
        """The smallest level whose bound `half_width` lies below `reach` (the inverse of
        half_width): P(|X| > reach - fixed) for the trapezoid X; 1 where reach <= fixed."""
        x = np.asarray(reach, dtype=float) - self.fixed
        u, v = self.u, self.v
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = 1 - x / u
            outer = (u + v - x) ** 2 / (4 * u * v)
            s = np.where(x <= u - v, inner, np.where(x < u + v, outer, 0.0))
        s = np.where(u > 0, s, 0.0)
        return np.where(x > 0, np.clip(s, 0.0, 1.0), 1.0)


NO_ROUNDING = Rounding(np.array(0.0), np.array(0.0), np.array(0.0))


def dithered_bound(sd_steps) -> np.ndarray:
    """The largest error, in steps, of the mean of values rounded to a grid when normal noise of
    sd `sd_steps` (in steps) dithers them: the rounding error of a value at x is a sawtooth whose
    average over the noise is sum_k (-1)^k exp(-2 pi^2 k^2 sd^2) sin(2 pi k x) / (pi k) (its
    Fourier series), so at most sum_k exp(-2 pi^2 k^2 sd^2) / (pi k), and never above half a step.
    At sd = 0.5 steps it is 0.002 of a step, at 0.3 steps 0.054."""
    sd = np.asarray(sd_steps, dtype=float)
    k = np.arange(1, 9)
    terms = np.exp(-2 * math.pi ** 2 * (k ** 2) * sd[..., None] ** 2) / (math.pi * k)
    return np.minimum(0.5, terms.sum(axis=-1))


# A cell's values are taken as dithered by its own noise when that noise is at least this many grid
# steps (dithered_bound: at most 0.054 of a step of error left in their mean); below, as rounded.
DITHER_SD_STEPS = 0.3


def _stretch_variance(x: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """The pooled variance of the values within the two stretches either side of the largest move
    (about the median move), on n - 2 degrees of freedom: one jump among still values (a warm-up,
    a level shift) falls between the stretches and counts for nothing."""
    n = x.shape[-1]
    at = np.argmax(np.abs(moves - np.median(moves, axis=-1, keepdims=True)), axis=-1)[..., None]
    first = np.arange(n) <= at  # the values up to the largest move
    n1 = at[..., 0] + 1
    s1 = np.where(first, x, 0.0).sum(axis=-1)
    s2 = x.sum(axis=-1) - s1
    within = (x ** 2).sum(axis=-1) - s1 ** 2 / n1 - s2 ** 2 / (n - n1)
    return np.maximum(within, 0.0) / (n - 2)


def noise_variance(values) -> np.ndarray:
    """The variance of a cell's noise, in its values' units squared (last axis, in the order they
    were taken; 0 with fewer than 3 values), read off the differences of successive values about
    their mean, so that a drift steady over the run, which walks the values across grid points at
    its own pace, does not count as noise (with 6 values a walk of a third of a step per value
    would otherwise read as noise of 0.3 to 0.5 of a step).  Where the values within the stretches
    either side of the largest move vary less (`_stretch_variance`), that: one jump among still
    values (a warm-up, a level shift) would otherwise read as noise of half a step.

    On white noise the stretches' reading is low by the choice of the split (0.87 of the variance
    at 6 values, 0.91 at 10, 0.96 at 20; the smaller of the two readings 0.75, 0.82, 0.89; 100,000
    draws each), which errs toward taking a cell as rounded.  Why the stretches and not the moves
    less the largest: docs/statistics.md ("Values on a grid")."""
    x = np.asarray(values, dtype=float)
    n = x.shape[-1]
    if n <= 2:
        return np.zeros(x.shape[:-1])
    moves = np.diff(x, axis=-1)
    about_mean = moves - moves.mean(axis=-1, keepdims=True)
    # E sum (diff - mean diff)^2 = 2 sd^2 ((n - 1) - 1 / (n - 1)) for white noise
    every = (about_mean ** 2).sum(axis=-1) / (2 * ((n - 1) - 1 / (n - 1)))
    return np.minimum(every, _stretch_variance(x, moves))


def cell_rounding(step, values) -> tuple[np.ndarray, np.ndarray]:
    """One cell's values on a grid of `step` (last axis, in the order they were taken): whether its
    own noise dithers the rounding (`noise_variance` less the rounding's own variance, Sheppard's
    h^2 / 12, at DITHER_SD_STEPS of a step or more), and the bound, in steps, of the error the
    rounding leaves in the cell's mean: `dithered_bound` of that noise where it dithers (an
    assumption: normal noise), half a step where it does not (every value may round the same way)."""
    step = np.asarray(step, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.sqrt(np.maximum(noise_variance(values) / np.where(step > 0, step, 1.0) ** 2 - 1 / 12, 0.0))
    dithered = sd >= DITHER_SD_STEPS
    return dithered, np.where(dithered, dithered_bound(sd), 0.5)


def rounding(step, a_values, b_values) -> Rounding:
    """The rounding of two cells' samples on a grid of `step` (paired.grid_step; last axis: each
    cell's values, in the order they were taken), relative to each cell's median.  A cell's noise
    in steps (`noise_variance`, less the rounding's own variance, Sheppard's h^2 / 12) at
    DITHER_SD_STEPS or more dithers the rounding, and the error of the cell's mean is bounded by
    `dithered_bound` (an assumption: normal noise); below it, the cell is taken as rounded, up to
    half a step either way, as when every value sits on one grid point (a drift that walks the
    values across grid points leaves them rounded: it is the same in both cells of a pair and
    dithers nothing in d).  The true value's place between grid points is taken as uniform:
    nothing ties a program's time or memory to the grid."""
    a, b = np.asarray(a_values, dtype=float), np.asarray(b_values, dtype=float)
    step = np.asarray(step, dtype=float)
    halves, fixed = [], np.zeros(step.shape)
    for x in (a, b):
        typical = np.median(x, axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where((step > 0) & (typical > 0), step / typical, 0.0)
        own, bound = cell_rounding(step, x)
        dithered = own & (rel > 0)
        halves.append(np.where(dithered, 0.0, rel / 2))
        fixed = fixed + np.where(dithered, rel * bound, 0.0)
    u, v = np.maximum(*halves), np.minimum(*halves)
    return Rounding(u, v, fixed, repeats(a, b))


def repeats(a_values, b_values) -> np.ndarray:
    """Whether some value occurs more than once among two cells' values (last axis).  It does not
    depend on which cell of a pair holds which value, so choosing a test by it leaves the signs of
    the differences, on which the rank tests rest, untouched."""
    both = np.sort(np.concatenate([np.asarray(a_values, float), np.asarray(b_values, float)], axis=-1), axis=-1)
    return (np.diff(both, axis=-1) == 0).any(axis=-1)


# --- Student's t ----------------------------------------------------------------------------------
def t_isf(p, dof) -> np.ndarray:
    """Student's t upper-tail quantile, scipy.stats.t.isf(p, dof) to the last bit (scipy computes
    it as -stdtrit(dof, p)), through the ufunc itself: the distribution object's argument checks cost
    about 100 us a call, and the bisections of `smallest_level` call it some 70 times per comparison."""
    p = np.asarray(p, dtype=float)
    return np.where(p > 0, -special.stdtrit(dof, np.where(p > 0, p, 0.5)), np.where(p == 0, np.inf, np.nan))


def norm_isf(p) -> np.ndarray:
    """The normal upper-tail quantile, scipy.stats.norm.isf(p) to the last bit (-ndtri(p)), without
    the distribution object's per-call cost (t_isf says why)."""
    return -special.ndtri(np.asarray(p, dtype=float))


@lru_cache(maxsize=8192)
def _t_isf(level: float, dof: int) -> float:
    return float(t_isf(level / 2, dof))


def t_parts(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean of d over its last axis and its standard error."""
    d = np.asarray(d, dtype=float)
    n = d.shape[-1]
    mean = d.mean(axis=-1)
    if n < 2:
        return mean, np.full(mean.shape, np.nan)
    return mean, np.sqrt(d.var(axis=-1, ddof=1) / n)


def t_dof(n: int) -> int:
    return n - T_DOF_LOST


def t_p(mean: np.ndarray, se: np.ndarray, n: int, grid: "Rounding" = None) -> np.ndarray:
    """Two-sided p-values of mean = 0 for the interval mean +- (crit(level) x se + the grid's
    rounding bound at level): the smallest level at which it excludes 0 (se = 0 and no grid: 0
    when the mean is not 0, else 1).  Without a grid the t distribution's tail; with one, the
    level found by bisection (the half-width falls as the level grows)."""
    mean, se = np.asarray(mean, dtype=float), np.asarray(se, dtype=float)
    if t_dof(n) < 1:
        return np.full(np.broadcast(mean, se).shape, np.nan)
    if grid is None or not grid.any:
        beyond = np.abs(mean)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = beyond / se
        t = np.where(se > 0, t, np.where(beyond > 0, np.inf, 0.0))
        return 2 * sps.t.sf(t, t_dof(n))
    shape = np.broadcast(mean, se, grid.u, grid.fixed).shape
    se = np.broadcast_to(np.nan_to_num(se, nan=np.inf), shape)

    def half(level):
        with np.errstate(invalid="ignore"):
            crit = t_isf(level / 2, t_dof(n))
            return np.where(se > 0, crit * se, 0.0) + np.broadcast_to(grid.half_width(level), shape)

    return smallest_level(np.broadcast_to(np.abs(mean), shape), half)


def smallest_level(target: np.ndarray, half) -> np.ndarray:
    """The smallest level at which an interval estimate +- half(level) excludes 0, where |estimate|
    = `target` and the half-width falls as the level grows (a t interval widened by a grid's
    rounding bound): found by bisection on log10 of the level; 1 where even the level 1 interval
    holds 0."""
    target = np.asarray(target, dtype=float)
    shape = target.shape
    lo, hi = np.full(shape, -300.0), np.zeros(shape)  # log10 of the level
    excludes_at_one = half(np.ones(shape)) < target
    for _ in range(64):
        mid = (lo + hi) / 2
        ok = half(10.0 ** mid) < target
        hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
    return np.where(excludes_at_one, np.minimum(1.0, 10.0 ** hi), 1.0)


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


def rank_p(w: np.ndarray, n: int, grid: "Rounding" = None) -> np.ndarray:
    """Two-sided p-values of the exact signed-rank test read off the Walsh averages: the number
    of Walsh averages <= 0 (>= 0) is the statistic W- (W+) when no value ties.  With a grid, the
    smallest level whose Tukey-Moses interval, widened by the grid's rounding bound at that level,
    excludes 0: at the levels 2 P(W <= c) the interval's ends are the Walsh averages c and N - 1 -
    c, and between two such levels the rounding bound falls, so each c gives the level where its
    interval first excludes 0 (grid.survival), or none."""
    w = np.asarray(w, dtype=float)
    if n < 1:
        return np.full(w.shape[:-1], np.nan)
    if grid is None or not grid.any:
        fewer = np.minimum((w <= 0).sum(axis=-1), (w >= 0).sum(axis=-1))
    else:
        fixed = np.broadcast_to(grid.u + grid.v + grid.fixed, w.shape[:-1])[..., None]
        fewer = np.minimum((w <= fixed).sum(axis=-1), (w >= -fixed).sum(axis=-1))
    if n > ranktests.EXACT_MAX:  # the normal approximation, with the grid's whole bound
        total = n * (n + 1) / 2
        sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        return np.minimum(1.0, 2 * sps.norm.cdf((fewer + 0.5 - total / 2) / sd))
    cdf = ranktests.signed_rank_cdf(n)
    if grid is None or not grid.any:
        return np.minimum(1.0, 2 * cdf[fewer])
    big = w.shape[-1]
    levels = np.minimum(1.0, 2 * cdf[: (big + 1) // 2 + 1])
    best = np.ones(w.shape[:-1])
    for c in range((big + 1) // 2):
        if levels[c] >= best.max(initial=0.0):
            break
        reach = np.maximum(w[..., c], -w[..., big - 1 - c])  # how far the interval's near end is from 0
        first = np.maximum(levels[c], grid.survival(reach))
        nxt = levels[c + 1] if c + 1 < levels.size else 1.0
        best = np.where((reach > 0) & (first < nxt) & (first < best), first, best)
    return best


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
def _read_only(x):
    """`x`, an array marked read-only (a value kept to be handed out again must not be changed)."""
    if isinstance(x, np.ndarray):
        x.setflags(write=False)
    return x


class Location:
    """The centre of the per-block log ratios d (last axis) of one or many comparisons with the
    same number of pairs, tested with `test`, or with Student's t where `by_t` (a mask over the
    comparisons: those whose values tie, `Location.of`)."""

    def __init__(self, d, test: str, grid: Rounding = NO_ROUNDING, by_t=False):
        self.d = np.asarray(d, dtype=float)
        self.n = int(self.d.shape[-1])
        self.grid = grid
        self.by_t = np.broadcast_to(np.asarray(by_t, dtype=bool), self.d.shape[:-1])
        # the test of the comparisons not by_t (all of them by_t: Student's t)
        self.test = T_TEST if self.by_t.all() else test
        self.floor = ranktests.min_p_paired(self.n)  # the smallest level the signed-rank test reaches
        if self.test in (T_TEST, RANK_THEN_T) or self.by_t.any():
            self.mean, self.se = t_parts(self.d)
        if self.test in (SIGNED_RANK, RANK_THEN_T):
            self.w = walsh(self.d)
        self._intervals: dict[float, tuple[np.ndarray, np.ndarray]] = {}  # interval() at a scalar level
        self._p = None  # p_value()

    @classmethod
    def of(cls, d, level_min: float, grid: Rounding = NO_ROUNDING) -> "Location":
        """The test the design chooses (`choose_test`), Student's t for the comparisons whose
        values tie."""
        d = np.asarray(d, dtype=float)
        return cls(d, choose_test(d.shape[-1], level_min), grid, grid.tied)

    def _with_t_where_tied(self, by_t, other):
        """`other`, replaced by `by_t()` (computed only when needed) for the comparisons by_t."""
        return np.where(self.by_t, by_t(), other) if self.by_t.any() else other

    @property
    def estimate(self) -> np.ndarray:
        if self.test == T_TEST:
            return self.mean
        return self._with_t_where_tied(lambda: self.mean, rank_estimate(self.w))

    def _below_floor(self, level) -> np.ndarray:
        return np.asarray(level, dtype=float) < self.floor * (1 - _TOLERANCE)

    def test_at(self, level) -> np.ndarray:
        """The test whose interval each comparison shows at `level` (T_TEST or SIGNED_RANK)."""
        shape = np.broadcast(self.by_t, np.asarray(level)).shape
        if self.test == RANK_THEN_T:
            test = np.where(self._below_floor(level), T_TEST, SIGNED_RANK)
        else:
            test = np.full(shape, self.test)
        return np.broadcast_to(np.where(self.by_t, T_TEST, test), shape).astype(object)

    def is_hull(self, level) -> np.ndarray:
        """Whether each comparison's interval at `level` is the hull of Student's t and the
        signed-rank interval at its floor (RANK_THEN_T below the floor, values not tied): an
        interval whose sides are set by the extreme pairs and the mean, not by the estimate."""
        below = self._below_floor(level) if self.test == RANK_THEN_T else np.zeros_like(np.asarray(level), dtype=bool)
        return np.broadcast_to(below, self.by_t.shape) & ~self.by_t

    def _t_p(self) -> np.ndarray:
        return t_p(self.mean, self.se, self.n, self.grid)

    def p_value(self) -> np.ndarray:
        """The two-sided p-value of a centre of 0 (computed once, handed out read-only)."""
        if self._p is None:
            self._p = _read_only(self._p_value())
        return self._p

    def _p_value(self) -> np.ndarray:
        if self.test == T_TEST:
            return self._t_p()
        rank = rank_p(self.w, self.n, self.grid)
        if self.test == RANK_THEN_T:
            t = self._t_p()
            rank = np.where(rank <= self.floor * (1 + _TOLERANCE), np.fmin(t, self.floor), rank)
            return np.where(self.by_t, t, rank)
        return self._with_t_where_tied(self._t_p, rank)

    def _rounding(self, level):
        return self.grid.half_width(level) if self.grid.any else 0.0

    def _rank_interval(self, level) -> tuple[np.ndarray, np.ndarray]:
        low, high = rank_interval(self.w, self.n, level)
        return low - self._rounding(level), high + self._rounding(level)

    def _t_interval(self, level) -> tuple[np.ndarray, np.ndarray]:
        half = t_half_width(self.se, self.n, level) + self._rounding(level)
        return self.mean - half, self.mean + half

    def interval(self, level) -> tuple[np.ndarray, np.ndarray]:
        """The 1 - level interval of the centre, in log units (widened by a grid's rounding bound
        at the same level).  RANK_THEN_T below the floor: the hull of the t interval and the
        signed-rank interval at the floor (NaN where t has no degrees of freedom).  At a scalar
        level it is computed once per level (a Location's values never change; the family's
        decisions ask for the same level again at every look), and handed out read-only."""
        if np.ndim(level) == 0:
            key = float(level)
            if key not in self._intervals:
                self._intervals[key] = tuple(_read_only(bound) for bound in self._interval(key))
            return self._intervals[key]
        return self._interval(level)

    def _interval(self, level) -> tuple[np.ndarray, np.ndarray]:
        if self.test == T_TEST:
            return self._t_interval(level)
        if self.test == SIGNED_RANK:
            low, high = self._rank_interval(level)
        else:
            below = self._below_floor(level)
            r_low, r_high = self._rank_interval(np.where(below, self.floor, level))
            t_low, t_high = self._t_interval(np.where(below, level, 0.5))
            low = np.where(below, np.minimum(t_low, r_low), r_low)
            high = np.where(below, np.maximum(t_high, r_high), r_high)
        if self.by_t.any():
            t_low, t_high = self._t_interval(level)
            low, high = np.where(self.by_t, t_low, low), np.where(self.by_t, t_high, high)
        return low, high

    def coverage(self, level: float) -> float:
        """Exact for the signed-rank test at the levels it reaches, nominal for the t test."""
        if self.test == T_TEST or (self.test == RANK_THEN_T and bool(self._below_floor(level))):
            return 1 - level
        return rank_coverage(self.n, level)
