"""Published figures beside ours: the 2022 article's tables (`article_2022.csv`) and the related
posts' numbers (`other_posts.csv`), tracked in data/reference/ (its README names every source).

The reproduction table has one row per cell of the article's table and metric (time, memory):

- the article's Go/Rust ratio and its **claim**: "Go" or "Rust" where the ratio differs from 1 by
  more than the article itself could resolve, else none. What it could resolve comes from its own
  data: the Rust program was identical in its two tables, so the two Rust figures of a cell are a
  repeated measurement; the largest difference between them over a workload's N (beyond the
  rounding of the printed values) is that workload's noise, and a cell's threshold is that noise
  plus the rounding of the cell's own two figures;
- our verdict with **the article's settings** (its collection, kernel, driver, journal, pool and
  retained contents, equal work otherwise: the catalogue's `article` preset) and with **each
  language's defaults**, each a paired comparison of our samples; each column and metric is one
  family decided by the rule of every table (compare.decide_family: false discovery rate over
  the table's rows, the run's looks, intervals at the level whose exclusion of 1 is the verdict),
  so sampling until decided does not inflate the error;
- the **outcome** of the claim under each: reproduced, reversed, not reproduced (we find them
  equivalent, and the article's difference is at least the equivalence margin), unresolved
  (inconclusive, or equivalent where the article's difference lies within the margin, which an
  equivalence cannot refute), or, where the article claimed nothing, agrees or a
  difference it could not resolve; not tested where too few pairs count (no interval: as every
  comparison table reads such a row), failed or not counted where no sample of a side can be
  compared; an outcome judges the claim's direction only, and beside it
  the article's own ratio lies inside, below or above our interval (`article_against`): whether
  its size holds too;
- the **settings' effect**: the ratio of the two Go/Rust ratios (article's settings over defaults),
  paired per block, with its 95% interval;
- the **cause** where the settings changed the Go/Rust ratio (that interval excludes 1) or the
  article's settings failed, or where the article's claim is not reproduced even with its
  settings, stated from measured cells of the same run: each language's own ratio of the
  article's settings to its defaults says which side the settings moved, and the workload's
  known differences (unequal work, configuration, platform) say why.  Comparing the ratios, not
  the outcomes, states a cause where both settings agree with the article by different amounts
  (sleep at N = 100,000: both "Rust faster", 4.2x and 1.02x), and none where two outcomes differ
  only by noise (one just significant, the other just not).

A workload run at several core counts (a plan with `cores`: the article-full profile pins its
task workloads to 1 and to 2 cores) gives one row per article cell, metric and **core count**, each
decided in the same family as the other rows; `across_cores` then says, per article cell and
metric, whether the claim holds at every core count ("holds at both", "holds at 1 of 2 core
counts" naming where) with the article's settings and with the defaults.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import digits, paths
from ..catalogue import LANGS, WORKLOADS
from ..statuses import OK
from . import compare, multiplicity, paired, quality, rules
from .families import with_param_columns
from .validity import counted, memory_excluded_summary
from ..plan import comparisons

REFERENCE = paths.DATA / "reference"
FINAL_TABLE = "go_channel_per_task"  # the article's final table (one channel per goroutine)
REPEAT_TABLE = "go_single_channel"  # its first table: the same Rust program measured again
METRICS = {"time": ("min_wall_s", "elapsed_s"), "memory": ("max_mem_mb", "peak_rss_mib")}
LABELS = ("ours_article", "ours_default")  # our comparison with the article's settings, with the defaults

# Why the article's settings and the defaults differ, per workload: the kind of cause and what it is.
CAUSES = {
    "sleep": ("unequal work",
              "the article's kernel is a float loop whose result is never used: Rust's compiler deletes it, "
              "Go keeps an empty counting loop, so with the article's settings Go does work Rust does not; the "
              "article's Go also waits on a channel per goroutine where the default waits on a WaitGroup, and no "
              "cell here separates the two changes: the effect is of both together"),
    "files_read": ("configuration",
                   "the article's Go collects on a channel per goroutine, its Rust reads through tokio::fs, and both "
                   "sides keep every file's content; the defaults wait on a WaitGroup, read with std::fs inside one "
                   "spawn_blocking per task (tokio's advice) and keep a digest"),
    "files_rw": ("configuration",
                 "the article's Go collects on a channel per goroutine, its Rust opens, writes and reads through "
                 "tokio::fs (a blocking-pool hop per call), and both keep every file's content; the defaults wait on "
                 "a WaitGroup and do each task's I/O in one spawn_blocking"),
    "sqlite": ("configuration",
               "the article's Go ran SQLite with the rollback journal and an unlimited pool and collected on a "
               "channel per goroutine, its Rust with WAL and a pool of 10; the defaults give both WAL and the same "
               "pool, and Go a WaitGroup"),
    "mysql": ("configuration",
              "the article's settings: a channel per goroutine and 151 connections on both sides; the defaults: "
              "a WaitGroup and 64"),
}
PLATFORM = {
    "files_rw": ("platform not reproducible here",
                 "on Linux the article's Go opened the file read-only, its append failed and the error was ignored, "
                 "so it never appended; on Windows, where the article was measured, it most likely did. Our programs "
                 "append in both languages on every platform, so the article's Go work cannot be rebuilt here"),
}
VERSIONS = ("platform and versions",
            "not reproduced even with the article's settings: it was measured on Windows with go1.18.3, rustc 1.62.0 "
            "and tokio 1.19 as the minimum of 5 runs (memory polled), ours on this machine with the versions in "
            "the Method, as paired medians")


def reference_dir() -> Path:
    """data/reference/: the published figures, tracked with the repository."""
    return REFERENCE


def article_table() -> pd.DataFrame:
    return pd.read_csv(reference_dir() / "article_2022.csv")


def other_posts() -> pd.DataFrame:
    return pd.read_csv(reference_dir() / "other_posts.csv")


def _half_unit(values: pd.Series) -> float:
    """Half the last printed digit of a column (the rounding of its values)."""
    decimals = max((len(str(v).split(".")[1]) if "." in str(v) else 0) for v in values)
    return 0.5 * 10.0 ** -decimals


def article_ratios(table: str = FINAL_TABLE) -> pd.DataFrame:
    """The article's Go/Rust ratios per workload and N, from one of its two tables."""
    a = article_table()
    a = a[a["table"] == table]
    go = a[a["lang"] == "go"].set_index(["workload", "n"])
    rust = a[a["lang"] == "rust"].set_index(["workload", "n"])
    out = pd.DataFrame({
        "article_go_s": go["min_wall_s"], "article_rust_s": rust["min_wall_s"],
        "article_go_mb": go["max_mem_mb"], "article_rust_mb": rust["max_mem_mb"],
    }).reset_index()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["article_time_ratio"] = out["article_go_s"] / out["article_rust_s"].replace(0, np.nan)
        out["article_mem_ratio"] = out["article_go_mb"] / out["article_rust_mb"].replace(0, np.nan)
    out["article_table"] = table
    return out


