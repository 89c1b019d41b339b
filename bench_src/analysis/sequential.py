"""The sequential stopping rule: sample until the comparisons are decided, within a budget.

A plan with `max_samples` > `samples` looks at its comparisons (every family of
plan/comparisons.py, for every metric of rules.SEQUENTIAL_METRICS) after the `samples` pilot
blocks and again at fixed pair counts up to `max_samples` (rules.look_counts).  At look k each
family and metric is decided by the rule of the final tables (compare.decide_family: the false
discovery rate over the family, looks 1..k each with its share of alpha, intervals at the level
whose exclusion of 1 is the verdict): a comparison is decided when its interval excludes 1 (a
difference) or lies within the equivalence margin, and open otherwise; a comparison whose cells
have no valid sample is closed (it can never be decided), and one that stays inconclusive stops
once its minimum detectable effect is at most rules.PRECISION_TARGET ("precise": a difference of
that size is excluded by its interval, or it would have been called; compare._detectable).  A comparison stays open while it is
open for any metric, and a cell stays open while any comparison it takes part in is open; a cell
without a partner stops after the pilot.  Decisions (a difference, an equivalence) are kept once
made (BH is monotone: later looks only lower a comparison's p-value and raise the number of
differences, so the final tables keep every decision a look made); "precise" is not monotone and
is read again at every look (`kept_decisions`).

Until the next look, the open cells get more blocks: blocks per group of open cells linked by
open comparisons, both sides of each open comparison in the same block, in the block's seeded
random order (Plan.extra_block).  The groups are ordered by value: the predicted shrinking of the
group's widest interval per second of its cells' measured wall time, so the machine's time goes
first where it narrows the widest intervals fastest; a group's blocks up to the next look run one
after another, so a time budget that runs out leaves groups at a look, not between looks.  A cell
is given at most `max_samples` blocks in all, counted as they are given (the pilot's included):
`max_samples` is the samples a cell may take, except where the plan gives late looks
(`late_looks`, plan/design.py): past the budget the looks go on at the same ratio, and a group
takes the blocks to its next late look only where they cost at most rules.LATE_STEP_S seconds of
its cells' measured wall time (cells of milliseconds whose noise needs thousands of pairs).
Blocks whose samples fail, are skipped, or do not count for a metric (validity.counted) bring no
pairs, and counting pairs would give a cell whose samples never count blocks without end; such a
comparison ends at the budget with fewer pairs.

Every decision uses only stored samples of blocks before the look's boundary, so a resumed run
makes the same decisions and takes the missing samples (a block an interruption cut, whole).

Error control: alpha is split over the looks (Bonferroni), so a comparison's p-value for the
final tables is the smallest over its looks of p_k / share_k, and BH over the family on these
p-values keeps the false discovery rate at most alpha whatever the stopping did.
docs/statistics.md gives the simulated error rates and coverage.
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from . import multiplicity, paired, rules
from .compare import CellValues, Design, decide_family, pair_test
from ..plan import Plan
from ..plan import comparisons as plan_comparisons_module
from ..plan.comparisons import CellRef, cell_of
from ..store import mark_valid, samples_frame

Comparison = tuple[str, CellRef, CellRef]


def design_of(plan: Plan) -> Design:
    return Design.from_plan(plan)


def attach(df: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """The frame with its run's design in `df.attrs["design"]`, where the comparison functions
    find it."""
    out = df.copy()
    out.attrs["design"] = Design.from_plan(plan).to_dict()
    return out


def plan_comparisons(plan) -> list[Comparison]:
    """The plan's comparisons (plan/comparisons.py), each with its family."""
    return [(f, a, b) for f, pairs in plan_comparisons_module.plan_comparisons(plan).items() for a, b in pairs]


def family_sizes(comps: Iterable[Comparison]) -> dict[str, int]:
    m: dict[str, int] = defaultdict(int)
    for f, _, _ in comps:
        m[f] += 1
    return dict(m)


