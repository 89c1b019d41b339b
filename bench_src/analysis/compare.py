"""Comparisons: Go vs Rust for the same work (like for like), other concurrency models against
tasks, variants against their language's default, and A/A arms.

Every comparison of two cells measured in the same blocks is paired: the per-block difference d
of log values (a block holds both cells once, in a random order, so slow drift and a disturbed
block hit both sides alike) is tested with the exact Wilcoxon signed-rank test and estimated by
the Hodges-Lehmann estimate with its exact interval; the reported ratio is exp of that estimate
(a / b: Go / Rust, other model / task, variant / baseline, A / B) and its interval is exp of the
interval, so the estimate, the interval and the test are about one quantity (the centre of the
per-block log ratio).  Where the cells do not share enough blocks (`pairing` = "unpaired", with
the reason in `warning`) the Mann-Whitney test and the two-sample Hodges-Lehmann shift of the log
values are used instead.  Each table and metric is one family: the p-values are Holm-corrected
over it.  Verdicts follow `rules.decide`; docs/statistics.md states every rule.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from . import ranktests, rules, stats
from .families import FAMILY_TITLES, CellRef, comparisons, param_columns, plan_comparisons, with_param_columns
from ..catalogue import WORKLOADS

MARGIN = rules.MARGIN
ALPHA = rules.ALPHA
TIME_METRICS = rules.TIME_METRICS
CELL_COLUMNS = ["workload", "lang", "variant", "n", "threads_requested", "arm"]


# --- small helpers kept for callers and tests ----------------------------------------------------
def cliffs_delta(a, b) -> float:
    """P(a > b) - P(a < b) over all pairs of one value of a and one of b."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    if x.size == 0 or y.size == 0:
        return np.nan
    return float(np.sign(x[:, None] - y[None, :]).mean())


