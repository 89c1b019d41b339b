"""Does the engine change what is measured?  The same plan taken in this process and through a
host of a Dask cluster on the same machine: per cell, the ratio
in-process / cluster of each metric with its interval and verdict.  The question is equivalence: a cell passes when its whole interval
lies inside ±`margin` (1% by default: the engine must not be the difference a reader sees), the
`inside_margin` column, even where the interval also excludes 1 (a difference smaller than the
margin is no bias that matters).

Paired (`paired_check`, the check to use): one run of an A/A plan whose arm A is taken in this
process and arm B on one local host, both arms in every block (runner.run(..., engines=True),
`python -m bench_src engines --paired DIR`); each row is the A/A table's paired comparison.

Unpaired (`engine_check`): runs of each engine in directories of their own, taken in the order A B
B A, say, so that a drift of the machine does not read as the engine; runs are not paired with each
other: the comparison is the A/A table of
`compare.compare_arms` with arm "A" the in-process samples and arm "B" the cluster's, its rows
unpaired (their blocks belong to different runs) and decided by the same rule as every other table
(docs/statistics.md), one family per metric.  Assumption of the unpaired test: the two runs share
the machine's state (nothing else running, the same clock); drift between them is not separated
from the engine, so the runs are best taken back to back.  Peak RSS is compared by its median too,
in KiB, since a difference of one page would show the engine in the measured process.
"""
from __future__ import annotations

import pandas as pd

from . import compare, rules

METRICS = ("wall_s", "elapsed_s", "peak_rss_mib")


def engine_frame(in_process, cluster) -> pd.DataFrame:
    """One frame of both engines' runs (a frame or a list of frames each): arm "A" in-process, "B"
    through the cluster; each run keeps a run_id of its own (no pairs across runs)."""
    parts = []
    for arm, engine, frames in (("A", "in-process", in_process), ("B", "cluster", cluster)):
        for i, f in enumerate(frames if isinstance(frames, (list, tuple)) else [frames]):
            parts.append(f.assign(arm=arm, run_id=f"{engine}:{i}", cell_id=f["cell_id"] + f"|engine={engine}"))
    return pd.concat(parts, ignore_index=True)


def engine_check(in_process, cluster, metrics=METRICS, margin: float = rules.ENGINES_MARGIN) -> pd.DataFrame:
    """Per cell and metric: the ratio in-process / cluster (the A/A table's a / b) with its
    interval and verdict, and for peak RSS the two medians in KiB and their difference."""
    return _check(engine_frame(in_process, cluster), metrics, margin)


def paired_check(df: pd.DataFrame, metrics=METRICS, margin: float = rules.ENGINES_MARGIN) -> pd.DataFrame:
    """The same table from one run of the paired check (runner.run(..., engines=True)): arm A
    taken in this process, arm B on the cluster's host, both in every block, so each row is a
    paired comparison (per-block ratios: a drift of the machine between blocks cancels, and the
    run-to-run spread that the unpaired check cannot tell from the engine is not in it)."""
    return _check(df, metrics, margin)


def _check(df: pd.DataFrame, metrics, margin: float) -> pd.DataFrame:
    tables = []
    for m in metrics:
        t = compare.compare_arms(df, m, margin=margin)
        if t.empty:
            continue
        tables.append(t.assign(metric=m))
    out = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    if not out.empty:
        out["inside_margin"] = (out["ratio_ci_low"] >= 1 - margin) & (out["ratio_ci_high"] <= 1 + margin)
    if not out.empty and "a_median" in out.columns:
        rss = out["metric"] == "peak_rss_mib"
        out.loc[rss, "in_process_kib"] = out.loc[rss, "a_median"] * 1024
        out.loc[rss, "cluster_kib"] = out.loc[rss, "b_median"] * 1024
        out.loc[rss, "rss_difference_kib"] = out.loc[rss, "cluster_kib"] - out.loc[rss, "in_process_kib"]
    return out