def _metrics(df: pd.DataFrame) -> list[str]:
    return [m for m in rules.SEQUENTIAL_METRICS if m in df.columns]


def _first_pairs(cv: CellValues, a: CellRef, b: CellRef, count: int):
    """The two cells' codes and values restricted to their first `count` shared blocks."""
    ac, av = cv.cells[a]
    bc, bv = cv.cells[b]
    shared = np.intersect1d(ac, bc)[:count]
    return ac[np.isin(ac, shared)], av[np.isin(ac, shared)], bc[np.isin(bc, shared)], bv[np.isin(bc, shared)]


def reached_look(design: Design, pairs: int) -> int:
    """The index of the last look whose pair count the comparison has reached (-1: none)."""
    return max((k for k, count in enumerate(design.looks) if count <= pairs), default=-1)


@dataclass
class Look:
    """What a look found: each comparison's state ("difference", "equivalent", "precise": stays
    inconclusive but could have shown a difference of rules.PRECISION_TARGET, "no data", or
    "open"), the open ones' widest relative half-width over the metrics, each comparison's pairs
    (in the least-paired metric), and the states per metric."""

    state: dict[Comparison, str]
    widths: dict[Comparison, float]
    pairs: dict[Comparison, int]
    per_metric: dict[str, dict[Comparison, str]]

    @property
    def open(self) -> list[Comparison]:
        return [c for c, s in self.state.items() if s == "open"]


def _pair_test(memo: dict | None, metric: str, c: Comparison, data: tuple, cv: CellValues,
               looks: multiplicity.Looks, level_min: float, resolution: float):
    """compare.pair_test of one comparison's pairs, once per set of values: a look between two
    steps of the rule finds most comparisons with the pairs the look before had (only one group
    took blocks), and the test of the same values at the same looks is the same."""
    memo = {} if memo is None else memo
    key = (metric, c, looks, level_min, resolution, cv.paired_by_design(c[1], c[2]), *(np.ascontiguousarray(x).tobytes() for x in data))
    if key not in memo:
        memo[key] = pair_test(*data, cv.paired_by_design(c[1], c[2]), looks, level_min, resolution)
    return memo[key]


