"""The default seconds a sample of a cell takes, before any run has timed it: a fixed part plus a part
per unit of N per workload, fitted once on one 2-core machine.  An order of magnitude for one cell,
within a few percent for the sum of many cells on a machine like it; not a measurement of this
machine (plan/estimate.py scales them by what the run's warm-ups took, `speed_factor`).  The plan's
schedule reads them to choose the N of a program's warm-up (Plan.warmup_cells), the duration
estimate to time the cells no run has timed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalogue import TVT_TICK_MS, WORKLOADS

if TYPE_CHECKING:
    from .model import Cell

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
