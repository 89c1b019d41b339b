"""Tables for reading: the analysis tables made compact and unit-formatted.

The analysis tables (per-cell summaries, Go vs Rust and variant comparisons, per-task costs, drift,
checksums) hold raw numbers at full precision; they are exported as CSV unchanged.  A reader wants
less: values with their unit (12.3 ms, 45.6 MiB), a median with its interval in one cell, the ratio
with its interval and verdict in one cell (as benchstat and pyperf print them), p-values with two
significant digits, and no column that is empty or holds one value in every row: those values go
into a caption line above the table.

`readable(table, kind)` returns a `Readable`: the formatted frame (strings), its caption, and
Markdown and HTML renderings that always show every row.  The formatting works on column names and
tolerates extra or missing columns, so tables that gain columns (pairing, models, minimum detectable
effect, verdict kinds) format without change.
"""
from __future__ import annotations

import html as html_module
import json
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd

from ..catalogue import WORKLOADS
from . import units

VERDICT_KINDS = ("a", "b", "equivalent", "inconclusive")
# effect-size columns a comparison table may carry, with their reading name
EFFECT_SIZES = {"cliffs_delta": "Cliff's δ", "effect_size": "effect size", "rank_biserial": "rank-biserial r",
                "hodges_lehmann": "Hodges-Lehmann shift", "cohens_d": "Cohen's d"}


@dataclass
class Readable:
    """A table formatted for reading: `frame` holds strings; `caption` the values every row shares."""

    frame: pd.DataFrame
    caption: str = ""
    title: str = ""
    constants: dict[str, str] = field(default_factory=dict)

    def to_markdown(self) -> str:
        lines = []
        if self.title:
            lines += [f"**{self.title}**", ""]
        if self.caption:
            lines += [self.caption, ""]
        if self.frame.empty:
            lines.append("(no rows)")
        else:
            escaped = self.frame.map(lambda v: str(v).replace("|", "\\|").replace("\n", " "))
            escaped.columns = [str(c).replace("|", "\\|") for c in escaped.columns]
            lines.append(escaped.to_markdown(index=False, disable_numparse=True))
        return "\n".join(lines) + "\n"

    def to_html(self, table_id: str | None = None) -> str:
        parts = []
        if self.title:
            parts.append(f"<p class='table-title'>{html_module.escape(self.title)}</p>")
        if self.caption:
            parts.append(f"<p class='caption'>{html_module.escape(self.caption)}</p>")
        if self.frame.empty:
            parts.append("<p class='empty'>(no rows)</p>")
        else:
            parts.append(self.frame.to_html(index=False, escape=True, border=0, classes="data", na_rep="",
                                            table_id=table_id))
        return "\n".join(parts)

    def _repr_html_(self) -> str:  # Jupyter shows every row, never pandas' truncated view
        return self.to_html()

    def __repr__(self) -> str:  # the plain-text form shows every row too
        return self.to_markdown()

    def __len__(self) -> int:
        return len(self.frame)


# --- helpers -------------------------------------------------------------------------------------

def _col(table: pd.DataFrame, name: str, default=np.nan) -> pd.Series:
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


def params_dict(text) -> dict[str, str]:
    if blank(text):
        return {}
    return dict(kv.split("=", 1) for kv in str(text).split(",") if "=" in kv)


def _params_text(d: dict[str, str]) -> str:
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
        return table["shared_params"].map(lambda s: _params_text(params_dict(s)))
    return pd.Series([""] * len(table), index=table.index)


def _own_params(params, shared) -> str:
    """The parameters of one side that are not shared (a driver, say)."""
    own = params_dict(params)
    common = params_dict(shared.replace(", ", ",")) if isinstance(shared, str) else {}
    return _params_text({k: v for k, v in own.items() if k not in common})


def _with_params(name, params: str) -> str:
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


def _caption(constants: dict[str, str], prefix: str = "") -> str:
    text = "; ".join(f"{k}: {v}" for k, v in constants.items() if v != "")
    return (prefix + text) if text else prefix.rstrip("; ")