def resolution() -> pd.DataFrame:
    """Per workload and metric, what the article could resolve: the largest difference between
    its two measurements of the same Rust program (log scale, beyond the rounding of the printed
    figures), over the workload's N."""
    a = article_table()
    rows = []
    for metric, (col, _) in METRICS.items():
        half = {t: _half_unit(a.loc[a["table"] == t, col]) for t in (FINAL_TABLE, REPEAT_TABLE)}
        rust = a[a["lang"] == "rust"].pivot_table(index=["workload", "n"], columns="table", values=col)
        for w, g in rust.groupby(level="workload"):
            noise, used = 0.0, []
            for (_, n), r in g.iterrows():
                v1, v2 = r[FINAL_TABLE], r[REPEAT_TABLE]
                if not (v1 > 0 and v2 > 0):
                    continue
                excess = abs(math.log(v1 / v2)) - half[FINAL_TABLE] / v1 - half[REPEAT_TABLE] / v2
                noise = max(noise, excess)
                used.append(int(n))
            rows.append({"workload": w, "metric": metric, "log_noise": noise, "noise": math.expm1(noise),
                         "ns": ",".join(map(str, used))})
    return pd.DataFrame(rows)


# A ratio and a threshold computed from the same printed figures may differ by a rounding of the
# floating point alone (mysql N = 10, memory: 3.83 / 3.54 against the noise between the article's
# two Rust figures, 3.54 and 3.83: 1.4e-17 apart); such a ratio is at its threshold, not beyond it.
CLAIM_TOLERANCE = 1e-9
# the verdict kind and outcome of a claim every sample of whose side failed: a recorded failure, not a
# measurement (a word of the reproduction table, not a sample's status)
CLAIM_FAILED = "failed"
# measured, but no sample of a side counts for the metric (validity.counted: for memory, no sample
# with every task alive at once): not tested, and the verdict says why
NOT_COUNTED = "not counted"
# measured on both sides, but with fewer than rules.MIN_PAIRS pairs of values that count (the rule is
# compare.untested's): no ratio and no interval, so not tested, in the word every comparison table
# reads such a row with; an "inconclusive" would count it among the claims whose spread was measured
NOT_TESTED = compare.NOT_TESTED


def claim(ratio: float, threshold_log: float) -> str:
    """What the article's ratio claims: 'Go' (Go faster / smaller), 'Rust', or '' (within what it
    could resolve: at most the threshold, up to CLAIM_TOLERANCE)."""
    if not (isinstance(ratio, (int, float)) and np.isfinite(ratio) and ratio > 0):
        return ""
    if abs(math.log(ratio)) <= threshold_log + CLAIM_TOLERANCE:
        return ""
    return "Go" if ratio < 1 else "Rust"


