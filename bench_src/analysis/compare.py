"""Comparisons: Go vs Rust for the same work, or two variants of one language.

For each comparison: the ratio of medians with a 95% bootstrap CI, the Mann-Whitney U p-value,
Holm-corrected p-values across the whole family of comparisons in the table, Cliff's delta, and a
verdict:
- "equivalent within ±m%": the ratio's CI lies inside [1 - m, 1 + m] (m = margin, default 2%);
- "<A> faster" / "<B> faster" (or "smaller" for memory): the Holm-corrected p-value is below alpha
  and the CI excludes 1;
- "inconclusive": anything else (including too few samples).
The ratio is always A / B: Go / Rust, or variant / baseline.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from ..catalogue import WORKLOADS
from . import stats

MARGIN = 0.02
ALPHA = 0.05
TIME_METRICS = {"elapsed_s", "wall_s", "cpu_s", "user_s", "sys_s", "setup_s"}
PAIR_KEYS = ["workload", "n", "threads_requested", "shared_params"]


def shared_params(df: pd.DataFrame) -> pd.Series:
    """Per row, `k=v,...` of the parameters both languages take (see Workload.shared_params)."""
    def shared(row) -> str:
        names = WORKLOADS[row["workload"]].shared_params
        return ",".join(kv for kv in str(row["params"]).split(",") if kv and kv.split("=", 1)[0] in names)

    return df.apply(shared, axis=1) if not df.empty else pd.Series(dtype=str)


def cliffs_delta(a, b) -> float:
    """P(a > b) - P(a < b) over all pairs, from the Mann-Whitney U statistic."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    if x.size == 0 or y.size == 0:
        return np.nan
    u = sps.mannwhitneyu(x, y, alternative="two-sided").statistic
    return float(2 * u / (x.size * y.size) - 1)


def mann_whitney_p(a, b) -> float:
    x, y = np.asarray(a, float), np.asarray(b, float)
    if x.size < 2 or y.size < 2:
        return np.nan
    if np.all(x == x[0]) and np.all(y == y[0]) and x[0] == y[0]:
        return 1.0
    return float(sps.mannwhitneyu(x, y, alternative="two-sided").pvalue)


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values; NaN stays NaN and is not counted in the family."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out


def verdict(ratio: float, low: float, high: float, p_adjusted: float, a: str, b: str, metric: str,
            margin: float = MARGIN, alpha: float = ALPHA) -> str:
    word = "faster" if metric in TIME_METRICS else "smaller"
    if any(np.isnan(v) for v in (ratio, low, high)):
        return "inconclusive"
    if 1 - margin <= low and high <= 1 + margin:
        return f"equivalent within ±{margin * 100:g}%"
    if not np.isnan(p_adjusted) and p_adjusted < alpha:
        if high < 1:
            return f"{a} {word}"
        if low > 1:
            return f"{b} {word}"
    return "inconclusive"


def _arm_stats(a, b, confidence: float) -> dict:
    ratio, lo, hi = stats.ratio_ci(a, b, confidence)
    return {"ratio": ratio, "ratio_ci_low": lo, "ratio_ci_high": hi, "p_value": mann_whitney_p(a, b),
            "cliffs_delta": cliffs_delta(a, b)}


def _finish(rows: list[dict], cols: list[str], a_name, b_name, metric: str, margin: float, alpha: float,
            tests: bool) -> pd.DataFrame:
    out = pd.DataFrame(rows, columns=cols)
    if out.empty or not tests:
        return out.drop(columns=[c for c in ("p_value", "p_holm", "cliffs_delta", "verdict") if c in out and not tests])
    out["p_holm"] = holm(out["p_value"])
    out["verdict"] = [
        verdict(r.ratio, r.ratio_ci_low, r.ratio_ci_high, r.p_holm, a_name(r), b_name(r), metric, margin, alpha)
        for r in out.itertuples()
    ]
    return out


