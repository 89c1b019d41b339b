"""Per-cell statistics: descriptives, a confidence interval for the median, and the Go/Rust
ratio of medians with a bootstrap CI.

Only valid samples take part (measured, status ok, checksums in agreement): see
equivalence.mark_valid.  Comparisons with tests and verdicts are in `compare`.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
MIN_SAMPLES = 5
N_RESAMPLES = 4000
CELL_KEYS = ["workload", "lang", "variant", "n", "threads_requested", "params", "arm"]


def min_samples_for(confidence: float) -> int:
    """The fewest samples for which a distribution-free CI of the median at this confidence exists
    (the two extreme values must cover it: 1 - 2 / 2^n >= confidence)."""
    n = 1
    while 1 - 2 * 0.5 ** n < confidence:
        n += 1
    return n


def median_ci(values, confidence: float = CONFIDENCE, **_ignored) -> tuple[float, float, float]:
    """Median and its distribution-free confidence interval (Hettmansperger & Sheather, 1986:
    order statistics chosen from the binomial distribution and interpolated between the two
    neighbouring pairs, which keeps the coverage close to the nominal level even for small n).
    Returns NaN bounds when there are too few values for the confidence asked."""
    x = np.sort(np.asarray(values, dtype=float))
    x = x[~np.isnan(x)]
    n = x.size
    if n == 0:
        return (np.nan, np.nan, np.nan)
    med = float(np.median(x))
    if n < min_samples_for(confidence):
        return (med, np.nan, np.nan)
    alpha = 1 - confidence
    cdf = lambda k: stats.binom.cdf(k, n, 0.5)  # noqa: E731
    # k (1-based): the largest rank with P(B <= k - 1) <= alpha / 2, B ~ Binomial(n, 1/2)
    k = 1
    while cdf(k) <= alpha / 2:
        k += 1
    g_k = 1 - 2 * cdf(k - 1)  # coverage of [x(k), x(n-k+1)]
    g_k1 = 1 - 2 * cdf(k)  # coverage of [x(k+1), x(n-k)]
    if k >= n - k or g_k1 >= confidence:
        return (med, float(x[k - 1]), float(x[n - k]))
    i = (g_k - confidence) / (g_k - g_k1)
    lam = (n - k) * i / (k + (n - 2 * k) * i)
    low = lam * x[k] + (1 - lam) * x[k - 1]
    high = lam * x[n - k - 1] + (1 - lam) * x[n - k]
    return (med, float(low), float(high))


def ratio_ci(a, b, confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
             seed: int = 0) -> tuple[float, float, float]:
    """median(a) / median(b) and a percentile-bootstrap CI, resampling a and b independently."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    if x.size == 0 or y.size == 0 or np.median(y) == 0:
        return (np.nan, np.nan, np.nan)
    ratio = float(np.median(x) / np.median(y))
    if x.size < 2 or y.size < 2:
        return (ratio, np.nan, np.nan)

    def stat(u, v, axis=-1):
        return np.median(u, axis=axis) / np.median(v, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # degenerate resamples of constant data
        res = stats.bootstrap((x, y), stat, confidence_level=confidence, n_resamples=n_resamples,
                              method="percentile", vectorized=True, paired=False,
                              random_state=np.random.default_rng(seed))
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if np.isnan(low):  # both samples constant
        low = high = ratio
    return (ratio, low, high)


def few_warning(n: int, confidence: float = CONFIDENCE) -> str:
    need = max(MIN_SAMPLES, min_samples_for(confidence))
    return f"only {n} samples (< {need}): the interval is missing or unreliable" if n < need else ""


def describe(values, confidence: float = CONFIDENCE) -> dict:
    """n, median with CI, mean, standard deviation, coefficient of variation, MAD, min, max."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    med, lo, hi = median_ci(x, confidence)
    n = int(x.size)
    mean = float(np.mean(x)) if n else np.nan
    sd = float(np.std(x, ddof=1)) if n > 1 else np.nan
    return {"samples": n, "median": med, "ci_low": lo, "ci_high": hi, "mean": mean, "sd": sd,
            "cv": sd / mean if n > 1 and mean else np.nan,
            "mad": float(stats.median_abs_deviation(x)) if n else np.nan,
            "min": float(np.min(x)) if n else np.nan, "max": float(np.max(x)) if n else np.nan,
            "warning": few_warning(n, confidence)}


def summarize(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """One row per cell: the descriptives of `metric` over its valid samples."""
    valid = df[df["valid"]] if "valid" in df else df
    cols = [*CELL_KEYS, "metric", "samples", "median", "ci_low", "ci_high", "mean", "sd", "cv", "mad", "min", "max",
            "warning"]
    rows = []
    for keys, g in valid.groupby(CELL_KEYS, dropna=False, sort=True):
        rows.append({**dict(zip(CELL_KEYS, keys)), "metric": metric, **describe(g[metric], confidence)})
    return pd.DataFrame(rows, columns=cols)
