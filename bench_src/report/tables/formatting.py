"""The formatting every table for reading shares: blank values, threads, parameters, values with
their unit, ratios with their interval and verdict, p-values, titles, and `finish`, which moves the
columns every row shares into the caption (`split_constants`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis import compare, multiplicity, paired, rules, unpaired
from ...catalogue import WORKLOADS
from .. import units
from .markup import Readable

VERDICT_KINDS = multiplicity.KINDS
# effect-size columns a comparison table may carry, with their reading name
EFFECT_SIZES = {"cliffs_delta": "Cliff's δ", "effect_size": "effect size", "rank_biserial": "rank-biserial r",
                "hodges_lehmann": "Hodges-Lehmann shift", "cohens_d": "Cohen's d"}


def column_of(table: pd.DataFrame, name: str, default=np.nan) -> pd.Series:
    return table[name] if name in table else pd.Series([default] * len(table), index=table.index, dtype=object)


def blank(value) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and np.isnan(value):
        return True
    try:
        if pd.isna(value) is True:
            return True
    except (TypeError, ValueError):
        pass
    return str(value).strip() in ("", "nan", "None", "<NA>")


def threads_text(value) -> str:
    return "all CPUs" if blank(value) else units.count(value)


# The sides of a row whose threads its table carries (the threads each side's samples ran with,
# stats.threads_used), by the tables' column prefixes: (column of the threads, of the language, of
# the variant, the side's name in a row's threads cell)
THREAD_SIDES = {
    "go_threads": (("go_threads", None, "go_variant", "Go"), ("rust_threads", None, "rust_variant", "Rust")),
    "ref_threads": (("threads", "lang", "variant", "model"), ("ref_threads", "ref_lang", "ref_variant", "against")),
    "baseline_threads": (("threads", "lang", "variant", "variant"),
                         ("baseline_threads", "lang", "baseline_variant", "baseline")),
    "a_threads": (("a_threads", None, "variant", "A"), ("b_threads", None, "variant", "B")),
    "sleep_threads": (("sleep_threads", "lang", "variant", "sleeping"), ("release_threads", "lang", "variant", "released")),
    "threads": (("threads", "lang", "variant", ""),),
}


def thread_sides(table: pd.DataFrame) -> tuple[tuple[str, str | None, str, str], ...]:
    """The sides of `table`'s rows whose threads it carries (THREAD_SIDES), () where it carries none."""
    return next((sides for key, sides in THREAD_SIDES.items() if key in table), ())


def _whole(v) -> str:
    return units.count(v) if not blank(v) else ""


def threads_cells(table: pd.DataFrame) -> pd.Series:
    """Each row's threads as its samples ran with them (the sides' columns, THREAD_SIDES): the
    number where every side ran with what was requested (the request where no side says), with the
    request beside it where they ran with other threads, "1 (2 requested)", and each side's where
    they differ from each other, "Go 2, Rust 1 (2 requested)"."""
    sides = thread_sides(table)
    requested = column_of(table, "threads_requested")
    out = []
    for i in table.index:
        asked = requested.loc[i]
        used = [(name, table.at[i, col]) for col, _, _, name in sides]
        known = [(name, v) for name, v in used if not blank(v)]
        values = {float(v) for _, v in known}
        if not known or (len(values) == 1 and (blank(asked) or float(asked) in values)):
            out.append(_whole(next(iter(values))) if known and blank(asked) else threads_text(asked))
            continue
        said = (_whole(next(iter(values))) if len(values) == 1 else
                ", ".join(f"{name} {_whole(v)}".strip() for name, v in known))
        out.append(f"{said} ({threads_text(asked)} requested)")
    return pd.Series(out, index=table.index, dtype=object)