def compare(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = stats.CONFIDENCE,
            margin: float = MARGIN, alpha: float = ALPHA, tests: bool = True) -> pd.DataFrame:
    """Go vs Rust: every Go cell against every Rust cell that did the same work (same workload,
    N, threads and shared parameters), whatever their variants.  Ratio = Go / Rust."""
    valid = df[df["valid"]].copy() if "valid" in df else df.copy()
    cols = [*PAIR_KEYS, "go_variant", "rust_variant", "go_params", "rust_params", "metric", "go_samples",
            "rust_samples", "go_median", "rust_median", "ratio", "ratio_ci_low", "ratio_ci_high", "p_value",
            "p_holm", "cliffs_delta", "verdict", "warning"]
    rows = []
    if not valid.empty:
        valid["shared_params"] = shared_params(valid)
        for keys, g in valid.groupby(PAIR_KEYS, dropna=False, sort=True):
            go, rust = g[g["lang"] == "go"], g[g["lang"] == "rust"]
            for (gv, gp), gg in go.groupby(["variant", "params"], sort=True):
                for (rv, rp), rr in rust.groupby(["variant", "params"], sort=True):
                    rows.append({**dict(zip(PAIR_KEYS, keys)), "go_variant": gv, "rust_variant": rv,
                                 "go_params": gp, "rust_params": rp, "metric": metric, "go_samples": len(gg),
                                 "rust_samples": len(rr), "go_median": float(np.median(gg[metric])),
                                 "rust_median": float(np.median(rr[metric])),
                                 **_arm_stats(gg[metric], rr[metric], confidence),
                                 "warning": stats.few_warning(min(len(gg), len(rr)), confidence)})
    return _finish(rows, cols, lambda r: "Go", lambda r: "Rust", metric, margin, alpha, tests)


def compare_variants(df: pd.DataFrame, metric: str = "elapsed_s", baseline: str | None = None,
                     confidence: float = stats.CONFIDENCE, margin: float = MARGIN,
                     alpha: float = ALPHA) -> pd.DataFrame:
    """Within one language: every variant (or parameter set) against the baseline cell of the same
    workload, N and threads.  The baseline is the language's default variant unless given.
    Ratio = variant / baseline."""
    valid = df[df["valid"]] if "valid" in df else df
    cols = ["workload", "lang", "n", "threads_requested", "variant", "params", "baseline_variant",
            "baseline_params", "metric", "samples", "baseline_samples", "median", "baseline_median", "ratio",
            "ratio_ci_low", "ratio_ci_high", "p_value", "p_holm", "cliffs_delta", "verdict", "warning"]
    rows = []
    for (w, lang, n, t), g in valid.groupby(["workload", "lang", "n", "threads_requested"], dropna=False, sort=True):
        base_variant = baseline or WORKLOADS[w].default_variant(lang)
        defaults = ",".join(f"{k}={v}" for k, v in sorted(WORKLOADS[w].default_params(lang).items()))
        base = g[(g["variant"] == base_variant)]
        if base.empty:
            continue
        base_params = defaults if defaults in set(base["params"]) else sorted(base["params"])[0]
        base = base[base["params"] == base_params]
        for (v, p), gg in g.groupby(["variant", "params"], sort=True):
            if v == base_variant and p == base_params:
                continue
            rows.append({"workload": w, "lang": lang, "n": n, "threads_requested": t, "variant": v, "params": p,
                         "baseline_variant": base_variant, "baseline_params": base_params, "metric": metric,
                         "samples": len(gg), "baseline_samples": len(base), "median": float(np.median(gg[metric])),
                         "baseline_median": float(np.median(base[metric])),
                         **_arm_stats(gg[metric], base[metric], confidence),
                         "warning": stats.few_warning(min(len(gg), len(base)), confidence)})
    return _finish(rows, cols, lambda r: f"{r.variant} [{r.params}]", lambda r: f"{r.baseline_variant} [{r.baseline_params}]",
                   metric, margin, alpha, True)


def compare_arms(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = stats.CONFIDENCE,
                 margin: float = MARGIN, alpha: float = ALPHA) -> pd.DataFrame:
    """An A/A run: arm A against arm B of every cell (the same program and arguments).  Ratio = A / B."""
    valid = df[df["valid"]] if "valid" in df else df
    keys = [k for k in stats.CELL_KEYS if k != "arm"]
    cols = [*keys, "metric", "a_samples", "b_samples", "a_median", "b_median", "ratio", "ratio_ci_low",
            "ratio_ci_high", "p_value", "p_holm", "cliffs_delta", "verdict", "warning"]
    rows = []
    for k, g in valid.groupby(keys, dropna=False, sort=True):
        a, b = g[g["arm"] == "A"][metric], g[g["arm"] == "B"][metric]
        if a.empty or b.empty:
            continue
        rows.append({**dict(zip(keys, k)), "metric": metric, "a_samples": len(a), "b_samples": len(b),
                     "a_median": float(np.median(a)), "b_median": float(np.median(b)),
                     **_arm_stats(a, b, confidence), "warning": stats.few_warning(min(len(a), len(b)), confidence)})
    return _finish(rows, cols, lambda r: "A", lambda r: "B", metric, margin, alpha, True)
