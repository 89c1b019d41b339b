"""Exact rank tests, their confidence intervals and their power.

Paired (the default for two cells measured in the same blocks): the per-block differences d of
log values are tested with the Wilcoxon signed-rank test, exact (the sign-flip distribution of
the rank scores, conditional on ties and zeros), and estimated by the Hodges-Lehmann estimator
(the median of the Walsh averages (d_i + d_j) / 2, i <= j) with the Tukey-Moses interval: the
Walsh averages at the ranks given by the exact null distribution.  Test, estimate and interval
are about one quantity, the centre of symmetry of d, and are dual: without ties the 1 - alpha
interval excludes 0 exactly when the two-sided p-value is at most alpha.

Unpaired (only where pairs are missing): the Mann-Whitney test and the two-sample
Hodges-Lehmann shift (median of all differences x_i - y_j) with its exact interval, about the
shift between the two distributions of log values.

Power: the smallest shift (in units of the standard deviation of d, or of the log values) that
the exact test at a given level detects with a given probability, by a seeded simulation of
normal data, so that it includes the discreteness of the exact test (at 10 pairs no two-sided
p-value is below 2 / 2^10).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats as sps

EXACT_MAX = 400  # above this many pairs (or m * n for two samples) normal approximations are used
POWER_REPLICATIONS = 2000


# --- exact null distributions -----------------------------------------------------------------
@lru_cache(maxsize=None)
def signed_rank_cdf(n: int) -> np.ndarray:
    """P(W <= w) for w = 0 .. n(n+1)/2, W the signed-rank statistic of n untied pairs."""
    dist = np.zeros(n * (n + 1) // 2 + 1)
    dist[0] = 1.0
    top = 0
    for i in range(1, n + 1):
        top += i
        dist[i:top + 1] = 0.5 * (dist[i:top + 1] + dist[:top + 1 - i])
        dist[:i] *= 0.5
    return np.cumsum(dist)


def _sign_flip_pmf(scores: np.ndarray) -> np.ndarray:
    """Distribution of sum(s_i * B_i), B_i fair coins, for non-negative integer scores."""
    dist = np.zeros(int(scores.sum()) + 1)
    dist[0] = 1.0
    top = 0
    for s in scores.astype(int):
        if s == 0:
            continue
        top += s
        shifted = np.zeros_like(dist)
        shifted[s:top + 1] = dist[:top + 1 - s]
        dist = 0.5 * (dist + shifted)
    return dist


def min_p_paired(n: int) -> float:
    """The smallest two-sided p-value an exact paired sign-flip test of n pairs can give."""
    return min(1.0, 2.0 * 0.5 ** n) if n > 0 else 1.0


def min_pairs_for(level: float) -> int:
    """The fewest pairs for which an exact paired two-sided test can reach p < level."""
    n = 1
    while min_p_paired(n) >= level:
        n += 1
    return n


def midranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of x, ties sharing their average rank (as scipy.stats.rankdata, without its
    per-call overhead, which matters in the simulations)."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    edges = np.flatnonzero(np.concatenate(([True], xs[1:] != xs[:-1], [True])))
    counts = np.diff(edges)
    ranks = np.empty(x.size)
    ranks[order] = np.repeat((edges[:-1] + edges[1:] + 1) / 2, counts)
    return ranks


# --- paired: signed-rank test, Hodges-Lehmann estimate and interval ----------------------------
def signed_rank_p(d) -> tuple[float, float]:
    """Two-sided exact p-value of the signed-rank test of d (conditional on ties; zeros take part
    in the ranking and count for neither sign, as Pratt proposed) and the matched-pairs
    rank-biserial correlation (T+ - T-) / (T+ + T-)."""
    d = np.asarray(d, dtype=float)
    d = d[~np.isnan(d)]
    if d.size == 0:
        return (np.nan, np.nan)
    ranks = midranks(np.abs(d))
    nonzero = d != 0
    if not nonzero.any():
        return (1.0, 0.0)
    scores = ranks[nonzero]
    positive = float(scores[d[nonzero] > 0].sum())
    total = float(scores.sum())
    effect = (2 * positive - total) / total
    if nonzero.sum() > EXACT_MAX:
        mean, var = total / 2, float((scores ** 2).sum()) / 4
        z = (abs(positive - mean) - 0.5) / math.sqrt(var)
        return (float(min(1.0, 2 * sps.norm.sf(max(z, 0.0)))), effect)
    doubled = np.rint(2 * scores).astype(int)
    if doubled.size == d.size and doubled.sum() == doubled.size * (doubled.size + 1) and np.all(doubled % 2 == 0) \
            and np.unique(doubled).size == doubled.size:
        cdf = signed_rank_cdf(int(doubled.size))
        w = int(round(positive))
        lower = cdf[w]
        upper = 1.0 - (cdf[w - 1] if w > 0 else 0.0)
    else:
        pmf = _sign_flip_pmf(doubled)
        w = int(round(2 * positive))
        lower = float(pmf[:w + 1].sum())
        upper = float(pmf[w:].sum())
    return (float(min(1.0, 2 * min(lower, upper))), effect)


def signed_rank_critical(n: int, level: float) -> int | None:
    """The largest c with P(W <= c) <= level / 2 for n untied pairs, or None when even the most
    extreme outcome is more likely than that (no test or interval at this level)."""
    if n < 1:
        return None
    cdf = signed_rank_cdf(n) if n <= EXACT_MAX else None
    if cdf is None:
        m = n * (n + 1) / 2
        sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        c = int(math.floor(m / 2 - sps.norm.ppf(1 - level / 2) * sd - 0.5))
        return c if c >= 0 else None
    ok = np.nonzero(cdf <= level / 2 + 1e-12)[0]
    return int(ok[-1]) if ok.size else None


@lru_cache(maxsize=512)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n)


def walsh_averages(d: np.ndarray) -> np.ndarray:
    """The sorted averages (d_i + d_j) / 2 over i <= j."""
    i, j = _pairs(d.size)
    return np.sort((d[i] + d[j]) / 2)


def hodges_lehmann_paired(d, confidence: float = 0.95) -> tuple[float, float, float, float]:
    """Hodges-Lehmann estimate of the centre of d, its exact interval and the interval's exact
    coverage (at least `confidence` for continuous data symmetric about its centre).  The bounds
    are NaN when too few pairs exist for that confidence."""
    d = np.asarray(d, dtype=float)
    d = d[~np.isnan(d)]
    n = d.size
    if n == 0:
        return (np.nan, np.nan, np.nan, np.nan)
    w = walsh_averages(d)
    est = float(np.median(w))
    c = signed_rank_critical(n, 1 - confidence)
    if c is None:
        return (est, np.nan, np.nan, np.nan)
    coverage = 1 - 2 * float(signed_rank_cdf(n)[c]) if n <= EXACT_MAX else confidence
    return (est, float(w[c]), float(w[w.size - 1 - c]), coverage)


# --- unpaired: Mann-Whitney, two-sample Hodges-Lehmann ------------------------------------------
@lru_cache(maxsize=None)
def _mann_whitney_counts(m: int, n: int) -> np.ndarray:
    """Number of orderings of m x's and n y's with U = u (pairs x > y), u = 0 .. m n: the largest
    value is either an x (beating all n y's) or a y."""
    if m == 0 or n == 0:
        return np.ones(1)
    out = np.zeros(m * n + 1)
    with_x = _mann_whitney_counts(m - 1, n)
    out[n:n + with_x.size] += with_x
    with_y = _mann_whitney_counts(m, n - 1)
    out[:with_y.size] += with_y
    return out


def mann_whitney_cdf(m: int, n: int) -> np.ndarray:
    """P(U <= u) for u = 0 .. m n, U the Mann-Whitney statistic of untied samples of m and n."""
    counts = _mann_whitney_counts(m, n)
    return np.cumsum(counts) / counts.sum()


def mann_whitney_critical(m: int, n: int, level: float) -> int | None:
    if m < 1 or n < 1:
        return None
    if m * n <= EXACT_MAX * 4:
        cdf = mann_whitney_cdf(m, n)
        ok = np.nonzero(cdf <= level / 2 + 1e-12)[0]
        return int(ok[-1]) if ok.size else None
    sd = math.sqrt(m * n * (m + n + 1) / 12)
    c = int(math.floor(m * n / 2 - sps.norm.ppf(1 - level / 2) * sd - 0.5))
    return c if c >= 0 else None


def mann_whitney_p(x, y) -> float:
    """Two-sided Mann-Whitney p-value (exact without ties for small samples, else the normal
    approximation with tie correction)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size < 1 or y.size < 1:
        return np.nan
    if np.all(x == x[0]) and np.all(y == y[0]) and x[0] == y[0]:
        return 1.0
    return float(sps.mannwhitneyu(x, y, alternative="two-sided").pvalue)


def hodges_lehmann_shift(x, y, confidence: float = 0.95) -> tuple[float, float, float, float]:
    """Two-sample Hodges-Lehmann shift of x over y, its exact interval and coverage."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    if x.size == 0 or y.size == 0:
        return (np.nan, np.nan, np.nan, np.nan)
    diffs = np.sort((x[:, None] - y[None, :]).ravel())
    est = float(np.median(diffs))
    c = mann_whitney_critical(x.size, y.size, 1 - confidence)
    if c is None:
        return (est, np.nan, np.nan, np.nan)
    if x.size * y.size <= EXACT_MAX * 4:
        coverage = 1 - 2 * float(mann_whitney_cdf(x.size, y.size)[c])
    else:
        coverage = confidence
    return (est, float(diffs[c]), float(diffs[diffs.size - 1 - c]), coverage)


# --- power and the minimum detectable effect ----------------------------------------------------
@lru_cache(maxsize=None)
def _normal_draws(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(20240611).standard_normal(shape)


def _solve(power_of, power: float) -> float:
    """The smallest theta with power_of(theta) >= power, to 0.1% (bisection)."""
    lo, hi = 0.0, 1.0
    while power_of(hi) < power:
        hi *= 2
        if hi > 1e3:
            return math.inf
    while hi - lo > 1e-3 * hi:
        mid = (lo + hi) / 2
        if power_of(mid) >= power:
            hi = mid
        else:
            lo = mid
    return hi


@lru_cache(maxsize=4096)
def detectable_shift_paired(n: int, level: float, power: float = 0.8) -> float:
    """The smallest shift theta (in standard deviations of d) for which the exact two-sided
    signed-rank test of n pairs at `level` rejects with probability `power` when d ~ N(theta, 1);
    inf when no outcome of n pairs is significant at that level."""
    c = signed_rank_critical(n, level)
    if c is None:
        return math.inf
    z = _normal_draws((POWER_REPLICATIONS, n))
    total = n * (n + 1) // 2
    ranks = np.arange(1, n + 1)

    def power_of(theta: float) -> float:
        d = z + theta
        order = np.argsort(np.abs(d), axis=1)
        w = ((np.take_along_axis(d, order, axis=1) > 0) * ranks).sum(axis=1)
        return float(np.mean((w <= c) | (w >= total - c)))

    return _solve(power_of, power)


@lru_cache(maxsize=4096)
def detectable_shift_unpaired(m: int, n: int, level: float, power: float = 0.8) -> float:
    """As detectable_shift_paired, for the Mann-Whitney test of m and n values with unit spread."""
    c = mann_whitney_critical(m, n, level)
    if c is None:
        return math.inf
    z = _normal_draws((POWER_REPLICATIONS, m + n))

    def power_of(theta: float) -> float:
        v = z.copy()
        v[:, :m] += theta
        r = np.argsort(np.argsort(v, axis=1), axis=1) + 1
        u = r[:, :m].sum(axis=1) - m * (m + 1) / 2
        return float(np.mean((u <= c) | (u >= m * n - c)))

    return _solve(power_of, power)