def _finish(frame: pd.DataFrame, title: str = "", note: str = "", keep: tuple[str, ...] = ()) -> Readable:
    frame = frame.fillna("").astype(str).replace({"nan": "", "None": "", "<NA>": ""})
    frame, constants = split_constants(frame, keep)
    caption = _caption(constants, "Every row: " if constants else "")
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

    return _col(table, "verdict", "").map(kind)


def _metric_of(table: pd.DataFrame) -> pd.Series:
    return _col(table, "metric", "")


def _p_column(table: pd.DataFrame) -> tuple[pd.Series, str]:
    if "p_adjusted" in table and not table["p_adjusted"].isna().all():
        return table["p_adjusted"].map(units.p_value), "p (BH)"
    if "p_value" in table:
        return table["p_value"].map(units.p_value), "p"
    return pd.Series([""] * len(table), index=table.index), "p"


def _effect(table: pd.DataFrame, out: pd.DataFrame) -> None:
    for col, name in EFFECT_SIZES.items():
        if col in table:
            out[name] = table[col].map(lambda v: "" if blank(v) else f"{float(v):+.2f}")
            return


def ci_name(table: pd.DataFrame) -> str:
    """The name of a comparison table's intervals: their confidence ("99.7% CI") when the table
    holds one level (the family's, adjusted for its comparisons), else "CI"."""
    levels = pd.to_numeric(_col(table, "ci_level"), errors="coerce").dropna().unique()
    return f"{units.percent(float(levels[0]), digits=3)} CI" if len(levels) == 1 else "CI"


def _ratio_cell(table: pd.DataFrame) -> pd.Series:
    cells = []
    for r in table.itertuples(index=False):
        d = r._asdict()
        text = units.ratio(d.get("ratio"), d.get("ratio_ci_low"), d.get("ratio_ci_high"))
        verdict = d.get("verdict")
        if not blank(verdict):
            text = f"{text} {verdict}".strip()
        cells.append(text)
    return pd.Series(cells, index=table.index, dtype=object)


def _value(table: pd.DataFrame, column: str) -> pd.Series:
    metric = _metric_of(table)
    return pd.Series([units.quantity(v, units.metric_unit(m)) for v, m in zip(_col(table, column), metric)],
                     index=table.index, dtype=object)


def _n(table: pd.DataFrame) -> pd.Series:
    return _col(table, "n").map(units.count)


def _title(table: pd.DataFrame, what: str) -> str:
    metrics = [m for m in dict.fromkeys(_metric_of(table)) if not blank(m)]
    return f"{what}: {', '.join(units.metric_name(m) for m in metrics)}" if metrics else what


# --- the tables ------------------------------------------------------------------------------------

def _work_columns(t: pd.DataFrame, out: pd.DataFrame, shared: pd.Series) -> None:
    """The columns that name the work of a comparison row: workload, N, threads, parameters."""
    out["workload"] = _col(t, "workload", "")
    out["N"] = _n(t)
    out["threads"] = _col(t, "threads_requested").map(threads_text)
    out["parameters"] = shared


def _samples_column(t: pd.DataFrame, left: str, right: str) -> list[str]:
    """"k pairs" for a paired row, else the samples of each side ("a / b")."""
    paired = _col(t, "pairing", "").astype(str).eq("paired")
    return [units.count(p) + " pairs" if is_paired and not blank(p) else f"{units.count(a)} / {units.count(b)}"
            for is_paired, p, a, b in zip(paired, _col(t, "pairs"), _col(t, left), _col(t, right))]


def _level_note(t: pd.DataFrame) -> str:
    """What the intervals of a comparison table are: the family's level and how it was set."""
    levels = pd.to_numeric(_col(t, "ci_level"), errors="coerce").dropna().unique()
    if len(levels) != 1:
        return ""
    called = int(_col(t, "verdict_kind", "").isin(["a", "b"]).sum())
    size = _col(t, "family_size").dropna()
    m = int(size.iloc[0]) if not size.empty else len(t)
    return (f"Intervals at {units.percent(float(levels[0]), digits=3)}: 1 - max(R, 1) x 5% / m with R = {called} "
            f"differences called among m = {m} comparisons (false discovery rate 5%); a verdict is a difference "
            f"exactly when its interval excludes 1.")


