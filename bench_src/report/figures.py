"""Figures: time vs N per language with CI bands, and the Go/Rust ratio vs N with CI bars.

Every function takes a summary frame (from stats) and returns a matplotlib Figure; `save` writes
it as SVG and PNG (and PDF when asked).
"""
from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.patches
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..catalogue import WORKLOADS

LABELS = {
    "elapsed_s": "workload time (s)",
    "wall_s": "process wall time (s)",
    "cpu_s": "CPU time, user + system (s)",
    "peak_rss_mib": "peak RSS (MiB)",
    "peak_rss_bytes": "peak RSS (bytes)",
    "user_s": "user CPU time (s)",
    "sys_s": "system CPU time (s)",
    "context_switches": "context switches (voluntary + involuntary)",
    "per_s": "tasks or messages per second",
}
LANG_COLORS = {"go": "#00ADD8", "rust": "#CE422B"}


def _spans_decades(values) -> bool:
    v = np.asarray([x for x in values if x and x > 0], dtype=float)
    return v.size > 1 and v.max() / v.min() >= 10


def _n_label(workload: str) -> str:
    return f"N ({WORKLOADS[workload].n_meaning})" if workload in WORKLOADS else "N"


def _panels(count: int, width: float = 6.2, height: float = 4.6, ncols: int = 3):
    """A figure with `count` panels in rows of at most `ncols`; unused panels are hidden."""
    cols = max(1, min(ncols, count))
    rows = -(-count // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


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
    fig, axes = _panels(len(workloads))
    for ax, w in zip(axes, workloads):
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


def ratio_vs_n(ratios: pd.DataFrame, margin: float | None = None) -> plt.Figure:
    """One panel per workload: Go/Rust ratio of medians vs N with its CI as error bars; 1 = parity,
    and the equivalence band 1 ± margin when a margin is given."""
    metric = ratios["metric"].iloc[0]
    sns.set_theme(style="whitegrid", context="notebook")
    workloads = list(dict.fromkeys(ratios["workload"]))
    fig, axes = _panels(len(workloads))
    for ax, w in zip(axes, workloads):
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
        if margin:
            ax.axhspan(1 - margin, 1 + margin, color="#8FBC8F", alpha=0.3, label=f"equivalent within ±{margin:.0%}")
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
    """Write the figure in every format (SVG, PNG, and PDF when asked) and return the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt in formats:
        path = directory / f"{name}.{fmt}"
        fig.savefig(path, dpi=150, bbox_inches="tight")
        out.append(path)
    return out


VERDICT_COLORS = {"Go": "#00ADD8", "Rust": "#CE422B", "equivalent": "#8FBC8F", "inconclusive": "#D3D3D3"}


def _verdict_class(v: str) -> str:
    for key in ("equivalent", "inconclusive"):
        if v.startswith(key):
            return key
    return v.split()[0] if v.split()[0] in ("Go", "Rust") else "inconclusive"


def verdict_heatmap(table: pd.DataFrame) -> plt.Figure:
    """Workload (and variant pair) x N, coloured by verdict, annotated with the Go/Rust ratio."""
    t = table.copy()
    t["row"] = t["workload"] + " (" + t["go_variant"] + " / " + t["rust_variant"] + ")"
    t.loc[t["shared_params"] != "", "row"] += " [" + t["shared_params"] + "]"
    classes = list(VERDICT_COLORS)
    t["code"] = t["verdict"].map(lambda v: classes.index(_verdict_class(v)))
    t["label"] = t["ratio"].map(lambda r: f"{r:.2f}" if np.isfinite(r) else "")
    codes = t.pivot_table(index="row", columns="n", values="code", aggfunc="first")
    labels = t.pivot_table(index="row", columns="n", values="label", aggfunc="first").reindex_like(codes)
    sns.set_theme(style="white", context="notebook")
    fig, ax = plt.subplots(figsize=(1.1 * codes.shape[1] + 5, 0.45 * codes.shape[0] + 1.8))
    cmap = matplotlib.colors.ListedColormap([VERDICT_COLORS[c] for c in classes])
    sns.heatmap(codes, ax=ax, cmap=cmap, vmin=-0.5, vmax=len(classes) - 0.5, annot=labels.fillna(""), fmt="",
                cbar=False, linewidths=0.5, linecolor="white")
    handles = [matplotlib.patches.Patch(color=VERDICT_COLORS[c], label={"Go": "Go faster/smaller",
               "Rust": "Rust faster/smaller"}.get(c, c)) for c in classes]
    ax.legend(handles=handles, bbox_to_anchor=(1.01, 1), loc="upper left", fontsize="small")
    metric = table["metric"].iloc[0]
    ax.set_title(f"Verdicts on {LABELS.get(metric, metric)} (cells: Go/Rust ratio of medians)")
    ax.set_xlabel("N")
    ax.set_ylabel("workload (Go variant / Rust variant)")
    fig.tight_layout()
    return fig


def distributions(df: pd.DataFrame, workload: str, metric: str = "elapsed_s", ns=None) -> plt.Figure:
    """Every valid sample of a workload's cells as a violin with the points on top, one panel per N."""
    d = df[(df["workload"] == workload) & df["valid"]].copy()
    if ns is not None:
        d = d[d["n"].isin(ns)]
    d["cell"] = d["lang"] + " " + d["variant"] + d["params"].map(lambda p: f"\n[{p}]" if p else "")
    sns.set_theme(style="whitegrid", context="notebook")
    nvals = sorted(d["n"].unique())
    fig, axes = _panels(len(nvals), width=4.8)
    for ax, n in zip(axes, nvals):
        g = d[d["n"] == n]
        order = sorted(g["cell"].unique())
        pal = {c: LANG_COLORS.get(c.split()[0], "0.5") for c in order}
        sns.violinplot(data=g, x="cell", y=metric, order=order, hue="cell", palette=pal, ax=ax, inner=None,
                       cut=0, legend=False)
        sns.stripplot(data=g, x="cell", y=metric, order=order, color="black", size=3, ax=ax)
        ax.set_title(f"{workload}, N = {n}")
        ax.set_xlabel("")
        ax.set_ylabel(LABELS.get(metric, metric))
        ax.tick_params(axis="x", labelsize="x-small", rotation=30)
    fig.tight_layout()
    return fig


def per_task_bars(costs: pd.DataFrame, unit_scale: float = 1e9, unit: str = "ns per task") -> plt.Figure:
    """The marginal cost per task (Theil-Sen slope) of every series with its CI."""
    c = costs.copy()
    c["series"] = c["workload"] + ": " + c["lang"] + " " + c["variant"]
    c.loc[c["params"] != "", "series"] += " [" + c["params"] + "]"
    c = c.sort_values(["workload", "lang", "variant"])
    sns.set_theme(style="whitegrid", context="notebook")
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(c) + 1.5))
    y = np.arange(len(c))
    val = c["per_task"] * unit_scale
    err = np.vstack([val - c["per_task_ci_low"] * unit_scale, c["per_task_ci_high"] * unit_scale - val])
    colors = [LANG_COLORS.get(lang, "0.5") for lang in c["lang"]]
    ax.barh(y, val, xerr=np.nan_to_num(err), color=colors, capsize=3)
    ax.set_yticks(y, c["series"], fontsize="small")
    ax.set_xlabel(f"marginal cost: {unit} (Theil-Sen slope, 95% CI)")
    ax.set_title("Cost of one more task")
    fig.tight_layout()
    return fig


