"""Comparisons: Go vs Rust for the same work (like for like), other concurrency models against
tasks, variants against their language's default, and A/A arms.

Every comparison of two cells measured in the same blocks is paired: the per-block difference d
of log values (a block holds both cells once, in a random order, so slow drift and a disturbed
block hit both sides alike).  Its centre is tested and estimated by `paired` (the exact
signed-rank test at every level it can reach, Student's t below that and where values tie), and the
reported ratio is exp of the estimate (a / b: Go / Rust, other model / task, variant / baseline,
A / B).  Where the cells do not share enough blocks (`pairing` = "unpaired", with the reason in
`warning`) `unpaired` compares the two samples of log values instead.  Each table and metric is
one family, decided together by `multiplicity`: the false discovery rate over the family, the
looks of a sequential run, and every interval at the level whose exclusion of 1 is exactly the
verdict.  A row whose memory cell's values are dispersed says so in `warning`
(quality.dispersion_warning).  docs/statistics.md states every rule.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from . import multiplicity, paired, quality, ranktests, rules, stats, unpaired
from .families import KEY_COLUMNS, key_params, key_text, key_threads, param_columns, with_param_columns
from .validity import all_alive, counted, memory_excluded, memory_excluded_summary
from ..plan import Plan
from ..plan.comparisons import FAMILY_TITLES, CellRef, comparisons, plan_comparisons
from ..catalogue import WORKLOADS

MARGIN = rules.MARGIN
ALPHA = rules.ALPHA
TIME_METRICS = rules.TIME_METRICS
CELL_COLUMNS = KEY_COLUMNS


# --- small helpers kept for callers and tests ----------------------------------------------------
def cliffs_delta(a, b) -> float:
    """P(a > b) - P(a < b) over all pairs of one value of a and one of b."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    if x.size == 0 or y.size == 0:
        return np.nan
    return float(np.sign(x[:, None] - y[None, :]).mean())


# --- the sequential design a run was sampled with -----------------------------------------------
@dataclass(frozen=True)
class Design:
    """Looks of the sequential rule: pairs per comparison at each look, the share of alpha spent
    there, and the planned size of each family (its m, also for comparisons without data).  A
    single look is the fixed design.  `late_from`: the index of the first late look (past the
    plan's budget of pairs, taken by cheap cells only: plan/design.py); None when there are none."""

    looks: tuple[int, ...]
    spending: tuple[float, ...] = field(default=(1.0,))
    family_sizes: tuple[tuple[str, int], ...] = ()
    late_from: int | None = None

    @property
    def sequential(self) -> bool:
        return len(self.looks) > 1

    @property
    def budget(self) -> int:
        """The pairs every cell may reach: the last look before the late ones."""
        return self.looks[(self.late_from or len(self.looks)) - 1]

    def plan_looks(self) -> multiplicity.Looks:
        return multiplicity.Looks(tuple(self.looks), tuple(self.spending)) if self.sequential else multiplicity.Looks((0,))

    def size(self, family: str, m: int) -> int:
        """The family's size for the multiplicity rule: its planned size, or m when none is known."""
        return max(dict(self.family_sizes).get(family, 0), m)

    def to_dict(self) -> dict:
        return {"looks": list(self.looks), "spending": list(self.spending),
                "family_sizes": dict(self.family_sizes),
                **({"late_from": self.late_from} if self.late_from is not None else {})}

    @classmethod
    def from_plan(cls, plan: Plan) -> "Design":
        """The design a plan fixed: its looks, their spending, and the size of every family.  (A
        plan stored in meta.json becomes a Plan where it is read: ResultsStore.read_plan.)"""
        if not isinstance(plan, Plan):
            raise TypeError(f"Design.from_plan takes a Plan, got {type(plan).__name__}")
        looks = rules.look_counts(plan.samples, plan.max_samples, plan.looks or rules.DEFAULT_LOOKS)
        late = rules.late_counts(looks, plan.late_looks) if len(looks) > 1 else ()
        sizes = tuple((f, len(pairs)) for f, pairs in plan_comparisons(plan).items())
        return cls(looks + late, rules.look_spending(len(looks) + len(late)), sizes,
                   len(looks) if late else None)


def _design(df: pd.DataFrame, design) -> Design | None:
    design = design if design is not None else df.attrs.get("design")
    if design is None or isinstance(design, Design):
        return design
    if isinstance(design, Mapping) and "looks" in design:
        return Design(tuple(design["looks"]), tuple(design.get("spending", rules.look_spending(len(design["looks"])))),
                      tuple((f, int(m)) for f, m in (design.get("family_sizes") or {}).items()),
                      design.get("late_from"))
    return Design.from_plan(design)


