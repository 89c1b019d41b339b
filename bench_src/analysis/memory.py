"""Memory and scheduling views for the related experiments: RSS timelines with the programs'
phases, threads vs goroutines side by side, and ping-pong round trips per second."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..catalogue import WORKLOADS
from ..plan.comparisons import CellRef, comparisons
from . import fieller, rules
from .compare import CellValues, go_vs_rust_row
from .families import key_text, key_threads
from .validity import all_alive, counted
from .stats import CELL_KEYS, summarize, threads_used


def returned_memory(tl: pd.DataFrame) -> pd.DataFrame:
    """Per sample: peak RSS while the tasks ran, RSS at the end of the linger, and the share given
    back; with the sample's cell (`cell_id`, `params`, `p_<key>`), so that cells of one language,
    variant and N that differ in a parameter (wait, linger) are never pooled.  A sample without a
    point inside its linger (a linger shorter than the timeline's step) has no RSS at the end and
    no share: NaN, not the peak's value."""
    cell_columns = [c for c in ("cell_id", "params", *(c for c in tl.columns if c.startswith("p_")))
                    if c in tl.columns]
    rows = []
    for sid, g in tl.groupby("sample_id"):
        g = g[g["rss_mib"] > 0].sort_values("t_s")  # a point read as the process exited holds nothing
        if g.empty:
            continue
        fin, end = g["finished_ns"].iloc[0], g["linger_end_ns"].iloc[0]
        during = g[g["t_s"] <= (fin / 1e9 if pd.notna(fin) else g["t_s"].max())]
        lingering = g[g["t_s"] <= end / 1e9] if pd.notna(end) else g
        last = lingering["rss_mib"].iloc[-1] if not lingering.empty else float("nan")
        peak = during["rss_mib"].max() if not during.empty else g["rss_mib"].max()
        rows.append({"sample_id": sid, "lang": g["lang"].iloc[0], "variant": g["variant"].iloc[0],
                     "n": g["n"].iloc[0], **{c: g[c].iloc[0] for c in cell_columns},
                     "peak_rss_mib": peak, "last_rss_mib": last,
                     "returned_share": 1 - last / peak if peak and pd.notna(last) else float("nan")})
    return pd.DataFrame(rows)


def side_by_side(df: pd.DataFrame, workload: str = "threads_vs_tasks",
                 metrics=("wall_s", "cpu_s", "user_s", "sys_s", "peak_rss_mib", "context_switches")) -> pd.DataFrame:
    """Per cell of a workload, the median and its distribution-free CI (`ci_coverage`: its exact
    coverage, nearest 95%) of several metrics, in long form (one row per cell and metric, with the
    cell's `p_<key>` columns)."""
    part = df[df["workload"] == workload]
    tables = [summarize(part, m) for m in metrics]
    tables = [t for t in tables if not t.empty]
    if not tables:
        return pd.DataFrame(columns=[*CELL_KEYS, "metric", "samples", "median", "ci_low", "ci_high"])
    out = pd.concat(tables, ignore_index=True)
    keep = [*CELL_KEYS, *(c for c in out.columns if c.startswith("p_")), "metric", "samples", "median", "ci_low",
            "ci_high", "ci_coverage", "ci_coverage_kind"]
    return out[keep]


def ping_pong_rates(df: pd.DataFrame) -> pd.DataFrame:
    """Round trips per second (N / workload time) per runtime flavour, buffer and mode."""
    t = side_by_side(df, "ping_pong", metrics=("per_s",))
    if t.empty:
        return t
    t["buffer"] = pd.to_numeric(t["p_buffer"], errors="coerce").fillna(-1).astype(int)
    t["mode"] = t["p_mode"]
    return t.rename(columns={"median": "round_trips_per_s"}).sort_values(["mode", "buffer", "lang", "variant"])


# --- the memory that belongs to the workload -----------------------------------------------------
BASELINE_N = 1  # idle_tasks at N = 1, released at once: the program, its runtime and linked libraries
METRIC = "peak_rss_mib"


def bytes_per_task(df: pd.DataFrame, metric: str = "peak_rss_bytes") -> tuple[pd.DataFrame, int]:
    """Per idle_tasks series, bytes per task (the slope of peak memory over N, bench_src.analysis.
    scaling) from the samples in which all N tasks were alive at once (validity.counted, which
    per_task_cost reads: an N where none was is named in the row's warning); and how many valid
    samples were left out because early tasks had already finished."""
    from .scaling import per_task_cost

    idle = df[df["workload"] == "idle_tasks"]
    live = all_alive(idle)
    left_out = int((idle["valid"] & ~live).sum()) if "valid" in idle else int((~live).sum())
    return per_task_cost(idle, metric), left_out


def is_baseline(ref: CellRef) -> bool:
    """Whether a cell measures a program's fixed memory: idle_tasks at N = BASELINE_N with
    wait=release in its language's default variant (nothing but the program, its runtime and the
    libraries linked into it)."""
    return (ref.workload == "idle_tasks" and ref.n == BASELINE_N and ref.params_dict.get("wait") == "release"
            and ref.variant == WORKLOADS["idle_tasks"].default_variant(ref.lang))


def _baseline_cells(cv: CellValues) -> dict[tuple[str, int | None], list[CellRef]]:
    out: dict[tuple[str, int | None], list[CellRef]] = {}
    for ref in cv.refs():
        if is_baseline(ref):
            out.setdefault((ref.lang, ref.threads), []).append(ref)
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], -1 if kv[0][1] is None else kv[0][1])))