def _test_columns(t: pd.DataFrame, out: pd.DataFrame) -> None:
    """The test of a comparison row: its (corrected) p-value, effect size and minimum detectable effect."""
    p, p_name = _p_column(t)
    out[p_name] = p
    _effect(t, out)
    if "mde" in t:
        out["MDE"] = t["mde"].map(lambda v: "" if blank(v) else "±" + units.percent(v))

def comparison(table: pd.DataFrame, a: str = "Go", b: str = "Rust") -> Readable:
    """Go vs Rust (one row per pair of cells doing the same work)."""
    t = table.reset_index(drop=True)
    shared = shared_text(t)
    out = pd.DataFrame(index=t.index)
    _work_columns(t, out, shared)
    out[a] = [_with_params(v, _own_params(p, s))
              for v, p, s in zip(_col(t, "go_variant", ""), _col(t, "go_params", ""), shared)]
    out[b] = [_with_params(v, _own_params(p, s))
              for v, p, s in zip(_col(t, "rust_variant", ""), _col(t, "rust_params", ""), shared)]
    if "go_model" in t or "rust_model" in t:
        out["model"] = [gm if gm == rm else f"{gm} / {rm}"
                        for gm, rm in zip(_col(t, "go_model", ""), _col(t, "rust_model", ""))]
    if "pairing" in t:
        out["pairing"] = t["pairing"]
    out["samples"] = _samples_column(t, "go_samples", "rust_samples")
    out[f"{a} median"] = _value(t, "go_median")
    out[f"{b} median"] = _value(t, "rust_median")
    ratio = f"{a}/{b} [{ci_name(t)}], verdict"
    out[ratio] = _ratio_cell(t)
    _test_columns(t, out)
    if "robustness" in t:
        out["across variants"] = _col(t, "robustness", "")
    out["warning"] = _col(t, "warning", "")
    return _finish(out, _title(t, f"{a} vs {b}"), f"{a}/{b} < 1: {a} needs less. {_level_note(t)}", keep=(ratio,))


def variants(table: pd.DataFrame) -> Readable:
    """A variant (or parameter set) against its language's default."""
    t = table.reset_index(drop=True)
    out = pd.DataFrame(index=t.index)
    out["workload"] = _col(t, "workload", "")
    out["lang"] = _col(t, "lang", "")
    out["N"] = _n(t)
    out["threads"] = _col(t, "threads_requested").map(threads_text)

    def differing(params, base) -> str:
        p, q = params_dict(params), params_dict(base)
        return _params_text({k: v for k, v in p.items() if q.get(k) != v})

    out["variant"] = [_with_params(v, differing(p, bp)) for v, p, bp in
                      zip(_col(t, "variant", ""), _col(t, "params", ""), _col(t, "baseline_params", ""))]
    out["baseline"] = [_with_params(v, differing(bp, p)) for v, p, bp in
                       zip(_col(t, "baseline_variant", ""), _col(t, "params", ""), _col(t, "baseline_params", ""))]
    out["samples"] = [f"{units.count(s)} / {units.count(bs)}" for s, bs in
                      zip(_col(t, "samples"), _col(t, "baseline_samples"))]
    out["median"] = _value(t, "median")
    out["baseline median"] = _value(t, "baseline_median")
    ratio = f"ratio [{ci_name(t)}], verdict"
    out[ratio] = _ratio_cell(t)
    p, p_name = _p_column(t)
    out[p_name] = p
    _effect(t, out)
    out["warning"] = _col(t, "warning", "")
    return _finish(out, _title(t, "Variants against the language's default"),
                   f"ratio < 1: the variant needs less. {_level_note(t)}", keep=(ratio,))


def noise_model(theta) -> str:
    """How a per-task fit weighted its points: the samples' spread grows as value^theta."""
    if blank(theta):
        return ""
    theta = float(theta)
    return "relative" if theta >= 0.9 else "additive" if theta <= 0.1 else f"spread ~ value^{theta:.2g}"