# --- per-cell values, keyed by block ---------------------------------------------------------------
class CellValues:
    """The values of `metric` per cell that count for it (validity.counted), with the block each
    was taken in."""

    def __init__(self, df: pd.DataFrame, metric: str):
        if metric not in df.columns:
            raise ValueError(f"unknown metric {metric!r}; the frame has no such column")
        valid = with_param_columns(counted(df, metric))
        self.paired_data = "block" in valid.columns
        if self.paired_data and not valid.empty:
            blocks = pd.to_numeric(valid["block"], errors="coerce").fillna(-1).to_numpy(dtype=np.int64)
            if "run_id" in valid.columns and valid["run_id"].nunique(dropna=False) > 1:
                codes, _ = pd.factorize(pd.MultiIndex.from_arrays([valid["run_id"].astype(str), blocks]))
            else:
                codes = blocks
        else:
            codes = np.arange(len(valid))
        values = pd.to_numeric(valid[metric], errors="coerce").to_numpy(dtype=float)
        runs = valid["run_id"].astype(str).to_numpy() if "run_id" in valid.columns else None
        self.cells: dict[CellRef, tuple[np.ndarray, np.ndarray]] = {}
        self.runs: dict[CellRef, frozenset] = {}  # the runs a cell's values were taken in
        self.params: dict[CellRef, str] = {}
        # the threads each cell's samples reported (read when asked: threads_of)
        self._threads: dict[CellRef, np.ndarray] = {}
        threads = valid["threads"].to_numpy(dtype=object) if "threads" in valid.columns else None
        # every cell the frame measured, whether or not a value of it counts for the metric (all
        # its samples failed; for memory, none had every task alive at once): a comparison of such a
        # cell is still one of the plan's, shown untested with the reason
        # (read when asked: the sequential rule builds CellValues at every look and never asks)
        self._frame, self._metric = df, metric
        self._valid_groups = None  # the valid rows by cell, when `left_out` is first asked
        for ref, idx in _cell_groups(valid):
            v, c = values[idx], codes[idx]
            keep = np.isfinite(v)  # an infinite value is no measurement either
            order = np.argsort(c[keep], kind="stable")
            self.cells[ref] = (c[keep][order], v[keep][order])
            self.runs[ref] = frozenset(runs[idx][keep]) if runs is not None else frozenset({""})
            if threads is not None:
                self._threads[ref] = threads[idx]

    def refs(self) -> list[CellRef]:
        return list(self.cells)

    def threads_of(self, ref: CellRef) -> float:
        """The threads a cell's samples ran with (stats.threads_used), NaN where unknown."""
        return stats.threads_used(self._threads[ref]) if ref in self._threads else np.nan

    def dispersed(self, refs: Iterable[CellRef], name=None) -> list[str]:
        """The warning of each of `refs` (the cells of one row of a table) whose values of the metric
        are dispersed (quality.dispersion_warning: a memory cell at rules.DISPERSED_CV or more), each
        cell named by `name(ref)` (by default `cell_name`: "Go readfile"); every table whose rows
        compare cells carries it in its `warning`."""
        name = name or cell_name
        found = (quality.dispersion_warning(name(ref), self.cells[ref][1], self._metric) for ref in refs
                 if ref in self.cells)
        return [w for w in found if w]

    def left_out(self, ref: CellRef) -> str:
        """Why some of a cell's valid samples do not count for the metric, where some do (for memory:
        not every task alive at once, validity.memory_excluded_summary), with how many; "" where
        every valid sample counts or none does (`uncounted` says why then).  A row that compares the
        cell says it first: it is why the cell has fewer values than the run took."""
        if ref not in self.cells:
            return ""
        if self._valid_groups is None:
            df = self._frame
            valid = with_param_columns(df[df["valid"].astype(bool)] if "valid" in df.columns else df)
            self._valid_groups = (valid, dict(_cell_groups(valid)))
        valid, groups = self._valid_groups
        rows = valid.iloc[groups.get(ref, [])]
        excluded = int((memory_excluded(rows) != "").sum()) if self._metric in rules.MEMORY_METRICS else 0
        if not excluded:
            return ""
        return (f"{excluded} of the {len(rows)} valid samples of the {cell_name(ref)} cell "
                f"{'does' if excluded == 1 else 'do'} not count for {self._metric}: {memory_excluded_summary(rows)}")

    def uncounted(self) -> dict[CellRef, str]:
        """The cells the frame measured of which no value counts for the metric, with why."""
        df = self._frame
        measured = with_param_columns(df[df["phase"] == "measured"] if "phase" in df.columns else df)
        return {ref: _none_counted(measured.iloc[idx], self._metric) for ref, idx in _cell_groups(measured)
                if ref not in self.cells}

    def paired_by_design(self, a: CellRef, b: CellRef) -> bool:
        """Whether the blocks pair two cells: the frame has blocks and the cells were taken in one
        run at least (cells of different runs, as the engines' check compares, share no block)."""
        return self.paired_data and bool(self.runs.get(a, frozenset()) & self.runs.get(b, frozenset()))

    def unpaired_reason(self, a: CellRef, b: CellRef) -> str:
        return "the frame has no block column" if not self.paired_data else "the cells were taken in different runs"

    def per_block(self, ref: CellRef) -> pd.Series:
        """A cell's values by block, one per block (the median of its values when a block holds the
        cell more than once), in block order: what per-block ratios of two cells divide."""
        codes, values = _block_values(*self.cells[ref])
        return pd.Series(values, index=codes).sort_index()


