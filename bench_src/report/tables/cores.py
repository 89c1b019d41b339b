"""The tables of a plan with `cores` for reading (analysis/cores.py): the Go/Rust ratio at each core
count with its change from the fewest cores, and each cell's value at the fewest cores over its value
at k cores.  That quotient is a speed-up only for a duration: for peak memory or CPU time it says
how much less (above 1) or more (below 1) of it the program needs with more cores, and these tables
and the figures (figures/cores.py) name it so (`gain_name`, `gain_verdict`)."""
from __future__ import annotations

import pandas as pd

from ...analysis import rules
from .. import units
from .formatting import (blank, ci_name, column_of, finish, metric_of, n_text, paired_columns,
                         params_dict, params_text, shared_text, side_columns, title_of)
from .markup import Readable

# the side that needs more, beside the side that needs less of rules.word
_MORE = {"faster": "slower", "smaller": "larger", "uses less CPU": "uses more CPU"}
# analysis.cores.speedup's verdicts: the fewest cores needing less ("a") or more ("b") than k cores
_SPEEDUP_KINDS = {"more with more cores": "more", "less with more cores": "less"}
# analysis.cores.ratio_vs_cores' verdicts on the change of Go/Rust from the fewest cores to k
_CHANGE_WORDS = {"lower": "Go/Rust lower", "higher": "Go/Rust higher"}


def is_speedup(metric: str) -> bool:
    """Whether a value at the fewest cores over the value at k cores is a speed-up: for a duration
    (not CPU time, which a program may spend more of to finish sooner, nor memory)."""
    return rules.word(metric) == "faster"


def cores_text(k) -> str:
    return "" if blank(k) else f"{units.count(k)} core{'' if int(float(k)) == 1 else 's'}"


def gain_name(metric: str, fewest=None) -> str:
    """The quotient's name: "speed-up" for a duration, else what it is ("peak RSS at 1 core / at k
    cores")."""
    if is_speedup(metric):
        return "speed-up"
    at = cores_text(fewest) if not blank(fewest) else "the fewest cores"
    return f"{units.metric_name(metric)} at {at} / at k cores"


def gain_title(metric: str) -> str:
    """The title of a table or figure of the quotient: "Speed-up with cores: workload time", "Peak RSS
    with cores"."""
    if is_speedup(metric):
        return f"Speed-up with cores: {units.metric_name(metric)}"
    name = units.metric_name(metric)
    return f"{name[:1].upper()}{name[1:]} with cores"


def gain_verdict(kind, metric: str) -> str:
    """A verdict of analysis.cores.speedup in the metric's words: "faster with more cores", "smaller
    with more cores", "larger with more cores"; equivalence at the margin the table is decided at
    (rules.MARGIN)."""
    if blank(kind):
        return ""
    side = _SPEEDUP_KINDS.get(str(kind))
    if side is None:
        return rules.verdict_text(str(kind), False, "", "", metric) if kind in ("equivalent", "inconclusive") \
            else str(kind)
    less = rules.word(metric)
    return f"{less if side == 'less' else _MORE.get(less, 'more')} with more cores"


def _fewest(t: pd.DataFrame, column: str):
    """The fewest core count of a table, where every row shares it (else None)."""
    values = pd.to_numeric(column_of(t, column), errors="coerce").dropna().unique()
    return int(values[0]) if len(values) == 1 else None