def summary(table: pd.DataFrame) -> Readable:
    """Per cell: samples, median with its 95% CI, coefficient of variation, range."""
    t = table.reset_index(drop=True)
    metric = _metric_of(t)
    out = pd.DataFrame(index=t.index)
    for c in ("workload", "lang", "variant"):
        out[c] = _col(t, c, "")
    out["N"] = _n(t)
    out["threads"] = _col(t, "threads_requested").map(threads_text)
    out["parameters"] = _col(t, "params", "").map(lambda s: _params_text(params_dict(s)))
    out["arm"] = _col(t, "arm", "")
    out["samples"] = _col(t, "samples").map(units.count)
    out["median [95% CI]"] = [units.interval(m, lo, hi, units.metric_unit(k)) for m, lo, hi, k in
                              zip(_col(t, "median"), _col(t, "ci_low"), _col(t, "ci_high"), metric)]
    out["CI coverage"] = [("" if blank(c) else ("≥ " if kind == "at least" else "") + units.percent(c, digits=3))
                          for c, kind in zip(_col(t, "ci_coverage"), _col(t, "ci_coverage_kind", ""))]
    out["CV"] = _col(t, "cv").map(units.percent)
    out["range"] = [f"{units.quantity(lo, units.metric_unit(k))} – {units.quantity(hi, units.metric_unit(k))}"
                    if not blank(lo) else "" for lo, hi, k in zip(_col(t, "min"), _col(t, "max"), metric)]
    out["warning"] = _col(t, "warning", "")
    return _finish(out, _title(t, "Per cell"),
                   "CI coverage: exact for values without ties, a lower bound (≥) where values tie (a grid).",
                   keep=("median [95% CI]",))


PER_UNIT = {"concurrent tasks": "task", "workers": "worker", "messages": "message", "tasks": "task"}


def per_unit(workload: str) -> str | None:
    """What one more N adds for a workload ("task", "worker", "message"), or None where a cost per N
    means nothing (cpu_loops: N is an array length)."""
    w = WORKLOADS.get(workload)
    return PER_UNIT.get(w.n_meaning) if w else None


def per_task(table: pd.DataFrame) -> Readable:
    """Marginal cost per task (the slope of the per-N typical values over N) with its CI, the fixed cost
    and the exponent."""
    t = table.reset_index(drop=True)
    metric = _metric_of(t)
    out = pd.DataFrame(index=t.index)
    for c in ("workload", "lang", "variant"):
        out[c] = _col(t, c, "")
    out["threads"] = _col(t, "threads_requested").map(threads_text)
    out["parameters"] = _col(t, "params", "").map(lambda s: _params_text(params_dict(s)))
    out["N values"] = _col(t, "ns", "").map(lambda s: ", ".join(units.short_count(int(x)) for x in str(s).split(",")
                                                               if x.strip().isdigit()))
    out["samples"] = _col(t, "samples").map(units.count)
    out["per N [95% CI]"] = [
        (units.interval(v, lo, hi, units.metric_unit(k)) + f" per {per_unit(w) or 'N'}") if not blank(v) else ""
        for v, lo, hi, k, w in zip(_col(t, "per_task"), _col(t, "per_task_ci_low"), _col(t, "per_task_ci_high"),
                                   metric, _col(t, "workload", ""))]
    out["fixed cost"] = _value(t, "fixed_cost")
    out["exponent [95% CI]"] = [units.ratio(b, lo, hi) for b, lo, hi in
                                zip(_col(t, "exponent"), _col(t, "exponent_ci_low"), _col(t, "exponent_ci_high"))]
    out["noise"] = _col(t, "noise_power").map(noise_model)
    return _finish(out, _title(t, "Cost of one more N"),
                   "exponent b of value ~ N^b: 1 = linear; per N: the weighted least-squares slope of the per-N typical "
                   "values over N (t interval from 3 values of N; none from 2), weighted by the noise model the "
                   "samples show (relative: spread ~ value; additive: the same spread at every N).",
                   keep=("per N [95% CI]",))