def baselines(df: pd.DataFrame) -> pd.DataFrame:
    """Per language and threads: the program's fixed peak memory, the median peak RSS of its
    baseline cells (`is_baseline`) over their valid samples.  Empty when the run has no such cell."""
    cols = ["lang", "threads_requested", "baseline_samples", "baseline_mib"]
    if METRIC not in df.columns:
        return pd.DataFrame(columns=cols)
    cv = CellValues(df, METRIC)
    rows = []
    for (lang, threads), refs in _baseline_cells(cv).items():
        values = np.concatenate([cv.cells[r][1] for r in refs])
        if values.size:
            rows.append({"lang": lang, "threads_requested": threads, "baseline_samples": int(values.size),
                         "baseline_mib": float(np.median(values))})
    return pd.DataFrame(rows, columns=cols)


def _by_block(cv: CellValues, refs: list[CellRef]) -> pd.Series:
    """The values of one or more cells, one per block (the median where a block holds several), in
    block order."""
    parts = [pd.Series(cv.cells[r][1], index=cv.cells[r][0]) for r in refs]
    if not parts:
        return pd.Series(dtype=float)
    return pd.concat(parts).groupby(level=0).median().sort_index()


def _row_key(row) -> tuple:
    """What identifies a row of the Go-vs-Rust table (compare.go_vs_rust_row's columns), read alike
    from the table and from the cells (a missing value, None or NaN, reads as one)."""
    return (key_text(row.get("workload")), int(row.get("n")), key_threads(row.get("threads_requested")),
            key_text(row.get("arm")), key_text(row.get("go_variant")), key_text(row.get("rust_variant")),
            key_text(row.get("go_params")), key_text(row.get("rust_params")))


class _Amounts:
    """Each Go-vs-Rust row's two amounts above baseline, block by block, from the samples."""

    def __init__(self, samples: pd.DataFrame):
        self.cv = CellValues(samples, METRIC)
        self.pairs = {_row_key(go_vs_rust_row(a, b)): (a, b) for a, b in comparisons(self.cv.refs(), "go_vs_rust")}
        cells = _baseline_cells(self.cv)
        self.base = {k: _by_block(self.cv, refs) for k, refs in cells.items()}
        # a row at threads without a baseline cell: every baseline cell of the language, per block
        langs = {lang for lang, _ in cells}
        self.any_base = {lang: _by_block(self.cv, [r for (owner, _), refs in cells.items() if owner == lang
                                                   for r in refs]) for lang in langs}

    def _baseline(self, lang: str, threads) -> pd.Series | None:
        return self.base.get((lang, key_threads(threads)), self.any_base.get(lang))

    def ratio(self, row: dict, confidence: float) -> tuple[fieller.AmountRatio | None, str]:
        """The row's ratio of amounts with its interval, or None and why there is none."""
        cells = self.pairs.get(_row_key(row))
        if cells is None:
            return None, "no interval: the row's cells are not in the samples"
        if any(is_baseline(ref) for ref in cells):  # a side that is its own baseline has nothing above it
            return None, "a baseline itself"
        sides = []
        for ref in cells:
            base = self._baseline(ref.lang, row.get("threads_requested"))
            if base is None or base.empty:
                return None, f"no interval: no baseline samples of {ref.lang}"
            sides.append((_by_block(self.cv, [ref]), base))
        common = sides[0][0].index
        for work, base in sides:
            common = common.intersection(work.index).intersection(base.index)
        if common.size < rules.MIN_PAIRS:
            return None, (f"no interval: {common.size} blocks hold both programs and both baselines "
                          f"(it needs {rules.MIN_PAIRS})")
        (gw, gb), (rw, rb) = ((w[common].to_numpy(), b[common].to_numpy()) for w, b in sides)
        return amounts_ratio(gw, gb, rw, rb, confidence), ""


