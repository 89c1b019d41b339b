"""Exports for an article, into `<results_dir>/export/`: figures (SVG, PNG, PDF), tables (CSV and
Markdown), the raw samples (CSV and Parquet), a benchstat-readable text file per language, the
executed notebooks as HTML, and a generated Method paragraph."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from ..analysis.compare import MARGIN
from ..catalogue import WORKLOADS
from . import figures

FIGURE_FORMATS = ("svg", "png", "pdf")


def export_dir(results_dir: str | Path) -> Path:
    d = Path(results_dir) / "export"
    d.mkdir(parents=True, exist_ok=True)
    return d


def save_figure(fig: plt.Figure, results_dir: str | Path, name: str) -> list[Path]:
    paths = figures.save(fig, export_dir(results_dir) / "figures", name, FIGURE_FORMATS)
    plt.close(fig)
    return paths


def save_table(table: pd.DataFrame, results_dir: str | Path, name: str) -> list[Path]:
    d = export_dir(results_dir) / "tables"
    d.mkdir(exist_ok=True)
    csv, md = d / f"{name}.csv", d / f"{name}.md"
    table.to_csv(csv, index=False)
    md.write_text(table.to_markdown(index=False, floatfmt=".4g") + "\n")
    return [csv, md]


def save_samples(df: pd.DataFrame, results_dir: str | Path) -> list[Path]:
    d = export_dir(results_dir)
    csv, parquet = d / "samples.csv", d / "samples.parquet"
    df.to_csv(csv, index=False)
    flat = df.copy()
    for c in flat.columns:  # parquet needs one type per column
        if flat[c].dtype == object:
            flat[c] = flat[c].map(lambda v: None if v is None or (isinstance(v, float) and pd.isna(v)) else str(v))
    flat.to_parquet(parquet, index=False)
    return [csv, parquet]


def _bench_name(row) -> str:
    parts = [f"Benchmark{''.join(w.capitalize() for w in row['workload'].split('_'))}", f"n={row['n']}"]
    parts += [kv for kv in str(row["params"]).split(",") if kv]
    return "/".join(parts)


def save_benchstat(df: pd.DataFrame, results_dir: str | Path) -> list[Path]:
    """Go benchmark format, one file per language holding the default variants, so that
    `benchstat go.txt rust.txt` compares the languages; `all.txt` holds every valid sample with the
    language and variant as name keys (`benchstat -col /lang all.txt`)."""
    d = export_dir(results_dir) / "benchstat"
    d.mkdir(exist_ok=True)
    valid = df[df["valid"]]
    out = []

    def line(row, name) -> str:
        threads = int(row["threads"]) if pd.notna(row["threads"]) else 1
        return (f"{name}-{threads} 1 {int(row['elapsed_ns'])} ns/op {int(row['wall_ns'])} wall-ns/op "
                f"{int(row['user_ns'] + row['sys_ns'])} cpu-ns/op {int(row['peak_rss_bytes'])} peak-rss-B/op")

    for lang in ("go", "rust"):
        rows = valid[(valid["lang"] == lang) &
                     (valid["variant"] == valid["workload"].map(lambda w: WORKLOADS[w].default_variant(lang)))]
        path = d / f"{lang}.txt"
        path.write_text(f"lang: {lang}\n" + "".join(line(r, _bench_name(r)) + "\n" for _, r in rows.iterrows()))
        out.append(path)
    path = d / "all.txt"
    path.write_text("".join(line(r, f"{_bench_name(r)}/lang={r['lang']}/variant={r['variant']}") + "\n"
                            for _, r in valid.iterrows()))
    out.append(path)
    return out


def render_notebooks(results_dir: str | Path) -> list[Path]:
    """Every executed notebook in the results directory, as HTML."""
    out = []
    for nb in sorted(Path(results_dir).glob("*.ipynb")):
        target = export_dir(results_dir) / "notebooks"
        proc = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(target),
                               str(nb)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"nbconvert failed on {nb}: {proc.stderr.strip().splitlines()[-1:]}")
        out.append(target / (nb.stem + ".html"))
    return out


def method_text(meta: dict, df: pd.DataFrame, margin: float = MARGIN) -> str:
    """A Method paragraph generated from what was actually run."""
    plan = meta["plan"]
    session = meta["sessions"][-1]
    m, tc = session.get("machine", {}), session.get("toolchains", {})
    measured = df[df["phase"] == "measured"]
    valid = int(df["valid"].sum())
    excluded = measured[~measured["valid"]]
    reasons = excluded["status"].value_counts().to_dict()
    cells = df["cell_id"].nunique()
    servers = session.get("context", {}) or {}
    server_text = "; ".join(f"{v['kind']} {v['version']}" for k, v in servers.items()
                            if isinstance(v, dict) and "version" in v)
    text = (
        f"All measurements were taken on {m.get('cpu_model', 'an unknown CPU')} with {m.get('logical_cpus')} logical "
        f"CPUs and {m.get('ram_bytes', 0) / 2**30:.0f} GiB of RAM, Linux {m.get('kernel')}, using "
        f"{tc.get('go')}, {tc.get('rustc')} and the tokio version recorded per sample"
        + (f"; database servers: {server_text}" if server_text else "") + ". "
        f"The run covered {cells} cells (workload x language x variant x N x parameters) of the workloads "
        f"{', '.join(plan['workloads'])}. Each cell received {plan['warmup']} warm-up sample(s), discarded, and "
        f"{plan['samples']} measured samples. Samples were taken in blocks holding every cell once, each block in a "
        f"random order (seed {plan['seed']}), so that the languages were interleaved and slow drift spread over all "
        f"cells. Each sample is a fresh process started by a small launcher; wall time comes from the monotonic clock "
        f"around the process, the workload time from the program's own monotonic timer, and CPU times and peak "
        f"resident memory from the kernel's accounting of the finished process (wait4), never from polling. "
        f"Both programs print a checksum of their work; samples of a workload, N and parameter set whose checksums "
        f"disagreed across languages or samples were excluded. {valid} samples entered the analysis"
        + (f"; {len(excluded)} measured samples were excluded ({', '.join(f'{k}: {v}' for k, v in reasons.items())})"
           if len(excluded) else "; none was excluded") + ". "
        f"Per cell we report the median with a 95% distribution-free confidence interval (Hettmansperger-Sheather "
        f"interpolated order statistics). Go and Rust are compared by the ratio of medians with a 95% percentile "
        f"bootstrap interval (4,000 resamples, each side resampled independently), a two-sided Mann-Whitney U test "
        f"with Holm correction over all comparisons of a table, and Cliff's delta as effect size. A comparison is "
        f"called equivalent when the ratio's interval lies within ±{margin:.0%}, a win when the corrected p-value is "
        f"below 0.05 and the interval excludes 1, and inconclusive otherwise. Costs per task are Theil-Sen slopes "
        f"over N with 95% intervals."
    )
    return text


def save_method(meta: dict, df: pd.DataFrame, results_dir: str | Path, margin: float = MARGIN) -> Path:
    path = export_dir(results_dir) / "method.md"
    path.write_text("# Method\n\n" + method_text(meta, df, margin) + "\n")
    return path


def manifest(results_dir: str | Path) -> pd.DataFrame:
    d = export_dir(results_dir)
    files = sorted(p for p in d.rglob("*") if p.is_file())
    return pd.DataFrame({"file": [str(p.relative_to(d)) for p in files], "bytes": [p.stat().st_size for p in files]})


def read_meta(results_dir: str | Path) -> dict:
    return json.loads((Path(results_dir) / "meta.json").read_text())
