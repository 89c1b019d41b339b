"""Checks on the measurements themselves: drift over the run, the number of samples needed, the A/A
check (the same binary as both arms), and a memory cell whose values are dispersed
(`dispersion_warning`, which every comparison row of that cell carries in its `warning`:
compare.CellValues.dispersed, read by the comparison, cores and hosts tables, and the reproduction
table's rows)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
from scipy import stats as sps

from . import rules
from .multiplicity import holm
from .rules import ALPHA
from .stats import CELL_KEYS


# Up to this many samples a cell's p-value is exact (every ordering of its values: 8! = 40,320);
# above, scipy's t approximation, which is close there but returns 0 for a perfect rank correlation
# of any size (6 steadily rising samples: exactly 2 / 6! = 0.0028, not 0)
EXACT_UP_TO = 8


def spearman_p(x, y) -> tuple[float, float]:
    """Spearman's rho of x and y and its two-sided p-value: exact by permutation for up to
    EXACT_UP_TO values, else scipy's t approximation."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    res = sps.spearmanr(x, y)
    rho = float(res.statistic)
    if len(x) > EXACT_UP_TO:
        return rho, float(res.pvalue)
    rx, ry = sps.rankdata(x), sps.rankdata(y)  # midranks where values tie
    every = ry[np.array(list(itertools.permutations(range(len(ry)))))]  # every pairing of y with x
    cx, cy = rx - rx.mean(), every - every.mean(axis=1, keepdims=True)
    rhos = (cy @ cx) / np.sqrt((cy ** 2).sum(axis=1) * (cx ** 2).sum())
    return rho, float(np.mean(np.abs(rhos) >= abs(rho) - 1e-12))


def smallest_p(n: int) -> float:
    """The smallest p-value `spearman_p` can give a cell of n samples: 2 / n! where it is exact (the
    two perfect orderings among n!; more where values tie), 0 where scipy's approximation is used."""
    return 2 / math.factorial(n) if 2 <= n <= EXACT_UP_TO else 0.0


def drift(df: pd.DataFrame, metric: str = "elapsed_s", alpha: float = ALPHA) -> pd.DataFrame:
    """Per cell: Spearman correlation of the metric with the run order (`seq`), its p-value exact
    for small cells (`spearman_p`).  A significant correlation after Holm correction over all cells
    flags a trend (thermal, caching, a neighbour).  `reachable`: whether the cell's smallest
    possible p-value reaches Holm's first threshold (alpha / the cells tested); one that does not
    (6 samples among more than 18 cells) is flagged by no ordering of its samples, unless most of
    the other cells are flagged first."""

    valid = df[df["valid"]] if "valid" in df else df
    rows = []
    for keys, g in valid.groupby(CELL_KEYS, dropna=False, sort=True):
        if len(g) < 4 or g[metric].nunique() < 2:
            rho, p = np.nan, np.nan
        else:
            rho, p = spearman_p(g["seq"], g[metric])
        rows.append({**dict(zip(CELL_KEYS, keys)), "metric": metric, "samples": len(g), "spearman_rho": rho,
                     "p_value": p})
    out = pd.DataFrame(rows, columns=[*CELL_KEYS, "metric", "samples", "spearman_rho", "p_value"])
    out["p_holm"] = holm(out["p_value"]) if not out.empty else []
    out["drift"] = out["p_holm"] < alpha
    tested = int(out["p_value"].notna().sum())
    out["reachable"] = [bool(pd.notna(p)) and smallest_p(int(n)) <= alpha / max(tested, 1)
                        for n, p in zip(out["samples"], out["p_value"])]
    return out


