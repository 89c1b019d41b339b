"""Per-cell tables for reading: each cell's summary, the cost of one more N, drift with the run
order, and idle tasks sleeping against released."""
from __future__ import annotations

import re

import pandas as pd

from ...analysis import quality, rules, scaling
from ...catalogue import WORKLOADS
from .. import units
from .formatting import (blank, column_of, finish, metric_of, metric_values, n_text, p_column, params_dict,
                         params_text, threads_cells, title_of)
from .markup import Readable


def noise_model(theta) -> str:
    """How a per-task fit weighted its lines (scaling.weight_power): as relative errors or as
    additive noise, chosen by how the samples' spread grows with the value (value^theta), which is
    named beside the model unless it reads 1 or 0 to two decimals."""
    if blank(theta):
        return ""
    theta = float(theta)
    model = "relative" if scaling.weight_power(theta) else "additive"
    exact = round(theta, 2) >= 1 if model == "relative" else round(theta, 2) <= 0
    return model if exact else f"{model} (spread ~ value^{theta:.2g})"


def _cell_columns(t: pd.DataFrame, with_n: bool = True) -> pd.DataFrame:
    """The columns that name a cell: workload, language, variant, N (unless `with_n` is False),
    threads, the arm of an A/A run (empty, so left out, in any other) and parameters."""
    out = pd.DataFrame(index=t.index)
    for c in ("workload", "lang", "variant"):
        out[c] = column_of(t, c, "")
    if with_n:
        out["N"] = n_text(t)
    out["threads"] = threads_cells(t)  # as the samples ran, the request beside where they did not
    out["arm"] = column_of(t, "arm", "")
    out["parameters"] = column_of(t, "params", "").map(lambda s: params_text(params_dict(s)))
    return out


def summary(table: pd.DataFrame) -> Readable:
    """Per cell: samples, median with its distribution-free CI and that CI's exact coverage (the
    order statistics nearest 95%: 93.5% at 10 samples), coefficient of variation, range."""
    t = table.reset_index(drop=True)
    metric = metric_of(t)
    out = _cell_columns(t)
    out["samples"] = column_of(t, "samples").map(units.count)
    out["median [CI]"] = [units.interval(m, lo, hi, units.metric_unit(k)) for m, lo, hi, k in
                              zip(column_of(t, "median"), column_of(t, "ci_low"), column_of(t, "ci_high"), metric)]
    out["CI coverage"] = [("" if blank(c) else ("≥ " if kind == "at least" else "") + units.percent(c, digits=3))
                          for c, kind in zip(column_of(t, "ci_coverage"), column_of(t, "ci_coverage_kind", ""))]
    out["CV"] = column_of(t, "cv").map(units.percent)
    out["range"] = [f"{units.quantity(lo, units.metric_unit(k))} – {units.quantity(hi, units.metric_unit(k))}"
                    if not blank(lo) else "" for lo, hi, k in zip(column_of(t, "min"), column_of(t, "max"), metric)]
    out["warning"] = column_of(t, "warning", "")
    return finish(out, title_of(t, "Per cell"),
                   "CI coverage: exact for values without ties, a lower bound (≥) where values tie (a grid).",
                   keep=("median [CI]",))


PER_UNIT = {"concurrent tasks": "task", "workers": "worker", "messages": "message", "tasks": "task"}


def per_unit(workload: str) -> str | None:
    """What one more N adds for a workload ("task", "worker", "message"), or None where a cost per N
    means nothing (cpu_loops: N is an array length)."""
    w = WORKLOADS.get(workload)
    return PER_UNIT.get(w.n_meaning) if w else None


def unresolved(text: str, why: str, what: str) -> str:
    """A cost the table cannot tell from 0, said so beside its figures: '-12.0 ms (below 0: no fixed
    cost resolved)', '3.56 µs [≤ 0, 12.9] per task (interval reaches 0: no cost resolved)'."""
    return f"{text} ({why}: no {what} resolved)"