def samples_needed(table: pd.DataFrame) -> Readable:
    """A Go-vs-Rust table with the interval's relative half-width and the samples per side it would
    take to bring it to the target (quality.samples_needed)."""
    r = comparison(table)
    keep = [c for c in ("workload", "N", "threads", "parameters", "Go", "Rust", "samples",
                        f"Go/Rust [{ci_name(table)}], verdict")
            if c in r.frame.columns]
    frame = r.frame[keep].copy()
    frame["CI half-width"] = _col(table.reset_index(drop=True), "half_width").map(lambda v: "±" + units.percent(v)
                                                                                 if not blank(v) else "").values
    frame["samples needed"] = _col(table.reset_index(drop=True), "samples_needed").map(units.count).values
    return Readable(frame, r.caption.split(". ")[0] if r.caption else "",
                    "Samples needed per side for a ±2% interval on the ratio", r.constants)


def drift(table: pd.DataFrame) -> Readable:
    t = table.reset_index(drop=True)
    if "drift" in t:
        t = t.assign(_order=~t["drift"].fillna(False).astype(bool)).sort_values("_order", kind="stable")
    out = pd.DataFrame(index=t.index)
    for c in ("workload", "lang", "variant"):
        out[c] = _col(t, c, "")
    out["N"] = _n(t)
    out["threads"] = _col(t, "threads_requested").map(threads_text)
    out["parameters"] = _col(t, "params", "").map(lambda s: _params_text(params_dict(s)))
    out["samples"] = _col(t, "samples").map(units.count)
    out["Spearman ρ"] = _col(t, "spearman_rho").map(lambda v: "" if blank(v) else f"{float(v):+.2f}")
    p, p_name = _p_column(t)
    out[p_name] = p
    out["drift"] = _col(t, "drift").map(lambda v: "yes" if v is True or v == 1 else "no")
    return _finish(out, _title(t, "Drift with the run order"), "drift: Holm-corrected p < 0.05.", keep=("drift",))


def _identity_params(key, params) -> str:
    """The parameters that make the work (from the equivalence key), not those of one sample's cell
    (a driver or pool size does not change the work)."""
    try:
        _, _, pairs = json.loads(key)
        return ", ".join(f"{k}={v}" for k, v in pairs)
    except (TypeError, ValueError):
        return _params_text(params_dict(params))


def checksums(table: pd.DataFrame) -> Readable:
    t = table.reset_index(drop=True)
    if "agree" in t:
        t = t.sort_values("agree", kind="stable")  # disagreements first
    out = pd.DataFrame(index=t.index)
    out["workload"] = _col(t, "workload", "")
    out["N"] = _n(t)
    out["parameters"] = [_identity_params(k, p) for k, p in zip(_col(t, "equiv_key", ""), _col(t, "params", ""))]
    out["languages"] = _col(t, "langs", "")
    out["cells"] = _col(t, "cells").map(units.count)
    out["samples"] = _col(t, "samples").map(units.count)
    out["checksums"] = _col(t, "checksums", "")
    out["agree"] = _col(t, "agree").map(lambda v: "yes" if v is True or v == 1 else "NO")
    return _finish(out, "Checksums per work identity", keep=("agree",))


def aa(table: pd.DataFrame) -> Readable:
    t = table.rename(columns={"a_median": "go_median", "b_median": "rust_median", "a_samples": "go_samples",
                              "b_samples": "rust_samples"})
    r = comparison(t, a="A", b="B")
    r.frame = r.frame.drop(columns=[c for c in ("A", "B") if c in r.frame])
    r.title = _title(table, "A/A check")
    return r


# --- status and failures: from the samples frame -----------------------------------------------------

CELL = ["workload", "lang", "variant", "n", "threads_requested", "params"]


