"""How a metric grows with N: the median per cell against N, and the cost of one more N."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from ...analysis import stats
from ...analysis.rules import MIN_PAIRS
from ...catalogue import WORKLOADS
from .. import units
from ..tables import per_unit
from ..theme import LANG_COLORS
from .axes import (LANG_STYLE, category_label, figure_header, finite_positive, fit_category_labels, join_parts,
                   legend_off_the_data, log_ticks, n_axis, panel_grid, panel_title, params_caption, shades,
                   split_params, threads_caption, unit_formatter, value_axis)
from .series import line_style, series_styles


def metric_vs_n(summary: pd.DataFrame, metric: str | None = None, distinct_series: bool = False) -> plt.Figure:
    """One panel per workload: the median of `metric` with its distribution-free CI (labelled with the
    coverage the table gives, not the nominal 95%) for every language, variant and parameter set; a
    line over N (log N axis, CI band) where several N were run, points with CI bars on a categorical
    axis where one was.  Series are shades of their language's colour, the legend inside the panel
    where it covers none of them, else under it (axes.legend_off_the_data);
    with `distinct_series` (many variants and parameter sets, as the idle-task figure has) each
    variant gets its own hue and marker and a second parameter set open markers (series.py), and the
    legend stands to the right of its panel, off the data."""
    metric = metric or summary["metric"].iloc[0]
    unit = units.metric_unit(metric)
    workloads = list(dict.fromkeys(summary["workload"]))
    panels = {w: _series_frame(summary[summary["workload"] == w]) for w in workloads}
    legends = {w: s["n"].nunique() > 1 and s["series"].nunique() > 1 for w, (s, _) in panels.items()}
    outside = distinct_series and any(legends.values())
    fig, axes = panel_grid(len(workloads), width=5.4 + (LEGEND_WIDTH if outside else 0))
    categorical, inside = [], []
    for ax, w in zip(axes, workloads):
        s, constant = panels[w]
        series = list(dict.fromkeys(s["series"]))
        keys = dict(zip(s["series"], zip(s["lang"], s["variant"], s["series"])))
        if distinct_series:
            by_key = series_styles(list(dict.fromkeys(keys.values())))
            looks = {name: line_style(by_key[keys[name]]) for name in series}
        else:
            looks = {}
            for lang in ("go", "rust"):
                names = [x for x in series if x.startswith(lang + " ")]
                looks.update({name: {"color": c, "marker": "o", "ms": 4.5, "linestyle": LANG_STYLE[lang]}
                              for name, c in zip(names, shades(LANG_COLORS[lang], len(names)))})
        ns = sorted(s["n"].unique())
        values = pd.concat([s["median"], s["ci_low"], s["ci_high"]])
        if len(ns) > 1:
            for name in series:
                g = s[s["series"] == name].sort_values("n")
                look = looks.get(name, {"color": "0.4", "marker": "o", "ms": 4.5})
                ax.plot(g["n"], g["median"], label=name, **look)
                ax.fill_between(g["n"], g["ci_low"], g["ci_high"], color=look["color"], alpha=0.18, linewidth=0)
                # the band's edges in its series' colour: where two bands overlap, their blend alone
                # would not tell whose band reaches where
                for edge in ("ci_low", "ci_high"):
                    ax.plot(g["n"], g[edge], color=look["color"], linewidth=0.7, alpha=0.7,
                            linestyle=look.get("linestyle", "-"))
            n_axis(ax, ns, w)
            sub = join_parts(params_caption(constant))
        else:
            x = np.arange(len(series))
            for i, name in enumerate(series):
                g = s[s["series"] == name].iloc[0]
                err = [[g["median"] - g["ci_low"]], [g["ci_high"] - g["median"]]]
                look = looks.get(name, {"color": "0.4", "marker": "o"})
                ax.errorbar([i], [g["median"]], yerr=np.nan_to_num(err), fmt=look["marker"], ms=6, capsize=5,
                            color=look["color"])
            ax.set_xticks(x, [category_label(n) for n in series], fontsize=8.5)
            categorical.append(ax)
            ax.set_xlim(-0.6, len(series) - 0.4)
            ax.grid(axis="x", visible=False)
            sub = join_parts(f"N = {units.count(ns[0])} ({WORKLOADS[w].n_meaning})" if w in WORKLOADS else f"N = {ns[0]}",
                        params_caption(constant))
        value_axis(ax, values, unit)
        ax.set_ylabel(f"median {units.metric_name(metric)}")
        panel_title(ax, w, sub)
        if legends[w] and outside:  # to the right of the panel, level with its top: off the data
            ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, fontsize=8.5, frameon=False)
        elif legends[w]:
            ax.legend(loc="upper left", fontsize=8)
            inside.append(ax)
    level, detail = _median_ci_level(summary)
    figure_header(fig, f"Median {units.metric_name(metric)} with {level + ' ' if level else ''}CI",
            join_parts(threads_caption(summary),
                       f"shaded band / bars: {level + ' ' if level else ''}distribution-free CI of the median"
                       + (f" ({detail})" if detail else "")))
    fit_category_labels(fig, categorical)
    legend_off_the_data(fig, inside)
    return fig


# The width, in inches, a panel gains for a legend standing to its right.
LEGEND_WIDTH = 3.8


def _series_frame(s: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """One workload's rows, each with its series name (language, variant, the parameters that vary
    within the workload, and the arm where there is one); and the parameters every row shares, for
    the caption."""
    s = s.copy()
    varying, constant = split_params(s, "params")
    s["series"] = [join_parts(f"{lang} {v}", p) for lang, v, p in zip(s["lang"], s["variant"], varying)]
    if "arm" in s and s["arm"].fillna("").astype(str).str.len().gt(0).any():
        s["series"] += " " + s["arm"].fillna("").astype(str)
    return s.sort_values(["lang", "series", "n"]), constant


def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def _median_ci_level(summary: pd.DataFrame) -> tuple[str, str]:
    """The coverage of the cells' median intervals as the table gives it (`ci_coverage`: exact for
    the number of samples, e.g. 93.5% for 10, not the nominal 95%), a range where the cells differ,
    "" where the table has none; and what it is: the order statistics (where every cell has the same
    number of samples) and how many cells' values tie, for which it is a lower bound."""
    cov = pd.to_numeric(summary.get("ci_coverage", pd.Series(dtype=float)), errors="coerce").dropna()
    if cov.empty:
        return "", ""
    lo = float(cov.min())
    level = units.coverage(cov)
    same = units.coverage([cov.min()]) == units.coverage([cov.max()])
    notes = []
    counts = pd.to_numeric(summary.loc[cov.index, "samples"], errors="coerce").dropna().astype(int).unique() \
        if "samples" in summary else []
    if len(counts) == 1:
        ranks = stats.median_ci_ranks(int(counts[0]))
        if ranks and same and abs(ranks[2] - lo) < 1e-9:
            notes.append(f"the {_ordinal(ranks[0])} to {_ordinal(ranks[1])} of {counts[0]} ordered values")
    elif len(counts) > 1:
        notes.append(f"by the number of samples, {min(counts)}–{max(counts)}")
    kinds = summary.loc[cov.index, "ci_coverage_kind"] if "ci_coverage_kind" in summary else pd.Series(dtype=str)
    tied = int((kinds == "at least").sum())
    if tied:
        notes.append(f"at least that in the {tied} of {len(cov)} cells whose values tie")
    return level, "; ".join(notes)




