"""How cost grows with N: the marginal cost per task and the log-log exponent per series
(workload, language, variant, threads, arm and parameters other than N).

Both are fitted to the per-N medians, not to the samples: the samples at one N share whatever
that N does to the machine (caches, allocator, scheduler), so they are not independent evidence
about the slope, and a fit over them would give intervals far too narrow.  With the per-N medians
as the data points:
- per-task cost: weighted least squares of median ~ fixed + per_task * N with weights
  1 / fitted^2 (errors relative to the value, as timing and memory noise are), refitted once from
  the first fit's values;
- exponent: ordinary least squares of log(median) ~ log(N);
each with a t interval on (number of N values - 2) degrees of freedom.  Fewer than 3 values of N
leave no degree of freedom: the estimate through 2 points is given, without an interval, and a
warning says why.  A series with a single N has no slope and no row.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from .families import param_columns, with_param_columns
from .stats import CONFIDENCE

SERIES = ["workload", "lang", "variant", "threads_requested", "arm", "params"]
MIN_N_VALUES = 3


def _wls_line(x: np.ndarray, y: np.ndarray, w: np.ndarray, confidence: float) -> tuple[float, float, float, float]:
    """Intercept, slope and the slope's t interval of a weighted least-squares line."""
    sw = np.sqrt(w)
    design = np.column_stack([np.ones_like(x), x]) * sw[:, None]
    coef, *_ = np.linalg.lstsq(design, y * sw, rcond=None)
    dof = x.size - 2
    if dof < 1:
        return (float(coef[0]), float(coef[1]), np.nan, np.nan)
    resid = y * sw - design @ coef
    sigma2 = float(resid @ resid) / dof
    cov = sigma2 * np.linalg.inv(design.T @ design)
    half = sps.t.ppf(0.5 + confidence / 2, dof) * np.sqrt(cov[1, 1])
    return (float(coef[0]), float(coef[1]), float(coef[1] - half), float(coef[1] + half))


def per_task_fit(ns, medians, confidence: float = CONFIDENCE) -> dict:
    """The per-task cost and exponent with their intervals from per-N medians."""
    x = np.asarray(ns, dtype=float)
    y = np.asarray(medians, dtype=float)
    out = {"per_task": np.nan, "per_task_ci_low": np.nan, "per_task_ci_high": np.nan, "fixed_cost": np.nan,
           "exponent": np.nan, "exponent_ci_low": np.nan, "exponent_ci_high": np.nan, "warning": ""}
    if x.size < 2:
        out["warning"] = "a single value of N: no slope"
        return out
    if np.all(y > 0):
        w = 1 / y ** 2
        icpt, slope, _, _ = _wls_line(x, y, w, confidence)
        fitted = icpt + slope * x
        if np.all(fitted > 0):
            w = 1 / fitted ** 2
        icpt, slope, lo, hi = _wls_line(x, y, w, confidence)
        b_icpt, b, blo, bhi = _wls_line(np.log(x), np.log(y), np.ones_like(x), confidence)
        out.update(per_task=slope, per_task_ci_low=lo, per_task_ci_high=hi, fixed_cost=icpt,
                   exponent=b, exponent_ci_low=blo, exponent_ci_high=bhi)
    else:
        icpt, slope, lo, hi = _wls_line(x, y, np.ones_like(x), confidence)
        out.update(per_task=slope, per_task_ci_low=lo, per_task_ci_high=hi, fixed_cost=icpt)
        out["warning"] = "medians <= 0: unweighted fit and no exponent"
    if x.size < MIN_N_VALUES:
        note = (f"only {x.size} values of N: a line through {x.size} points leaves no degree of freedom "
                f"for an interval (needs >= {MIN_N_VALUES})")
        out["warning"] = "; ".join(filter(None, [out["warning"], note]))
        for k in ("per_task_ci_low", "per_task_ci_high", "exponent_ci_low", "exponent_ci_high"):
            out[k] = np.nan
    return out


def per_task_cost(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Per series: the marginal cost of one more task (slope of the metric's per-N medians vs N)
    with its interval, the fixed cost (intercept), and the exponent b of metric ~ N^b with its
    interval (see the module's docstring)."""
    valid = df[df["valid"].astype(bool)] if "valid" in df.columns else df
    valid = with_param_columns(valid)
    if "arm" not in valid.columns:
        valid = valid.assign(arm="")
    pcols = param_columns(valid)
    cols = [*SERIES, "metric", "ns", "n_values", "samples", "per_task", "per_task_ci_low", "per_task_ci_high",
            "fixed_cost", "exponent", "exponent_ci_low", "exponent_ci_high", "method", "warning"]
    rows = []
    keys = ["workload", "lang", "variant", "threads_requested", "arm", *pcols]
    if valid.empty:
        return pd.DataFrame(columns=cols)
    for key, g in valid.groupby(keys, dropna=False, sort=True):
        medians = g.groupby("n")[metric].median().sort_index()
        if medians.size < 2:
            continue
        key = dict(zip(keys, key))
        params = ",".join(f"{c[2:]}={v}" for c, v in ((c, key[c]) for c in pcols) if v is not None and not pd.isna(v))
        fit = per_task_fit(medians.index.to_numpy(), medians.to_numpy(), confidence)
        rows.append({**{k: key[k] for k in SERIES if k != "params"}, "params": params, "metric": metric,
                     "ns": ",".join(str(int(n)) for n in medians.index), "n_values": int(medians.size),
                     "samples": len(g), **fit,
                     "method": "WLS over per-N medians (relative errors), t interval on n_values - 2 df"})
    return pd.DataFrame(rows, columns=cols)