def threads_exceptions(table: pd.DataFrame) -> list[str]:
    """The programs of `table` (its rows' sides, THREAD_SIDES) whose samples ran with other threads
    than requested (with none requested, than most of them): "Rust plain, local, unrolled ran 1",
    "Rust thread ran one per task"; for a caption that states the threads once."""
    sides = thread_sides(table)
    if not sides:
        return []
    requested = column_of(table, "threads_requested")
    found: dict[tuple[str, str], dict[str, bool]] = {}
    seen = []
    for col, lang_col, variant_col, name in sides:
        for i in table.index:
            v = table.at[i, col]
            if blank(v):
                continue
            lang = (name if lang_col is None else {"go": "Go", "rust": "Rust"}.get(str(table.at[i, lang_col]),
                                                                                  str(table.at[i, lang_col])))
            seen.append((float(v), requested.loc[i], lang, str(table.at[i, variant_col]), column_of(table, "n").loc[i]))
    if not seen:
        return []
    common = pd.Series([v for v, *_ in seen]).mode().iloc[0]
    for v, asked, lang, variant, n in seen:
        if v != (common if blank(asked) else float(asked)):
            per_task = not blank(n) and v == float(n) and v > 1  # OS threads, one per task
            found.setdefault((lang, "one per task" if per_task else _whole(v)), {})[variant] = True
    return [f"{lang} {', '.join(variants)} ran {what}" for (lang, what), variants in found.items()]


def params_dict(text) -> dict[str, str]:
    if blank(text):
        return {}
    return dict(kv.split("=", 1) for kv in str(text).split(",") if "=" in kv)


def params_text(d: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items())


PARAM_NAMES = sorted({p.name for w in WORKLOADS.values() for p in w.params})


def param_columns(table: pd.DataFrame) -> list[str]:
    """The `p_<key>` columns of catalogue parameters (not p_value or p_adjusted)."""
    return [c for c in table.columns if c.startswith("p_") and c[2:] in PARAM_NAMES]


def shared_text(table: pd.DataFrame) -> pd.Series:
    """Per row, the parameters both languages share: from `p_<key>` columns or `shared_params`."""
    pcols = param_columns(table)
    if pcols:
        return table.apply(lambda r: ", ".join(f"{c[2:]}={r[c]}" for c in pcols if not blank(r[c])), axis=1)
    if "shared_params" in table:
        return table["shared_params"].map(lambda s: params_text(params_dict(s)))
    return pd.Series([""] * len(table), index=table.index)


def own_params(params, shared) -> str:
    """The parameters of one side that are not shared (a driver, say)."""
    own = params_dict(params)
    common = params_dict(shared.replace(", ", ",")) if isinstance(shared, str) else {}
    return params_text({k: v for k, v in own.items() if k not in common})


def with_params(name, params: str) -> str:
    return f"{name} ({params})" if params else str(name)


def split_constants(frame: pd.DataFrame, keep: tuple[str, ...] = ()) -> tuple[pd.DataFrame, dict[str, str]]:
    """Drop the columns that are empty in every row, and move those holding one value in every row
    (when there are two rows or more) into a dict for the caption.  `keep` columns always stay."""
    constants: dict[str, str] = {}
    drop = []
    for c in frame.columns:
        values = frame[c].map(lambda v: "" if blank(v) else str(v))
        if c in keep:
            continue
        if (values == "").all():
            drop.append(c)
        elif len(frame) > 1 and values.nunique() == 1:
            constants[str(c)] = values.iloc[0]
            drop.append(c)
    return frame.drop(columns=drop), constants


def caption_text(constants: dict[str, str], prefix: str = "") -> str:
    text = "; ".join(f"{k}: {v}" for k, v in constants.items() if v != "")
    return (prefix + text) if text else prefix.rstrip("; ")


def finish(frame: pd.DataFrame, title: str = "", note: str = "", keep: tuple[str, ...] = ()) -> Readable:
    frame = frame.fillna("").astype(str).replace({"nan": "", "None": "", "<NA>": ""})
    frame, constants = split_constants(frame, keep)
    caption = caption_text(constants, "Every row: " if constants else "")
    if note:
        caption = f"{caption}. {note}" if caption else note
    return Readable(frame.reset_index(drop=True), caption, title, constants)


def verdict_kinds(table: pd.DataFrame, a: str = "Go", b: str = "Rust") -> pd.Series:
    """`verdict_kind` when the table has it; otherwise read from the verdict text: "a" when it starts
    with `a` ("Go faster"), "b" with `b`, "equivalent", or "inconclusive"."""
    if "verdict_kind" in table and not table["verdict_kind"].isna().all():
        return table["verdict_kind"].fillna("inconclusive").astype(str)

    def kind(text) -> str:
        t = "" if blank(text) else str(text)
        if t.startswith("equivalent"):
            return "equivalent"
        if t.startswith(f"{a} "):
            return "a"
        if t.startswith(f"{b} "):
            return "b"
        return "inconclusive"

    return column_of(table, "verdict", "").map(kind)