def mann_whitney_p(a, b) -> float:
    x, y = np.asarray(a, float), np.asarray(b, float)
    if x.size < 2 or y.size < 2:
        return np.nan
    return ranktests.mann_whitney_p(x, y)


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values; NaN stays NaN and is not counted in the family.
    (statsmodels' multipletests gives the same values but runs a garbage collection on every
    call, 40 ms, too slow for the simulations that check these tables; tests compare the two.)"""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        q = p[ok]
        order = np.argsort(q, kind="stable")
        m = q.size
        stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * q[order]))
        adjusted = np.empty(m)
        adjusted[order] = stepped
        out[ok] = adjusted
    return out


def verdict(ratio: float, low: float, high: float, p_adjusted: float, a: str, b: str, metric: str,
            margin: float = MARGIN, alpha: float = ALPHA) -> str:
    """The readable verdict of one comparison (see rules.decide)."""
    if isinstance(ratio, float) and math.isnan(ratio):
        return "inconclusive"
    kind, inside = rules.decide(low, high, p_adjusted, margin, alpha)
    return rules.verdict_text(kind, inside, a, b, metric, margin)


# --- the sequential design a run was sampled with -----------------------------------------------
@dataclass(frozen=True)
class Design:
    """Looks of the sequential rule: pairs per comparison at each look, the share of alpha spent
    there before families adjust it (rules.family_spending), and the planned size of each family.
    A single look is the fixed design."""

    looks: tuple[int, ...]
    spending: tuple[float, ...] = field(default=(1.0,))
    family_sizes: tuple[tuple[str, int], ...] = ()

    @property
    def sequential(self) -> bool:
        return len(self.looks) > 1

    def shares(self, family: str, m: int | None = None) -> tuple[float, ...]:
        """The share of alpha `family` spends at each look: from its planned size, or from m
        (the comparisons at hand) when the plan recorded none."""
        if not self.sequential:
            return self.spending
        size = dict(self.family_sizes).get(family, m)
        return self.spending if size is None else rules.family_spending(size, self.looks)

    def for_family(self, family: str, m: int | None = None) -> "Design":
        """This design with the shares of one family (what its comparisons are tested with)."""
        if not self.sequential:
            return self
        return Design(self.looks, self.shares(family, m), self.family_sizes)

    def to_dict(self) -> dict:
        return {"looks": list(self.looks), "spending": list(self.spending),
                "family_sizes": dict(self.family_sizes),
                "family_spending": {f: list(self.shares(f)) for f, _ in self.family_sizes}}

    @classmethod
    def from_plan(cls, plan) -> "Design":
        """From a Plan or the plan dict stored in meta.json."""
        if isinstance(plan, Mapping):
            from ..plan.model import plan_from_dict  # the plan layer imports this module's package
            try:
                plan = plan_from_dict(plan)
            except KeyError:  # only the sampling fields: the looks, and no family sizes
                pass
        get = (lambda k: plan.get(k)) if isinstance(plan, Mapping) else (lambda k: getattr(plan, k, None))
        looks = rules.look_counts(int(get("samples")), int(get("max_samples") or 0),
                                  int(get("looks") or rules.DEFAULT_LOOKS))
        sizes = ()
        if len(looks) > 1 and hasattr(plan, "cells"):
            sizes = tuple((f, len(pairs)) for f, pairs in plan_comparisons(plan).items())
        return cls(looks, rules.look_spending(len(looks)), sizes)


def _design(df: pd.DataFrame, design) -> Design | None:
    design = design if design is not None else df.attrs.get("design")
    if design is None or isinstance(design, Design):
        return design
    if isinstance(design, Mapping) and "looks" in design:
        return Design(tuple(design["looks"]), tuple(design.get("spending", rules.look_spending(len(design["looks"])))),
                      tuple((f, int(m)) for f, m in (design.get("family_sizes") or {}).items()))
    return Design.from_plan(design)


# --- per-cell values, keyed by block ---------------------------------------------------------------
class CellValues:
    """The valid values of `metric` per cell, with the block each was taken in."""

    def __init__(self, df: pd.DataFrame, metric: str):
        if metric not in df.columns:
            raise ValueError(f"unknown metric {metric!r}; the frame has no such column")
        valid = df[df["valid"].astype(bool)] if "valid" in df.columns else df
        valid = with_param_columns(valid)
        self.paired_data = "block" in valid.columns
        keys = list(CELL_COLUMNS) + param_columns(valid)
        for k in CELL_COLUMNS:
            if k not in valid.columns:
                valid = valid.assign(**{k: "" if k == "arm" else None})
        if self.paired_data and not valid.empty:
            blocks = pd.to_numeric(valid["block"], errors="coerce").fillna(-1).to_numpy(dtype=np.int64)
            if "run_id" in valid.columns and valid["run_id"].nunique(dropna=False) > 1:
                codes, _ = pd.factorize(pd.MultiIndex.from_arrays([valid["run_id"].astype(str), blocks]))
            else:
                codes = blocks
        else:
            codes = np.arange(len(valid))
        values = pd.to_numeric(valid[metric], errors="coerce").to_numpy(dtype=float)
        self.cells: dict[CellRef, tuple[np.ndarray, np.ndarray]] = {}
        self.params: dict[CellRef, str] = {}
        if valid.empty:
            return
        pcols = param_columns(valid)
        if "cell_id" in valid.columns:  # one group per cell id, its key read from the first row
            groups = list(valid.groupby("cell_id", sort=False).indices.values())
            first = valid[keys].iloc[[idx[0] for idx in groups]].to_numpy(dtype=object)
            items = ((tuple(row), idx) for row, idx in zip(first, groups))
        else:
            items = valid.groupby(keys, dropna=False, sort=False).indices.items()
        for key, idx in items:
            key = key if isinstance(key, tuple) else (key,)
            w, lang, variant, n, t, arm = key[:6]
            params = tuple(sorted((c[2:], str(v)) for c, v in zip(pcols, key[6:])
                                  if v is not None and not (isinstance(v, float) and math.isnan(v)) and v is not pd.NA))
            t = None if t is None or t is pd.NA or (isinstance(t, float) and math.isnan(t)) or t == "" else int(t)
            arm = "" if arm is None or arm is pd.NA or (isinstance(arm, float) and math.isnan(arm)) else str(arm)
            ref = CellRef(w, lang, variant, int(n), t, arm, params)
            v, c = values[idx], codes[idx]
            keep = ~np.isnan(v)
            order = np.argsort(c[keep], kind="stable")
            self.cells[ref] = (c[keep][order], v[keep][order])

    def refs(self) -> list[CellRef]:
        return list(self.cells)


def _block_values(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One value per block (the median when a block holds a cell more than once)."""
    uniq, start = np.unique(codes, return_index=True)
    if uniq.size == codes.size:
        return codes, values
    return uniq, np.array([np.median(values[codes == u]) for u in uniq])


