"""Memory and scheduling views for the related experiments: RSS timelines with the programs'
phases, threads vs goroutines side by side, and ping-pong round trips per second."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..store import ResultsStore
from .stats import CELL_KEYS, summarize

PHASES = ("spawned_ns", "finished_ns", "linger_end_ns")


def timelines(results_dir: str | Path, workload: str | None = "idle_tasks") -> pd.DataFrame:
    """Every stored RSS timeline as a long frame: one row per point, time in seconds from the
    workload timer's start (t0_mono_ns) and RSS in MiB, with the phase offsets of its sample."""
    store = ResultsStore(results_dir)
    df = store.load()
    if "timeline_file" not in df or df["timeline_file"].isna().all():
        return pd.DataFrame(columns=["sample_id", "lang", "variant", "n", "params", "t_s", "rss_mib", *PHASES])
    rows = df[df["timeline_file"].notna() & (df["status"] == "ok")]
    if workload:
        rows = rows[rows["workload"] == workload]
    parts = []
    for r in rows.itertuples():
        tl = store.read_timeline(r.timeline_file)
        tl = tl[tl["rss_bytes"] > 0]  # a point read as the process exited holds nothing
        extra = json.loads(r.extra) if isinstance(r.extra, str) else {}
        t0 = r.t0_mono_ns
        tl["t_s"] = (tl["t_mono_ns"] - t0) / 1e9
        tl["rss_mib"] = tl["rss_bytes"] / 2**20
        for key in ("sample_id", "lang", "variant", "n", "params", "phase"):
            tl[key] = getattr(r, key)
        tl["spawned_ns"] = r.spawned_ns
        for key in PHASES[1:]:
            tl[key] = extra.get(key)
        parts.append(tl)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def returned_memory(tl: pd.DataFrame) -> pd.DataFrame:
    """Per sample: peak RSS while the tasks ran, RSS at the end of the linger, and the share given back."""
    rows = []
    for sid, g in tl.groupby("sample_id"):
        g = g[g["rss_mib"] > 0]  # a point read as the process exited holds nothing
        fin, end = g["finished_ns"].iloc[0], g["linger_end_ns"].iloc[0]
        during = g[g["t_s"] <= (fin / 1e9 if pd.notna(fin) else g["t_s"].max())]
        lingering = g[g["t_s"] <= end / 1e9] if pd.notna(end) else g
        last = lingering.sort_values("t_s")["rss_mib"].iloc[-1]
        peak = during["rss_mib"].max() if not during.empty else g["rss_mib"].max()
        rows.append({"sample_id": sid, "lang": g["lang"].iloc[0], "variant": g["variant"].iloc[0],
                     "n": g["n"].iloc[0], "peak_rss_mib": peak, "last_rss_mib": last,
                     "returned_share": 1 - last / peak if peak else float("nan")})
    return pd.DataFrame(rows)


def side_by_side(df: pd.DataFrame, workload: str = "threads_vs_tasks",
                 metrics=("wall_s", "user_s", "sys_s", "peak_rss_mib", "context_switches")) -> pd.DataFrame:
    """Per cell of a workload, the median and 95% CI of several metrics, in long form (one row
    per cell and metric, with the cell's `p_<key>` columns)."""
    part = df[df["workload"] == workload]
    tables = [summarize(part, m) for m in metrics]
    tables = [t for t in tables if not t.empty]
    if not tables:
        return pd.DataFrame(columns=[*CELL_KEYS, "metric", "samples", "median", "ci_low", "ci_high"])
    out = pd.concat(tables, ignore_index=True)
    keep = [*CELL_KEYS, *(c for c in out.columns if c.startswith("p_")), "metric", "samples", "median", "ci_low",
            "ci_high", "ci_coverage"]
    return out[keep]


def ping_pong_rates(df: pd.DataFrame) -> pd.DataFrame:
    """Round trips per second (N / workload time) per runtime flavour, buffer and mode."""
    t = side_by_side(df, "ping_pong", metrics=("per_s",))
    if t.empty:
        return t
    t["buffer"] = pd.to_numeric(t["p_buffer"], errors="coerce").fillna(-1).astype(int)
    t["mode"] = t["p_mode"]
    return t.rename(columns={"median": "round_trips_per_s"}).sort_values(["mode", "buffer", "lang", "variant"])