def outcome(said: str, kind: str, article_ratio: float = float("nan"), margin: float = rules.MARGIN) -> str:
    """The fate of the article's claim given our verdict kind ('a' = Go, 'b' = Rust; "failed":
    every sample of a side failed, a recorded failure and not a measurement; "not counted": no
    sample of a side counts for the metric, validity.counted; "not tested": too few pairs that
    count).  An equivalence
    (our interval inside 1 -/+ margin) refutes a claimed direction only where the claimed
    difference is at least the margin: a claim of 1.7% with a 2% margin is as consistent with it
    as its opposite, so that outcome is "unresolved: within the margin", not "not reproduced"."""
    if kind in (CLAIM_FAILED, NOT_COUNTED, NOT_TESTED):
        return kind
    if kind not in multiplicity.KINDS:
        return "not measured"
    ours = {"a": "Go", "b": "Rust"}.get(kind, "")
    if not said:
        return "agrees: no difference" if kind == "equivalent" else (
            f"{ours} differs, where the article resolved none" if ours else "agrees: unresolved both")
    if ours == said:
        return "reproduced"
    if ours:
        return "reversed"
    if kind == "equivalent":
        inside = (isinstance(article_ratio, (int, float)) and np.isfinite(article_ratio)
                  and 1 - margin < article_ratio < 1 + margin)
        return "unresolved: within the margin" if inside else "not reproduced: equivalent"
    return "unresolved: inconclusive"


def article_against(article_ratio: float, low: float, high: float) -> str:
    """Where the article's own ratio lies against our interval: "inside", "below" or "above" it
    ("" without both).  An outcome judges the direction of a claim; this says whether its size
    survives too (a claim "reproduced" by a ratio of 3.2 where the article measured 1.04 is its
    direction only)."""
    if not all(isinstance(v, (int, float)) and np.isfinite(v) for v in (article_ratio, low, high)):
        return ""
    return "below" if article_ratio < low else "above" if article_ratio > high else "inside"


@dataclass(frozen=True)
class Setting:
    """One language's side of a comparison: a variant and every parameter's value."""

    variant: str
    params: tuple[tuple[str, str], ...]

    def describe(self) -> str:
        return self.variant + (f" ({', '.join(f'{k}={v}' for k, v in self.params)})" if self.params else "")


def default_setting(workload: str, lang: str) -> Setting:
    w = WORKLOADS[workload]
    return Setting(w.default_variant(lang), tuple(sorted(w.default_params(lang).items())))


def article_setting(workload: str, lang: str) -> Setting | None:
    setting = comparisons.article_setting(workload, lang)
    return None if setting is None else Setting(*setting)


def setting_changes(workload: str, lang: str) -> list[str]:
    """What the article's settings change in one language against its defaults, from the
    catalogue (each "name default -> article"), so that a cause names every change, not only those
    its prose remembers."""
    a, d = article_setting(workload, lang), default_setting(workload, lang)
    if a is None or a == d:
        return []
    out = [f"variant {d.variant} -> {a.variant}"] if a.variant != d.variant else []
    default_params, article_params = dict(d.params), dict(a.params)
    for k in sorted(set(default_params) | set(article_params)):
        if default_params.get(k) != article_params.get(k):
            out.append(f"{k} {default_params.get(k, '-')} -> {article_params.get(k, '-')}")
    return out


def _values(df: pd.DataFrame, workload: str, lang: str, n: int, setting: Setting, column: str):
    sel = df[(df["workload"] == workload) & (df["lang"] == lang) & (df["n"] == n) & (df["variant"] == setting.variant)]
    for k, v in setting.params:
        sel = sel[sel.get(f"p_{k}", pd.Series(index=sel.index, dtype=object)).astype(str) == v]
    valid = counted(sel, column)  # the samples that count for the metric: for memory, every task alive at once
    return valid["block"].to_numpy(), valid[column].to_numpy(dtype=float), sel


def _uncounted(sel: pd.DataFrame, column: str) -> str:
    """Why none of a side's valid samples counts for `column` ("" where one does, or none is valid)."""
    valid = sel[sel["valid"]] if "valid" in sel else sel
    if valid.empty or not counted(valid, column).empty:
        return ""
    k = len(valid)
    return f"none of its {k} valid sample{'s' if k != 1 else ''} counts for memory: {memory_excluded_summary(valid)}"


def _failures(sel: pd.DataFrame) -> str:
    measured = sel[sel["phase"] == "measured"] if "phase" in sel else sel
    bad = measured[measured["status"] != OK]
    if bad.empty:
        return ""
    reason = bad["reason"].dropna().astype(str)
    first = reason.iloc[0][:120] if not reason.empty else bad["status"].iloc[0]
    return f"{len(bad)} of {len(measured)} samples failed ({first})"


def _pair(df, workload, n, column, go: Setting, rust: Setting, looks: multiplicity.Looks,
          level_min: float) -> tuple[dict, compare.PairTest | None]:
    """Our Go and Rust cells of one article cell, paired by block and tested at the run's looks;
    the family is decided later, over the table's rows.  `warning`: the comparison's own (too few
    pairs, ...) and, as every comparison row, each cell whose values are dispersed
    (quality.dispersion_warning)."""
    gb, gv, gsel = _values(df, workload, "go", n, go, column)
    rb, rv, rsel = _values(df, workload, "rust", n, rust, column)
    failures = "; ".join(f"{lg}: {t}" for lg, t in (("Go", _failures(gsel)), ("Rust", _failures(rsel))) if t)
    spread = [quality.dispersion_warning(f"{lg} {s.variant}", v, column) for lg, s, v in (("Go", go, gv),
                                                                                        ("Rust", rust, rv))]
    if gv.size == 0 or rv.size == 0:
        uncounted = "; ".join(f"{lg}: {t}" for lg, t in (("Go", _uncounted(gsel, column)),
                                                        ("Rust", _uncounted(rsel, column))) if t)
        return {"pairs": 0, "pairing": "", "sd_log": np.nan, "a_samples": gv.size, "b_samples": rv.size,
                "failures": failures, "uncounted": uncounted, "warning": "; ".join(w for w in spread if w)}, None
    t = compare.pair_test(gb, gv, rb, rv, looks=looks, level_min=level_min, resolution=rules.resolution(column))
    return {**t.stats, "failures": failures, "warning": "; ".join(w for w in (t.stats["warning"], *spread) if w)}, t