def status_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Raw: samples per cell, phase and status (warm-ups included), so that no failure goes unseen."""
    cols = [*CELL, "phase", "status", "samples"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    t = df.groupby([*CELL, "phase", "status"], dropna=False, sort=False).size().rename("samples").reset_index()
    return _sort_cells(t)[cols]


def _sort_cells(t: pd.DataFrame) -> pd.DataFrame:
    """Catalogue order of workloads, then language, variant, N and parameters."""
    order = {w: i for i, w in enumerate(WORKLOADS)}
    key = t["workload"].map(lambda w: order.get(w, len(order)))
    return (t.assign(_w=key, _n=pd.to_numeric(t["n"], errors="coerce"), _p=t["params"].map(str))
            .sort_values(["_w", "lang", "variant", "_n", "_p"], kind="stable").drop(columns=["_w", "_n", "_p"]))


def failure_groups(df: pd.DataFrame) -> pd.DataFrame:
    """Raw: every sample that is not ok, grouped by cell, status and reason, with the phases and count."""
    cols = [*CELL, "status", "reason", "samples", "phases", "first_sample"]
    bad = df[df["status"] != "ok"] if not df.empty else df
    if bad.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for keys, g in bad.groupby([*CELL, "status", "reason"], dropna=False, sort=False):
        rows.append({**dict(zip([*CELL, "status", "reason"], keys)), "samples": len(g),
                     "phases": ", ".join(f"{p} {k}" for p, k in g["phase"].value_counts().items()),
                     "first_sample": g["sample_id"].iloc[0]})
    return _sort_cells(pd.DataFrame(rows, columns=cols)).reset_index(drop=True)


def status(counts: pd.DataFrame) -> Readable:
    """One row per cell, one column per status: measured samples, and '+k w' for warm-ups."""
    if counts.empty:
        return Readable(pd.DataFrame(), "no samples", "Samples by status")
    c = counts.copy()
    c["_cell"] = c[CELL].map(str).agg("|".join, axis=1)
    statuses = list(dict.fromkeys(["ok", *sorted(set(c["status"]) - {"ok"})]))
    cells = c.drop_duplicates("_cell")
    out = pd.DataFrame({"workload": cells["workload"].values, "lang": cells["lang"].values,
                        "variant": cells["variant"].values, "N": cells["n"].map(units.count).values,
                        "threads": cells["threads_requested"].map(threads_text).values,
                        "parameters": cells["params"].map(lambda s: _params_text(params_dict(s))).values})
    for s in statuses:
        texts = []
        for cell in cells["_cell"]:
            g = c[(c["_cell"] == cell) & (c["status"] == s)]
            measured = int(g.loc[g["phase"] == "measured", "samples"].sum())
            warm = int(g.loc[g["phase"] != "measured", "samples"].sum())
            texts.append((str(measured) if measured or not warm else "") + (f" +{warm} w" if warm else "")
                         if measured or warm else "")
        out[s] = [t.strip() for t in texts]
    bad = [s for s in statuses if s != "ok"]
    if bad:  # cells with a problem first
        order = out[bad].ne("").any(axis=1)
        out = pd.concat([out[order], out[~order]])
    total = int(counts["samples"].sum())
    not_ok = int(counts.loc[counts["status"] != "ok", "samples"].sum())
    note = (f"{total:,} samples, {not_ok:,} not ok. Counts of measured samples; '+k w': k warm-up samples.")
    return _finish(out, "Samples by status", note, keep=("ok",))


def failures(groups: pd.DataFrame) -> Readable:
    if groups.empty:
        return Readable(pd.DataFrame(), "every sample is ok", "Failures")
    out = pd.DataFrame(index=groups.index)
    for c in ("workload", "lang", "variant"):
        out[c] = groups[c]
    out["N"] = groups["n"].map(units.count)
    out["threads"] = groups["threads_requested"].map(threads_text)
    out["parameters"] = groups["params"].map(lambda s: _params_text(params_dict(s)))
    out["status"] = groups["status"]
    out["samples"] = groups["samples"].map(units.count) + " (" + groups["phases"] + ")"
    out["reason"] = groups["reason"].fillna("")
    return _finish(out, "Failures", f"{int(groups['samples'].sum()):,} samples not ok, by cell and reason.",
                   keep=("status", "reason"))


# --- dispatch --------------------------------------------------------------------------------------

def generic(table: pd.DataFrame, title: str = "") -> Readable:
    """Any other table: floats with 4 significant digits, p-values with 2, empty and constant columns
    into the caption."""
    out = table.copy()
    for c in out.columns:
        if c in ("p_value", "p_adjusted"):
            out[c] = out[c].map(units.p_value)
        elif pd.api.types.is_float_dtype(out[c]):
            out[c] = out[c].map(lambda v: units.significant(v, 4))
    return _finish(out, title)


def models(table: pd.DataFrame) -> Readable:
    """Another concurrency model (OS threads, unspawned futures, a one-thread runtime) against the
    tasks of a language: the threads-vs-goroutines-vs-tasks comparisons, kept out of Go vs Rust."""
    t = table.reset_index(drop=True)
    shared = shared_text(t)
    out = pd.DataFrame(index=t.index)
    _work_columns(t, out, shared)
    out["model"] = [f"{lang} {_with_params(v, _own_params(p, s))} ({m})" for lang, v, p, s, m in
                    zip(_col(t, "lang", ""), _col(t, "variant", ""), _col(t, "params", ""), shared, _col(t, "model", ""))]
    out["against"] = [f"{lang} {_with_params(v, _own_params(p, s))} ({m})" for lang, v, p, s, m in
                      zip(_col(t, "ref_lang", ""), _col(t, "ref_variant", ""), _col(t, "ref_params", ""), shared,
                          _col(t, "ref_model", ""))]
    out["pairing"] = _col(t, "pairing", "")
    out["samples"] = _samples_column(t, "samples", "ref_samples")
    out["median"] = _value(t, "median")
    out["against median"] = _value(t, "ref_median")
    ratio = f"ratio [{ci_name(t)}], verdict"
    out[ratio] = _ratio_cell(t)
    _test_columns(t, out)
    out["warning"] = _col(t, "warning", "")
    return _finish(out, _title(t, "Other models against tasks"),
                   f"ratio > 1: the model needs more than the tasks. {_level_note(t)}", keep=(ratio,))


def _pair_text(row: Mapping, prefix: str) -> str:
    """`go <variant> vs rust <variant>: ratio [CI] verdict` for one side of a robustness row."""
    ratio = row.get(f"{prefix}_ratio")
    if blank(ratio):
        return "not run"
    go = _with_params(row.get(f"{prefix}_go_variant", ""), "")
    rust = _with_params(row.get(f"{prefix}_rust_variant", ""), "")
    text = units.ratio(ratio, row.get(f"{prefix}_ratio_ci_low"), row.get(f"{prefix}_ratio_ci_high"))
    verdict = row.get(f"{prefix}_verdict")
    return f"{go} vs {rust}: {text}" + ("" if blank(verdict) else f" {verdict}")


def robustness(table: pd.DataFrame) -> Readable:
    """Per work: the verdict of the defaults, of each language's best variant of the same model,
    and whether any like-for-like pair of variants changes it."""
    t = table.reset_index(drop=True)
    out = pd.DataFrame(index=t.index)
    out["workload"] = _col(t, "workload", "")
    out["N"] = _n(t)
    out["threads"] = _col(t, "threads_requested").map(threads_text)
    out["parameters"] = _col(t, "shared_params", "").map(lambda v: "" if blank(v) else str(v).replace(",", ", "))
    rows = t.to_dict("records")
    out["defaults: Go/Rust [CI], verdict"] = [_pair_text(r, "default") for r in rows]
    out["best of each: Go/Rust [CI], verdict"] = [_pair_text(r, "best") for r in rows]
    out["pairs run"] = _col(t, "rows").map(lambda v: "" if blank(v) else units.count(v))
    out["verdicts (Go / Rust / equivalent / inconclusive)"] = [
        " / ".join(str(int(r.get(k, 0) or 0)) for k in ("go_rows", "rust_rows", "equivalent_rows", "inconclusive_rows"))
        for r in rows]
    out["depends on the variants"] = _col(t, "depends_on_variant", False).map(
        lambda v: "yes" if bool(v) and not blank(v) else "no")
    out["note"] = _col(t, "note", "")
    return _finish(out, _title(t, "Robustness of each Go vs Rust verdict across variants"),
                   "Best of each: each language's cell with the smallest median among the variants of the "
                   "defaults' model; intervals and verdicts as in the Go vs Rust table.",
                   keep=("defaults: Go/Rust [CI], verdict", "depends on the variants"))


def memory_above_baseline(table: pd.DataFrame) -> Readable:
    """Peak memory raw and above each program's baseline (its idle_tasks N = 1 peak)."""
    t = table.reset_index(drop=True)
    mib = lambda v: "" if blank(v) else units.quantity(v, "MiB")  # noqa: E731
    out = pd.DataFrame(index=t.index)
    out["workload"] = _col(t, "workload", "")
    out["N"] = _n(t)
    out["threads"] = _col(t, "threads_requested").map(threads_text)
    out["Go"] = [_with_params(v, "") for v in _col(t, "go_variant", "")]
    out["Rust"] = [_with_params(v, "") for v in _col(t, "rust_variant", "")]
    out["Go peak"] = _col(t, "go_median").map(mib)
    out["Rust peak"] = _col(t, "rust_median").map(mib)
    ratio = f"Go/Rust [{ci_name(t)}], verdict"
    out[ratio] = _ratio_cell(t)
    out["Go baseline"] = _col(t, "go_baseline_mib").map(mib)
    out["Rust baseline"] = _col(t, "rust_baseline_mib").map(mib)
    out["Go above"] = _col(t, "go_above_mib").map(mib)
    out["Rust above"] = _col(t, "rust_above_mib").map(mib)
    out["Go/Rust above baseline"] = _col(t, "ratio_above_baseline").map(
        lambda v: "within a baseline" if blank(v) else units.ratio(v, np.nan, np.nan))
    return _finish(out, "Peak memory, raw and above each program's baseline",
                   "Baseline: the program's idle_tasks peak at N = 1 (runtime, libraries, the binary); "
                   "\"within a baseline\": one side used no more than its baseline.",
                   keep=(ratio, "Go/Rust above baseline"))