def metric_of(table: pd.DataFrame) -> pd.Series:
    return column_of(table, "metric", "")


def p_column(table: pd.DataFrame) -> tuple[pd.Series, str]:
    if "p_adjusted" in table and not table["p_adjusted"].isna().all():
        return table["p_adjusted"].map(units.p_value), "p (BH)"
    if "p_value" in table:
        return table["p_value"].map(units.p_value), "p"
    return pd.Series([""] * len(table), index=table.index), "p"


def add_effect(table: pd.DataFrame, out: pd.DataFrame) -> None:
    for col, name in EFFECT_SIZES.items():
        if col in table:
            out[name] = table[col].map(lambda v: "" if blank(v) else f"{float(v):+.2f}")
            return


def ci_name(table: pd.DataFrame, column: str = "ci_level") -> str:
    """The name of a comparison table's intervals: their confidence ("99.7% CI") when the table
    holds one level (the family's, adjusted for its comparisons), their range where its rows come
    from families of different levels ("CI at 95.1–99.7%, each at its family's level"), "CI" when no row
    has a level.  `column`: where the levels are (another family's intervals in the same table, as
    the cores table's changes)."""
    levels = pd.to_numeric(column_of(table, column), errors="coerce").dropna().unique()
    if len(levels) == 1:
        return f"{units.percent(float(levels[0]), digits=3)} CI"
    return f"CI at {units.coverage(levels)}, each at its family's level" if len(levels) else "CI"


def ratio_cells(table: pd.DataFrame) -> pd.Series:
    """The ratio, its interval and its verdict in one cell; compare.NOT_TESTED for a row that could not be
    tested (its warning says why)."""
    untested = compare.untested(table)
    cells = []
    for r, not_tested in zip(table.itertuples(index=False), untested):
        d = r._asdict()
        if not_tested:
            cells.append(compare.NOT_TESTED)
            continue
        text = units.ratio(d.get("ratio"), d.get("ratio_ci_low"), d.get("ratio_ci_high"))
        verdict = d.get("verdict")
        if not blank(verdict):
            text = f"{text} {verdict}".strip()
        cells.append(text)
    return pd.Series(cells, index=table.index, dtype=object)


def metric_values(table: pd.DataFrame, column: str) -> pd.Series:
    metric = metric_of(table)
    return pd.Series([units.quantity(v, units.metric_unit(m)) for v, m in zip(column_of(table, column), metric)],
                     index=table.index, dtype=object)


def n_text(table: pd.DataFrame) -> pd.Series:
    return column_of(table, "n").map(units.count)


def title_of(table: pd.DataFrame, what: str) -> str:
    metrics = [m for m in dict.fromkeys(metric_of(table)) if not blank(m)]
    return f"{what}: {', '.join(units.metric_name(m) for m in metrics)}" if metrics else what


def work_columns(t: pd.DataFrame, out: pd.DataFrame, shared: pd.Series) -> None:
    """The columns that name the work of a comparison row: workload, N, threads, the arm of an A/A
    run (empty, so left out, in any other) and parameters."""
    out["workload"] = column_of(t, "workload", "")
    out["N"] = n_text(t)
    out["threads"] = threads_cells(t)
    out["arm"] = column_of(t, "arm", "")
    out["parameters"] = shared


def side_columns(t: pd.DataFrame, out: pd.DataFrame, shared: pd.Series, a: str = "Go", b: str = "Rust") -> None:
    """The columns that name the two sides of a Go-vs-Rust row: each side's variant with its own
    parameters (those the two do not share, a driver, say; `go_params`, `rust_params`), headed `a`
    and `b`.  With `work_columns` they name the row's comparison (its key)."""
    out[a] = [with_params(v, own_params(p, s))
              for v, p, s in zip(column_of(t, "go_variant", ""), column_of(t, "go_params", ""), shared)]
    out[b] = [with_params(v, own_params(p, s))
              for v, p, s in zip(column_of(t, "rust_variant", ""), column_of(t, "rust_params", ""), shared)]


