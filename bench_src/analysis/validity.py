"""Which samples count for a metric: the one rule every analysis of a metric reads (`counted`,
through compare.CellValues and stats.summarize).

A sample counts when the store marked it valid (status ok, measured, its checksum agreeing:
store/equivalence.py).  For the memory metrics an idle_tasks sample counts only where every one of
its N tasks was alive at once (`all_alive`): a task that finished before the last was spawned holds
no memory at the peak, so a sample whose early tasks had finished measured the memory of fewer
tasks than its N (at N = 1,000,000 with wait=sleep, a Go sample whose spawning was slow had 677,083
alive and a peak 28% below its cell's other samples).  Its time still counts: the workload it
timed is the one its cell defines.
"""
from __future__ import annotations

import pandas as pd

from .rules import MEMORY_METRICS


def all_alive(df: pd.DataFrame) -> pd.Series:
    """Per row: whether every task was alive at once.  idle_tasks rows need `alive_at_spawn` = N
    (the program counts the tasks that had not finished when the last one had been spawned); rows
    of other workloads are True.  A sample without the count (an older program) is not trusted."""
    idle = df["workload"] == "idle_tasks"
    alive = pd.to_numeric(df.get("alive_at_spawn", pd.Series(index=df.index, dtype=float)), errors="coerce")
    return ~idle | (alive == pd.to_numeric(df["n"], errors="coerce"))


def counted(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows of `df` that count for `metric`: valid ones (all, in a frame without the column)
    and, for a memory metric, those with every task alive at once (`all_alive`)."""
    keep = df["valid"].astype(bool) if "valid" in df.columns else pd.Series(True, index=df.index)
    if metric in MEMORY_METRICS and "workload" in df.columns and not df.empty:
        keep &= all_alive(df)
    return df[keep]
