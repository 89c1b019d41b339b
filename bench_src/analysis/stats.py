"""Per-cell statistics: descriptives and a distribution-free interval for the median; and a
descriptive ratio of two medians with a bootstrap interval (`ratio_ci`).

Only valid samples take part (measured, status ok, checksums in agreement): see
equivalence.mark_valid.  Comparisons with tests and verdicts are in `compare`: they use the
per-block pairs, not `ratio_ci`.
"""
from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats

from .families import param_columns, with_param_columns
from .rules import CONFIDENCE
from .validity import counted

MIN_SAMPLES = 5
N_RESAMPLES = 4000
# median_ci: how far from the nominal confidence the exact coverage of the chosen interval may be
TOLERANCE = 0.02
CELL_KEYS = ["workload", "lang", "variant", "n", "threads_requested", "params", "arm"]


def min_samples_for(confidence: float) -> int:
    """The fewest samples for which a distribution-free CI of the median at this confidence exists
    (the two extreme values must cover it: 1 - 2 / 2^n >= confidence)."""
    n = 1
    while 1 - 2 * 0.5 ** n < confidence:
        n += 1
    return n


@lru_cache(maxsize=None)
def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int, float] | None:
    """The order statistics (j, k), 1-based, of the distribution-free interval [x(j), x(k)] for the
    median of n values, and its exact coverage.

    For any continuous distribution, P(x(j) <= median <= x(k)) = P(j <= B <= k - 1) with
    B ~ Binomial(n, 1/2), whatever the shape.  The candidates are the symmetric intervals and the
    ones a single rank more generous on the upper side; the choice is the narrowest whose
    coverage is at least `confidence`, unless that coverage exceeds confidence + TOLERANCE and a
    candidate within TOLERANCE below `confidence` exists (then that one).  So the coverage is
    always known exactly (and reported), and never depends on interpolating between order
    statistics, which fails where the density at the median is low (bimodal data).  None when no
    candidate is within the tolerance below or at least at `confidence`.
    """
    if n < 1:
        return None
    cdf = stats.binom.cdf(np.arange(n + 1), n, 0.5)

    def coverage(j: int, k: int) -> float:  # P(j <= B <= k - 1)
        return float(cdf[k - 1] - cdf[j - 1])

    candidates = []
    for low in range(1, n // 2 + 1):
        for high in (n + 1 - low, n + 2 - low):  # symmetric, or one rank more on the upper side
            if low < high <= n:
                candidates.append((coverage(low, high), low, high))
    above = [c for c in candidates if c[0] >= confidence - 1e-12]
    below = [c for c in candidates if confidence - TOLERANCE <= c[0] < confidence - 1e-12]
    best_above = min(above) if above else None
    best_below = max(below) if below else None
    if best_above and (best_above[0] <= confidence + TOLERANCE or best_below is None):
        cov, low, high = best_above
    elif best_below:
        cov, low, high = best_below
    else:
        return None
    return (low, high, cov)


def median_ci(values, confidence: float = CONFIDENCE, **_ignored) -> tuple[float, float, float]:
    """Median and its distribution-free confidence interval: order statistics whose exact coverage
    (see median_ci_ranks) is closest to `confidence` within the tolerance.  NaN bounds when no
    such interval exists for this many values."""
    x = np.sort(np.asarray(values, dtype=float))
    x = x[~np.isnan(x)]
    n = x.size
    if n == 0:
        return (np.nan, np.nan, np.nan)
    med = float(np.median(x))
    ranks = median_ci_ranks(n, confidence)
    if ranks is None:
        return (med, np.nan, np.nan)
    low, high, _ = ranks
    return (med, float(x[low - 1]), float(x[high - 1]))


def median_ci_coverage(n: int, confidence: float = CONFIDENCE) -> float:
    """The exact coverage of median_ci for n values (NaN when it gives no interval)."""
    ranks = median_ci_ranks(n, confidence)
    return ranks[2] if ranks else np.nan


def ratio_ci(a, b, confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
             seed: int = 0) -> tuple[float, float, float]:
    """median(a) / median(b) and a percentile-bootstrap CI, resampling a and b independently: a
    description of two cells that were not measured in the same blocks.  The comparison tables do
    not use it (see compare)."""
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
    return f"only {n} sample{'' if n == 1 else 's'} (< {need}): the interval is missing or unreliable" if n < need else ""


def coverage_kind(values) -> str:
    """"exact" when no two values tie (the binomial coverage of median_ci is then exact for any
    continuous distribution), "at least" when some do: on a grid (a coarse clock, RSS in pages) the
    interval between two order statistics holds the median at least as often, and often far more
    (a sample that is all one value covers whenever the median is that value)."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    return "exact" if np.unique(x).size == x.size else "at least"


def threads_used(values) -> float:
    """The threads a cell's samples ran with, as the programs reported them (`threads`, which may
    differ from the `--threads` requested: Rust's single-threaded cpu_loops loops and its
    current-thread runtime run 1, its OS-thread variants one per task): the one value they all
    report; NaN where none reports one or they disagree (then no one number is true of the cell)."""
    v = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").dropna().unique()
    return float(v[0]) if len(v) == 1 else float("nan")


def describe(values, confidence: float = CONFIDENCE) -> dict:
    """n, median with its interval and the interval's coverage (exact, or a lower bound where values
    tie: `ci_coverage_kind`), mean, standard deviation, coefficient of variation, MAD, min, max."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    med, lo, hi = median_ci(x, confidence)
    n = int(x.size)
    mean = float(np.mean(x)) if n else np.nan
    sd = float(np.std(x, ddof=1)) if n > 1 else np.nan
    return {"samples": n, "median": med, "ci_low": lo, "ci_high": hi,
            "ci_coverage": median_ci_coverage(n, confidence) if n else np.nan,
            "ci_coverage_kind": coverage_kind(x) if n else "", "mean": mean, "sd": sd,
            "cv": sd / mean if n > 1 and mean else np.nan,
            "mad": float(stats.median_abs_deviation(x)) if n else np.nan,
            "min": float(np.min(x)) if n else np.nan, "max": float(np.max(x)) if n else np.nan,
            "warning": few_warning(n, confidence)}


def summarize(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """One row per cell (grouped on the structured columns, `p_<key>` for parameters): the
    descriptives of `metric` over its samples that count for it (validity.counted), and the
    threads those samples ran with (`threads_used`) beside the threads requested."""
    valid = with_param_columns(counted(df, metric))
    if "arm" not in valid.columns:
        valid = valid.assign(arm="")
    pcols = param_columns(valid)
    keys = [k for k in CELL_KEYS if k != "params"] + pcols
    cols = [*CELL_KEYS, *pcols, "threads", "metric", "samples", "median", "ci_low", "ci_high", "ci_coverage",
            "ci_coverage_kind", "mean", "sd", "cv", "mad", "min", "max", "warning"]
    rows = []
    if valid.empty:
        return pd.DataFrame(columns=cols)
    for key, g in valid.groupby(keys, dropna=False, sort=True):
        cell = dict(zip(keys, key))
        cell["params"] = ",".join(f"{c[2:]}={cell[c]}" for c in pcols if cell[c] is not None and not pd.isna(cell[c]))
        used = threads_used(g["threads"]) if "threads" in g else float("nan")  # what the samples ran with
        rows.append({**cell, "threads": used, "metric": metric, **describe(g[metric], confidence)})
    return pd.DataFrame(rows, columns=cols)