def per_task(costs: pd.DataFrame, one_n=()) -> plt.Figure | None:
    """The marginal cost of one more task (the centre of the slopes of the blocks that hold every N,
    with its 95% interval where MIN_PAIRS or more such blocks give one) of every series, on a log
    axis; only workloads where N counts tasks, workers or messages (not cpu_loops, whose N is an array
    length).  `one_n`: the run's workloads taken at a single N, which have no slope and which the
    caption names with those left out.  None when no such series exists."""
    c = costs[costs["workload"].map(lambda w: per_unit(w) is not None)].copy()
    if c.empty:
        return None
    left_out = sorted(set(costs["workload"]) - set(c["workload"]))
    single = sorted(set(one_n) - set(costs["workload"]))
    metric = c["metric"].iloc[0]
    unit = units.metric_unit(metric)
    c = c.sort_values(["workload", "lang", "variant", "params"])
    labels = []
    for w, g in c.groupby("workload", sort=False):
        varying, _ = split_params(g, "params")
        labels += [join_parts(f"{w}: {lang} {v}", p) for lang, v, p in zip(g["lang"], g["variant"], varying)]
    c["label"] = labels
    vals = pd.concat([c["per_task"], c["per_task_ci_low"], c["per_task_ci_high"]])
    pos = [v for v in vals if finite_positive(v)]
    lo_lim, hi_lim = (min(pos) / 2.5, max(pos) * 2.5) if pos else (1e-9, 1.0)
    fig, ax = plt.subplots(figsize=(8.5, 0.34 * len(c) + 2.1), layout="constrained")
    fig.get_layout_engine().set(rect=(0, 0, 1, 1 - 1.05 / fig.get_figheight()))  # two caption lines
    y = np.arange(len(c))[::-1]
    intervals = []  # (low, high) of every row that has an interval, to measure against its marker
    cut = 0  # rows whose interval goes on to 0 or below: drawn to the axis end with an arrow
    for yi, row in zip(y, c.itertuples()):
        color = LANG_COLORS.get(row.lang, "0.4")
        low = row.per_task_ci_low if finite_positive(row.per_task_ci_low) else lo_lim
        high = row.per_task_ci_high if finite_positive(row.per_task_ci_high) else lo_lim
        ax.hlines(yi, low, high, color=color, linewidth=2)
        if finite_positive(row.per_task_ci_low) and finite_positive(row.per_task_ci_high):
            intervals.append((low, high))
        if finite_positive(row.per_task):
            ax.plot([row.per_task], [yi], "o", color=color, ms=MARKER_SIZE)
        else:
            ax.text(lo_lim, yi, " ≤ 0 (no cost resolved)", va="center", fontsize=8, color="0.3")
        if not finite_positive(row.per_task_ci_low) and finite_positive(row.per_task_ci_high):
            ax.annotate("", (lo_lim, yi), (lo_lim * 1.8, yi), arrowprops={"arrowstyle": "->", "color": color})
            cut += 1
    ax.set_xscale("log")
    ax.set_xlim(lo_lim, hi_lim)
    log_ticks(ax.xaxis, lo_lim, hi_lim, unit)
    ax.xaxis.set_major_formatter(unit_formatter(unit))
    ax.set_yticks(y, c["label"], fontsize=8.5)
    ax.set_ylim(-0.7, len(c) - 0.3)
    ax.grid(axis="y", visible=False)
    words = sorted({per_unit(w) for w in c["workload"]})
    ax.set_xlabel(f"{units.metric_name(metric)} per {' / '.join(words)} (log scale)")
    # below the axes, outside the plotting area: a legend inside would sit on some row's point
    fig.legend(handles=[Line2D([], [], color=LANG_COLORS[k], marker="o", label=k) for k in ("go", "rust")],
               loc="outside lower center", ncols=2, fontsize=8.5, frameon=False)
    fig.canvas.draw()  # the final layout, to measure the bars against the markers
    figure_header(fig, f"Cost of one more task: {units.metric_name(metric)}",
            join_parts("slope over N of each block that holds every N: their centre", threads_caption(c),
                       f"{', '.join(left_out)} left out (N is not a count of tasks)" if left_out else "",
                       f"{', '.join(single)} run at one N (no slope)" if single else "") + "\n"
            + _interval_caption(c, _narrower_than_marker(ax, intervals), cut))
    return fig


