"""Samples in the Go benchmark format, so that benchstat compares Go with Rust.

    benchstat go.txt rust.txt          # default variants: one "vs base" column, Go = base
    benchstat -col /lang all.txt       # every Go/Rust pair of the comparison table

benchstat groups results into tables by the file-level configuration (`key: value` lines), into
rows by the full benchmark name, and into columns by file (or by the `-col` key).  So:

- the benchmark name carries only what makes the work the same in both languages: the workload,
  N and the shared parameters (`BenchmarkSleep/n=1000/kernel=xorshift/work=50000`), with no `-N`
  GOMAXPROCS suffix (Go runs on 2 threads where Rust's cpu_loops runs on 1 and Rust's threads
  variant on N: the suffix would put them in different rows);
- what differs between the two sides of a comparison (the variants, a driver, the threads each
  program used: the comparison table's `go_threads` and `rust_threads`, read off the samples by
  stats.threads_used) goes into configuration lines written identically in both files before each
  block: `pair: go pool (driver=mattn) vs rust pool (driver=sqlx)` and `threads: requested 2; go 2, rust 2`.
  They make one table per pair of variants and never split a row;
- in `all.txt` the language is the name key `/lang`, and Go lines come first so Go is the base.

Each sample is one line with one iteration: the workload time as `ns/op` (benchstat shows
`sec/op`), the process wall time, the CPU time (user + system) and the peak RSS.  The peak RSS is
left out of the line of a sample whose peak does not count for memory (analysis/validity.py:
not every task alive at once), as the format allows a line to lack a unit: benchstat then
compares the memory of the samples the report's memory tables use, and their time as the report
does.

benchstat's tests are its own (a Mann-Whitney U test per row at its -alpha, unpaired: the format
has no blocks; no correction for the other rows), so its "~" and p-values may differ from the
report's verdicts; the README says so where it shows the commands.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...analysis.validity import COUNTS_FOR_MEMORY, memory_columns
from ..tables import blank, params_dict
from ...store.ledger import sampling_sessions
from .base import written

UNITS = (  # (column of the samples frame, benchmark unit)
    ("elapsed_ns", "ns/op"),
    ("wall_ns", "wall-ns/op"),
    ("cpu_ns", "cpu-ns/op"),
    ("peak_rss_bytes", "peak-RSS-B/op"),
)
UNIT_METADATA = "".join(f"Unit {unit} assume=nothing better=lower\n" for _, unit in UNITS)


def _workloads():
    from ...catalogue import WORKLOADS

    return WORKLOADS


def bench_base(workload: str) -> str:
    return "Benchmark" + "".join(part.capitalize() for part in workload.split("_"))


def _clean(value) -> str:
    """A name-key value benchstat reads back as one value (no '/', no spaces)."""
    return str(value).replace("/", "_").replace(" ", "_")


def bench_name(workload: str, n, shared: dict[str, str]) -> str:
    parts = [bench_base(workload), f"n={int(n)}"]
    parts += [f"{k}={_clean(v)}" for k, v in sorted(shared.items())]
    return "/".join(parts)


def _shared_keys(workload: str) -> tuple[str, ...]:
    w = _workloads().get(workload)
    return w.shared_params if w else ()


def _split(workload: str, params) -> tuple[dict[str, str], dict[str, str]]:
    """(shared, own) parameters of one side."""
    p = params_dict(params)
    keys = _shared_keys(workload)
    return ({k: v for k, v in p.items() if k in keys}, {k: v for k, v in p.items() if k not in keys})


def _side(variant: str, own: dict[str, str]) -> str:
    return variant + (f" ({', '.join(f'{k}={v}' for k, v in sorted(own.items()))})" if own else "")


def _same(series: pd.Series, value) -> pd.Series:
    if blank(value):
        return series.isna() | series.map(blank)
    return series.astype(str) == str(value)


def _cells(valid: pd.DataFrame, workload, lang, variant, params, n, threads) -> pd.DataFrame:
    return valid[(valid["workload"] == workload) & (valid["lang"] == lang) & (valid["variant"] == variant)
                 & (valid["params"].astype(str) == str(params)) & (valid["n"] == n)
                 & _same(valid["threads_requested"], threads)]


def _threads_used(rows: list[tuple[int, float]]) -> str:
    """The threads a program used over a block, from its rows' (N, threads) as the comparison table
    gives them (its `go_threads` and `rust_threads`: stats.threads_used of each cell's samples, NaN
    where they do not agree on one): one number, 'N' when it ran one thread per task, or the number
    per N ('unknown' where a row's is)."""
    pairs = list(dict.fromkeys((int(n), None if blank(t) else float(t)) for n, t in rows))
    if not pairs or all(t is None for _, t in pairs):
        return "unknown"
    values = {t for _, t in pairs}
    if len(values) == 1:
        return str(int(values.pop()))
    if all(t is not None and t == float(n) for n, t in pairs):
        return "N (one per task)"
    return ", ".join(f"N={n}: {'unknown' if t is None else int(t)}" for n, t in sorted(pairs, key=lambda p: p[0]))


def blocks(df: pd.DataFrame, comparisons: pd.DataFrame) -> list[dict]:
    """One block per pair of variants (and per-language parameters) of the Go-vs-Rust comparison
    table, with the samples of each of its rows (N and shared parameters)."""
    if df.empty or comparisons.empty:
        return []
    valid = memory_columns(df[df["valid"]] if "valid" in df else df)
    order = {w: i for i, w in enumerate(_workloads())}
    out: dict[tuple, dict] = {}
    for r in comparisons.itertuples(index=False):
        go_shared, go_own = _split(r.workload, r.go_params)
        rust_shared, rust_own = _split(r.workload, r.rust_params)
        threads = getattr(r, "threads_requested", np.nan)
        key = (r.workload, "" if blank(threads) else str(threads), r.go_variant, str(sorted(go_own.items())),
               r.rust_variant, str(sorted(rust_own.items())))
        block = out.setdefault(key, {
            "workload": r.workload, "threads_requested": threads, "go_variant": r.go_variant, "go_own": go_own,
            "rust_variant": r.rust_variant, "rust_own": rust_own, "rows": []})
        go = _cells(valid, r.workload, "go", r.go_variant, r.go_params, r.n, threads)
        rust = _cells(valid, r.workload, "rust", r.rust_variant, r.rust_params, r.n, threads)
        if go.empty or rust.empty:
            continue
        block["rows"].append({"n": int(r.n), "shared": {**rust_shared, **go_shared}, "go": go, "rust": rust,
                              # the threads each side ran with, as the comparison table has them
                              "threads": {lang: getattr(r, f"{lang}_threads", np.nan) for lang in ("go", "rust")}})
    result = [b for b in out.values() if b["rows"]]
    for b in result:
        b["rows"].sort(key=lambda row: (row["n"], sorted(row["shared"].items())))
        b["pair"] = f"go {_side(b['go_variant'], b['go_own'])} vs rust {_side(b['rust_variant'], b['rust_own'])}"
        used = {lang: _threads_used([(row["n"], row["threads"][lang]) for row in b["rows"]]) for lang in ("go", "rust")}
        requested = "" if blank(b["threads_requested"]) else f"requested {int(float(b['threads_requested']))}; "
        b["threads"] = f"{requested}go {used['go']}, rust {used['rust']}"
    result.sort(key=lambda b: (order.get(b["workload"], len(order)), b["pair"], b["threads"]))
    return result


def _line(name: str, row) -> str:
    """One sample as a benchmark line: its peak RSS only where it counts for memory (`blocks` marks
    each sample's COUNTS_FOR_MEMORY from analysis/validity.py)."""
    memory = row["peak_rss_bytes"] if bool(row.get(COUNTS_FOR_MEMORY, True)) else None
    values = {"elapsed_ns": row["elapsed_ns"], "wall_ns": row["wall_ns"],
              "cpu_ns": row["user_ns"] + row["sys_ns"], "peak_rss_bytes": memory}
    fields = [f"{int(round(float(values[col])))} {unit}" for col, unit in UNITS if not blank(values[col])]
    return f"{name} 1 " + " ".join(fields)


def _header(meta: dict | None, what: str) -> str:
    lines = [f"# {what}", "# Go benchmark format; read with benchstat (golang.org/x/perf/cmd/benchstat)."]
    text = "\n".join(lines) + "\n"
    if meta:
        session = (sampling_sessions(meta) or [{}])[-1]
        machine = session.get("machine", {}) or {}
        if machine.get("cpu_model"):
            text += f"cpu: {machine['cpu_model']}\n"
        if meta.get("run_id"):
            text += f"run: {meta['run_id']}\n"
    return text + UNIT_METADATA


def _is_default(block: dict) -> bool:
    w = _workloads().get(block["workload"])
    if not w:
        return False
    for lang in ("go", "rust"):
        if block[f"{lang}_variant"] != w.default_variant(lang):
            return False
        defaults = w.default_params(lang)
        if any(defaults.get(k) != v for k, v in block[f"{lang}_own"].items()):
            return False
    return True


def render(df: pd.DataFrame, comparisons: pd.DataFrame, meta: dict | None = None) -> dict[str, str]:
    """The text of go.txt, rust.txt (default variants) and all.txt (every pair)."""
    bs = blocks(df, comparisons)
    files = {
        "go.txt": _header(meta, "Go, default variants: benchstat go.txt rust.txt"),
        "rust.txt": _header(meta, "Rust, default variants: benchstat go.txt rust.txt"),
        "all.txt": _header(meta, "Every Go/Rust pair: benchstat -col /lang all.txt"),
    }
    for b in bs:
        config = f"pair: {b['pair']}\nthreads: {b['threads']}\n"
        if _is_default(b):
            for lang in ("go", "rust"):
                files[f"{lang}.txt"] += config + "".join(
                    _line(bench_name(b["workload"], row["n"], row["shared"]), s) + "\n"
                    for row in b["rows"] for _, s in row[lang].iterrows())
        files["all.txt"] += config
        for row in b["rows"]:
            name = bench_name(b["workload"], row["n"], row["shared"])
            for lang in ("go", "rust"):
                files["all.txt"] += "".join(_line(f"{name}/lang={lang}", s) + "\n" for _, s in row[lang].iterrows())
    return files


def save(df: pd.DataFrame, comparisons: pd.DataFrame, directory: str | Path, meta: dict | None = None) -> list[Path]:
    directory = Path(directory)
    out = []
    for name, text in render(df, comparisons, meta).items():
        with written(directory / name) as path:
            path.write_text(text)
        out.append(path)
    return out


class BenchstatExporter:
    """`benchstat/go.txt`, `rust.txt` and `all.txt` from the Go/Rust workload-time comparisons (`go_vs_rust_elapsed_s`)."""

    name = "benchstat"

    def save(self, report, directory: Path) -> list[Path]:
        pairs = report.tables.get("go_vs_rust_elapsed_s")
        if pairs is None or pairs.empty:
            return []
        return save(report.df, pairs, directory / "benchstat", report.meta)
