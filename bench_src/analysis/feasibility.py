"""What a plan could detect: `plan_mde` gives, from a pilot or an earlier run's samples, the
smallest difference each planned comparison could detect.  (Whether a plan can reach a verdict at
all is checked by the plan itself before anything is built: bench_src/plan/feasibility.py.)
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import multiplicity, paired, rules
from .compare import CellValues, Design, compare_pair
from ..plan.comparisons import plan_comparisons


def _mde(sd: float, pairs: int, level: float) -> float:
    """The smallest relative difference a comparison with this spread of its per-block log ratios
    calls with rules.POWER power at `level` from `pairs` pairs (Student's t)."""
    if not np.isfinite(sd) or paired.t_dof(pairs) < 1:
        return np.nan
    half = float(paired.t_half_width(sd / math.sqrt(pairs), pairs, level))
    return float(np.expm1(multiplicity.detectable(half, level, paired.T_TEST, paired.t_dof(pairs), rules.POWER)))


def plan_mde(plan, df: pd.DataFrame, metric: str = rules.SEQUENTIAL_METRICS[0],
             alpha: float = rules.ALPHA) -> pd.DataFrame:
    """Per planned comparison: the spread of its per-block log ratio in stored samples (a pilot,
    or an earlier run of the same cells), and the minimum detectable relative difference
    (rules.POWER power, at the family's smallest level alpha / m times the look's share) with the
    planned samples and, under the sequential rule, with the budget (every cell's; the late looks
    past it are for cheap cells only)."""
    cv = CellValues(df, metric) if df is not None and not df.empty else None
    design = Design.from_plan(plan)
    at_budget = design.looks.index(design.budget)
    rows = []
    for family, pairs in plan_comparisons(plan).items():
        m = len(pairs)
        for a, b in pairs:
            sd, have = np.nan, 0
            if cv is not None and a in cv.cells and b in cv.cells:
                s = compare_pair(*cv.cells[a], *cv.cells[b], paired_data=cv.paired_by_design(a, b))
                sd, have = s["sd_log"], s["pairs"]
            row = {"family": family, "workload": a.workload, "n": a.n, "a": f"{a.lang} {a.variant} {a.params_text}",
                   "b": f"{b.lang} {b.variant} {b.params_text}", "arm": a.arm, "metric": metric,
                   "stored_pairs": have, "sd_log": sd,
                   "mde_at_samples": _mde(sd, design.looks[0], alpha * design.spending[0] / m),
                   "mde_at_budget": _mde(sd, design.budget, alpha * design.spending[at_budget] / m)}
            rows.append(row)
    return pd.DataFrame(rows, columns=["family", "workload", "n", "a", "b", "arm", "metric", "stored_pairs", "sd_log",
                                       "mde_at_samples", "mde_at_budget"])