def _within(df, workload, n, column, lang, article: Setting, default: Setting) -> dict:
    """One language's own ratio: its article settings over its defaults (paired by block)."""
    ab, av, _ = _values(df, workload, lang, n, article, column)
    db, dv, _ = _values(df, workload, lang, n, default, column)
    if av.size == 0 or dv.size == 0:
        return {"ratio": np.nan, "ratio_ci_low": np.nan, "ratio_ci_high": np.nan}
    return compare.compare_pair(ab, av, db, dv, resolution=rules.resolution(column))


def settings_effect(df: pd.DataFrame, workload: str, n: int, column: str,
                    confidence: float = rules.CONFIDENCE) -> dict:
    """How much the article's settings changed the Go/Rust ratio: (Go/Rust with the article's
    settings) / (Go/Rust with the defaults), the centre of the per-block
    log(Go_a) - log(Rust_a) - log(Go_d) + log(Rust_d) over the blocks holding all four cells, with
    its `confidence` interval (a lone comparison: paired.Location).  NaN without three such blocks or where the settings are the defaults on both sides."""
    empty = {"ratio": np.nan, "ratio_ci_low": np.nan, "ratio_ci_high": np.nan, "pairs": 0}
    sides = []
    for lang in LANGS:
        a, d = article_setting(workload, lang), default_setting(workload, lang)
        if a is None:
            return empty
        sides.append((lang, a, d))
    if all(a == d for _, a, d in sides):
        return empty
    series = []
    for lang, a, d in sides:
        for setting, sign in ((a, 1.0), (d, -1.0)):
            blocks, values, _ = _values(df, workload, lang, n, setting, column)
            keep = np.isfinite(values) & (values > 0)
            s = pd.Series(np.log(values[keep]), index=blocks[keep]).groupby(level=0).median()
            series.append(s * (sign if lang == LANGS[0] else -sign))
    joined = pd.concat(series, axis=1, join="inner")
    if len(joined) < 3:
        return empty
    d = joined.sum(axis=1).to_numpy(dtype=float)
    loc = paired.Location.of(d, 1 - confidence)
    lo, hi = loc.interval(1 - confidence)
    return {"ratio": float(np.exp(loc.estimate)), "ratio_ci_low": float(np.exp(lo)), "ratio_ci_high": float(np.exp(hi)),
            "pairs": int(d.size)}


def core_counts(df: pd.DataFrame, workload: str) -> list:
    """The core counts a workload's samples ran at, fewest first; [None] when they were not pinned."""
    if "cores" not in df.columns or df.empty:
        return [None]
    ks = sorted(int(k) for k in df.loc[df["workload"] == workload, "cores"].dropna().unique())
    return ks or [None]


def at_cores(df: pd.DataFrame, k) -> pd.DataFrame:
    """The samples run at core count k (None: the unpinned ones, or all where nothing was pinned)."""
    if "cores" not in df.columns:
        return df
    out = df[df["cores"].isna()] if k is None else df[df["cores"] == k]
    out.attrs = dict(df.attrs)
    return out


def _fmt(r: dict) -> str:
    """A ratio and its interval in the tables' digits: no end reads as reaching 1 when it does not."""
    if not np.isfinite(r.get("ratio", np.nan)):
        return "not measured"
    lo, hi = r.get("ratio_ci_low", np.nan), r.get("ratio_ci_high", np.nan)
    ci = f" [{digits.beside(lo, (1.0,))}, {digits.beside(hi, (1.0,))}]" if np.isfinite(lo) and np.isfinite(hi) else ""
    return f"{digits.significant(r['ratio'])}{ci}"


