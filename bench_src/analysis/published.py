"""Published figures beside ours: the 2022 article's tables (`article_2022.csv`) and the related
posts' numbers (`other_posts.csv`), tracked in data/reference/ (its README names every source).

For every cell the article reported, the side-by-side table holds the article's Go/Rust ratio of
minimum times (and of maximum memory), our ratio of medians with its CI and verdict for the
article's own choices (the `article` preset) and for each language's default, and whether the
article's claim survives:
- "survives": our verdict goes the same way as the article's ratio;
- "reversed": our verdict goes the other way;
- "not supported": we find the two equivalent within the margin;
- "unresolved": our comparison is inconclusive or missing.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import paths
from ..catalogue import WORKLOADS
from . import compare

REFERENCE = paths.DATA / "reference"

# A claim only counts where the article's own difference was at least this large.
CLAIM_THRESHOLD = 0.0


def reference_dir() -> Path:
    """data/reference/: the published figures, tracked with the repository."""
    return REFERENCE


def article_table() -> pd.DataFrame:
    return pd.read_csv(reference_dir() / "article_2022.csv")


def other_posts() -> pd.DataFrame:
    return pd.read_csv(reference_dir() / "other_posts.csv")


def article_ratios(table: str = "go_channel_per_task") -> pd.DataFrame:
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
        out["article_mem_ratio"] = out["article_go_mb"] / out["article_rust_mb"]
    out["article_table"] = table
    return out


def claim(ratio: float) -> str:
    if not np.isfinite(ratio) or abs(ratio - 1) <= CLAIM_THRESHOLD:
        return "no difference claimed"
    return "Go" if ratio < 1 else "Rust"


def survives(article_ratio: float, our_verdict: str | float) -> str:
    said = claim(article_ratio)
    if not isinstance(our_verdict, str):
        return "unresolved (not measured)"
    if said == "no difference claimed":
        return "no claim"
    if our_verdict.startswith("equivalent"):
        return "not supported (equivalent)"
    if our_verdict.startswith(said):
        return "survives"
    if our_verdict.split()[0] in ("Go", "Rust"):
        return "reversed"
    return "unresolved (inconclusive)"


def _pick(ours: pd.DataFrame, workload: str, lang_variant: dict[str, str], lang_params: dict[str, dict]) -> pd.DataFrame:
    """Our comparisons for the given Go and Rust variant (and fixed parameters)."""
    sel = ours[(ours["workload"] == workload) & (ours["go_variant"] == lang_variant["go"]) &
               (ours["rust_variant"] == lang_variant["rust"])]
    for lang, fixed in lang_params.items():
        for k, v in fixed.items():
            sel = sel[sel[f"{lang}_params"].str.contains(f"{k}={v}", regex=False)]
    return sel


def side_by_side(df: pd.DataFrame, margin: float = compare.MARGIN, table: str = "go_channel_per_task") -> pd.DataFrame:
    """One row per cell of the article's table: its ratios, ours (article preset and defaults) with
    CIs and verdicts, and whether the article's claim survives."""
    art = article_ratios(table)
    time_cmp = compare.compare(df, "elapsed_s", margin=margin)
    mem_cmp = compare.compare(df, "peak_rss_mib", margin=margin)
    rows = []
    for r in art.itertuples():
        w = WORKLOADS.get(r.workload)
        row = {"workload": r.workload, "n": r.n, "article_time_ratio": r.article_time_ratio,
               "article_mem_ratio": r.article_mem_ratio}
        choices = {"article": ({lg: w.article[lg][0] for lg in ("go", "rust")},
                               {lg: w.article[lg][1] for lg in ("go", "rust")}) if w and w.article else None,
                   "default": ({lg: w.default_variant(lg) for lg in ("go", "rust")}, {}) if w else None}
        for label, choice in choices.items():
            for metric, cmp_table, art_ratio in (("time", time_cmp, r.article_time_ratio),
                                                 ("mem", mem_cmp, r.article_mem_ratio)):
                m = pd.DataFrame() if choice is None else _pick(cmp_table[cmp_table["n"] == r.n], r.workload, *choice)
                if label == "default" and not m.empty:
                    m = m[m["go_params"].map(lambda p: "retain=content" not in p)]
                if m.empty:
                    row.update({f"ours_{label}_{metric}_ratio": np.nan, f"ours_{label}_{metric}_ci": "",
                                f"ours_{label}_{metric}_verdict": np.nan, f"ours_{label}_{metric}_claim": survives(art_ratio, np.nan)})
                    continue
                best = m.iloc[0]
                row.update({f"ours_{label}_{metric}_ratio": best["ratio"],
                            f"ours_{label}_{metric}_ci": f"[{best['ratio_ci_low']:.3g}, {best['ratio_ci_high']:.3g}]",
                            f"ours_{label}_{metric}_verdict": best["verdict"],
                            f"ours_{label}_{metric}_claim": survives(art_ratio, best["verdict"])})
        rows.append(row)
    return pd.DataFrame(rows)