def _positive_logs(x: np.ndarray) -> np.ndarray | None:
    return np.log(x) if x.size and np.all(x > 0) else None


def _p_with_looks(d: np.ndarray, design: Design | None) -> tuple[float, int]:
    """The paired p-value of d; with a sequential design, the smallest over the looks of p at
    that look divided by the look's share of alpha (Bonferroni over looks), and the looks used."""
    if design is None or not design.sequential:
        return (ranktests.signed_rank_p(d)[0], 1)
    best = 1.0
    for count, share in zip(design.looks, design.spending):
        if share <= 0:  # a look this family cannot use spends nothing (rules.family_spending)
            continue
        p = ranktests.signed_rank_p(d[:min(count, d.size)])[0]
        if not np.isnan(p):
            best = min(best, p / share)
    return (float(min(1.0, best)), sum(1 for c in design.looks if c <= d.size) or 1)


def compare_pair(a_codes, a_values, b_codes, b_values, confidence: float = stats.CONFIDENCE,
                 paired_data: bool = True, design: Design | None = None) -> dict:
    """Every statistic of one comparison of cell a against cell b (ratio a / b)."""
    a_values, b_values = np.asarray(a_values, float), np.asarray(b_values, float)
    out = {"a_samples": int(a_values.size), "b_samples": int(b_values.size),
           "a_median": float(np.median(a_values)) if a_values.size else np.nan,
           "b_median": float(np.median(b_values)) if b_values.size else np.nan,
           "pairing": "unpaired", "pairs": 0, "ratio": np.nan, "ratio_ci_low": np.nan, "ratio_ci_high": np.nan,
           "ci_coverage": np.nan, "p_value": np.nan, "effect_size": np.nan, "cliffs_delta": np.nan,
           "sd_log": np.nan, "looks": 1, "warning": ""}
    notes = []
    few = stats.few_warning(min(a_values.size, b_values.size), confidence)
    if few:
        notes.append(few)
    la, lb = _positive_logs(a_values), _positive_logs(b_values)
    if la is None or lb is None:
        if a_values.size and b_values.size:
            notes.append("values <= 0: no ratio of logs")
        out["warning"] = "; ".join(notes)
        return out
    out["cliffs_delta"] = cliffs_delta(a_values, b_values)
    pairs = 0
    if paired_data:
        ac, av = _block_values(np.asarray(a_codes), la)
        bc, bv = _block_values(np.asarray(b_codes), lb)
        _, ia, ib = np.intersect1d(ac, bc, assume_unique=True, return_indices=True)
        pairs = ia.size
    needed = max(2, math.ceil(rules.MIN_PAIRS_FRACTION * min(la.size, lb.size)))
    if paired_data and pairs >= needed:
        order = np.argsort(ac[ia], kind="stable")
        d = av[ia][order] - bv[ib][order]
        est, lo, hi, cov = ranktests.hodges_lehmann_paired(d, confidence)
        p, effect = ranktests.signed_rank_p(d)
        looks = 1
        if design is not None and design.sequential:
            p, looks = _p_with_looks(d, design)
        out.update(pairing="paired", pairs=int(pairs), p_value=p, looks=looks, effect_size=effect,
                   sd_log=float(np.std(d, ddof=1)) if d.size > 1 else np.nan)
    else:
        if not paired_data:
            notes.append("unpaired: the frame has no block column")
        elif la.size and lb.size:
            notes.append(f"unpaired: only {pairs} blocks hold both cells (paired needs {needed})")
        est, lo, hi, cov = ranktests.hodges_lehmann_shift(la, lb, confidence)
        p = ranktests.mann_whitney_p(la, lb) if la.size > 1 and lb.size > 1 else np.nan
        if design is not None and design.sequential and not np.isnan(p):
            p = min(1.0, p * len(design.looks))
        pooled = (np.sqrt(((la.size - 1) * la.var(ddof=1) + (lb.size - 1) * lb.var(ddof=1)) / (la.size + lb.size - 2))
                  if la.size > 1 and lb.size > 1 else np.nan)
        out.update(p_value=p, effect_size=out["cliffs_delta"], sd_log=float(pooled))
    if np.isnan(lo) and min(la.size, lb.size) > 0:
        notes.append(f"no {confidence:.0%} interval from {pairs or min(la.size, lb.size)} "
                     f"{'pairs' if pairs else 'samples'}")
    out.update(ratio=float(np.exp(est)), ratio_ci_low=float(np.exp(lo)), ratio_ci_high=float(np.exp(hi)),
               ci_coverage=cov)
    out["warning"] = "; ".join(dict.fromkeys(notes))
    return out