def side_by_side(df: pd.DataFrame, margin: float = compare.MARGIN, table: str = FINAL_TABLE,
                 alpha: float = rules.ALPHA, design=None) -> pd.DataFrame:
    """The reproduction table (see the module's docstring): one row per cell of the article's table
    and metric.  `design`: the run's sequential design (default: df.attrs["design"], as
    sequential.attach leaves it; none: a fixed run).  Each column of verdicts (the article's
    settings, the defaults) is one family per metric, decided by compare.decide_family at the
    run's looks."""
    art = article_ratios(table)
    run_design = compare._design(df, design)
    looks = run_design.plan_looks() if run_design is not None else multiplicity.Looks((0,))
    ks_of = {w: core_counts(df, w) for w in art["workload"].unique() if w in WORKLOADS}
    frames = {(w, k): at_cores(df, k) for w, ks in ks_of.items() for k in ks}
    rows_per_metric = int(sum(len(ks_of[w]) for w in art["workload"] if w in WORKLOADS))
    level_min = alpha / max(rows_per_metric, 1)  # chooses each row's test, for the largest family the table can hold
    noise = {(r.workload, r.metric): r.log_noise for r in resolution().itertuples()}
    half = {m: _half_unit(article_table().loc[article_table()["table"] == table, col])
            for m, (col, _) in METRICS.items()}
    rows, tests = [], {(metric, label): [] for metric in METRICS for label in LABELS}
    for r, count in ((r, c) for r in art.itertuples() if r.workload in WORKLOADS for c in ks_of[r.workload]):
        dk = frames[(r.workload, count)]
        for metric, (col, ours) in METRICS.items():
            go_v, rust_v = (r.article_go_s, r.article_rust_s) if metric == "time" else (r.article_go_mb, r.article_rust_mb)
            ratio = r.article_time_ratio if metric == "time" else r.article_mem_ratio
            rounding = half[metric] / go_v + half[metric] / rust_v if go_v > 0 and rust_v > 0 else np.inf
            threshold = noise.get((r.workload, metric), 0.0) + rounding
            row = {"workload": r.workload, "n": int(r.n), "metric": metric, "cores": count,
                   "article_go": go_v, "article_rust": rust_v,
                   "article_ratio": ratio, "claim_threshold": math.expm1(threshold) if np.isfinite(threshold) else np.inf,
                   "article_claim": claim(ratio, threshold)}
            settings = {"ours_article": tuple(article_setting(r.workload, lg) for lg in LANGS),
                        "ours_default": tuple(default_setting(r.workload, lg) for lg in LANGS)}
            for label, (go, rust) in settings.items():
                res, test = ({"failures": ""}, None) if go is None or rust is None else \
                    _pair(dk, r.workload, int(r.n), ours, go, rust, looks, level_min)
                tests[(metric, label)].append((len(rows), test, test is not None or bool(res["failures"])
                                                or bool(res.get("uncounted"))))
                row[f"{label}_settings"] = f"Go {go.describe()}; Rust {rust.describe()}" if go and rust else ""
                for k in ("pairs", "pairing", "sd_log", "a_samples", "b_samples", "failures", "uncounted", "test"):
                    row[f"{label}_{k}"] = res.get(k, np.nan)
                row[f"{label}_warning"] = res.get("warning", "")
            rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    for (metric, label), members in tests.items():  # one family per metric and column
        measured = [(i, t) for i, t, _ in members if t is not None]
        # the family: the rows of this column and metric the plan ran (the article's cells it took),
        # those whose every sample failed included, as a planned family counts comparisons without
        # data (docs/statistics.md, "A family")
        ran = sum(1 for _, _, took in members if took)
        decided = compare.decide_family([t for _, t in measured], alpha, margin, ran) if measured else []
        for (i, _), d in zip(measured, decided):
            for k in ("ratio", "ratio_ci_low", "ratio_ci_high", "ci_level", "p_value", "p_adjusted", "verdict_kind",
                      "within_margin", "note"):
                out.loc[i, f"{label}_{k}"] = d[k]
    for label in LABELS:
        for k in ("ratio", "ratio_ci_low", "ratio_ci_high", "ci_level", "p_value", "p_adjusted"):
            out[f"{label}_{k}"] = pd.to_numeric(out.get(f"{label}_{k}", np.nan), errors="coerce")
        kinds, texts = [], []
        untested = compare.untested(pd.DataFrame({"verdict_kind": out.get(f"{label}_verdict_kind"),
                                                  "ratio": out[f"{label}_ratio"]}))
        for row, not_tested in zip(out.to_dict("records"), untested):
            kind = row.get(f"{label}_verdict_kind")
            # measured on both sides but not tested (too few pairs): NOT_TESTED, not "not measured"
            sampled = all(pd.notna(row.get(f"{label}_{s}")) and row.get(f"{label}_{s}", 0) > 0
                          for s in ("a_samples", "b_samples"))
            if not isinstance(kind, str) or (not np.isfinite(row[f"{label}_ratio"]) and not sampled):
                fails, uncounted = row.get(f"{label}_failures"), row.get(f"{label}_uncounted")
                kind = CLAIM_FAILED if isinstance(fails, str) and fails else \
                    NOT_COUNTED if isinstance(uncounted, str) and uncounted else "not measured"
            elif not_tested:
                kind = NOT_TESTED
            kinds.append(kind)
            word_metric = "elapsed_s" if row["metric"] == "time" else "peak_rss_mib"
            texts.append(f"failed: {row[f'{label}_failures']}" if kind == CLAIM_FAILED else
                         f"not tested: {row[f'{label}_uncounted']}" if kind == NOT_COUNTED else
                         NOT_TESTED if kind == NOT_TESTED else
                         "not measured" if kind == "not measured" else
                         rules.verdict_text(kind, bool(row.get(f"{label}_within_margin")), "Go", "Rust", word_metric,
                                            margin))
        out[f"{label}_verdict_kind"] = kinds
        out[f"{label}_verdict"] = texts
        out[f"{label}_outcome"] = [outcome(c, k, r, margin)
                                   for c, k, r in zip(out["article_claim"], kinds, out["article_ratio"])]
        out[f"{label}_article_ratio_is"] = [
            article_against(a, lo, hi) for a, lo, hi in zip(out["article_ratio"], out[f"{label}_ratio_ci_low"],
                                                             out[f"{label}_ratio_ci_high"])]
    frame_of = [frames[(w, None if pd.isna(k) else int(k))] for w, k in zip(out["workload"], out["cores"])]
    effects = [settings_effect(f, w, n, METRICS[m][1])
               for f, w, n, m in zip(frame_of, out["workload"], out["n"], out["metric"])]
    for k, column in (("ratio", "settings_effect_ratio"), ("ratio_ci_low", "settings_effect_ci_low"),
                      ("ratio_ci_high", "settings_effect_ci_high"), ("pairs", "settings_effect_pairs")):
        out[column] = [e[k] for e in effects]
    out["cause_kind"], out["cause"] = zip(*(_cause(f, row) for f, row in zip(frame_of, out.to_dict("records"))))
    for label in LABELS:
        out[f"{label}_across_cores"] = across_cores_text(out, label)
    return out


