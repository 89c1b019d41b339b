"""How long a plan will take: an estimate, said to be one, with what it rests on.

Seconds per sample come, per cell, from earlier runs (given by the caller: `history` of
`bench_src/store/history.py`, the median time the harness spent on a sample of the same cell id in
any results directory under `data/results/`), else from a default per workload (`default_seconds`:
a fixed part plus a part per unit of N, fitted to the samples of every cell of the article profile
on a 2-core machine; an order of magnitude for a cell, within a few percent for the sum of many cells on a machine like it, not a measurement of this
machine).  A run measures this machine before it estimates: its warm-ups come first, and the
defaults are scaled by what the warm-ups took of their own defaults (`speed_factor`).  Each sample
is capped at the plan's timeout, the cooldown is added after every sample, and a fixed start-up
time for each private database server.  The number of samples per cell is warmup + samples unless
the caller expects another (a sequential stopping rule knows its own expected number).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Mapping

from .. import paths
from ..catalogue import TVT_TICK_MS, WORKLOADS
from ..statuses import OK
from .model import Cell, Plan

# seconds per sample = fixed + per_n * N (process start, fixtures or table restore included), fitted
# (least squares, parts held where the cells cannot tell them apart) to the medians of every cell of
# the article profile in one run on a 2-core machine (2026-11-26, Debian 12, Go 1.26, Rust 1.95;
# 6-171 samples a cell, with the machine's 2 CPUs), averaged over the languages and variants: sleep
# adds SLEEP_PER_TASK_WORK_S * N * work for the xorshift kernel (the article's dead loop: Go only,
# ARTICLE_LOOP_PER_TASK_WORK_S), cpu_loops counts N * inner, threads_vs_tasks adds 10 ms per
# iteration and scales its per-N part with the iterations, idle_tasks adds its sleep and linger
# (see default_seconds)
DEFAULT_SAMPLE_S: dict[str, tuple[float, float]] = {
    "sleep": (0.46, 1.4e-6),
    "cpu_loops": (0.03, 1.7e-9),  # per N * inner
    "files_read": (0.033, 1.1e-5),
    "files_rw": (0.02, 4.7e-5),
    "sqlite": (0.19, 4.5e-4),
    # the databases' fixed parts lowered by what one client call before a sample instead of two, and
    # psql without Debian's Perl wrapper, saved (the harness's median seconds at N = 10 on a third
    # 2-core machine: MySQL 0.130 -> 0.116, PostgreSQL 0.329 -> 0.210)
    "mysql": (0.115, 6.9e-4),
    "postgres": (0.27, 4.3e-4),
    "idle_tasks": (0.031, 1.4e-6),
    "threads_vs_tasks": (0.1, 3.4e-4),
    "ping_pong": (0.02, 4.0e-7),
}
SLEEP_PER_TASK_WORK_S = 6.1e-10
ARTICLE_LOOP_PER_TASK_WORK_S = 2.3e-10
# The machine the defaults were fitted on had 2 CPUs: a cell pinned to k cores takes the per-N part
# times (2 / k) ** CORES_EXPONENT (measured at k = 1: sleep's kernel 1.9x, idle tasks' spawning 1.4x,
# threads' switches 1.6x; ping-pong's lockstep is no faster on two)
FITTED_CPUS = 2
CORES_EXPONENT = {"sleep": 0.93, "idle_tasks": 0.5, "threads_vs_tasks": 0.7, "cpu_loops": 1.0}
# Initialising, starting and at the end stopping one private database server, per server: on a
# 2-core Intel Xeon under KVM (2026-11-30, three times each, with other work on both CPUs) MariaDB
# 10.11 started in 4.4-5.1 s and stopped in 0.8-1.1 s, PostgreSQL 15 in 4.1-5.3 s and 4.7-5.2 s (its
# shutdown waits for a checkpoint).  Rounded up; a server the plan does not start (a DSN) costs 0.
SERVER_START_S = {"mysql": 7.0, "postgres": 11.0}


@dataclass(frozen=True)
class Speed:
    """How this machine's times compare with the default per-workload times: `factor`, the seconds
    `warmups` warm-up samples took over their cells' default seconds."""
    factor: float
    warmups: int

    def __str__(self) -> str:
        factor = f"{self.factor:.2f}" if self.factor >= 0.1 else f"{self.factor:.2g}"
        return (f"{factor}, what this machine's {self.warmups} warm-up sample{'s' if self.warmups != 1 else ''} "
                "took of their default times")