def dispersion(values) -> float:
    """The standard deviation of `values` (n - 1 in the denominator) over their mean; NaN for fewer
    than 2 values or a mean that is not positive."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 2 or not v.mean() > 0:
        return float("nan")
    return float(v.std(ddof=1) / v.mean())


def dispersion_warning(name: str, values, metric: str) -> str:
    """The warning a comparison row gives for one of its cells (`name`: 'Go readfile') whose values
    of a memory metric are dispersed: a standard deviation of at least rules.DISPERSED_CV of their
    mean (pyperf's rule for an unstable result), with their range, so that a reader sees two
    clusters where there are two; "" for any other cell or metric.

    The rule is a threshold on dispersion, not a test of bimodality: two clusters count once they
    lie far enough apart to make the cell's values vary by that much (equal clusters 2x apart: a
    standard deviation of 33% of the mean, flagged in 96.9% of cells of 6 samples and 99.8% or more
    from 10; 20% apart: 9.5%, flagged in 22% of cells of 6 samples and none of 20).  On unimodal
    memory noise it seldom fires (20,000 simulated cells per shape and size, 6 to 49 samples):
    never on lognormal noise of CV 1%, in 0.1% of cells of 6 samples at CV 5% (none from 10 on),
    and on heavy-tailed noise (Student's t of 3 degrees of freedom in logs) of sd 3% in 0.2-0.5%,
    of sd 5% in 1.2-2.7% (tests/test_compare.py).  Time metrics are left out: a workload's time
    may vary by far more than 10% between samples (a database's), and its intervals say so."""
    if metric not in rules.MEMORY_METRICS:
        return ""
    cv = dispersion(values)
    if not cv >= rules.DISPERSED_CV:
        return ""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    low, high = (f"{x:,.4g}" for x in (v.min(), v.max()))
    return (f"the {name} cell's values are dispersed: standard deviation {cv:.0%} of the mean ({low} to {high} "
            f"{_UNIT.get(metric, '')}); at {rules.DISPERSED_CV:.0%} or more (pyperf's rule) its median and any "
            "ratio of it stand for no one amount: two clusters, or samples that held different amounts")


_UNIT = {"peak_rss_mib": "MiB", "peak_rss_bytes": "B", "maxrss_kb": "KiB"}


def samples_needed(ratios: pd.DataFrame, target_half_width: float = rules.MARGIN) -> pd.DataFrame:
    """From a pilot's comparison table: the samples per cell for the ratio's CI half-width to reach
    the target (by default the equivalence margin, ±2%: the interval within [r / 1.02, r x 1.02];
    kept in `target_half_width`), assuming it shrinks as 1 / sqrt(n)
    (n: the pairs of a paired row, else the smaller side's samples).  The half-width is taken where
    the interval is built, on the log scale (half of log(high / low)), and given as the factor it
    stands for less 1 (`half_width`: 0.58 for [0.116, 0.277], ×/÷ 1.58; taken on the ratio itself,
    (high - low) / 2 / ratio read ±46% for that interval, which reaches 34% below and 58% above)."""
    out = ratios.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        log_half = np.log(out["ratio_ci_high"].astype(float) / out["ratio_ci_low"].astype(float)) / 2
    sizes = [c for c in out.columns if c.endswith("samples") and c != "samples_needed"]
    n = out[sizes].min(axis=1)
    if "pairs" in out and "pairing" in out:
        n = n.where(out["pairing"] != "paired", out["pairs"])
    out["half_width"] = np.expm1(log_half)
    out["target_half_width"] = float(target_half_width)
    target = math.log1p(target_half_width)
    out["samples_needed"] = [
        (max(int(k), math.ceil(round(k * (h / target) ** 2, 6))) if np.isfinite(h) else np.nan)
        for k, h in zip(n, log_half)
    ]
    return out


def aa_summary(table: pd.DataFrame, alpha: float = ALPHA) -> dict:
    """How many comparisons of an A/A run came out significant before correction and were called a difference
    by the table's rule (expected: none)."""
    sig = int(table["verdict_kind"].isin(["a", "b"]).sum())
    raw = int((table["p_value"] < alpha).sum())
    return {"comparisons": int(len(table)), "significant_raw": raw, "significant_after_correction": sig,
            "verdicts": table["verdict"].value_counts().to_dict(),
            "verdict_kinds": table["verdict_kind"].value_counts().to_dict() if "verdict_kind" in table else {},
            "text": (f"A/A check: {len(table)} comparisons of a binary with itself; {raw} significant at "
                     f"{alpha:g} before correction, {sig} called a difference by the table's rule (false discovery rate {alpha:g}; expected: none).")}