def _mde(row: dict, level: float) -> float:
    """The smallest relative difference (ratio - 1) the comparison could detect with rules.POWER
    power at the given level, from its pairs (or sample sizes) and the spread of its log values."""
    sd = row.get("sd_log", np.nan)
    if row["pairing"] == "paired":
        theta = ranktests.detectable_shift_paired(int(row["pairs"]), float(level), rules.POWER)
    elif row["a_samples"] > 1 and row["b_samples"] > 1:
        theta = ranktests.detectable_shift_unpaired(int(row["a_samples"]), int(row["b_samples"]), float(level),
                                                    rules.POWER)
    else:
        return np.nan
    if not np.isfinite(theta):
        return np.inf
    if np.isnan(sd):
        return np.nan
    return float(np.expm1(theta * sd))


def _finish(rows: list[dict], family: str, a_label, b_label, metric: str, margin: float, alpha: float,
            tests: bool, design: Design | None) -> list[dict]:
    p = np.array([r["p_value"] for r in rows], dtype=float)
    adjusted = holm(p)
    tested = int((~np.isnan(p)).sum())
    share = design.spending[-1] if design is not None and design.sequential else 1.0
    level = alpha * share / max(tested, 1)
    for r, ph in zip(rows, adjusted):
        r["p_holm"] = ph
        kind, inside = rules.decide(r["ratio_ci_low"], r["ratio_ci_high"], ph, margin, alpha)
        if np.isnan(r["ratio"]):
            kind, inside = "inconclusive", False
        r["verdict_kind"], r["within_margin"] = kind, bool(inside)
        r["verdict"] = rules.verdict_text(kind, inside, a_label(r), b_label(r), metric, margin)
        r["mde"] = _mde(r, level) if tests else np.nan
        r["family"], r["family_title"], r["family_size"] = family, FAMILY_TITLES[family], tested
    return rows


TEST_COLUMNS = ["p_value", "p_holm", "effect_size", "cliffs_delta", "mde", "verdict", "verdict_kind",
                "within_margin"]
STAT_COLUMNS = ["metric", "pairing", "pairs", "{a}_samples", "{b}_samples", "{a}_median", "{b}_median", "ratio",
                "ratio_ci_low", "ratio_ci_high", "ci_coverage", "p_value", "p_holm", "effect_size", "cliffs_delta",
                "mde", "verdict", "verdict_kind", "within_margin", "family", "family_title", "family_size", "looks",
                "warning"]


