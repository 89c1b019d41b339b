"""Can a plan reach a verdict?  Checked before anything is built or run.

The comparisons use exact paired tests: with n pairs the smallest two-sided p-value is
2 / 2^n, whatever the data.  Holm's correction multiplies the smallest p-value of a family of m
comparisons by m, and under the sequential rule a look may spend only its family's share of
alpha (rules.family_spending: nothing at a look that could not use it).  So
a plan whose every family has m * 2 / 2^n / share >= alpha at every look can never call a
difference, however large: it is refused with the fix named (more samples, fewer comparisons per
family, or `smoke=True` for a run that is only meant to describe).

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

from . import ranktests, rules
from .compare import CellValues, compare_pair
from .families import FAMILIES, FAMILY_TITLES, comparisons, cell_of

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


def smallest_corrected_p(m: int, looks: tuple[int, ...], spending: tuple[float, ...]) -> float:
    """The smallest Holm-corrected p-value any comparison of a family of m can reach."""
    return min((m * ranktests.min_p_paired(n) / share for n, share in zip(looks, spending) if share > 0),
               default=math.inf)


def samples_needed(m: int, alpha: float = rules.ALPHA, share: float = 1.0) -> int:
    """The fewest pairs with which a family of m comparisons can call a difference at a look
    spending `share` of alpha."""
    return ranktests.min_pairs_for(alpha * share / m)


def check_verdicts(plan, alpha: float = rules.ALPHA) -> dict[str, float]:
    """Per family of the plan, the smallest corrected p-value its sample count allows; raises a
    ValueError naming the fix when a family can never call a difference."""
    looks = rules.look_counts(plan.samples, plan.max_samples, plan.looks)
    out, problems = {}, []
    for family, m in family_sizes(plan).items():
        if m == 0:
            continue
        spending = rules.family_spending(m, looks, alpha)
        best = smallest_corrected_p(m, looks, spending)
        out[family] = best
        if best < alpha:
            continue
        n = looks[-1]
        need = samples_needed(m, alpha, spending[-1])
        per_family = max(0, math.ceil(alpha * spending[-1] / ranktests.min_p_paired(n)) - 1)
        what = "max_samples" if len(looks) > 1 else "samples"
        fixes = [f"{what} >= {need}"]
        if per_family >= 1:
            fixes.append(f"at most {per_family} comparison{'s' if per_family > 1 else ''} per family at {n} "
                         f"samples (fewer N values, variants or parameter values)")
        problems.append(
            f"the family '{FAMILY_TITLES[family]}' has {m} comparison{'s' if m > 1 else ''}; with {n} samples per "
            f"cell the smallest p-value an exact paired test can give is {ranktests.min_p_paired(n):.3g}, "
            f"{best:.3g} after Holm's correction over {m}"
            + (" and the look's share of alpha" if len(looks) > 1 else "")
            + f" (alpha {alpha:g}): set {' or '.join(fixes)}")
    if problems:
        raise ValueError("this plan can never call a difference: " + "; ".join(problems)
                         + "; or smoke=True for a run that only describes")
    return out


def plan_mde(plan, df: pd.DataFrame, metric: str = rules.SEQUENTIAL_METRIC,
             alpha: float = rules.ALPHA) -> pd.DataFrame:
    """Per planned comparison: the spread of its per-block log ratio in stored samples (a pilot,
    or an earlier run of the same cells), and the minimum detectable relative difference
    (rules.POWER power, at the family's Bonferroni level alpha / m, the level of Holm's first
    step) with the planned samples and, under the sequential rule, with the budget."""
    cv = CellValues(df, metric) if df is not None and not df.empty else None
    looks = rules.look_counts(plan.samples, plan.max_samples, plan.looks)
    refs = [cell_of(c) for c in plan.cells()]
    rows = []
    for family in FAMILIES:
        pairs = comparisons(refs, family)
        m = len(pairs)
        spending = rules.family_spending(m, looks, alpha)
        for a, b in pairs:
            sd, have = np.nan, 0
            if cv is not None and a in cv.cells and b in cv.cells:
                s = compare_pair(*cv.cells[a], *cv.cells[b], paired_data=cv.paired_data)
                sd, have = s["sd_log"], s["pairs"]
            row = {"family": family, "workload": a.workload, "n": a.n, "a": f"{a.lang} {a.variant} {a.params_text}",
                   "b": f"{b.lang} {b.variant} {b.params_text}", "arm": a.arm, "metric": metric,
                   "stored_pairs": have, "sd_log": sd}
            for label, n, share in (("samples", looks[0], spending[0] if len(looks) > 1 else 1.0),
                                    ("budget", looks[-1], spending[-1])):
                theta = ranktests.detectable_shift_paired(n, alpha * share / m, rules.POWER)
                row[f"mde_at_{label}"] = (np.inf if not np.isfinite(theta) else
                                          float(np.expm1(theta * sd)) if np.isfinite(sd) else np.nan)
            rows.append(row)
    return pd.DataFrame(rows, columns=["family", "workload", "n", "a", "b", "arm", "metric", "stored_pairs", "sd_log",
                                       "mde_at_samples", "mde_at_budget"])
