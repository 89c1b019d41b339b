"""Can a plan reach a verdict?  Checked before anything is built or run.

The decision rule (`paired`, `multiplicity`) can call a difference from 2 pairs on (Student's t
has no floor), but its error rate was measured, on every shape of noise `simulate` covers, from
rules.MIN_PAIRS pairs per comparison on: fewer at the first look would leave verdicts whose error
rate nobody measured.  Such a plan is refused with the fix named (more samples, or `smoke=True`
for a run that is only meant to describe).

`plan_mde` gives, from a pilot or an earlier run's samples, the smallest difference each planned
comparison could detect.

Also the plan's fields of the stopping rule are validated here (`plan_fields`, the hook that
`make_plan` calls).  This module imports nothing from the plan, run or store layers.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from . import multiplicity, paired, rules
from .compare import CellValues, compare_pair
from .families import FAMILIES, comparisons, cell_of

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off", ""}


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(f"{name} must be true or false, got {value!r}")


def _int(name: str, value: Any, minimum: int, default: str = "") -> int:
    allowed = f"an integer >= {minimum}" + (f", or None for {default}" if default else "")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{name} must be {allowed}, got {value!r}") from None
    if number < minimum:
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return number


def plan_fields(plan, max_samples: Any = None, looks: Any = None, smoke: Any = False,
                adaptive_target: Any = None):
    """The plan with its stopping-rule fields validated, after checking that it can reach a
    verdict (unless smoke).  The hook of `make_plan`."""
    if adaptive_target not in (None, 0, 0.0, "", "0"):
        raise ValueError(f"adaptive_target ({adaptive_target!r}) was replaced by the sequential rule: give "
                         "max_samples (the sample budget per cell) and optionally looks")
    budget = 0 if max_samples in (None, 0, "", "0") else _int("max_samples", max_samples, 1)
    if budget and budget < plan.samples:
        raise ValueError(f"max_samples ({budget}) must be >= samples ({plan.samples})")
    if budget == plan.samples:
        budget = 0
    if looks in (0, "0"):  # no zero (as for threads and mem_limit_mb): refused, naming the default
        _int("looks", looks, 2, default=f"the default ({rules.DEFAULT_LOOKS})")
    if budget == 0:
        if looks not in (None, 1, "", "1"):
            raise ValueError(f"looks ({looks!r}) only applies to sequential sampling: set max_samples too")
        n_looks = 1
    else:
        n_looks = (rules.DEFAULT_LOOKS if looks in (None, "")
                   else _int("looks", looks, 2, default=f"the default ({rules.DEFAULT_LOOKS})"))
        n_looks = min(n_looks, budget - plan.samples + 1)
    plan = dataclasses.replace(plan, max_samples=budget, looks=n_looks, smoke=_bool("smoke", smoke))
    if not plan.smoke:
        check_verdicts(plan)
    return plan


def family_sizes(plan) -> dict[str, int]:
    refs = [cell_of(c) for c in plan.cells()]
    return {f: len(comparisons(refs, f)) for f in FAMILIES}


def check_verdicts(plan) -> dict[str, int]:
    """Per family of the plan, its number of comparisons; raises a ValueError naming the fix when
    the first look has fewer pairs than the rule was validated for."""
    looks = rules.look_counts(plan.samples, plan.max_samples, plan.looks)
    sizes = {f: m for f, m in family_sizes(plan).items() if m}
    if sizes and looks[0] < rules.MIN_PAIRS:
        what = "the pilot (samples)" if len(looks) > 1 else "samples"
        raise ValueError(
            f"this plan's comparisons would be decided from {looks[0]} pairs; the decision rule's error rate is "
            f"measured from {rules.MIN_PAIRS} pairs per comparison on (docs/statistics.md): set {what} >= "
            f"{rules.MIN_PAIRS}, or smoke=True for a run that only describes")
    return sizes


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
    planned samples and, under the sequential rule, with the budget."""
    cv = CellValues(df, metric) if df is not None and not df.empty else None
    looks = rules.look_counts(plan.samples, plan.max_samples, plan.looks)
    spending = rules.look_spending(len(looks))
    refs = [cell_of(c) for c in plan.cells()]
    rows = []
    for family in FAMILIES:
        pairs = comparisons(refs, family)
        m = len(pairs)
        for a, b in pairs:
            sd, have = np.nan, 0
            if cv is not None and a in cv.cells and b in cv.cells:
                s = compare_pair(*cv.cells[a], *cv.cells[b], paired_data=cv.paired_data)
                sd, have = s["sd_log"], s["pairs"]
            row = {"family": family, "workload": a.workload, "n": a.n, "a": f"{a.lang} {a.variant} {a.params_text}",
                   "b": f"{b.lang} {b.variant} {b.params_text}", "arm": a.arm, "metric": metric,
                   "stored_pairs": have, "sd_log": sd,
                   "mde_at_samples": _mde(sd, looks[0], alpha * spending[0] / m),
                   "mde_at_budget": _mde(sd, looks[-1], alpha * spending[-1] / m)}
            rows.append(row)
    return pd.DataFrame(rows, columns=["family", "workload", "n", "a", "b", "arm", "metric", "stored_pairs", "sd_log",
                                       "mde_at_samples", "mde_at_budget"])
