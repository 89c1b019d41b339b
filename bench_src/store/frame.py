"""The tidy samples frame: one row per sample, the stored columns in order, one `p_<key>` column per
parameter, and derived columns in convenient units (seconds, MiB, alive tasks)."""
from __future__ import annotations

import json
from typing import Any, Iterable

import pandas as pd

from ..statuses import OK

# Columns of the tidy frame, in order (documented in the README).
COLUMNS = [
    "run_id", "sample_id", "seq", "session", "phase", "block", "pos", "cell_id", "workload", "lang", "variant",
    "n", "threads_requested", "threads", "cores", "cpus", "arm", "params", "started_at", "status", "reason",
    "note",  # what the harness did before the sample (a server restarted); empty in a sample without one
    "checksum", "expected_checksum", "tasks_ok", "elapsed_ns", "setup_ns", "wall_ns", "user_ns", "sys_ns", "maxrss_kb",
    "peak_rss_bytes", "nvcsw", "nivcsw", "minflt", "majflt", "exit_code", "signal", "t0_mono_ns",
    "spawned_ns", "start_mono_ns", "runtime", "extra", "command", "harness_s", "equiv_key", "timeline_file",
    "host", "attempt",  # a cluster run's: the host that took the sample, the attempt of its block
]


def samples_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The tidy frame: one row per sample, COLUMNS plus one `p_<key>` column per parameter and
    derived columns in convenient units (seconds, MiB)."""
    df = pd.DataFrame(list(records))
    for c in COLUMNS:
        if c not in df.columns:
            df[c] = pd.NA
    df = df[COLUMNS + [c for c in df.columns if c not in COLUMNS]].copy()
    if df.empty:
        return df
    params = df["params"].map(lambda s: json.loads(s) if isinstance(s, str) else (s or {}))
    keys = sorted({k for p in params for k in p})
    for k in keys:
        df[f"p_{k}"] = params.map(lambda p, k=k: p.get(k))
    df["params"] = params.map(lambda p: ",".join(f"{k}={v}" for k, v in sorted(p.items())))
    for c in ("elapsed_ns", "wall_ns", "setup_ns", "user_ns", "sys_ns"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    df["elapsed_s"] = df["elapsed_ns"] / 1e9
    df["wall_s"] = df["wall_ns"] / 1e9
    df["cpu_s"] = (df["user_ns"] + df["sys_ns"]) / 1e9
    df["user_s"] = df["user_ns"] / 1e9
    df["sys_s"] = df["sys_ns"] / 1e9
    df["context_switches"] = pd.to_numeric(df["nvcsw"], errors="coerce") + pd.to_numeric(df["nivcsw"], errors="coerce")
    df["per_s"] = pd.to_numeric(df["n"], errors="coerce") / df["elapsed_s"]
    df["peak_rss_mib"] = pd.to_numeric(df["peak_rss_bytes"], errors="coerce") / 2**20
    # idle_tasks: how many tasks were still alive when the last one had been spawned
    extra = df["extra"].map(lambda s: json.loads(s) if isinstance(s, str) else {})
    df["alive_at_spawn"] = pd.to_numeric(extra.map(lambda e: e.get("alive_at_spawn")), errors="coerce")
    df["ok"] = df["status"] == OK
    return df.sort_values("seq", kind="stable").reset_index(drop=True)
