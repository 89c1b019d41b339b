"""The memory notebook's figures: RSS timelines, metrics side by side, ping-pong rates."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import units
from ..theme import LANG_COLORS, SERIES_KEYS
from .axes import (LANG_STYLE, figure_header, finite_positive, join_parts, panel_grid, shades,
                   threads_caption, unit_formatter, value_axis)


def rss_timeline(tl: pd.DataFrame) -> plt.Figure:
    """RSS over time, one line per sample (one sample per cell), time from the workload timer's
    start; dotted verticals mark when all tasks were spawned and dash-dotted when they had all
    finished (per language).  A series is its language, variant, N and the parameters that differ
    between the series shown (wait, linger); each language's series take shades of its colour and
    their own markers, so that a series of one point is seen too.  The legend sits beside the axes."""
    fig, ax = plt.subplots(figsize=(11, 4.8), layout="constrained")
    ns = sorted(tl["n"].unique())
    keys = [k for k in SERIES_KEYS if k in tl.columns]
    pcols = [c for c in tl.columns if c.startswith("p_") and tl[c].nunique(dropna=True) > 1]
    series = tl[keys].drop_duplicates().sort_values(keys)
    colors, markers = {}, {}
    for lang, g in series.groupby("lang"):
        cells = list(g.itertuples(index=False, name=None))
        colors.update(zip(cells, shades(LANG_COLORS.get(lang, "#666666"), len(cells))))
        markers.update((c, MARKERS[k % len(MARKERS)]) for k, c in enumerate(cells))
    for sid, g in tl.groupby("sample_id"):
        g = g.sort_values("t_s")
        cell = tuple(g[k].iloc[0] for k in keys)
        lang, variant, n = cell[:3]
        settings = ", ".join(f"{c[2:]}={g[c].iloc[0]}" for c in pcols if pd.notna(g[c].iloc[0]))
        label = (f"{lang} {variant}" + (f", N={units.count(n)}" if len(ns) > 1 else "")
                 + (f", {settings}" if settings else ""))
        ax.plot(g["t_s"], g["rss_mib"], color=colors.get(cell, "0.4"), alpha=0.9, linewidth=1.3,
                label=label, linestyle=LANG_STYLE.get(lang, "-"), marker=markers.get(cell, "o"),
                markersize=4, markevery=max(1, len(g) // 8))
        for key, style in (("spawned_ns", ":"), ("finished_ns", "-.")):
            v = g[key].iloc[0]
            if pd.notna(v):
                ax.axvline(float(v) / 1e9, color=LANG_COLORS.get(lang, "0.4"), linestyle=style, linewidth=0.8)
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=8.5, title="dotted: all spawned\ndash-dot: all finished",
              loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_xlabel("time since the workload timer started (s)")
    ax.set_ylabel("resident set size")
    ax.yaxis.set_major_formatter(unit_formatter("MiB"))
    ax.set_title("Memory over time, and what each runtime gives back after its tasks end"
                 + (f" (N = {units.count(ns[0])})" if len(ns) == 1 else ""))
    return fig


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _level(table: pd.DataFrame) -> str:
    """The coverage of the table's median intervals as the tables give it ('96.9%', '96.5–96.9%',
    '≥ ...' where values tie), '' where the table has none."""
    return units.coverage(table.get("ci_coverage", pd.Series(dtype=float)),
                          table.get("ci_coverage_kind", pd.Series(dtype=object)).fillna("").astype(str))


def _ci(level: str) -> str:
    return f"{level} CI" if level else "CI"


def metrics_side_by_side(table: pd.DataFrame) -> plt.Figure:
    """One panel per metric: the median of every cell with its distribution-free CI, labelled with
    the coverage the table gives (one N: categorical axis).  On a log axis an interval reaching
    beyond it (down to 0, which a log axis cannot show) is cut at the axis with an arrow, and the
    caption names it."""
    metrics = list(dict.fromkeys(table["metric"]))
    fig, axes = panel_grid(len(metrics), width=3.7, height=3.9, ncols=5, header=0.8)
    t = table.copy()
    ns = sorted(t["n"].unique())
    t["cell"] = t["lang"] + " " + t["variant"] + ("" if len(ns) == 1 else "\nN=" + t["n"].map(units.count))
    cut = []
    for ax, m in zip(axes, metrics):
        g = t[t["metric"] == m]
        x = np.arange(len(g))
        err = np.vstack([g["median"] - g["ci_low"], g["ci_high"] - g["median"]])
        ax.errorbar(x, g["median"], yerr=np.nan_to_num(err), fmt="none", ecolor="0.2", capsize=4, zorder=3)
        ax.scatter(x, g["median"], color=[LANG_COLORS.get(lang, "0.5") for lang in g["lang"]], s=45, zorder=4)
        ax.set_xticks(x, g["cell"], rotation=35, ha="right", fontsize=8.5)
        ax.set_xlim(-0.6, len(g) - 0.4)
        unit = units.metric_unit(m) or "count"
        value_axis(ax, pd.concat([g["median"], g["ci_low"], g["ci_high"]]), unit)
        if ax.get_yscale() == "log":
            positive = [float(v) for v in pd.concat([g["median"], g["ci_low"], g["ci_high"]]) if finite_positive(v)]
            bottom, top = min(positive) / 3, max(positive) * 1.3
            ax.set_ylim(bottom, top)
            for xi, r in zip(x, g.itertuples()):
                low_cut = pd.notna(r.ci_low) and not r.ci_low >= bottom
                high_cut = pd.notna(r.ci_high) and r.ci_high > top
                for end, is_cut in ((0.0, low_cut), (1.0, high_cut)):
                    if is_cut:  # the bar runs to the axis end: an arrow says the interval goes on
                        ax.annotate("", (xi, end), (xi, abs(end - 0.07)), xycoords=("data", "axes fraction"),
                                    arrowprops={"arrowstyle": "-|>", "color": "0.2", "lw": 1.2}, zorder=5)
                if low_cut or high_cut:
                    cut.append(f"{r.lang} {r.variant}, {units.metric_name(m)}: "
                               f"{units.quantity(r.ci_low, unit) if r.ci_low != 0 else 0} to "
                               f"{units.quantity(r.ci_high, unit)}")
        ax.set_ylabel("")
        ax.set_title(units.metric_name(m), fontsize=10.5)
        ax.grid(axis="x", visible=False)
    workloads = ", ".join(dict.fromkeys(t["workload"]))
    arrows = ("arrow: the interval goes on beyond the log axis (" + "; ".join(cut) + ")") if cut else ""
    figure_header(fig, f"{workloads}: median and {_ci(_level(t))} per metric",
            join_parts(f"N = {units.count(ns[0])}" if len(ns) == 1 else "", threads_caption(t), arrows))
    return fig


def ping_pong_bars(rates: pd.DataFrame) -> plt.Figure:
    """Round trips per second by channel capacity, one panel per mode, one bar per runtime flavour
    with the median's CI at the coverage the table gives; one legend for every panel, below them,
    outside the plotting areas (inside, it would sit on some bar)."""
    modes = list(dict.fromkeys(rates["mode"]))
    fig, axes = panel_grid(len(modes), width=6.0, height=4.2, header=0.8)
    every = rates.assign(runtime=rates["lang"] + " " + rates["variant"]).sort_values(["lang", "variant"])
    runtimes_all = list(dict.fromkeys(every["runtime"]))
    colors = {}
    for lang in ("go", "rust"):
        names = [r for r in runtimes_all if r.startswith(lang + " ")]
        colors.update(zip(names, shades(LANG_COLORS[lang], len(names))))
    handles = {}
    level = _level(rates)
    for ax, mode in zip(axes, modes):
        g = every[every["mode"] == mode]
        buffers = sorted(g["buffer"].unique())
        runtimes = list(dict.fromkeys(g["runtime"]))
        width = 0.8 / max(len(runtimes), 1)
        for k, rt in enumerate(runtimes):
            s = g[g["runtime"] == rt].set_index("buffer").reindex(buffers)
            x = np.arange(len(buffers)) + (k - (len(runtimes) - 1) / 2) * width
            err = np.vstack([s["round_trips_per_s"] - s["ci_low"], s["ci_high"] - s["round_trips_per_s"]])
            bars = ax.bar(x, s["round_trips_per_s"], width, yerr=np.nan_to_num(err), capsize=3,
                          color=colors.get(rt, "0.5"), label=rt)
            handles.setdefault(rt, bars)
        ax.set_xticks(np.arange(len(buffers)), [str(b) for b in buffers])
        ax.set_xlabel("channel capacity (buffer)")
        ax.set_ylabel("round trips per second")
        ax.yaxis.set_major_formatter(unit_formatter("/s"))
        ax.set_title(f"ping-pong, {mode}")
        ax.grid(axis="x", visible=False)
    order = [rt for rt in runtimes_all if rt in handles]
    fig.legend([handles[rt] for rt in order], order, loc="outside lower center", ncols=max(1, len(order)),
               fontsize=8.5, frameon=False)
    ns = sorted(rates["n"].unique()) if "n" in rates else []
    figure_header(fig, "Channel ping-pong: round trips per second",
            join_parts(f"N = {units.count(ns[0])} messages" if len(ns) == 1 else "",
                       f"bar: median; error bar: its {_ci(level)}"))
    return fig
