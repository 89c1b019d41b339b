"""The whole analysis of a results directory, as the notebooks show it and the exports hold it:
tables per metric, figures, and every export.  One call produces the report."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..analysis import compare, quality, scaling, stats
from ..store import equivalence, load
from . import export, figures

METRICS = ("elapsed_s", "peak_rss_mib", "cpu_s")


@dataclass
class Report:
    results_dir: Path
    df: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, list[Path]] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)


def analyse(results_dir: str | Path, margin: float = compare.MARGIN, metrics=METRICS) -> Report:
    """Compute every table: checksums, per-cell summaries, Go/Rust comparisons with verdicts,
    variant comparisons, per-task costs, drift, and the A/A check when the run was one."""
    results_dir = Path(results_dir)
    df = load(results_dir)
    rep = Report(results_dir, df)
    rep.tables["checksums"] = equivalence.check(df)
    rep.tables["status"] = df.groupby(["workload", "lang", "phase", "status"]).size().rename("samples").reset_index()
    for m in metrics:
        rep.tables[f"summary_{m}"] = stats.summarize(df, m)
        rep.tables[f"go_vs_rust_{m}"] = compare.compare(df, m, margin=margin)
        rep.tables[f"variants_{m}"] = compare.compare_variants(df, m, margin=margin)
        rep.tables[f"per_task_{m}"] = scaling.per_task_cost(df, m)
        if (df["arm"].fillna("") != "").any():
            rep.tables[f"aa_{m}"] = compare.compare_arms(df, m, margin=margin)
    rep.tables["drift_elapsed_s"] = quality.drift(df, "elapsed_s")
    return rep


def make_figures(rep: Report, margin: float = compare.MARGIN) -> Report:
    for m in ("elapsed_s", "peak_rss_mib"):
        s = rep.tables[f"summary_{m}"]
        if not s.empty:
            rep.figures[f"{m}_vs_n"] = export.save_figure(figures.metric_vs_n(s, m), rep.results_dir, f"{m}_vs_n")
        r = rep.tables[f"go_vs_rust_{m}"]
        if not r.empty:
            rep.figures[f"ratio_{m}_vs_n"] = export.save_figure(figures.ratio_vs_n(r, margin), rep.results_dir,
                                                                f"ratio_{m}_vs_n")
            rep.figures[f"verdicts_{m}"] = export.save_figure(figures.verdict_heatmap(r), rep.results_dir,
                                                              f"verdicts_{m}")
    for m, scale, unit in (("elapsed_s", 1e9, "ns per task"), ("peak_rss_mib", 2**20, "bytes per task")):
        c = rep.tables[f"per_task_{m}"]
        if not c.empty:
            rep.figures[f"per_task_{m}"] = export.save_figure(figures.per_task_bars(c, scale, unit), rep.results_dir,
                                                              f"per_task_{m}")
    for w in rep.df.loc[rep.df["valid"], "workload"].unique():
        ns = sorted(rep.df.loc[rep.df["workload"] == w, "n"].unique())
        pick = [ns[0], ns[-1]] if len(ns) > 1 else ns
        rep.figures[f"distribution_{w}"] = export.save_figure(figures.distributions(rep.df, w, "elapsed_s", pick),
                                                              rep.results_dir, f"distribution_{w}")
    return rep


def export_all(rep: Report, render_html: bool = True) -> Report:
    for name, table in rep.tables.items():
        rep.files += export.save_table(table, rep.results_dir, name)
    rep.files += export.save_samples(rep.df, rep.results_dir)
    rep.files += export.save_benchstat(rep.df, rep.results_dir)
    rep.files.append(export.save_method(export.read_meta(rep.results_dir), rep.df, rep.results_dir))
    if render_html:
        rep.files += export.render_notebooks(rep.results_dir)
    return rep


def full_report(results_dir: str | Path, margin: float = compare.MARGIN, render_html: bool = True) -> Report:
    rep = analyse(results_dir, margin)
    make_figures(rep, margin)
    return export_all(rep, render_html)