def per_n_cost(v, low, high, unit: str, per: str) -> str:
    """The cost of one more N with its interval: '2.94 µs [2.20, 3.68] per task'.  A cost is not
    below 0, so an interval that reaches 0 tells none from 0: its lower end reads '≤ 0' and the cell
    says so (unresolved), as a fixed cost below 0 does; an estimate below 0 without an interval
    says so too.  An interval wholly below 0 is a value that falls as N grows, shown as it is."""
    if blank(v):
        return ""
    if not blank(high) and float(high) < 0:
        return f"{units.interval(v, low, high, unit)} per {per} (below 0: falls as N grows)"
    text = f"{units.interval(v, low, high, unit, floor=0.0)} per {per}"
    if not blank(low) and float(low) <= 0:
        return unresolved(text, "interval reaches 0", "cost")
    return unresolved(text, "below 0", "cost") if blank(low) and float(v) < 0 else text


def per_task(table: pd.DataFrame) -> Readable:
    """Marginal cost per task (the centre of the slopes of the blocks that hold every N) with its CI,
    the fixed cost and the exponent."""
    t = table.reset_index(drop=True)
    metric = metric_of(t)
    out = _cell_columns(t, with_n=False)
    out["N values"] = column_of(t, "ns", "").map(lambda s: ", ".join(units.short_count(int(x)) for x in str(s).split(",")
                                                               if x.strip().isdigit()))
    out["samples"] = column_of(t, "samples").map(units.count)
    # the blocks that hold every N: what the intervals are read off
    out["blocks"] = column_of(t, "blocks").map(lambda v: "" if blank(v) else units.count(v))
    out[f"per N [{units.lone_ci()}]"] = [per_n_cost(v, lo, hi, units.metric_unit(k), per_unit(w) or "N")
                             for v, lo, hi, k, w in zip(column_of(t, "per_task"), column_of(t, "per_task_ci_low"),
                                                        column_of(t, "per_task_ci_high"), metric,
                                                        column_of(t, "workload", ""))]
    # the line's intercept: below 0 (a fit of few N, or a cost that grows faster than linearly) it is
    # no cost, and says so rather than read as one
    out["fixed cost"] = [unresolved(text, "below 0", "fixed cost") if not blank(v) and float(v) < 0 else text
                         for text, v in zip(metric_values(t, "fixed_cost"), column_of(t, "fixed_cost"))]
    out[f"exponent [{units.lone_ci()}]"] = [units.ratio(b, lo, hi) for b, lo, hi in
                                zip(column_of(t, "exponent"), column_of(t, "exponent_ci_low"), column_of(t, "exponent_ci_high"))]
    out["noise"] = column_of(t, "noise_power").map(noise_model)
    # what the fit left out or could not give; the reason a row has no interval is its own (too few
    # blocks hold every N), the rule is the caption's
    out["note"] = column_of(t, "warning", "").fillna("").map(
        lambda v: re.sub(r"only (\d+) blocks? holds? every N: no interval \(needs >= \d+\)",
                         lambda m: f"no interval: every N in only {m[1]} block{'' if m[1] == '1' else 's'}", str(v)))
    return finish(out, title_of(t, "Cost of one more N"),
                   "per N: in each block that holds every N (blocks), the weighted least-squares line through its "
                   "values; the centre of the blocks' slopes (Hodges-Lehmann) with the signed-rank interval a "
                   f"comparison has (none from fewer than {rules.MIN_PAIRS} such blocks); a cost is not below 0, so "
                   "an interval that reaches 0 shows '≤ 0' and tells no cost from 0 (no cost resolved). The weights "
                   "follow the noise model the samples show (relative, 1 / value², where their spread grows as "
                   f"value^{scaling.RELATIVE_FROM:g} or faster; else additive, equal weights): they set the "
                   "interval's width, not its level. A condition shared by a block (the machine that "
                   "hour) moves that block's line and so widens the interval, as it should. exponent b of value ~ "
                   "N^b, read off the blocks alike and fitted to the whole value, fixed cost included: 1 = linear, "
                   "below 1 where a fixed cost (the program's own, a sleep) dominates the smaller N however linear "
                   "the per-N cost is (read the per-N cost for that). The note says where the per-N values leave a "
                   "straight line (from 3 values of N, Holm-corrected over the table): the cost of one more task "
                   "then changes with N, and the slope is the line's through the N shown.",
                   keep=(f"per N [{units.lone_ci()}]",))


