"""Measure one sample: run a program through the launcher and collect what the kernel and the
program report.

The launcher (bench_src/run/launcher/benchlaunch.c) forks the program, waits for it with wait4 and
writes wall time, CPU times, peak RSS and context switches as JSON.  The program prints its own
JSON line (workload timer, checksum).  Both are merged into one flat record.

A database's DSN reaches the program in the environment variable BENCH_DSN of that program alone,
never on its command line (which `ps` shows to every user and the `command` column stores).  Every
command carries `--threads`: the cell's, or the usable CPUs (bench_src/cpus.py).

The launcher's result and the program's output go to a per-sample directory inside one private
`bench-sample-*` directory per harness process, locked while the process lives and removed at the
end of a run; one left by a killed harness is removed by the next run (`remove_stale_scratch`),
and so is the scratch of a local cluster whose client was killed (`bench-dask-*`: run/cluster/engine.py).
Those scratch files lost to a full disk (the launcher cannot write its result and exits 3, the
program's output is cut short) are no sample's failure: where the scratch directory is full
(`scratch_full`) the run stops with one error naming it (ScratchFull, bench_src/store/space.py).
"""
from __future__ import annotations

import atexit
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .. import cpus, paths
from ..catalogue import least_elapsed_ns
from ..plan import Cell
from ..statuses import BAD_OUTPUT, FAILED, KILLED, MEMORY_LIMIT, OK, TIMEOUT, TOO_FAST
from ..store.lock import LOCK_NAME, DirLock, remove_unheld
from ..store.space import ScratchFull, is_disk_full

DSN_ENV = "BENCH_DSN"
SAMPLE_DIR_PREFIX = "bench-sample-"
# A local cluster's scratch under $TMPDIR (Dask's lock files and the hosts' own scratch: their sample
# directories, fixtures), made and locked by its client (run/cluster/engine.py): one left by a client
# that was killed goes at the next run, of whatever kind, with the sample directories
LOCAL_CLUSTER_PREFIX = "bench-dask-"
# How long past a sample's timeout the harness waits for the launcher (which enforces the timeout
# itself) before it takes the launcher for hung and kills it.
LAUNCHER_GRACE_S = 120
# A sample's scratch files (the launcher's result, the program's stdout and stderr) take a few
# filesystem blocks: a scratch directory with less than this free, after a sample whose files came
# out missing or short, is full.
SCRATCH_LEAST_BYTES = 64 * 1024

# The standard keys of the programs' result line, with their types and where a sample keeps them,
# are listed once, in result_keys.json (the Go and Rust tests check their result line against it).
RESULT_KEYS_FILE = Path(__file__).with_name("result_keys.json")
RESULT_KEYS: list[dict[str, Any]] = json.loads(RESULT_KEYS_FILE.read_text(encoding="utf-8"))["keys"]
# The keys that become columns of their own; those the cell or the runtime column already hold; every
# other key (the workload-specific ones included) goes into `extra`.
PROGRAM_KEYS = tuple(k["key"] for k in RESULT_KEYS if k["stored"] == "column")
HELD_ELSEWHERE = tuple(k["key"] for k in RESULT_KEYS if k["stored"] in ("cell", "runtime"))
REQUIRED_KEYS = tuple(k["key"] for k in RESULT_KEYS if k["required"])
LAUNCHER_KEYS = ("wall_ns", "start_mono_ns", "user_ns", "sys_ns", "maxrss_kb", "nvcsw", "nivcsw", "minflt", "majflt",
                 "exit_code", "signal")



# the launcher's own words for what it killed (`killed_by`, benchlaunch.c), not the statuses they become
KILLED_BY_TIMEOUT = "timeout"
KILLED_BY_MEMORY_GUARD = "memory_limit"

def command(cell: Cell, data_dir: Path | None = None, bin_dir: Path | None = None) -> list[str]:
    """The program's command line for a cell (the contract in docs/workloads.md).  It never holds
    a DSN: see `program_env`.  `bin_dir`: where the programs are (default data/bin)."""
    threads = cell.threads if cell.threads is not None else cpus.usable_cpus()
    program = paths.program(cell.lang) if bin_dir is None else Path(bin_dir) / paths.program(cell.lang).name
    cmd = [str(program), cell.workload, "--n", str(cell.n), "--variant", cell.variant,
           "--threads", str(threads)]
    if data_dir is not None:
        cmd += ["--data-dir", str(data_dir)]
    for k, v in cell.params:
        cmd += ["--param", f"{k}={v}"]
    return cmd