def amounts_ratio(go, go_base, rust, rust_base, confidence: float = rules.CONFIDENCE) -> fieller.AmountRatio:
    """Go's and Rust's peak RSS above their baselines and the ratio of the two, from four cells'
    values in the same blocks (element i of each from block i, in block order): per block each
    program's value less its baseline's, the means and Fieller's interval (fieller.amount_ratio),
    each mean allowed what the page grid can leave in it (fieller.grid_bound of both its cells)."""
    go, go_base, rust, rust_base = (np.asarray(v, dtype=float) for v in (go, go_base, rust, rust_base))
    resolution = rules.resolution(METRIC)
    return fieller.amount_ratio(
        go - go_base, rust - rust_base, confidence,
        fieller.grid_bound(go, resolution) + fieller.grid_bound(go_base, resolution),
        fieller.grid_bound(rust, resolution) + fieller.grid_bound(rust_base, resolution))


def _not_resolved(r: fieller.AmountRatio) -> str:
    if not r.x_resolved and not r.y_resolved:
        return ("neither amount above its baseline is told from 0: the ratio's confidence set is unbounded "
                "(it holds 0 and reaches infinity on both sides)")
    parts = []
    if not r.x_resolved:
        parts.append("Go's amount above its baseline is not told from 0 (the ratio's interval reaches 0)")
    if not r.y_resolved:
        parts.append("Rust's amount above its baseline is not told from 0 (the ratio's confidence set is "
                     "unbounded: it reaches infinity on both sides)")
    return "; ".join(parts)


ABOVE_COLUMNS = ["above_blocks", "go_above_ci_low", "go_above_ci_high", "rust_above_ci_low", "rust_above_ci_high",
                 "ratio_above_baseline", "ratio_above_ci_low", "ratio_above_ci_high", "ratio_above_gap_low",
                 "ratio_above_gap_high", "above_ci_level", "above_resolved", "above_note"]


