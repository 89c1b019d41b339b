"""A description of the machine a run happened on, for meta.json and the Method paragraph (the
usable-CPUs rule it records is bench_src/cpus.py's), and the commit its programs were built from,
which a default results directory's name carries."""
from __future__ import annotations

import hashlib
import hmac
import os
import platform
import subprocess
from pathlib import Path

import psutil

from ..cpus import usable_cpus
from ..paths import RESULTS, ROOT
from .measure import runtime_variables_removed


# --- the machine ---------------------------------------------------------------------------------

def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


# systemd's machine ID, and D-Bus's copy of it where systemd does not write one
MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")
MACHINE_ID_KEY = b"bench_src host identity"


def machine_id_digest(files: tuple[str, ...] = MACHINE_ID_FILES) -> str | None:
    """What tells this machine from another with the same hardware, beside its hostname: its
    machine ID as a keyed digest (HMAC-SHA256, 16 hex digits), so that the ID itself, which
    machine-id(5) asks not to expose, is never recorded; None where no machine ID is readable."""
    for path in files:
        text = _read(path)
        if text:
            return hmac.new(MACHINE_ID_KEY, text.encode(), hashlib.sha256).hexdigest()[:16]
    return None


def default_results_dir(plan) -> Path:
    """A plan's results directory when none is given: a name that is the same for the same plan at
    the same commit (with `-dirty` when tracked files differ from it), so re-running resumes."""
    return RESULTS / f"{plan.profile}-{short_commit()}-{plan.digest[:6]}"


def short_commit() -> str:
    """The commit for names: 7 characters, with `-dirty` when tracked files differ from it."""
    full = git_commit()
    if not full:
        return "nogit"
    return full[:7] + ("-dirty" if full.endswith("-dirty") else "")


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        # --no-optional-locks: reading the state takes no lock on (and refreshes nothing in) the index
        dirty = subprocess.run(["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def describe() -> dict:
    vm = psutil.virtual_memory()
    try:
        import resource
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError):
        nofile = (None, None)
    return {
        "hostname": platform.node(),
        "machine_id_digest": machine_id_digest(),
        "cpu_model": cpu_model(),
        "logical_cpus": psutil.cpu_count(logical=True),
        "physical_cpus": psutil.cpu_count(logical=False),
        "ram_bytes": vm.total,
        "kernel": platform.release(),
        "arch": platform.machine(),
        "caches": cpu_caches(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "nofile_limit": {"soft": nofile[0], "hard": nofile[1]},
        "cpu_governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "load_avg_at_start": os.getloadavg(),
        "git_commit": git_commit(),
        "usable_cpus": usable_cpus(),
        # the variables set here that the programs run without (measure.RUNTIME_VARIABLES)
        "runtime_variables_removed": runtime_variables_removed(),
        "cpu_accounting": cpu_accounting(),
    }


def cpu_accounting() -> str | None:
    """How this kernel splits a process's CPU time into user and system time: "tick" (by what it finds
    at each timer tick: the sum is exact, the split sampled), "virtual" (at every switch between
    user and kernel mode), "virtual on CPUs L, tick on the others" (generic virtual accounting acts
    on the CPUs that run without a tick only), or None where its configuration is not readable
    (/proc/config.gz, /boot/config-<release>)."""
    text = None
    try:
        import gzip
        with gzip.open("/proc/config.gz", "rt") as f:
            text = f.read()
    except OSError:
        text = _read(f"/boot/config-{platform.release()}")
    if not text:
        return None
    if "CONFIG_VIRT_CPU_ACCOUNTING_NATIVE=y" in text:
        return "virtual"
    # generic virtual accounting acts only on the CPUs that run without a tick (nohz_full=)
    tickless = (_read("/sys/devices/system/cpu/nohz_full") or "").strip("() \n")
    if "CONFIG_VIRT_CPU_ACCOUNTING_GEN=y" in text and tickless and tickless != "null":
        return f"virtual on CPUs {tickless}, tick on the others"
    if "CONFIG_TICK_CPU_ACCOUNTING=y" in text or "CONFIG_VIRT_CPU_ACCOUNTING_GEN=y" in text:
        return "tick"
    return None


def cpu_caches(root: str = "/sys/devices/system/cpu/cpu0/cache") -> dict[str, str] | None:
    """CPU 0's caches as the kernel lists them: {"L1d": "32K", "L1i": "32K", "L2": "512K", ...}
    (None where sysfs does not say)."""
    out = {}
    for index in sorted(Path(root).glob("index*")):
        level, kind, size = (_read(str(index / f)) for f in ("level", "type", "size"))
        if level and size:
            suffix = {"Data": "d", "Instruction": "i"}.get(kind or "", "")
            out[f"L{level}{suffix}"] = size
    return out or None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None
