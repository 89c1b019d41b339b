"""The sections of reproduce_article.ipynb: our results beside the 2022 article's tables and the
related posts' figures (bench_src.analysis.published), each also exported under `export/tables/`."""
from __future__ import annotations

import pandas as pd

from ..analysis import published, stats
from ..store import load
from . import export, tables
from .notebook import Section


class ReproduceView:
    def __init__(self, parameters):
        self.results_dir = parameters.results_dir
        self.margin = parameters.margin
        self.table = parameters.table
        self.df = load(self.results_dir)
        self._side: pd.DataFrame | None = None

    def __repr__(self) -> str:
        return f"{self.results_dir}: {len(self.df):,} samples; article table {self.table}, margin ±{self.margin:.0%}"

    def side_frame(self) -> pd.DataFrame:
        if self._side is None:
            self._side = published.side_by_side(self.df, margin=self.margin, table=self.table)
            export.save_table(self._side, self.results_dir, f"reproduce_article_{self.table}")
        return self._side

    def side_by_side(self) -> tables.Readable:
        """One row per cell of the article's table: its ratios, ours with CIs and verdicts, and
        whether its claim survives."""
        return tables.generic(self.side_frame(), "The article's cells beside ours")

    def claims(self) -> tables.Readable:
        side = self.side_frame()
        cols = [c for c in side.columns if c.endswith("_claim")]
        if side.empty or not cols:
            return tables.Readable(pd.DataFrame(), "no claims to check", "Claims")
        claims = side.melt(id_vars=["workload", "n"], value_vars=cols, var_name="comparison", value_name="outcome")
        counts = claims.groupby(["comparison", "outcome"]).size().unstack(fill_value=0).reset_index()
        counts.columns = [str(c) for c in counts.columns]
        return tables.Readable(counts.astype(str), "cells of the article's table per outcome", "Does each claim survive?")

    def kernel_effect(self) -> tables.Readable | Section:
        k = self.df[(self.df["workload"] == "sleep") & self.df["valid"]] if not self.df.empty else self.df
        varies = any(c in k and k[c].nunique() > 1 for c in ("p_kernel", "p_work"))
        if not varies:
            return Section("this run has one sleep kernel/work setting only; run the kernel-article profile to show "
                           "the effect")
        return tables.readable(stats.summarize(k, "elapsed_s"), "summary_elapsed_s")

    def posts(self) -> tables.Readable:
        posts = published.posts_side_by_side(self.df)
        export.save_table(posts, self.results_dir, "reproduce_other_posts")
        return tables.generic(posts, "The related posts' figures beside ours")