def _counts_text(ks: list[int]) -> str:
    return " and ".join(map(str, ks)) + (" core" if ks == [1] else " cores")


def across_cores_text(side: pd.DataFrame, label: str) -> list[str]:
    """Per row, whether the article's claim holds (is reproduced) at every core count its workload
    ran at, with `label`'s settings: "holds at both (1 and 2 cores)", "holds at 1 of 2 core counts
    (2 cores)", "holds at none (1 and 2 cores)", with the core counts that have no verdict named;
    "no claim" where the article claimed nothing; empty for a workload run at one core count."""
    texts = [""] * len(side)
    if "cores" not in side.columns:
        return texts
    for _, g in side.groupby(["workload", "n", "metric"], sort=False):
        ks = [int(k) for k in g["cores"] if pd.notna(k)]
        if len(ks) < 2:
            continue
        if not g["article_claim"].iloc[0]:
            text = "no claim"
        else:
            outcomes = dict(zip(ks, g[f"{label}_outcome"]))
            measured = [k for k in ks if outcomes[k] not in ("not measured", CLAIM_FAILED, NOT_COUNTED, NOT_TESTED)]
            held = [k for k in measured if outcomes[k] == "reproduced"]
            if not measured:
                text = "not measured"
            elif len(held) == len(ks):
                text = f"holds at {'both' if len(ks) == 2 else 'all'} ({_counts_text(ks)})"
            elif held:
                text = f"holds at {len(held)} of {len(ks)} core counts ({_counts_text(held)})"
            else:
                text = f"holds at none ({_counts_text(measured)})"
            missing = [k for k in ks if k not in measured]
            if missing and measured:
                text += f"; no verdict at {_counts_text(missing)}"
        for i in g.index:
            texts[side.index.get_loc(i)] = text
    return texts


def by_cores(side: pd.DataFrame) -> pd.DataFrame:
    """One row per article cell and metric measured at several core counts: the claim, each core
    count's outcome with the article's settings and with the defaults, and whether it holds at
    every one (`across_cores_text`)."""
    if side.empty or "cores" not in side.columns:
        return pd.DataFrame()
    rows = []
    for (w, n, metric), g in side.groupby(["workload", "n", "metric"], sort=False):
        ks = [int(k) for k in g["cores"] if pd.notna(k)]
        if len(ks) < 2 or all((g[f"{label}_outcome"] == "not measured").all() for label in LABELS):
            continue
        row = {"workload": w, "n": n, "metric": metric, "article_claim": g["article_claim"].iloc[0]}
        for label in LABELS:
            for k, o, kind, r in zip(ks, g[f"{label}_outcome"], g[f"{label}_verdict_kind"], g[f"{label}_ratio"]):
                row[f"{label}_at_{k}"] = o
                row[f"{label}_ratio_at_{k}"] = r
            row[f"{label}_across_cores"] = g[f"{label}_across_cores"].iloc[0]
        rows.append(row)
    return pd.DataFrame(rows)


