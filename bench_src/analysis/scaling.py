"""How cost grows with N: the marginal cost per task and the log-log exponent per series
(workload, language, variant, threads, arm and parameters other than N).

Both are fitted to one typical value per N, not to the samples: the samples at one N share
whatever that N does to the machine (caches, allocator, scheduler), so they are not independent
evidence about the slope, and a fit over them would give intervals far too narrow.  The typical
value is exp of the Hodges-Lehmann location of the log values (the median of their Walsh
averages): as robust as the median to a wild sample (breakdown 29%) but smoother, which keeps
the intervals' coverage nominal on bimodal samples too; for noise symmetric in logs it is the
median.  With these per-N values as the data points:
- per-task cost: weighted least squares of median ~ fixed + per_task * N with weights
  1 / fitted^(2 theta), refitted once from the first fit's values.  theta is read off the samples
  (variance_power: how their spread grows with the value over the values of N): 1 for errors
  relative to the value, as timing and memory noise usually are, 0 for additive noise.  The
  interval's width comes from the residuals either way, but weights that contradict the noise
  make it far too wide (relative weights under additive noise covered 99.2-99.98% instead of 95%);
  the table says which model each series was fitted with (`noise_power`);
- exponent: ordinary least squares of log(median) ~ log(N);
each with a t interval on (number of N values - 2) degrees of freedom.  Fewer than 3 values of N
leave no degree of freedom: the estimate through 2 points is given, without an interval, and a
warning says why.  A series with a single N has no slope and no row.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats as sps

from .families import param_columns, with_param_columns
from .ranktests import walsh_averages
from .rules import CONFIDENCE
from .validity import counted

SERIES = ["workload", "lang", "variant", "threads_requested", "arm", "params"]
MIN_N_VALUES = 3


@lru_cache(maxsize=256)
def _t_quantile(q: float, dof: int) -> float:
    return float(sps.t.ppf(q, dof))


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
    half = _t_quantile(0.5 + confidence / 2, dof) * np.sqrt(cov[1, 1])
    return (float(coef[0]), float(coef[1]), float(coef[1] - half), float(coef[1] + half))


def typical(values) -> float:
    """exp of the Hodges-Lehmann location of the log values (the median when a value is <= 0)."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return np.nan
    if np.any(v <= 0):
        return float(np.median(v))
    return float(np.exp(np.median(walsh_averages(np.log(v)))))


def variance_power(ns, spreads, typicals) -> float:
    """How the samples' spread grows with the value, from the samples themselves: theta in
    spread ~ value^theta, the slope of log(spread) on log(typical value) over the values of N,
    clipped to [0, 1]: 0 for additive noise (the same absolute spread at every N), 1 for
    multiplicative noise (the same relative spread, as timing and memory noise usually are).
    1 when the data cannot tell (fewer than 2 values of N with a spread)."""
    sp, ty = np.asarray(spreads, dtype=float), np.asarray(typicals, dtype=float)
    ok = (sp > 0) & (ty > 0) & np.isfinite(sp) & np.isfinite(ty)
    if ok.sum() < 2 or np.ptp(np.log(ty[ok])) == 0:
        return 1.0
    slope = np.polyfit(np.log(ty[ok]), np.log(sp[ok]), 1)[0]
    return float(np.clip(slope, 0.0, 1.0))


def per_task_fit(ns, medians, confidence: float = CONFIDENCE, theta: float = 1.0) -> dict:
    """The per-task cost and exponent with their intervals from one typical value per N; the line's
    weights are 1 / fitted^(2 theta) (theta: variance_power, 1 = relative errors)."""
    x = np.asarray(ns, dtype=float)
    y = np.asarray(medians, dtype=float)
    out = {"per_task": np.nan, "per_task_ci_low": np.nan, "per_task_ci_high": np.nan, "fixed_cost": np.nan,
           "exponent": np.nan, "exponent_ci_low": np.nan, "exponent_ci_high": np.nan, "noise_power": theta,
           "warning": ""}
    if x.size < 2:
        out["warning"] = "a single value of N: no slope"
        return out
    if np.all(y > 0):
        w = 1 / y ** (2 * theta)
        icpt, slope, _, _ = _wls_line(x, y, w, confidence)
        fitted = icpt + slope * x
        if np.all(fitted > 0):
            w = 1 / fitted ** (2 * theta)
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


