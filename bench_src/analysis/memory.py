"""Memory and scheduling views for the related experiments: RSS timelines with the programs'
phases, threads vs goroutines side by side, and ping-pong round trips per second."""
from __future__ import annotations

import pandas as pd

# The RSS timelines are read from a results directory, as one long frame, by the store; the names
# stay importable from here for the callers that read them with this module's views.
from ..store.timelines import PHASES, timelines  # noqa: F401
from . import rules
from .stats import CELL_KEYS, summarize


def returned_memory(tl: pd.DataFrame) -> pd.DataFrame:
    """Per sample: peak RSS while the tasks ran, RSS at the end of the linger, and the share given back."""
    rows = []
    for sid, g in tl.groupby("sample_id"):
        g = g[g["rss_mib"] > 0]  # a point read as the process exited holds nothing
        fin, end = g["finished_ns"].iloc[0], g["linger_end_ns"].iloc[0]
        during = g[g["t_s"] <= (fin / 1e9 if pd.notna(fin) else g["t_s"].max())]
        lingering = g[g["t_s"] <= end / 1e9] if pd.notna(end) else g
        last = lingering.sort_values("t_s")["rss_mib"].iloc[-1]
        peak = during["rss_mib"].max() if not during.empty else g["rss_mib"].max()
        rows.append({"sample_id": sid, "lang": g["lang"].iloc[0], "variant": g["variant"].iloc[0],
                     "n": g["n"].iloc[0], "peak_rss_mib": peak, "last_rss_mib": last,
                     "returned_share": 1 - last / peak if peak else float("nan")})
    return pd.DataFrame(rows)


def side_by_side(df: pd.DataFrame, workload: str = "threads_vs_tasks",
                 metrics=("wall_s", "user_s", "sys_s", "peak_rss_mib", "context_switches")) -> pd.DataFrame:
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


def all_alive(df: pd.DataFrame) -> pd.Series:
    """Per row: whether every task was alive at once.  idle_tasks rows need `alive_at_spawn` = N
    (the program counts the tasks that had not finished when the last one had been spawned); rows
    of other workloads are True.  A sample without the count (an older program) is not trusted."""
    idle = df["workload"] == "idle_tasks"
    alive = pd.to_numeric(df.get("alive_at_spawn", pd.Series(index=df.index, dtype=float)), errors="coerce")
    return ~idle | (alive == pd.to_numeric(df["n"], errors="coerce"))


def bytes_per_task(df: pd.DataFrame, metric: str = "peak_rss_bytes") -> tuple[pd.DataFrame, int]:
    """Per idle_tasks series, bytes per task (the slope of peak memory over N, bench_src.analysis.
    scaling) from the samples in which all N tasks were alive at once; and how many valid samples
    were left out because early tasks had already finished."""
    from .scaling import per_task_cost

    idle = df[df["workload"] == "idle_tasks"]
    live = all_alive(idle)
    left_out = int((idle["valid"] & ~live).sum()) if "valid" in idle else int((~live).sum())
    return per_task_cost(idle[live], metric), left_out


def baselines(df: pd.DataFrame) -> pd.DataFrame:
    """Per language and threads: the program's fixed peak memory, the median peak RSS of idle_tasks
    at N = 1 with wait=release in the language's default variant (nothing but the program, its
    runtime and the libraries linked into it).  Empty when the run has no such cell."""
    from ..catalogue import WORKLOADS

    w = WORKLOADS["idle_tasks"]
    v = df[df["valid"]] if "valid" in df else df
    base = v[(v["workload"] == "idle_tasks") & (v["n"] == BASELINE_N)
             & (v.get("p_wait", pd.Series(index=v.index, dtype=object)) == "release")]
    base = base[base["variant"] == base["lang"].map(w.default_variant)]
    rows = []
    for (lang, threads), g in base.groupby(["lang", "threads_requested"], dropna=False):
        d = summarize(g, "peak_rss_mib")
        rows.append({"lang": lang, "threads_requested": threads, "baseline_samples": int(d["samples"].sum()),
                     "baseline_mib": float(g["peak_rss_mib"].median())})
    return pd.DataFrame(rows, columns=["lang", "threads_requested", "baseline_samples", "baseline_mib"])


def above_baseline(pairs: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """A Go-vs-Rust table of peak RSS with each side's memory above its program's baseline beside
    the raw medians, and the ratio of what is above it: the part of memory that belongs to the work.
    Rows where either side is within its baseline get NaN: less than one page above it, the grid
    peak RSS is counted on (a median of an even number of samples sits half a page off the grid, so
    half a page above the baseline is no page more in use, and a ratio over it would be any size)."""
    if pairs.empty or base.empty:
        return pd.DataFrame()
    b = {(r.lang, r.threads_requested): r.baseline_mib for r in base.itertuples()}
    any_b = base.groupby("lang")["baseline_mib"].median().to_dict()
    out = pairs.copy()
    for lang in ("go", "rust"):
        out[f"{lang}_baseline_mib"] = [b.get((lang, t), any_b.get(lang)) for t in out["threads_requested"]]
        out[f"{lang}_above_mib"] = out[f"{lang}_median"] - out[f"{lang}_baseline_mib"]
    page = rules.resolution("peak_rss_mib")
    ok = (out["go_above_mib"] >= page) & (out["rust_above_mib"] >= page)
    out["ratio_above_baseline"] = (out["go_above_mib"] / out["rust_above_mib"]).where(ok)
    keep = [c for c in ("workload", "n", "threads_requested", "shared_params", "go_variant", "rust_variant",
                        "go_params", "rust_params",
                        "go_median", "rust_median", "ratio", "ratio_ci_low", "ratio_ci_high", "verdict",
                        "go_baseline_mib", "rust_baseline_mib", "go_above_mib", "rust_above_mib",
                        "ratio_above_baseline") if c in out.columns]
    return out[keep].reset_index(drop=True)


def wait_modes(df: pd.DataFrame) -> pd.DataFrame:
    """idle_tasks cells run both ways (wait=sleep and wait=release) at the same N: the peak RSS of
    each, paired by block, and their ratio with its interval (sleep / release), counting only
    sleep samples in which every task was alive at once.  The two must agree: releasing right after
    the last spawn reaches the same peak as sleeping, in a fraction of the time."""
    from .compare import compare_pair

    v = df[df["valid"] & (df["workload"] == "idle_tasks")] if "valid" in df else df[df["workload"] == "idle_tasks"]
    if v.empty or "p_wait" not in v or v["p_wait"].nunique() < 2:
        return pd.DataFrame()
    v = v[all_alive(v)]
    rows = []
    for (lang, variant, n, threads), g in v.groupby(["lang", "variant", "n", "threads_requested"], dropna=False):
        sleep, release = g[g["p_wait"] == "sleep"], g[g["p_wait"] == "release"]
        if sleep.empty or release.empty:
            continue
        r = compare_pair(sleep["block"], sleep["peak_rss_mib"], release["block"], release["peak_rss_mib"])
        rows.append({"lang": lang, "variant": variant, "n": n, "threads_requested": threads,
                     "sleep_samples": r["a_samples"], "release_samples": r["b_samples"],
                     "sleep_median_mib": r["a_median"], "release_median_mib": r["b_median"],
                     "sleep_elapsed_s": float(sleep["elapsed_s"].median()),
                     "release_elapsed_s": float(release["elapsed_s"].median()),
                     "pairing": r["pairing"], "ratio": r["ratio"], "ratio_ci_low": r["ratio_ci_low"],
                     "ratio_ci_high": r["ratio_ci_high"], "warning": r["warning"]})
    return pd.DataFrame(rows)