def ratio_vs_cores(table: pd.DataFrame) -> Readable:
    """Per Go-vs-Rust comparison and core count: the two medians, the ratio with its interval and
    verdict (the Go-vs-Rust table's), and the change of the ratio from the fewest cores with its
    interval and verdict."""
    t = table.reset_index(drop=True)
    shared = shared_text(t)
    out = pd.DataFrame(index=t.index)
    out["workload"] = column_of(t, "workload", "")
    out["N"] = n_text(t)
    out["cores"] = column_of(t, "cores").map(lambda k: "" if blank(k) else units.count(k))
    out["arm"] = column_of(t, "arm", "")
    out["parameters"] = shared
    side_columns(t, out, shared)
    out["model"] = [gm if gm == rm else f"{gm} / {rm}"
                    for gm, rm in zip(column_of(t, "go_model", ""), column_of(t, "rust_model", ""))]
    ratio = paired_columns(t, out, "go", "rust", "Go", "Rust", "Go/Rust")
    fewest = _fewest(t, "change_from_cores")
    change = (f"change from {cores_text(fewest) if fewest else 'the fewest cores'} "
              f"[{ci_name(t, 'change_ci_level')}], verdict")
    out[change] = [
        "" if blank(v) else f"{units.ratio(v, lo, hi)} {_CHANGE_WORDS.get(str(kind), str(kind))}".strip()
        for v, lo, hi, kind in zip(column_of(t, "change"), column_of(t, "change_ci_low"),
                                   column_of(t, "change_ci_high"), column_of(t, "change_kind", ""))]
    out["change p (BH)"] = column_of(t, "change_p_adjusted").map(units.p_value)
    out["change pairs"] = [("" if blank(c) or not int(c) else units.count(c)) for c in column_of(t, "change_pairs")]
    out["warning"] = column_of(t, "warning", "")
    at = cores_text(fewest) if fewest else "the fewest cores"
    return finish(out, title_of(t, "Go vs Rust against cores"),
                  "Cores: the CPUs each program was pinned to, with as many threads. Go/Rust < 1: Go needs less; "
                  "each core count's interval and verdict are the Go-vs-Rust table's, at its family's level. "
                  f"Change: per block, Go/Rust at these cores over Go/Rust at {at} (the paired test of the change, "
                  "Benjamini-Hochberg over the changes of this metric, each interval at the level its verdict is read "
                  "from); Go/Rust lower or higher: its interval excludes 1, the ratio moved with the cores; blank at "
                  f"{at}.", keep=(ratio,))


def speedup(table: pd.DataFrame) -> Readable:
    """Per cell and core count above the fewest: its value at the fewest cores over its value at k
    cores, with its interval and verdict in the metric's words (a speed-up for a duration)."""
    t = table.reset_index(drop=True)
    metrics = [m for m in dict.fromkeys(metric_of(t)) if not blank(m)]
    metric = metrics[0] if len(metrics) == 1 else ""
    fewest = _fewest(t, "from_cores")
    out = pd.DataFrame(index=t.index)
    out["workload"] = column_of(t, "workload", "")
    out["lang"] = column_of(t, "lang", "")
    out["variant"] = column_of(t, "variant", "")
    out["N"] = n_text(t)
    out["arm"] = column_of(t, "arm", "")
    out["parameters"] = column_of(t, "params", "").map(lambda s: params_text(params_dict(s)))
    out["cores"] = [f"{units.count(a)} → {units.count(b)}" if not (blank(a) or blank(b)) else ""
                    for a, b in zip(column_of(t, "from_cores"), column_of(t, "cores"))]
    out["samples"] = column_of(t, "pairs").map(lambda p: "" if blank(p) else f"{units.count(p)} pairs")
    column = f"{gain_name(metric, fewest) if metric else 'at the fewest cores / at k cores'} [{ci_name(t)}], verdict"
    out[column] = [
        f"{units.ratio(v, lo, hi)} {gain_verdict(kind, m)}".strip() if not blank(v) else ""
        for v, lo, hi, kind, m in zip(column_of(t, "speedup"), column_of(t, "speedup_ci_low"),
                                      column_of(t, "speedup_ci_high"), column_of(t, "verdict_kind", ""), metric_of(t))]
    out["p (BH)"] = column_of(t, "p_adjusted").map(units.p_value)
    out["warning"] = column_of(t, "warning", "")
    at = cores_text(fewest) if fewest else "the fewest cores"
    if metric and is_speedup(metric):
        meaning = (f"Speed-up: the {units.metric_name(metric)} at {at} over the {units.metric_name(metric)} at k "
                   "cores; above 1 the program is faster with more cores")
    else:
        name = units.metric_name(metric) if metric else "the value"
        meaning = (f"{name[:1].upper()}{name[1:]} at {at} over {name} at k cores, not a speed-up: above 1 the "
                   f"program needs less with more cores, below 1 more")
    return finish(out, gain_title(metric) if metric else "Values with cores",
                  f"{meaning}. Per block (the same program, variant, N and parameters, pinned to k CPUs with k "
                  "threads), the paired test of each cell's quotient, Benjamini-Hochberg over this metric's "
                  "quotients; a verdict other than equivalent or inconclusive: its interval excludes 1.",
                  keep=(column,))
