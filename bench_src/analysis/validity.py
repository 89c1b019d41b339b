"""Which samples count for a metric: the one rule every analysis of a metric reads (`counted`,
through compare.CellValues and stats.summarize), and every export of the samples reads too
(`memory_columns`: whether each sample's peak RSS counts for memory, and why not).

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

# The columns `memory_columns` adds to the samples an export writes (samples.csv, samples.parquet):
# whether the sample's peak RSS counts for the memory metrics, and why not ("" where it counts)
COUNTS_FOR_MEMORY = "counts_for_memory"
MEMORY_EXCLUDED = "memory_excluded"
NOT_VALID = "not valid: counts for no metric (see status, phase and valid)"


def all_alive(df: pd.DataFrame) -> pd.Series:
    """Per row: whether every task was alive at once.  idle_tasks rows need `alive_at_spawn` = N
    (the program counts the tasks that had not finished when the last one had been spawned); rows
    of other workloads are True.  A sample without the count (an older program) is not trusted."""
    idle = df["workload"] == "idle_tasks"
    alive = pd.to_numeric(df.get("alive_at_spawn", pd.Series(index=df.index, dtype=float)), errors="coerce")
    return ~idle | (alive == pd.to_numeric(df["n"], errors="coerce"))


def _valid(df: pd.DataFrame) -> pd.Series:
    return df["valid"].astype(bool) if "valid" in df.columns else pd.Series(True, index=df.index)


def memory_excluded(df: pd.DataFrame) -> pd.Series:
    """Per row: why its peak RSS does not count for the memory metrics, "" where it does (the rule of
    `counted`, in words: not valid; or not every task alive at once, with the count the program gave,
    or no count where its workload needs one)."""
    why = pd.Series("", index=df.index, dtype=object)
    if df.empty:
        return why
    valid = _valid(df)
    why[~valid] = NOT_VALID
    if "workload" not in df.columns:
        return why
    short = valid & ~all_alive(df)
    if short.any():
        alive = pd.to_numeric(df.get("alive_at_spawn", pd.Series(index=df.index, dtype=float)), errors="coerce")
        n = pd.to_numeric(df["n"], errors="coerce")
        why[short] = [
            "no count of the tasks alive at the last spawn (a program older than the count): not trusted"
            if pd.isna(a) else
            f"not every task alive at once: {int(a):,} of {int(k):,} alive when the last was spawned"
            for a, k in zip(alive[short], n[short])]
    return why


def memory_excluded_summary(df: pd.DataFrame) -> str:
    """Why the samples of `df` that do not count for memory do not, in one phrase (each reason of
    `memory_excluded` once, with how many samples it holds and the range of the alive counts)."""
    why = memory_excluded(df)
    why = why[why != ""]
    if why.empty:
        return ""
    parts = []
    invalid = int((why == NOT_VALID).sum())
    if invalid:
        parts.append(f"{invalid} not valid")
    short = why.str.startswith("not every task alive")
    if short.any():
        alive = pd.to_numeric(df.loc[why[short].index, "alive_at_spawn"], errors="coerce").astype(int)
        n = pd.to_numeric(df.loc[why[short].index, "n"], errors="coerce").astype(int)
        span = f"{alive.min():,}" if alive.min() == alive.max() else f"{alive.min():,} to {alive.max():,}"
        of = f"{n.iloc[0]:,}" if n.nunique() == 1 else "N"
        parts.append(f"{int(short.sum())} not every task alive at once ({span} of {of} alive when the last was "
                     "spawned)")
    other = why[(why != NOT_VALID) & ~short]
    for text, k in other.value_counts().items():
        parts.append(f"{k} {text}")
    return "; ".join(parts)


def memory_columns(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with COUNTS_FOR_MEMORY and MEMORY_EXCLUDED after its columns (`memory_excluded`): what an
    export of the samples writes beside each raw peak RSS, so that a reader of the file sees which
    values the memory tables used."""
    why = memory_excluded(df)
    return df.assign(**{COUNTS_FOR_MEMORY: (why == "").astype(bool), MEMORY_EXCLUDED: why})


def counted(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows of `df` that count for `metric`: valid ones (all, in a frame without the column)
    and, for a memory metric, those with every task alive at once (`all_alive`; in words,
    `memory_excluded`)."""
    if metric in MEMORY_METRICS:
        return df[memory_excluded(df) == ""]
    return df[_valid(df)]