def _none_counted(rows: pd.DataFrame, metric: str) -> str:
    """Why no sample of a cell's measured `rows` would count for `metric` (validity.counted): none
    valid (failed, or a checksum against the other language's), or, for memory, none with every
    task alive at once."""
    valid = rows["valid"].astype(bool) if "valid" in rows.columns else pd.Series(True, index=rows.index)
    if not valid.any():
        return (f"none of its {len(rows)} measured sample{'s' if len(rows) != 1 else ''} is valid "
                "(the failures and checksums tables say why)")
    if metric in rules.MEMORY_METRICS and not (valid & all_alive(rows)).any():
        k = int(valid.sum())
        counts = pd.to_numeric(rows.get("alive_at_spawn", pd.Series(index=rows.index, dtype=float)), errors="coerce")
        if counts[valid].notna().all():
            return (f"none of its {k} valid sample{'s' if k != 1 else ''} had every task alive at once (the last task "
                    "was spawned after the first had finished), so none measured the memory of its N tasks "
                    f"({memory_excluded_summary(rows[valid])})")
        return f"none of its {k} valid sample{'s' if k != 1 else ''} counts for memory: " \
               f"{memory_excluded_summary(rows[valid])}"
    return "no finite value"


def cell_name(ref: CellRef) -> str:
    """A cell as a warning names it: 'Go goroutine', 'Rust spawn'."""
    return f"{'Go' if ref.lang == 'go' else 'Rust' if ref.lang == 'rust' else ref.lang} {ref.variant}"


def _cell_groups(frame: pd.DataFrame):
    """(CellRef, row positions) of every cell of `frame`: one group per cell id where the frame has
    them (its key read from the first row), else per key."""
    if frame.empty:
        return
    for k in CELL_COLUMNS:
        if k not in frame.columns:
            frame = frame.assign(**{k: "" if k == "arm" else None})
    pcols = param_columns(frame)
    keys = list(CELL_COLUMNS) + pcols
    if "cell_id" in frame.columns:
        groups = list(frame.groupby("cell_id", sort=False).indices.values())
        first = frame[keys].iloc[[idx[0] for idx in groups]].to_numpy(dtype=object)
        items = ((tuple(row), idx) for row, idx in zip(first, groups))
    else:
        items = frame.groupby(keys, dropna=False, sort=False).indices.items()
    for key, idx in items:
        key = key if isinstance(key, tuple) else (key,)
        w, lang, variant, n, t, arm = key[:6]
        yield CellRef(w, lang, variant, int(n), key_threads(t), key_text(arm), key_params(pcols, key[6:])), idx


