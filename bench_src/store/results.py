"""The results directory: `meta.json` and `samples.jsonl`, one JSON object per sample.

Every sample is appended and fsync'ed the moment it is taken, so a killed run loses at most the
sample that was running.  Opening the same plan again resumes; opening a different plan in the
same directory is refused.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from ..plan import Plan, plan_from_dict

SAMPLES = "samples.jsonl"
# Samples with these statuses did not run (the cell could not run here); a resumed run takes them
# again, and the newer record replaces the older one.
RETRY_STATUSES = ("skipped",)
META = "meta.json"

# Columns of the tidy frame, in order (documented in the README).
COLUMNS = [
    "run_id", "sample_id", "seq", "phase", "block", "pos", "cell_id", "workload", "lang", "variant", "n",
    "threads_requested", "threads", "arm", "params", "started_at", "status", "reason", "checksum",
    "expected_checksum", "tasks_ok", "elapsed_ns", "setup_ns", "wall_ns", "user_ns", "sys_ns", "maxrss_kb",
    "peak_rss_bytes", "nvcsw", "nivcsw", "minflt", "majflt", "exit_code", "signal", "t0_mono_ns",
    "spawned_ns", "start_mono_ns", "runtime", "extra", "command", "equiv_key", "timeline_file",
]


def now_utc() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


class ResultsStore:
    def __init__(self, directory: str | os.PathLike):
        self.dir = Path(directory)
        self.samples_path = self.dir / SAMPLES
        self.meta_path = self.dir / META

    @property
    def run_id(self) -> str:
        return self.dir.name

    # --- meta -------------------------------------------------------------------------------
    def read_meta(self) -> dict[str, Any]:
        return json.loads(self.meta_path.read_text())

    def write_meta(self, meta: dict[str, Any]) -> None:
        tmp = self.meta_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(meta, indent=2, sort_keys=True, default=str))
        os.replace(tmp, self.meta_path)

    def open(self, plan: Plan, session: dict[str, Any]) -> dict[str, Any]:
        """Create the directory for a plan, or reopen it to resume the same plan."""
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.meta_path.exists():
            meta = self.read_meta()
            if meta["plan"] != plan.to_dict():
                old = plan_from_dict(meta["plan"])
                raise ValueError(
                    f"{self.dir} already holds a different plan (digest {old.digest}, this one {plan.digest}); "
                    "choose another results_dir to start a new run")
        else:
            meta = {"run_id": self.run_id, "plan": plan.to_dict(), "plan_digest": plan.digest,
                    "created_at": now_utc(), "sessions": []}
        meta["sessions"].append({**session, "started_at": now_utc()})
        self.write_meta(meta)
        self.repair()
        return meta

    def update_meta(self, **fields: Any) -> None:
        meta = self.read_meta()
        meta.update(fields)
        self.write_meta(meta)

    def update_session(self, **fields: Any) -> None:
        meta = self.read_meta()
        meta["sessions"][-1].update(fields)
        self.write_meta(meta)

    # --- samples ----------------------------------------------------------------------------
    def repair(self) -> int:
        """Drop a half-written last line left by a kill; return the number of bytes dropped."""
        if not self.samples_path.exists():
            return 0
        data = self.samples_path.read_bytes()
        if not data or data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        with open(self.samples_path, "r+b") as f:
            f.truncate(keep)
        return len(data) - keep

    def records(self) -> list[dict[str, Any]]:
        if not self.samples_path.exists():
            return []
        out = []
        for line in self.samples_path.read_text().splitlines():
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn last line; repair() removes it before the next append
        return out

    def done_ids(self) -> set[str]:
        return {r["sample_id"] for r in self.records() if r.get("status") not in RETRY_STATUSES}

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, sort_keys=True, default=str) + "\n"
        with open(self.samples_path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def latest_records(self) -> list[dict[str, Any]]:
        """One record per sample id: the last one written (a skipped sample taken again later)."""
        latest: dict[str, dict[str, Any]] = {}
        for r in self.records():
            latest[r["sample_id"]] = r
        return list(latest.values())

    def load(self) -> pd.DataFrame:
        return samples_frame(self.latest_records())

    # --- memory timelines ----------------------------------------------------------------------
    def write_timeline(self, sample_id: str, points) -> str:
        """Store one sample's RSS timeline as CSV (t_mono_ns, rss_bytes); return its relative path."""
        d = self.dir / "timelines"
        d.mkdir(exist_ok=True)
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in sample_id) + ".csv"
        with open(d / name, "w") as f:
            f.write("t_mono_ns,rss_bytes\n")
            f.writelines(f"{t},{r}\n" for t, r in points)
        return f"timelines/{name}"

    def read_timeline(self, relative: str) -> pd.DataFrame:
        return pd.read_csv(self.dir / relative)


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
    df["ok"] = df["status"] == "ok"
    return df.sort_values("seq", kind="stable").reset_index(drop=True)