MARKER_SIZE = 6  # points


def _narrower_than_marker(ax, intervals) -> int:
    """How many of the intervals (low, high) are drawn narrower than a marker, so that no bar shows
    beside the point: the 95% CI of a slope fitted to memory is often a fraction of a percent, far
    less than a point on a log axis.  Measured in pixels on the drawn axes."""
    marker_px = MARKER_SIZE * ax.figure.dpi / 72
    return sum(1 for low, high in intervals
               if abs(ax.transData.transform((high, 0))[0] - ax.transData.transform((low, 0))[0]) <= marker_px)


def slope_interval() -> str:
    """What a slope's bar is: its interval at the rules' confidence, from the blocks that hold every N."""
    return f"{units.lone_ci()} from the blocks that hold every N"


def _interval_caption(c: pd.DataFrame, narrow: int = 0, cut: int = 0) -> str:
    """What the bars are: the interval of the slope (at rules.CONFIDENCE) from the blocks that hold every N, which
    needs MIN_PAIRS of them; rows with fewer have none, and the caption says so; where `narrow` of
    the intervals are narrower than their markers, it says that too; and
    where `cut` of them go on to 0 or below (no cost resolved at their lower end, which a log axis
    cannot show), that their arrow says so."""
    has = c["per_task_ci_low"].notna() & c["per_task_ci_high"].notna()
    missing = int((~has).sum())
    shown = int(has.sum())
    words = slope_interval()
    if narrow:
        words += (", each narrower than its marker" if narrow == shown else
                  f", narrower than the marker where no bar shows ({narrow} of {shown} rows)")
    if cut:
        words += f"; arrow: the interval goes on to 0 or below ({cut} of {shown} rows)"
    if missing == 0:
        return words
    rows = "every row" if missing == len(c) else f"the {missing} rows" if missing > 1 else "the row"
    none = f"no interval for {rows} (fewer than {MIN_PAIRS} blocks hold every N)"
    return none if missing == len(c) else f"{words}; {none}"


def per_task_bars(costs: pd.DataFrame, unit_scale: float = 1.0, unit: str = "") -> plt.Figure | None:
    """Kept for callers of the earlier name: the same figure as `per_task` (the unit comes from the
    table's metric)."""
    return per_task(costs)