def _series_key(key) -> tuple:
    """A series' group key with its missing values as None (NaN != NaN would lose the match)."""
    return tuple(None if pd.isna(v) else v for v in (key if isinstance(key, tuple) else (key,)))


def _spread(values: np.ndarray) -> float:
    """A robust spread of one N's samples (the normal-consistent MAD)."""
    v = values[~np.isnan(values)]
    return float(1.4826 * np.median(np.abs(v - np.median(v)))) if v.size > 2 else np.nan


def _lost_note(lost, valid) -> str:
    """Why the fit goes without some N the run took: no valid sample there, or (memory of idle
    tasks) valid samples of which none had every task alive at once."""
    def ns(group):
        return ", ".join(f"{int(n):,}" for n in group)

    none = [n for n in lost if n not in valid]
    short = [n for n in lost if n in valid]
    parts = ([f"no valid sample at N = {ns(none)}"] if none else []) + (
        [f"no sample with every task alive at N = {ns(short)}"] if short else [])
    return f"{'; '.join(parts)}: fitted without {'it' if len(lost) == 1 else 'them'}"


def per_task_cost(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Per series: the marginal cost of one more task (slope of the metric's typical value per N
    vs N) with its interval, the fixed cost (intercept), and the exponent b of metric ~ N^b with its
    interval (see the module's docstring), from the samples that count for the metric
    (validity.counted: for memory, idle tasks only where every task was alive at once).  An N the
    run took without a sample that counts is left out, and the row says so."""
    taken = with_param_columns(df)
    if "arm" not in taken.columns:
        taken = taken.assign(arm="")
    valid = counted(taken, metric)
    pcols = param_columns(taken)
    cols = [*SERIES, "metric", "ns", "n_values", "samples", "per_task", "per_task_ci_low", "per_task_ci_high",
            "fixed_cost", "exponent", "exponent_ci_low", "exponent_ci_high", "noise_power", "method", "warning"]
    rows = []
    keys = ["workload", "lang", "variant", "threads_requested", "arm", *pcols]
    if valid.empty:
        return pd.DataFrame(columns=cols)
    values = pd.to_numeric(valid[metric], errors="coerce").to_numpy(dtype=float)
    ns = pd.to_numeric(valid["n"]).to_numpy()
    # the N of each series that the run took but where no sample is valid: left out of the fit,
    # and the row says so (a line through the others is not the series the plan asked for)
    taken_ns = {_series_key(k): set(pd.to_numeric(g["n"]).tolist())
                for k, g in taken.groupby(keys, dropna=False, sort=False)}
    ok = taken[taken["valid"].astype(bool)] if "valid" in taken.columns else taken
    valid_ns = {_series_key(k): set(pd.to_numeric(g["n"]).tolist())
                for k, g in ok.groupby(keys, dropna=False, sort=False)}
    for key, idx in valid.groupby(keys, dropna=False, sort=True).indices.items():
        n_here = ns[idx]
        points = sorted(set(n_here.tolist()))
        if len(points) < 2:
            continue
        typ = np.array([typical(values[idx][n_here == n]) for n in points])
        theta = variance_power(points, [_spread(values[idx][n_here == n]) for n in points], typ)
        key = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        params = ",".join(f"{c[2:]}={v}" for c, v in ((c, key[c]) for c in pcols) if v is not None and not pd.isna(v))
        fit = per_task_fit(np.array(points, dtype=float), typ, confidence, theta)
        here = _series_key(tuple(key[k] for k in keys))
        lost = sorted(taken_ns.get(here, set()) - set(points))
        if lost:
            fit["warning"] = "; ".join(filter(None, [fit["warning"], _lost_note(lost, valid_ns.get(here, set()))]))
        rows.append({**{k: key[k] for k in SERIES if k != "params"}, "params": params, "metric": metric,
                     "ns": ",".join(str(int(n)) for n in points), "n_values": len(points),
                     "samples": len(idx), **fit,
                     "method": (f"WLS over per-N Hodges-Lehmann values, weights 1 / fitted^{2 * theta:.2g} "
                                f"(the samples' spread grows as value^{theta:.2g}), t interval on n_values - 2 df")})
    return pd.DataFrame(rows, columns=cols)
