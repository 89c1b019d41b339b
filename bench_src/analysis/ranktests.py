"""Exact rank statistics: the null distributions of the signed-rank and Mann-Whitney statistics,
their critical values, the exact signed-rank test conditional on ties, and Walsh averages.

`paired` and `unpaired` build the tests and intervals of a comparison on these; an exact test of
n pairs gives no two-sided p-value below 2 / 2^n (`min_p_paired`), which is why they use it only
where that reaches the level a family needs.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats as sps

EXACT_MAX = 400  # above this many pairs (or m * n for two samples) normal approximations are used


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


# --- paired: the signed-rank test and Walsh averages -----------------------------------------------
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


# --- unpaired: the Mann-Whitney statistic -------------------------------------------------------------
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
