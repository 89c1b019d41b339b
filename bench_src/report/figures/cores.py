"""Figures of a plan with `cores`: the Go/Rust ratio against the core count per workload, and each
cell's value at the fewest cores over its value at k cores per language (a speed-up for a duration;
for peak RSS, how much less memory the program holds with more cores)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import pandas as pd
import seaborn as sns

from .. import units
from .axes import covering_limit, ratio_axis, ratio_need
from ..tables.cores import cores_text, gain_name, gain_title, is_speedup
from ..theme import EQUIVALENCE_COLOR, LANG_COLORS, SERIES_KEYS


def _limit(values) -> float:
    """The half-height (log₂ units) of the one ratio axis every panel of a figure shares."""
    return covering_limit(ratio_need(values, room=1.15))


def _cores_axis(ax, ks) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.xaxis.set_minor_locator(mticker.NullLocator())
    ax.set_xlabel("cores (CPUs the program was pinned to, threads = cores)")


def ratio_vs_cores(table: pd.DataFrame, margin: float | None = None) -> plt.Figure:
    """One panel per workload: the Go/Rust ratio at each core count with its interval (the
    Go-vs-Rust table's, at its family's level), one line per N and pair of variants, on one log₂
    axis centred on 1 that every panel shares (axes.ratio_axis, the ticks of every ratio figure)."""
    metric = table["metric"].iloc[0]
    workloads = list(dict.fromkeys(table["workload"]))
    fig, axes = plt.subplots(1, len(workloads), figsize=(4.6 * len(workloads), 4.0), squeeze=False,
                             layout="constrained")
    ks = sorted(int(k) for k in table["cores"].unique())
    limit = _limit(pd.concat([table["ratio_ci_low"], table["ratio_ci_high"], table["ratio"]]))  # shared by the panels
    for ax, w in zip(axes[0], workloads):
        g = table[table["workload"] == w]
        lines = list(dict.fromkeys(zip(g["n"], g["go_variant"], g["rust_variant"], g["shared_params"])))
        palette = sns.color_palette("dark", max(len(lines), 1))
        several_params = g["shared_params"].nunique() > 1  # then the label names them: lines differ by them
        for (n, gv, rv, sp), color in zip(lines, palette):
            s = g[(g["n"] == n) & (g["go_variant"] == gv) & (g["rust_variant"] == rv) & (g["shared_params"] == sp)]
            s = s.sort_values("cores")
            label = (f"N = {units.count(n)}" + ("" if gv == rv else f", {gv} vs {rv}")
                     + (f", {sp or 'no parameters'}" if several_params else ""))
            ax.plot(s["cores"], s["ratio"], "o-", color=color, label=label, linewidth=1.2)
            ax.vlines(s["cores"], s["ratio_ci_low"], s["ratio_ci_high"], color=color, linewidth=1.8)
            for _, r in s[s["change_kind"].isin(["lower", "higher"])].iterrows():
                ax.annotate("changed", (r["cores"], r["ratio"]), textcoords="offset points", xytext=(6, 4),
                            fontsize=7.5, color=color)
        ratio_axis(ax, limit)
        ax.axhline(1, color="0.3", linewidth=1)
        if margin:
            ax.axhspan(1 - margin, 1 + margin, color=EQUIVALENCE_COLOR, alpha=0.5, linewidth=0)
        _cores_axis(ax, ks)
        ax.set_title(w)
        ax.set_ylabel(f"Go / Rust, {units.metric_name(metric)} (below 1: Go lower)")
        ax.legend(fontsize=7.5, loc="best")
    fig.bench_title = f"Go / Rust ratio of {units.metric_name(metric)} against cores, with intervals"
    fig.suptitle(fig.bench_title, fontsize=11)
    fig.text(0.5, -0.02, "'changed': the paired test of the ratio's change from the fewest cores excludes no change",
             ha="center", fontsize=8.5)
    return fig


def speedup(table: pd.DataFrame) -> plt.Figure:
    """One panel per workload: value at the fewest cores / value at k cores per language's default
    cells (one line per N and variant), with intervals; 1 = no gain.  For a duration it is the
    speed-up, drawn beside the ideal (k / the fewest); for peak RSS or CPU time, which no core count
    divides, it is the quotient, named as such and without an ideal.  One log₂ axis centred on 1,
    shared by the panels (axes.ratio_axis)."""
    metric = table["metric"].iloc[0]
    speed = is_speedup(metric)
    fewest = int(table["from_cores"].min())
    workloads = list(dict.fromkeys(table["workload"]))
    fig, axes = plt.subplots(1, len(workloads), figsize=(4.6 * len(workloads), 4.0), squeeze=False,
                             layout="constrained")
    # one axis shared by the panels, holding every interval and the ideal (the most cores over the fewest)
    limit = _limit([*table["speedup_ci_low"], *table["speedup_ci_high"], *table["speedup"],
                    *((table["cores"] / table["from_cores"]) if speed else [])])
    for ax, w in zip(axes[0], workloads):
        g = table[table["workload"] == w]
        base = int(g["from_cores"].min())
        ks = sorted({base, *(int(k) for k in g["cores"])})
        several_params = g["params"].nunique() > 1
        for (lang, variant, n, params), s in g.groupby(SERIES_KEYS, sort=True):
            s = s.sort_values("cores")
            x = [base, *s["cores"]]
            y = [1.0, *s["speedup"]]
            ax.plot(x, y, "o-", color=LANG_COLORS.get(lang, "0.3"), alpha=0.85, linewidth=1.1,
                    label=f"{lang} {variant}, N = {units.count(n)}" + (f", {params}" if several_params else ""))
            ax.vlines(s["cores"], s["speedup_ci_low"], s["speedup_ci_high"], color=LANG_COLORS.get(lang, "0.3"))
        ideal = [k / base for k in ks] if speed else []
        if speed:
            ax.plot(ks, ideal, ":", color="0.5", label="ideal (time / cores)")
        ratio_axis(ax, limit)
        ax.axhline(1, color="0.3", linewidth=1)
        _cores_axis(ax, ks)
        ax.set_title(w)
        if speed:
            ax.set_ylabel(f"speed-up of {units.metric_name(metric)} (at {cores_text(base)} / at k)")
        else:
            ax.set_ylabel(f"{gain_name(metric, base)}\n(above 1: less with more cores)")
        ax.legend(fontsize=7, loc="best")
    fig.bench_title = (f"{gain_title(metric)}, per language, with intervals" if speed else
                       f"{gain_title(metric)}: at {cores_text(fewest)} / at k cores, per language, with intervals")
    fig.suptitle(fig.bench_title, fontsize=11)
    return fig