def _table(df: pd.DataFrame, metric: str, family: str, describe_pair, a_prefix: str, b_prefix: str,
           a_label, b_label, confidence: float, margin: float, alpha: float, tests: bool, design,
           baseline: str | None = None) -> pd.DataFrame:
    cv = CellValues(df, metric)
    pairs = comparisons(cv.refs(), family, baseline=baseline)
    design = _design(df, design)
    design = design.for_family(family, len(pairs)) if design is not None else None
    rows: list[dict] = []
    for a, b in pairs:
        ac, av = cv.cells[a]
        bc, bv = cv.cells[b]
        s = compare_pair(ac, av, bc, bv, confidence, cv.paired_data, design)
        rows.append({**describe_pair(a, b), "metric": metric, **s})
    if rows:
        rows = _finish(rows, family, a_label, b_label, metric, margin, alpha, tests, design)
    front = list(describe_pair.columns)
    shared = sorted({k for r in rows for k in r if k.startswith("p_") and k not in ("p_value", "p_holm")})

    def side(prefix: str, name: str) -> str:
        return f"{prefix}_{name}" if prefix else name

    stat_cols = [c.format(a=a_prefix, b=b_prefix).lstrip("_") for c in STAT_COLUMNS]
    for r in rows:
        for k in ("a_samples", "b_samples", "a_median", "b_median"):
            r[side(a_prefix if k.startswith("a_") else b_prefix, k[2:])] = r.pop(k)
        r.pop("sd_log", None)
    cols = [*front[:front.index("shared_params") + 1], *shared, *front[front.index("shared_params") + 1:], *stat_cols]
    out = pd.DataFrame(rows, columns=cols)
    if design is None and "block" in df.columns and not out.empty:
        out = _flag_uneven_blocks(out, df)
    if not tests:
        out = out.drop(columns=[c for c in TEST_COLUMNS if c in out.columns])
    return out


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


def compare(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = stats.CONFIDENCE,
            margin: float = MARGIN, alpha: float = ALPHA, tests: bool = True, design=None) -> pd.DataFrame:
    """Go vs Rust, like for like: every Go cell against every Rust cell of the same work
    (workload, N, threads, arm, shared parameters) whose variant has the same model.
    Ratio = Go / Rust.  `design`: the sequential design of the run (Design, the plan or its dict;
    default: df.attrs["design"], else the fixed design)."""
    return _table(df, metric, "go_vs_rust", _GO_RUST, "go", "rust", lambda r: "Go", lambda r: "Rust",
                  confidence, margin, alpha, tests, design)


def compare_models(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = stats.CONFIDENCE,
                   margin: float = MARGIN, alpha: float = ALPHA, tests: bool = True, design=None) -> pd.DataFrame:
    """Other concurrency models (OS threads, futures, a one-thread runtime) against the task
    cells (goroutines, tokio tasks) of the same work, in either language.  Ratio = cell / task
    cell (`ref_*`)."""
    return _table(df, metric, "models", _MODELS, "", "ref",
                  lambda r: f"{r['lang']} {r['variant']} ({r['model']})",
                  lambda r: f"{r['ref_lang']} {r['ref_variant']} ({r['ref_model']})",
                  confidence, margin, alpha, tests, design)


def compare_variants(df: pd.DataFrame, metric: str = "elapsed_s", baseline: str | None = None,
                     confidence: float = stats.CONFIDENCE, margin: float = MARGIN,
                     alpha: float = ALPHA, design=None) -> pd.DataFrame:
    """Within one language: every cell against the baseline of the same work (workload, N,
    threads, arm, shared parameters): the default variant (or `baseline`) with the default values
    of the language's own parameters.  Ratio = variant / baseline."""
    return _table(df, metric, "variants", _VARIANTS, "", "baseline",
                  lambda r: f"{r['variant']} [{r['params']}]", lambda r: f"{r['baseline_variant']} [{r['baseline_params']}]",
                  confidence, margin, alpha, True, design, baseline=baseline)


def compare_arms(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = stats.CONFIDENCE,
                 margin: float = MARGIN, alpha: float = ALPHA, design=None) -> pd.DataFrame:
    """An A/A run: arm A against arm B of every cell (the same program and arguments).  Ratio = A / B."""
    return _table(df, metric, "aa", _ARMS, "a", "b", lambda r: "A", lambda r: "B",
                  confidence, margin, alpha, True, design)


TABLES = {"go_vs_rust": compare, "models": compare_models, "variants": compare_variants, "aa": compare_arms}


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