def _block_values(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One value per block (the median when a block holds a cell more than once)."""
    uniq, start = np.unique(codes, return_index=True)
    if uniq.size == codes.size:
        return codes, values
    return uniq, np.array([np.median(values[codes == u]) for u in uniq])


def _positive_logs(x: np.ndarray) -> np.ndarray | None:
    return np.log(x) if x.size and np.all(x > 0) else None


@dataclass
class PairTest:
    """One comparison before its family is decided: descriptive statistics (`stats`) and the
    comparison tested at every look it reached (`tested`; None without data to test)."""

    stats: dict
    tested: multiplicity.Tested | None


def too_few_pairs(pairs: int) -> str:
    """Why a comparison of `pairs` pairs (fewer than rules.MIN_PAIRS) is not tested: in every table
    that tests one, and for a host left out of the combination across hosts (analysis/hosts.py)."""
    return (f"too few pairs: {pairs} block{'s hold' if pairs != 1 else ' holds'} both cells, and a verdict needs "
            f"{rules.MIN_PAIRS} (the error rate is measured from there)")


def pair_test(a_codes, a_values, b_codes, b_values, paired_data: bool = True,
              looks: multiplicity.Looks = multiplicity.Looks((0,)), level_min: float = ALPHA,
              resolution: float = 0.0, unpaired_reason: str = "the frame has no block column") -> PairTest:
    """Pair two cells by block and test the comparison at each look; with `paired_data` False
    (the design pairs nothing: no blocks, or cells of different runs, `unpaired_reason`) compare the
    two samples unpaired.  `level_min`: the family's smallest level at one look before the look's
    share (alpha / m); it chooses each look's test (paired.choose_test).  `resolution`: the
    metric's known grid (rules.RESOLUTION), for cells whose values never vary.

    A blocked design with fewer than MIN_PAIRS pairs (samples failed or left out) gets no test:
    the rule's error rate is measured from MIN_PAIRS pairs on (at 4 pairs two narrow modes gave a
    false call in 14% of families of 30), and an unpaired test of such cells would read the
    machine's drift between their blocks as a difference (a 10% drift over the run made 82% of
    equal cells sharing 4 of their 10 blocks "different")."""
    a_codes, b_codes = np.asarray(a_codes), np.asarray(b_codes)
    a_values, b_values = np.asarray(a_values, float), np.asarray(b_values, float)
    a_finite, b_finite = np.isfinite(a_values), np.isfinite(b_values)
    dropped = int((~a_finite).sum() + (~b_finite).sum())
    a_codes, a_values, b_codes, b_values = a_codes[a_finite], a_values[a_finite], b_codes[b_finite], b_values[b_finite]
    out = {"a_samples": int(a_values.size), "b_samples": int(b_values.size),
           "a_median": float(np.median(a_values)) if a_values.size else np.nan,
           "b_median": float(np.median(b_values)) if b_values.size else np.nan,
           "pairing": "unpaired", "pairs": 0, "test": "", "effect_size": np.nan, "cliffs_delta": np.nan,
           "sd_log": np.nan, "looks": 0, "warning": ""}
    notes = [f"{dropped} value{'s' if dropped != 1 else ''} not finite left out"] if dropped else []
    few = stats.few_warning(min(a_values.size, b_values.size))
    if few:
        notes.append(few)
    la, lb = _positive_logs(a_values), _positive_logs(b_values)
    if la is None or lb is None:
        if a_values.size and b_values.size:
            notes.append("values <= 0: no ratio of logs")
        out["warning"] = "; ".join(notes)
        return PairTest(out, None)
    out["cliffs_delta"] = cliffs_delta(a_values, b_values)
    pairs = 0
    if paired_data:
        ac, av = _block_values(np.asarray(a_codes), la)
        bc, bv = _block_values(np.asarray(b_codes), lb)
        _, ia, ib = np.intersect1d(ac, bc, assume_unique=True, return_indices=True)
        pairs = ia.size
    # Paired on the shared blocks, whatever samples either cell took in blocks of other comparisons
    # (the sequential rule decides a comparison on the same pairs), from MIN_PAIRS pairs on.
    if paired_data and pairs < rules.MIN_PAIRS:
        notes.append(f"{too_few_pairs(pairs)}; {NOT_TESTED}")
        out.update(pairing="paired", pairs=int(pairs))
        out["warning"] = "; ".join(dict.fromkeys(notes))
        return PairTest(out, None)
    if paired_data:
        order = np.argsort(ac[ia], kind="stable")
        d = av[ia][order] - bv[ib][order]
        # The grid, the noise it is read against and the ties come from the paired values alone,
        # as the sequential look reads them (sequential._first_pairs): values a cell took in blocks
        # of other comparisons are not this comparison's data.  Each look reads them off its own
        # first blocks, as it did when it was taken.
        blocks = ac[ia][order]

        def grid(count: int) -> paired.Rounding:
            first = blocks[:count]
            a_pairs = a_values[np.isin(np.asarray(a_codes), first)]
            b_pairs = b_values[np.isin(np.asarray(b_codes), first)]
            return paired.rounding(paired.grid_step(a_pairs, b_pairs, resolution), a_pairs, b_pairs)

        tested = multiplicity.Tested.of(d, looks, level_min, grid)
        out.update(pairing="paired", pairs=int(pairs), effect_size=ranktests.signed_rank_p(d)[1],
                   sd_log=float(np.std(d, ddof=1)) if d.size > 1 else np.nan)
    else:
        notes.append(f"unpaired: {unpaired_reason}")
        tested = multiplicity.Tested([(1.0, unpaired.Shift(la, lb, level_min))])
        pooled = (np.sqrt(((la.size - 1) * la.var(ddof=1) + (lb.size - 1) * lb.var(ddof=1)) / (la.size + lb.size - 2))
                  if la.size > 1 and lb.size > 1 else np.nan)
        out.update(effect_size=out["cliffs_delta"], sd_log=float(pooled))
    out["test"] = tested.last[1].test if tested.looks else ""
    if out["test"] == paired.SIGNED_RANK and out["pairs"] > ranktests.EXACT_MAX:
        out["test"] = paired.SIGNED_RANK_NORMAL
    out["looks"] = len(tested.looks)
    out["warning"] = "; ".join(dict.fromkeys(notes))
    return PairTest(out, tested)


def decide_family(tests: list[PairTest], alpha: float = ALPHA, margin: float = MARGIN,
                  m: int | None = None) -> list[dict]:
    """The family's decisions (multiplicity.decide) as one dict per comparison: ratio (exp of the
    last look's estimate), the interval at the family's level (`ci_level`), p-value and
    BH-adjusted p-value, verdict kind, within_margin, and mde: the smallest relative difference the
    comparison leaves no longer open in either direction: the smaller of the difference it would call
    with rules.POWER power, read off its last look's interval, and the farther end of the interval
    shown, beyond which a difference is excluded already (_detectable: between the interval's
    half-width and the smaller of its full width and its farther end)."""
    p = np.array([float(t.tested.p_value()) if t.tested else np.nan for t in tests])

    def interval_at(level):
        level = float(np.asarray(level).ravel()[0])
        bounds = [t.tested.interval(level) if t.tested else (np.nan, np.nan) for t in tests]
        return (np.array([float(lo) for lo, _ in bounds]), np.array([float(hi) for _, hi in bounds]))

    fv = multiplicity.decide(p, interval_at, alpha, margin, m)
    out = []
    for t, kind, inside, low, high, pv, padj in zip(tests, fv.kind, fv.within_margin, fv.low, fv.high,
                                                      fv.p_value, fv.p_adjusted):
        row = {"ratio": np.nan, "ratio_ci_low": float(np.exp(low)), "ratio_ci_high": float(np.exp(high)),
               "ci_level": 1 - float(fv.level), "p_value": float(pv), "p_adjusted": float(padj),
               "verdict_kind": str(kind), "within_margin": bool(inside), "mde": np.nan, "note": ""}
        if t.tested and t.tested.looks:
            share, last = t.tested.last
            est = float(np.asarray(last.estimate))
            row["ratio"] = float(np.exp(est))
            if np.isfinite(low) and np.isfinite(high):
                level = float(fv.level) * share
                row["mde"] = float(np.expm1(_detectable(low, high, last, level)))
                if bool(np.asarray(t.tested.disjoint(float(fv.level))).ravel()[0]):
                    row["note"] = ("the looks' intervals do not overlap: shown, the shortest interval meeting each "
                                   "(the estimate is the last look's)")
                elif not (low <= est <= high):
                    row["note"] = "the estimate lies outside the interval (the looks disagree)"
            elif last.n >= 2:
                row["note"] = f"no interval at {1 - float(fv.level) * share:.4g} from {last.n} values"
        if np.isnan(row["ratio"]):
            row["verdict_kind"], row["within_margin"] = "inconclusive", False
        if np.isnan(padj) and not np.isnan(pv):
            row["note"] = "; ".join(x for x in (row["note"], "its p-value passed BH but its interval holds 1: not "
                                                "counted among the family's differences (no adjusted p-value)") if x)
        out.append(row)
    return out


def _detectable(low: float, high: float, last: paired.Location, level: float) -> float:
    """The mde (log units) of a comparison whose interval shown is [low, high]: the difference its
    test would call with rules.POWER power (`_detectable_power`), but never more than the farther
    end of that interval from 0, max(high, -low): a difference beyond it in either direction the
    interval excludes already, so an mde past it would promise less than the row shows (an
    inconclusive 1.04 [0.748, 1.56] read "MDE x/÷ 1.67").  A difference of the mde or more is then
    either excluded by the interval or, at the spread measured, called with that power."""
    return min(_detectable_power(low, high, last, level), max(high, -low))


def _detectable_power(low: float, high: float, last: paired.Location, level: float) -> float:
    """The difference (log units) that a comparison whose interval shown is [low, high] and whose
    last look is `last` calls with rules.POWER power at `level`: read off the last look's own
    interval at that level, since the
    last look is the one whose test a difference of that size must pass (the interval shown, the
    intersection of every look's interval, can be narrower than any one look's and so would
    promise power no look has); but never more than the interval shown spans (its full width).
    Where that interval is the hull below the signed-rank test's floor (`Location.is_hull`), off its
    longer side about the estimate: there a difference is called only when every pair's difference
    has the same sign, so a difference upward must clear the distance from the estimate down to the
    lowest pair, which can be far more than the half-width.  Without the last look's own interval,
    the interval shown."""
    own_low, own_high = (float(np.asarray(x)) for x in last.interval(level))
    half = (high - low) / 2
    if np.isfinite(own_low) and np.isfinite(own_high):
        half = max(half, (own_high - own_low) / 2)
        if bool(np.asarray(last.is_hull(level)).ravel()[0]):
            est = float(np.asarray(last.estimate))
            half = max(half, own_high - est, est - own_low)
    mde = float(multiplicity.detectable(half, level, str(last.test_at(level)), paired.t_dof(last.n), rules.POWER))
    return min(mde, high - low)


def compare_pair(a_codes, a_values, b_codes, b_values, confidence: float = rules.CONFIDENCE,
                 paired_data: bool = True, resolution: float = 0.0) -> dict:
    """One comparison on its own (a family of one, a fixed design): ratio a / b with its
    `confidence` interval, p-value and every descriptive statistic.  `resolution`: the metric's
    grid (rules.resolution), as every table of that metric reads it."""
    alpha = 1 - confidence
    t = pair_test(a_codes, a_values, b_codes, b_values, paired_data, level_min=alpha, resolution=resolution)
    return {**t.stats, **decide_family([t], alpha, MARGIN, 1)[0]}


def _finish(rows: list[dict], tests: list[PairTest], family: str, a_label, b_label, metric: str, margin: float,
            alpha: float, m: int) -> list[dict]:
    decided = decide_family(tests, alpha, margin, m)
    for r, t, d in zip(rows, tests, decided):
        note = d.pop("note")
        r.update(t.stats)
        r.update(d)
        if note:
            r["warning"] = "; ".join(filter(None, [r["warning"], note]))
        r["verdict"] = rules.verdict_text(r["verdict_kind"], r["within_margin"], a_label(r), b_label(r), metric, margin)
        r["family"], r["family_title"], r["family_size"] = family, FAMILY_TITLES[family], m
    return rows


# the family that makes some of a family's comparisons too, named in its rows' `also_in`
ALSO_IN = {"models": "variants", "variants": "models"}
TEST_COLUMNS = ["test", "p_value", "p_adjusted", "effect_size", "cliffs_delta", "mde", "verdict", "verdict_kind",
                "within_margin"]
STAT_COLUMNS = ["metric", "pairing", "pairs", "{a}_samples", "{b}_samples", "{a}_median", "{b}_median",
                "{a}_threads", "{b}_threads", "ratio",
                "ratio_ci_low", "ratio_ci_high", "ci_level", "test", "p_value", "p_adjusted", "effect_size",
                "cliffs_delta", "mde", "verdict", "verdict_kind", "within_margin", "family", "family_title",
                "family_size", "looks", "warning"]


def _table(df: pd.DataFrame, metric: str, family: str, describe_pair, a_prefix: str, b_prefix: str,
           a_label, b_label, margin: float, alpha: float, tests: bool, design,
           baseline: str | None = None) -> pd.DataFrame:
    cv = CellValues(df, metric)
    uncounted = cv.uncounted()
    pairs = comparisons([*cv.refs(), *uncounted], family, baseline=baseline)
    # a comparison both the models and the variants family make (another model of one language
    # against that language's default tasks): the same samples, an interval at each family's level;
    # each row says whether the other family has it too, which the tables' captions count
    other = ALSO_IN.get(family)
    theirs = set(comparisons([*cv.refs(), *uncounted], other)) if other else set()
    design = _design(df, design)
    m = design.size(family, len(pairs)) if design is not None else len(pairs)
    looks = design.plan_looks() if design is not None else multiplicity.Looks((0,))
    level_min = alpha / max(m, 1)
    rows: list[dict] = []
    tested: list[PairTest] = []
    none = (np.array([], dtype=np.int64), np.array([], dtype=float))
    for a, b in pairs:
        t = pair_test(*cv.cells.get(a, none), *cv.cells.get(b, none), cv.paired_by_design(a, b), looks, level_min,
                      rules.resolution(metric), cv.unpaired_reason(a, b))
        missing = [f"not tested: no value of the {cell_name(ref)} cell counts for {metric}: {uncounted[ref]}"
                   for ref in (a, b) if ref in uncounted]
        if missing:  # the design pairs them; no pair counts
            t.stats.update(warning="; ".join(missing), pairing="paired" if cv.paired_data else "unpaired")
        # a cell some of whose valid samples do not count (memory: not every task alive at once): why,
        # before the counts of samples and pairs it leaves
        left = [x for x in (cv.left_out(ref) for ref in (a, b)) if x]
        if left:
            t.stats["warning"] = "; ".join(filter(None, [*left, t.stats["warning"]]))
        # a memory cell whose values are dispersed (quality.dispersion_warning): every row of it says so
        spread = cv.dispersed((a, b))
        if spread:
            t.stats["warning"] = "; ".join(filter(None, [t.stats["warning"], *spread]))
        rows.append({**describe_pair(a, b), "metric": metric, "a_threads": cv.threads_of(a),
                     "b_threads": cv.threads_of(b),
                     **({"also_in": other if (a, b) in theirs else ""} if other else {})})
        tested.append(t)
    if rows:
        rows = _finish(rows, tested, family, a_label, b_label, metric, margin, alpha, m)
    if family == "go_vs_rust":  # like for like: both runtimes with the same threads, or the row says not
        for r in rows:
            note = threads_differ(r["a_threads"], r["b_threads"], r.get("threads_requested"))
            if note:
                r["warning"] = "; ".join(filter(None, [r.get("warning"), note]))
    front = list(describe_pair.columns)
    shared = sorted({k for r in rows for k in r if k.startswith("p_") and k not in ("p_value", "p_adjusted")})

    def side(prefix: str, name: str) -> str:
        return f"{prefix}_{name}" if prefix else name

    stat_cols = [c.format(a=a_prefix, b=b_prefix).lstrip("_") for c in STAT_COLUMNS]
    for r in rows:
        for k in ("a_samples", "b_samples", "a_median", "b_median", "a_threads", "b_threads"):
            r[side(a_prefix if k.startswith("a_") else b_prefix, k[2:])] = r.pop(k)
        r.pop("sd_log", None)
    cols = [*front[:front.index("shared_params") + 1], *shared, *front[front.index("shared_params") + 1:], *stat_cols,
            *(["also_in"] if other else [])]
    out = pd.DataFrame(rows, columns=cols)
    if design is None and "block" in df.columns and not out.empty:
        out = _flag_uneven_blocks(out, df)
    if not tests:
        out = out.drop(columns=[c for c in TEST_COLUMNS if c in out.columns])
    return out


# What every table, figure and sentence reads for a row that `untested` holds: not "inconclusive",
# which would count it among the rows whose spread was measured
NOT_TESTED = "not tested"


def untested(table: pd.DataFrame) -> pd.Series:
    """Per row of a comparison table: a comparison that could not be tested (fewer than
    rules.MIN_PAIRS pairs of values that count, or none: its warning says why), which has no ratio
    and no interval and reads inconclusive (its verdict_kind); shown as NOT_TESTED and counted
    apart from the open rows, whose spread was measured."""
    if table.empty or "verdict_kind" not in table.columns:
        return pd.Series(False, index=table.index)
    ratio = pd.to_numeric(table.get("ratio", pd.Series(np.nan, index=table.index)), errors="coerce")
    return (table["verdict_kind"] == "inconclusive") & ratio.isna()


def threads_differ(go, rust, requested=None) -> str:
    """The warning of a Go-vs-Rust row whose two programs ran with different threads (as their
    samples reported them): not like for like, since each runtime had other threads to run on (the
    samples of programs older than cpu_loops' one-thread loops in both languages: Rust's without a
    runtime against Go's GOMAXPROCS of 2); '' where they ran with the same or either is unknown."""
    if any(v is None or pd.isna(v) for v in (go, rust)) or float(go) == float(rust):
        return ""
    asked = ("" if requested is None or pd.isna(requested) else
             f" where {int(float(requested))} were requested for both")
    return (f"not the same threads: Go ran with {int(float(go))}, Rust with {int(float(rust))}{asked}; the ratio "
            "compares the two programs as they run, not the two runtimes on equal threads")


def _flag_uneven_blocks(out: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    """More than one measured block holding only some of the cells is the mark of a sequential
    run (an interrupted fixed run leaves one partial block): analysed without its design, the
    p-values are not adjusted for the looks, and the rows say so."""
    measured = df[df["phase"] == "measured"] if "phase" in df.columns else df
    if measured.empty or "cell_id" not in measured.columns:
        return out
    every = measured["cell_id"].nunique()
    partial = int((measured.groupby("block")["cell_id"].nunique() < every).sum())
    if partial > 1:
        note = "cells had different blocks (a sequential run?): analyse with its design"
        out["warning"] = [f"{w}; {note}" if w else note for w in out["warning"]]
    return out


class _Describe:
    """Builds the identifying columns of a row of one table."""

    def __init__(self, columns: list[str], fn):
        self.columns, self.fn = columns, fn

    def __call__(self, a: CellRef, b: CellRef) -> dict:
        return self.fn(a, b)


def _work(c: CellRef) -> dict:
    shared = c.shared()
    return {"workload": c.workload, "n": c.n, "threads_requested": c.threads, "arm": c.arm,
            "shared_params": ",".join(f"{k}={v}" for k, v in shared), **{f"p_{k}": v for k, v in shared}}


_GO_RUST = _Describe(
    ["workload", "n", "threads_requested", "arm", "shared_params", "go_variant", "rust_variant", "go_model",
     "rust_model", "go_params", "rust_params", "go_default", "rust_default"],
    lambda a, b: {**_work(a), "go_variant": a.variant, "rust_variant": b.variant, "go_model": a.model,
                  "rust_model": b.model, "go_params": a.params_text, "rust_params": b.params_text,
                  "go_default": a.is_default(), "rust_default": b.is_default()})



def go_vs_rust_row(a: CellRef, b: CellRef) -> dict:
    """The identifying columns of the Go-vs-Rust table's row of a Go cell a and a Rust cell b."""
    return _GO_RUST(a, b)


_MODELS = _Describe(
    ["workload", "n", "threads_requested", "arm", "shared_params", "lang", "variant", "model", "params",
     "ref_lang", "ref_variant", "ref_model", "ref_params"],
    lambda a, b: {**_work(a), "lang": a.lang, "variant": a.variant, "model": a.model, "params": a.params_text,
                  "ref_lang": b.lang, "ref_variant": b.variant, "ref_model": b.model, "ref_params": b.params_text})

_VARIANTS = _Describe(
    ["workload", "lang", "n", "threads_requested", "arm", "shared_params", "variant", "model", "params",
     "baseline_variant", "baseline_params"],
    lambda a, b: {**_work(a), "lang": a.lang, "variant": a.variant, "model": a.model, "params": a.params_text,
                  "baseline_variant": b.variant, "baseline_params": b.params_text})

_ARMS = _Describe(
    ["workload", "lang", "variant", "n", "threads_requested", "shared_params", "params"],
    lambda a, b: {**{k: v for k, v in _work(a).items() if k != "arm"}, "lang": a.lang, "variant": a.variant,
                  "params": a.params_text})


def compare(df: pd.DataFrame, metric: str = "elapsed_s", margin: float = MARGIN, alpha: float = ALPHA, tests: bool = True, design=None) -> pd.DataFrame:
    """Go vs Rust, like for like: every Go cell against every Rust cell of the same work
    (workload, N, threads, arm, shared parameters) whose variant has the same model.
    Ratio = Go / Rust.  `design`: the sequential design of the run (Design, the plan or its dict;
    default: df.attrs["design"], else the fixed design)."""
    return _table(df, metric, "go_vs_rust", _GO_RUST, "go", "rust", lambda r: "Go", lambda r: "Rust",
                  margin, alpha, tests, design)


def compare_article(df: pd.DataFrame, metric: str = "elapsed_s", margin: float = MARGIN, alpha: float = ALPHA,
                    tests: bool = True, design=None) -> pd.DataFrame:
    """Go vs Rust with the article's own programs and parameters (plan/comparisons.py's "article"
    family, which the sequential rule decides as a family of its own): every Go cell of the
    article's settings against every Rust cell of them for the same workload and N, the work they do
    unequal included (kernel=article: the dead loop Rust's compiler removes), which the like-for-like
    table leaves out.  Empty where the plan ran none of the article's settings.  Ratio = Go / Rust."""
    return _table(df, metric, "article", _GO_RUST, "go", "rust", lambda r: "Go", lambda r: "Rust",
                  margin, alpha, tests, design)


def compare_models(df: pd.DataFrame, metric: str = "elapsed_s", margin: float = MARGIN, alpha: float = ALPHA, tests: bool = True, design=None) -> pd.DataFrame:
    """Other concurrency models (OS threads, futures, a one-thread runtime) against the task
    cells (goroutines, tokio tasks) of the same work, in either language.  Ratio = cell / task
    cell (`ref_*`)."""
    return _table(df, metric, "models", _MODELS, "", "ref",
                  lambda r: f"{r['lang']} {r['variant']} ({r['model']})",
                  lambda r: f"{r['ref_lang']} {r['ref_variant']} ({r['ref_model']})",
                  margin, alpha, tests, design)


def compare_variants(df: pd.DataFrame, metric: str = "elapsed_s", baseline: str | None = None,
                     margin: float = MARGIN, alpha: float = ALPHA, design=None) -> pd.DataFrame:
    """Within one language: every cell against the baseline of the same work (workload, N,
    threads, arm, shared parameters): the default variant (or `baseline`) with the default values
    of the language's own parameters.  Ratio = variant / baseline."""
    return _table(df, metric, "variants", _VARIANTS, "", "baseline",
                  lambda r: _named(r["variant"], r["params"], r["baseline_params"]),
                  lambda r: _named(r["baseline_variant"], r["baseline_params"], r["params"]),
                  margin, alpha, True, design, baseline=baseline)


def _named(variant, params, other) -> str:
    """A side of a variants row as its verdict names it: the variant, with the parameters whose
    values differ from the other side's ('tokio', 'default [pool=64]'), not every parameter of the
    work ('tokio [iterations=10]', which both sides share)."""
    def as_dict(text) -> dict:
        return dict(kv.split("=", 1) for kv in str(text or "").split(",") if "=" in kv)

    own, theirs = as_dict(params), as_dict(other)
    differing = ",".join(f"{k}={v}" for k, v in own.items() if theirs.get(k) != v)
    return f"{variant} [{differing}]" if differing else str(variant)


def compare_arms(df: pd.DataFrame, metric: str = "elapsed_s", margin: float = MARGIN, alpha: float = ALPHA, design=None) -> pd.DataFrame:
    """An A/A run: arm A against arm B of every cell (the same program and arguments).  Ratio = A / B."""
    return _table(df, metric, "aa", _ARMS, "a", "b", lambda r: "A", lambda r: "B",
                  margin, alpha, True, design)


TABLES = {"go_vs_rust": compare, "article": compare_article, "models": compare_models, "variants": compare_variants,
          "aa": compare_arms}


def all_tables(df: pd.DataFrame, metrics: Iterable[str] = ("elapsed_s",), design=None,
               margin: float = MARGIN) -> dict[str, pd.DataFrame]:
    """Every comparison table of a frame, named `<family>_<metric>`; empty tables are left out."""
    out = {}
    for m in metrics:
        for name, fn in TABLES.items():
            t = fn(df, m, margin=margin, design=design)
            if not t.empty:
                out[f"{name}_{m}"] = t
    return out


def shared_params(df: pd.DataFrame) -> pd.Series:
    """Per row, `k=v,...` of the parameters both languages take (see Workload.shared_params)."""
    df = with_param_columns(df)
    if df.empty:
        return pd.Series(dtype=str)

    def shared(row) -> str:
        names = WORKLOADS[row["workload"]].shared_params
        return ",".join(f"{k}={row[f'p_{k}']}" for k in sorted(names)
                        if f"p_{k}" in row and row[f"p_{k}"] is not None and not pd.isna(row[f"p_{k}"]))

    return df.apply(shared, axis=1)
