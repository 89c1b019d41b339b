"""Figures: time vs N per language with CI bands, and the Go/Rust ratio vs N with CI bars.

Every function takes a summary frame (from stats) and returns a matplotlib Figure; `save` writes
it as SVG and PNG (and PDF when asked).
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .catalogue import WORKLOADS

LABELS = {
    "elapsed_s": "workload time (s)",
    "wall_s": "process wall time (s)",
    "cpu_s": "CPU time, user + system (s)",
    "peak_rss_mib": "peak RSS (MiB)",
}
LANG_COLORS = {"go": "#00ADD8", "rust": "#CE422B"}


def _spans_decades(values) -> bool:
    v = np.asarray([x for x in values if x and x > 0], dtype=float)
    return v.size > 1 and v.max() / v.min() >= 10


def _n_label(workload: str) -> str:
    return f"N ({WORKLOADS[workload].n_meaning})" if workload in WORKLOADS else "N"


def _series_label(row) -> str:
    label = f"{row['lang']} {row['variant']}"
    if row.get("params"):
        label += f" [{row['params']}]"
    return label


def metric_vs_n(summary: pd.DataFrame, metric: str | None = None) -> plt.Figure:
    """One panel per workload: the median of `metric` vs N for every language/variant/params,
    with its confidence interval as a band; log axes where the values span decades."""
    metric = metric or summary["metric"].iloc[0]
    sns.set_theme(style="whitegrid", context="notebook")
    workloads = list(dict.fromkeys(summary["workload"]))
    fig, axes = plt.subplots(1, len(workloads), figsize=(6.2 * len(workloads), 4.6), squeeze=False)
    for ax, w in zip(axes[0], workloads):
        s = summary[summary["workload"] == w].copy()
        s["series"] = s.apply(_series_label, axis=1)
        series = list(dict.fromkeys(s.sort_values(["lang", "variant", "params"])["series"]))
        shades = {lang: sns.light_palette(LANG_COLORS[lang], n_colors=len(series) + 3)[::-1]
                  for lang in LANG_COLORS}
        for i, name in enumerate(series):
            g = s[s["series"] == name].sort_values("n")
            lang = g["lang"].iloc[0]
            color = shades.get(lang, sns.color_palette())[i % 3] if len(series) > 2 else LANG_COLORS.get(lang)
            sns.lineplot(x=g["n"], y=g["median"], ax=ax, marker="o", color=color, label=name,
                         linestyle="-" if lang == "go" else "--")
            ax.fill_between(g["n"], g["ci_low"], g["ci_high"], color=color, alpha=0.25, linewidth=0)
        if _spans_decades(s["n"]):
            ax.set_xscale("log")
        if _spans_decades(s["median"]):
            ax.set_yscale("log")
        ax.set_xlabel(_n_label(w))
        ax.set_ylabel(f"median {LABELS.get(metric, metric)}")
        ax.set_title(f"{w}: median and 95% CI")
        ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def ratio_vs_n(ratios: pd.DataFrame) -> plt.Figure:
    """One panel per workload: Go/Rust ratio of medians vs N with its CI as error bars; 1 = parity."""
    metric = ratios["metric"].iloc[0]
    sns.set_theme(style="whitegrid", context="notebook")
    workloads = list(dict.fromkeys(ratios["workload"]))
    fig, axes = plt.subplots(1, len(workloads), figsize=(6.2 * len(workloads), 4.6), squeeze=False)
    for ax, w in zip(axes[0], workloads):
        r = ratios[ratios["workload"] == w].copy()
        r["pair"] = r["go_variant"] + " / " + r["rust_variant"]
        r.loc[r["shared_params"] != "", "pair"] += " [" + r["shared_params"] + "]"
        pairs = list(dict.fromkeys(r["pair"]))
        palette = sns.color_palette("deep", len(pairs))
        for k, (pair, color) in enumerate(zip(pairs, palette)):
            g = r[r["pair"] == pair].sort_values("n")
            # a small horizontal offset keeps overlapping error bars apart on a log axis
            x = g["n"] * (1.04 ** (k - (len(pairs) - 1) / 2))
            yerr = np.vstack([g["ratio"] - g["ratio_ci_low"], g["ratio_ci_high"] - g["ratio"]])
            ax.errorbar(x, g["ratio"], yerr=np.nan_to_num(yerr), fmt="o-", color=color, capsize=4, label=pair)
        ax.axhline(1.0, color="0.3", linewidth=1, linestyle=":")
        if _spans_decades(r["n"]):
            ax.set_xscale("log")
        if _spans_decades(pd.concat([r["ratio_ci_low"], r["ratio_ci_high"]]).dropna()):
            ax.set_yscale("log")
        ax.set_xlabel(_n_label(w))
        ax.set_ylabel(f"Go / Rust ratio of median {LABELS.get(metric, metric)}")
        ax.set_title(f"{w}: ratio and 95% CI (> 1: Go slower)")
        ax.legend(fontsize="small", title="Go variant / Rust variant")
    fig.tight_layout()
    return fig


def save(fig: plt.Figure, directory: str | Path, name: str, formats=("svg", "png")) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt in formats:
        path = directory / f"{name}.{fmt}"
        fig.savefig(path, dpi=150, bbox_inches="tight")
        out.append(path)
    return out
