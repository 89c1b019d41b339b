"""Which samples count for a metric: the one rule every analysis of a metric reads (`counted`,
through compare.CellValues and stats.summarize), and every export of the samples reads too
(`memory_columns`: whether each sample's peak RSS counts for memory, and why not).

A sample counts when the store marked it valid (status ok, measured, its checksum agreeing:
store/equivalence.py).  For the memory metrics a sample of a workload whose programs count the tasks
alive at the last spawn (catalogue.ALIVE_COUNTED: idle_tasks and sleep) counts only where every one
of its N tasks was alive at once (`all_alive`): a task that finished before the last was spawned
holds no memory at the peak (its memory is reused by the tasks spawned after it), so a sample whose
early tasks had finished measured the memory of fewer tasks than its N (idle_tasks at N = 1,000,000
with wait=sleep: a Go sample whose spawning was slow had 677,083 alive and a peak 28% below its
cell's other samples; sleep at N = 100,000 with work=50000: Go spawned for 15-17 s while each task
sleeps at most 299 ms, and 3,264 to 4,525 of its tasks were alive at the last spawn, Rust's 99.7%).
Its time still counts: the workload it timed is the one its cell defines.  A sample of a program
older than the count is trusted only where its last spawn came before its shortest wait could end
(catalogue.shortest_wait_ns), which proves every task alive.
"""
from __future__ import annotations

import pandas as pd

from ..catalogue import ALIVE_COUNTED, shortest_wait_ns
from .rules import MEMORY_METRICS

# The columns `memory_columns` adds to the samples an export writes (samples.csv, samples.parquet):
# whether the sample's peak RSS counts for the memory metrics, and why not ("" where it counts)
COUNTS_FOR_MEMORY = "counts_for_memory"
MEMORY_EXCLUDED = "memory_excluded"
NOT_VALID = "not valid: counts for no metric (see status, phase and valid)"
NO_COUNT = "no count of the tasks alive at the last spawn (a program older than the count)"


def _column(df: pd.DataFrame, name: str) -> pd.Series:
    return pd.to_numeric(df.get(name, pd.Series(index=df.index, dtype=float)), errors="coerce")


def _params(text) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in str(text or "").split(",") if "=" in kv)


def shortest_wait(df: pd.DataFrame) -> pd.Series:
    """Per row: the least time any of its tasks lives from the timer's start, in ns
    (catalogue.shortest_wait_ns; NaN where the work sets none)."""
    params = df["params"] if "params" in df.columns else pd.Series("", index=df.index)
    keys = pd.Series(list(zip(df["workload"], pd.to_numeric(df["n"], errors="coerce"), params.astype(str))),
                     index=df.index)
    floors = {k: shortest_wait_ns(k[0], int(k[1]), _params(k[2])) if pd.notna(k[1]) else None for k in set(keys)}
    return pd.to_numeric(keys.map(lambda k: floors[k]), errors="coerce").astype(float)


def all_alive(df: pd.DataFrame) -> pd.Series:
    """Per row: whether every task was alive at once.  Rows of the workloads whose programs count
    their tasks alive (catalogue.ALIVE_COUNTED) need `alive_at_spawn` = N (the tasks that had not
    finished when the last one had been spawned); rows of other workloads are True.  A sample
    without the count (an older program) is trusted only where its last spawn (`spawned_ns`) came
    before its shortest wait could end (`shortest_wait`)."""
    counting = df["workload"].isin(ALIVE_COUNTED)
    alive = _column(df, "alive_at_spawn")
    ok = alive == pd.to_numeric(df["n"], errors="coerce")
    missing = counting & alive.isna()
    if missing.any():
        rows = df[missing]
        ok[missing] = _column(rows, "spawned_ns") < shortest_wait(rows)
    return ~counting | ok


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
        rows = df[short]
        alive, n, spawned = _column(rows, "alive_at_spawn"), _column(rows, "n"), _column(rows, "spawned_ns")
        floor = shortest_wait(rows)
        why[short] = [
            f"not every task alive at once: {int(a):,} of {int(k):,} alive when the last was spawned"
            if pd.notna(a) else
            f"{NO_COUNT}, and its last spawn ({_ms(s)}) came no earlier than its shortest wait could end "
            f"({_ms(f)}): not trusted" if pd.notna(s) and pd.notna(f) else
            f"{NO_COUNT}, nor a shortest wait its spawning can be held against: not trusted"
            for a, k, s, f in zip(alive, n, spawned, floor)]
    return why


def _ms(ns: float) -> str:
    return f"{ns / 1e9:.3g} s" if ns >= 1e9 else f"{ns / 1e6:.3g} ms"


def _span(values: pd.Series, fmt) -> str:
    lo, hi = values.min(), values.max()
    return fmt(lo) if lo == hi else f"{fmt(lo)} to {fmt(hi)}"


def memory_excluded_summary(df: pd.DataFrame) -> str:
    """Why the samples of `df` that do not count for memory do not, in one phrase: each reason of
    `memory_excluded` once, with how many samples it holds and the range of their figures."""
    why = memory_excluded(df)
    out = why != ""
    if not out.any():
        return ""
    parts = []
    invalid = why == NOT_VALID
    if invalid.any():
        parts.append(f"{int(invalid.sum())} not valid")
    alive, n = _column(df, "alive_at_spawn"), _column(df, "n")
    short = out & ~invalid & alive.notna()
    if short.any():
        of = f"{int(n[short].iloc[0]):,}" if n[short].nunique() == 1 else "N"
        parts.append(f"{int(short.sum())} not every task alive at once ({_span(alive[short], lambda v: f'{int(v):,}')} "
                     f"of {of} alive when the last was spawned)")
    unknown = out & ~invalid & alive.isna()
    if unknown.any():
        spawned, floor = _column(df, "spawned_ns")[unknown], shortest_wait(df[unknown])
        held = spawned.notna() & floor.notna()
        text = f"{int(unknown.sum())} with {NO_COUNT}"
        if held.all():
            text += (f" whose last spawn ({_span(spawned, _ms)}) came no earlier than their shortest wait could end "
                     f"({_span(floor, _ms)})")
        parts.append(text + ": not trusted")
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
