"""Can a plan reach a verdict?  Checked before anything is built or run.

The decision rule (analysis/paired.py, analysis/multiplicity.py) can call a difference from 3
pairs on (below the signed-rank test's floor Student's t decides), but its error rate was measured,
on every shape of noise
analysis/simulate.py covers, from design.MIN_PAIRS pairs per comparison on: fewer at the first
look would leave verdicts whose error rate nobody measured.  Such a plan is refused with the fix
named (more samples, or `smoke=True` for a run that is only meant to describe).

A plan that compares no two cells (one language, one variant per workload, no A/A arms) is not
refused: it reaches no verdict, but its cells' timings and memory are still measured and reported,
which is what a run of one language is for, and no verdict of it rests on too few pairs.  `check` and
`run` say so in one line (`no_comparisons_note`).

Also the plan's fields of the stopping rule are validated here (`plan_fields`, which `make_plan`
calls).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..parameters import MAX_SAMPLES_PER_CELL
from ..values import as_bool, as_float, as_int
from . import design
from .comparisons import plan_comparisons
from .model import Plan


def plan_fields(plan: Plan, max_samples: Any = None, looks: Any = None, smoke: Any = False,
                adaptive_target: Any = None, late_looks: Any = None):
    """The plan with its stopping-rule fields validated, after checking that it can reach a
    verdict (unless smoke).  The hook of `make_plan`."""
    if adaptive_target is not None:
        try:  # only 0, read as every number is (values.as_float: "0.0" too, a boolean never)
            as_float("adaptive_target", adaptive_target, 0.0, 0.0)
        except ValueError:
            raise ValueError(f"adaptive_target ({adaptive_target!r}) was replaced by the sequential rule: give "
                             "max_samples (the sample budget per cell) and optionally looks") from None
    budget = 0 if max_samples is None else as_int(
        "max_samples", max_samples, 0, MAX_SAMPLES_PER_CELL, default="no sequential rule (so does 0)")
    if budget and budget < plan.samples:
        raise ValueError(f"max_samples ({budget}) must be >= samples ({plan.samples})")
    if budget == plan.samples:
        budget = 0
    # the value itself first (-1 is no number of looks, with or without max_samples); no zero (as for
    # threads and mem_limit_mb): refused like any value below the least, naming the default
    looks_v = None if looks is None else as_int("looks", looks, 1, default=f"the default ({design.DEFAULT_LOOKS})")
    if budget == 0:
        if looks_v not in (None, 1):
            raise ValueError(f"looks ({looks!r}) only applies to sequential sampling: set max_samples too")
        n_looks = 1
    else:
        n_looks = (design.DEFAULT_LOOKS if looks_v is None
                   else as_int("looks", looks, 2, default=f"the default ({design.DEFAULT_LOOKS})"))
        n_looks = min(n_looks, budget - plan.samples + 1)
    # late looks continue the looks' ratio past the budget: they need a budget and a second look
    late_v = 0 if late_looks is None else as_int("late_looks", late_looks, 0, design.MAX_LATE_LOOKS,
                                                 default="none (so does 0)")
    if late_v and n_looks < 2:
        raise ValueError(f"late_looks ({late_looks!r}) continues the sequential rule's looks past max_samples: set "
                         f"max_samples above samples ({plan.samples}) and looks >= 2 too, or late_looks=0")
    smoke_v = as_bool("smoke", False if smoke is None else smoke)
    plan = dataclasses.replace(plan, max_samples=budget, looks=n_looks, late_looks=late_v, smoke=smoke_v)
    if not plan.smoke:
        check_verdicts(plan)
    return plan


def family_sizes(plan: Plan) -> dict[str, int]:
    return {f: len(pairs) for f, pairs in plan_comparisons(plan).items()}


def check_verdicts(plan: Plan) -> dict[str, int]:
    """Per family of the plan, its number of comparisons; raises a ValueError naming the fix when
    the first look has fewer pairs than the rule was validated for."""
    looks = design.look_counts(plan.samples, plan.max_samples, plan.looks)
    sizes = {f: m for f, m in family_sizes(plan).items() if m}
    if sizes and looks[0] < design.MIN_PAIRS:
        what = "the pilot (samples)" if len(looks) > 1 else "samples"
        raise ValueError(
            f"this plan's comparisons would be decided from {looks[0]} pairs; the decision rule's error rate is "
            f"measured from {design.MIN_PAIRS} pairs per comparison on (docs/statistics.md): set {what} >= "
            f"{design.MIN_PAIRS}, or smoke=True for a run that only describes")
    return sizes


def no_comparisons_note(plan: Plan) -> str | None:
    """One line for a plan whose families are all empty (no Go-vs-Rust, model, variant, article or
    A/A pair of cells): it describes its cells and reaches no verdict, and a sample budget above
    `samples` buys nothing (a cell without a partner stops after the pilot).  None for a plan that
    compares something."""
    if any(family_sizes(plan).values()):
        return None
    budget = (f"; max_samples ({plan.max_samples}) has no comparison to decide, so every cell stops at "
              f"samples ({plan.samples})") if plan.max_samples > plan.samples else ""
    return ("this plan compares no two cells (no Go-vs-Rust, model, variant or A/A pair): each cell's timings and "
            f"memory are reported, but no verdict is reached{budget}; to compare, add the other language "
            "(languages), a variant (variants) or aa=True")