def _cause(df: pd.DataFrame, row: dict) -> tuple[str, str]:
    """The kind of cause and its statement for one row, from measured cells of the same run."""
    w, n, metric = row["workload"], row["n"], row["metric"]
    column = METRICS[metric][1]
    parts, kinds = [], []
    if w in PLATFORM:
        kinds.append(PLATFORM[w][0])
        parts.append(PLATFORM[w][1])
    # a cause is stated only from cells of this run: the settings changed the Go/Rust ratio (the
    # interval of their effect excludes 1), or the article's settings ran and failed (its Go
    # SQLite at N = 1,000)
    fails = row.get("ours_article_failures")
    failed = isinstance(fails, str) and bool(fails)
    lo, hi = row.get("settings_effect_ci_low", np.nan), row.get("settings_effect_ci_high", np.nan)
    moved_ratio = bool(np.isfinite(lo) and np.isfinite(hi) and (hi < 1 or lo > 1))
    differ = moved_ratio or (failed and row["ours_article_outcome"] == CLAIM_FAILED)
    if differ and w in CAUSES:
        kinds.insert(0, CAUSES[w][0])
        moved = []
        for lang in LANGS:
            a, d = article_setting(w, lang), default_setting(w, lang)
            if a is None or a == d:
                continue
            r = _within(df, w, n, column, lang, a, d)
            moved.append(f"{'Go' if lang == 'go' else 'Rust'} article settings / defaults {_fmt(r)}")
        if moved_ratio:
            effect = {"ratio": row["settings_effect_ratio"], "ratio_ci_low": lo, "ratio_ci_high": hi}
            moved.insert(0, f"the article's settings change Go/Rust by x{_fmt(effect)}")
        changed = "; ".join(f"{'Go' if lang == 'go' else 'Rust'} {', '.join(c)}" for lang in LANGS
                            if (c := setting_changes(w, lang)))
        text = (CAUSES[w][1] + (f" (every setting that differs: {changed})" if changed else "")
                + (f" (measured: {'; '.join(moved)})" if moved else ""))
        if failed:
            text += f"; with the article's settings {fails}"
        parts.insert(0, text)
    # platform and versions: only where our verdict with the article's settings contradicts the
    # claim (equivalent or the other direction); an inconclusive cell contradicts nothing
    if row["article_claim"] and row["ours_article_outcome"] in ("reversed", "not reproduced: equivalent") \
            and w not in PLATFORM:
        kinds.append(VERSIONS[0])
        parts.append(VERSIONS[1])
    return ("; ".join(kinds), ". ".join(parts))


def claims_summary(side: pd.DataFrame) -> pd.DataFrame:
    """How many of the article's cells end in each outcome, with its settings and with defaults."""
    cores = ["cores"] if "cores" in side.columns and side["cores"].notna().any() else []
    if side.empty:
        return pd.DataFrame(columns=["metric", *cores, "settings", "outcome", "cells"])
    parts = []
    for label, name in zip(LABELS, ("the article's", "defaults")):
        t = side.groupby(["metric", *cores, f"{label}_outcome"], dropna=False).size().rename("cells").reset_index()
        parts.append(t.rename(columns={f"{label}_outcome": "outcome"}).assign(settings=name))
    return pd.concat(parts, ignore_index=True)[["metric", *cores, "settings", "outcome", "cells"]]


# Our cell for each related-post figure: (experiment, lang, their variant) -> (our variant, params, metric column)
POST_MAP = {
    ("threads_vs_tasks", "rust", "std::thread"): ("thread", {}),
    ("threads_vs_tasks", "rust", "std::thread pinned to cores"): ("thread-pinned", {}),
    ("threads_vs_tasks", "go", "goroutine"): ("goroutine", {}),
    ("ping_pong", "go", "unbuffered channel"): ("channels", {"buffer": "0", "mode": "lockstep"}),
    ("ping_pong", "go", "channel buffer 4096"): ("channels", {"buffer": "4096", "mode": "lockstep"}),
    ("ping_pong", "rust", "tokio current_thread mpsc buffer 4096"): ("current-thread", {"buffer": "4096", "mode": "lockstep"}),
    ("ping_pong", "rust", "tokio thread pool mpsc buffer 4096"): ("multi-thread", {"buffer": "4096", "mode": "lockstep"}),
    # the posts' idle tasks sleep (10 s) until they end: ours with wait=sleep, never pooled with
    # wait=release, whose tasks wait for a release instead
    ("idle_tasks", "go", "goroutine sleeping 10 s"): ("goroutine", {"wait": "sleep"}),
    ("idle_tasks", "go", "goroutine + WaitGroup"): ("goroutine", {"wait": "sleep"}),
    ("idle_tasks", "go", "goroutine"): ("goroutine", {"wait": "sleep"}),
    ("idle_tasks", "rust", "tokio spawn"): ("spawn", {"wait": "sleep"}),
    ("idle_tasks", "rust", "tokio spawn multi-thread runtime"): ("spawn", {"wait": "sleep"}),
    ("idle_tasks", "rust", "futures join_all on tokio"): ("join-all", {"wait": "sleep"}),
    ("idle_tasks", "rust", "std::thread"): ("threads", {"wait": "sleep"}),
    ("cpu_loops", "go", "plain"): ("plain", {}),
    ("cpu_loops", "go", "local accumulator"): ("local", {}),
    ("cpu_loops", "go", "unrolled by 4"): ("unrolled", {}),
}

# their metric and unit -> (our column of the samples frame, factor from our column to their unit);
# the peak RSS as the kernel gives it (maxrss_kb, KiB), a round trip per N (per_s, N / elapsed_s)
METRIC_MAP = {
    ("wall", "s"): ("wall_s", 1.0),  # the posts timed whole processes: our process wall time
    ("user_cpu", "s"): ("user_s", 1.0),
    ("sys_cpu", "s"): ("sys_s", 1.0),
    ("max_rss", "KiB"): ("maxrss_kb", 1.0),
    ("rss", "GiB"): ("maxrss_kb", 1 / 2**20),
    ("rss", "KiB"): ("maxrss_kb", 1.0),
    ("peak_mem", "MB"): ("maxrss_kb", 1024 / 1e6),
    ("round_trips_per_s", "1/s"): ("per_s", 1.0),
}