def above_baseline(pairs: pd.DataFrame, base: pd.DataFrame, samples: pd.DataFrame | None = None,
                   confidence: float = rules.CONFIDENCE) -> pd.DataFrame:
    """A Go-vs-Rust table of peak RSS with each side's memory above its program's baseline beside
    the raw medians, and the ratio of what is above it: the part of memory that belongs to the work.

    With the `samples` (the run's frame): per block that holds the Go cell, the Rust cell and both
    baselines (at least rules.MIN_PAIRS), each side's value less its baseline's; the amounts
    (`go_above_mib`, `rust_above_mib`) are the means over those blocks (`above_blocks`) with their
    `confidence` intervals, and `ratio_above_baseline` is the ratio of the two means with Fieller's
    interval (bench_src.analysis.fieller, whose assumptions it takes): `ratio_above_ci_low` and
    `_high` the piece of the set that holds the ratio, and where the set is two rays (Rust's amount
    not told from 0) `ratio_above_gap_low` and `_high` the ratios it excludes between them (NaN
    elsewhere).  `above_resolved` is true
    only where that interval is bounded and excludes 0, i.e. both amounts are told from 0; where
    not, `above_note` says which is not.  The intervals describe (no family, no verdict).  Without
    the samples, or with fewer such blocks, the amounts are the median less the baseline and the
    ratio has no interval (not resolved; `above_note` says why).

    Rows where either amount is under one page get no ratio: less than one page above the
    baseline, the grid peak RSS is counted on (a median of an even number of samples sits half a
    page off the grid, so half a page above the baseline is no page more in use, and a ratio over
    it would be any size)."""
    if pairs.empty or base.empty:
        return pd.DataFrame()
    b = {(r.lang, key_threads(r.threads_requested)): r.baseline_mib for r in base.itertuples()}
    any_b = base.groupby("lang")["baseline_mib"].median().to_dict()
    out = pairs.copy()
    for lang in ("go", "rust"):
        out[f"{lang}_baseline_mib"] = [b.get((lang, key_threads(t)), any_b.get(lang)) for t in out["threads_requested"]]
        out[f"{lang}_above_mib"] = out[f"{lang}_median"] - out[f"{lang}_baseline_mib"]
    extra = {c: [] for c in ABOVE_COLUMNS}
    amounts = _Amounts(samples) if samples is not None and METRIC in samples.columns else None
    page = rules.resolution(METRIC)
    for i, row in enumerate(out.to_dict("records")):
        r, note = amounts.ratio(row, confidence) if amounts else (None, "no interval: the samples were not given")
        if r is not None:
            out.loc[out.index[i], ["go_above_mib", "rust_above_mib"]] = [r.x, r.y]
        go, rust = (r.x, r.y) if r is not None else (row["go_above_mib"], row["rust_above_mib"])
        ok = go >= page and rust >= page
        if r is not None and ok and not r.resolved:
            note = _not_resolved(r)
        nan = float("nan")
        values = {"above_blocks": r.blocks if r is not None else 0,
                  "go_above_ci_low": r.x_low if r else nan, "go_above_ci_high": r.x_high if r else nan,
                  "rust_above_ci_low": r.y_low if r else nan, "rust_above_ci_high": r.y_high if r else nan,
                  "ratio_above_baseline": (r.ratio if r else go / rust) if ok else nan,
                  "ratio_above_ci_low": r.low if r and ok else nan, "ratio_above_ci_high": r.high if r and ok else nan,
                  "ratio_above_gap_low": r.gap[0] if r and ok else nan,
                  "ratio_above_gap_high": r.gap[1] if r and ok else nan,
                  "above_ci_level": confidence, "above_resolved": bool(r is not None and ok and r.resolved),
                  "above_note": note if ok else ""}
        for k, v in values.items():
            extra[k].append(v)
    for k, v in extra.items():
        out[k] = v
    keep = [c for c in ("workload", "n", "threads_requested", "shared_params", "go_variant", "rust_variant",
                        "go_params", "rust_params",
                        "go_median", "rust_median", "ratio", "ratio_ci_low", "ratio_ci_high", "ci_level", "verdict",
                        "verdict_kind", "go_baseline_mib", "rust_baseline_mib", "above_blocks", "go_above_mib", "go_above_ci_low",
                        "go_above_ci_high", "rust_above_mib", "rust_above_ci_low", "rust_above_ci_high",
                        "ratio_above_baseline", "ratio_above_ci_low", "ratio_above_ci_high", "ratio_above_gap_low",
                        "ratio_above_gap_high", "above_ci_level", "above_resolved", "above_note") if c in out.columns]
    return out[keep].reset_index(drop=True)


def wait_modes(df: pd.DataFrame) -> pd.DataFrame:
    """idle_tasks cells run both ways (wait=sleep and wait=release) at the same N: the peak RSS of
    each, paired by block, and their ratio with its interval (sleep / release), counting only
    sleep samples in which every task was alive at once.  The two must agree: releasing right after
    the last spawn reaches the same peak as sleeping, in a fraction of the time.  `sleep_threads`,
    `release_threads`: the threads each cell's samples ran with (stats.threads_used)."""
    from .compare import compare_pair

    idle = df[df["workload"] == "idle_tasks"]
    if idle.empty or "p_wait" not in idle or idle["p_wait"].nunique() < 2:
        return pd.DataFrame()
    v = counted(idle, METRIC)  # the memory rule's samples (valid, every task alive at once)
    rows = []
    for (lang, variant, n, threads), g in v.groupby(["lang", "variant", "n", "threads_requested"], dropna=False):
        sleep, release = g[g["p_wait"] == "sleep"], g[g["p_wait"] == "release"]
        if sleep.empty or release.empty:
            continue
        r = compare_pair(sleep["block"], sleep["peak_rss_mib"], release["block"], release["peak_rss_mib"],
                         resolution=rules.resolution("peak_rss_mib"))
        used = {wait: threads_used(g["threads"]) if "threads" in g else float("nan")
                for wait, g in (("sleep", sleep), ("release", release))}
        rows.append({"lang": lang, "variant": variant, "n": n, "threads_requested": threads,
                     "sleep_threads": used["sleep"], "release_threads": used["release"],
                     "sleep_samples": r["a_samples"], "release_samples": r["b_samples"],
                     "sleep_median_mib": r["a_median"], "release_median_mib": r["b_median"],
                     "sleep_elapsed_s": float(sleep["elapsed_s"].median()),
                     "release_elapsed_s": float(release["elapsed_s"].median()),
                     "pairing": r["pairing"], "ratio": r["ratio"], "ratio_ci_low": r["ratio_ci_low"],
                     "ratio_ci_high": r["ratio_ci_high"], "warning": r["warning"]})
    return pd.DataFrame(rows)