def drift(table: pd.DataFrame) -> Readable:
    t = table.reset_index(drop=True)
    if "drift" in t:
        t = t.assign(_order=~t["drift"].fillna(False).astype(bool)).sort_values("_order", kind="stable")
    out = _cell_columns(t)
    out["samples"] = column_of(t, "samples").map(units.count)
    out["Spearman ρ"] = column_of(t, "spearman_rho").map(lambda v: "" if blank(v) else f"{float(v):+.2f}")
    p, p_name = p_column(t)
    out[p_name] = p
    # the p-value the verdict is read from beside the one before the correction: a cell with p = 0.0038
    # among 52 reads "no" only at its Holm-corrected p
    out["p (Holm)"] = column_of(t, "p_holm").map(units.p_value)
    out["drift"] = column_of(t, "drift").map(lambda v: "yes" if v is True or v == 1 else "no")
    return finish(out, title_of(t, "Drift with the run order"),
                  f"p: before the correction; drift: Holm-corrected p (over the table's cells) < {rules.ALPHA:g}."
                  + _unreachable(t), keep=("drift",))


def _unreachable(t: pd.DataFrame) -> str:
    """How many cells the check could not flag whatever their order: their smallest exact p-value
    lies above Holm's first threshold (analysis.quality.drift, `reachable`)."""
    if "reachable" not in t or "p_value" not in t:
        return ""
    tested = t[t["p_value"].notna()]
    blind = tested[~tested["reachable"].astype(bool)]
    if blind.empty:
        return ""
    n, m = int(blind["samples"].min()), len(tested)
    return (f" {len(blind)} of {m} cells cannot reach Holm's first threshold ({rules.ALPHA:g} / {m} = "
            f"{units.p_value(rules.ALPHA / m)}) whatever the order of their samples: the exact p of a cell of "
            f"n samples is at least 2 / n! ({units.p_value(quality.smallest_p(n))} at {n}).")


def idle_wait_modes(table: pd.DataFrame) -> Readable:
    """Idle tasks sleeping (the posts' setup) against released after the last spawn: peak RSS."""
    t = table.reset_index(drop=True)
    mib = lambda v: "" if blank(v) else units.quantity(v, "MiB")  # noqa: E731
    sec = lambda v: "" if blank(v) else units.quantity(v, "s")  # noqa: E731
    out = pd.DataFrame(index=t.index)
    out["lang"] = column_of(t, "lang", "")
    out["variant"] = column_of(t, "variant", "")
    out["N"] = n_text(t)
    out["threads"] = threads_cells(t)  # as the samples ran, the request beside where they did not
    out["samples (sleep / release)"] = [f"{units.count(a)} / {units.count(b)}"
                                        for a, b in zip(column_of(t, "sleep_samples"), column_of(t, "release_samples"))]
    out["peak, sleeping"] = column_of(t, "sleep_median_mib").map(mib)
    out["peak, released"] = column_of(t, "release_median_mib").map(mib)
    out[f"sleep/release [{units.lone_ci()}]"] = [units.ratio(r, lo, hi) for r, lo, hi in
                                     zip(column_of(t, "ratio"), column_of(t, "ratio_ci_low"), column_of(t, "ratio_ci_high"))]
    out["time, sleeping"] = column_of(t, "sleep_elapsed_s").map(sec)
    out["time, released"] = column_of(t, "release_elapsed_s").map(sec)
    out["pairing"] = column_of(t, "pairing", "")
    out["warning"] = column_of(t, "warning", "")
    return finish(out, "Idle tasks: peak memory sleeping vs released after the last spawn",
                   "Sleeping samples count only where every task was alive at once.",
                   keep=(f"sleep/release [{units.lone_ci()}]",))