# Our user and system CPU times are the kernel's split of the process's CPU time, which it counts
# exactly; on a kernel with tick-based accounting (the usual one, meta.json's `cpu_accounting`) the
# split is sampled at each timer tick (4 ms at 250 Hz), so that of a run of a few ticks is coarse.
SAMPLED_SPLIT = frozenset({"user_cpu", "sys_cpu"})
SPLIT_NOTE = "our user/system split is sampled at the kernel's tick (their sum is exact)"


def join_note(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


# What the posts' programs did that a cell of ours must do too before its figure is set beside
# theirs: (experiment, parameter) -> (their value, the metrics that depend on it).  matklad's
# threads each slept 1,000 times 10 ms; ours sleep `iterations` times, so the times differ by the
# work, while the memory of 10,000 waiting threads does not.
POST_WORK = {("threads_vs_tasks", "iterations"): ("1000", ("wall", "user_cpu", "sys_cpu")),
             # their idle tasks sleep 10 s: the figure is the peak with all of them alive, which the
             # sleep's length only postpones, so the ratio stays and the note names the difference
             ("idle_tasks", "duration_ms"): ("10000", ())}


def posts_side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    """Each related-post figure beside our median for the matching cell and N, with its
    distribution-free interval and that interval's exact coverage (`our_ci_coverage`: 96.9% at 6
    samples).  cpu_loops in the posts counts 10^9 inner iterations: our N=10,000 with inner=100,000;
    ping_pong is a rate, compared at the largest message count we ran.  Where our cell did other
    work than theirs (`POST_WORK`) the ratio is left out and the note says why."""
    from .stats import median_ci, median_ci_coverage

    d = with_param_columns(df[df["valid"]] if "valid" in df else df)
    rows = []
    for r in other_posts().itertuples():
        key = (r.experiment, r.lang, r.variant)
        row = {"source": r.source, "experiment": r.experiment, "lang": r.lang, "their_variant": r.variant, "n": r.n,
               "metric": r.metric, "unit": r.unit, "their_value": r.value, "our_median": np.nan,
               "our_ci_low": np.nan, "our_ci_high": np.nan, "our_ci_coverage": np.nan, "our_samples": 0, "ours_over_theirs": np.nan, "note": ""}
        mapped, metric = POST_MAP.get(key), METRIC_MAP.get((r.metric, r.unit))
        if mapped is None or metric is None:
            row["note"] = "no matching cell in this project"
            rows.append(row)
            continue
        variant, fixed = mapped
        sel = d[(d["workload"] == r.experiment) & (d["lang"] == r.lang) & (d["variant"] == variant)]
        for k, v in fixed.items():  # on the parameter's own column: "buffer=4096" is not "buffer=40960"
            col = f"p_{k}"
            sel = sel[sel[col].astype(str) == v] if col in sel.columns else sel.iloc[0:0]
        if r.experiment == "ping_pong" and not sel.empty:  # a rate: compare at our largest message count
            sel = sel[sel["n"] == sel["n"].max()]
            row["note"] = f"ours at N={int(sel['n'].iloc[0])}"
        else:
            sel = sel[sel["n"] == (10_000 if r.experiment == "cpu_loops" else r.n)]
        if sel.empty:
            row["note"] = "not measured in this run"
            rows.append(row)
            continue
        col, factor = metric
        # the samples that count for the metric (validity.counted): for memory, idle tasks only
        # where every task was alive at once, as the memory tables read them
        kept = counted(sel, col)
        if kept.empty:
            row["note"] = join_note(row["note"], f"none of our {len(sel)} samples counts for memory: "
                                                 f"{memory_excluded_summary(sel)}")
            rows.append(row)
            continue
        sel = kept
        med, lo, hi = median_ci(sel[col] * factor)
        row.update({"our_median": med, "our_ci_low": lo, "our_ci_high": hi,
                    "our_ci_coverage": median_ci_coverage(len(sel)), "our_samples": len(sel),
                    "ours_over_theirs": med / r.value if r.value else np.nan})
        for (experiment, key), (theirs, metrics) in POST_WORK.items():
            ours = sorted(set(sel.get(f"p_{key}", pd.Series(dtype=object)).dropna().astype(str)))
            if experiment != r.experiment or not ours or ours == [theirs]:
                continue
            if r.metric in metrics:
                row["ours_over_theirs"] = np.nan
                row["note"] = join_note(row["note"], f"not the same work: ours {key}={','.join(ours)}, theirs {theirs}")
            else:
                row["note"] = join_note(row["note"], f"ours {key}={','.join(ours)}, theirs {theirs}")
        if r.metric in SAMPLED_SPLIT:
            row["note"] = join_note(row["note"], SPLIT_NOTE)
        rows.append(row)
    return pd.DataFrame(rows)