def idle_wait_modes(table: pd.DataFrame) -> Readable:
    """Idle tasks sleeping (the posts' setup) against released after the last spawn: peak RSS."""
    t = table.reset_index(drop=True)
    mib = lambda v: "" if blank(v) else units.quantity(v, "MiB")  # noqa: E731
    sec = lambda v: "" if blank(v) else units.quantity(v, "s")  # noqa: E731
    out = pd.DataFrame(index=t.index)
    out["lang"] = _col(t, "lang", "")
    out["variant"] = _col(t, "variant", "")
    out["N"] = _n(t)
    out["threads"] = _col(t, "threads_requested").map(threads_text)
    out["samples (sleep / release)"] = [f"{units.count(a)} / {units.count(b)}"
                                        for a, b in zip(_col(t, "sleep_samples"), _col(t, "release_samples"))]
    out["peak, sleeping"] = _col(t, "sleep_median_mib").map(mib)
    out["peak, released"] = _col(t, "release_median_mib").map(mib)
    out["sleep/release [95% CI]"] = [units.ratio(r, lo, hi) for r, lo, hi in
                                     zip(_col(t, "ratio"), _col(t, "ratio_ci_low"), _col(t, "ratio_ci_high"))]
    out["time, sleeping"] = _col(t, "sleep_elapsed_s").map(sec)
    out["time, released"] = _col(t, "release_elapsed_s").map(sec)
    out["pairing"] = _col(t, "pairing", "")
    out["warning"] = _col(t, "warning", "")
    return _finish(out, "Idle tasks: peak memory sleeping vs released after the last spawn",
                   "Sleeping samples count only where every task was alive at once.",
                   keep=("sleep/release [95% CI]",))


FORMATTERS = {
    "go_vs_rust_": comparison, "variants_": variants, "summary_": summary, "per_task_": per_task,
    "drift_": drift, "aa_": aa, "samples_needed_": samples_needed, "checksums": checksums, "status": status, "failures": failures,
    "models_": models, "robustness_": robustness, "memory_above_baseline": memory_above_baseline,
    "idle_wait_modes": idle_wait_modes,
}


def readable(table: pd.DataFrame, name: str = "") -> Readable:
    """The reading form of an analysis table, chosen by its name (as exported: `go_vs_rust_elapsed_s`,
    `summary_peak_rss_mib`, `status`, ...); other tables get the generic formatting."""
    for prefix, fn in FORMATTERS.items():
        if name == prefix or (prefix.endswith("_") and name.startswith(prefix)):
            return fn(table)
    return generic(table, name.replace("_", " "))
