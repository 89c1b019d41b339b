"""How cost grows with N: the marginal cost per task and the log-log exponent, from robust
Theil-Sen fits over every valid sample of a language/variant/parameter series."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from .stats import CONFIDENCE

SERIES = ["workload", "lang", "variant", "threads_requested", "params"]


def theil_sen(x, y, confidence: float = CONFIDENCE) -> tuple[float, float, float, float]:
    """Slope, its CI and the intercept of the Theil-Sen line through (x, y)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if np.unique(x).size < 2:
        return (np.nan, np.nan, np.nan, np.nan)
    res = sps.theilslopes(y, x, alpha=confidence)
    return (float(res.slope), float(res.low_slope), float(res.high_slope), float(res.intercept))


def per_task_cost(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Per series: the marginal cost of one more task (slope of metric vs N) with its CI, the fixed
    cost (intercept), and the exponent b of metric ~ N^b (slope on log-log axes) with its CI.
    A series needs at least two N values."""
    valid = df[df["valid"]] if "valid" in df else df
    rows = []
    for keys, g in valid.groupby(SERIES, dropna=False, sort=True):
        if g["n"].nunique() < 2:
            continue
        slope, lo, hi, icpt = theil_sen(g["n"], g[metric], confidence)
        pos = g[g[metric] > 0]
        b, blo, bhi, _ = theil_sen(np.log(pos["n"]), np.log(pos[metric]), confidence)
        rows.append({**dict(zip(SERIES, keys)), "metric": metric, "ns": ",".join(map(str, sorted(g["n"].unique()))),
                     "samples": len(g), "per_task": slope, "per_task_ci_low": lo, "per_task_ci_high": hi,
                     "fixed_cost": icpt, "exponent": b, "exponent_ci_low": blo, "exponent_ci_high": bhi})
    return pd.DataFrame(rows, columns=[*SERIES, "metric", "ns", "samples", "per_task", "per_task_ci_low",
                                       "per_task_ci_high", "fixed_cost", "exponent", "exponent_ci_low",
                                       "exponent_ci_high"])
