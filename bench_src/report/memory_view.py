"""The memory notebook's sections: idle-task memory and bytes per task, peak memory above each
program's baseline, RSS timelines, threads vs goroutines vs tokio tasks, and ping-pong.  Each
method computes its table once, writes it (CSV and Markdown) and its figure (SVG, PNG, PDF) under
`<results_dir>/export/`, and returns what the cell shows."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..analysis import compare, memory, stats
from ..store.timelines import timelines
from . import export, figures, full, tables, theme, units
from .notebook import Section

CELL = theme.SERIES_KEYS  # a timeline's cell: the parameters (wait, linger) included


class MemoryView:
    def __init__(self, results_dir: str | Path):
        self.results_dir = Path(results_dir)
        self.df = full.load_with_design(self.results_dir)  # the design: memory above baseline compares
        self.idle = self.df[self.df["workload"] == "idle_tasks"] if not self.df.empty else self.df

    def __repr__(self) -> str:
        workloads = ", ".join(sorted(self.df["workload"].unique())) if not self.df.empty else "none"
        return f"{self.results_dir}: {len(self.df):,} samples; workloads: {workloads}"

    def _figure(self, fig, name: str) -> Path | None:
        if fig is None:
            return None
        paths = export.save_figure(fig, self.results_dir, name)
        return next(p for p in paths if p.suffix == ".png")

    def _table(self, table: pd.DataFrame, name: str, kind: str = "") -> tables.Readable:
        readable = tables.readable(table, kind or name)
        export.save_table(table, self.results_dir, name, readable)
        return readable

    def idle_peak(self) -> Section:
        """Peak RSS of N idle tasks per language and variant: median and its distribution-free CI
        (its coverage stated), and vs N."""
        if self.idle.empty or not self.idle["valid"].any():
            return Section("no valid idle_tasks samples in this run")
        s = stats.summarize(self.idle, "peak_rss_mib")
        with theme.context():
            png = self._figure(figures.metric_vs_n(s, "peak_rss_mib", distinct_series=True), "idle_tasks_peak_rss_vs_n")
        return Section(self._table(s, "idle_tasks_peak_rss", "summary_peak_rss_mib"), png)

    def bytes_per_task(self) -> Section:
        """Bytes per task: the slope of peak RSS over N with its CI, from the samples in which every
        task was alive at once; and how many samples were left out (their early tasks had ended)."""
        if self.idle.empty or not self.idle["valid"].any():
            return Section("no valid idle_tasks samples in this run")
        costs, left_out = memory.bytes_per_task(self.idle, "peak_rss_bytes")
        readable = self._table(costs, "idle_tasks_bytes_per_task", "per_task_peak_rss_bytes")
        with theme.context():
            png = (self._figure(figures.per_task(costs), "idle_tasks_bytes_per_task") if len(costs)
                   else None)
        note = (f"{left_out} valid samples were left out: some of their tasks had finished before the last one "
                "was spawned (alive_at_spawn < N)" if left_out else
                "every sample counted had all its tasks alive at once (alive_at_spawn = N)")
        return Section(readable, png, note)

    def above_baseline(self) -> Section:
        """Peak RSS of each Go-vs-Rust comparison above each program's baseline (idle_tasks at
        N = 1, released, in the language's default variant): the two amounts and their ratio with
        95% intervals, as the full report gives them (memory.above_baseline, on the run's design)."""
        if self.df.empty or not self.df["valid"].any():
            return Section("no valid samples in this run")
        df = self.df
        base = memory.baselines(df)
        if base.empty:
            return Section("no baseline in this run: it needs idle_tasks at N = 1 with wait=release in each "
                           "language's default variant (the quick and article profiles run it)")
        table = memory.above_baseline(compare.compare(df, "peak_rss_mib"), base, df)
        if table.empty:
            return Section("no Go-vs-Rust peak RSS comparison in this run")
        return Section(self._table(table, "memory_above_baseline"))

    def timeline(self) -> Section:
        """RSS over time of one measured sample per cell (language, variant, N and parameters), and
        the share of the peak each cell gave back by the end of the linger."""
        tl = timelines(self.results_dir, "idle_tasks")
        if tl.empty:
            return Section("no timelines in this run: run with timeline_ms=10 (the memory profile does)")
        measured = tl[tl["phase"] == "measured"]
        pick = measured.groupby(CELL, dropna=False)["sample_id"].first()
        with theme.context():
            png = self._figure(figures.rss_timeline(tl[tl["sample_id"].isin(pick)]), "idle_tasks_rss_timeline")
        back = memory.returned_memory(tl)
        med = back.groupby(CELL, dropna=False)[["peak_rss_mib", "last_rss_mib", "returned_share"]].median()
        med = med.reset_index()
        shown = pd.DataFrame({"lang": med["lang"], "variant": med["variant"], "N": med["n"].map(units.count),
                              "settings": med["params"].map(lambda p: tables.params_text(tables.params_dict(p))),
                              "peak RSS": med["peak_rss_mib"].map(lambda v: units.quantity(v, "MiB")),
                              "RSS at the end": med["last_rss_mib"].map(
                                  lambda v: units.quantity(v, "MiB") if pd.notna(v) else "no point in the linger"),
                              "given back": med["returned_share"].map(
                                  lambda v: units.percent(v) if pd.notna(v) else "")})
        readable = tables.finish(shown, "Memory given back after the tasks ended",
                                 "medians over the samples with a timeline; the peak is the highest point of "
                                 "the timeline while the tasks ran, read every timeline_ms, so it can lie below "
                                 "the exact peak of the wait4 tables; a negative share: RSS grew after the tasks "
                                 "ended", keep=("lang", "variant", "N", "peak RSS", "RSS at the end", "given back"))
        export.save_table(back, self.results_dir, "idle_tasks_returned_memory", readable)
        return Section(png, readable)

    def threads_vs_tasks(self) -> Section:
        """Wall time, CPU time and its split into user and system time, peak RSS and context switches
        per cell (median and its distribution-free CI, its coverage stated)."""
        tvt = memory.side_by_side(self.df, "threads_vs_tasks") if not self.df.empty else pd.DataFrame()
        if tvt.empty:
            return Section("no valid threads_vs_tasks samples in this run")
        wide = []
        for (lang, variant, n), g in tvt.groupby(["lang", "variant", "n"], sort=False):
            row = {"lang": lang, "variant": variant, "N": units.count(n)}
            for r in g.itertuples():
                row[units.metric_name(r.metric)] = units.interval(r.median, r.ci_low, r.ci_high,
                                                                  units.metric_unit(r.metric) or "count")
            wide.append(row)
        with theme.context():
            png = self._figure(figures.metrics_side_by_side(tvt), "threads_vs_tasks")
        frame, constants = tables.split_constants(pd.DataFrame(wide))
        caption = (f"median [CI, coverage {units.coverage(tvt['ci_coverage'], tvt['ci_coverage_kind'])}]; "
                   "CPU time (user + system) is exact, its split into user and system time is sampled at the "
                   "kernel's timer tick (the Method says how this kernel splits it)"
                   + ("; every row: " + "; ".join(f"{k}: {v}" for k, v in constants.items()) if constants else ""))
        readable = tables.Readable(frame, caption, "Threads vs goroutines vs tokio tasks")
        export.save_table(tvt, self.results_dir, "threads_vs_tasks", readable)
        return Section(readable, png)

    def ping_pong(self) -> Section:
        """Round trips per second per runtime flavour, channel capacity and mode."""
        rates = memory.ping_pong_rates(self.df) if not self.df.empty else pd.DataFrame()
        if rates.empty:
            return Section("no valid ping_pong samples in this run")
        shown = pd.DataFrame({"lang": rates["lang"], "variant": rates["variant"], "N": rates["n"].map(units.count),
                              "mode": rates["mode"], "buffer": rates["buffer"].astype(str),
                              "samples": rates["samples"].astype(str),
                              "round trips per second [CI]": [
                                  units.interval(m, lo, hi, "/s") for m, lo, hi in
                                  zip(rates["round_trips_per_s"], rates["ci_low"], rates["ci_high"])]})
        frame, constants = tables.split_constants(shown)
        caption = "; ".join(f"{k}: {v}" for k, v in constants.items())
        level = f"median [CI, coverage {units.coverage(rates['ci_coverage'], rates['ci_coverage_kind'])}]"
        with theme.context():
            png = self._figure(figures.ping_pong_bars(rates), "ping_pong_rates")
        readable = tables.Readable(frame, f"{level}; every row: {caption}" if caption else level, "Ping-pong")
        export.save_table(rates, self.results_dir, "ping_pong_rates", readable)
        return Section(readable, png)