def program_env(env: dict | None, dsn: str | None) -> dict:
    """The program's environment: BENCH_DSN set to the sample's DSN, or absent."""
    out = dict(default_env() if env is None else env)
    out.pop(DSN_ENV, None)
    if dsn:
        out[DSN_ENV] = dsn
    return out


def timeout_ms(timeout_s: float) -> int:
    """The launcher's --timeout-ms: whole milliseconds, never 0 (which would mean no limit)."""
    if not timeout_s > 0 or not math.isfinite(timeout_s):
        raise ValueError(f"timeout_s must be a finite number of seconds > 0, got {timeout_s!r}")
    return max(1, math.ceil(timeout_s * 1000))


class _SampleDirs:
    """One private directory per process for the samples' scratch files, locked while it lives."""

    def __init__(self):
        self.parent: Path | None = None
        self.lock: DirLock | None = None
        self.mutex = threading.Lock()

    def new(self) -> tempfile.TemporaryDirectory:
        with self.mutex:
            try:
                if self.parent is None or not self.parent.exists():
                    parent = Path(tempfile.mkdtemp(prefix=SAMPLE_DIR_PREFIX))
                    try:
                        self.lock = DirLock(parent / LOCK_NAME, f"the sample directory {parent}").acquire()
                    except BaseException:
                        shutil.rmtree(parent, ignore_errors=True)
                        raise
                    self.parent = parent
                return tempfile.TemporaryDirectory(dir=self.parent)
            except OSError as exc:
                if is_disk_full(exc):
                    raise ScratchFull(tempfile.gettempdir(), f"making a sample's directory ({exc.strerror})") from exc
                raise

    def remove(self) -> None:
        with self.mutex:
            if self.parent is not None:
                shutil.rmtree(self.parent, ignore_errors=True)
            if self.lock is not None:
                self.lock.release()
            self.parent, self.lock = None, None


_SAMPLE_DIRS = _SampleDirs()
atexit.register(_SAMPLE_DIRS.remove)


def remove_sample_dirs() -> None:
    """Remove this process's sample directory (the runner calls it at the end of a run)."""
    _SAMPLE_DIRS.remove()


def remove_stale_scratch(tmp: str | None = None) -> list[Path]:
    """Remove the scratch directories of harness processes that died (kill -9): their sample
    directories and their local clusters' scratch, ours (same owner), with a lock file that no live
    process holds.  Returns what was removed."""
    tmp = tmp or tempfile.gettempdir()
    return (remove_unheld(tmp, SAMPLE_DIR_PREFIX, keep=_SAMPLE_DIRS.parent)
            + remove_unheld(tmp, LOCAL_CLUSTER_PREFIX))


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


# The first line of a crash of the Go runtime, which a register dump or the goroutines' stacks
# follow ("panic: ...", "fatal error: ...", "SIGSEGV: segmentation violation"), so that its last
# line says nothing ("gs     0x0").  Both programs otherwise end on one line of their own.
_CRASH = re.compile(r"^(panic: |fatal error: |SIG[A-Z]+: )")


