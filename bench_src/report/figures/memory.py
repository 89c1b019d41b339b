"""The memory notebook's figures: RSS timelines, metrics side by side, ping-pong rates."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import units
from ..theme import LANG_COLORS
from .axes import (LANG_STYLE, figure_header, finite_positive, join_parts, panel_grid, shades, split_params,
                   threads_caption, unit_formatter, value_axis)
from .scaling import SLOPE_INTERVAL, metric_vs_n, per_task

# Colours of a language's variants: its own colour first, then hues of the same family (Go's blues
# and greens, Rust's reds, oranges and purples), far enough apart to tell three or four variants
# apart, which shades of one colour are not; each variant has its own marker too.
FAMILIES = {"go": [LANG_COLORS["go"], "#1F4E9C", "#2A9D74", "#6C5BB8"],
            "rust": [LANG_COLORS["rust"], "#E8962E", "#8C2D7A", "#6B2A12"]}
MARKERS = ["o", "s", "^", "D", "v", "P"]


def rss_timeline(tl: pd.DataFrame) -> plt.Figure:
    """RSS over time, one line per sample, time from the workload timer's start; dotted verticals
    mark when all tasks were spawned and dash-dotted when they had all finished (per language)."""
    fig, ax = plt.subplots(figsize=(9, 4.8), layout="constrained")
    ns = sorted(tl["n"].unique())
    series = tl[["lang", "variant", "n"]].drop_duplicates().sort_values(["lang", "variant", "n"])
    colors = {}
    for lang, g in series.groupby("lang"):
        keys = list(g.itertuples(index=False, name=None))
        colors.update(zip(keys, shades(LANG_COLORS.get(lang, "#666666"), len(keys))))
    for sid, g in tl.groupby("sample_id"):
        lang, variant, n = g["lang"].iloc[0], g["variant"].iloc[0], g["n"].iloc[0]
        label = f"{lang} {variant}" + (f", N={units.count(n)}" if len(ns) > 1 else "")
        ax.plot(g["t_s"], g["rss_mib"], color=colors.get((lang, variant, n), "0.4"), alpha=0.9, linewidth=1.3,
                label=label, linestyle=LANG_STYLE.get(lang, "-"))
        for key, style in (("spawned_ns", ":"), ("finished_ns", "-.")):
            v = g[key].iloc[0]
            if pd.notna(v):
                ax.axvline(float(v) / 1e9, color=LANG_COLORS.get(lang, "0.4"), linestyle=style, linewidth=0.8)
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=8.5, title="dotted: all spawned; dash-dot: all finished")
    ax.set_xlabel("time since the workload timer started (s)")
    ax.set_ylabel("resident set size")
    ax.yaxis.set_major_formatter(unit_formatter("MiB"))
    ax.set_title("Memory over time, and what each runtime gives back after its tasks end"
                 + (f" (N = {units.count(ns[0])})" if len(ns) == 1 else ""))
    return fig


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


def series_styles(keys) -> dict:
    """Per series key (lang, variant, parameters): its colour and marker (one per variant, from its
    language's family), filled for the variant's first parameter set and open (and larger, so that
    both show where they coincide) for the others, and the language's line style."""
    styles = {}
    for lang in dict.fromkeys(k[0] for k in keys):
        variants = list(dict.fromkeys(k[1] for k in keys if k[0] == lang))
        family = FAMILIES.get(lang) or shades(LANG_COLORS.get(lang, "#666666"), len(variants))
        family = family if len(variants) <= len(family) else shades(family[0], len(variants))
        for i, variant in enumerate(variants):
            rest = list(dict.fromkeys(k[2] for k in keys if k[:2] == (lang, variant)))
            for j, params in enumerate(rest):
                styles[(lang, variant, params)] = {"color": family[i], "marker": MARKERS[i % len(MARKERS)],
                                                   "filled": j == 0, "linestyle": LANG_STYLE.get(lang, "-")}
    return styles


def idle_peak_vs_n(summary: pd.DataFrame, metric: str = "peak_rss_mib") -> plt.Figure:
    """The median figure of `metric` over N (figures.scaling.metric_vs_n: its titles, CI bands and
    coverage caption), with every series told apart: each variant its own colour in its language's
    family and its own marker, a second parameter set (wait=sleep beside wait=release) with open
    markers; the legend to the right of the panels, outside them."""
    fig = metric_vs_n(summary, metric)
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}
    wide = False
    for w, s in summary.groupby("workload", sort=False):
        ax = panels.get(w)
        if ax is None:
            continue
        varying, _ = split_params(s, "params")
        names = {join_parts(f"{lang} {v}", p): (lang, v, p) for lang, v, p in zip(s["lang"], s["variant"], varying)}
        styles = series_styles(list(names.values()))
        lines = [ln for ln in ax.get_lines() if ln.get_label() in names]
        bands = list(ax.collections)
        for k, line in enumerate(lines):
            st = styles[names[line.get_label()]]
            line.set(color=st["color"], marker=st["marker"], linestyle=st["linestyle"], markeredgecolor=st["color"],
                     markerfacecolor=st["color"] if st["filled"] else "white", markersize=5 if st["filled"] else 7.5,
                     markeredgewidth=1.3, zorder=3 if st["filled"] else 2.5)
            if len(bands) == len(lines):  # metric_vs_n draws one CI band per line, in the same order
                bands[k].set_color(st["color"])
        if ax.get_legend() is not None:  # to the right of the panel, level with its top: off the data
            ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, fontsize=8.5, frameon=False)
            wide = True
    if wide:
        width, height = fig.get_size_inches()
        fig.set_size_inches(width + 3.8, height)
    return fig


def bytes_per_task(costs: pd.DataFrame) -> plt.Figure | None:
    """The cost of one more task (figures.scaling.per_task), with the caption saying where an
    interval is narrower than its marker and so cannot show: the 95% CI of a slope fitted to memory
    is often a fraction of a percent, far less than a point on a log axis."""
    fig = per_task(costs)
    if fig is None:
        return None
    fig.canvas.draw()  # the final layout, to measure the bars against the markers
    ax = fig.axes[0]
    marker = max((ln.get_markersize() for ln in ax.get_lines() if ln.get_marker() == "o"), default=6.0)
    marker_px = marker * fig.dpi / 72
    left = ax.get_xlim()[0]
    # one bar per row; a row without an interval has its bar collapsed onto the axis's left end
    bars = [seg for coll in ax.collections for seg in coll.get_segments()
            if len(seg) == 2 and not seg[0][0] == seg[1][0] == left]
    hidden = sum(1 for (x0, y0), (x1, _) in bars
                 if abs(ax.transData.transform((x1, y0))[0] - ax.transData.transform((x0, y0))[0]) <= marker_px)
    if hidden:
        say = ("each narrower than its marker" if hidden == len(bars) else
               f"narrower than the marker where no bar shows ({hidden} of {len(bars)} rows)")
        for text in fig.texts:
            if SLOPE_INTERVAL in text.get_text():
                text.set_text(text.get_text().replace(SLOPE_INTERVAL, f"{SLOPE_INTERVAL}, {say}", 1))
    return fig
