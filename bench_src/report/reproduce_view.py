"""The sections of reproduce_article.ipynb: our results beside the 2022 article's tables and the
related posts' figures (bench_src.analysis.published), each also exported under `export/tables/`."""
from __future__ import annotations

import pandas as pd

from ..analysis import paired, published, rules, stats
from . import export, full, tables, units
from .notebook import Section


def ours_text(row, label: str) -> str:
    """One cell of the reproduction table: our ratio [CI], verdict and outcome with `label`'s
    settings, and the comparison's note and warning where it has them (an estimate outside its
    interval, when the sequential rule's looks disagree, is said beside the numbers that show it; so
    is a cell whose values are dispersed, as in every comparison row)."""
    if row[f"{label}_verdict_kind"] == "not measured":
        return "not measured in this run"
    if row[f"{label}_verdict_kind"] in (published.CLAIM_FAILED, published.NOT_COUNTED):
        return row[f"{label}_verdict"]  # a recorded failure, or samples that do not count: no measurement
    said = [x for x in (row.get(f"{label}_note"), row.get(f"{label}_warning")) if isinstance(x, str) and x]
    if row[f"{label}_verdict_kind"] == published.NOT_TESTED:  # no ratio, no interval: the warning says why
        return published.NOT_TESTED + "".join(f"; {x}" for x in said)
    ratio = units.ratio(row[f"{label}_ratio"], row[f"{label}_ratio_ci_low"], row[f"{label}_ratio_ci_high"])
    return f"{ratio} {row[f'{label}_verdict']}: {row[f'{label}_outcome']}" + "".join(f"; {x}" for x in said)


LABELS = {"ours_default": "the defaults", "ours_article": "the article's settings"}


def coverage_line(side: pd.DataFrame) -> str | None:
    """One line saying how many of the article's cells (workload, N and metric of its table) the
    run measured, with each settings, when it did not measure them all; None when it did."""
    total = len(side)
    if not total:  # no cell at all: the side-by-side table says so
        return None
    measured = {label: int((side[f"{label}_verdict_kind"] != "not measured").sum()) for label in LABELS}
    if all(k == total for k in measured.values()):
        return None
    first, second = measured.items()
    return (f"this run measured {first[1]} of the article's {total} cells (workload, N and metric) with "
            f"{LABELS[first[0]]} and {second[1]} with {LABELS[second[0]]}; the others read \"not measured\": the "
            "article and article-full profiles (make run PROFILE=article) measure the article's grid "
            "(bench_src/profiles.py says which cells each leaves out, and why)")


