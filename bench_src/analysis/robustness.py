"""Does a Go-vs-Rust verdict depend on the variants chosen?

For every workload, N, threads, arm and shared parameters of a Go-vs-Rust table (like for like):
- the verdict for default vs default (each language's default variant and parameters);
- the verdict for best vs best: each language's fastest (smallest median) cell among the cells
  of the defaults' model, i.e. the best each language offers for that way of running the work;
- whether some pair of like-for-like cells reverses the verdict (one row says Go, another Rust).
A headline built from this table says where the answer depends on the variant choice.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import compare as compare_mod
from . import rules

GROUP = ["workload", "n", "threads_requested", "arm", "shared_params"]
# each side's columns of the Go-vs-Rust row it picks, the threads its programs ran with among them (the
# table's `go_threads` and `rust_threads`: stats.threads_used)
_SIDE = ["go_variant", "go_params", "go_threads", "rust_variant", "rust_params", "rust_threads", "ratio",
         "ratio_ci_low", "ratio_ci_high", "verdict", "verdict_kind"]


def _pick(row: pd.Series | None, prefix: str) -> dict:
    if row is None:
        return {f"{prefix}_{k}": np.nan for k in _SIDE}
    return {f"{prefix}_{k}": row.get(k, np.nan) for k in _SIDE}


def robustness(df: pd.DataFrame | None = None, metric: str = "elapsed_s", table: pd.DataFrame | None = None,
               margin: float = rules.MARGIN, design=None) -> pd.DataFrame:
    """One row per work (workload, N, threads requested, arm, shared parameters) of the Go-vs-Rust
    table (computed from `df` unless given): default vs default, best vs best (each with the threads
    its two programs ran with, the table's), the counts of row verdicts (`untested_rows`: pairs that
    could not be tested, counted apart from `inconclusive_rows`), `reverses` (some rows say
    Go, others Rust) and `depends_on_variant` (reverses, or default and best disagree)."""
    if table is None:
        table = compare_mod.compare(df, metric, margin=margin, design=design)
    pcols = [c for c in table.columns if c.startswith("p_") and c not in ("p_value", "p_adjusted")]
    cols = [*GROUP, *pcols, "metric", "rows", *(f"default_{k}" for k in _SIDE), *(f"best_{k}" for k in _SIDE),
            "go_rows", "rust_rows", "equivalent_rows", "inconclusive_rows", "untested_rows", "reverses",
            "depends_on_variant", "note"]
    if table.empty:
        return pd.DataFrame(columns=cols)
    t = table.copy()
    t["threads_requested"] = t["threads_requested"].astype(object).where(t["threads_requested"].notna(), None)
    out = []
    for key, g in t.groupby(GROUP, dropna=False, sort=True):
        defaults = g[g["go_default"].astype(bool) & g["rust_default"].astype(bool)]
        default = defaults.iloc[0] if not defaults.empty else None
        best = None
        # the defaults' model; without a default pair (an article preset's variants), the one model
        # every pair of the group has, if they share one
        models = g["go_model"].dropna().unique()
        model = default["go_model"] if default is not None else (models[0] if len(models) == 1 else None)
        same_model = g[g["go_model"] == model] if model is not None else g.iloc[0:0]
        if not same_model.empty:
            go_best = same_model.sort_values(["go_median", "go_variant", "go_params"]).iloc[0]
            rust_best = same_model.sort_values(["rust_median", "rust_variant", "rust_params"]).iloc[0]
            hit = same_model[(same_model["go_variant"] == go_best["go_variant"]) &
                             (same_model["go_params"] == go_best["go_params"]) &
                             (same_model["rust_variant"] == rust_best["rust_variant"]) &
                             (same_model["rust_params"] == rust_best["rust_params"])]
            best = hit.iloc[0] if not hit.empty else None
        kinds = g["verdict_kind"].value_counts()
        # a pair that could not be tested (no pairs of values that count) reads inconclusive but
        # measured nothing: counted apart, as the findings and the Method count it
        untested = int(compare_mod.untested(g).sum())
        reverses = bool(kinds.get("a", 0) and kinds.get("b", 0))
        differ = (default is not None and best is not None and default["verdict_kind"] != best["verdict_kind"])
        notes = []
        if default is None:
            notes.append("no default-vs-default row")
        if reverses:
            notes.append(f"{int(kinds.get('a', 0))} pairs say Go, {int(kinds.get('b', 0))} say Rust")
        if differ:
            notes.append(f"default: {default['verdict']}; best: {best['verdict']}")
        first = g.iloc[0]
        out.append({**dict(zip(GROUP, key)), **{c: first[c] for c in pcols}, "metric": first["metric"],
                    "rows": len(g), **_pick(default, "default"), **_pick(best, "best"),
                    "go_rows": int(kinds.get("a", 0)), "rust_rows": int(kinds.get("b", 0)),
                    "equivalent_rows": int(kinds.get("equivalent", 0)),
                    "inconclusive_rows": int(kinds.get("inconclusive", 0)) - untested, "untested_rows": untested,
                    "reverses": reverses, "depends_on_variant": bool(reverses or differ), "note": "; ".join(notes)})
    return pd.DataFrame(out, columns=cols)


def row_flags(table: pd.DataFrame, rob: pd.DataFrame) -> pd.Series:
    """For each row of a Go-vs-Rust table, what its work's robustness row says: "depends on the
    variants" (some pair reverses the verdict, or the best of each disagrees with the defaults),
    "same verdict, k pairs" when several pairs of variants were run and every one has the same
    verdict, "no reversal, k pairs (...)" when their verdicts differ without one saying Go and
    another Rust (the counts of each verdict in brackets); where the run took one pair, "defaults
    only" when that pair is the two defaults, else "one pair, not the defaults" (an article
    preset's variants, a parameter value only some variants ran with)."""
    if table.empty or rob.empty:
        return pd.Series("", index=table.index, dtype=object)

    def key(frame: pd.DataFrame) -> list[tuple]:
        return [tuple("" if (v is None or (isinstance(v, float) and np.isnan(v))) else str(v) for v in row)
                for row in frame[GROUP].itertuples(index=False)]

    flags = {}
    for k, r in zip(key(rob), rob.itertuples(index=False)):
        if r.depends_on_variant:
            flags[k] = "depends on the variants"
        elif r.rows > 1:
            counts = {"Go": r.go_rows, "Rust": r.rust_rows, "equivalent": r.equivalent_rows,
                      "inconclusive": r.inconclusive_rows, compare_mod.NOT_TESTED: getattr(r, "untested_rows", 0)}
            seen = {v: int(c) for v, c in counts.items() if c}
            flags[k] = (f"same verdict, {int(r.rows)} pairs" if len(seen) == 1 else
                        f"no reversal, {int(r.rows)} pairs ({', '.join(f'{c} {v}' for v, c in seen.items())})")
        elif isinstance(getattr(r, "default_go_variant", None), str):  # the one pair run is the defaults
            flags[k] = "defaults only"
        else:
            flags[k] = "one pair, not the defaults"
    return pd.Series([flags.get(k, "") for k in key(table)], index=table.index, dtype=object)