def look(df: pd.DataFrame, comps: list[Comparison], design: Design, kept: Mapping[tuple[str, Comparison], str],
         k: int | None = None, memo: dict | None = None) -> Look:
    """Every family and metric decided as in the final tables, each comparison on its first L_k
    pairs with looks 0..k: k given, or each comparison's own last reached look (the groups of open
    cells reach their looks one after another).  `kept`: per (metric, comparison), a decision an
    earlier look made (`kept_decisions`), which stays (the decisions are monotone: later looks only
    lower a p-value and raise a family's number of calls).  Every other state is read again at
    each look, as the final tables read it: "precise" is not monotone (`kept_decisions`), nor is
    "no data" (a cell's later blocks may bring the pairs that count).  `memo`: a dict kept across
    the looks of one run, in which each comparison's test is kept for the values it was made on
    (`_pair_test`)."""
    sizes = family_sizes(comps)
    state: dict[Comparison, str] = {}
    width: dict[Comparison, float] = defaultdict(float)
    pairs: dict[Comparison, int] = {}
    metrics = _metrics(df) if not df.empty else []
    per_metric: dict[str, dict[Comparison, str]] = {}
    values = {metric: CellValues(df, metric) for metric in metrics}
    # per metric and comparison, its pairs of values that count; per comparison, its pairs in the
    # metric that holds most of them: pairs of samples that ran (every valid sample counts for
    # workload time), whatever their values count for
    counted = {(metric, c): np.intersect1d(cv.cells[c[1]][0], cv.cells[c[2]][0]).size
               for metric, cv in values.items() for c in comps if c[1] in cv.cells and c[2] in cv.cells}
    ran = defaultdict(int)
    for (_, c), n in counted.items():
        ran[c] = max(ran[c], n)
    for metric in metrics:
        cv = values[metric]
        states: dict[Comparison, str] = {}
        for family, m in sizes.items():
            members = [c for c in comps if c[0] == family]
            have = [c for c in members if c[1] in cv.cells and c[2] in cv.cells]
            for c in members:
                if c not in have:
                    states[c] = "no data"
            tests = []
            for c in have:
                _, a, b = c
                n = counted[(metric, c)]
                if not _fishing(n, ran[c]):  # a metric the rule stops for does not set the pairs it counts
                    pairs[c] = min(pairs.get(c, n), n)
                kk = k if k is not None else max(reached_look(design, n), 0)
                looks = multiplicity.Looks(tuple(design.looks[:kk + 1]), tuple(design.spending[:kk + 1]))
                tests.append(_pair_test(memo, metric, c, _first_pairs(cv, a, b, design.looks[kk]), cv, looks,
                                        rules.ALPHA / m, rules.resolution(metric)))
            if not have:
                continue
            for c, t, d in zip(have, tests, decide_family(tests, rules.ALPHA, rules.MARGIN, m)):
                kind = d["verdict_kind"]
                # too few pairs to test yet because a sample failed: open, so that the cells take the
                # blocks that make it testable, not closed as if it could never be decided; but not
                # where the samples ran and their values do not count (`_fishing`)
                short = (t.tested is None and t.stats["pairing"] == "paired" and t.stats["pairs"] < rules.MIN_PAIRS
                         and t.stats["a_samples"] > 0 and t.stats["b_samples"] > 0
                         and not _fishing(t.stats["pairs"], ran[c]))
                states[c] = kept.get((metric, c)) or (
                    "difference" if kind in ("a", "b") else "equivalent" if kind == "equivalent"
                    else "open" if short
                    else "no data" if t.tested is None or not t.tested.looks
                    else "precise" if d["mde"] <= rules.PRECISION_TARGET else "open")
                if states[c] == "open":
                    half = (d["ratio_ci_high"] - d["ratio_ci_low"]) / 2
                    width[c] = max(width[c], half if np.isfinite(half) else math.inf)
        per_metric[metric] = states
    for c in comps:
        seen = [per_metric[m].get(c, "no data") for m in metrics]
        if not seen or all(s == "no data" for s in seen):
            state[c] = "no data"
        elif any(s == "open" for s in seen):
            state[c] = "open"
        else:
            state[c] = next(s for s in ("difference", "equivalent", "precise") if s in seen)
    return Look(state, {c: width[c] for c in comps if state[c] == "open"}, pairs, per_metric)


def kept_decisions(found: Look) -> dict[tuple[str, Comparison], str]:
    """What the next looks keep of this one: per metric, the comparisons decided (a difference or
    equivalence).  A "precise" or "no data" state is not kept: `look` reads it again, so that the
    rule stops only where the final tables find every comparison decided.  A minimum detectable
    effect can grow at the same pairs: as a family's other comparisons are called, the level its
    interval is read at rises (compare.decide_family), and where the interval's ends are the
    signed-rank test's, which move in steps, the detectable effect read off them can grow.  In an
    article run a memory comparison of two Rust idle-task models (N = 10,000) was stopped as precise
    at the pilot's look, 4.98% with 34 of its family's 40 comparisons called, and read 5.01%, past
    the target, in the final table with 37 called, at the same 6 pairs (docs/statistics.md,
    "Sequential stopping")."""
    return {(metric, c): s for metric, states in found.per_metric.items() for c, s in states.items()
            if s in ("difference", "equivalent")}


