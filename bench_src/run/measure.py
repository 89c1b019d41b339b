"""Measure one sample: run a program through the launcher and collect what the kernel and the
program report.

The launcher (bench_src/run/launcher/benchlaunch.c) forks the program, waits for it with wait4 and
writes wall time, CPU times, peak RSS and context switches as JSON.  The program prints its own
JSON line (workload timer, checksum).  Both are merged into one flat record.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from .. import paths
from ..plan import Cell

# The program's JSON keys that become columns of their own; any other key goes into `extra`.
PROGRAM_KEYS = ("elapsed_ns", "setup_ns", "checksum", "tasks_ok", "threads", "t0_mono_ns", "spawned_ns")
LAUNCHER_KEYS = ("wall_ns", "start_mono_ns", "user_ns", "sys_ns", "maxrss_kb", "nvcsw", "nivcsw", "minflt", "majflt",
                 "exit_code", "signal")


def command(cell: Cell, data_dir: Path | None = None, dsn: str | None = None) -> list[str]:
    """The program's command line for a cell (the contract in docs/workloads.md)."""
    cmd = [str(paths.program(cell.lang)), cell.workload, "--n", str(cell.n), "--variant", cell.variant]
    if cell.threads is not None:
        cmd += ["--threads", str(cell.threads)]
    if data_dir is not None:
        cmd += ["--data-dir", str(data_dir)]
    if dsn is not None:
        cmd += ["--dsn", dsn]
    for k, v in cell.params:
        cmd += ["--param", f"{k}={v}"]
    return cmd


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _sample_rss(launcher: subprocess.Popen, interval_s: float) -> list[tuple[int, int]]:
    """RSS of the launcher's child every interval, on CLOCK_MONOTONIC (the clock of the programs'
    t0_mono_ns), until the launcher exits.  Runs in the harness, outside the measured process; the
    exact peak still comes from wait4 in the launcher."""
    import psutil

    points: list[tuple[int, int]] = []
    child = None
    while launcher.poll() is None:
        try:
            if child is None:
                kids = psutil.Process(launcher.pid).children()
                child = kids[0] if kids else None
            if child is not None:
                if child.status() == psutil.STATUS_ZOMBIE:  # exited: nothing left to measure
                    break
                points.append((time.monotonic_ns(), child.memory_info().rss))
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            if child is not None:
                break
        time.sleep(interval_s)
    return points


def run_launched(cmd: list[str], timeout_s: float, mem_limit_mb: int, env: dict | None = None,
                 guard_ms: int = 20, timeline_ms: float = 0) -> tuple[dict, str, str]:
    """Run cmd under the launcher; return (launcher JSON, stdout, stderr).  With timeline_ms > 0
    the launcher JSON also holds `timeline`: [(CLOCK_MONOTONIC ns, RSS bytes), ...]."""
    with tempfile.TemporaryDirectory(prefix="bench-sample-") as tmp:
        result = Path(tmp) / "result.json"
        out_path, err_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
        launch = [str(paths.launcher()), "--result", str(result),
                  "--timeout-ms", str(int(timeout_s * 1000)),
                  "--mem-limit-kb", str(int(mem_limit_mb) * 1024),
                  "--guard-ms", str(guard_ms), "--", *cmd]
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(launch, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
            timeline = _sample_rss(proc, timeline_ms / 1000) if timeline_ms else None
            try:
                proc.wait(timeout=timeout_s + 120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        stdout = out_path.read_text(errors="replace")
        stderr = err_path.read_text(errors="replace")
        if proc.returncode != 0 or not result.exists():
            raise RuntimeError(f"the launcher failed (exit {proc.returncode}): {_last_line(stderr)}")
        launched = json.loads(result.read_text())
        if timeline is not None:
            launched["timeline"] = timeline
        return launched, stdout, stderr


def measure(cell: Cell, timeout_s: float, mem_limit_mb: int, data_dir: Path | None = None,
            dsn: str | None = None, env: dict | None = None, timeline_ms: float = 0) -> dict[str, Any]:
    """Run one sample of a cell and return a flat record (see README, "Columns").  With
    timeline_ms > 0 the record also carries `timeline` (the RSS samples), which the runner stores
    in a file of its own."""
    cmd = command(cell, data_dir, dsn)
    launched, stdout, stderr = run_launched(cmd, timeout_s, mem_limit_mb, env=env, timeline_ms=timeline_ms)
    rec: dict[str, Any] = {k: launched.get(k) for k in LAUNCHER_KEYS}
    rec["peak_rss_bytes"] = launched["maxrss_kb"] * 1024
    rec["command"] = " ".join(cmd)

    status, reason = "ok", ""
    if launched.get("killed_by") == "timeout":
        status, reason = "timeout", f"killed after the timeout of {timeout_s:g} s"
    elif launched.get("killed_by") == "memory_limit":
        status, reason = "memory_limit", (f"killed: RSS passed the memory limit of {mem_limit_mb} MiB "
                                          f"(last seen {launched.get('guard_peak_rss_kb', 0) // 1024} MiB)")
    elif launched["signal"]:
        status = "killed"
        reason = f"terminated by signal {launched['signal']}" + (
            " (SIGKILL: possibly the kernel's out-of-memory killer)" if launched["signal"] == 9 else "")
    elif launched["exit_code"] != 0:
        status = "failed"
        reason = f"exit {launched['exit_code']}: {_last_line(stderr) or 'no message on stderr'}"

    program: dict[str, Any] = {}
    if status == "ok":
        try:
            program = json.loads(_last_line(stdout))
            if not isinstance(program, dict):
                raise ValueError("not an object")
            missing = [k for k in ("elapsed_ns", "checksum", "tasks_ok") if k not in program]
            if missing:
                raise ValueError(f"missing keys {missing}")
        except ValueError as exc:
            status, reason, program = "bad_output", f"no valid JSON result line on stdout ({exc})", {}
    for k in PROGRAM_KEYS:
        rec[k] = program.get(k)
    rec["runtime"] = json.dumps(program.get("runtime"), sort_keys=True) if program else None
    extra = {k: v for k, v in program.items()
             if k not in PROGRAM_KEYS and k not in ("lang", "workload", "variant", "n", "params", "runtime")}
    rec["extra"] = json.dumps(extra, sort_keys=True) if extra else None
    rec["status"], rec["reason"] = status, reason
    if "timeline" in launched:
        rec["timeline"] = launched["timeline"]
    return rec


def default_env() -> dict:
    """The environment the programs run in: the harness's, minus variables that change a runtime."""
    env = dict(os.environ)
    for var in ("GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG", "TOKIO_WORKER_THREADS", "RUST_LOG"):
        env.pop(var, None)
    return env
