"""Synthetic samples frames shaped like a real run, to measure what the statistics do: interval
coverage, family-wise false positives, power, and the sequential rule's savings.

A frame holds cells of the sleep workload (Go `waitgroup` against Rust `join-handles`, one pair
of cells per N, or arms A and B of one cell) measured in blocks: every block holds every cell once
in a random order, as a run does.  Each value is the cell's true median times
- the noise: multiplicative with median 1, of a given shape ("lognormal", "heavy": a log-t with 3
  degrees of freedom, "bimodal": two equal lognormal modes 20% apart, median between them);
- drift: 1 + drift * (position in the run, 0 to 1);
- a block effect shared by every cell of a block (lognormal with sd `block_sd`);
- a burst: in one block, the cells in a stretch of the block's order run (1 + size) slower.

`study()` runs the simulations whose results docs/statistics.md reports:
`python -m bench_src.analysis.simulate [replications]`.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from . import compare, rules, scaling, sequential, stats
from ..plan import make_plan

SHAPES = ("lognormal", "heavy", "bimodal")
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
            value = centres[c] * (1 + cond.drift * seq / total) * effect * factors[pos]
            if burst_block is not None and b == burst_block and hit_start <= pos < hit_start + cond.burst_share * len(cells):
                value *= 1 + cond.burst
            rows.append({"run_id": "sim", "seq": seq, "phase": "measured", "block": b, "pos": pos, "cell_id": c.id,
                         "workload": "sleep", "lang": c.lang, "variant": c.variant, "n": c.n,
                         "threads_requested": SIM_THREADS, "arm": c.arm, "params": "kernel=xorshift,work=10",
                         "p_kernel": "xorshift", "p_work": "10", "valid": True, "elapsed_s": value,
                         "wall_s": value})
            seq += 1
    return rows


def frame(centres: Mapping[SimCell, float], blocks: int, rng: np.random.Generator,
          cond: Conditions = Conditions(), burst_block: int | None = None) -> pd.DataFrame:
    """A fixed-design run: every cell once in each of `blocks` blocks."""
    cells = sorted(centres, key=lambda c: (c.n, c.lang, c.arm))
    return pd.DataFrame(_rows(cells, centres, list(range(blocks)), rng, cond, burst_block=burst_block))


# --- the sequential rule on synthetic data -------------------------------------------------------
class _MemoryStore:
    """The samples of a simulated run, handed to the rule as a frame (what samples_frame and
    mark_valid would make of them: every sample valid)."""

    def __init__(self):
        self.rows: list[dict] = []

    def frame_before(self, block: int) -> pd.DataFrame:
        return pd.DataFrame([r for r in self.rows if r["block"] < block])

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)


class _Bar:
    total = 0


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
        value = (centres[c.id] * (1 + cond.drift * min(1.0, seq / expected_total)) * effects[slot.block]
                 * float(noise(rng, cond.shape, 1, cond.cv)[0]))
        store.rows.append({"run_id": "sim", "seq": seq, "phase": "measured", "block": slot.block, "pos": slot.pos,
                           "cell_id": c.id, "workload": c.workload, "lang": c.lang, "variant": c.variant, "n": c.n,
                           "threads_requested": c.threads, "arm": c.arm, "params": ",".join(f"{k}={v}" for k, v in c.params),
                           **{f"p_{k}": v for k, v in c.params}, "valid": True, "elapsed_s": value, "wall_s": value})

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


def sequential_plan(samples: int = 10, max_samples: int = 30, looks: int = 3):
    """A plan of 12 Go-vs-Rust comparisons of the sleep workload under the sequential rule."""
    return make_plan("quick", workloads=["sleep"], ns=list(SEQUENTIAL_NS), params={"sleep": {"work": 10}},
                     threads=SIM_THREADS,
                     samples=samples, max_samples=max_samples, looks=looks, warmup=0)


def sequential_study(runs: int, rng, go_over_rust: Mapping[int, float], cond: Conditions, plan=None) -> dict:
    """Runs of the sequential rule on a plan: the share of runs with a false positive (any
    difference called where the truth is 1), the coverage of the final intervals, wrong
    directions, and the mean samples per cell."""
    plan = plan or sequential_plan()
    design = sequential.design_of(plan)
    centres = {c.id: (go_over_rust[c.n] if c.lang == "go" else 1.0) for c in plan.cells()}
    false_runs = hits = total = wrong = past_pilot = 0
    samples = []
    for _ in range(runs):
        df = sequential_run(plan, centres, rng, cond)
        t = compare.compare(df, design=design)
        truth = t["n"].map(go_over_rust)
        called = t["verdict_kind"].isin(["a", "b"])
        false_runs += bool((called & (truth == 1.0)).any())
        wrong += int(((t["verdict_kind"] == "a") & (truth > 1)).sum() + ((t["verdict_kind"] == "b") & (truth < 1)).sum())
        hits += int(((t["ratio_ci_low"] <= truth) & (truth <= t["ratio_ci_high"])).sum())
        total += len(t)
        past_pilot += int((t["pairs"] > plan.samples).sum())
        samples.append(df.groupby("cell_id").size().mean())
    return {"fwer": false_runs / runs, "coverage": hits / total, "wrong": wrong, "past_pilot": past_pilot,
            "mean_samples": float(np.mean(samples)), "budget": plan.max_samples}


# --- the study reported in docs/statistics.md ----------------------------------------------------
def _coverage_median(shape: str, n: int, reps: int, rng) -> float:
    truth = true_median(shape)
    hits = 0
    for _ in range(reps):
        _, lo, hi = stats.median_ci(noise(rng, shape, n, 0.01))  # bimodal: two narrow modes, an empty gap
        hits += lo <= truth <= hi
    return hits / reps


def _ratio_coverage(shape: str, frames: int, rng, cond: Conditions, blocks: int = 10, m: int = 25) -> float:
    ratios = np.exp(rng.uniform(-0.3, 0.3, m))
    hits, total = 0, 0
    for _ in range(frames):
        t = compare.compare(frame(go_rust_cells(ratios), blocks, rng, Conditions(shape, cond.cv, cond.drift,
                                                                                 cond.block_sd)), tests=False)
        truth = ratios[t["n"].to_numpy() - 1]
        hits += int(((t["ratio_ci_low"] <= truth) & (truth <= t["ratio_ci_high"])).sum())
        total += len(t)
    return hits / total


def family_false_positives(frames: int, rng, cond: Conditions, m: int = 20, blocks: int = 10,
                           burst: bool = False) -> dict:
    """A/A frames: the share of families (tables) with at least one significant comparison, and
    the share of comparisons called equivalent."""
    any_sig, equivalent, total = 0, 0, 0
    for _ in range(frames):
        df = frame(aa_cells(m), blocks, rng, cond, burst_block=int(rng.integers(blocks)) if burst else None)
        t = compare.compare_arms(df)
        any_sig += bool((t["p_holm"] < rules.ALPHA).any())
        equivalent += int((t["verdict_kind"] == "equivalent").sum())
        total += len(t)
    return {"fwer": any_sig / frames, "equivalent": equivalent / total}


def power(frames: int, rng, cond: Conditions, ratio: float = 1.03, m: int = 25, blocks: int = 10,
          null_share: float = 0.0) -> dict:
    """The share of truly different comparisons found in the right direction, the number found in
    the wrong direction, and the share of tables with a difference called among the equal ones."""
    found = wrong = false_tables = total = 0
    nulls = int(round(null_share * m))
    ratios = [1.0] * nulls + [ratio] * (m - nulls)
    right = "a" if ratio < 1 else "b"
    for _ in range(frames):
        t = compare.compare(frame(go_rust_cells(ratios), blocks, rng, cond))
        real, null = t[t["n"] > nulls], t[t["n"] <= nulls]
        found += int((real["verdict_kind"] == right).sum())
        wrong += int(real["verdict_kind"].isin(["a", "b"]).sum() - (real["verdict_kind"] == right).sum())
        false_tables += bool(null["verdict_kind"].isin(["a", "b"]).any())
        total += len(real)
    return {"found": found / total, "wrong_direction": wrong, "false_tables": false_tables / frames}


def scaling_coverage(series: int, rng, shape: str = "lognormal", per_n_sd: float = 0.0, cv: float = 0.05,
                     ns=(1000, 10000, 100000, 1000000), samples: int = 10) -> dict:
    """Coverage of the per-task cost (truth: 2e6 + 2000 N) and of the exponent (truth: N^0.7) over
    `series` series, each with `samples` samples per N and, optionally, a multiplicative effect
    shared by the samples of one N (lognormal, sd `per_n_sd`)."""
    ns = np.asarray(ns, dtype=float)
    shared = np.exp(per_n_sd * rng.standard_normal((series, ns.size, 1)))
    factor = shared * noise(rng, shape, (series, ns.size, samples), cv)
    n_grid = np.broadcast_to(ns[None, :, None], factor.shape)
    df = pd.DataFrame({"workload": "idle_tasks", "lang": "go", "variant": "goroutine", "threads_requested": None,
                       "arm": "", "valid": True, "n": n_grid.ravel().astype(int),
                       "p_series": np.broadcast_to(np.arange(series)[:, None, None], factor.shape).ravel().astype(str),
                       "linear": ((2e6 + 2000 * n_grid) * factor).ravel(),
                       "power": (3e-6 * n_grid ** 0.7 * factor).ravel()})
    lin = scaling.per_task_cost(df, "linear")
    pw = scaling.per_task_cost(df, "power")
    truth = 2000 * true_median(shape)  # the fit is to the typical value per N
    return {"per_task": float(((lin["per_task_ci_low"] <= truth) & (truth <= lin["per_task_ci_high"])).mean()),
            "exponent": float(((pw["exponent_ci_low"] <= 0.7) & (0.7 <= pw["exponent_ci_high"])).mean())}


def study(replications: int = 400, seed: int = 1, out=print) -> None:
    """The simulations behind the numbers of docs/statistics.md."""
    rng = np.random.default_rng(seed)
    t0 = time.time()
    out(f"# replications: {replications} per cell of the tables below (seed {seed})")
    for shape in SHAPES:
        out(f"median_ci coverage ({replications * 50} samples each), {shape}: " + ", ".join(
            f"n={n}: {_coverage_median(shape, n, replications * 50, rng):.3f} (exact {stats.median_ci_coverage(n):.3f})"
            for n in (7, 10, 15, 21, 40)))
    for shape in SHAPES:
        out(f"paired ratio CI coverage, {shape}, block sd 3%, drift 10%: "
            f"{_ratio_coverage(shape, replications // 10, rng, Conditions(cv=0.01, drift=0.1, block_sd=0.03)):.3f}")
    for label, cond, burst in (("no drift", Conditions(), False), ("drift +3%", Conditions(drift=0.03), False),
                               ("drift +10%", Conditions(drift=0.1), False),
                               ("block sd 3%", Conditions(block_sd=0.03), False),
                               ("one-block burst +50%", Conditions(burst=0.5), True)):
        r = family_false_positives(replications, rng, cond, burst=burst)
        out(f"A/A, 20 comparisons per family, n=10, CV 1%, {label}: family-wise false positives "
            f"{r['fwer']:.3f}, comparisons called equivalent {r['equivalent']:.3f}")
    for null_share in (0.0, 0.5):
        p = power(replications // 4, rng, Conditions(cv=0.01, drift=0.1), null_share=null_share)
        out(f"true 3% difference, CV 1%, n=10, drift +10%, family of 25 ({null_share:.0%} of them A/A): "
            f"found {p['found']:.3f}, wrong directions {p['wrong_direction']}, tables with a false call among the "
            f"A/A comparisons {p['false_tables']:.3f}")
    for label, kw in (("multiplicative noise", {}), ("shared per-N effect 5%", {"per_n_sd": 0.05}),
                      ("heavy-tailed", {"shape": "heavy"}), ("bimodal", {"shape": "bimodal"}),
                      ("bimodal, narrow modes (CV 1%)", {"shape": "bimodal", "cv": 0.01})):
        c = scaling_coverage(replications * 5, rng, **kw)
        out(f"scaling, 4 values of N, 10 samples each, {label}: per-task cost coverage {c['per_task']:.3f}, "
            f"exponent coverage {c['exponent']:.3f}")
    for label, truth, cv, runs in (("all A/A-like, CV 2%", dict.fromkeys(SEQUENTIAL_NS, 1.0), 0.02, replications * 5),
                                   ("mixed: x1.3, x0.8, equal, 1.5% apart; CV 1%", MIXED, 0.01, replications)):
        r = sequential_study(runs, rng, truth, Conditions(cv=cv))
        out(f"sequential rule, 12 comparisons, pilot 10, looks at 10/20/30 pairs, {label}: family-wise false "
            f"positives {r['fwer']:.3f} ({runs} runs), interval coverage {r['coverage']:.3f}, wrong directions {r['wrong']}, "
            f"mean samples per cell {r['mean_samples']:.1f} of {r['budget']}")
    article_shape = sequential_plan(samples=6, max_samples=20, looks=3)  # the article profile's looks
    for label, truth, cv, runs in (("all A/A-like, CV 2%", dict.fromkeys(SEQUENTIAL_NS, 1.0), 0.02, replications * 5),
                                   ("mixed: x1.3, x0.8, equal, 1.5% apart; CV 1%", MIXED, 0.01, replications)):
        r = sequential_study(runs, rng, truth, Conditions(cv=cv), plan=article_shape)
        out(f"sequential rule, 12 comparisons, pilot 6, looks at 6/13/20 pairs (shares 0/0.5/0.5), {label}: "
            f"family-wise false positives {r['fwer']:.3f} ({runs} runs), interval coverage {r['coverage']:.3f}, "
            f"wrong directions {r['wrong']}, mean samples per cell {r['mean_samples']:.1f} of {r['budget']}")
    out(f"# {time.time() - t0:.0f} s")


if __name__ == "__main__":
    study(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