def failure_line(stderr: str) -> str:
    """The line of a failed program's stderr that says why: the first line of a runtime crash
    where there is one, else the last line (the programs' own `error:` line)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    crash = next((ln for ln in lines if _CRASH.match(ln)), None)
    return crash or (lines[-1] if lines else "")


def scratch_full(directory: str | os.PathLike) -> bool:
    """Whether the disk of a scratch directory is full: less than SCRATCH_LEAST_BYTES free to this
    user (root may also use the blocks a filesystem keeps for it), no free inode, or no room for a
    file of that size (a quota, which the free counts do not show)."""
    try:
        st = os.statvfs(directory)
    except OSError:
        return False
    free = (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize
    if free < SCRATCH_LEAST_BYTES or (st.f_files and st.f_favail == 0):
        return True
    probe = Path(directory) / ".space-probe"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        return is_disk_full(exc)
    try:
        os.posix_fallocate(fd, 0, SCRATCH_LEAST_BYTES)
    except OSError as exc:
        return is_disk_full(exc)
    finally:
        os.close(fd)
        probe.unlink(missing_ok=True)
    return False


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
                 guard_ms: int = 20, timeline_ms: float = 0, cpus: str | None = None,
                 launcher: Path | None = None) -> tuple[dict, str, str]:
    """Run cmd under the launcher; return (launcher JSON, stdout, stderr).  With timeline_ms > 0
    the launcher JSON also holds `timeline`: [(CLOCK_MONOTONIC ns, RSS bytes), ...].  `cpus` (a
    CPU list such as "0,2-3") pins the program to those CPUs before it starts (the launcher's
    --cpus); the program reports the set it ran on as `cpus`."""
    with _SAMPLE_DIRS.new() as tmp:
        result = Path(tmp) / "result.json"
        out_path, err_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
        launch = [str(launcher or paths.launcher()), "--result", str(result),
                  "--timeout-ms", str(timeout_ms(timeout_s)),
                  "--mem-limit-kb", str(int(mem_limit_mb) * 1024),
                  "--guard-ms", str(guard_ms), *(["--cpus", cpus] if cpus else []), "--", *cmd]
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(launch, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
            overdue = False
            try:
                timeline = _sample_rss(proc, timeline_ms / 1000) if timeline_ms else None
                proc.wait(timeout=timeout_s + LAUNCHER_GRACE_S)
            except subprocess.TimeoutExpired:  # the launcher itself hangs (stopped, stuck): its sample fails
                overdue = True
                proc.kill()
                proc.wait()
            except BaseException:  # an interrupt or SIGTERM of the harness: the launcher's child goes too
                proc.kill()
                proc.wait()
                raise
        stdout = out_path.read_text(errors="replace")
        stderr = err_path.read_text(errors="replace")
        if overdue:
            raise RuntimeError(f"the launcher did not finish within {timeout_s + LAUNCHER_GRACE_S:g} s (the "
                               f"sample's timeout plus {LAUNCHER_GRACE_S} s) and was killed")
        launched, unread = None, None
        if proc.returncode == 0 and result.exists():
            try:
                launched = json.loads(result.read_text())
            except ValueError as exc:  # cut short
                unread = exc
        # the result line ends the program's stdout: without it (missing, cut short) or without the
        # launcher's result, a full scratch disk is the likely cause, and no failure of the sample
        if (launched is None or not stdout.endswith("\n")) and scratch_full(tmp):
            lost = ("the launcher could not write its result" if launched is None else
                    "the program's output came out missing or cut short")
            raise ScratchFull(Path(tmp).parent.parent, lost)
        if unread is not None:
            raise RuntimeError(f"the launcher's result {result} is not valid JSON ({unread})")
        if launched is None:
            how = (f"terminated by signal {-proc.returncode}" if proc.returncode < 0 else
                   f"exit {proc.returncode}")
            raise RuntimeError(f"the launcher failed ({how}): {_last_line(stderr) or 'no message on stderr'}")
        if timeline is not None:
            launched["timeline"] = timeline
        return launched, stdout, stderr


def measure(cell: Cell, timeout_s: float, mem_limit_mb: int, data_dir: Path | None = None,
            dsn: str | None = None, env: dict | None = None, timeline_ms: float = 0,
            bin_dir: Path | None = None) -> dict[str, Any]:
    """Run one sample of a cell and return a flat record (see README, "Columns").  With
    timeline_ms > 0 the record also carries `timeline` (the RSS samples), which the runner stores
    in a file of its own.  `dsn` goes to the program in BENCH_DSN.  `bin_dir`: where the launcher
    and the programs are (a host of a cluster: bench_src/run/cluster/host.py), default data/bin."""
    cmd = command(cell, data_dir, bin_dir)
    launcher = None if bin_dir is None else Path(bin_dir) / paths.launcher().name
    launched, stdout, stderr = run_launched(cmd, timeout_s, mem_limit_mb, env=program_env(env, dsn),
                                            timeline_ms=timeline_ms,
                                            cpus=cpus.cpu_set(cell.cores) if cell.cores else None,
                                            launcher=launcher)
    rec: dict[str, Any] = {k: launched.get(k) for k in LAUNCHER_KEYS}
    rec["peak_rss_bytes"] = launched["maxrss_kb"] * 1024
    rec["command"] = " ".join(cmd)

    status, reason = OK, ""
    if launched.get("killed_by") == KILLED_BY_TIMEOUT:
        status, reason = TIMEOUT, f"killed after the timeout of {timeout_s:g} s"
    elif launched.get("killed_by") == KILLED_BY_MEMORY_GUARD:
        status, reason = MEMORY_LIMIT, (f"killed: RSS passed the memory limit of {mem_limit_mb} MiB "
                                          f"(last seen {launched.get('guard_peak_rss_kb', 0) // 1024} MiB)")
    elif mem_limit_mb and launched["maxrss_kb"] > mem_limit_mb * 1024:
        # the guard reads RSS every few milliseconds: a peak between two reads ends no sample, but
        # wait4's exact peak says the limit was passed, and the sample is judged by the same rule
        status, reason = MEMORY_LIMIT, (f"peak RSS {launched['maxrss_kb'] / 1024:.1f} MiB passed the memory limit of "
                                          f"{mem_limit_mb} MiB between two reads of the guard (wait4's exact peak)")
    elif launched["signal"]:
        status = KILLED
        reason = f"terminated by signal {launched['signal']}" + (
            " (SIGKILL: possibly the kernel's out-of-memory killer)" if launched["signal"] == 9 else "")
        if failure_line(stderr):  # what the program said before it died ("memory allocation of ... failed")
            reason += f": {failure_line(stderr)}"
    elif launched["exit_code"] != 0:
        status = FAILED
        reason = f"exit {launched['exit_code']}: {failure_line(stderr) or 'no message on stderr'}"

    program: dict[str, Any] = {}
    if status == OK:
        try:
            program = json.loads(_last_line(stdout))
            if not isinstance(program, dict):
                raise ValueError("not an object")
            missing = [k for k in REQUIRED_KEYS if k not in program]
            if missing:
                raise ValueError(f"missing keys {missing}")
        except ValueError as exc:
            status, reason, program = BAD_OUTPUT, f"no valid JSON result line on stdout ({exc})", {}
    if status == OK:
        status, reason = waited(cell, program.get("elapsed_ns"))
    for k in PROGRAM_KEYS:
        rec[k] = program.get(k)
    if isinstance(rec.get("cpus"), list):  # the CPUs the program says it ran on, as the launcher's list
        rec["cpus"] = ",".join(str(c) for c in rec["cpus"])
    rec["runtime"] = json.dumps(program.get("runtime"), sort_keys=True) if program else None
    extra = {k: v for k, v in program.items() if k not in PROGRAM_KEYS and k not in HELD_ELSEWHERE}
    rec["extra"] = json.dumps(extra, sort_keys=True) if extra else None
    rec["status"], rec["reason"] = status, reason
    if "timeline" in launched:
        rec["timeline"] = launched["timeline"]
    return rec


def waited(cell: Cell, elapsed_ns: Any) -> tuple[str, str]:
    """("ok", "") or ("too_fast", why): a sample of waiting work (sleep, threads_vs_tasks, idle tasks
    that sleep) whose workload time is below the longest wait it asks for did not wait as the work
    says; its checksum counts the waits asked for, not those done (catalogue.least_elapsed_ns)."""
    least = least_elapsed_ns(cell.workload, cell.n, dict(cell.params))
    if least is None or not isinstance(elapsed_ns, int) or elapsed_ns >= least:
        return OK, ""
    return TOO_FAST, (f"workload time {elapsed_ns / 1e6:.3f} ms, below the longest wait the work asks for "
                        f"({least / 1e6:g} ms): not every task waited as the work says")


# What changes how a runtime or the C library runs a program (threads, garbage collector, allocator,
# stack sizes, code loaded into it): taken out of the programs' environment, so that a variable left
# in a user's shell cannot make one language slower or larger unseen (MALLOC_MMAP_THRESHOLD_=0 made
# Rust's files_read 4x slower and 3x larger, Go's allocator unmoved).  Which were set and taken out
# is recorded in meta.json (`runtime_variables_removed`).
RUNTIME_VARIABLES = ("GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG", "TOKIO_WORKER_THREADS", "RUST_LOG",
                     "RUST_MIN_STACK", "GLIBC_TUNABLES", "LD_PRELOAD", "LD_AUDIT", "LD_BIND_NOW", "LD_BIND_NOT",
                     "LD_DEBUG", "LD_PROFILE")
RUNTIME_PREFIXES = ("MALLOC_",)  # glibc's malloc settings (MALLOC_ARENA_MAX, MALLOC_TRIM_THRESHOLD_, ...)


def is_runtime_variable(name: str) -> bool:
    return name in RUNTIME_VARIABLES or name.startswith(RUNTIME_PREFIXES)


def runtime_variables_removed(environ: dict | None = None) -> list[str]:
    """The names of the variables set here that `default_env` takes out (their values are not kept)."""
    return sorted(k for k in (os.environ if environ is None else environ) if is_runtime_variable(k))


def default_env() -> dict:
    """The environment the programs run in: the harness's, minus the variables that change a runtime
    or the C library (RUNTIME_VARIABLES) and any DSN."""
    return {k: v for k, v in os.environ.items() if not is_runtime_variable(k) and k != DSN_ENV}
