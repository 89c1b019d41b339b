"""Per-cell medians with bootstrap confidence intervals, and Go/Rust ratios of medians.

Only valid samples take part (measured, status ok, checksums in agreement): see
equivalence.mark_valid.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
MIN_SAMPLES = 5
N_RESAMPLES = 4000
CELL_KEYS = ["workload", "lang", "variant", "n", "threads_requested", "params"]
PAIR_KEYS = ["workload", "n", "threads_requested", "shared_params"]


def _median(x, axis=-1):
    return np.median(x, axis=axis)


def median_ci(values, confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
              seed: int = 0) -> tuple[float, float, float]:
    """Median and a percentile-bootstrap confidence interval for it (NaN bounds below 2 values)."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return (np.nan, np.nan, np.nan)
    med = float(np.median(x))
    if x.size < 2:
        return (med, np.nan, np.nan)
    if np.all(x == x[0]):
        return (med, med, med)
    res = stats.bootstrap((x,), _median, confidence_level=confidence, n_resamples=n_resamples,
                          method="percentile", vectorized=True, random_state=np.random.default_rng(seed))
    return (med, float(res.confidence_interval.low), float(res.confidence_interval.high))


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


def _few(n: int) -> str:
    return f"only {n} samples (< {MIN_SAMPLES}): the interval is unreliable" if n < MIN_SAMPLES else ""


def summarize(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """One row per cell: sample count, median and its CI for `metric` over valid samples."""
    valid = df[df["valid"]] if "valid" in df else df
    rows = []
    for keys, g in valid.groupby(CELL_KEYS, dropna=False, sort=True):
        med, lo, hi = median_ci(g[metric].to_numpy(), confidence)
        rows.append({**dict(zip(CELL_KEYS, keys)), "metric": metric, "samples": len(g), "median": med,
                     "ci_low": lo, "ci_high": hi, "warning": _few(len(g))})
    return pd.DataFrame(rows, columns=[*CELL_KEYS, "metric", "samples", "median", "ci_low", "ci_high", "warning"])


def _shared_params(df: pd.DataFrame) -> pd.Series:
    """The parameters that both languages take (language-only knobs such as a driver are left out,
    they act like variants)."""
    from .catalogue import WORKLOADS

    def shared(row) -> str:
        w = WORKLOADS[row["workload"]]
        both = {p.name for p in w.params if set(p.langs) >= {"go", "rust"} and not p.choices_by_lang}
        pairs = [kv for kv in str(row["params"]).split(",") if kv and kv.split("=", 1)[0] in both]
        return ",".join(pairs)

    return df.apply(shared, axis=1) if not df.empty else pd.Series(dtype=str)


def compare_languages(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Go/Rust ratio of medians (with CI) for every Go cell and Rust cell that did the same work
    (same workload, N, threads and shared parameters), for every pair of variants."""
    valid = df[df["valid"]].copy() if "valid" in df else df.copy()
    cols = [*PAIR_KEYS, "go_variant", "rust_variant", "go_params", "rust_params", "metric", "go_samples",
            "rust_samples", "go_median", "rust_median", "ratio", "ratio_ci_low", "ratio_ci_high", "warning"]
    if valid.empty:
        return pd.DataFrame(columns=cols)
    valid["shared_params"] = _shared_params(valid)
    rows = []
    for keys, g in valid.groupby(PAIR_KEYS, dropna=False, sort=True):
        go, rust = g[g["lang"] == "go"], g[g["lang"] == "rust"]
        for (gv, gp), gg in go.groupby(["variant", "params"], sort=True):
            for (rv, rp), rr in rust.groupby(["variant", "params"], sort=True):
                ratio, lo, hi = ratio_ci(gg[metric], rr[metric], confidence)
                few = _few(min(len(gg), len(rr)))
                rows.append({**dict(zip(PAIR_KEYS, keys)), "go_variant": gv, "rust_variant": rv, "go_params": gp,
                             "rust_params": rp, "metric": metric, "go_samples": len(gg), "rust_samples": len(rr),
                             "go_median": float(np.median(gg[metric])), "rust_median": float(np.median(rr[metric])),
                             "ratio": ratio, "ratio_ci_low": lo, "ratio_ci_high": hi, "warning": few})
    return pd.DataFrame(rows, columns=cols)
