"""A results directory's RSS timelines (`timelines/<sample>.csv`): one sample's written while a run
with `timeline_ms` takes its samples (`write_timeline`), read back (`read_timeline`), and all of
them as one long frame, in the units of the samples frame (seconds, MiB)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..statuses import OK
from . import files
from .results import ResultsStore
from .space import is_disk_full

PHASES = ("spawned_ns", "finished_ns", "linger_end_ns")


def write_timeline(store: ResultsStore, sample_id: str, points) -> str:
    """Store one sample's RSS timeline as CSV (t_mono_ns, rss_bytes); return its relative path."""
    d = store.dir / "timelines"
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in sample_id) + ".csv"
    try:
        d.mkdir(mode=0o700, exist_ok=True)
        with open(d / name, "w", opener=files._private_opener) as f:
            f.write("t_mono_ns,rss_bytes\n")
            f.writelines(f"{t},{r}\n" for t, r in points)
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        (d / name).unlink(missing_ok=True)
        store.reserve.release()
        raise store.disk_full(exc, writing=f"timelines/{name}") from None
    return f"timelines/{name}"


def read_timeline(store: ResultsStore, relative: str) -> pd.DataFrame:
    return pd.read_csv(store.dir / relative)


def timelines(results_dir: str | Path, workload: str | None = "idle_tasks") -> pd.DataFrame:
    """Every stored RSS timeline as a long frame: one row per point, time in seconds from the
    workload timer's start (t0_mono_ns) and RSS in MiB, with the phase offsets of its sample and
    its cell (`cell_id`, `params` and the `p_<key>` columns of the samples frame)."""
    store = ResultsStore(results_dir)
    df = store.load()
    if "timeline_file" not in df or df["timeline_file"].isna().all():
        return pd.DataFrame(columns=["sample_id", "cell_id", "lang", "variant", "n", "params", "t_s", "rss_mib",
                                     *PHASES])
    rows = df[df["timeline_file"].notna() & (df["status"] == OK)]
    if workload:
        rows = rows[rows["workload"] == workload]
    param_keys = [c for c in rows.columns if c.startswith("p_") and rows[c].notna().any()]
    parts = []
    for r in rows.itertuples():
        tl = read_timeline(store, r.timeline_file)
        tl = tl[tl["rss_bytes"] > 0]  # a point read as the process exited holds nothing
        extra = json.loads(r.extra) if isinstance(r.extra, str) else {}
        t0 = r.t0_mono_ns
        tl["t_s"] = (tl["t_mono_ns"] - t0) / 1e9
        tl["rss_mib"] = tl["rss_bytes"] / 2**20
        for key in ("sample_id", "cell_id", "lang", "variant", "n", "params", "phase"):
            tl[key] = getattr(r, key)
        for key in param_keys:  # the cell's parameters, as the samples frame has them (p_<key>)
            tl[key] = getattr(r, key)
        tl["spawned_ns"] = r.spawned_ns
        for key in PHASES[1:]:
            tl[key] = extra.get(key)
        parts.append(tl)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