# Our cell for each related-post figure: (experiment, lang, their variant) -> (our variant, params, metric column)
POST_MAP = {
    ("threads_vs_tasks", "rust", "std::thread"): ("thread", {}),
    ("threads_vs_tasks", "rust", "std::thread pinned to cores"): ("thread-pinned", {}),
    ("threads_vs_tasks", "go", "goroutine"): ("goroutine", {}),
    ("ping_pong", "go", "unbuffered channel"): ("channels", {"buffer": "0", "mode": "lockstep"}),
    ("ping_pong", "go", "channel buffer 4096"): ("channels", {"buffer": "4096", "mode": "lockstep"}),
    ("ping_pong", "rust", "tokio current_thread mpsc buffer 4096"): ("current-thread", {"buffer": "4096", "mode": "lockstep"}),
    ("ping_pong", "rust", "tokio thread pool mpsc buffer 4096"): ("multi-thread", {"buffer": "4096", "mode": "lockstep"}),
    ("idle_tasks", "go", "goroutine sleeping 10 s"): ("goroutine", {}),
    ("idle_tasks", "go", "goroutine + WaitGroup"): ("goroutine", {}),
    ("idle_tasks", "go", "goroutine"): ("goroutine", {}),
    ("idle_tasks", "rust", "tokio spawn"): ("spawn", {}),
    ("idle_tasks", "rust", "tokio spawn multi-thread runtime"): ("spawn", {}),
    ("idle_tasks", "rust", "futures join_all on tokio"): ("join-all", {}),
    ("idle_tasks", "rust", "std::thread"): ("threads", {}),
    ("cpu_loops", "go", "plain"): ("plain", {}),
    ("cpu_loops", "go", "local accumulator"): ("local", {}),
    ("cpu_loops", "go", "unrolled by 4"): ("unrolled", {}),
}

METRIC_MAP = {  # their metric and unit -> (our column, factor from our column to their unit)
    ("wall", "s"): ("elapsed_s", 1.0),
    ("user_cpu", "s"): ("user_s", 1.0),
    ("sys_cpu", "s"): ("sys_s", 1.0),
    ("max_rss", "KiB"): ("peak_rss_kib", 1.0),
    ("rss", "GiB"): ("peak_rss_kib", 1 / 2**20),
    ("rss", "KiB"): ("peak_rss_kib", 1.0),
    ("peak_mem", "MB"): ("peak_rss_kib", 1024 / 1e6),
    ("round_trips_per_s", "1/s"): ("round_trips_per_s", 1.0),
}


def posts_side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    """Each related-post figure beside our median (with its 95% CI) for the matching cell and N.
    cpu_loops in the posts counts 10^9 inner iterations: our N=10,000 with inner=100,000; ping_pong
    is a rate, compared at the largest message count we ran."""
    from .stats import median_ci

    d = df[df["valid"]].copy() if "valid" in df else df.copy()
    d["user_s"] = d["user_ns"] / 1e9
    d["sys_s"] = d["sys_ns"] / 1e9
    d["peak_rss_kib"] = d["maxrss_kb"]
    d["round_trips_per_s"] = d["n"] / d["elapsed_s"]
    rows = []
    for r in other_posts().itertuples():
        key = (r.experiment, r.lang, r.variant)
        row = {"source": r.source, "experiment": r.experiment, "lang": r.lang, "their_variant": r.variant, "n": r.n,
               "metric": r.metric, "unit": r.unit, "their_value": r.value, "our_median": np.nan, "our_ci": "",
               "our_samples": 0, "ours_over_theirs": np.nan, "note": ""}
        mapped, metric = POST_MAP.get(key), METRIC_MAP.get((r.metric, r.unit))
        if mapped is None or metric is None:
            row["note"] = "no matching cell in this project"
            rows.append(row)
            continue
        variant, fixed = mapped
        sel = d[(d["workload"] == r.experiment) & (d["lang"] == r.lang) & (d["variant"] == variant)]
        for k, v in fixed.items():
            sel = sel[sel["params"].str.contains(f"{k}={v}", regex=False)]
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
        med, lo, hi = median_ci(sel[col] * factor)
        row.update({"our_median": med, "our_ci": f"[{lo:.4g}, {hi:.4g}]", "our_samples": len(sel),
                    "ours_over_theirs": med / r.value if r.value else np.nan})
        rows.append(row)
    return pd.DataFrame(rows)
