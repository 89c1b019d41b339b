"""Go/Rust ratios: the ratio with its interval against N, and the map of every verdict."""
from __future__ import annotations

import math

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.cm import ScalarMappable
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from ...analysis import compare, rules
from ...analysis.compare import NOT_TESTED  # a comparison without pairs that count: its cell says so, not "?"
from ...catalogue import WORKLOADS
from .. import findings, units
from ..tables import ci_name, params_dict, verdict_kinds
from ..theme import EQUIVALENCE_COLOR, LANG_COLORS, series_colors
from .axes import (VERDICT_MARKERS, category_label, covering_limit, figure_header, finite_positive, join_parts, n_axis,
                   n_label, panel_grid, panel_title, params_caption, ratio_axis, ratio_label, split_params,
                   threads_caption)


DODGE = 10 ** 0.1  # series at one N sit a tenth of a decade apart on the log N axis


def _direction_words(metric: str) -> tuple[str, str]:
    word = rules.word(metric)
    return f"Go {word}", f"Rust {word}"


def ratio_limit(ratios: pd.DataFrame, margin: float = 0.0) -> float:
    """Half-height of the shared log2 ratio axis: every ratio inside with room to spare, every
    interval too unless one is so wide (a handful of noisy samples) that it would flatten every other
    panel: such an interval is cut at the edge and drawn with an arrow.  At least three margins
    wide so the equivalence band shows; widened where needed so that its ticks reach (nearly) to
    both ends (axes.covering_limit, the ticks of every ratio figure); at 2^MAX_RATIO_LOG2 at most."""
    def logs(column):
        return [abs(math.log2(v)) for v in ratios.get(column, pd.Series(dtype=float)) if finite_positive(v)]

    points = max(logs("ratio"), default=0.0)
    intervals = max(logs("ratio_ci_low") + logs("ratio_ci_high"), default=0.0)
    need = min(max(points, intervals) * 1.08, points * 1.3 + 0.4)
    floor = math.log2(1 + 3 * margin) if margin else math.log2(1.1)
    return covering_limit(float(max(need, floor, math.log2(1.1))))


def sets_axis(ratios: pd.DataFrame) -> pd.Series:
    """The rows the shared ratio axis is set by: all but the comparisons of two times either of
    which is under findings.SHORT_TIME_S (a few wake-ups of the scheduler, whose ratio can be extreme and move
    between runs by more than its interval says), unless every row is one.  A row left out that
    the axis does not reach is drawn at its edge, its value written beside it."""
    metric = ratios["metric"].iloc[0] if "metric" in ratios and len(ratios) else ""
    nan = pd.Series(np.nan, index=ratios.index)
    short = pd.Series([findings.short_time(metric, float(g), float(r))
                       for g, r in zip(ratios.get("go_median", nan), ratios.get("rust_median", nan))],
                      index=ratios.index, dtype=bool)
    return ~short if (~short).any() else pd.Series(True, index=ratios.index)


def _ratio_axis(ax, limit: float, metric: str, margin: float | None) -> None:
    ratio_axis(ax, limit)
    if margin:
        # the band to scale, its edges drawn so that it shows even where ±2% is a few pixels
        ax.axhspan(1 - margin, 1 + margin, color=EQUIVALENCE_COLOR, alpha=0.6, zorder=0, linewidth=0)
        for edge in (1 - margin, 1 + margin):
            ax.axhline(edge, color=EQUIVALENCE_COLOR, linewidth=1.4, zorder=0)
    ax.axhline(1.0, color="0.3", linewidth=0.7, zorder=1)
    # the directions outside the plotting area, along the right edge (rotated, so an arrow pointing
    # right reads upwards): never on top of a point or an interval
    lower, upper = _direction_words(metric)
    ax.text(1.015, 1.0, f"{upper} ▶", transform=ax.transAxes, ha="left", va="top", rotation=90, fontsize=8.5,
            color=LANG_COLORS["rust"], fontweight="bold")
    ax.text(1.015, 0.0, f"◀ {lower}", transform=ax.transAxes, ha="left", va="bottom", rotation=90, fontsize=8.5,
            color="#007EA0", fontweight="bold")