def _fishing(pairs: int, ran: int) -> bool:
    """A comparison with fewer than rules.MIN_PAIRS pairs whose values count for a metric although
    at least that many pairs of its samples ran (`ran`): the values that do not count are the
    metric's own exclusions (idle tasks' and sleep's memory where not every task was alive at once,
    analysis/validity.py), not failures.  More blocks would only fish for the rare samples that
    count, a selection of the cell's samples rather than their distribution, and at a price: Go's
    1,000,000 sleeping idle tasks were all alive in 1 of 6 pilot samples of an article run, and
    the rule gave four cells of 4-7 s a sample 67 more blocks for it (21 of its 73 minutes), for 6
    pairs that count.  The rule leaves such a metric to the pilot's pairs ("no data" at the look:
    the table reads "not tested", with the reason), as it leaves a metric none of whose values
    count."""
    return pairs < rules.MIN_PAIRS <= ran


def _tally(states: Mapping[Comparison, str]) -> str:
    counts = pd.Series(list(states.values()), dtype=object).value_counts()
    return ", ".join(f"{v} {k}" for k, v in counts.items())


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


def _seconds(df: pd.DataFrame, cells: Mapping[str, CellRef]) -> dict[CellRef, float]:
    """Median wall seconds per cell (by the plan's cell ids)."""
    if df.empty or "wall_s" not in df.columns or "cell_id" not in df.columns:
        return {}
    medians = pd.to_numeric(df["wall_s"], errors="coerce").groupby(df["cell_id"]).median()
    return {cells[cid]: float(v) for cid, v in medians.items() if cid in cells and np.isfinite(v)}


def next_step(groups: list[set[CellRef]], look_: Look, design: Design,
              seconds: Mapping[CellRef, float], given: Mapping[CellRef, int] | None = None
              ) -> tuple[int, int] | None:
    """The group to sample next and its number of blocks: each group needs the blocks that bring
    its least-paired open comparison to its next look; the groups are ranked by the predicted
    narrowing of their widest interval (~ 1 / sqrt(pairs)) per second of their cells' time, so the
    machine's time goes first where it narrows the widest intervals fastest.  `given`: the blocks
    each cell was given so far (pilot included); a cell never gets more than the last look's
    count, whether or not its samples made pairs (a cell whose samples fail, or are skipped
    because its server is gone, gains no pairs from its blocks), so a group stops at the budget
    of its most-given cell.  Past the design's budget (its late looks) a group takes the blocks to
    its next look only where they cost at most rules.LATE_STEP_S seconds of its cells' time.  None
    when no group may take a block."""
    known = [s for s in seconds.values() if s > 0]
    fallback = float(np.median(known)) if known else 1.0
    last = design.looks[-1]
    best = None
    for gi, g in enumerate(groups):
        members = [c for c in look_.open if c[1] in g]
        now = min(look_.pairs.get(c, 0) for c in members)
        later = [count for count in design.looks if count > now]
        most = max((given or {}).get(c, 0) for c in g)
        room = last - most
        if not later or room <= 0:
            continue
        blocks = min(later[0] - now, room)
        widest = max((look_.widths.get(c, math.inf) for c in members), default=math.inf)
        cost = (sum(seconds.get(c, fallback) for c in g) or fallback) * blocks
        if most + blocks > design.budget and cost > rules.LATE_STEP_S:
            continue  # a late look is for cheap cells only
        shrink = 1 - math.sqrt(max(now, 1) / later[0])
        value = (widest if np.isfinite(widest) else 1e9) * shrink / cost
        if best is None or value > best[0]:
            best = (value, gi, blocks)
    return None if best is None else (best[1], best[2])


def _frame(records: list[dict], before_block: int) -> pd.DataFrame:
    """The measured samples of blocks before the boundary, marked valid from those alone (so a
    later sample can never change an earlier look)."""
    kept = [r for r in records if r.get("phase") == "measured" and int(r.get("block", 0)) < before_block]
    return mark_valid(samples_frame(kept)) if kept else pd.DataFrame()


def blocks_of(slots: Iterable[tuple[int, object]]) -> list[list[tuple[int, object]]]:
    """(seq, slot) pairs grouped into their blocks (phase and block number), in schedule order."""
    out: dict[tuple[str, int], list] = {}
    for seq, slot in slots:
        out.setdefault((slot.phase, slot.block), []).append((seq, slot))
    return list(out.values())


