"""Comparison tables for reading: Go vs Rust, variants against their default, other models against
tasks, the robustness of each verdict across variants, the A/A check, the samples a target
interval needs, and peak memory above each program's baseline."""
from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from ...analysis import rules
from ...analysis.compare import NOT_TESTED
from .. import units
from .formatting import (blank, ci_name, column_of, finish, level_note, metric_values, n_text, own_params,
                         paired_columns, params_dict, params_text, ratio_cells, ratio_note, samples_column, shared_text, side_columns,
                         test_columns, threads_cells, title_of, with_params, work_columns)
from .markup import Readable


def comparison(table: pd.DataFrame, a: str = "Go", b: str = "Rust") -> Readable:
    """Go vs Rust (one row per pair of cells doing the same work)."""
    t = table.reset_index(drop=True)
    shared = shared_text(t)
    out = pd.DataFrame(index=t.index)
    work_columns(t, out, shared)
    side_columns(t, out, shared, a, b)
    if "go_model" in t or "rust_model" in t:
        out["model"] = [gm if gm == rm else f"{gm} / {rm}"
                        for gm, rm in zip(column_of(t, "go_model", ""), column_of(t, "rust_model", ""))]
    if "pairing" in t:
        out["pairing"] = t["pairing"]
    out["samples"] = samples_column(t, "go_samples", "rust_samples")
    out[f"{a} median"] = metric_values(t, "go_median")
    out[f"{b} median"] = metric_values(t, "rust_median")
    ratio = f"{a}/{b} [{ci_name(t)}], verdict"
    out[ratio] = ratio_cells(t)
    test_columns(t, out)
    if "robustness" in t:
        out["across variants"] = column_of(t, "robustness", "")
    out["warning"] = column_of(t, "warning", "")
    return finish(out, title_of(t, f"{a} vs {b}"), f"{a}/{b} < 1: {a} needs less. {ratio_note(t, f'{a}/{b}')} {level_note(t)}",
                  keep=(ratio,))


def variants(table: pd.DataFrame) -> Readable:
    """A variant (or parameter set) against its language's default."""
    t = table.reset_index(drop=True)
    out = pd.DataFrame(index=t.index)
    out["workload"] = column_of(t, "workload", "")
    out["lang"] = column_of(t, "lang", "")
    out["N"] = n_text(t)
    out["threads"] = threads_cells(t)
    out["arm"] = column_of(t, "arm", "")

    def differing(params, base) -> str:
        p, q = params_dict(params), params_dict(base)
        return params_text({k: v for k, v in p.items() if q.get(k) != v})

    out["variant"] = [with_params(v, differing(p, bp)) for v, p, bp in
                      zip(column_of(t, "variant", ""), column_of(t, "params", ""), column_of(t, "baseline_params", ""))]
    out["baseline"] = [with_params(v, differing(bp, p)) for v, p, bp in
                       zip(column_of(t, "baseline_variant", ""), column_of(t, "params", ""), column_of(t, "baseline_params", ""))]
    out["samples"] = [f"{units.count(s)} / {units.count(bs)}" for s, bs in
                      zip(column_of(t, "samples"), column_of(t, "baseline_samples"))]
    out["median"] = metric_values(t, "median")
    out["baseline median"] = metric_values(t, "baseline_median")
    ratio = f"ratio [{ci_name(t)}], verdict"
    out[ratio] = ratio_cells(t)
    test_columns(t, out)  # p, effect size and MDE, as the Go vs Rust and models tables
    out["warning"] = column_of(t, "warning", "")
    return finish(out, title_of(t, "Variants against the language's default"),
                   f"ratio < 1: the variant needs less. {ratio_note(t, 'ratio')} {level_note(t)}"
                   f"{_in_both(t, 'models')}", keep=(ratio,))


