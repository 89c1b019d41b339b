"""Synthetic samples shaped like a real run, to measure what the statistics do: the decision rule's
error rate, power and interval coverage, the sequential rule's savings, and the per-cell and
per-task intervals' coverage.

A frame holds cells of the sleep workload (Go `waitgroup` against Rust `join-handles`, one pair
of cells per N, or arms A and B of one cell) measured in blocks: every block holds every cell once
in a random order, as a run does.  Each value is the cell's true median times
- the noise: multiplicative with median 1, of a given shape ("lognormal", "heavy": a log-t with 3
  degrees of freedom, "bimodal": two equal lognormal modes 20% apart, median between them);
- drift: 1 + drift * (position in the run, 0 to 1) when steady; or reached within the first third
  of the run and flat after (a warm-up); or all at once half-way (a level shift) (`drift_shape`);
- a block effect shared by every cell of a block (lognormal with sd `block_sd`);
- a burst: in one block, the cells in a stretch of the block's order run (1 + size) slower;
- a grid: values rounded to a step of `grid` times the typical value (a coarse clock, RSS pages),
  the typical value itself at a random place between two steps (within `grid_span` steps of
  1 / grid: with a wider span the cells of a family sit on grids of different relative steps).

`family_values` builds many families of comparisons at once as arrays, and `rule_verdicts` decides
them with the very functions the tables use (`paired`, `multiplicity`); `previous_verdicts` is the
rule this package used until it was replaced (exact signed-rank test, Holm's correction, 95%
intervals beside the verdicts), kept here so the study can set the two side by side.

`scaling_frame` builds series of a cost over N in blocks (a grid of N, how many blocks hold each N,
effects shared by a block or by an N), scored by `scaling_coverage` through the per-task table's own
code; `previous_per_task_fit` is the construction that table used until the blocks replaced it (a
line through the per-N typical values, its interval from their residuals), kept for the same reason.

`hosts_sequential_study` runs the hosts' family (hosts.across_hosts) on hosts that each ran the
sequential rule on their own, and `cores_study` the cores tables (cores.ratio_vs_cores,
cores.speedup) on runs of the sequential rule over a plan with core counts.

`study()` runs the simulations whose results docs/statistics.md reports:
`python -m bench_src.analysis.simulate [replications]`; the studies it does not run have commands
of their own: `scaling [series] [condition ...]`, `scaling-grid [series]`, `above-baseline [runs]`,
`hosts-coverage [sets]`, `hosts-heterogeneity [sets]`, `hosts-prediction [sets]`, `hosts-sequential [sets]` and
`cores [runs]`
(`python -m bench_src.analysis.simulate scaling 2000`).
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import pandas as pd
import scipy.stats as sps

from . import compare, memory, multiplicity, paired, ranktests, rules, scaling, sequential, stats
from . import hosts as hosts_module
from ..plan import make_plan

SHAPES = ("lognormal", "heavy", "bimodal")
KINDS = multiplicity.KINDS
BIMODAL_GAP = 0.2
PARAMS = {"kernel": "xorshift", "work": "10"}


def noise(rng: np.random.Generator, shape: str, size, cv: float) -> np.ndarray:
    """Multiplicative noise with median 1 and a spread of about `cv`."""
    if shape == "lognormal":
        return np.exp(cv * rng.standard_normal(size))
    if shape == "heavy":
        return np.exp(cv * rng.standard_t(3, size) / math.sqrt(3))
    if shape == "bimodal":
        upper = rng.random(size) < 0.5
        return np.exp(cv * rng.standard_normal(size) + upper * math.log1p(BIMODAL_GAP))
    raise ValueError(f"unknown shape {shape!r}; allowed: {', '.join(SHAPES)}")


def true_median(shape: str) -> float:
    """The median of `noise` (between the modes for bimodal: the two modes are symmetric in logs)."""
    return math.sqrt(1 + BIMODAL_GAP) if shape == "bimodal" else 1.0


@dataclass(frozen=True)
class SimCell:
    lang: str
    n: int
    arm: str = ""

    @property
    def variant(self) -> str:
        return "waitgroup" if self.lang == "go" else "join-handles"

    @property
    def id(self) -> str:
        arm = f"|arm={self.arm}" if self.arm else ""
        return f"sleep|{self.lang}|{self.variant}|n={self.n}|t=cpus|kernel=xorshift,work=10{arm}"


def go_rust_cells(ratios) -> dict[SimCell, float]:
    """A Go and a Rust cell per N (N = 1, 2, ...), Go's true median = ratio x Rust's (= 1)."""
    out = {}
    for i, r in enumerate(ratios):
        out[SimCell("go", i + 1)] = float(r)
        out[SimCell("rust", i + 1)] = 1.0
    return out


def aa_cells(m: int) -> dict[SimCell, float]:
    """Arms A and B of m cells (A/A: the same true median)."""
    return {SimCell("go", i + 1, arm): 1.0 for i in range(m) for arm in "AB"}


@dataclass(frozen=True)
class Conditions:
    shape: str = "lognormal"
    cv: float = 0.01
    drift: float = 0.0
    block_sd: float = 0.0
    burst: float = 0.0  # relative slowdown in the burst
    burst_share: float = 0.5  # share of the block's cells it hits
    grid: float = 0.0  # values rounded to this step relative to the typical value (0: continuous)
    grid_span: float = 1.0  # the typical values lie uniformly 1 / grid to 1 / grid + grid_span steps up
    drift_shape: str = "steady"  # "steady", "warm-up" or "shift" (drift_rise)


DRIFT_SHAPES = ("steady", "warm-up", "shift")


def drift_rise(cond: Conditions, share):
    """How far the drift has raised the values at `share` of the run (0 to 1; a number or an
    array): the factor is 1 + this."""
    if cond.drift_shape == "steady":
        return cond.drift * share
    share = np.asarray(share, dtype=float)
    if cond.drift_shape == "warm-up":
        return cond.drift * np.minimum(1.0, 3 * share)
    if cond.drift_shape == "shift":
        return cond.drift * (share >= 0.5)
    raise ValueError(f"unknown drift_shape {cond.drift_shape!r}; allowed: {', '.join(DRIFT_SHAPES)}")


# The threads of every simulated cell; plans built for simulated frames ask for the same, so that
# their cells match the frame's whatever this machine's usable CPUs are.
SIM_THREADS = 2


def _rows(cells: list[SimCell], centres: Mapping[SimCell, float], blocks: list[int], rng, cond: Conditions,
          seq0: int = 0, total: int | None = None, burst_block: int | None = None) -> list[dict]:
    rows = []
    total = total or len(cells) * len(blocks)
    seq = seq0
    for b in blocks:
        order = list(rng.permutation(len(cells)))
        effect = math.exp(cond.block_sd * rng.standard_normal()) if cond.block_sd else 1.0
        factors = noise(rng, cond.shape, len(cells), cond.cv)
        hit_start = rng.integers(0, max(1, len(cells) - int(cond.burst_share * len(cells)) + 1))
        for pos, ci in enumerate(order):
            c = cells[ci]
            value = centres[c] * (1 + float(drift_rise(cond, seq / total))) * effect * factors[pos]
            if burst_block is not None and b == burst_block and hit_start <= pos < hit_start + cond.burst_share * len(cells):
                value *= 1 + cond.burst
            rows.append({"run_id": "sim", "seq": seq, "phase": "measured", "block": b, "pos": pos, "cell_id": c.id,
                         "workload": "sleep", "lang": c.lang, "variant": c.variant, "n": c.n,
                         "threads_requested": SIM_THREADS, "arm": c.arm, "params": "kernel=xorshift,work=10",
                         "p_kernel": "xorshift", "p_work": "10", "valid": True, "elapsed_s": value,
                         "wall_s": value, "alive_at_spawn": c.n})  # every task alive, as the programs count
            seq += 1
    return rows


def frame(centres: Mapping[SimCell, float], blocks: int, rng: np.random.Generator,
          cond: Conditions = Conditions(), burst_block: int | None = None) -> pd.DataFrame:
    """A fixed-design run: every cell once in each of `blocks` blocks."""
    cells = sorted(centres, key=lambda c: (c.n, c.lang, c.arm))
    return pd.DataFrame(_rows(cells, centres, list(range(blocks)), rng, cond, burst_block=burst_block))


# --- families of comparisons as arrays -----------------------------------------------------------
def family_values(rng: np.random.Generator, effects: np.ndarray, blocks: int, cond: Conditions,
                  families: int = 1) -> np.ndarray:
    """values[f, i, side, b]: comparison i of family f, its side a (0) or b (1) in block b.  Every
    block holds the 2m cells of a family once in a random order (drift and bursts follow the
    order); side a's true median is exp(effect) times side b's (= 1)."""
    effects = np.asarray(effects, dtype=float)
    m = effects.size
    cells = 2 * m
    pos = np.argsort(rng.random((families, blocks, cells)), axis=-1)  # each cell's position in its block
    pos = np.moveaxis(pos, 1, -1).reshape(families, m, 2, blocks)
    run_share = (np.arange(blocks) * cells + pos) / (cells * blocks)
    logs = np.log(noise(rng, cond.shape, (families, m, 2, blocks), cond.cv))
    logs[:, :, 0, :] += effects[None, :, None]
    logs += np.log1p(drift_rise(cond, run_share))
    if cond.block_sd:
        logs += cond.block_sd * rng.standard_normal((families, 1, 1, blocks))
    if cond.burst:
        hit_block = rng.integers(0, blocks, families)
        start = rng.integers(0, cells - int(cond.burst_share * cells) + 1, families)
        at = pos[np.arange(families), :, :, hit_block]  # (families, m, 2): positions in the burst block
        hit = (at >= start[:, None, None]) & (at < start[:, None, None] + cond.burst_share * cells)
        logs[np.arange(families), :, :, hit_block] += hit * math.log1p(cond.burst)
    values = np.exp(logs)
    if cond.grid:
        typical = rng.uniform(1 / cond.grid, 1 / cond.grid + cond.grid_span, (families, m, 1, 1))  # in steps
        values = np.maximum(np.round(typical * values), 1.0)
    return values


def _pairs(values: np.ndarray, resolution: float) -> tuple[np.ndarray, Callable[[int], "paired.Rounding"]]:
    """The per-block log ratios d and each comparison's rounding on a grid, as the tables read
    them off the samples (paired.grid_step, paired.rounding): a function of the blocks a look
    tests, the first k."""
    d = np.log(values[..., 0, :]) - np.log(values[..., 1, :])

    def grid(k: int) -> "paired.Rounding":
        a, b = values[..., 0, :k], values[..., 1, :k]
        return paired.rounding(paired.grid_step(a, b, resolution), a, b)

    return d, grid


def rule_tests(values: np.ndarray, alpha: float = rules.ALPHA, looks: multiplicity.Looks = multiplicity.Looks((0,)),
               resolution: float = 0.0) -> multiplicity.Tested:
    """The package's tests of families of comparisons (values as family_values gives them; on a
    grid the values are in steps, so `resolution` is 1)."""
    d, grid = _pairs(values, resolution)
    return multiplicity.Tested.of(d, looks, alpha / d.shape[1], grid)


def rule_verdicts(values: np.ndarray, alpha: float = rules.ALPHA, margin: float = rules.MARGIN,
                  looks: multiplicity.Looks = multiplicity.Looks((0,)), resolution: float = 0.0
                  ) -> multiplicity.FamilyVerdicts:
    """The package's rule on families of comparisons: rule_tests, decided as a table decides them."""
    tested = rule_tests(values, alpha, looks, resolution)
    return multiplicity.decide(tested.p_value(), tested.interval, alpha, margin, values.shape[1])