def samples_column(t: pd.DataFrame, left: str, right: str) -> list[str]:
    """"k pairs" for a paired row, else the samples of each side ("a / b")."""
    paired = column_of(t, "pairing", "").astype(str).eq("paired")
    return [units.count(p) + " pairs" if is_paired and not blank(p) else f"{units.count(a)} / {units.count(b)}"
            for is_paired, p, a, b in zip(paired, column_of(t, "pairs"), column_of(t, left), column_of(t, right))]


def level_note(t: pd.DataFrame) -> str:
    """What the intervals of a comparison table are: the family's level and how it was set."""
    levels = pd.to_numeric(column_of(t, "ci_level"), errors="coerce").dropna().unique()
    if len(levels) != 1:
        return ""
    called = int(column_of(t, "verdict_kind", "").isin(["a", "b"]).sum())
    size = column_of(t, "family_size").dropna()
    m = int(size.iloc[0]) if not size.empty else len(t)
    alpha = f"{rules.ALPHA * 100:.3g}%"
    return (f"Intervals at {units.percent(float(levels[0]), digits=3)}: 1 - max(R, 1) x {alpha} / m with R = {called} "
            f"differences called among m = {m} comparisons (false discovery rate {alpha}); a verdict is a difference "
            f"exactly when its interval excludes 1.")


def ratio_note(t: pd.DataFrame, name: str, medians: str = "the medians shown") -> str:
    """What the ratio of a comparison table estimates, in one sentence, by the tests its rows used
    (docs/statistics.md, "One estimand"): exp of the Hodges-Lehmann estimate of the per-block log
    ratios (the signed-rank tests), of their mean (Student's t alone), or of the shift between two
    samples (unpaired rows); never the ratio of the two medians beside it."""
    tests = {str(v) for v in column_of(t, "test", "") if not blank(v)}
    rank = any(test.startswith(paired.SIGNED_RANK) for test in tests)  # exact, normal approximation, t below the floor
    by_t = paired.T_TEST in tests
    apart = bool(tests & {unpaired.WELCH, unpaired.MANN_WHITNEY})
    if by_t and not rank:
        what = ["the geometric mean of the per-block ratios (Student's t)"]
    elif rank and not by_t:
        what = ["the centre of the per-block ratios (Hodges-Lehmann)"]
    elif rank or not apart:
        what = ["the centre of the per-block ratios (Hodges-Lehmann; their geometric mean where values tie and Student's t alone decides)"]
    else:
        what = []
    if apart:
        what.append(("unpaired rows: " if what else "") + "the shift between the two samples (two-sample "
                    "Hodges-Lehmann; the ratio of their geometric means where Welch's t is used)")
    return f"{name}: {'; '.join(what)}, not the ratio of {medians}."


def test_columns(t: pd.DataFrame, out: pd.DataFrame) -> None:
    """The test of a comparison row: its (corrected) p-value, effect size and minimum detectable effect."""
    p, p_name = p_column(t)
    out[p_name] = p
    add_effect(t, out)
    if "mde" in t:
        out["MDE"] = t["mde"].map(lambda v: "" if blank(v) else units.detectable(v))


def paired_columns(t: pd.DataFrame, out: pd.DataFrame, a: str, b: str, a_name: str, b_name: str,
                   ratio_name: str) -> str:
    """The columns every table of one side against another shares, added to `out`: pairing,
    samples, the two medians (`<a>_median`, `<b>_median`, headed "<a_name> median"...), the ratio
    with its interval and verdict in one cell, and the test's columns; returns the ratio's header."""
    out["pairing"] = column_of(t, "pairing", "")
    out["samples"] = samples_column(t, f"{a}_samples", f"{b}_samples")
    out[f"{a_name} median"] = metric_values(t, f"{a}_median")
    out[f"{b_name} median"] = metric_values(t, f"{b}_median")
    ratio = f"{ratio_name} [{ci_name(t)}], verdict"
    out[ratio] = ratio_cells(t)
    test_columns(t, out)
    return ratio