@dataclass
class Estimate:
    seconds: float
    samples: float
    cells: int
    cells_from_history: int
    server_start_s: float = 0.0
    sources: list[str] = field(default_factory=list)
    cells_from_run: int = 0  # timed from the run's own samples (after its pilot)
    notes: list[str] = field(default_factory=list)  # what else shaped it (a stopping rule, a budget)
    speed: Speed | None = None  # the defaults scaled to this machine (speed_factor)

    @property
    def basis(self) -> str:
        if not self.samples:  # no cell is timed: a finished run's timing of its cells is no basis of 0 s
            return "; ".join(["nothing to take"] + self.notes)
        parts = []
        if self.cells_from_run:
            parts.append(f"{self.cells_from_run} of {self.cells} cells timed from this run's samples, median seconds "
                         "per sample")
        if self.cells_from_history:
            where = f" ({len(self.sources)} results director{'y' if len(self.sources) == 1 else 'ies'} under " \
                    f"{paths.RESULTS})" if self.sources else ""
            parts.append(f"{self.cells_from_history} of {self.cells} cells timed from earlier runs{where}, "
                         "median seconds per sample")
        rest = self.cells - self.cells_from_history - self.cells_from_run
        if rest:
            parts.append(f"{rest} cell{'s' if rest != 1 else ''} from default per-workload times "
                         "(bench_src/plan/estimate.py)" + (f" x {self.speed}" if self.speed else ""))
        if self.server_start_s:
            parts.append(f"{self.server_start_s:.0f} s to start and stop the database servers")
        parts += self.notes
        return "; ".join(parts)

    def __str__(self) -> str:
        count = f"{self.samples:,.0f}"
        count += " sample" if count == "1" else " samples"
        return (f"estimated duration: about {format_duration(self.seconds)} for {count} "
                f"(an estimate, not a promise: {self.basis})")

    def spread_over(self, hosts: int, warmup_s: float, warmups: int = 0) -> None:
        """The same samples taken on `hosts` hosts at once: the measured blocks divide among them,
        the warm-ups (each host takes all `warmups` of them, `warmup_s`) and the servers' start do
        not; the samples counted are every host's warm-ups and the measured ones."""
        if hosts <= 1:
            return
        fixed = min(self.seconds, warmup_s + self.server_start_s)
        self.seconds = fixed + (self.seconds - fixed) / hosts
        self.samples += warmups * (hosts - 1)
        self.notes.append(f"the measured blocks divided among {hosts} hosts, each taking the warm-ups itself")

    def to_dict(self) -> dict:
        return {"seconds": round(self.seconds, 1), "samples": self.samples, "cells": self.cells,
                "cells_from_history": self.cells_from_history, "basis": self.basis}


def format_duration(seconds: float) -> str:
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def default_seconds(cell: Cell) -> float:
    fixed, per_n = DEFAULT_SAMPLE_S.get(cell.workload, (1.0, 0.0))
    # the cell's parameters over the catalogue's defaults (a plan's cells hold every one)
    p = {**(WORKLOADS[cell.workload].default_params(cell.lang) if cell.workload in WORKLOADS else {}),
         **dict(cell.params)}
    units = float(cell.n)
    if cell.cores:
        per_n *= (FITTED_CPUS / cell.cores) ** CORES_EXPONENT.get(cell.workload, 0.0)
    if cell.workload == "sleep":
        work = int(p["work"])
        per_step = ARTICLE_LOOP_PER_TASK_WORK_S * (cell.lang == "go") if p.get("kernel") == "article" \
            else SLEEP_PER_TASK_WORK_S
        if cell.cores:
            per_step *= (FITTED_CPUS / cell.cores) ** CORES_EXPONENT["sleep"]
        per_n += per_step * work
    elif cell.workload == "cpu_loops":
        units *= int(p["inner"])
    elif cell.workload == "idle_tasks":
        fixed += (0 if p["wait"] == "release" else int(p["duration_ms"]) / 1000) + int(p["linger_ms"]) / 1000
    elif cell.workload == "threads_vs_tasks":  # each iteration a tick's sleep (TVT_TICK_MS), and N wake-ups (fitted at 100)
        fixed += TVT_TICK_MS / 1000 * int(p["iterations"])
        per_n *= int(p["iterations"]) / 100
    return fixed + per_n * units