def headline(rob: pd.DataFrame) -> list[str]:
    """One sentence per workload (and metric): the default-vs-default verdicts by N, and where
    the verdict depends on the variant choice."""
    lines = []
    if rob.empty:
        return lines
    for (w, metric), g in rob.groupby(["workload", "metric"], sort=True):
        by_verdict: dict[str, list[str]] = {}
        for r in g.sort_values("n").itertuples():
            label = f"N={int(r.n)}" + (f" [{r.shared_params}]" if r.shared_params else "") + (
                f" arm {r.arm}" if r.arm else "")
            verdict = ("not measured with the defaults" if not isinstance(r.default_verdict, str)
                       else f"{compare_mod.NOT_TESTED} (no pair of values counts)" if pd.isna(r.default_ratio) else r.default_verdict)
            by_verdict.setdefault(verdict, []).append(label)
        text = f"{w} ({metric}), default variants: " + "; ".join(f"{v} at {', '.join(ns)}" for v, ns in by_verdict.items())
        dep = g[g["depends_on_variant"]]
        if dep.empty:
            text += ". No like-for-like variant pair changes this."
        else:
            text += ". The verdict depends on the variant choice at " + "; ".join(
                f"N={int(r.n)}" + (f" [{r.shared_params}]" if r.shared_params else "") + f" ({r.note})"
                for r in dep.itertuples()) + "."
        lines.append(text)
    return lines