def models(table: pd.DataFrame) -> Readable:
    """Another concurrency model (OS threads, unspawned futures, a one-thread runtime) against the
    tasks of a language: the threads-vs-goroutines-vs-tasks comparisons, kept out of Go vs Rust."""
    t = table.reset_index(drop=True)
    shared = shared_text(t)
    out = pd.DataFrame(index=t.index)
    work_columns(t, out, shared)
    out["model"] = [f"{lang} {with_params(v, own_params(p, s))} ({m})" for lang, v, p, s, m in
                    zip(column_of(t, "lang", ""), column_of(t, "variant", ""), column_of(t, "params", ""), shared, column_of(t, "model", ""))]
    out["against"] = [f"{lang} {with_params(v, own_params(p, s))} ({m})" for lang, v, p, s, m in
                      zip(column_of(t, "ref_lang", ""), column_of(t, "ref_variant", ""), column_of(t, "ref_params", ""), shared,
                          column_of(t, "ref_model", ""))]
    out["pairing"] = column_of(t, "pairing", "")
    out["samples"] = samples_column(t, "samples", "ref_samples")
    out["median"] = metric_values(t, "median")
    out["against median"] = metric_values(t, "ref_median")
    ratio = f"ratio [{ci_name(t)}], verdict"
    out[ratio] = ratio_cells(t)
    test_columns(t, out)
    out["warning"] = column_of(t, "warning", "")
    return finish(out, title_of(t, "Other models against tasks"),
                   f"ratio > 1: the model needs more than the tasks. {ratio_note(t, 'ratio')} {level_note(t)}"
                   f"{_in_both(t, 'variants')}",
                   keep=(ratio,))


def _in_both(t: pd.DataFrame, other: str) -> str:
    """The caption's note on the comparisons that the models and the variants families share (another
    model of one language against that language's default tasks): the same samples, adjusted in each
    table over its own family, so the same comparison shows two intervals.  Counted from the rows the
    caption is above: those whose `also_in` (compare.ALSO_IN, set where the other family makes the
    same comparison) names `other`."""
    k = int((column_of(t, "also_in", "").astype(str) == other).sum())
    if not k:
        return ""
    rows = "row compares" if k == 1 else "rows compare"
    return (f" {k} {rows} another model with its language's default tasks and also sit{'s' if k == 1 else ''} in the "
            f"{other} table, where the interval is adjusted over that family: the same samples, a different interval.")


def _pair_text(row: Mapping, prefix: str) -> str:
    """`go <variant> vs rust <variant>: ratio [CI] verdict` for one side of a robustness row; where it
    has none, why: the defaults were not both run at these parameters (the pairs run are other
    variants, counted beside it), or no pair holds each language's best of one model."""
    ratio = row.get(f"{prefix}_ratio")
    if blank(ratio) and not blank(row.get(f"{prefix}_go_variant")):  # run, but no pair counts: untested
        return (f"{with_params(row.get(f'{prefix}_go_variant', ''), '')} vs "
                f"{with_params(row.get(f'{prefix}_rust_variant', ''), '')}: not tested (the comparison's warning "
                "says why)")
    if blank(ratio):
        return "no default pair run" if prefix == "default" else "no pair of each language's best of one model"
    go = with_params(row.get(f"{prefix}_go_variant", ""), "")
    rust = with_params(row.get(f"{prefix}_rust_variant", ""), "")
    text = units.ratio(ratio, row.get(f"{prefix}_ratio_ci_low"), row.get(f"{prefix}_ratio_ci_high"))
    verdict = row.get(f"{prefix}_verdict")
    return f"{go} vs {rust}: {text}" + ("" if blank(verdict) else f" {verdict}")


def _robustness_threads(t: pd.DataFrame) -> pd.Series:
    """Per work of the robustness table: the threads the programs of its default pair ran with, as a
    comparison table's threads cell writes them (`threads_cells`: "2", "Go 2, Rust 1 (2 requested)");
    those of the best pair beside them where they differ ("defaults: ...; best: ..."); the request
    where neither pair says."""
    def pair(prefix: str) -> pd.Series:
        sides = pd.DataFrame({"threads_requested": column_of(t, "threads_requested"),
                              **{f"{lang}_{k}": column_of(t, f"{prefix}_{lang}_{k}")
                                 for lang in ("go", "rust") for k in ("threads", "variant")}}, index=t.index)
        return threads_cells(sides)

    def known(prefix: str) -> pd.Series:
        return ~(column_of(t, f"{prefix}_go_threads").map(blank) & column_of(t, f"{prefix}_rust_threads").map(blank))

    default, best = pair("default"), pair("best")
    has_default, has_best = known("default"), known("best")
    return pd.Series([b if hb and not hd else d if not hb or b == d else f"defaults: {d}; best: {b}"
                      for d, b, hd, hb in zip(default, best, has_default, has_best)], index=t.index, dtype=object)


