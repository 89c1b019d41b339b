"""What other processes took of this machine's CPUs while a session measured: a benchmark on a busy
machine competes for its CPUs, and the reader of its figures should know.

The kernel counts every CPU's busy and stolen time (/proc/stat, in clock ticks); the harness counts
its own process tree's CPU time (its own, that of the children it has reaped, launcher and programs
and the database servers included, and that of the descendants still alive).  Over a session, the
CPUs' busy time less the tree's is what other processes (and the kernel's own work for them) took.
Only the CPUs the harness may run on count: a run pinned to a share of the machine competes with
nothing on the others.  Assumptions: every process the harness starts stays in its tree until it is
reaped (the servers are run in the foreground, `servers/managed.py`), and a CPU's time is split
into its fields the same way in both readings (ticks; a few ticks of rounding per CPU).  Stolen
time, a hypervisor's for other guests, is counted apart: no process of this machine took it.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..digits import significant

# /proc/stat's fields after the CPU's name: user nice system idle iowait irq softirq steal guest
# guest_nice (guest time is counted in user time already)
BUSY_FIELDS = (0, 1, 2, 5, 6)
STEAL_FIELD = 7
# above this share of the CPUs' time, taken by other processes and stolen by the hypervisor for other
# guests together (either way the samples waited for a CPU), they are said to have competed with the
# samples, over a session of at least WARN_SPAN_S (a shorter one's share is that of a moment, a
# test's run)
WARN_SHARE = 0.05
WARN_SPAN_S = 10.0
# stolen time below this share of the CPUs' time is too small to state
STEAL_SAID = 0.001


@dataclass(frozen=True)
class CpuClock:
    """CPU seconds at one instant: the CPUs' busy and stolen time, and the harness tree's."""
    at: float  # monotonic seconds
    busy_s: float
    steal_s: float
    own_s: float
    cpus: int


def cpu_lines(stat_text: str, cpus: set[int]) -> list[list[int]]:
    """The tick counts of /proc/stat's lines of the CPUs in `cpus`."""
    rows = []
    for line in stat_text.splitlines():
        name, _, rest = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
            rows.append([int(v) for v in rest.split()])
    return rows


def own_cpu_seconds() -> float:
    """This process's CPU time, its reaped children's, and its living descendants' (theirs, and
    that of the children they reaped)."""
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    for child in psutil.Process().children(recursive=True):
        try:
            c = child.cpu_times()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        # a living process's reaped children only: a child it has not reaped yet is listed itself
        total += c.user + c.system + getattr(c, "children_user", 0.0) + getattr(c, "children_system", 0.0)
    return total


def read_clock(stat_path: str = "/proc/stat") -> CpuClock | None:
    """The clock now, on the CPUs this process may run on; None where /proc/stat cannot be read."""
    try:
        cpus = set(os.sched_getaffinity(0))
        rows = cpu_lines(Path(stat_path).read_text(), cpus)
    except (OSError, ValueError, AttributeError):
        return None
    if not rows:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    busy = sum(r[i] for r in rows for i in BUSY_FIELDS if i < len(r)) / tick
    steal = sum(r[STEAL_FIELD] for r in rows if len(r) > STEAL_FIELD) / tick
    return CpuClock(time.monotonic(), busy, steal, own_cpu_seconds(), len(rows))


def other_use(start: CpuClock, end: CpuClock) -> dict | None:
    """What other processes took between two readings: their CPU seconds (`other_s`, never below
    0: the readings' rounding), the CPUs' stolen seconds, the CPUs' capacity (seconds x CPUs) and
    the share of it the others took.  None without a span to speak of."""
    span = end.at - start.at
    if span <= 0 or end.cpus != start.cpus:
        return None
    capacity = span * end.cpus
    other = max(0.0, (end.busy_s - start.busy_s) - (end.own_s - start.own_s))
    steal = max(0.0, end.steal_s - start.steal_s)
    return {"other_s": round(other, 2), "steal_s": round(steal, 2), "capacity_s": round(capacity, 2),
            "span_s": round(span, 2), "cpus": end.cpus, "share": round(other / capacity, 4), "steal_share": round(steal / capacity, 4)}


def competed(use: dict | None) -> bool:
    """Whether other processes and other guests took enough of the CPUs to say so beside the
    results."""
    return (bool(use) and float(use.get("share", 0.0)) + float(use.get("steal_share", 0.0)) > WARN_SHARE
            and float(use.get("span_s", use.get("capacity_s", 0.0) / max(1, int(use.get("cpus", 1))))) >= WARN_SPAN_S)


def stolen(use: dict | None) -> bool:
    """Whether the hypervisor took enough of the CPUs for other guests to say so."""
    return bool(use) and float(use.get("steal_share", 0.0)) >= STEAL_SAID


def words(use: dict, when: str = "while it measured") -> str:
    """Other processes' share of the CPUs during a session (or its warm-ups: `when`), in words (the
    run's warnings and the Method say it alike)."""
    cpus = int(use["cpus"])
    text = (f"other processes used {use['share'] * 100:.1f}% of the CPU time of the {cpus} CPU{'s' if cpus != 1 else ''} "
            f"the harness ran on {when} ({significant(use['other_s'], 2)} of "
            f"{significant(use['capacity_s'], 3)} CPU seconds)")
    if stolen(use):
        text += f", and the hypervisor took {use['steal_share'] * 100:.1f}% for other guests"
    return text


def advice(use: dict) -> str:
    """What a user whose samples competed for the CPUs can do: a quiet machine, and where the
    hypervisor took time for other guests, a quieter host (no process of this machine took it)."""
    return ("for figures to publish, run on a machine with nothing else running"
            + (" and, on a virtual machine, a quieter host" if stolen(use) else ""))


def warning(use: dict) -> str:
    """The end of a session's warning where its samples competed (`competed`)."""
    return (f"warning: {words(use)}; they competed with the samples for the CPUs, which widens the "
            f"intervals; {advice(use)}")


def warmup_warning(use: dict) -> str:
    """The warning said right after the warm-ups where they competed (`competed`): said at the
    start, a user can stop the run and start it again at a quieter time, not learn it an hour later."""
    return (f"warning: {words(use, when='during the warm-ups')}; they compete with the samples for the CPUs, "
            f"which widens the intervals and may lengthen the run; {advice(use)}")