def blocks_in_order(take: Callable, done: set[str], skipped: frozenset[str] | set[str] = frozenset()
                    ) -> Callable[[list, float | None], bool]:
    """take_blocks for one process: the blocks one after the other; a block starts only before the
    deadline (time.monotonic() seconds).  A measured block with a sample missing (an earlier
    session stopped inside it) is taken again whole, so that its pairs come from one session (the
    store keeps that session's attempt, store.current_attempts); a block whose only samples not
    `done` are `skipped` ones (a cell that could not run then) takes those alone, each by
    take(seq, slot, alone=True) (it joins the block's attempt); a warm-up block takes the samples
    it lacks.  Every other sample is taken by take(seq, slot).  Returns whether every block ran."""
    def take_blocks(blocks: list[list[tuple[int, object]]], deadline: float | None) -> bool:
        for block in blocks:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            slots, whole = block_to_take(block, done, skipped)
            for seq, slot in slots:
                take(seq, slot) if whole or slot.phase != "measured" else take(seq, slot, alone=True)
        return True

    return take_blocks


def block_to_take(block: list[tuple[int, object]], done: set[str] | frozenset[str],
                  skipped: set[str] | frozenset[str] = frozenset()) -> tuple[list[tuple[int, object]], bool]:
    """What of one block a resumed process takes (`blocks_in_order`), and whether it is the whole
    block: nothing when every sample is done; the whole block when it is a measured block with a
    sample missing; else the samples not done (the skipped ones of a measured block, the missing
    ones of a warm-up block)."""
    todo = [(seq, slot) for seq, slot in block if slot.sample_id not in done]
    if not todo:
        return [], False
    missing = any(slot.sample_id not in skipped for _, slot in todo)
    if missing and block[0][1].phase == "measured":
        return list(block), True
    return todo, len(todo) == len(block)