def robustness(table: pd.DataFrame) -> Readable:
    """Per work: the verdict of the defaults, of each language's best variant of the same model,
    and whether any like-for-like pair of variants changes it."""
    t = table.reset_index(drop=True)
    out = pd.DataFrame(index=t.index)
    out["workload"] = column_of(t, "workload", "")
    out["N"] = n_text(t)
    out["threads"] = _robustness_threads(t)
    out["arm"] = column_of(t, "arm", "")
    out["parameters"] = column_of(t, "shared_params", "").map(lambda v: "" if blank(v) else str(v).replace(",", ", "))
    rows = t.to_dict("records")
    out["defaults: Go/Rust [CI], verdict"] = [_pair_text(r, "default") for r in rows]
    out["best of each: Go/Rust [CI], verdict"] = [_pair_text(r, "best") for r in rows]
    out["pairs run"] = column_of(t, "rows").map(lambda v: "" if blank(v) else units.count(v))
    counts = ("go_rows", "rust_rows", "equivalent_rows", "inconclusive_rows")
    untested = any(int(r.get("untested_rows", 0) or 0) for r in rows)  # the fifth count only where a pair has one
    header = "verdicts (Go / Rust / equivalent / inconclusive" + (f" / {NOT_TESTED})" if untested else ")")
    out[header] = [" / ".join(str(int(r.get(k, 0) or 0)) for k in (*counts, *(("untested_rows",) if untested else ())))
                   for r in rows]
    out["depends on the variants"] = column_of(t, "depends_on_variant", False).map(
        lambda v: "yes" if bool(v) and not blank(v) else "no")
    out["note"] = column_of(t, "note", "")
    return finish(out, title_of(t, "Robustness of each Go vs Rust verdict across variants"),
                   "Best of each: each language's cell with the smallest median among the variants of the "
                   "defaults' model; intervals and verdicts as in the Go vs Rust table.",
                   keep=("defaults: Go/Rust [CI], verdict", "depends on the variants"))


def aa(table: pd.DataFrame) -> Readable:
    """An A/A run: arm A against arm B of each cell (one program, one language and variant, the same
    arguments), named by its language and variant."""
    t = table.reset_index(drop=True)
    shared = shared_text(t)
    out = pd.DataFrame(index=t.index)
    work_columns(t, out, shared)
    out["lang"] = column_of(t, "lang", "")
    out["variant"] = [with_params(v, own_params(p, s))
                      for v, p, s in zip(column_of(t, "variant", ""), column_of(t, "params", ""), shared)]
    ratio = paired_columns(t, out, "a", "b", "A", "B", "A/B")
    out["warning"] = column_of(t, "warning", "")
    return finish(out, title_of(t, "A/A check"), f"A/B < 1: arm A needs less. {ratio_note(t, 'A/B')} {level_note(t)}",
                  keep=(ratio,))