def previous_verdicts(values: np.ndarray, alpha: float = rules.ALPHA, margin: float = rules.MARGIN):
    """The rule used until this package replaced it: the exact signed-rank test (conditional on
    ties), Holm's correction over the family, and beside each verdict a 95% Tukey-Moses interval;
    a direction when the Holm-corrected p < alpha and that interval excludes 0, equivalence when
    that interval lies inside the margin.  Returns (kinds, low, high) in log units."""
    d = np.log(values[..., 0, :]) - np.log(values[..., 1, :])
    n = d.shape[-1]
    w = paired.walsh(d)
    if np.unique(np.abs(d)).size == np.abs(d).size:  # no ties: the Walsh count is the exact statistic
        p = paired.rank_p(w, n)
    else:  # ties (a grid): the exact distribution conditional on them
        p = np.array([[ranktests.signed_rank_p(x)[0] for x in fam] for fam in d])
    order = np.argsort(p, axis=-1)
    ranked = np.take_along_axis(p, order, axis=-1)
    m = p.shape[-1]
    stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked), axis=-1)
    holm = np.empty_like(p)
    np.put_along_axis(holm, order, stepped, axis=-1)
    low, high = paired.rank_interval(w, n, 1 - rules.CONFIDENCE)
    inside = (math.log(1 - margin) <= low) & (high <= math.log(1 + margin))
    significant = holm < alpha
    kind = np.where(significant & (high < 0), "a", np.where(significant & (low > 0), "b",
                                                             np.where(inside, "equivalent", "inconclusive")))
    return kind, low, high


def score(kind: np.ndarray, low: np.ndarray, high: np.ndarray, effects: np.ndarray,
          low95: np.ndarray | None = None, high95: np.ndarray | None = None) -> dict:
    """What a rule did on families with known effects: `error` the false discovery rate (the mean
    over families of false calls / calls, a call false when the truth is no difference or the
    other direction), `fwer` the share of families with any false call, `power` the share of true
    differences called in their direction, `coverage` the share of intervals holding the truth,
    `called_coverage` the same among the called (pooled over families), `fcr` the false
    coverage-statement rate (the mean over families of called intervals missing the truth / calls),
    `equivalent` the share called equivalent.  The intervals of a table are shown at the family's
    level 1 - max(R, 1) alpha / m, 95% only when every comparison is called; `coverage_95` is the
    coverage of the same intervals computed at 95% (`low95`, `high95`; default the shown ones):
    whether the interval's construction holds its stated level."""
    effects = np.asarray(effects, dtype=float)[None, :]
    called = np.isin(kind, ["a", "b"])
    false = called & ((effects == 0) | ((kind == "a") & (effects > 0)) | ((kind == "b") & (effects < 0)))
    r, v = called.sum(axis=1), false.sum(axis=1)
    real = np.broadcast_to(effects != 0, called.shape)
    shown = ~np.isnan(low) & ~np.isnan(high)
    holds = shown & (low <= effects) & (effects <= high)
    shares = np.where(r > 0, v / np.maximum(r, 1), 0.0)
    missed = (called & ~holds).sum(axis=1)
    low95, high95 = (low, high) if low95 is None else (low95, high95)
    shown95 = ~np.isnan(low95) & ~np.isnan(high95)
    holds95 = shown95 & (low95 <= effects) & (effects <= high95)
    return {"error": float(np.mean(shares)), "error_se": float(np.std(shares, ddof=1) / math.sqrt(shares.size)),
            "false_families": int((v > 0).sum()), "fwer": float(np.mean(v > 0)),
            "fcr": float(np.mean(np.where(r > 0, missed / np.maximum(r, 1), 0.0))),
            "power": float((called & ~false & real).sum() / max(real.sum(), 1)),
            "coverage": float(holds.sum() / max(shown.sum(), 1)),
            "called_coverage": float((holds & called).sum() / max((shown & called).sum(), 1)),
            "coverage_95": float(holds95.sum() / max(shown95.sum(), 1)),
            "equivalent": float((kind == "equivalent").mean()), "families": int(kind.shape[0])}


def family_study(families: int, rng, effects, blocks: int, cond: Conditions, previous: bool = False,
                 chunk: int = 250) -> dict:
    """`families` families of the given true effects (log ratios) at `blocks` pairs under `cond`,
    decided by the package's rule (or, with previous=True, by the rule it replaced): score()."""
    effects = np.asarray(effects, dtype=float)
    kinds, lows, highs, lows95, highs95 = [], [], [], [], []
    for start in range(0, families, chunk):
        values = family_values(rng, effects, blocks, cond, min(chunk, families - start))
        if previous:
            k, lo, hi = previous_verdicts(values)
            lo95, hi95 = lo, hi
        else:
            tested = rule_tests(values, resolution=1.0 if cond.grid else 0.0)
            fv = multiplicity.decide(tested.p_value(), tested.interval, rules.ALPHA, rules.MARGIN, effects.size)
            k, lo, hi = fv.kind, fv.low, fv.high
            lo95, hi95 = tested.interval(1 - rules.CONFIDENCE)
        kinds.append(k), lows.append(lo), highs.append(hi), lows95.append(lo95), highs95.append(hi95)
    return score(np.concatenate(kinds), np.concatenate(lows), np.concatenate(highs), effects,
                 np.concatenate(lows95), np.concatenate(highs95))