def rss_timeline(tl: pd.DataFrame) -> plt.Figure:
    """RSS over time, one line per sample, time from the workload timer's start; dotted verticals
    mark when all tasks were spawned and when they had all finished (per language)."""
    sns.set_theme(style="whitegrid", context="notebook")
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for sid, g in tl.groupby("sample_id"):
        lang = g["lang"].iloc[0]
        label = f"{lang} {g['variant'].iloc[0]}, N={g['n'].iloc[0]}"
        ax.plot(g["t_s"], g["rss_mib"], color=LANG_COLORS.get(lang, "0.4"), alpha=0.8, linewidth=1.3,
                label=label, linestyle="-" if lang == "go" else "--")
        for key, style in (("spawned_ns", ":"), ("finished_ns", "-.")):
            v = g[key].iloc[0]
            if pd.notna(v):
                ax.axvline(float(v) / 1e9, color=LANG_COLORS.get(lang, "0.4"), linestyle=style, linewidth=0.8)
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize="small", title="dotted: all spawned; dash-dot: all finished")
    ax.set_xlabel("time since the workload timer started (s)")
    ax.set_ylabel("resident set size (MiB)")
    ax.set_title("Memory over time, and what each runtime gives back after its tasks end")
    fig.tight_layout()
    return fig


def metrics_side_by_side(table: pd.DataFrame) -> plt.Figure:
    """One panel per metric: the median of every cell with its 95% CI as error bars."""
    metrics = list(dict.fromkeys(table["metric"]))
    sns.set_theme(style="whitegrid", context="notebook")
    fig, axes = _panels(len(metrics), width=3.6, height=4.2, ncols=5)
    t = table.copy()
    t["cell"] = t["lang"] + " " + t["variant"] + " N=" + t["n"].astype(str)
    for ax, m in zip(axes, metrics):
        g = t[t["metric"] == m]
        x = np.arange(len(g))
        err = np.vstack([g["median"] - g["ci_low"], g["ci_high"] - g["median"]])
        ax.bar(x, g["median"], yerr=np.nan_to_num(err), capsize=4,
               color=[LANG_COLORS.get(lang, "0.5") for lang in g["lang"]])
        ax.set_xticks(x, g["cell"], rotation=35, ha="right", fontsize="small")
        ax.set_ylabel(LABELS.get(m, m))
        ax.set_title(m)
    fig.tight_layout()
    return fig


def ping_pong_bars(rates: pd.DataFrame) -> plt.Figure:
    """Round trips per second by buffer, one panel per mode, bars per language and runtime flavour."""
    sns.set_theme(style="whitegrid", context="notebook")
    modes = list(dict.fromkeys(rates["mode"]))
    fig, axes = _panels(len(modes), width=6.5)
    for ax, mode in zip(axes, modes):
        g = rates[rates["mode"] == mode].copy()
        g["runtime"] = g["lang"] + " " + g["variant"]
        buffers = sorted(g["buffer"].unique())
        runtimes = list(dict.fromkeys(g.sort_values(["lang", "variant"])["runtime"]))
        width = 0.8 / max(len(runtimes), 1)
        palette = sns.color_palette("deep", len(runtimes))
        for k, (rt, color) in enumerate(zip(runtimes, palette)):
            s = g[g["runtime"] == rt].set_index("buffer").reindex(buffers)
            x = np.arange(len(buffers)) + (k - (len(runtimes) - 1) / 2) * width
            err = np.vstack([s["round_trips_per_s"] - s["ci_low"], s["ci_high"] - s["round_trips_per_s"]])
            ax.bar(x, s["round_trips_per_s"], width, yerr=np.nan_to_num(err), capsize=3, color=color, label=rt)
        ax.set_xticks(np.arange(len(buffers)), [str(b) for b in buffers])
        ax.set_xlabel("channel capacity (buffer)")
        ax.set_ylabel("round trips per second (median, 95% CI)")
        ax.set_title(f"ping-pong, {mode}")
        ax.legend(fontsize="small")
    fig.tight_layout()
    return fig