def samples_needed(table: pd.DataFrame) -> Readable:
    """A Go-vs-Rust table with the interval's relative half-width and the samples per side it would
    take to bring it to the target (quality.samples_needed)."""
    r = comparison(table)
    keep = [c for c in ("workload", "N", "threads", "arm", "parameters", "Go", "Rust", "samples",
                        f"Go/Rust [{ci_name(table)}], verdict")
            if c in r.frame.columns]
    frame = r.frame[keep].copy()
    # the half-width as the factor either way it stands for, written as the MDE column writes one
    frame["CI half-width"] = column_of(table.reset_index(drop=True), "half_width").map(
        lambda v: "" if blank(v) else units.detectable(v)).values
    frame["samples needed"] = column_of(table.reset_index(drop=True), "samples_needed").map(units.count).values
    first = r.caption.split(". ")[0] + ". " if r.caption else ""
    targets = column_of(table, "target_half_width").dropna().unique()
    target = f"{float(targets[0]) * 100:g}%" if len(targets) == 1 else "the equivalence margin"
    return Readable(frame, first + f"Samples needed: the pairs (unpaired: samples per side) at which this "
                    f"interval, at the same level, would be ±{target} if its half-width shrank as 1 / sqrt(n) with "
                    "the test's critical value held where it is and the spread as measured; that value falls as "
                    "pairs are added (most for Student's t from few pairs), so, the spread staying, at most this "
                    "many would be needed.",
                    f"Pairs (unpaired: samples per side) needed for a ±{target} interval on the ratio", r.constants)


def _bound(v: float) -> str:
    """One end of an interval on a ratio of amounts: infinite ends as such, the others kept on their
    side of 0 (an amount told from 0 or not) and of 1 (equal amounts)."""
    v = float(v)
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    return units.beside(v, (0.0, 1.0))


def _above_ratio(row: Mapping) -> str:
    """A ratio of amounts above baseline with the whole of Fieller's set (memory.above_baseline):
    bounded, '1.52 [1.21, 1.90]' (with ', not resolved' where it holds 0: Go's amount is not told
    from 0, and an amount, so the ratio, may be below 0); unbounded where Rust's amount is not told
    from 0, as the set is, never one ray of it: two rays, '1.52, not resolved: unbounded
    (-∞, -7.05] ∪ [1.07, ∞)', or the whole line, 'not resolved: every ratio (-∞, ∞)' (no estimate
    shown: none is excluded); 'not resolved (no interval)' where there is none; and where a side is
    too close to its baseline for a ratio, 'Rust below its baseline', 'Go within a page of its
    baseline'."""
    v, lo, hi = row.get("ratio_above_baseline"), row.get("ratio_above_ci_low"), row.get("ratio_above_ci_high")
    # a side without a peak that counts (every sample failed, or none held its N tasks at once) has
    # no amount above its baseline: no ratio, and not because a side is within its baseline
    missing = [side for side, lang in (("Go", "go"), ("Rust", "rust"))
               if f"{lang}_median" in row and blank(row[f"{lang}_median"])]
    if blank(v) and missing:
        return (f"no ratio: no peak of {' or '.join(missing)} counts (the Go vs Rust table's warning says why)")
    if blank(v):
        return "; ".join(_near_baseline(row, lang) for lang in ("go", "rust") if _near_baseline(row, lang)) \
            or "within a baseline"
    point = units.beside(float(v), (0.0, 1.0))
    if blank(lo) or blank(hi):
        return f"{point}, not resolved (no interval)"
    lo, hi = float(lo), float(hi)
    if math.isinf(lo) and math.isinf(hi):  # no ratio is excluded: the estimate says nothing
        return "not resolved: every ratio (-∞, ∞)"
    if math.isinf(lo) or math.isinf(hi):  # the set reaches infinity on both sides: two rays
        a, b = row.get("ratio_above_gap_low"), row.get("ratio_above_gap_high")
        rays = "" if blank(a) or blank(b) else f" (-∞, {_bound(a)}] ∪ [{_bound(b)}, ∞)"
        return f"{point}, not resolved: unbounded{rays}"
    text = f"{point} [{_bound(lo)}, {_bound(hi)}]"
    resolved = row.get("above_resolved")
    return text if (not blank(resolved) and bool(resolved)) else f"{text}, not resolved"


def _near_baseline(row: Mapping, lang: str) -> str:
    """Why one side has no ratio above its baseline: its amount lies below the baseline (its
    interval's upper end under 0), is under 0 without that (not above it), or within a page above
    it; '' where it is a page or more above."""
    page = rules.resolution("peak_rss_mib")
    amount, high = row.get(f"{lang}_above_mib"), row.get(f"{lang}_above_ci_high")
    if blank(amount) or float(amount) >= page:
        return ""
    side = "Go" if lang == "go" else "Rust"
    if not blank(high) and float(high) < 0:
        return f"{side} below its baseline"
    return f"{side} not above its baseline" if float(amount) < 0 else f"{side} within a page of its baseline"


