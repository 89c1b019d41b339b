"""A Method section generated from what was actually run: the machine and toolchains, the design
(cells, samples, order), how time and memory were measured, what was excluded and why, and the
statistics.  A run in which no sample entered the analysis gets a short statement saying so
instead of a Method paragraph about zero samples.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...analysis import rules
from ...analysis.compare import MARGIN


def _count_text(counts: dict) -> str:
    return ", ".join(f"{k}: {v:,}" for k, v in counts.items())


def empty_text(meta: dict, df: pd.DataFrame) -> str | None:
    """The statement for a run with no valid sample, or None when there is something to analyse."""
    valid = int(df["valid"].sum()) if "valid" in df and not df.empty else 0
    if valid:
        return None
    plan = meta.get("plan", {})
    if df.empty:
        return (f"No sample has been taken in this run yet (plan: {', '.join(plan.get('workloads', [])) or 'none'}; "
                f"{plan.get('samples', '?')} measured samples per cell). There is nothing to analyse: run the plan, "
                "then analyse the directory again.")
    measured = df[df["phase"] == "measured"] if "phase" in df else df
    return (f"No sample of this run entered the analysis: {len(df):,} samples were taken "
            f"({len(measured):,} measured), and none was a successful measured sample with agreeing checksums "
            f"(statuses: {_count_text(df['status'].value_counts().to_dict())}). The failures table says why; "
            "no statistic is reported.")


def method_text(meta: dict, df: pd.DataFrame, margin: float = MARGIN, statistics: str | None = None) -> str:
    """The Method paragraph for this run.  `statistics` is its statistics part, written by
    bench_src.analysis.rules.method_statistics from the tables the report analysed; without it, the
    rules alone (no table)."""
    empty = empty_text(meta, df)
    if empty:
        return empty
    plan = meta["plan"]
    session = meta["sessions"][-1]
    m, tc = session.get("machine", {}) or {}, session.get("toolchains", {}) or {}
    measured = df[df["phase"] == "measured"]
    valid = df[df["valid"]]
    excluded = measured[~measured["valid"]]
    reasons = excluded["status"].value_counts().to_dict()
    cells = df["cell_id"].nunique()
    per_cell = valid.groupby("cell_id").size()
    servers = session.get("context", {}) or {}
    server_text = "; ".join(f"{v['kind']} {v['version']}" for v in servers.values()
                            if isinstance(v, dict) and "version" in v)
    if per_cell.min() == per_cell.max():
        samples_text = f"{plan['samples']} measured samples"
    else:
        samples_text = f"{plan['samples']} measured samples (between {per_cell.min()} and {per_cell.max()} entered the analysis per cell)"
    sequential = ""
    if plan.get("max_samples"):
        sequential = (f" These {plan['samples']} blocks were the pilot of a sequential rule fixed before the run: "
                      f"further blocks held only the cells whose comparisons were still open, up to "
                      f"{plan['max_samples']} samples per cell (the statistics below say how it decided).")
    threads = plan.get("threads")
    threads_text = f"with --threads {threads}" if threads else "with every logical CPU available to each runtime"
    text = (
        f"All measurements were taken on {m.get('cpu_model', 'an unknown CPU')} with {m.get('logical_cpus')} logical "
        f"CPUs and {m.get('ram_bytes', 0) / 2**30:.0f} GiB of RAM, Linux {m.get('kernel')}, using "
        f"{tc.get('go')}, {tc.get('rustc')} and the tokio version recorded per sample"
        + (f"; database servers: {server_text}" if server_text else "") + f", {threads_text}. "
        f"The run covered {cells} cells (workload x language x variant x N x parameters) of the workloads "
        f"{', '.join(plan['workloads'])}. Each cell received {plan['warmup']} warm-up sample(s), discarded, and "
        f"{samples_text}. Samples were taken in blocks holding every cell once, each block in a "
        f"random order (seed {plan['seed']}), so that the languages were interleaved and slow drift spread over all "
        f"cells.{sequential} Each sample is a fresh process started by a small launcher; wall time comes from the "
        f"monotonic clock around the process, the workload time from the program's own monotonic timer, and CPU "
        f"times and peak resident memory from the kernel's accounting of the finished process (wait4), never from "
        f"polling. Both programs print a checksum of their work; samples of a workload, N and parameter set whose "
        f"checksums disagreed across languages or samples were excluded. {len(valid):,} samples entered the analysis"
        + (f"; {len(excluded):,} measured samples were excluded ({_count_text(reasons)})" if len(excluded)
           else "; none was excluded") + ". "
        + (statistics if statistics is not None else rules.method_statistics({}, None, margin))
    )
    return text


def save(meta: dict, df: pd.DataFrame, path: str | Path, margin: float = MARGIN, **kwargs) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Method\n\n" + method_text(meta, df, margin, **kwargs) + "\n")
    return path