def speed_factor(plan: Plan, records: list[dict]) -> Speed | None:
    """The default per-workload times scaled to this machine: the seconds the plan's warm-up samples
    (status ok) took, over the default seconds of their cells; None without such a warm-up.  A ratio
    of sums: the long warm-ups weigh most, as the long cells weigh most in the run's total.  It
    assumes that this machine is as much faster or slower than the one the defaults were fitted on
    in the cells that get a warm-up as in the others, and in their whole N range as at the N the
    warm-ups take (with warmup_scope "program", the smallest).  On five article runs of a 2-core
    machine unlike the fitted one (2026-11-27), the 58 warm-ups took 0.79 to 0.82 of their default
    times, and the pilot's 984 samples 0.76 to 0.82 of theirs: the pilot so timed was 1.9% below
    to 4.4% above what it took.  By workload the pilot's ratio ranged from 0.48 (PostgreSQL) to
    2.16 (SQLite), so the factor holds for the sum of many cells, not for one cell.  Nor does it
    hold on every machine: on a 2-core EPYC without AVX-512 (runs N and O, 2026-11-28) the warm-ups
    took 1.08 to 1.10 of their default times and the pilot's samples 1.27 to 1.29, the large cells
    slower against their defaults than the small N the warm-ups take (files_read 1.38-1.42 in the
    pilot against 0.37-0.52 in its warm-ups): the pilot so timed was 15% short.  And one workload
    can set it: on a 2-core EPYC of family 23 (run DJ, 2026-12-07) the CPU loop's eight warm-ups at
    N = 10,000, 30% of the warm-ups' default seconds (its cells are 6.5% of the pilot's), took 4.06
    times their defaults and the other 50 took 1.11, so the factor read 2.00 and the pilot so timed
    was 45% above what it took (docs/statistics.md, "Duration")."""
    cells = {c.id: c for c in plan.cells()}
    taken = default = 0.0
    count = 0
    for rec in records:
        if not isinstance(rec, dict) or rec.get("phase") != "warmup" or rec.get("status") != OK:
            continue
        cell, secs = cells.get(str(rec.get("cell_id"))), _sample_seconds(rec)
        if cell is None or secs is None:
            continue
        taken += secs
        default += default_seconds(cell)
        count += 1
    return Speed(taken / default, count) if count and default > 0 else None


def _sample_seconds(rec: dict) -> float | None:
    for key, scale in (("harness_s", 1.0), ("wall_ns", 1e-9)):
        v = rec.get(key)
        if isinstance(v, (int, float)) and v > 0 and math.isfinite(v):
            return v * scale
    return None


def ok_times(records, into: dict[str, list[float]]) -> set[str]:
    """Add the seconds of every sample with status ok in `records` to `into` (by cell id); the cell
    ids seen.  A failed sample may have ended early: it says little of a good one."""
    seen: set[str] = set()
    for rec in records:
        if isinstance(rec, dict) and rec.get("status") == OK and "cell_id" in rec:
            secs = _sample_seconds(rec)
            if secs is not None:
                into.setdefault(str(rec["cell_id"]), []).append(secs)
                seen.add(str(rec["cell_id"]))
    return seen


def seconds_per_sample(records: list[dict]) -> dict[str, float]:
    """Median seconds per sample of every cell id in `records` (samples with status ok only): a
    run's own times, which outrank any earlier run's."""
    times: dict[str, list[float]] = {}
    ok_times(records, times)
    return {k: statistics.median(v) for k, v in times.items()}


def estimate(plan: Plan, per_cell_seconds: Mapping[str, float] | None = None,
             expected_samples: Mapping[str, float] | float | None = None,
             done: Mapping[str, int] | None = None, sources: list[str] | None = None,
             own_seconds: Mapping[str, float] | None = None, speed: Speed | None = None,
             servers_started: bool = False) -> Estimate:
    """The estimated duration of `plan`.

    per_cell_seconds: seconds per sample by cell id (from `bench_src/store/history.py`'s `history`); cells without one use
        `default_seconds`.
    own_seconds: the run's own seconds per sample by cell id (`seconds_per_sample` of its
        records), which outrank `per_cell_seconds`.
    expected_samples: samples per cell (a number for all, or by cell id); default its warm-ups +
        samples.
    done: samples already taken per cell id (a resumed run): only the rest is estimated.
    speed: the default times scaled to this machine (`speed_factor`); None: as fitted.
    servers_started: the private database servers are running already (their start is not counted).
    """
    per_cell_seconds = per_cell_seconds or {}
    own_seconds = own_seconds or {}
    cells = plan.cells()
    warmups = plan.warmups()
    total_s = 0.0
    total_n = 0.0
    from_history = from_run = 0
    for cell in cells:
        if isinstance(expected_samples, Mapping):
            n = float(expected_samples.get(cell.id, warmups[cell.id] + plan.samples))
        elif expected_samples is not None:
            n = float(expected_samples)
        else:
            n = float(warmups[cell.id] + plan.samples)
        n = max(0.0, n - (done or {}).get(cell.id, 0))
        if cell.id in own_seconds:
            secs = own_seconds[cell.id]
            from_run += 1
        elif cell.id in per_cell_seconds:
            secs = per_cell_seconds[cell.id]
            from_history += 1
        else:
            secs = default_seconds(cell) * (speed.factor if speed else 1.0)
        secs = min(secs, plan.timeout_s + 1.0) + plan.cooldown_s
        total_s += n * secs
        total_n += n
    servers = {WORKLOADS[w].server for w in plan.workloads if WORKLOADS[w].server}
    start_s = (sum(SERVER_START_S[k] for k in servers if k not in plan.dsn)
               if total_n and not servers_started else 0.0)
    defaults_used = len(cells) - from_history - from_run
    return Estimate(total_s + start_s, total_n, len(cells), from_history, start_s, list(sources or []),
                    cells_from_run=from_run, speed=speed if defaults_used else None)