def _amount(row: Mapping, lang: str) -> str:
    return units.interval(row.get(f"{lang}_above_mib"), row.get(f"{lang}_above_ci_low"),
                          row.get(f"{lang}_above_ci_high"), "MiB", edges=(0.0,))


def memory_above_baseline(table: pd.DataFrame) -> Readable:
    """Peak memory raw and above each language's baseline (its default idle_tasks program's peak at
    N = 1): the two amounts and their ratio with descriptive intervals, and where that ratio is not
    resolved (memory.above_baseline)."""
    t = table.reset_index(drop=True)
    mib = lambda v: "" if blank(v) else units.quantity(v, "MiB")  # noqa: E731
    shared = shared_text(t)
    out = pd.DataFrame(index=t.index)
    work_columns(t, out, shared)  # the parameters too: rows of one workload and N differ by them alone
    side_columns(t, out, shared)
    out["Go peak"] = column_of(t, "go_median").map(mib)
    out["Rust peak"] = column_of(t, "rust_median").map(mib)
    ratio = f"Go/Rust [{ci_name(t)}], verdict"
    out[ratio] = ratio_cells(t)
    out["Go baseline"] = column_of(t, "go_baseline_mib").map(mib)
    out["Rust baseline"] = column_of(t, "rust_baseline_mib").map(mib)
    levels = pd.to_numeric(column_of(t, "above_ci_level"), errors="coerce").dropna().unique()
    level = units.percent(float(levels[0]), digits=2) if len(levels) == 1 else ""
    ci = f"{level} CI" if level else "CI"
    # blank where no amount was read off blocks (a baseline's own row, or no interval: the note says why)
    out["blocks"] = column_of(t, "above_blocks").map(lambda v: "" if blank(v) or not v else units.count(v))
    rows = t.to_dict("records")
    out[f"Go above [{ci}]"] = [_amount(r, "go") for r in rows]
    out[f"Rust above [{ci}]"] = [_amount(r, "rust") for r in rows]
    above = f"Go/Rust above baseline [{ci}]"
    out[above] = [_above_ratio(r) for r in rows]
    out["note"] = column_of(t, "above_note", "")
    page = units.quantity(rules.resolution("peak_rss_mib"), "MiB")
    return finish(out, "Peak memory, raw and above each program's baseline",
                  "Baseline: the median peak of the language's default idle_tasks program at N = 1 (wait=release: "
                  "its runtime, libraries and binary), the same for every row of that language, not each "
                  "program's own (a program without that runtime can sit below it). "
                  "Above: in each of the blocks that hold both programs and both baselines (\"blocks\"), a "
                  "program's peak less its baseline's; the mean over those blocks, with its "
                  f"{level or 'stated'} interval (Student's t). {ratio_note(t, 'Go/Rust', 'the median peaks shown')} "
                  "Go/Rust above baseline: the ratio of the two means, "
                  "with Fieller's interval at the same level: every ratio the blocks do not tell from the one "
                  "measured. These intervals describe; they belong to no family and decide no verdict. "
                  "\"not resolved\": the interval reaches 0 (Go's amount is not told from 0), the set is "
                  "\"unbounded\" (Rust's is not: two rays, shown both, or every ratio), or there is none; such a "
                  "ratio is no finding, whatever its value, and a "
                  "resolved one whose amounts are barely told from 0 misses its true value more often than "
                  "the level says (docs/statistics.md). "
                  f"No ratio where a side is \"within a page of its baseline\" (less than a page, {page}, the "
                  "grid peak RSS is counted on, above it), \"below its baseline\" (its amount's interval "
                  "lies under 0: a program without that runtime, as cpu_loops, can sit below it) or \"not above "
                  "its baseline\" (under 0, its interval reaching 0).",
                  keep=(ratio, above))
