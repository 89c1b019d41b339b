"""The whole analysis of a results directory, as the notebooks show it and the exports hold it: every
table computed once, the figures, and every export.  `full_report` is the one call.

A missing directory, or one that is not a results directory, is refused before anything is
written.  A run without a single valid sample gets its status and failure tables, a statement that
nothing entered the analysis, and the HTML report, but no statistics.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..analysis import compare, cores, hosts, memory, quality, robustness, rules, scaling, sequential, stats
from ..store import ResultsStore, equivalence, load
from ..store import hosts as store_hosts
from ..store.directory import require_run
from ..store.meta import META
from . import figures, findings, method, tables, theme
from .export import images
from .export.base import FIGURES, export_dir
from .export.registry import exporters

METRICS = ("elapsed_s", "peak_rss_mib", "cpu_s")
FIGURE_METRICS = rules.HEADLINE_METRICS


@dataclass
class Report:
    results_dir: Path
    df: pd.DataFrame
    meta: dict = field(default_factory=dict)
    margin: float = compare.MARGIN
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, list[Path]] = field(default_factory=dict)
    figure_titles: dict[str, str] = field(default_factory=dict)  # each figure's own title, for captions
    files: list[Path] = field(default_factory=list)
    method: str = ""
    # a cluster run's hosts, each with the machine behind it (store.hosts.machine_id: the hosts of a
    # local cluster share one); empty for a run on one host
    host_machines: dict[str, str] = field(default_factory=dict)

    @property
    def findings(self) -> list[findings.MetricFindings]:
        """What the run found, Go vs Rust, largest differences first (report/findings.py, ORDER), in the
        words of the margin its tables were computed with."""
        return findings.findings(self.tables, self.margin)

    @property
    def export_dir(self) -> Path:
        return export_dir(self.results_dir)

    @property
    def empty(self) -> bool:
        """No sample entered the analysis."""
        return self.df.empty or not bool(self.df["valid"].any())

    def readable(self, name: str) -> tables.Readable:
        return tables.readable(self.tables[name], name)


ANALYSED = ("summary_", "go_vs_rust_", "article_", "models_", "variants_", "per_task_", "aa_", *method.OWN_FAMILIES)
# The tables a run has only when its plan asks for them: why a run lacks one, for a reader who
# looks for it (the notebooks' `table`)
ONLY_WHEN = {
    "aa_": "the run has no A/A arms (a plan with aa=True runs each program against itself)",
    "models_": "no workload of the run has a second concurrency model to compare",
    "ratio_vs_cores_": "the run has one core count (a plan with cores: [1, 2] compares them)",
    "speedup_": "the run has one core count (a plan with cores: [1, 2] compares them)",
    "per_host_": "the run's samples come from one host (a cluster run pairs within each host)",
    "host_values_": "the run's samples come from one host (a cluster run pairs within each host)",
}


def load_with_design(results_dir: str | Path) -> pd.DataFrame:
    """The run's samples with its design attached (sequential.attach: its looks and family sizes,
    which every comparison reads) where the run has a plan (its meta.json)."""
    df = load(results_dir)
    if (Path(results_dir) / META).is_file():
        df = sequential.attach(df, ResultsStore(results_dir).read_plan())
    return df


def analyse(results_dir: str | Path, margin: float = compare.MARGIN, metrics=METRICS) -> Report:
    """Compute every table once: status and failures, checksums, per-cell summaries, Go/Rust
    comparisons (like for like) with verdicts, other models against tasks, the robustness of each
    verdict across variants, variant comparisons, per-task costs, drift, samples needed, and the A/A
    check when the run was one.  The comparisons use the run's design (its sequential looks)."""
    results_dir = require_run(results_dir)
    store = ResultsStore(results_dir)
    meta = store.read_meta(reading=True)  # an unreadable meta.json is named with what to do
    df = load_with_design(results_dir)
    rep = Report(results_dir, df, meta, margin)
    rep.tables["status"] = tables.status_counts(df)
    rep.tables["failures"] = tables.failure_groups(df)
    rep.tables["checksums"] = equivalence.check(df)
    if rep.empty:
        return rep
    for m in metrics:
        rep.tables[f"summary_{m}"] = stats.summarize(df, m)
        rep.tables[f"go_vs_rust_{m}"] = compare.compare(df, m, margin=margin)
        rep.tables[f"robustness_{m}"] = robustness.robustness(table=rep.tables[f"go_vs_rust_{m}"], metric=m,
                                                              margin=margin)
        rep.tables[f"go_vs_rust_{m}"]["robustness"] = robustness.row_flags(rep.tables[f"go_vs_rust_{m}"],
                                                                           rep.tables[f"robustness_{m}"])
        article = compare.compare_article(df, m, margin=margin)  # a family of its own, where the plan ran it
        if not article.empty:
            rep.tables[f"article_{m}"] = article
        models = compare.compare_models(df, m, margin=margin)
        if not models.empty:
            rep.tables[f"models_{m}"] = models
        rep.tables[f"variants_{m}"] = compare.compare_variants(df, m, margin=margin)
        # the samples that count for the metric (validity.counted: for memory, idle and sleep tasks
        # only where every task was alive at once; their time counts either way)
        rep.tables[f"per_task_{m}"] = scaling.per_task_cost(df, m)
        if (df["arm"].fillna("") != "").any():
            rep.tables[f"aa_{m}"] = compare.compare_arms(df, m, margin=margin)
    if "cores" in df.columns and df["cores"].dropna().nunique() > 1:  # a plan with several core counts
        for m in metrics:
            rep.tables[f"ratio_vs_cores_{m}"] = cores.ratio_vs_cores(df, m, margin=margin)
            rep.tables[f"speedup_{m}"] = cores.speedup(df, m)
    if "host" in df.columns and df["host"].dropna().nunique() > 1:  # a cluster run: pairs within each host
        described = {h: d for s in meta.get("sessions", []) if isinstance(s, dict)
                     for h, d in (s.get("hosts") or {}).items() if isinstance(d, dict)}
        if "host_label" not in df.columns:  # each host as meta.json describes it (its CPU, its share)
            labels = {h: d.get("label", h) for h, d in described.items()}
            df = df.assign(host_label=df["host"].map(labels).fillna(df["host"]))
        # a host not described in meta.json is a machine of its own, as store.hosts.load_hosts reads it
        prints = {h: d.get("fingerprint") or store_hosts.fingerprint(d) for h, d in described.items()}
        rep.host_machines = {h: store_hosts.machine_id(prints[h]) if h in prints else h
                             for h in sorted(df["host"].dropna().unique())}
        for m in hosts.METRICS:
            logs = hosts.host_log_ratios(df, m)
            rep.tables[f"per_host_{m}"] = hosts.per_host(df, m, margin)
            rep.tables[f"across_hosts_{m}"] = hosts.across_hosts(df, m, margin, logs=logs)
            # each host's value as the combination read it (the forest plot draws these)
            rep.tables[f"host_values_{m}"] = hosts.host_values(logs, rep.tables[f"across_hosts_{m}"])
    above = memory.above_baseline(rep.tables.get("go_vs_rust_peak_rss_mib", pd.DataFrame()), memory.baselines(df), df)
    if not above.empty:
        rep.tables["memory_above_baseline"] = above
    modes = memory.wait_modes(df)
    if not modes.empty:
        rep.tables["idle_wait_modes"] = modes
    rep.tables["drift_elapsed_s"] = quality.drift(df, "elapsed_s")
    if not rep.tables["go_vs_rust_elapsed_s"].empty:
        rep.tables["samples_needed_elapsed_s"] = quality.samples_needed(rep.tables["go_vs_rust_elapsed_s"], margin)
    return rep


