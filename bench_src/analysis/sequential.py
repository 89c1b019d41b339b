"""The sequential stopping rule: sample until the comparisons are decided, within a budget.

A plan with `max_samples` > `samples` looks at its comparisons (every family of
families.comparisons, on rules.SEQUENTIAL_METRIC) after the `samples` pilot blocks and again at
fixed pair counts up to `max_samples` (rules.look_counts).  At look k a comparison is decided
when
- its exact paired p-value is below alpha * share_k / m (share_k: the look's share of alpha for
  its family, rules.family_spending, zero at a look whose pair count cannot reach that level;
  m: the comparisons of its family) and its interval excludes 1, or
- its interval lies within the equivalence margin;
a comparison whose cells have no valid sample is closed (it can never be decided).  A cell stays
open while any comparison it takes part in is open; a cell without a partner stops after the
pilot.  Until the next look, the open cells get more blocks: blocks per group of open cells linked by
open comparisons, both sides of each open comparison in the same block, in the block's seeded
random order (Plan.extra_block).  The groups are ordered by value: the predicted shrinking of
the group's widest interval per second of its cells' measured wall time, so the machine's time
goes first where it narrows the widest intervals fastest; a group's blocks up to the next look run
one after another, so a time budget that runs out leaves groups at a look, not between looks.

Every decision uses only stored samples of blocks before the look's boundary, so a resumed run
makes the same decisions and takes exactly the missing samples.

Error control: alpha is split over the looks (Bonferroni), so a comparison's p-value for the
final tables is the smallest over its looks of p_k / share_k (compare.Design), and Holm's
correction over the family on these p-values keeps the family-wise error at most alpha, whatever
the stopping did.  docs/statistics.md gives the simulated error rates and coverage.
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from . import ranktests, rules
from .compare import CellValues, Design
from .families import FAMILIES, CellRef, cell_of, comparisons
from ..store import mark_valid, samples_frame

Comparison = tuple[str, CellRef, CellRef]


def design_of(plan) -> Design:
    """The design of a Plan or of the plan dict stored in meta.json."""
    return Design.from_plan(plan)


def design_from_meta(meta: Mapping[str, Any]) -> Design:
    return Design.from_plan(meta["plan"])


def attach(df: pd.DataFrame, meta_or_plan) -> pd.DataFrame:
    """The frame with its run's design in `df.attrs["design"]`, where the comparison functions
    find it (meta.json's content, a Plan or a plan dict)."""
    plan = meta_or_plan["plan"] if isinstance(meta_or_plan, Mapping) and "plan" in meta_or_plan else meta_or_plan
    out = df.copy()
    out.attrs["design"] = Design.from_plan(plan).to_dict()
    return out


def plan_comparisons(plan) -> list[Comparison]:
    refs = [cell_of(c) for c in plan.cells()]
    return [(f, a, b) for f in FAMILIES for a, b in comparisons(refs, f)]


def _first_pairs(cv: CellValues, a: CellRef, b: CellRef, count: int) -> np.ndarray:
    ac, av = cv.cells.get(a, (np.array([], int), np.array([])))
    bc, bv = cv.cells.get(b, (np.array([], int), np.array([])))
    if av.size == 0 or bv.size == 0 or np.any(av <= 0) or np.any(bv <= 0):
        return np.array([])
    _, ia, ib = np.intersect1d(ac, bc, assume_unique=False, return_indices=True)
    order = np.argsort(ac[ia], kind="stable")
    d = np.log(av[ia][order]) - np.log(bv[ib][order])
    return d[:count]


def decide(d: np.ndarray, level: float, margin: float = rules.MARGIN,
           confidence: float = rules.CONFIDENCE) -> tuple[str, float]:
    """"difference", "equivalent" or "open" for the per-block log ratios d at one look, and the
    relative half-width of the interval (inf without one)."""
    if d.size < 2:
        return ("open", math.inf)
    est, lo, hi, _ = ranktests.hodges_lehmann_paired(d, confidence)
    if np.isnan(lo):
        return ("open", math.inf)
    p = ranktests.signed_rank_p(d)[0]
    if p < level and (hi < 0 or lo > 0):
        return ("difference", (math.exp(hi) - math.exp(lo)) / 2)
    if math.log(1 - margin) <= lo and hi <= math.log(1 + margin):
        return ("equivalent", (math.exp(hi) - math.exp(lo)) / 2)
    return ("open", (math.exp(hi) - math.exp(lo)) / 2)


def family_sizes(comps: Iterable[Comparison]) -> dict[str, int]:
    m: dict[str, int] = defaultdict(int)
    for f, _, _ in comps:
        m[f] += 1
    return dict(m)


def look(df: pd.DataFrame, comps: list[Comparison], count: int, share: float | Mapping[str, float],
         closed: Mapping[Comparison, str]) -> tuple[dict[Comparison, str], dict[Comparison, float]]:
    """The state of every comparison at a look with `count` pairs: decided ("difference",
    "equivalent", "no data") or "open", and the open ones' relative half-widths.  `share`: the
    look's share of alpha, one for all families or per family (Design.shares)."""
    cv = CellValues(df, rules.SEQUENTIAL_METRIC) if not df.empty else None
    m = family_sizes(comps)
    shares = share if isinstance(share, Mapping) else defaultdict(lambda: share)
    state, width = {}, {}
    for comp in comps:
        if comp in closed:
            state[comp] = closed[comp]
            continue
        f, a, b = comp
        if cv is None or a not in cv.cells or b not in cv.cells:
            state[comp] = "no data"
            continue
        d = _first_pairs(cv, a, b, count)
        state[comp], width[comp] = decide(d, rules.ALPHA * shares[f] / m[f])
    return state, {c: w for c, w in width.items() if state[c] == "open"}


def _groups(open_comps: Iterable[Comparison]) -> list[set[CellRef]]:
    """Cells linked by open comparisons (connected components)."""
    parent: dict[CellRef, CellRef] = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for _, a, b in open_comps:
        parent[find(a)] = find(b)
    groups: dict[CellRef, set[CellRef]] = defaultdict(set)
    for x in list(parent):
        groups[find(x)].add(x)
    return sorted(groups.values(), key=lambda g: sorted(g))


def _seconds(df: pd.DataFrame) -> dict[CellRef, float]:
    cv = CellValues(df, "wall_s") if "wall_s" in df.columns and not df.empty else None
    if cv is None:
        return {}
    return {ref: float(np.median(v)) for ref, (_, v) in cv.cells.items() if v.size}


def block_order(groups: list[set[CellRef]], widths: Mapping[Comparison, float], open_comps: list[Comparison],
                seconds: Mapping[CellRef, float], count: int, blocks_each: int) -> list[int]:
    """The order of the next blocks (group indices, each group `blocks_each` times in a row): the
    groups by the predicted shrinking of their widest interval (~ 1 / sqrt(pairs)) from this look
    to the next per second of their cells' time, and each group's blocks together, so that a
    budget running out leaves whole groups at the next look instead of every group short of it."""
    known = [s for s in seconds.values() if s > 0]
    fallback = float(np.median(known)) if known else 1.0
    items = []
    for gi, g in enumerate(groups):
        widest = max((widths.get(c, math.inf) for c in open_comps if c[1] in g), default=math.inf)
        cost = (sum(seconds.get(c, fallback) for c in g) or fallback) * blocks_each
        shrink = 1 - math.sqrt(count / (count + blocks_each))
        gain = (widest if np.isfinite(widest) else 1e9) * shrink / cost
        items.append((-gain, gi))
    return [gi for _, gi in sorted(items) for _ in range(blocks_each)]


def _frame(records: list[dict], before_block: int) -> pd.DataFrame:
    """The measured samples of blocks before the boundary, marked valid from those alone (so a
    later sample can never change an earlier look)."""
    kept = [r for r in records if r.get("phase") == "measured" and int(r.get("block", 0)) < before_block]
    return mark_valid(samples_frame(kept)) if kept else pd.DataFrame()


def run_blocks(plan, store, take: Callable, done: set[str], bar, log: Callable[[str], None],
               deadline: float | None = None) -> None:
    """Sample the open cells look by look (the runner's call after the pilot blocks).  With a
    `deadline` (time.monotonic() seconds: the plan's time budget), no block starts after it: the
    blocks run in order of value per second, so what is left open is what would have bought the
    least precision for its time."""
    design = design_of(plan)
    if not design.sequential:
        return
    cells = {cell_of(c): c for c in plan.cells()}
    comps = plan_comparisons(plan)
    seq = len(plan.schedule())
    boundary = plan.samples
    closed: dict[Comparison, str] = {}
    m = family_sizes(comps)
    shares = {f: design.shares(f, size) for f, size in m.items()}
    for k, count in enumerate(design.looks[:-1]):
        # a store may hand over its samples as a frame directly (the simulations' in-memory store)
        df = store.frame_before(boundary) if hasattr(store, "frame_before") else _frame(store.latest_records(), boundary)
        state, widths = look(df, comps, count, {f: s[k] for f, s in shares.items()}, closed)
        closed = {c: s for c, s in state.items() if s != "open"}
        open_comps = [c for c in comps if state[c] == "open"]
        tally = pd.Series(list(state.values()), dtype=object).value_counts().to_dict() if state else {}
        if not open_comps:
            log(f"sequential: every comparison decided at look {k + 1} ({count} pairs): {tally}")
            return
        groups = _groups(open_comps)
        step = design.looks[k + 1] - count
        order = block_order(groups, widths, open_comps, _seconds(df), count, step)
        slots = [plan.extra_block(boundary + i, sorted(cells[c] for c in groups[gi])) for i, gi in enumerate(order)]
        todo = sum(1 for block in slots for s in block if s.sample_id not in done)
        log(f"sequential look {k + 1} of {len(design.looks)} ({count} pairs): {tally}; "
            f"{len(order)} blocks for {sum(len(g) for g in groups)} open cells follow")
        bar.total += todo
        for block in slots:
            if deadline is not None and time.monotonic() >= deadline:
                log(f"sequential: the time budget of {plan.time_budget_s:g} s is spent; "
                    f"{len(open_comps)} comparisons were open at look {k + 1}; the final tables test each "
                    "comparison at every look its pairs reached (the blocks taken since count)")
                return
            for slot in block:
                if slot.sample_id not in done:
                    take(seq, slot)
                seq += 1
        boundary += len(order)
    log(f"sequential: budget of {plan.max_samples} samples per cell reached for the open cells")


# --- expectations for duration estimates --------------------------------------------------------
def expected_samples(plan, records: list[dict] | None = None, replications: int = 2000,
                     seed: int = 0) -> dict[str, float]:
    """The expected number of measured samples per cell under the plan's rule: the pilot plus
    the expected extra blocks.  A comparison with pilot data (stored records of the plan's cells)
    is decided at the pilot look by the rule itself; if it stays open, it is projected from its
    pilot estimate and spread: normal per-block log ratios continue the pilot, and a normal
    approximation of the rule (with the exact test's smallest p-value) decides at the later
    looks.  A comparison without pilot data takes the budget."""
    design = design_of(plan)
    cells = plan.cells()
    if not design.sequential:
        return {c.id: float(plan.samples) for c in cells}
    comps = plan_comparisons(plan)
    m = family_sizes(comps)
    shares = {f: design.shares(f, size) for f, size in m.items()}
    df = _frame(records or [], plan.samples)
    cv = CellValues(df, rules.SEQUENTIAL_METRIC) if not df.empty else None
    rng = np.random.default_rng(seed)
    stop: dict[Comparison, np.ndarray] = {}
    looks, budget = design.looks, design.looks[-1]
    z = float(ranktests.sps.norm.ppf(0.5 + rules.CONFIDENCE / 2))
    lo_margin, hi_margin = math.log(1 - rules.MARGIN), math.log(1 + rules.MARGIN)
    for comp in comps:
        f, a, b = comp
        d = _first_pairs(cv, a, b, looks[0]) if cv is not None else np.array([])
        if d.size < 2:
            stop[comp] = np.full(replications, float(budget))
            continue
        if decide(d, rules.ALPHA * shares[f][0] / m[f])[0] != "open":  # the pilot itself, exactly
            stop[comp] = np.full(replications, float(looks[0]))
            continue
        centre, spread = float(np.mean(d)), float(np.std(d, ddof=1))
        future = rng.normal(centre, spread if spread > 0 else 1e-12, size=(replications, budget - d.size))
        full = np.concatenate([np.broadcast_to(d, (replications, d.size)), future], axis=1)
        path_stop = np.full(replications, float(budget))
        undecided = np.ones(replications, dtype=bool)
        for count, share in zip(looks[1:-1], shares[f][1:-1]):
            level = rules.ALPHA * share / m[f]
            x = full[:, :count]
            mean = x.mean(axis=1)
            # the Hodges-Lehmann estimate's standard error on normal data: sd / sqrt(n) * sqrt(pi / 3)
            se = x.std(axis=1, ddof=1) / math.sqrt(count) * math.sqrt(math.pi / 3)
            p = 2 * ranktests.sps.norm.sf(np.abs(mean) / np.where(se > 0, se, 1e-300))
            difference = (p < level) & (ranktests.min_p_paired(count) < level)
            equivalent = (mean - z * se >= lo_margin) & (mean + z * se <= hi_margin)
            now = undecided & (difference | equivalent)
            path_stop[now] = count
            undecided &= ~now
        stop[comp] = path_stop
    per_cell: dict[CellRef, np.ndarray] = {}
    for (f, a, b), s in stop.items():
        for c in (a, b):
            per_cell[c] = np.maximum(per_cell.get(c, np.full(replications, float(plan.samples))), s)
    return {c.id: float(np.mean(per_cell.get(cell_of(c), np.array([float(plan.samples)])))) for c in cells}


def expected_duration(plan, seconds_per_sample: Mapping[str, float], records: list[dict] | None = None) -> float:
    """Expected seconds of sampling: per cell (warm-up + expected measured samples) x its seconds
    per sample (cells missing from `seconds_per_sample` count as the median of the others)."""
    expected = expected_samples(plan, records)
    known = [s for s in seconds_per_sample.values() if s and s > 0]
    fallback = float(np.median(known)) if known else 0.0
    return float(sum((plan.warmup + n) * seconds_per_sample.get(cid, fallback) for cid, n in expected.items()))