class ReproduceView:
    def __init__(self, parameters):
        self.results_dir = parameters.results_dir
        self.margin = parameters.margin
        self.table = parameters.table
        # the run's design: its looks adjust the p-values (published.side_by_side)
        self.df = full.load_with_design(self.results_dir)
        self._side: pd.DataFrame | None = None

    def __repr__(self) -> str:
        head = f"{self.results_dir}: {len(self.df):,} samples; article table {self.table}, margin ±{self.margin:.0%}"
        missing = coverage_line(self.side_frame())
        return head + (f"\n{missing}" if missing else "")

    def side_frame(self) -> pd.DataFrame:
        if self._side is None:
            self._side = published.side_by_side(self.df, margin=self.margin, table=self.table)
            export.save_table(self._side, self.results_dir, f"reproduce_article_{self.table}")
        return self._side

    def side_by_side(self) -> tables.Readable:
        """One row per cell of the article's table and metric: its ratio and claim (beyond what it
        could resolve), our verdict with its settings and with the defaults, each outcome, how much the settings
        moved the ratio, and the cause where they moved it."""
        side = self.side_frame()
        if side.empty:
            return tables.Readable(pd.DataFrame(), "no cell of the article's table was measured", "Reproduction")

        shown = pd.DataFrame({
            "workload": side["workload"], "N": side["n"].map(units.count), "metric": side["metric"],
            "cores": side["cores"].map(lambda k: "" if pd.isna(k) else str(int(k))),
            "article Go/Rust": side["article_ratio"].map(lambda v: units.significant(v, 3)),
            "claim (beyond)": [f"{c or 'none'} (±{units.percent(t)})" if pd.notna(t) and t != float("inf")
                               else f"{c or 'none'}" for c, t in zip(side["article_claim"], side["claim_threshold"])],
            "ours, article's settings": [ours_text(r, "ours_article") for _, r in side.iterrows()],
            "ours, defaults": [ours_text(r, "ours_default") for _, r in side.iterrows()],
            "article's ratio against ours (article's settings; defaults)": [
                "; ".join(v or "-" for v in pair) for pair in zip(side["ours_article_article_ratio_is"],
                                                                    side["ours_default_article_ratio_is"])],
            "settings' effect": [f"{units.ratio(r, lo, hi)} ({int(k)} pairs)" if pd.notna(r) else ""
                                 for r, lo, hi, k in zip(side["settings_effect_ratio"], side["settings_effect_ci_low"],
                                                         side["settings_effect_ci_high"],
                                                         side["settings_effect_pairs"])],
            "cause": [f"{k}: {c}" if k else "" for k, c in zip(side["cause_kind"], side["cause"])],
        })
        def levels(label):
            found = sorted(pd.to_numeric(side.get(f"{label}_ci_level", pd.Series(dtype=float)),
                                         errors="coerce").dropna().unique())
            if not found:
                return "none measured"
            return units.coverage(found)

        pairs = pd.to_numeric(side["settings_effect_pairs"], errors="coerce")
        effect_level = units.coverage([paired.rank_coverage(int(k), 1 - rules.CONFIDENCE)
                                       for k in pairs.dropna().unique() if k > 0])
        readable = tables.Readable(shown, f"Go/Rust ratios [CI at the level of the family each comes from: "
                                      f"{levels('ours_article')} with the article's settings, {levels('ours_default')} "
                                      "with the defaults]; claim: the article's direction where its ratio "
                                      "differs from 1 by more than its own repeat measurements and rounding allow "
                                      "(that share in brackets); an outcome judges that direction only (an equivalence "
                                      "refutes none smaller than the margin: \"unresolved: within the margin\"), and "
                                      "whether the "
                                      "article's ratio lies inside, below or above our interval says whether its size "
                                      "holds too; settings' effect: Go/Rust with the article's settings "
                                      "over Go/Rust with the defaults, paired per block over the blocks that hold all "
                                      "four cells (the pilot's where the sequential rule ran; their number in "
                                      "brackets), so it need not equal the quotient of the two ratios beside it, which "
                                      f"use every pair; its interval [{effect_level or 'none'}] is each row's own, not "
                                      "adjusted over the table's rows; cause: the settings' where their effect's "
                                      "interval excludes 1 or the article's settings failed, the platform's where the "
                                      "article's work cannot be rebuilt here (files_rw), platform and versions where "
                                      "our verdict with the article's settings contradicts its claim",
                               "The article's cells beside ours")
        export.save_table(side, self.results_dir, f"reproduce_article_{self.table}", readable)
        return readable

    def across_cores(self) -> tables.Readable | Section:
        """For the article's cells whose workload ran at several core counts: the claim, each core
        count's outcome (with its Go/Rust ratio) with the article's settings and with the defaults,
        and whether the claim holds at every core count."""
        t = published.by_cores(self.side_frame())
        if t.empty:
            return Section("no workload of the article's table ran at several core counts in this run (the "
                           "article-full profile pins the task workloads to 1 and to 2 cores)")
        ks = sorted({int(c.rsplit("_", 1)[1]) for c in t.columns if c.startswith("ours_default_at_")})
        shown = pd.DataFrame({"workload": t["workload"], "N": t["n"].map(units.count), "metric": t["metric"],
                              "claim": t["article_claim"].replace("", "none")})
        for label, name in (("ours_article", "article's settings"), ("ours_default", "defaults")):
            for k in ks:
                shown[f"{name}, {k} {'core' if k == 1 else 'cores'}"] = [
                    f"{units.significant(r, 3)}: {o}" if pd.notna(r) else o
                    for r, o in zip(t.get(f"{label}_ratio_at_{k}", pd.Series(index=t.index, dtype=float)),
                                    t.get(f"{label}_at_{k}", pd.Series("not measured", index=t.index)))]
            shown[f"{name}: at every core count"] = t[f"{label}_across_cores"]
        readable = tables.Readable(shown, "Go/Rust ratio and the claim's outcome at each core count (each a row of "
                                          "the reproduction table, decided in its family); holds: reproduced at that "
                                          "core count", "Does each claim hold at every core count?")
        export.save_table(t, self.results_dir, "reproduce_article_by_cores", readable)
        return readable

    def claims(self) -> tables.Readable:
        """How many of the article's cells end in each outcome, with its settings and with defaults."""
        counts = published.claims_summary(self.side_frame())
        readable = tables.Readable(counts.astype(str), "cells of the article's table per outcome",
                                   "Does each claim survive?")
        export.save_table(counts, self.results_dir, "reproduce_article_outcomes", readable)
        return readable

    def kernel_effect(self) -> tables.Readable | Section:
        k = self.df[(self.df["workload"] == "sleep") & self.df["valid"]] if not self.df.empty else self.df
        varies = any(c in k and k[c].nunique() > 1 for c in ("p_kernel", "p_work"))
        if not varies:
            return Section("this run has one sleep kernel/work setting only; run the kernel-article profile to show "
                           "the effect")
        return tables.readable(stats.summarize(k, "elapsed_s"), "summary_elapsed_s")

    def posts(self) -> tables.Readable:
        posts = published.posts_side_by_side(self.df)
        readable = tables.readable(posts, "reproduce_other_posts")
        export.save_table(posts, self.results_dir, "reproduce_other_posts", readable)
        return readable
