"""The adaptive stopping rule, fixed in the plan before a run.

After the plan's `samples` measured blocks, further blocks (up to `max_samples`) hold only the
cells that are not settled yet.  A cell is settled when, for every Go/Rust comparison it takes part
in (same workload, N, threads and shared parameters), the 95% CI of the ratio of medians of the
workload time has a relative half-width ((high - low) / 2 / ratio) of at most `adaptive_target`;
a cell without a partner in the other language is settled when its median's CI is that narrow.
The decision uses only stored samples, so a resumed run carries on from what is stored.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..catalogue import WORKLOADS
from ..plan import Cell, Plan
from ..store import mark_valid, samples_frame
from .stats import median_ci, ratio_ci

METRIC = "elapsed_s"


def pair_key(cell: Cell) -> tuple:
    shared = WORKLOADS[cell.workload].shared_params
    return (cell.workload, cell.n, cell.threads, cell.arm, tuple(kv for kv in cell.params if kv[0] in shared))


def relative_half_width(low: float, high: float, centre: float) -> float:
    if not all(np.isfinite([low, high, centre])) or centre == 0:
        return np.inf
    return (high - low) / 2 / abs(centre)


def unsettled(plan: Plan, records: list[dict]) -> list[Cell]:
    """The cells whose intervals are still wider than the plan's target."""
    cells = plan.cells()
    df = mark_valid(samples_frame(records)) if records else None
    values: dict[str, np.ndarray] = defaultdict(lambda: np.array([]))
    if df is not None and not df.empty:
        for cid, g in df[df["valid"]].groupby("cell_id"):
            values[cid] = g[METRIC].to_numpy(dtype=float)
    groups: dict[tuple, list[Cell]] = defaultdict(list)
    for c in cells:
        groups[pair_key(c)].append(c)
    widest: dict[str, float] = {}
    for members in groups.values():
        go = [c for c in members if c.lang == "go"]
        rust = [c for c in members if c.lang == "rust"]
        for c in members:
            partners = rust if c.lang == "go" else go
            if not partners:
                med, lo, hi = median_ci(values[c.id])
                widest[c.id] = relative_half_width(lo, hi, med)
                continue
            worst = 0.0
            for p in partners:
                a, b = (values[c.id], values[p.id]) if c.lang == "go" else (values[p.id], values[c.id])
                r, lo, hi = ratio_ci(a, b, n_resamples=2000)
                worst = max(worst, relative_half_width(lo, hi, r))
            widest[c.id] = worst
    return [c for c in cells if widest[c.id] > plan.adaptive_target]