def run_blocks(plan, store, take: Callable | None, done: set[str], bar, log: Callable[[str], None],
               deadline: float | None = None, take_blocks: Callable[[list, float | None], bool] | None = None,
               after_pilot: Callable[[], None] | None = None) -> None:
    """Sample the open cells after the pilot (the runner's call): look at every comparison, give
    the group of open cells that buys most precision per second the blocks to its next look, look
    again, and so on until nothing is open, every open comparison is at the last look, or (with a
    `deadline`, time.monotonic() seconds: the plan's time budget) no block may start.  Each look
    uses only samples of blocks before its boundary, so a resumed run repeats the same decisions
    and takes the missing samples (a block an interruption cut, whole: `blocks_in_order`).  The blocks of each step go to `take_blocks(blocks,
    deadline)` (default: `blocks_in_order(take, done)`; a cluster runs them on its hosts at once),
    which returns False when the deadline stopped it; `bar.expect(cells)` is told the cells of each
    step's samples still to take before they are (the progress line's count and ETA grow by them).
    `after_pilot()` is called once the pilot's
    look is made and logged, while comparisons are open (the runner prints a new estimate there)."""
    take_blocks = take_blocks or blocks_in_order(take, done)
    design = design_of(plan)
    if not design.sequential:
        return
    cells = {cell_of(c): c for c in plan.cells()}
    by_id = {c.id: ref for ref, c in cells.items()}
    comps = plan_comparisons(plan)
    seq = len(plan.schedule())
    boundary = plan.samples
    kept: dict[tuple[str, Comparison], str] = {}
    memo: dict = {}
    # the blocks each cell was given: counted from the plan, not from the samples stored, so a
    # resumed run gives the same blocks, and a cell whose samples make no pairs still stops
    given: dict[CellRef, int] = dict.fromkeys(cells, plan.samples)
    first = True
    while True:
        # a store may hand over its samples as a frame directly (the simulations' in-memory store)
        df = store.frame_before(boundary) if hasattr(store, "frame_before") else _frame(store.latest_records(), boundary)
        found = look(df, comps, design, kept, memo=memo)
        kept = kept_decisions(found)
        tally = "; ".join(f"{metric}: {_tally(states)}" for metric, states in found.per_metric.items()) \
            or _tally(found.state)
        if first:
            log(f"sequential look at the pilot ({design.looks[0]} pairs): {tally}; {len(found.open)} comparisons open "
                f"(in any metric)")
            first = False
            if found.open and after_pilot is not None:
                after_pilot()
        if not found.open:
            log(f"sequential: every comparison decided: {tally}")
            return
        groups = _groups(found.open)
        step = next_step(groups, found, design, _seconds(df, by_id), given)
        if step is None:
            short = sum(found.pairs.get(c, 0) < design.budget for c in found.open)
            late = (f" (past it, cells whose blocks to the next look cost at most {rules.LATE_STEP_S:g} s: up to "
                    f"{design.looks[-1]})" if design.late_from is not None else "")
            log(f"sequential: the {len(found.open)} open comparisons reached the budget of {plan.max_samples} "
                f"samples per cell{late}: {tally}" + (f"; {short} of them with fewer pairs: samples that failed, were "
                                                "skipped or do not count for a metric (see the status and validity "
                                                "tables)" if short else ""))
            return
        gi, blocks = step
        for c in groups[gi]:
            given[c] += blocks
        slots = [plan.extra_block(boundary + i, sorted(cells[c] for c in groups[gi])) for i in range(blocks)]
        bar.expect([s.cell for block in slots for s in block if s.sample_id not in done])
        numbered = []
        for block in slots:
            numbered.append([(seq + i, slot) for i, slot in enumerate(block)])
            seq += len(block)
        if not take_blocks(numbered, deadline):
            log(f"sequential: the time budget of {plan.time_budget_s:g} s is spent with {len(found.open)} "
                f"comparisons open ({tally}); the final tables test each comparison at every look its pairs "
                "reached")
            return
        boundary += blocks


# --- expectations for duration estimates --------------------------------------------------------
def pilot_spread(d: np.ndarray) -> float:
    """The spread of the pilot's per-block log ratios that the projection continues: their
    standard deviation.  It was the smaller of that and 1.4826 x their median absolute deviation,
    against wild blocks of pilots whose pairs ran a minute apart (block_order "shuffled"); on
    normal values that reading is low (its square 0.71 of the variance at 6 pairs), and on the
    first article run of the grouped order, whose pilot pairs ran seconds apart, it projected 17.7
    minutes of extra blocks against 33.4 taken; the standard deviation projected 32.4
    (docs/statistics.md, "Duration")."""
    if d.size < 2:
        return 0.0
    return float(np.std(d, ddof=1))


def _projected_stop(d: np.ndarray, design: Design, level_scale: float, rng, replications: int) -> np.ndarray:
    """Per replication, the pair count at which an open comparison whose pilot gave the per-block
    log ratios d is decided: normal per-block log ratios continue the pilot (its mean and spread),
    and at each later look the t interval at that look's level decides (a difference when it
    excludes 0, equivalence inside the margin, or precise enough: its mde, capped as a row's at the
    interval's width and its farther end, at most rules.PRECISION_TARGET); the budget when no look
    decides."""
    budget = design.budget  # the late looks are for cheap cells: the projection stops at the budget
    looks = [count for count in design.looks if count <= budget]
    centre, spread = float(np.mean(d)), pilot_spread(d)
    future = rng.normal(centre, spread if spread > 0 else 1e-12, size=(replications, max(budget - d.size, 0)))
    full = np.concatenate([np.broadcast_to(d, (replications, d.size)), future], axis=1)
    stop = np.full(replications, float(budget))
    undecided = np.ones(replications, dtype=bool)
    lo_margin, hi_margin = math.log(1 - rules.MARGIN), math.log(1 + rules.MARGIN)
    for count, share in zip(looks[1:], design.spending[1:]):
        x = full[:, :count]
        mean = x.mean(axis=1)
        half = paired.t_half_width(x.std(axis=1, ddof=1) / math.sqrt(count), count, level_scale * share)
        mde = multiplicity.detectable(half, level_scale * share, paired.T_TEST, paired.t_dof(count), rules.POWER)
        mde = np.minimum(mde, np.minimum(2 * half, np.abs(mean) + half))  # as a row's (compare._detectable)
        decided = ((np.abs(mean) > half) | ((mean - half >= lo_margin) & (mean + half <= hi_margin))
                   | (np.expm1(mde) <= rules.PRECISION_TARGET))
        now = undecided & decided
        stop[now] = count
        undecided &= ~now
    return stop