def _pair_frame(r: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Adds a `pair` label per row holding only what varies within the frame (the Go side, the Rust
    side, shared parameters) and returns what is constant, for the caption."""
    r = r.copy()

    def shared_keys(w) -> tuple:
        return WORKLOADS[w].shared_params if w in WORKLOADS else ()

    sides = {}
    for lang in ("go", "rust"):
        params = r[f"{lang}_params"] if f"{lang}_params" in r else pd.Series([""] * len(r), index=r.index)
        sides[lang] = [join_parts(v, ", ".join(f"{k}={x}" for k, x in params_dict(p).items() if k not in shared_keys(w)))
                       for v, p, w in zip(r[f"{lang}_variant"], params, r["workload"])]
    go_params = r["go_params"] if "go_params" in r else pd.Series([""] * len(r), index=r.index)
    r["_shared"] = [",".join(f"{k}={x}" for k, x in params_dict(p).items() if k in shared_keys(w))
                    for p, w in zip(go_params, r["workload"])]
    shared_vary, shared_const = split_params(r, "_shared")
    go_vary, rust_vary = len(set(sides["go"])) > 1, len(set(sides["rust"])) > 1
    labels = []
    for go, rust, sp in zip(sides["go"], sides["rust"], shared_vary):
        if go_vary and rust_vary:
            pair = f"{go} vs {rust}"
        elif go_vary:
            pair = f"Go {go}"
        elif rust_vary:
            pair = f"Rust {rust}"
        else:
            pair = ""
        labels.append(join_parts(pair, sp))
    r["pair"] = labels
    const = []
    if not go_vary and not rust_vary:
        const.append(f"Go {sides['go'][0]} vs Rust {sides['rust'][0]}")
    elif not go_vary:
        const.append(f"Go {sides['go'][0]}")
    elif not rust_vary:
        const.append(f"Rust {sides['rust'][0]}")
    if shared_const:
        const.append(params_caption(shared_const))
    return r.drop(columns=["_shared"]), join_parts(*const)


def ratio_vs_n(ratios: pd.DataFrame, margin: float | None = None) -> plt.Figure:
    """One panel per workload: the Go/Rust ratio (exp of the paired estimate, the centre of the
    per-block log ratios, not a ratio of medians) with its interval (at the table's level,
    the family's, named in the header), on one log2 axis shared by every panel; over N where several
    N were run, by pair of variants where one was."""
    metric = ratios["metric"].iloc[0]
    kinds = verdict_kinds(ratios)
    ratios = ratios.assign(vkind=kinds.values)
    # the axis is set by the rows that are not of two times of microseconds (sets_axis); a ratio
    # beyond it is a triangle at its edge with its value written beside it
    axis_rows = sets_axis(ratios)
    limit = ratio_limit(ratios[axis_rows], margin or 0.0)
    top, bottom = 2 ** limit, 2 ** -limit
    outside = pd.Series([finite_positive(v) and abs(math.log2(v)) > limit for v in ratios["ratio"]],
                        index=ratios.index, dtype=bool)
    # the rows whose interval the axis cuts (their estimate inside it), named with their interval in the header
    beyond = ratios[[any(finite_positive(v) and abs(math.log2(v)) > limit for v in (lo, hi)) and not out
                     for lo, hi, out in zip(ratios["ratio_ci_low"], ratios["ratio_ci_high"], outside)]]
    clipped = not beyond.empty
    workloads = list(dict.fromkeys(ratios["workload"]))
    untested = _untested_text(ratios)  # a line of its own under the caption, with room made for it
    fig, axes = panel_grid(len(workloads), width=5.0, height=3.9, header=0.9 + (0.2 if untested else 0.0))
    written: list[tuple] = []  # the ratios beyond the axis: (panel, x, y at the edge, upwards, colour, text)
    for ax, w in zip(axes, workloads):
        r, const = _pair_frame(ratios[ratios["workload"] == w])
        pairs = list(dict.fromkeys(r["pair"]))
        palette = series_colors(len(pairs)) if len(pairs) > 1 else ["0.15"]  # not Go's blue nor Rust's red
        ns = sorted(r["n"].unique())
        multi = len(ns) > 1
        for k, (pair, color) in enumerate(zip(pairs, palette)):
            g = r[r["pair"] == pair].sort_values("n")
            # series side by side at each N: apart by a tenth of a decade, so that markers and bars do not overlap
            x = (g["n"] * (DODGE ** (k - (len(pairs) - 1) / 2))).to_numpy() if multi else np.full(len(g), k)
            y = g["ratio"].clip(bottom, top).to_numpy(dtype=float)
            lo = g["ratio_ci_low"].clip(bottom, top).to_numpy(dtype=float)
            hi = g["ratio_ci_high"].clip(bottom, top).to_numpy(dtype=float)
            out = outside.loc[g.index].to_numpy()
            if multi:  # the line joins the estimates the axis shows, not a point drawn at its edge
                ax.plot(x, np.where(out, np.nan, y), color=color, linewidth=1.1, alpha=0.7, label=pair or None)
            ax.vlines(x, np.where(np.isnan(lo), y, lo), np.where(np.isnan(hi), y, hi), color=color, linewidth=1.6)
            for xi, yi, kind, beyond_axis, row in zip(x, y, g["vkind"], out, g.itertuples()):
                marker, filled = VERDICT_MARKERS.get(kind, ("o", False))
                if beyond_axis:  # a triangle pointing off the axis, just inside its edge, its value beside it
                    up = yi >= top
                    edge = top / 2 ** (0.04 * limit) if up else bottom * 2 ** (0.04 * limit)
                    ax.plot([xi], [edge], marker="^" if up else "v", ms=8, color=color, markeredgewidth=1.5,
                            markerfacecolor=color if filled else "white", linestyle="none", zorder=3, clip_on=False)
                    written.append((ax, xi, edge, up, color, units.ratio(row.ratio, row.ratio_ci_low, row.ratio_ci_high)))
                    continue
                ax.plot([xi], [yi], marker=marker, ms=6.5, color=color, markerfacecolor=color if filled else "white",
                        markeredgewidth=1.5, linestyle="none", zorder=3)
            for xi, l0, h0, beyond_axis in zip(x, g["ratio_ci_low"], g["ratio_ci_high"], out):
                if beyond_axis:  # its triangle points off the axis already, its interval written beside it
                    continue
                if finite_positive(h0) and h0 > 2 ** limit:
                    ax.annotate("", (xi, 2 ** limit), (xi, 2 ** (limit * 0.9)), arrowprops={"arrowstyle": "->", "color": color})
                if finite_positive(l0) and l0 < 2 ** -limit:
                    ax.annotate("", (xi, 2 ** -limit), (xi, 2 ** (-limit * 0.9)), arrowprops={"arrowstyle": "->", "color": color})
        _ratio_axis(ax, limit, metric, margin)
        if multi:
            n_axis(ax, ns, w)
            sub = const
            if len(pairs) > 1:
                ax.legend(loc="best", fontsize=7.5)  # where it covers the fewest points: the axis is tight
        else:
            ax.set_xticks(range(len(pairs)), [category_label(p).replace(" vs ", "\nvs ") for p in pairs], fontsize=8)
            ax.set_xlim(-0.7, len(pairs) - 0.3)
            ax.grid(axis="x", visible=False)
            sub = join_parts(f"N = {units.count(ns[0])}", const)
            ax.set_xlabel(f"N = {units.count(ns[0])}" + (": pairs of variants" if len(pairs) > 1 else ""))
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel(f"Go / Rust, {units.metric_name(metric)} (paired)")
        panel_title(ax, w, sub)
    for ax, xi, edge, up, color, text in written:  # once the panel's x axis is set: the text stays inside it
        left, right = ax.get_xlim()
        scale = ax.get_xscale() == "log"
        middle = math.sqrt(left * right) if scale and left > 0 else (left + right) / 2
        ax.annotate(text, (xi, edge), xytext=(7 if xi <= middle else -7, -3 if up else 3), textcoords="offset points",
                    ha="left" if xi <= middle else "right", va="top" if up else "bottom", fontsize=7.5, color=color,
                    bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})
    handles = [Line2D([], [], marker="o", color="0.2", linestyle="none", label="a difference (the adjusted CI excludes 1)"),
               Line2D([], [], marker="o", color="0.2", markerfacecolor="white", linestyle="none", label="inconclusive"),
               Line2D([], [], marker="D", color="0.2", linestyle="none", label="equivalent")]
    if margin:
        handles.append(Patch(color=EQUIVALENCE_COLOR, alpha=0.55, label=f"equivalence band ±{margin:.0%}"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8.5, frameon=False)
    lower, upper = _direction_words(metric)
    figure_header(fig, f"Go / Rust ratio of {units.metric_name(metric)} (paired estimate), with {ci_name(ratios)}",
            join_parts(threads_caption(ratios), f"one log₂ scale in every panel: below 1 {lower}, above 1 {upper}",
                  _outside_text(ratios[outside], ratios[outside].index.difference(ratios[axis_rows].index)),
                  _beyond_text(beyond) if clipped else "") + (f"\n{untested}" if untested else ""))
    return fig


def _untested_text(ratios: pd.DataFrame) -> str:
    """The header's words for the comparisons that could not be tested (compare.untested: no pairs
    that count, so no ratio to draw): how many and where, so that a point missing from a panel is
    not read as a gap in the plan ('not drawn: 3 comparisons not tested, too few pairs that count
    (the table's warning says why): sleep at N = 1,000 and 10,000')."""
    rows = ratios[compare.untested(ratios).to_numpy()]
    if rows.empty:
        return ""
    where = "; ".join(f"{w} at N = {' and '.join(units.count(n) for n in sorted(g['n'].unique()))}"
                      for w, g in rows.groupby("workload", sort=False))
    k = len(rows)
    return (f"not drawn: {k} comparison{'' if k == 1 else 's'} {NOT_TESTED}, too few pairs that count (the table's "
            f"warning says why): {where}")


def _outside_text(rows: pd.DataFrame, short: pd.Index) -> str:
    """The header's words for ratios beyond the axis, drawn as a triangle at its edge with their value
    written beside it, and where either of their times is under SHORT_TIME_S, why the axis leaves them
    out."""
    if rows.empty:
        return ""
    why = (f" (a row with a time under {units.quantity(findings.SHORT_TIME_S, 's')} does not set the axis: a few "
           "wake-ups of the scheduler, whose ratio can move between runs by more than its interval says)"
           if rows.index.isin(short).any() else "")
    return f"▲/▼ at an edge: a ratio beyond the axis, its value written beside it{why}"


def _beyond_text(rows: pd.DataFrame, most: int = 3) -> str:
    """The header's words for intervals the axis cuts: which rows, and their interval, so that a
    reader need not look it up ('arrow: the interval goes on beyond the axis: idle_tasks, N = 1,
    0.162 [0.0375, 0.291]')."""
    named = [f"{r.workload}, N = {units.count(r.n)}, {units.ratio(r.ratio, r.ratio_ci_low, r.ratio_ci_high)}"
             for r in rows.head(most).itertuples()]
    more = len(rows) - most
    return (f"arrow: the interval goes on beyond the axis: {'; '.join(named)}"
            + (f"; and {more} more (the table has them)" if more > 0 else ""))



VERDICT_SYMBOLS = {"a": "Go", "b": "Rust", "equivalent": "≈", "inconclusive": "?"}
INCONCLUSIVE_VEIL = 0.65  # the share of white over an inconclusive cell's colour


def _within_margin(value) -> bool:
    """The table's `within_margin` flag (True, "True" or a missing value)."""
    return str(value).strip().lower() in ("true", "1")


def verdict_heatmap(table: pd.DataFrame, margin: float | None = None) -> plt.Figure:
    """Per workload (with its own N): one row per pair of variants, one column per N; the colour is
    the Go/Rust ratio on a diverging log scale centred at 1 (blue: Go needs less, red: Rust), the
    cell holds the ratio and the verdict (Go or Rust in bold with a frame: a significant win;
    ≈: equivalent; ?: inconclusive, its colour faded, so that an open comparison's estimate does not
    read as a result).  Workloads are laid out as small blocks of equal cell size."""
    import textwrap

    metric = table["metric"].iloc[0]
    # a comparison that could not be tested (no pairs that count) is no open comparison: its cell says so
    t = table.assign(vkind=verdict_kinds(table).values, untested=compare.untested(table).values)
    logs = [abs(math.log2(v)) for v in t["ratio"] if finite_positive(v)]
    vmax = min(max(max(logs, default=0.0), math.log2(1.25)), 3.0)
    norm = mcolors.Normalize(-vmax, vmax)
    cmap = plt.get_cmap("RdBu_r")
    cell, char = 0.78, 0.066  # inches: one cell; one character of a tick label
    blocks = []
    for w in dict.fromkeys(t["workload"]):
        r, const = _pair_frame(t[t["workload"] == w])
        ns, pairs = sorted(r["n"].unique()), list(dict.fromkeys(r["pair"]))
        label_w = max((len(p) for p in pairs), default=0) * char + (0.25 if any(pairs) else 0.1)
        width = max(label_w + len(ns) * cell, 2.2)
        sub = textwrap.fill(const, max(int((width + 0.4) / 0.062), 20))
        top = 0.3 + 0.16 * (sub.count("\n") + 1 if sub else 0)
        blocks.append({"w": w, "r": r, "sub": sub, "ns": ns, "pairs": pairs, "label_w": label_w, "width": width,
                       "height": top + len(pairs) * cell + 0.62, "top": top})
    max_row, gap = 12.5, 0.45
    rows, current = [], []
    for b in blocks:
        if current and sum(x["width"] + gap for x in current) + b["width"] > max_row:
            rows.append(current)
            current = []
        current.append(b)
    rows.append(current)
    header, bar_w = 0.95, 1.5
    fig_w = max(sum(x["width"] + gap for x in row) for row in rows) + bar_w
    fig_h = header + sum(max(x["height"] for x in row) + 0.15 for row in rows)
    fig = plt.figure(figsize=(fig_w, fig_h))
    y_top = fig_h - header
    for row in rows:
        row_h = max(x["height"] for x in row)
        x_left = 0.0
        for b in row:
            nrow, ncol = len(b["pairs"]), len(b["ns"])
            left, bottom = x_left + b["label_w"], y_top - b["top"] - nrow * cell
            ax = fig.add_axes([left / fig_w, bottom / fig_h, ncol * cell / fig_w, nrow * cell / fig_h])
            values = np.full((nrow, ncol), np.nan)
            for r in b["r"].itertuples():
                if finite_positive(r.ratio):
                    values[b["pairs"].index(r.pair), b["ns"].index(r.n)] = math.log2(r.ratio)
            ax.imshow(values, cmap=cmap, norm=norm, aspect="auto", extent=(-0.5, ncol - 0.5, nrow - 0.5, -0.5))
            # an open comparison's colour is veiled: its ratio is an estimate the verdict did not establish
            veil = np.zeros((nrow, ncol, 4))
            for r in b["r"].itertuples():
                if r.vkind == "inconclusive":
                    veil[b["pairs"].index(r.pair), b["ns"].index(r.n)] = (1, 1, 1, INCONCLUSIVE_VEIL)
            ax.imshow(veil, aspect="auto", extent=(-0.5, ncol - 0.5, nrow - 0.5, -0.5))
            for r in b["r"].itertuples():
                y, x = b["pairs"].index(r.pair), b["ns"].index(r.n)
                v = values[y, x]
                rgb = cmap(norm(v))[:3] if not np.isnan(v) else (1, 1, 1)
                rgb = tuple(c * (1 - veil[y, x, 3]) + veil[y, x, 3] for c in rgb)  # as the cell shows it
                dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 0.5
                win = r.vkind in ("a", "b")
                # the estimate as the tables print it beside its interval (units.ratio_parts: a win
                # never reads 1, and the digits an end needs to be told from it are the estimate's too)
                shown = units.ratio_parts(r.ratio, getattr(r, "ratio_ci_low", np.nan),
                                          getattr(r, "ratio_ci_high", np.nan))[0]
                symbol = NOT_TESTED if r.untested else VERDICT_SYMBOLS.get(r.vkind, "?")
                if win and margin and _within_margin(getattr(r, "within_margin", False)):
                    symbol += f" <{margin:.0%}"
                ax.text(x, y, ("–" if np.isnan(v) else shown)
                        + "\n" + symbol, ha="center", va="center", fontsize=8.5,
                        color="white" if dark else "black", fontweight="bold" if win else "normal", linespacing=1.1)
                if win:
                    ax.add_patch(Rectangle((x - 0.44, y - 0.44), 0.88, 0.88, fill=False, edgecolor="black",
                                           linewidth=1.6))
            ax.set_xticks(range(ncol), [units.short_count(n) for n in b["ns"]], fontsize=8.5)
            ax.set_yticks(range(nrow), b["pairs"] if any(b["pairs"]) else [""] * nrow, fontsize=8.5)
            ax.set_xticks(np.arange(-0.5, ncol), minor=True)
            ax.set_yticks(np.arange(-0.5, nrow), minor=True)
            ax.grid(which="minor", color="white", linewidth=2.5)
            ax.grid(which="major", visible=False)
            ax.tick_params(which="both", length=0)
            for spine in ax.spines.values():
                spine.set_visible(False)
            ax.set_xlabel(n_label(b["w"]), fontsize=8.5, labelpad=2)
            fig.text((x_left + 0.05) / fig_w, (y_top - 0.05) / fig_h, b["w"], ha="left", va="top", fontsize=11,
                     fontweight="bold")
            if b["sub"]:
                fig.text((x_left + 0.05) / fig_w, (y_top - 0.3) / fig_h, b["sub"], ha="left", va="top", fontsize=8,
                         color="0.35", linespacing=1.15)
            x_left += b["width"] + gap
        y_top -= row_h + 0.15
    bar_h = min(3.2, fig_h - header - 0.4)
    cax = fig.add_axes([(fig_w - bar_w + 0.35) / fig_w, (fig_h - header - bar_h) / fig_h, 0.16 / fig_w, bar_h / fig_h])
    bar = fig.colorbar(ScalarMappable(norm, cmap), cax=cax)
    ticks = [k for k in (-3, -2, -1, 0, 1, 2, 3) if abs(k) <= vmax + 1e-9]
    if vmax < 1.5:
        ticks = sorted(set(ticks) | {-math.log2(1.25), math.log2(1.25)})
    bar.set_ticks(ticks, labels=[ratio_label(2 ** k) for k in ticks])
    lower, upper = _direction_words(metric)
    bar.set_label(f"Go / Rust (blue: {lower}; red: {upper})", fontsize=9)
    fig.bench_title = f"Verdicts on {units.metric_name(metric)}: Go / Rust ratio (paired estimate)"
    fig.text(0.5 * (fig_w - bar_w) / fig_w, 1 - 0.2 / fig_h, fig.bench_title,
             ha="center", va="top", fontsize=plt.rcParams["figure.titlesize"], fontweight="bold")
    fig.text(0.5 * (fig_w - bar_w) / fig_w, 1 - 0.52 / fig_h,
             join_parts(threads_caption(table), "bold in a frame: significant win of Go or Rust"
                   + (f" (<{margin:.0%}: by less than {margin:.0%})" if margin else "") + "; ≈: equivalent"
                   + (f" within ±{margin:.0%}" if margin else "") + "; ?: inconclusive (colour faded)"
                   + (f"\n{NOT_TESTED}: too few pairs that count (the table's warning says why)"
                      if t["untested"].any() else "")),
             ha="center", va="top", fontsize=9.5, color="0.3")
    return fig