# Compositions of a family used by the study: every comparison equal (A/A), half of them 10% apart,
# all 10% apart, half 3% apart, and a mix like a real table (x1.3, x0.8, equal, 1.5% and 5% apart).
COMPOSITIONS = {
    "all equal": lambda m: np.zeros(m),
    "half 10% apart": lambda m: np.r_[np.zeros(m // 2), np.full(m - m // 2, math.log(1.1))],
    "all 10% apart": lambda m: np.full(m, math.log(1.1)),
    "half 3% apart": lambda m: np.r_[np.zeros(m // 2), np.full(m - m // 2, math.log(1.03))],
    "mixed": lambda m: np.log(np.resize([1.0, 1.3, 0.8, 1.015, 1.0, 1.05], m)),
}
# The shapes of noise of the study (with drift +10% over the run, as real runs drift).
STUDY_CONDITIONS = {
    "lognormal CV 1%": Conditions("lognormal", 0.01, drift=0.1),
    "lognormal CV 5%": Conditions("lognormal", 0.05, drift=0.1),
    "lognormal CV 1%, burst": Conditions("lognormal", 0.01, drift=0.1, burst=0.5),
    "heavy tails CV 1%": Conditions("heavy", 0.01, drift=0.1),
    "heavy tails CV 5%": Conditions("heavy", 0.05, drift=0.1),
    "bimodal CV 1%": Conditions("bimodal", 0.01, drift=0.1),
    "bimodal CV 5%": Conditions("bimodal", 0.05, drift=0.1),
    "quantized CV 1%": Conditions("lognormal", 0.01, drift=0.1, grid=0.05),
    "quantized CV 5%": Conditions("lognormal", 0.05, drift=0.1, grid=0.05),
}


# --- the sequential rule on synthetic data -------------------------------------------------------
class _MemoryStore:
    """The samples of a simulated run, handed to the rule as a frame (what samples_frame and
    mark_valid would make of them: every sample valid)."""

    def __init__(self):
        self.rows: list[dict] = []
        self._frame = pd.DataFrame()

    def frame_before(self, block: int) -> pd.DataFrame:
        if len(self._frame) < len(self.rows):  # the rows taken since the last look, appended once
            self._frame = pd.concat([self._frame, pd.DataFrame(self.rows[len(self._frame):])], ignore_index=True)
        return self._frame[self._frame["block"] < block]

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)


class _Bar:
    def expect(self, cells) -> None:
        pass


def sequential_run(plan, centres: Mapping[str, float], rng: np.random.Generator, cond: Conditions) -> pd.DataFrame:
    """Run a plan's pilot and its sequential blocks (sequential.run_blocks itself) on synthetic
    values: `centres` maps a plan cell's id to its true median.  Returns the samples frame."""
    store = _MemoryStore()
    expected_total = len(plan.cells()) * plan.max_samples
    effects: dict[int, float] = {}

    def take(seq: int, slot) -> None:
        c = slot.cell
        if slot.block not in effects:
            effects[slot.block] = math.exp(cond.block_sd * rng.standard_normal()) if cond.block_sd else 1.0
        value = (centres[c.id] * (1 + float(drift_rise(cond, min(1.0, seq / expected_total)))) * effects[slot.block]
                 * float(noise(rng, cond.shape, 1, cond.cv)[0]))
        store.rows.append({"run_id": "sim", "seq": seq, "phase": "measured", "block": slot.block, "pos": slot.pos,
                           "cell_id": c.id, "workload": c.workload, "lang": c.lang, "variant": c.variant, "n": c.n,
                           "threads_requested": c.threads, "arm": c.arm, "params": ",".join(f"{k}={v}" for k, v in c.params),
                           **{f"p_{k}": v for k, v in c.params}, "valid": True, "elapsed_s": value, "wall_s": value,
                           "alive_at_spawn": c.n,  # every task alive at the last spawn, as the programs count
                           **({"cores": c.cores} if getattr(c, "cores", None) else {})})

    seq = 0
    for slot in plan.schedule():
        if slot.phase == "measured":
            take(seq, slot)
        seq += 1
    sequential.run_blocks(plan, store, take, set(), _Bar(), lambda *_: None)
    return store.frame()


SEQUENTIAL_NS = (10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120)
# per N, Go's true median over Rust's: clearly different, equal, or open (1.5% apart at CV 1%)
MIXED = dict(zip(SEQUENTIAL_NS, [1.3, 1.0, 1.0, 1.015, 0.8, 1.0] * 2))


# The simulated plans keep every cell anywhere in a block (block_order "shuffled"): a drift of the
# run (`drift_rise`, by the sample's place in the run) then falls on a pair's two samples up to a
# block apart, the harder case for the tests; the grouped order of real runs puts them next to
# each other, where the drift cancels more.
SIM_BLOCK_ORDER = "shuffled"


def sequential_plan(samples: int = 10, max_samples: int = 30, looks: int = 3, late_looks: int = 0):
    """A plan of 12 Go-vs-Rust comparisons of the sleep workload under the sequential rule."""
    return make_plan("quick", workloads=["sleep"], ns=list(SEQUENTIAL_NS), params={"sleep": {"work": 10}},
                     threads=SIM_THREADS, block_order=SIM_BLOCK_ORDER,
                     samples=samples, max_samples=max_samples, looks=looks, late_looks=late_looks, warmup=0)


def sequential_study(runs: int, rng, go_over_rust: Mapping[int, float], cond: Conditions, plan=None,
                     seconds: float = 1.0) -> dict:
    """Runs of the sequential rule on a plan: the false discovery rate (mean over runs of false
    calls / calls), the share of runs with a false call (a difference where the truth is 1, or
    the wrong direction), the coverage of the final intervals, wrong directions, the comparisons
    that went past the pilot and past the budget (the plan's late looks), and the mean samples per
    cell.  `seconds`: Rust's true median, the seconds a sample takes (what the rule's cost reads)."""
    plan = plan or sequential_plan()
    design = sequential.design_of(plan)
    centres = {c.id: seconds * (go_over_rust[c.n] if c.lang == "go" else 1.0) for c in plan.cells()}
    false_runs = hits = total = wrong = past_pilot = past_budget = 0
    samples, shares = [], []
    for _ in range(runs):
        df = sequential_run(plan, centres, rng, cond)
        t = compare.compare(df, design=design)
        truth = t["n"].map(go_over_rust)
        called = t["verdict_kind"].isin(["a", "b"])
        false = called & ((truth == 1.0) | ((t["verdict_kind"] == "a") & (truth > 1))
                          | ((t["verdict_kind"] == "b") & (truth < 1)))
        false_runs += bool(false.any())
        shares.append(false.sum() / called.sum() if called.any() else 0.0)
        wrong += int(((t["verdict_kind"] == "a") & (truth > 1)).sum() + ((t["verdict_kind"] == "b") & (truth < 1)).sum())
        hits += int(((t["ratio_ci_low"] <= truth) & (truth <= t["ratio_ci_high"])).sum())
        total += len(t)
        past_pilot += int((t["pairs"] > plan.samples).sum())
        past_budget += int((t["pairs"] > plan.max_samples).sum())
        samples.append(df.groupby("cell_id").size().mean())
    return {"error": float(np.mean(shares)), "fwer": false_runs / runs, "coverage": hits / total, "wrong": wrong,
            "past_pilot": past_pilot, "past_budget": past_budget, "mean_samples": float(np.mean(samples)),
            "budget": plan.max_samples}


# --- several hosts --------------------------------------------------------------------------------
def hosts_coverage(studies: int, rng, hosts: int, tau: float, pairs: int = 10, cv: float = 0.01,
                   true_ratio: float = 1.05, precision_spread: float = 1.0) -> dict:
    """Coverage of hosts.combine's interval of the common Go/Rust ratio: `studies` sets of `hosts`
    hosts, each host's true log ratio the common one plus a normal host effect of sd `tau`, each
    measured by `pairs` per-block log ratios with lognormal noise of `cv` per sample, or, with
    `precision_spread` s > 1, of cv to s x cv (geometric steps over the hosts: unequal precision).
    Beside it, on the same draws: the t interval on the hosts' unweighted spread alone
    (`spread_only`: the interval before the classic one was its floor), and two intervals not
    taken, Hartung and Knapp's (`hksj`: hosts.hksj, weights 1 / (v + tau²), its scaled variance
    and t on k - 1 degrees of freedom) and the normal (z) one on the same weights.  `width_ratio`:
    the median width of combine's interval over the median width of `spread_only`'s; `hksj_width`:
    the median width of Hartung and Knapp's over combine's."""
    truth = math.log(true_ratio)
    cvs = cv * precision_spread ** (np.arange(hosts) / max(hosts - 1, 1))
    hits = {"coverage": 0, "spread_only": 0, "hksj": 0, "z": 0}
    widths, spread_widths, hksj_widths = [], [], []
    crit = sps.t.isf(0.025, hosts - 1)
    for _ in range(studies):
        per_host = truth + tau * rng.standard_normal(hosts)
        d = per_host[:, None] + (cvs * math.sqrt(2))[:, None] * rng.standard_normal((hosts, pairs))
        eff, var = d.mean(axis=1), d.var(axis=1, ddof=1) / pairs
        c = hosts_module.combine(eff, var)
        hits["coverage"] += c.low <= truth <= c.high
        widths.append(c.high - c.low)
        hits["spread_only"] += abs(c.estimate - truth) <= crit * c.se_spread
        spread_widths.append(2 * crit * c.se_spread)
        weighted, half = hosts_module.hksj(eff, var, c.tau2, 0.05)
        hits["hksj"] += abs(weighted - truth) <= half
        hksj_widths.append(2 * half)
        w = 1.0 / (var + c.tau2)
        hits["z"] += abs(weighted - truth) <= sps.norm.isf(0.025) / math.sqrt(float(w.sum()))
    return {**{k: v / studies for k, v in hits.items()}, "median_width": float(np.median(widths)),
            "width_ratio": float(np.median(widths) / np.median(spread_widths)),
            "hksj_width": float(np.median(hksj_widths) / np.median(widths))}


# The cases of hosts_coverage that docs/statistics.md tabulates (tests/test_simulations.py seeds
# each as hosts_coverage_report does): the hosts' noise from CV 1% to this many times it, hosts, tau
HOSTS_COVERAGE_CASES = tuple((spread, hosts, tau) for spread in (1.0, 3.0, 10.0) for hosts in (2, 3, 5)
                             for tau in (0.0, 0.005, 0.03))


def hosts_coverage_seed(hosts: int, tau: float, spread: float) -> int:
    """The seed of one case of hosts_coverage (the tests' and the report's)."""
    return hosts * 100 + int(tau * 1000) + (int(spread) if spread > 1 else 0)


def hosts_coverage_report(studies: int = 2000, out=print) -> pd.DataFrame:
    """hosts_coverage on every case of HOSTS_COVERAGE_CASES, `studies` sets each, and per noise the
    range of each interval's coverage and its mean distance from 95%.
    `python -m bench_src.analysis.simulate hosts-coverage [studies]`."""
    t0 = time.time()
    rows = [{"spread": spread, "hosts": hosts, "tau": tau,
             **hosts_coverage(studies, np.random.default_rng(hosts_coverage_seed(hosts, tau, spread)), hosts, tau,
                              precision_spread=spread)}
            for spread, hosts, tau in HOSTS_COVERAGE_CASES]
    table = pd.DataFrame(rows)
    out(f"# coverage of the 95% interval across hosts, {studies} sets per case, 10 pairs per host")
    out(table.to_markdown(index=False, floatfmt=".4f"))
    names = ("coverage", "spread_only", "hksj", "z")
    summary = pd.DataFrame([{"spread": spread, **{f"{n} range": f"{g[n].min():.1%}-{g[n].max():.1%}" for n in names},
                             **{f"{n} mean |c - 95%|": float((g[n] - 0.95).abs().mean()) for n in names}}
                            for spread, g in [*table.groupby("spread"), ("all", table)]])
    out(summary.to_markdown(index=False, floatfmt=".4f"))
    out(f"# {time.time() - t0:.0f} s")
    return table


def hosts_heterogeneity_null(studies: int, rng, hosts: int, pairs: int = 10, cv: float = 0.01,
                             shape: str = "normal") -> dict:
    """What hosts.heterogeneity reads off hosts without any heterogeneity (every host's true log
    ratio the same), each measured by `pairs` per-block log ratios with lognormal noise of `cv` per
    sample, the hosts' noise alike (`*_alike`) or one in two hosts' three times the others' (`*_unlike`):
    `i2_half` the share of sets with I^2 >= 50% (beside `i2_half_chi2`, what hosts.i2_by_chance gives
    with each host's variance known), `q_rejects` the share whose Q p-value (chi^2 on hosts - 1
    degrees of freedom, each host's variance taken as known) is below 5%, `welch_rejects` the
    share whose Welch test p-value (the test of homogeneity shown) is below 5% (nominal rate of both: 5%).
    `shape`: "normal" per-block log ratios (lognormal samples), or each sample's noise drawn by
    `noise` ("heavy", "bimodal"), the log ratio the difference of the two samples' logs."""
    out = {"shape": shape, "hosts": hosts, "pairs": pairs, "i2_half_chi2": hosts_module.i2_by_chance(hosts)}
    scale = {"alike": np.ones((hosts, 1)), "unlike": np.where(np.arange(hosts) % 2 == 1, 3.0, 1.0)[:, None]}
    for name, s in scale.items():
        big = q_rejects = welch_rejects = 0
        for _ in range(studies):
            if shape == "normal":
                d = 0.05 + cv * math.sqrt(2) * s * rng.standard_normal((hosts, pairs))
            else:
                both = np.log(noise(rng, shape, (2, hosts, pairs), cv))
                d = 0.05 + s * (both[0] - both[1])
            het = hosts_module.heterogeneity(d.mean(axis=1), d.var(axis=1, ddof=1) / pairs, np.full(hosts, pairs))
            big += het.i2 >= 0.5
            q_rejects += sps.chi2.sf(het.q, hosts - 1) < 0.05
            welch_rejects += het.welch_p < 0.05
        out.update({f"i2_half_{name}": big / studies, f"q_rejects_{name}": q_rejects / studies,
                    f"welch_rejects_{name}": welch_rejects / studies})
    return out


def hosts_heterogeneity_report(studies: int = 4000, seed: int = 1, out=print) -> pd.DataFrame:
    """hosts_heterogeneity_null at 2, 3 and 5 hosts of 6, 10 and 30 pairs, `studies` sets each,
    seeded by (seed, hosts, pairs) for normal per-block log ratios and (seed, hosts, pairs, 1 or 2)
    for heavy-tailed and bimodal samples.  `python -m bench_src.analysis.simulate hosts-heterogeneity [studies]`."""
    seeds = {"normal": (), "heavy": (1,), "bimodal": (2,)}
    table = pd.DataFrame([hosts_heterogeneity_null(studies, np.random.default_rng([seed, hosts, pairs, *extra]), hosts,
                                                   pairs, shape=shape)
                          for shape, extra in seeds.items() for hosts in (2, 3, 5) for pairs in (6, 10, 30)])
    out(f"# tau², I² and Q of hosts without heterogeneity, CV 1%, {studies} sets per case, seed {seed}")
    out(table.to_markdown(index=False, floatfmt=".4f"))
    return table


def hosts_effect_sd(shape: str, cv: float) -> float:
    """The standard deviation of one per-block log ratio of `hosts_prediction`'s hosts at noise `cv`:
    cv sqrt(2) for normal and heavy-tailed samples (noise's t on 3 df is scaled to variance 1), and
    for bimodal ones each sample's log also carries its mode, log(1 + BIMODAL_GAP) half the time."""
    if shape == "bimodal":
        return math.sqrt(2 * (cv ** 2 + 0.25 * math.log1p(BIMODAL_GAP) ** 2))
    return cv * math.sqrt(2)


def hts_prediction(effects, variances, tau2, weighted: bool, level: float = 1 - rules.CONFIDENCE):
    """Higgins, Thompson and Spiegelhalter's prediction interval (2009, J R Stat Soc A 172:137), measured
    beside hosts.prediction_half_width and not taken: the mean ± t(k - 2) sqrt(tau^2 + SE(mean)^2),
    per row; `weighted`: the random-effects weighted mean (w = 1 / (v + tau^2), SE^2 = 1 / sum w), else
    the plain mean with the model's SE^2 = sum (v + tau^2) / k^2.  (centre, half-width); NaN below 3 hosts."""
    k = effects.shape[-1]
    crit = sps.t.isf(level / 2, k - 2) if k > 2 else math.nan
    if weighted:
        w = 1.0 / (variances + tau2[..., None])
        return (w * effects).sum(-1) / w.sum(-1), crit * np.sqrt(tau2 + 1.0 / w.sum(-1))
    return effects.mean(-1), crit * np.sqrt(tau2 + (variances + tau2[..., None]).sum(-1) / k ** 2)


def paule_mandel(effects, variances) -> np.ndarray:
    """hosts.heterogeneity's tau^2 (Paule and Mandel's), per row, by bisection on Cochran's
    generalised Q (hosts.tau2_q): the t >= 0 at which Q(t) = k - 1, 0 where Q(0) <= k - 1."""
    k = effects.shape[-1]
    low = np.zeros(effects.shape[:-1])
    high = 2 * ((effects - effects.mean(-1, keepdims=True)) ** 2).sum(-1) / (k - 1) + 1e-300
    for _ in range(80):
        mid = (low + high) / 2
        above = hosts_module.tau2_q(effects, variances, mid) > k - 1
        low, high = np.where(above, mid, low), np.where(above, high, mid)
    return np.where(hosts_module.tau2_q(effects, variances, np.zeros_like(low)) <= k - 1, 0.0, (low + high) / 2)


def hosts_prediction(studies: int, rng, hosts: int, pairs: int, tau_se: float, noise_shape: str = "normal",
                     unlike: bool = False, cv: float = 0.01, draws: int = 400, batch: int = 250) -> dict:
    """Coverage of what hosts.combine says about machines not measured, on `studies` sets of `hosts`
    hosts of `pairs` per-block log ratios each (normal, or each sample's noise drawn by `noise`:
    "heavy", "bimodal"), the hosts' noise alike or one in two hosts' three times the others'
    (`unlike`, as hosts_heterogeneity_null), each host's true log ratio the common one plus a normal
    host effect of sd tau = `tau_se` times the standard error of a quiet host's mean
    (hosts_effect_sd(shape, cv) / sqrt(pairs)).

    The truth of a prediction interval is a new host's true log ratio, drawn from the same
    population: `predict` the share of sets whose hosts.prediction_half_width interval (95%) holds
    it, `spread_only` its t interval on the hosts' spread alone, `hts_plain` and `hts_weighted`
    Higgins, Thompson and Spiegelhalter's (`hts_prediction`, not taken), `predict_estimate` how often
    the interval holds the new host's *estimate* (its true value plus the mean of `pairs` per-block
    noises of a host's level drawn at random); `predict_width` the median width in units of a quiet
    host's standard error, `width_over_spread` its median over the spread interval's.  The interval of
    tau^2: `tau2_boot` how often hosts.tau2_accepts (`draws` parametric bootstrap draws a set, the
    test hosts.tau2_interval inverts) accepts the true tau^2, `tau2_chi2` how often the Q-profile with
    each host's variance taken as known (Q(tau^2) between chi^2 quantiles on k - 1 degrees of
    freedom; Viechtbauer 2007) does.  Below 3 hosts the prediction is measured though not shown
    (hosts.PREDICTION_MIN_HOSTS), and Higgins et al.'s is NaN."""
    scale = np.where(np.arange(hosts) % 2 == 1, 3.0, 1.0) if unlike else np.ones(hosts)
    se = hosts_effect_sd(noise_shape, cv) / math.sqrt(pairs)
    tau, mu = tau_se * se, 0.05

    def per_block(size):
        if noise_shape == "normal":
            return cv * math.sqrt(2) * rng.standard_normal(size)
        both = np.log(noise(rng, noise_shape, (2, *size), cv))
        return both[0] - both[1]

    hits = {k: 0 for k in ("predict", "spread_only", "hts_plain", "hts_weighted", "predict_estimate", "tau2_boot",
                           "tau2_chi2")}
    widths, spreads = [], []
    chi2 = sps.chi2.ppf([0.025, 0.975], hosts - 1)
    n = np.full(hosts, pairs)
    for start in range(0, studies, batch):
        s = min(batch, studies - start)
        d = (mu + tau * rng.standard_normal((s, hosts)))[..., None] + scale[:, None] * per_block((s, hosts, pairs))
        y, v = d.mean(-1), d.var(-1, ddof=1) / pairs
        new = mu + tau * rng.standard_normal(s)
        new_estimate = new + scale[rng.integers(0, hosts, s)] * per_block((s, pairs)).mean(-1)
        tau2 = paule_mandel(y, v)
        half = hosts_module.prediction_half_width(y, v, tau2, 0.05, min_hosts=2)
        spread = sps.t.isf(0.025, hosts - 1) * y.std(-1, ddof=1) * math.sqrt(1 + 1 / hosts)
        centre = y.mean(-1)
        hits["predict"] += int((abs(new - centre) <= half).sum())
        hits["predict_estimate"] += int((abs(new_estimate - centre) <= half).sum())
        hits["spread_only"] += int((abs(new - centre) <= spread).sum())
        for name, weighted in (("hts_plain", False), ("hts_weighted", True)):
            c, h = hts_prediction(y, v, tau2, weighted)
            hits[name] += int((abs(new - c) <= h).sum())
        widths.append(2 * half / se)
        spreads.append(2 * spread / se)
        z, chi = hosts_module.tau2_draws(rng, n, draws, (s,))
        hits["tau2_boot"] += int(hosts_module.tau2_accepts(y, v, np.full(s, tau ** 2), z, chi, 0.05).sum())
        q = hosts_module.tau2_q(y, v, np.full(s, tau ** 2))
        hits["tau2_chi2"] += int(((q <= chi2[1]) & ((q >= chi2[0]) | (tau == 0))).sum())
    out = {k: v / studies for k, v in hits.items()}
    if hosts < 3:
        out["hts_plain"] = out["hts_weighted"] = math.nan
    widths, spreads = np.concatenate(widths), np.concatenate(spreads)
    return {"shape": noise_shape, "hosts": hosts, "pairs": pairs, "noise": "unlike" if unlike else "alike",
            "tau_se": tau_se, **out, "predict_width": float(np.median(widths)),
            "width_over_spread": float(np.median(widths) / np.median(spreads)), "sets": studies}


# The cases of hosts_prediction that docs/statistics.md tabulates (seeded as hosts_prediction_report
# seeds them): shape, hosts, pairs, the hosts' noise unlike, tau in units of a quiet host's standard error
HOSTS_PREDICTION_CASES = tuple((shape, hosts, pairs, unlike, tau_se) for shape in ("normal", *SHAPES[1:])
                               for hosts in (2, 3, 5) for pairs in (6, 10, 30) for unlike in (False, True)
                               for tau_se in (0.0, 0.5, 1.0, 3.0))


def hosts_prediction_seed(shape: str, hosts: int, pairs: int, unlike: bool, tau_se: float, seed: int = 1) -> list[int]:
    """The seed of one case of hosts_prediction (the tests' and the report's)."""
    return [seed, ("normal", *SHAPES[1:]).index(shape), hosts, pairs, int(unlike), int(tau_se * 10)]


def hosts_prediction_report(studies: int = 4000, seed: int = 1, out=print, cases=HOSTS_PREDICTION_CASES,
                            interval_sets: int = 600) -> pd.DataFrame:
    """hosts_prediction on every case of HOSTS_PREDICTION_CASES, `studies` sets each (seeded by
    hosts_prediction_seed), with the Monte Carlo standard error of a coverage near 95%, and per
    number of hosts the range of each coverage; then hosts.tau2_interval itself on `interval_sets`
    sets of each of HOSTS_TAU2_INTERVAL_CASES (hosts_tau2_interval_report; 0: not).
    `python -m bench_src.analysis.simulate hosts-prediction [studies]`."""
    t0 = time.time()
    table = pd.DataFrame([hosts_prediction(studies, np.random.default_rng(hosts_prediction_seed(*case, seed=seed)),
                                           case[1], case[2], case[4], case[0], case[3]) for case in cases])
    out(f"# a new host's log ratio and tau², 95% intervals, CV 1%, {studies} sets per case, seed {seed} "
        f"(standard error of a coverage of 95%: {math.sqrt(0.95 * 0.05 / studies):.2%})")
    out(table.to_markdown(index=False, floatfmt=".4f"))
    names = ("predict", "spread_only", "hts_plain", "hts_weighted", "predict_estimate", "tau2_boot", "tau2_chi2")
    out(pd.DataFrame([{"hosts": hosts, **{n: f"{g[n].min():.1%}-{g[n].max():.1%}" for n in names}}
                      for hosts, g in table.groupby("hosts")]).to_markdown(index=False))
    out(f"# {time.time() - t0:.0f} s")
    if interval_sets:
        hosts_tau2_interval_report(interval_sets, seed, out)
    return table


def hosts_tau2_interval_coverage(sets: int, rng, hosts: int, pairs: int, tau_se: float, noise_shape: str = "normal",
                                 unlike: bool = False, cv: float = 0.01) -> dict:
    """hosts.tau2_interval itself (its 10,000 draws, its bisection) on `sets` sets drawn as
    hosts_prediction draws them (each set's draws seeded by its index): `coverage` how often it holds
    the true tau^2, `tau_high` the median of its upper end's square root in units of a quiet host's
    standard error (how far machines may differ, as the interval reads it)."""
    scale = np.where(np.arange(hosts) % 2 == 1, 3.0, 1.0) if unlike else np.ones(hosts)
    se = hosts_effect_sd(noise_shape, cv) / math.sqrt(pairs)
    tau = tau_se * se
    hits, highs = 0, []
    for i in range(sets):
        if noise_shape == "normal":
            e = cv * math.sqrt(2) * rng.standard_normal((hosts, pairs))
        else:
            both = np.log(noise(rng, noise_shape, (2, hosts, pairs), cv))
            e = both[0] - both[1]
        d = (0.05 + tau * rng.standard_normal(hosts))[:, None] + scale[:, None] * e
        low, high = hosts_module.tau2_interval(d.mean(axis=1), d.var(axis=1, ddof=1) / pairs, np.full(hosts, pairs),
                                               seed=i)
        hits += low <= tau ** 2 <= high
        highs.append(math.sqrt(high) / se)
    p = hits / sets
    return {"shape": noise_shape, "hosts": hosts, "pairs": pairs, "noise": "unlike" if unlike else "alike",
            "tau_se": tau_se, "coverage": p, "se": math.sqrt(p * (1 - p) / sets), "tau_high": float(np.median(highs)),
            "sets": sets}


# The cases of hosts_tau2_interval_coverage that docs/statistics.md reports: the lowest of
# hosts_prediction's bootstrap test, and 10 pairs with the noise alike at 2, 3 and 5 hosts
HOSTS_TAU2_INTERVAL_CASES = (("normal", 2, 6, True, 1.0), ("normal", 5, 6, True, 0.5), ("bimodal", 5, 6, False, 1.0),
                             ("normal", 2, 10, False, 1.0), ("normal", 3, 10, False, 1.0), ("normal", 5, 10, False, 1.0),
                             ("normal", 5, 10, False, 3.0), ("normal", 5, 30, False, 0.0))


def hosts_tau2_interval_report(sets: int = 600, seed: int = 1, out=print) -> pd.DataFrame:
    """hosts_tau2_interval_coverage on every case of HOSTS_TAU2_INTERVAL_CASES, `sets` sets each,
    seeded by hosts_prediction_seed's list with 2 after it."""
    table = pd.DataFrame([hosts_tau2_interval_coverage(sets, np.random.default_rng([*hosts_prediction_seed(*case,
                                                                                                             seed=seed), 2]),
                                                       case[1], case[2], case[4], case[0], case[3])
                          for case in HOSTS_TAU2_INTERVAL_CASES])
    out(f"# hosts.tau2_interval itself, {sets} sets per case, seed {seed}")
    out(table.to_markdown(index=False, floatfmt=".4f"))
    return table


def hosts_grid_coverage(studies: int, rng, hosts: int, tau_pages: float, sd_pages: float, pairs: int = 10,
                        rust_pages: float = 2560.0, go_extra: float = 0.6) -> dict:
    """Coverage of hosts.across_hosts' combination where peak RSS sits on the page grid: Rust's true
    peak `rust_pages` pages plus a uniform place within a page, Go's `go_extra` pages more, each
    host moving Go's by a normal host effect of sd `tau_pages` pages; every sample is its true
    value plus normal noise of sd `sd_pages` pages, rounded to a page, in `pairs` blocks per host.
    Each host's estimate, variance and rounding are read as `hosts.host_log_ratios` reads them
    (paired.rounding with the metric's resolution).  `zero_width`: the share of intervals of width
    0; `called`: the share whose interval excludes 0 (the truth is above 0: a call is right)."""
    page = rules.resolution("peak_rss_mib")
    hit = zero = called = 0
    for _ in range(studies):
        base = rust_pages + rng.uniform(0, 1)
        truth = math.log((base + go_extra) / base)
        go_true = base + go_extra + tau_pages * rng.standard_normal((hosts, 1))
        a = np.round(go_true + sd_pages * rng.standard_normal((hosts, pairs))) * page
        b = np.round(base + sd_pages * rng.standard_normal((hosts, pairs))) * page
        d = np.log(a) - np.log(b)
        grid = paired.rounding(paired.grid_step(a, b, page), a, b)
        c = hosts_module.combine(d.mean(axis=1), d.var(axis=1, ddof=1) / pairs, rounding=grid)
        hit += c.low <= truth <= c.high
        zero += c.high == c.low
        called += c.low > 0 or c.high < 0
    return {"coverage": hit / studies, "zero_width": zero / studies, "called": called / studies}


def hosts_sequential_frame(plan, go_over_rust: Mapping[int, float], hosts: int, rng, cond: Conditions,
                           tau: float = 0.0) -> pd.DataFrame:
    """Samples of `hosts` hosts, each a sequential run of its own (sequential_run) of `plan`'s
    Go-vs-Rust comparisons, a `host` column naming it: on each host Go's true median over Rust's (= 1)
    is go_over_rust[N] times a host effect, lognormal of sd `tau` per host and N."""
    frames = []
    for h in range(hosts):
        effect = {n: r * math.exp(tau * rng.standard_normal()) for n, r in go_over_rust.items()}
        centres = {c.id: (effect[c.n] if c.lang == "go" else 1.0) for c in plan.cells()}
        frames.append(sequential_run(plan, centres, rng, cond).assign(host=f"host{h}", host_label=f"host{h}"))
    return sequential.attach(pd.concat(frames, ignore_index=True), plan)


def hosts_sequential_study(sets: int, rng, go_over_rust: Mapping[int, float], hosts: int, cond: Conditions,
                           tau: float = 0.0, plan=None) -> dict:
    """The family across hosts (hosts.across_hosts, the hosts table's own code) on `sets` sets of
    hosts_sequential_frame: `false_sets` and `fwer` the sets with a false call (a difference where
    the common truth is 1, or the wrong direction), `error` the false discovery rate (the mean over
    sets of false calls / calls), `coverage` of the shown intervals (at the family's level) of the
    common truth, `called` the share of true differences called in their direction, and how far the
    hosts' pair counts of one comparison differ (`pairs_spread_median`, `pairs_spread_max`: the
    largest less the smallest)."""
    plan = plan or sequential_plan(samples=6, max_samples=20, looks=3)
    false_sets, shares, hits, total, called, real, spreads = 0, [], 0, 0, 0, 0, []
    for _ in range(sets):
        df = hosts_sequential_frame(plan, go_over_rust, hosts, rng, cond, tau)
        t = hosts_module.across_hosts(df)
        truth = t["n"].map(go_over_rust)
        kind = t["verdict_kind"]
        calls = kind.isin(["a", "b"])
        false = calls & ((truth == 1.0) | ((kind == "a") & (truth > 1)) | ((kind == "b") & (truth < 1)))
        false_sets += bool(false.any())
        shares.append(false.sum() / calls.sum() if calls.any() else 0.0)
        hits += int(((t["ratio_ci_low"] <= truth) & (truth <= t["ratio_ci_high"])).sum())
        total += len(t)
        real += int((truth != 1.0).sum())
        called += int((calls & ~false & (truth != 1.0)).sum())
        pairs = hosts_module.host_log_ratios(df).groupby("n")["pairs"]
        spreads.extend(pairs.max() - pairs.min())
    return {"sets": sets, "false_sets": false_sets, "fwer": false_sets / sets, "error": float(np.mean(shares)),
            "error_se": float(np.std(shares, ddof=1) / math.sqrt(sets)), "coverage": hits / total,
            "called": called / real if real else math.nan, "pairs_spread_median": float(np.median(spreads)),
            "pairs_spread_max": int(max(spreads))}


# The cases of the hosts' family under the sequential rule (docs/statistics.md, "Several hosts"):
# pilot 6, looks at 6/11/20, CV 2%, drift +10%; every ratio 1 and the hosts alike, or the sequential
# study's mixed ratios with host effects of sd 0.005.
HOSTS_SEQUENTIAL_CASES = {
    "all equal, hosts alike": (dict.fromkeys(SEQUENTIAL_NS, 1.0), 0.0),
    "mixed, host effects 0.005": (MIXED, 0.005),
}


def hosts_sequential_report(sets: int = 300, seed: int = 1, out=print, host_counts=(2, 3),
                            cases=tuple(HOSTS_SEQUENTIAL_CASES)) -> pd.DataFrame:
    """hosts_sequential_study on every case of HOSTS_SEQUENTIAL_CASES at 2 and 3 hosts, `sets` sets
    each, each case seeded by (seed, its place, hosts) (so a case run alone repeats its rows).
    `python -m bench_src.analysis.simulate hosts-sequential [sets]`."""
    rows = []
    t0 = time.time()
    cond = Conditions(cv=0.02, drift=0.1)
    for i, (label, (truth, tau)) in enumerate(HOSTS_SEQUENTIAL_CASES.items()):
        for hosts in (host_counts if label in cases else ()):
            rng = np.random.default_rng([seed, i, hosts])
            rows.append({"case": label, "hosts": hosts,
                         **hosts_sequential_study(sets, rng, truth, hosts, cond, tau)})
    table = pd.DataFrame(rows)
    out(f"# the hosts' family under the sequential rule (pilot 6, looks at 6/11/20, CV 2%, drift +10%), seed {seed}")
    out(table.to_markdown(index=False, floatfmt=".4f"))
    out(f"# {time.time() - t0:.0f} s")
    return table


# --- cores under the sequential rule --------------------------------------------------------------
CORES_NS = (10, 20, 30, 40, 50, 60)
# (Go, Rust) true time at 2 cores over 1 core, per N (every time 1 at 1 core): nothing changes, or 5 of
# the 12 cells gain from the cores (x1/1.4) and with them 3 of the 6 Go/Rust ratios change
CORES_NONE = dict.fromkeys(CORES_NS, (1.0, 1.0))
CORES_MIXED = dict(zip(CORES_NS, [(1 / 1.4, 1 / 1.4), (1.0, 1 / 1.4), (1 / 1.4, 1.0), (1 / 1.4, 1.0),
                                  (1.0, 1.0), (1.0, 1.0)]))


def cores_plan(samples: int = 6, max_samples: int = 20, looks: int = 3):
    """A plan of the sleep workload at 6 N, every cell at 1 and 2 cores, under the sequential rule."""
    return make_plan("quick", workloads=["sleep"], ns=list(CORES_NS), params={"sleep": {"work": 10}},
                     cores=[1, 2], block_order=SIM_BLOCK_ORDER, samples=samples, max_samples=max_samples,
                     looks=looks, warmup=0)


def _false_calls(kind: pd.Series, truth: pd.Series, above: str, below: str) -> tuple[int, int]:
    """Calls and false calls (the truth 1, or on the other side of 1) of a table whose kind `above`
    says the value is above 1 and `below` below it."""
    calls = kind.isin([above, below])
    false = calls & ((truth == 1.0) | ((kind == above) & (truth < 1)) | ((kind == below) & (truth > 1)))
    return int(calls.sum()), int(false.sum())


def cores_study(runs: int, rng, times: Mapping[int, tuple[float, float]], cond: Conditions, plan=None) -> dict:
    """Runs of the sequential rule on cores_plan (sequential_run), read by the cores tables' own code
    (cores.ratio_vs_cores, cores.speedup): for the changes of the Go/Rust ratio from 1 to 2 cores
    and for the speed-ups, the false discovery rate (mean over runs of false calls / calls; a call
    false where the truth is 1 or on the other side), its standard error, and the coverage of the
    shown intervals; the pairs each change and speed-up had (`pairs`: their largest over every
    run), and the mean samples a run took beyond the pilot (`extra_samples`)."""
    from . import cores as cores_module

    plan = plan or cores_plan()
    centres = {c.id: (times[c.n][0 if c.lang == "go" else 1] if c.cores == 2 else 1.0) for c in plan.cells()}
    pilot = len(plan.cells()) * plan.samples
    got = {"change": ([], 0, 0), "speedup": ([], 0, 0)}
    pairs, extra = 0, []
    for _ in range(runs):
        df = sequential.attach(sequential_run(plan, centres, rng, cond), plan)
        extra.append(len(df) - pilot)
        r = cores_module.ratio_vs_cores(df)
        r = r[r["cores"] == 2]
        change_truth = r["n"].map(lambda n: times[n][0] / times[n][1])
        s = cores_module.speedup(df)
        speed_truth = [1 / times[n][0 if lang == "go" else 1] for n, lang in zip(s["n"], s["lang"])]
        for what, kind, low, high, truth, above, below, n_pairs in (
                ("change", r["change_kind"], r["change_ci_low"], r["change_ci_high"], change_truth, "higher", "lower",
                 r["change_pairs"]),
                ("speedup", s["verdict_kind"], s["speedup_ci_low"], s["speedup_ci_high"],
                 pd.Series(speed_truth, index=s.index), "less with more cores", "more with more cores", s["pairs"])):
            shares, hits, total = got[what]
            calls, false = _false_calls(kind, truth, above, below)
            shares.append(false / calls if calls else 0.0)
            got[what] = (shares, hits + int(((low <= truth) & (truth <= high)).sum()), total + len(truth))
            pairs = max(pairs, int(n_pairs.max()))
    out = {"runs": runs, "extra_samples": float(np.mean(extra)), "pairs": pairs}
    for what, (shares, hits, total) in got.items():
        out[f"{what}_error"] = float(np.mean(shares))
        out[f"{what}_error_se"] = float(np.std(shares, ddof=1) / math.sqrt(runs))
        out[f"{what}_coverage"] = hits / total
    return out


# The cases of the cores study (docs/statistics.md, "Cores"): pilot 6, looks at 6/11/20, drift +10%.
CORES_CASES = {
    "nothing changes, CV 2%": (CORES_NONE, Conditions(cv=0.02, drift=0.1)),
    "mixed, CV 1%": (CORES_MIXED, Conditions(cv=0.01, drift=0.1)),
    "mixed, CV 3%": (CORES_MIXED, Conditions(cv=0.03, drift=0.1)),
}


def cores_report(runs: int = 300, seed: int = 1, out=print, cases=tuple(CORES_CASES)) -> pd.DataFrame:
    """cores_study on every case of CORES_CASES, `runs` runs each, each case seeded by (seed, its
    place) (so a case run alone repeats its row).  `python -m bench_src.analysis.simulate cores [runs]`."""
    t0 = time.time()
    rows = [{"case": label, **cores_study(runs, np.random.default_rng([seed, i]), times, cond)}
            for i, (label, (times, cond)) in enumerate(CORES_CASES.items()) if label in cases]
    table = pd.DataFrame(rows)
    out(f"# changes of the Go/Rust ratio and speed-ups, 1 to 2 cores, under the sequential rule (seed {seed})")
    out(table.to_markdown(index=False, floatfmt=".4f"))
    out(f"# {time.time() - t0:.0f} s")
    return table


# --- ratios of amounts above a baseline (memory.above_baseline) ----------------------------------
# Peak RSS shaped like an article run's: each language's baseline (its idle_tasks program at N = 1)
# at a few MiB with the spread its samples had (sample sd 93 KiB for Go, 75 KiB for Rust), a work
# cell that amount above it with that spread and 5% of the amount more, a block effect shared by
# the four cells of a block, and every value rounded to a 4 KiB page.
ABOVE_LEVEL_MIB = {"go": 3.3, "rust": 2.1}
ABOVE_SD_MIB = {"go": 93 / 1024, "rust": 75 / 1024}
ABOVE_WORK_CV = 0.05
ABOVE_BLOCK_SD = 0.5  # the block effect's sd, in baseline sds


def memory_noise(rng: np.random.Generator, shape: str, size) -> np.ndarray:
    """Additive noise of mean 0 and sd 1, shaped as peak RSS can be: "lognormal" (a lognormal of
    log-sd 1 less its mean: skewed to the right, an occasional peak far up), "heavy" (Student's t
    with 3 degrees of freedom), "bimodal" (two equal normal modes 4.1 of their sd apart: a peak
    that either takes one more arena or not)."""
    if shape == "lognormal":
        return (np.exp(rng.standard_normal(size)) - math.exp(0.5)) / math.sqrt((math.e - 1) * math.e)
    if shape == "heavy":
        return rng.standard_t(3, size) / math.sqrt(3)
    if shape == "bimodal":
        return np.where(rng.random(size) < 0.5, -0.9, 0.9) + math.sqrt(1 - 0.81) * rng.standard_normal(size)
    raise ValueError(f"unknown shape {shape!r}; allowed: {', '.join(SHAPES)}")


def above_baseline_values(rng: np.random.Generator, shape: str, reps: int, blocks: int, k_go: float,
                          k_rust: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per language, (work cell, baseline) values of `reps` runs of `blocks` blocks (arrays reps x
    blocks, MiB, on the page grid), the work cell k (k_go, k_rust) of its baseline's sds above it."""
    page = rules.resolution("peak_rss_mib")
    shared = ABOVE_BLOCK_SD * rng.standard_normal((reps, blocks))
    out = {}
    for lang, k in (("go", k_go), ("rust", k_rust)):
        sd = ABOVE_SD_MIB[lang]
        amount = k * sd
        level = ABOVE_LEVEL_MIB[lang] + page * rng.random((reps, 1))  # its place between pages
        base = level + sd * (shared + memory_noise(rng, shape, (reps, blocks)))
        work = level + amount + sd * shared + math.hypot(sd, ABOVE_WORK_CV * amount) * memory_noise(
            rng, shape, (reps, blocks))
        out[lang] = (np.round(work / page) * page, np.round(base / page) * page)
    return out


def _median_bootstrap(rng, go, go_base, rust, rust_base, resamples: int = 1000, level: float = 1 - rules.CONFIDENCE):
    """The construction not taken: a block bootstrap of the ratio of the median amounts (median
    work less median baseline), its percentile interval, unbounded where more than level / 2 of
    the resampled Rust amounts are <= 0.  Arrays reps x blocks; returns (low, high) per run."""
    reps, n = go.shape
    idx = rng.integers(0, n, (resamples, n))

    def med(a):
        return np.median(a[:, idx], axis=2)  # reps x resamples

    x, y = med(go) - med(go_base), med(rust) - med(rust_base)
    unbounded = (y <= 0).mean(axis=1) > level / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(y > 0, x / y, np.inf)
        low, high = np.quantile(r, level / 2, axis=1), np.quantile(r, 1 - level / 2, axis=1)
    return np.where(unbounded, -np.inf, low), np.where(unbounded, np.inf, high)


def above_baseline_coverage(reps: int, rng: np.random.Generator, shape: str, blocks: int, k_go: float,
                            k_rust: float, bootstrap: bool = True) -> dict:
    """The ratio of amounts above baseline (memory.amounts_ratio, the table's own code) on `reps`
    simulated runs: how often its 95% confidence set holds the true ratio of the mean amounts
    (`coverage`), how often the table would call it resolved (both amounts told from 0, and at
    least a page each), and how many of those resolved intervals miss the truth.  With `bootstrap`,
    the coverage of `_median_bootstrap` of the true ratio of the median amounts beside it."""
    v = above_baseline_values(rng, shape, reps, blocks, k_go, k_rust)
    (go, go_base), (rust, rust_base) = v["go"], v["rust"]
    truth = k_go * ABOVE_SD_MIB["go"] / (k_rust * ABOVE_SD_MIB["rust"])
    page = rules.resolution("peak_rss_mib")
    covered = resolved = missed = 0
    for i in range(reps):
        r = memory.amounts_ratio(go[i], go_base[i], rust[i], rust_base[i])
        inside = r.contains(truth)
        covered += inside
        shown = r.resolved and r.x >= page and r.y >= page
        resolved += shown
        missed += shown and not (r.low <= truth <= r.high)
    out = {"coverage": covered / reps, "resolved": resolved / reps,
           "resolved_missed": missed / resolved if resolved else float("nan")}
    if bootstrap:
        eps = memory_noise(np.random.default_rng(0), shape, 2_000_000)
        centre = float(np.median(eps))

        def median_amount(lang, k):  # the median of the work cell less the baseline's
            sd = ABOVE_SD_MIB[lang]
            return k * sd + (math.hypot(sd, ABOVE_WORK_CV * k * sd) - sd) * centre

        m_truth = median_amount("go", k_go) / median_amount("rust", k_rust)
        low, high = _median_bootstrap(rng, go, go_base, rust, rust_base)
        out["median_bootstrap_coverage"] = float(((low <= m_truth) & (m_truth <= high)).mean())
    return out


ABOVE_MULTIPLES = (1, 3, 10, 100)


def above_baseline_study(reps: int = 300, seed: int = 1, out=print, bootstrap: bool = True, block_counts=(6, 20),
                         multiples=ABOVE_MULTIPLES) -> pd.DataFrame:
    """The coverage study of docs/statistics.md ("Ratios of amounts above a baseline"): every shape
    of `memory_noise`, `block_counts` blocks (6 and 20), each amount every one of `multiples` (1, 3,
    10 and 100) of its baseline's sds; `reps` runs per case, each case seeded by (seed, shape,
    blocks, the two multiples), so a smaller grid repeats a larger one's rows.
    `python -m bench_src.analysis.simulate above-baseline [reps]`."""
    rows = []
    t0 = time.time()
    for shape in SHAPES:
        for blocks in block_counts:
            for k_go in multiples:
                for k_rust in multiples:
                    rng = np.random.default_rng([seed, SHAPES.index(shape), blocks, k_go, k_rust])
                    rows.append({"shape": shape, "blocks": blocks, "go_sds": k_go, "rust_sds": k_rust,
                                 **above_baseline_coverage(reps, rng, shape, blocks, k_go, k_rust, bootstrap)})
    table = pd.DataFrame(rows)
    out(f"# ratio of amounts above baseline, {reps} runs per case (seed {seed})")
    out(table.to_markdown(index=False, floatfmt=".3f"))
    summary = table.groupby(["shape", "blocks"]).agg(
        coverage_low=("coverage", "min"), coverage_high=("coverage", "max"),
        resolved_missed_high=("resolved_missed", "max"),
        **({"bootstrap_low": ("median_bootstrap_coverage", "min"),
            "bootstrap_high": ("median_bootstrap_coverage", "max")} if bootstrap else {}))
    out(summary.to_markdown(floatfmt=".3f"))
    out(f"# {time.time() - t0:.0f} s")
    return table


# --- the study reported in docs/statistics.md ----------------------------------------------------
def median_coverage(shape: str, n: int, reps: int, rng, grid: float = 0.0) -> float:
    """Coverage of the median's interval (stats.median_ci) on `reps` samples of n values (CV 1%:
    bimodal samples fall into two narrow modes with the median in the empty gap between them); on
    a grid of relative step `grid`, the truth is the median of the rounded values."""
    values = noise(rng, shape, (reps, n), 0.01)
    truth = true_median(shape)
    if grid:
        values = np.round(values / grid) * grid
        truth = float(np.median(np.round(noise(rng, shape, 400_000, 0.01) / grid) * grid))
    hits = sum(lo <= truth <= hi for _, lo, hi in (stats.median_ci(v) for v in values))
    return hits / reps


def mde_power(shape: str, pairs: int, reps: int, rng, level: float = rules.ALPHA / 30, cv: float = 0.02,
              fresh: int = 400) -> dict:
    """What a row's mde promises, averaged over repetitions: `reps` samples of `pairs` per-block log
    differences (of two cells with noise of `shape` at `cv` each, no true difference), each read for its mde at `level` (one
    comparison, fixed design) as the tables read its power part (`compare._detectable_power`; the
    tables cap it further at the interval's farther end, a difference excluded already) and off the
    half-width alone; then `fresh` new samples shifted by that mde upward and as many downward, and the share
    whose interval at `level` excludes 0 (the lower of the two directions).  Returns the mean of
    those shares for both readings, and the share of samples whose interval was a hull below the
    signed-rank floor."""
    got = {"mde": [], "half_width": [], "hull": []}
    for _ in range(reps):
        d = np.log(noise(rng, shape, pairs, cv) / noise(rng, shape, pairs, cv))
        last = paired.Location.of(d, level)
        low, high = (float(x) for x in last.interval(level))
        half = float(multiplicity.detectable((high - low) / 2, level, str(last.test_at(level)),
                                             paired.t_dof(pairs), rules.POWER))
        got["hull"].append(bool(np.asarray(last.is_hull(level)).ravel()[0]))
        for key, mde in (("mde", compare._detectable_power(low, high, last, level)),
                         ("half_width", min(half, high - low))):
            shares = []
            for sign in (1.0, -1.0):
                shifted = np.log(noise(rng, shape, (fresh, pairs), cv) / noise(rng, shape, (fresh, pairs), cv)) + sign * mde
                lo, hi = paired.Location.of(shifted, level).interval(level)
                shares.append(float(np.mean(lo > 0) if sign > 0 else np.mean(hi < 0)))
            got[key].append(min(shares))
    return {k: float(np.mean(v)) for k, v in got.items()}


# --- the per-task cost and exponent --------------------------------------------------------------
# The grids of N of the scaling study, each with the fixed cost and the cost per task of its linear
# series: the sleep workload's (a fixed cost that dominates: 1 s and 100 us per task, so the largest
# N costs twice the smallest), idle tasks' (N = 1, 1,000 and 10,000 or 100,000, the same costs) and
# the grid 1e3..1e6 (2e6 fixed and 2,000 per task: the cost per task dominates from 1e4 on).
SCALING_GRIDS = {
    "sleep": ((10, 100, 1000, 10000), 1.0, 1e-4),
    "idle": ((1, 1000, 10000), 1.0, 1e-4),
    "idle to 100,000": ((1, 1000, 100000), 1.0, 1e-4),
    "1e3..1e6": ((1000, 10000, 100000, 1000000), 2e6, 2000.0),
}
POWER_LAW = (3e-6, 0.7)  # the exponent's series: 3e-6 N^0.7


def true_mean(shape: str, cv: float) -> float:
    """The mean of `noise` (a log-t has no mean: for "heavy", its bulk's to second order, exp(cv^2 / 2),
    which is the log-normal's)."""
    m = math.exp(cv * cv / 2)
    return m * (1 + BIMODAL_GAP / 2) if shape == "bimodal" else m


@dataclass(frozen=True)
class ScalingCase:
    """The series of one cell of the scaling study: the grid of N (SCALING_GRIDS), the blocks that
    hold each N (one number: every N in that many; several: N by N, each N in the first so many
    blocks, as a sequential run leaves a cell that stopped early), the noise (multiplicative of a
    shape and CV, or `additive`: the same absolute spread at every N, cv times the value at the
    middle N), a block effect shared by every N of a block (multiplicative, lognormal sd
    `block_sd`) and an effect shared by every sample of one N (`per_n_sd`: the cost is then not a
    line in N).

    Shaped like peak RSS or a coarse clock: `costs`, per series a fixed cost and a cost per task
    drawn uniformly from these two ranges (in place of the grid's); `sd`, additive normal noise of
    this sd in the values' units (beside the multiplicative noise of `cv`, which may be 0);
    `grid_step`, the values rounded to this step in the values' units (4096: bytes on 4 KiB pages);
    `metric`, the name the series' column takes (its resolution is the one per_task_cost reads:
    "peak_rss_bytes" for pages).

    Drift: every value of block b multiplied by 1 + drift_rise at the block's middle, (b + 1/2) /
    blocks of the run (`drift` and `drift_shape`, the decision rule's study's shapes: "steady",
    "warm-up", "shift")."""

    grid: str = "1e3..1e6"
    blocks: int | tuple[int, ...] = 10
    shape: str = "lognormal"
    cv: float = 0.05
    additive: bool = False
    block_sd: float = 0.0
    per_n_sd: float = 0.0
    costs: tuple[tuple[float, float], tuple[float, float]] | None = None
    sd: float = 0.0
    grid_step: float = 0.0
    metric: str = "linear"
    drift: float = 0.0
    drift_shape: str = "steady"

    def counts(self) -> np.ndarray:
        k = len(SCALING_GRIDS[self.grid][0])
        counts = np.broadcast_to(np.asarray(self.blocks, dtype=int), (k,))
        return counts

    def drift_factors(self) -> np.ndarray:
        """Each block's drift factor, 1 + drift_rise at the block's middle of the run."""
        nb = int(self.counts().max())
        cond = Conditions(drift=self.drift, drift_shape=self.drift_shape)
        return 1 + np.asarray(drift_rise(cond, (np.arange(nb) + 0.5) / nb), dtype=float)


def _linear_costs(series: int, rng: np.random.Generator, case: ScalingCase) -> tuple[np.ndarray, np.ndarray]:
    """Each series' fixed cost and cost per task (series x 1): the grid's, or drawn from `case.costs`."""
    _, fixed, per_task = SCALING_GRIDS[case.grid]
    if case.costs is None:
        return np.full((series, 1), fixed), np.full((series, 1), per_task)
    (f_lo, f_hi), (p_lo, p_hi) = case.costs
    return rng.uniform(f_lo, f_hi, (series, 1)), rng.uniform(p_lo, p_hi, (series, 1))


def scaling_frame(series: int, rng: np.random.Generator, case: ScalingCase) -> tuple[pd.DataFrame, dict]:
    """`series` series of `case` as a run's frame (idle_tasks, one series per value of `p_series`;
    `linear` (named `case.metric` in the frame): fixed + per task x N, `power`: POWER_LAW) and each
    series' mean value at each N over the blocks that hold every N (`linear_mean`, `power_mean`:
    per-N effects and drift included, series x N; before any rounding on `grid_step`) with the
    typical value's per-task cost (`typical_slope`) the construction used until the blocks
    replaced it reads off.  On a grid only the linear series is rounded (the power law's values
    are not on its scale)."""
    ns = SCALING_GRIDS[case.grid][0]
    x = np.asarray(ns, dtype=float)
    counts = case.counts()
    nb = int(counts.max())
    u = np.exp(case.per_n_sd * rng.standard_normal((series, x.size, 1)))
    g = np.exp(case.block_sd * rng.standard_normal((series, 1, nb)))
    f = noise(rng, case.shape, (series, x.size, nb), case.cv)
    fixed, per_task = _linear_costs(series, rng, case)
    extra = case.sd * rng.standard_normal((series, x.size, nb)) if case.sd else 0.0
    drift = case.drift_factors()
    c, b = POWER_LAW
    out = {}
    for name, mu in (("linear", fixed + per_task * x[None, :]), ("power", np.broadcast_to(c * x ** b, (series, x.size)))):
        mu = mu[:, :, None] * u
        if case.additive:
            values = mu * g + float(np.median(mu[..., 0])) * (f - 1)
            out[f"{name}_mean"] = mu[..., 0] * math.exp(case.block_sd ** 2 / 2)
        else:
            values = mu * g * f
            out[f"{name}_mean"] = mu[..., 0] * math.exp(case.block_sd ** 2 / 2) * true_mean(case.shape, case.cv)
        values = (values + extra) * drift
        out[f"{name}_mean"] = out[f"{name}_mean"] * drift[:int(counts.min())].mean()
        if case.grid_step and name == "linear":
            values = np.round(values / case.grid_step) * case.grid_step
        out[name] = values
    out["typical_slope"] = per_task[:, 0] * (1.0 if case.additive else true_median(case.shape))
    taken = np.arange(nb)[None, :] < counts[:, None]  # N by N: the blocks that hold it
    s_idx, n_idx, b_idx = np.nonzero(np.broadcast_to(taken, (series, x.size, nb)))
    df = pd.DataFrame({"workload": "idle_tasks", "lang": "go", "variant": "goroutine", "threads_requested": None,
                       "arm": "", "valid": True, "n": x[n_idx].astype(int), "alive_at_spawn": x[n_idx].astype(int),
                       "block": b_idx,
                       "p_series": s_idx.astype(str), case.metric: out["linear"][s_idx, n_idx, b_idx],
                       "power": out["power"][s_idx, n_idx, b_idx]})
    return df, out


def previous_per_task_fit(ns, typicals, theta: float, confidence: float = rules.CONFIDENCE) -> dict:
    """The construction this package used until the blocks replaced it, kept for the study: weighted
    least squares through the per-N typical values, weights 1 / fitted^(2 theta) (refitted once
    from a first fit weighted by the typical values), Student's t on (values of N - 2) degrees of
    freedom from the residuals (unweighted where a typical value is <= 0); the exponent by ordinary
    least squares of log typical value on log N, the same t.  Returns the two intervals."""
    x, y = np.asarray(ns, dtype=float), np.asarray(typicals, dtype=float)
    dof = x.size - 2
    q = float(sps.t.ppf(0.5 + confidence / 2, dof)) if dof > 0 else math.nan

    def line(xs, ys, w):
        sw = np.sqrt(w)
        design = np.column_stack([np.ones_like(xs), xs]) * sw[:, None]
        coef, *_ = np.linalg.lstsq(design, ys * sw, rcond=None)
        resid = ys * sw - design @ coef
        cov = float(resid @ resid) / max(dof, 1) * np.linalg.inv(design.T @ design)
        half = q * math.sqrt(cov[1, 1])
        return coef, (coef[1] - half, coef[1] + half)

    if not np.all(y > 0):  # unweighted, and no exponent
        return {"per_task": line(x, y, np.ones_like(x))[1], "exponent": (math.nan, math.nan)}
    coef, _ = line(x, y, 1 / y ** (2 * theta))
    fitted = coef[0] + coef[1] * x
    _, per_task = line(x, y, 1 / fitted ** (2 * theta) if np.all(fitted > 0) else 1 / y ** (2 * theta))
    _, exponent = line(np.log(x), np.log(y), np.ones_like(x))
    return {"per_task": per_task, "exponent": exponent}


def _typicals(df: pd.DataFrame, metric: str, series: int, ns) -> np.ndarray:
    """series x N: each series' typical value at each N over all its samples (scaling.typical)."""
    got = df.groupby(["p_series", "n"])[metric].agg(scaling.typical)
    return np.array([[got[(str(i), int(n))] for n in ns] for i in range(series)])


def scaling_coverage(series: int, rng: np.random.Generator, case: ScalingCase = ScalingCase(),
                     previous: bool = False) -> dict:
    """How often the per-task table's 95% intervals (scaling.per_task_cost, the table's own code)
    hold their truth over `series` series of `case`: `per_task`, the slope of the series' weighted
    line (its own weights) through its mean values at each N; `exponent`, the log-log slope through
    them (the power law's 0.7 where the cost is one; on a grid, `grid_step`, the linear series'
    own); `noise_power`, the median theta read off; `straightness`, the share of series whose
    straightness test has p < ALPHA (no correction: the rate a single row is flagged at);
    `zero_width`, the share of per-task intervals of width 0.  With `previous`,
    `previous_per_task` and `previous_exponent`: the coverage of the construction replaced
    (`previous_per_task_fit`) of the per-task cost of the typical value and of 0.7, on the same
    series (not under drift: `typical_slope` leaves the drift out).  Under additive noise the
    exponent is not scored."""
    df, truth = scaling_frame(series, rng, case)
    ns = np.asarray(SCALING_GRIDS[case.grid][0], dtype=float)
    keys = [f"series={i}" for i in range(series)]
    lin = scaling.per_task_cost(df, case.metric).set_index("params").loc[keys]
    typ = _typicals(df, case.metric, series, ns)
    slopes = np.array([scaling.line_coefficients(ns, scaling.line_weights(t, theta))[1] @ m
                       for t, theta, m in zip(typ, lin["noise_power"], truth["linear_mean"])])
    out = {"per_task": float(((lin["per_task_ci_low"] <= slopes) & (slopes <= lin["per_task_ci_high"])).mean()),
           "zero_width": float((lin["per_task_ci_high"] == lin["per_task_ci_low"]).mean()),
           "noise_power": float(lin["noise_power"].median()),
           "straightness": float((lin["lack_of_fit_p"] < rules.ALPHA).mean())}
    if not case.additive:
        series_of_exponent = "linear" if case.grid_step else "power"
        pw = lin if case.grid_step else scaling.per_task_cost(df, "power").set_index("params").loc[keys]
        b = scaling.line_coefficients(np.log(ns), np.ones_like(ns))[1] @ np.log(truth[f"{series_of_exponent}_mean"]).T
        out["exponent"] = float(((pw["exponent_ci_low"] <= b) & (b <= pw["exponent_ci_high"])).mean())
    if previous and not case.drift:  # its estimand, the typical value's cost, is not defined under drift here
        fits = [previous_per_task_fit(ns, t, theta) for t, theta in zip(typ, lin["noise_power"])]
        out["previous_per_task"] = float(np.mean([lo <= truth_slope <= hi for (lo, hi), truth_slope
                                                  in zip((f["per_task"] for f in fits), truth["typical_slope"])]))
        if not case.additive:
            fits = [previous_per_task_fit(ns, t, 1.0) for t in _typicals(df, "power", series, ns)]
            out["previous_exponent"] = float(np.mean([lo <= POWER_LAW[1] <= hi for lo, hi in (f["exponent"] for f in fits)]))
    return out


# The conditions of the scaling study (docs/statistics.md, "Per-task cost and exponent").
SCALING_CONDITIONS = {
    "log-normal CV 1%": {"cv": 0.01},
    "log-normal CV 5%": {"cv": 0.05},
    "heavy tails CV 5%": {"shape": "heavy", "cv": 0.05},
    "bimodal CV 1%": {"shape": "bimodal", "cv": 0.01},
    "additive CV 5%": {"cv": 0.05, "additive": True},
    "CV 2%, block effect 2%": {"cv": 0.02, "block_sd": 0.02},
    "CV 2%, block effect 5%": {"cv": 0.02, "block_sd": 0.05},
    "additive CV 2%, block effect 5%": {"cv": 0.02, "additive": True, "block_sd": 0.05},
    "CV 2%, per-N effect 5%": {"cv": 0.02, "per_n_sd": 0.05},
    # appended, so that every cell above keeps its seed (scaling_study seeds a cell by its place here)
    "heavy tails CV 1%": {"shape": "heavy", "cv": 0.01},
    "bimodal CV 5%": {"shape": "bimodal", "cv": 0.05},
    "CV 1%, drift +10% steady": {"cv": 0.01, "drift": 0.1},
    "CV 1%, drift +10% warm-up": {"cv": 0.01, "drift": 0.1, "drift_shape": "warm-up"},
    "CV 1%, drift +10% shift": {"cv": 0.01, "drift": 0.1, "drift_shape": "shift"},
}
SCALING_BLOCKS = (6, 10, 40, "unequal")  # "unequal": every N in 40 blocks but the largest, in 6


def scaling_report(table: pd.DataFrame, series: int, seed: int = 1, out=print) -> None:
    """scaling_study's table for reading: per noise and blocks, each grid's coverage (%) of the
    per-task and exponent intervals, the construction replaced in brackets; and how often a series
    was flagged as not straight."""
    out(f"# per-task cost and exponent, {series} series per cell (seed {seed}): 95% intervals' coverage, "
        "blocks (previous construction)")
    for what, old in (("per_task", "previous_per_task"), ("exponent", "previous_exponent")):
        shown = table.assign(cell=[("" if pd.isna(r.get(what)) else _pct(r[what]) + (
            f" ({_pct(r[old])})" if pd.notna(r.get(old)) else "")) for _, r in table.iterrows()])
        out(f"\n## {what} (%)\n")
        out(shown.pivot_table(index=["noise", "blocks"], columns="grid", values="cell", aggfunc="first", sort=False)
                 .reset_index().to_markdown(index=False))
    flagged = table.groupby("noise", sort=False)["straightness"]
    out("\nstraightness flagged (p < alpha, per series), by noise: " + ", ".join(
        f"{k} {_pct(lo)}-{_pct(hi)}%" for (k, lo), hi in zip(flagged.min().items(), flagged.max())))


def scaling_study(series: int = 2000, seed: int = 1, out=print, grids=tuple(SCALING_GRIDS),
                  conditions=tuple(SCALING_CONDITIONS), blocks=SCALING_BLOCKS) -> pd.DataFrame:
    """The scaling study of docs/statistics.md: `series` series per cell of grid x blocks x
    condition, each cell seeded by its place in the three lists, scored by scaling_coverage with the
    construction replaced beside it.  `python -m bench_src.analysis.simulate scaling [series] [condition ...]`
    (the conditions by their labels in SCALING_CONDITIONS; all of them by default)."""
    rows = []
    t0 = time.time()
    for g in grids:
        k = len(SCALING_GRIDS[g][0])
        for b in blocks:
            counts = (40,) * (k - 1) + (6,) if b == "unequal" else b
            for label in conditions:
                rng = np.random.default_rng([seed, list(SCALING_GRIDS).index(g), list(SCALING_BLOCKS).index(b),
                                             list(SCALING_CONDITIONS).index(label)])
                case = ScalingCase(grid=g, blocks=counts, **SCALING_CONDITIONS[label])
                rows.append({"grid": g, "blocks": "40, 6 at the largest N" if b == "unequal" else str(b),
                             "noise": label, **scaling_coverage(series, rng, case, previous=True)})
    table = pd.DataFrame(rows)
    scaling_report(table, series, seed, out)
    out(f"# {time.time() - t0:.0f} s")
    return table


# Values on a grid (docs/statistics.md, "A grid"): peak RSS in bytes on 4 KiB pages, per series a
# baseline of 2-3 MiB and a cost of 100-4,000 B per task, normal noise of 50 B (the grid coarse against
# it), 1,200 B or a whole page (the noise dithers the grid), on the idle grid (N = 1, 1,000, 10,000)
# and 1e3..1e6; and the sleep grid timed by a 1 ms clock, at CV 1% (noise of 10 ms and more: ten ticks)
# and 0.1% (about one tick).  Each condition with the grids it is run on.
MEMORY_COSTS = ((2 * 2 ** 20, 3 * 2 ** 20), (100.0, 4000.0))
_PAGES = {"costs": MEMORY_COSTS, "cv": 0.0, "grid_step": float(rules.PAGE_BYTES), "metric": "peak_rss_bytes"}
SCALING_GRID_CONDITIONS = {
    "pages, noise 50 B": (("idle", "1e3..1e6"), {**_PAGES, "sd": 50.0}),
    "pages, noise 1,200 B": (("idle", "1e3..1e6"), {**_PAGES, "sd": 1200.0}),
    "pages, noise 4,096 B": (("idle", "1e3..1e6"), {**_PAGES, "sd": 4096.0}),
    "1 ms clock, CV 1%": (("sleep",), {"cv": 0.01, "grid_step": 1e-3, "metric": "elapsed_s"}),
    "1 ms clock, CV 0.1%": (("sleep",), {"cv": 0.001, "grid_step": 1e-3, "metric": "elapsed_s"}),
}
SCALING_GRID_BLOCKS = (6, 10)


def scaling_grid_study(series: int = 2000, seed: int = 1, out=print, conditions=tuple(SCALING_GRID_CONDITIONS),
                       blocks=SCALING_GRID_BLOCKS) -> pd.DataFrame:
    """The scaling study on a grid (docs/statistics.md, "A grid"): `series` series per cell of
    condition x its grids x blocks, each cell seeded by (seed, grid, blocks, 100 + the condition's
    place), scored by scaling_coverage: the per-task and exponent intervals' coverage and the share
    of per-task intervals of width 0.  `python -m bench_src.analysis.simulate scaling-grid [series]`."""
    rows = []
    t0 = time.time()
    for label in conditions:
        grids, kwargs = SCALING_GRID_CONDITIONS[label]
        for g in grids:
            for b in blocks:
                rng = np.random.default_rng([seed, list(SCALING_GRIDS).index(g), b,
                                             100 + list(SCALING_GRID_CONDITIONS).index(label)])
                rows.append({"noise": label, "grid": g, "blocks": b,
                             **scaling_coverage(series, rng, ScalingCase(grid=g, blocks=b, **kwargs))})
    table = pd.DataFrame(rows)
    out(f"# per-task cost and exponent on a grid, {series} series per cell (seed {seed}): 95% intervals' "
        "coverage (%) and intervals of width 0 (%)")
    shown = table.assign(**{c: table[c].map(_pct) for c in ("per_task", "exponent", "zero_width", "straightness")})
    out(shown[["noise", "grid", "blocks", "per_task", "exponent", "zero_width", "straightness"]].to_markdown(index=False))
    out(f"# {time.time() - t0:.0f} s")
    return table


def decision_study(families: int, seed: int = 1, sizes=(30, 72), pairs=(6, 10, 13, 20),
                   compositions=tuple(COMPOSITIONS), conditions=tuple(STUDY_CONDITIONS),
                   previous: bool = True) -> pd.DataFrame:
    """The decision rule (and, with previous=True, the rule it replaced) on `families` families per
    cell of the grid: family size x pairs x composition x shape of noise.  One row per cell and rule
    with score()'s figures."""
    rows = []
    for m in sizes:
        for n in pairs:
            for comp in compositions:
                for label in conditions:
                    for rule in (("rule", "previous") if previous else ("rule",)):
                        rng = np.random.default_rng([seed, m, n, list(COMPOSITIONS).index(comp),
                                                     list(STUDY_CONDITIONS).index(label)])
                        r = family_study(families, rng, COMPOSITIONS[comp](m), n, STUDY_CONDITIONS[label],
                                         previous=rule == "previous")
                        rows.append({"comparisons": m, "pairs": n, "composition": comp, "noise": label, "rule": rule,
                                     **r})
    return pd.DataFrame(rows)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def study(replications: int = 2000, seed: int = 1, out=print) -> None:
    """The simulations behind the numbers of docs/statistics.md (`replications` families per cell of
    the decision rule's grid; the other studies scale with it)."""
    rng = np.random.default_rng(seed)
    t0 = time.time()
    out(f"# {replications} families per cell (seed {seed})")
    grid = decision_study(replications, seed)
    for what in ("error", "power", "fcr", "coverage", "coverage_95", "equivalent"):
        table = grid.pivot_table(index=["composition", "noise"], columns=["rule", "comparisons", "pairs"],
                                 values=what, sort=False)
        out(f"\n## {what} (%), rule = this package's rule, previous = exact signed-rank + Holm\n")
        out(table.map(_pct).to_markdown())
    worst = grid[grid["rule"] == "rule"].groupby("composition")["error"].max()
    out("\nlargest error of the rule per composition: " + ", ".join(f"{k} {_pct(v)}%" for k, v in worst.items()))
    for shape in SHAPES:
        out(f"median_ci coverage ({replications * 10} samples each), {shape}: " + ", ".join(
            f"n={n}: {median_coverage(shape, n, replications * 10, rng):.3f} (exact {stats.median_ci_coverage(n):.3f})"
            for n in (7, 10, 15, 21, 40)))
    out("median_ci coverage on a 1% grid (ties; labelled 'at least'): " + ", ".join(
        f"n={n}: {median_coverage('lognormal', n, replications * 10, rng, grid=0.01):.4f} "
        f"(at least {stats.median_ci_coverage(n):.3f})" for n in (7, 10, 15, 21, 40)))
    scaling_study(replications, seed, out)
    for pairs in (6, 10, 14, 20):
        out(f"power at the mde each sample reports, {pairs} pairs, level 0.05 / 30, {replications // 10} samples: "
            + ", ".join(f"{shape} {_pct(r['mde'])}% (off the half-width {_pct(r['half_width'])}%, "
                        f"hull {_pct(r['hull'])}%)"
                        for shape, r in ((sh, mde_power(sh, pairs, replications // 10, rng)) for sh in SHAPES)))
    for label, truth, cond, runs in (
            ("all A/A-like, CV 2%", dict.fromkeys(SEQUENTIAL_NS, 1.0), Conditions(cv=0.02), replications // 4),
            ("all A/A-like, bimodal CV 1%", dict.fromkeys(SEQUENTIAL_NS, 1.0), Conditions("bimodal", 0.01),
             replications // 4),
            ("mixed: x1.3, x0.8, equal, 1.5% apart; CV 1%", MIXED, Conditions(cv=0.01), replications // 10)):
        for plan_label, plan in (("pilot 10, looks at 10/17/30", sequential_plan()),
                                 ("pilot 6, looks at 6/11/20", sequential_plan(samples=6, max_samples=20, looks=3))):
            r = sequential_study(runs, rng, truth, cond, plan=plan)
            out(f"sequential rule, 12 comparisons, {plan_label}, {label}: false discovery rate {r['error']:.3f}, "
                f"runs with a false call {r['fwer']:.3f} ({runs} runs), interval coverage {r['coverage']:.3f}, "
                f"wrong directions {r['wrong']}, mean samples per cell {r['mean_samples']:.1f} of {r['budget']}")
    out(f"# {time.time() - t0:.0f} s")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "above-baseline":
        above_baseline_study(int(sys.argv[2]) if len(sys.argv) > 2 else 300)
    elif len(sys.argv) > 1 and sys.argv[1] == "scaling":  # scaling [series] [condition ...]
        scaling_study(int(sys.argv[2]) if len(sys.argv) > 2 else 2000,
                      conditions=tuple(sys.argv[3:]) or tuple(SCALING_CONDITIONS))
    elif len(sys.argv) > 1 and sys.argv[1] == "hosts-coverage":
        hosts_coverage_report(int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
    elif len(sys.argv) > 1 and sys.argv[1] == "hosts-heterogeneity":
        hosts_heterogeneity_report(int(sys.argv[2]) if len(sys.argv) > 2 else 4000)
    elif len(sys.argv) > 1 and sys.argv[1] == "hosts-prediction":
        hosts_prediction_report(int(sys.argv[2]) if len(sys.argv) > 2 else 4000)
    elif len(sys.argv) > 1 and sys.argv[1] == "hosts-sequential":
        hosts_sequential_report(int(sys.argv[2]) if len(sys.argv) > 2 else 300)
    elif len(sys.argv) > 1 and sys.argv[1] == "cores":
        cores_report(int(sys.argv[2]) if len(sys.argv) > 2 else 300)
    elif len(sys.argv) > 1 and sys.argv[1] == "scaling-grid":
        scaling_grid_study(int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
    else:
        study(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