def expected_samples(plan, records: list[dict] | None = None, replications: int = 2000,
                     seed: int = 0) -> dict[str, float]:
    """The expected number of measured samples per cell under the plan's rule: the pilot plus
    the expected extra blocks.  With pilot data (stored records of the plan's cells) the pilot
    look is decided by the rule itself; a comparison it leaves open is projected metric by metric
    (_projected_stop) at its family's level as the pilot left it (max(R, 1) alpha / m).  A
    comparison without pilot data takes the budget; without any pilot data at all, what the
    extra blocks will be cannot be projected, and every cell counts its pilot only (the caller
    says so, and adds what it knows of such runs)."""
    design = design_of(plan)
    cells = plan.cells()
    if not design.sequential:
        return {c.id: float(plan.samples) for c in cells}
    comps = plan_comparisons(plan)
    sizes = family_sizes(comps)
    budget = float(design.budget)
    df = _frame(records or [], plan.samples)
    if df.empty:
        return {c.id: float(plan.samples) for c in cells}
    rng = np.random.default_rng(seed)
    stop: dict[Comparison, np.ndarray] = {c: np.full(replications, budget) for c in comps}
    if not df.empty:
        found = look(df, comps, design, {}, k=0)
        state, per_metric = found.state, found.per_metric
        called = defaultdict(int)
        for (f, _, _), s in state.items():
            called[f] += s == "difference"
        # a comparison whose two cells were sampled but left no valid sample is closed by the
        # rule's look ("no data": it can never be decided) and takes no more blocks; one whose
        # cells the records do not hold at all (a pilot not yet taken) counts at the budget
        sampled_ids = set(df["cell_id"]) if "cell_id" in df.columns else set()
        sampled = {cell_of(c) for c in cells if c.id in sampled_ids}
        for comp in comps:
            f, a, b = comp
            if state[comp] in ("difference", "equivalent", "precise") or (
                    state[comp] == "no data" and a in sampled and b in sampled):
                stop[comp] = np.full(replications, float(design.looks[0]))
                continue
            worst = np.full(replications, float(design.looks[0]))
            known = False
            for metric, states in per_metric.items():
                if states.get(comp) != "open":
                    continue
                cv = CellValues(df, metric)
                codes_a, va, codes_b, vb = _first_pairs(cv, a, b, design.looks[0])
                t = pair_test(codes_a, va, codes_b, vb, cv.paired_by_design(a, b))
                if t.stats["pairing"] != "paired" or t.stats["pairs"] < 2:  # untested below MIN_PAIRS: projected
                    continue
                d = np.log(va[np.argsort(codes_a)]) - np.log(vb[np.argsort(codes_b)])
                scale = max(called[f], 1) * rules.ALPHA / sizes[f]
                worst = np.maximum(worst, _projected_stop(d, design, scale, rng, replications))
                known = True
            if known:
                stop[comp] = worst
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
    warmups = plan.warmups()
    return float(sum((warmups[cid] + n) * seconds_per_sample.get(cid, fallback) for cid, n in expected.items()))