def make_figures(rep: Report) -> Report:
    """Every figure of the report, drawn in the report's style and saved under export/figures/."""
    if rep.empty:
        return rep
    out = rep.export_dir / FIGURES

    def keep(name: str, fig) -> None:
        if fig is not None:
            title = getattr(fig, "bench_title", "")
            rep.figures[name] = images.save(fig, out, name)
            if title:
                rep.figure_titles[name] = title

    with theme.context():
        for m in FIGURE_METRICS:
            s = rep.tables.get(f"summary_{m}")
            if s is not None and not s.empty:
                keep(f"{m}_vs_n", figures.metric_vs_n(s, m))
            r = rep.tables.get(f"go_vs_rust_{m}")
            if r is not None and not r.empty:
                keep(f"ratio_{m}_vs_n", figures.ratio_vs_n(r, rep.margin))
                keep(f"verdicts_{m}", figures.verdict_heatmap(r, rep.margin))
            c = rep.tables.get(f"per_task_{m}")
            if c is not None and not c.empty:
                one_n = sorted(w for w, g in s.groupby("workload") if g["n"].nunique() == 1) if s is not None else []
                keep(f"per_task_{m}", figures.per_task(c, one_n))
            rc = rep.tables.get(f"ratio_vs_cores_{m}")
            if rc is not None and not rc.empty:
                keep(f"ratio_{m}_vs_cores", figures.ratio_vs_cores(rc, rep.margin))
            sp = rep.tables.get(f"speedup_{m}")
            if sp is not None and not sp.empty:
                keep(f"speedup_{m}", figures.speedup(sp))
            values, across = rep.tables.get(f"host_values_{m}"), rep.tables.get(f"across_hosts_{m}")
            if values is not None and across is not None and not values.empty and not across.empty:
                keep(f"forest_{m}", figures.forest(values, across, rep.margin))
        valid = rep.df[rep.df["valid"]]
        for w in sorted(valid["workload"].unique()):  # in name order, as every other section
            ns = sorted(valid.loc[valid["workload"] == w, "n"].unique())
            pick = [ns[0], ns[-1]] if len(ns) > 1 else ns
            keep(f"distribution_{w}", figures.distributions(rep.df, w, "elapsed_s", pick))
    return rep


def describe_method(rep: Report) -> Report:
    """The Method text of the analysed report (`rep.method`), which report.html and method.md show."""
    # the tables the statistics were computed in (derived tables such as samples_needed repeat
    # their rows and are left out, so that no family is described twice)
    analysed = {name: t for name, t in rep.tables.items() if name.startswith(ANALYSED)}
    rep.method = method.text(rep.meta, rep.df, analysed, rep.df.attrs.get("design"), rep.margin)
    return rep


def export_all(rep: Report, render_html: bool = False) -> Report:
    """Tables (CSV raw, Markdown formatted), samples (CSV, Parquet), benchstat files, the Method text
    and the self-contained HTML report; with `render_html`, also the executed notebooks of the
    directory that ran to the end."""
    describe_method(rep)
    for exporter in exporters(render_notebooks=render_html):
        rep.files += exporter.save(rep, rep.export_dir)
    return rep


def full_report(results_dir: str | Path, margin: float = compare.MARGIN, render_html: bool = False) -> Report:
    """Analyse, draw and export; the directory is checked before anything is written."""
    rep = analyse(results_dir, margin)
    make_figures(rep)
    return export_all(rep, render_html)
