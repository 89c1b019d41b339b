"""Figures for publishing.  Every function takes a table (a per-cell summary, a comparison table, the
samples frame) and returns a matplotlib Figure; none changes the global style (the caller sets it
once: `theme.context()` or `theme.apply()`), and `export.images.save` writes SVG, PNG and PDF.

Conventions, the same in every figure:
- an N axis is logarithmic with ticks at the N values run; a workload run at one N gets a
  categorical axis (one position per series), never a numeric axis around a single point;
- values spanning a decade or more get a log axis, with ticks in the metric's unit (10 ms, 1 s);
- Go/Rust ratios share one log2 axis centred on 1 with the same limits in every panel, the
  equivalence band and the direction ("Go faster" below 1, "Rust faster" above; "smaller" for
  memory) drawn in;
- what is the same for every series of a figure or panel (parameters, N) is written once in its
  caption or panel subtitle, not repeated in every legend entry.
"""
from __future__ import annotations

import math

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.cm import ScalarMappable
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from ..catalogue import WORKLOADS
from . import units
from .tables import blank, params_dict, per_unit, verdict_kinds
from .theme import EQUIVALENCE_COLOR, LANG_COLORS

VERDICT_MARKERS = {"a": ("o", True), "b": ("o", True), "equivalent": ("D", True), "inconclusive": ("o", False)}
LANG_STYLE = {"go": "-", "rust": "--"}
MAX_LOG2 = 6.0  # ratio axes end at 64x at most; intervals beyond are drawn to the edge with an arrow


# --- layout helpers ----------------------------------------------------------------------------------

def _panels(count: int, width: float = 5.4, height: float = 4.0, ncols: int = 3, header: float = 0.9):
    """A figure with `count` panels in rows of at most `ncols`, and `header` inches on top for the
    title and caption; unused panels are hidden."""
    cols = max(1, min(ncols, count))
    rows = max(1, -(-count // cols))
    fig_h = height * rows + header
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, fig_h), squeeze=False, layout="constrained")
    fig.get_layout_engine().set(rect=(0, 0, 1, 1 - header / fig_h))
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def _header(fig: plt.Figure, title: str, caption: str = "") -> None:
    """Title and caption line in the space `_panels` left on top."""
    h = fig.get_figheight()
    fig.text(0.5, 1 - 0.22 / h, title, ha="center", va="top", fontsize=plt.rcParams["figure.titlesize"],
             fontweight="bold")
    if caption:
        fig.text(0.5, 1 - 0.55 / h, caption, ha="center", va="top", fontsize=9.5, color="0.3", wrap=True)


def _subtitle(ax, title: str, subtitle: str = "") -> None:
    """A bold panel title with a smaller grey line under it for what the panel's series share."""
    ax.set_title(title, pad=17 if subtitle else 6)
    if subtitle:
        ax.text(0.5, 1.012, subtitle, transform=ax.transAxes, ha="center", va="bottom", fontsize=8.5, color="0.35")


def _spans_decades(values) -> bool:
    v = np.asarray([x for x in values if _finite_positive(x)], dtype=float)
    return v.size > 1 and v.max() / v.min() >= 10


def _finite_positive(x) -> bool:
    try:
        return math.isfinite(float(x)) and float(x) > 0
    except (TypeError, ValueError):
        return False


def _unit_formatter(unit: str, digits: int = 3):
    if unit == "count":
        return mticker.FuncFormatter(lambda v, _: units.short_count(v) if v >= 1 or v == 0 else units.significant(v, 2))
    def fmt(v, _):
        if v == 0:
            return "0"
        number, _, name = units.quantity(v, unit, digits).partition(" ")
        return f"{units.trim(number)} {name}".strip()

    return mticker.FuncFormatter(fmt)


BYTE_UNITS = {"B": 1.0, "KiB": 2.0**10, "MiB": 2.0**20}


def _byte_ticks(lo: float, hi: float, unit: str) -> list[float]:
    """Powers of two (in bytes: 256 B, 1 KiB, 4 KiB, ...) between lo and hi, given in `unit`; at
    most about eight of them."""
    scale = BYTE_UNITS[unit]
    k0, k1 = math.floor(math.log2(lo * scale)), math.ceil(math.log2(hi * scale))
    step = max(1, math.ceil((k1 - k0) / 8))
    return [2.0 ** k / scale for k in range(k0 - k0 % step, k1 + 1, step) if lo <= 2.0 ** k / scale <= hi]


def _log_ticks(a, lo: float, hi: float, unit: str) -> None:
    """Major ticks of a log axis: powers of two for sizes, 1-2-5 or decades otherwise."""
    if unit in BYTE_UNITS:
        a.set_major_locator(mticker.FixedLocator(_byte_ticks(lo, hi, unit)))
    else:
        subs = (1.0,) if hi / lo >= 1000 else (1.0, 2.0, 5.0)
        a.set_major_locator(mticker.LogLocator(base=10, subs=subs))
    a.set_minor_locator(mticker.NullLocator() if unit in BYTE_UNITS else
                        mticker.LogLocator(base=10, subs=np.arange(2, 10)))
    a.set_minor_formatter(mticker.NullFormatter())


def _value_axis(ax, values, unit: str, axis: str = "y") -> None:
    """Log with unit ticks when the values span a decade, else linear from zero with unit ticks."""
    a = ax.yaxis if axis == "y" else ax.xaxis
    if _spans_decades(values):
        (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
        v = np.asarray([x for x in values if _finite_positive(x)], dtype=float)
        _log_ticks(a, v.min() / 1.3, v.max() * 1.3, unit)
    else:
        top = max((float(x) for x in values if _finite_positive(x)), default=0.0)
        (ax.set_ylim if axis == "y" else ax.set_xlim)(0, top * 1.1 if top > 0 else None)
        a.set_major_locator(mticker.MaxNLocator(6))
    a.set_major_formatter(_unit_formatter(unit))


def _n_axis(ax, ns, workload: str) -> None:
    """Log N axis with a tick at every N that was run."""
    ns = sorted({int(n) for n in ns})
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(mticker.FixedLocator(ns))
    ax.xaxis.set_minor_locator(mticker.NullLocator())
    ax.xaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: units.short_count(v)))
    ax.set_xlim(ns[0] / 1.6, ns[-1] * 1.6)
    ax.set_xlabel(n_label(workload))


def n_label(workload: str) -> str:
    return f"N ({WORKLOADS[workload].n_meaning})" if workload in WORKLOADS else "N"


def _split_params(frame: pd.DataFrame, column: str) -> tuple[pd.Series, dict[str, str]]:
    """Per row, the parameters (k=v) of `column` that vary across the rows; and those that do not."""
    dicts = frame[column].map(params_dict) if column in frame else pd.Series([{}] * len(frame), index=frame.index)
    keys = list(dict.fromkeys(k for d in dicts for k in d))
    constant = {}
    for k in keys:
        values = {d.get(k) for d in dicts}
        if len(values) == 1 and None not in values:
            constant[k] = values.pop()
    varying = dicts.map(lambda d: ", ".join(f"{k}={v}" for k, v in d.items() if k not in constant))
    return varying, constant


def _params_caption(constant: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in constant.items())


def _join(*parts: str) -> str:
    return " · ".join(p for p in parts if p)


def _threads_caption(frame: pd.DataFrame) -> str:
    if "threads_requested" not in frame:
        return ""
    values = {("all CPUs" if blank(v) else str(int(float(v)))) for v in frame["threads_requested"]}
    return f"threads: {values.pop()}" if len(values) == 1 else ""


def _shades(color: str, count: int) -> list:
    if count <= 1:
        return [color]
    base = np.array(mcolors.to_rgb(color))
    return [tuple(base * (1 - 0.45 * k / (count - 1))) for k in range(count)]


# --- median vs N -------------------------------------------------------------------------------------

def metric_vs_n(summary: pd.DataFrame, metric: str | None = None) -> plt.Figure:
    """One panel per workload: the median of `metric` with its 95% CI for every language, variant
    and parameter set; a line over N (log N axis, CI band) where several N were run, points with CI
    bars on a categorical axis where one was."""
    metric = metric or summary["metric"].iloc[0]
    unit = units.metric_unit(metric)
    workloads = list(dict.fromkeys(summary["workload"]))
    fig, axes = _panels(len(workloads))
    for ax, w in zip(axes, workloads):
        s = summary[summary["workload"] == w].copy()
        varying, constant = _split_params(s, "params")
        s["series"] = [_join(f"{lang} {v}", p) for lang, v, p in zip(s["lang"], s["variant"], varying)]
        if "arm" in s and s["arm"].fillna("").astype(str).str.len().gt(0).any():
            s["series"] += " " + s["arm"].fillna("").astype(str)
        s = s.sort_values(["lang", "series", "n"])
        series = list(dict.fromkeys(s["series"]))
        colors = {}
        for lang in ("go", "rust"):
            names = [x for x in series if x.startswith(lang + " ")]
            colors.update(zip(names, _shades(LANG_COLORS[lang], len(names))))
        ns = sorted(s["n"].unique())
        values = pd.concat([s["median"], s["ci_low"], s["ci_high"]])
        if len(ns) > 1:
            for name in series:
                g = s[s["series"] == name].sort_values("n")
                lang = g["lang"].iloc[0]
                ax.plot(g["n"], g["median"], marker="o", ms=4.5, color=colors.get(name, "0.4"),
                        linestyle=LANG_STYLE.get(lang, "-"), label=name)
                ax.fill_between(g["n"], g["ci_low"], g["ci_high"], color=colors.get(name, "0.4"), alpha=0.18,
                                linewidth=0)
            _n_axis(ax, ns, w)
            sub = _join(_params_caption(constant))
        else:
            x = np.arange(len(series))
            for i, name in enumerate(series):
                g = s[s["series"] == name].iloc[0]
                err = [[g["median"] - g["ci_low"]], [g["ci_high"] - g["median"]]]
                ax.errorbar([i], [g["median"]], yerr=np.nan_to_num(err), fmt="o", ms=6, capsize=5,
                            color=colors.get(name, "0.4"))
            ax.set_xticks(x, [n.replace(" · ", "\n") for n in series], fontsize=8.5)
            ax.set_xlim(-0.6, len(series) - 0.4)
            ax.grid(axis="x", visible=False)
            sub = _join(f"N = {units.count(ns[0])} ({WORKLOADS[w].n_meaning})" if w in WORKLOADS else f"N = {ns[0]}",
                        _params_caption(constant))
        _value_axis(ax, values, unit)
        ax.set_ylabel(f"median {units.metric_name(metric)}")
        _subtitle(ax, w, sub)
        if len(ns) > 1 and len(series) > 1:
            ax.legend(loc="best", fontsize=8)
    _header(fig, f"Median {units.metric_name(metric)} with 95% CI",
            _join(_threads_caption(summary), "shaded band / bars: 95% distribution-free CI of the median"))
    return fig


# --- Go/Rust ratio vs N ------------------------------------------------------------------------------

def _direction_words(metric: str) -> tuple[str, str]:
    word = "faster" if units.is_time(metric) else "smaller"
    return f"Go {word}", f"Rust {word}"


def ratio_limit(ratios: pd.DataFrame, margin: float = 0.0) -> float:
    """Half-height of the shared log2 ratio axis: every ratio inside with room to spare, every
    interval too unless one is so wide (a handful of noisy samples) that it would flatten every other
    panel: such an interval is cut at the edge and drawn with an arrow.  At least three margins
    wide so the equivalence band shows, at most MAX_LOG2."""
    def logs(column):
        return [abs(math.log2(v)) for v in ratios.get(column, pd.Series(dtype=float)) if _finite_positive(v)]

    points = max(logs("ratio"), default=0.0)
    intervals = max(logs("ratio_ci_low") + logs("ratio_ci_high"), default=0.0)
    need = min(max(points, intervals) * 1.08, points * 1.3 + 0.4)
    floor = math.log2(1 + 3 * margin) if margin else math.log2(1.1)
    return float(min(max(need, floor, math.log2(1.1)), MAX_LOG2))


def _ratio_ticks(limit: float) -> list[float]:
    if limit <= 0.35:
        cands = [0.8, 0.85, 0.9, 0.95, 1.0, 1 / 0.95, 1 / 0.9, 1 / 0.85, 1.25]
    elif limit <= 1.2:
        cands = [0.5, 0.67, 0.8, 0.9, 1.0, 1.11, 1.25, 1.5, 2.0]
    elif limit <= 3.6:
        cands = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    else:
        cands = [2.0 ** k for k in range(-6, 7, 2)]
    return [c for c in cands if abs(math.log2(c)) <= limit + 1e-9]


def _ratio_label(v: float) -> str:
    """'2×', '1.25×', '1×', '0.8×', '1/4×' (reciprocals of whole numbers below 1 as fractions)."""
    if v < 1 and abs(1 / v - round(1 / v)) < 1e-6 and round(1 / v) >= 2:
        return f"1/{round(1 / v)}×"
    return f"{units.trim(units.significant(v, 3 if v >= 1 else 2))}×"


def _ratio_axis(ax, limit: float, metric: str, margin: float | None) -> None:
    ax.set_yscale("log", base=2)
    ax.set_ylim(2 ** -limit, 2 ** limit)
    ticks = _ratio_ticks(limit)
    ax.yaxis.set_major_locator(mticker.FixedLocator(ticks))
    ax.yaxis.set_minor_locator(mticker.NullLocator())
    ax.yaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: _ratio_label(v)))
    if margin:
        # the band to scale, its edges drawn so that it shows even where ±2% is a few pixels
        ax.axhspan(1 - margin, 1 + margin, color=EQUIVALENCE_COLOR, alpha=0.6, zorder=0, linewidth=0)
        for edge in (1 - margin, 1 + margin):
            ax.axhline(edge, color=EQUIVALENCE_COLOR, linewidth=1.4, zorder=0)
    ax.axhline(1.0, color="0.3", linewidth=0.7, zorder=1)
    lower, upper = _direction_words(metric)
    ax.text(0.015, 0.985, f"▲ {upper}", transform=ax.transAxes, ha="left", va="top", fontsize=8.5,
            color=LANG_COLORS["rust"], fontweight="bold")
    ax.text(0.015, 0.015, f"▼ {lower}", transform=ax.transAxes, ha="left", va="bottom", fontsize=8.5,
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
        sides[lang] = [_join(v, ", ".join(f"{k}={x}" for k, x in params_dict(p).items() if k not in shared_keys(w)))
                       for v, p, w in zip(r[f"{lang}_variant"], params, r["workload"])]
    go_params = r["go_params"] if "go_params" in r else pd.Series([""] * len(r), index=r.index)
    r["_shared"] = [",".join(f"{k}={x}" for k, x in params_dict(p).items() if k in shared_keys(w))
                    for p, w in zip(go_params, r["workload"])]
    shared_vary, shared_const = _split_params(r, "_shared")
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
        labels.append(_join(pair, sp))
    r["pair"] = labels
    const = []
    if not go_vary and not rust_vary:
        const.append(f"Go {sides['go'][0]} vs Rust {sides['rust'][0]}")
    elif not go_vary:
        const.append(f"Go {sides['go'][0]}")
    elif not rust_vary:
        const.append(f"Rust {sides['rust'][0]}")
    if shared_const:
        const.append(_params_caption(shared_const))
    return r.drop(columns=["_shared"]), _join(*const)


def ratio_vs_n(ratios: pd.DataFrame, margin: float | None = None) -> plt.Figure:
    """One panel per workload: the Go/Rust ratio of medians with its 95% CI, on one log2 axis shared
    by every panel; over N where several N were run, by pair of variants where one was."""
    metric = ratios["metric"].iloc[0]
    kinds = verdict_kinds(ratios)
    ratios = ratios.assign(vkind=kinds.values)
    limit = ratio_limit(ratios, margin or 0.0)
    ends = pd.concat([ratios["ratio_ci_low"], ratios["ratio_ci_high"]])
    clipped = any(abs(math.log2(v)) > limit for v in ends if _finite_positive(v))
    workloads = list(dict.fromkeys(ratios["workload"]))
    fig, axes = _panels(len(workloads), width=5.0, height=3.9)
    for ax, w in zip(axes, workloads):
        r, const = _pair_frame(ratios[ratios["workload"] == w])
        pairs = list(dict.fromkeys(r["pair"]))
        palette = sns.color_palette("dark", max(len(pairs), 1)) if len(pairs) > 1 else ["0.15"]
        ns = sorted(r["n"].unique())
        multi = len(ns) > 1
        for k, (pair, color) in enumerate(zip(pairs, palette)):
            g = r[r["pair"] == pair].sort_values("n")
            x = (g["n"] * (1.06 ** (k - (len(pairs) - 1) / 2))).to_numpy() if multi else np.full(len(g), k)
            y = g["ratio"].clip(2 ** -limit, 2 ** limit).to_numpy(dtype=float)
            lo = g["ratio_ci_low"].clip(2 ** -limit, 2 ** limit).to_numpy(dtype=float)
            hi = g["ratio_ci_high"].clip(2 ** -limit, 2 ** limit).to_numpy(dtype=float)
            if multi:
                ax.plot(x, y, color=color, linewidth=1.1, alpha=0.7, label=pair or None)
            ax.vlines(x, np.where(np.isnan(lo), y, lo), np.where(np.isnan(hi), y, hi), color=color, linewidth=1.6)
            for xi, yi, kind in zip(x, y, g["vkind"]):
                marker, filled = VERDICT_MARKERS.get(kind, ("o", False))
                ax.plot([xi], [yi], marker=marker, ms=6.5, color=color, markerfacecolor=color if filled else "white",
                        markeredgewidth=1.5, linestyle="none", zorder=3)
            for xi, l0, h0 in zip(x, g["ratio_ci_low"], g["ratio_ci_high"]):
                if _finite_positive(h0) and h0 > 2 ** limit:
                    ax.annotate("", (xi, 2 ** limit), (xi, 2 ** (limit * 0.9)), arrowprops={"arrowstyle": "->", "color": color})
                if _finite_positive(l0) and l0 < 2 ** -limit:
                    ax.annotate("", (xi, 2 ** -limit), (xi, 2 ** (-limit * 0.9)), arrowprops={"arrowstyle": "->", "color": color})
        _ratio_axis(ax, limit, metric, margin)
        if multi:
            _n_axis(ax, ns, w)
            sub = const
            if len(pairs) > 1:
                ax.legend(loc="lower right", fontsize=7.5)
        else:
            ax.set_xticks(range(len(pairs)), [p.replace(" · ", "\n").replace(" vs ", "\nvs ") for p in pairs],
                          fontsize=8)
            ax.set_xlim(-0.7, len(pairs) - 0.3)
            ax.grid(axis="x", visible=False)
            sub = _join(f"N = {units.count(ns[0])}", const)
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel(f"Go / Rust, median {units.metric_name(metric)}")
        _subtitle(ax, w, sub)
    handles = [Line2D([], [], marker="o", color="0.2", linestyle="none", label="a difference (the adjusted CI excludes 1)"),
               Line2D([], [], marker="o", color="0.2", markerfacecolor="white", linestyle="none", label="inconclusive"),
               Line2D([], [], marker="D", color="0.2", linestyle="none", label="equivalent")]
    if margin:
        handles.append(Patch(color=EQUIVALENCE_COLOR, alpha=0.55, label=f"equivalence band ±{margin:.0%}"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8.5, frameon=False)
    lower, upper = _direction_words(metric)
    _header(fig, f"Go / Rust ratio of median {units.metric_name(metric)}, with 95% CI",
            _join(_threads_caption(ratios), f"one log₂ scale in every panel: below 1 {lower}, above 1 {upper}",
                  "arrow: the interval goes on beyond the axis" if clipped else ""))
    return fig


# --- verdict map ---------------------------------------------------------------------------------------

VERDICT_SYMBOLS = {"a": "Go", "b": "Rust", "equivalent": "≈", "inconclusive": "?"}


def verdict_heatmap(table: pd.DataFrame, margin: float | None = None) -> plt.Figure:
    """Per workload (with its own N): one row per pair of variants, one column per N; the colour is
    the Go/Rust ratio on a diverging log scale centred at 1 (blue: Go needs less, red: Rust), the
    cell holds the ratio and the verdict (Go or Rust in bold with a frame: a significant win;
    ≈: equivalent; ?: inconclusive).  Workloads are laid out as small blocks of equal cell size."""
    import textwrap

    metric = table["metric"].iloc[0]
    t = table.assign(vkind=verdict_kinds(table).values)
    logs = [abs(math.log2(v)) for v in t["ratio"] if _finite_positive(v)]
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
                if _finite_positive(r.ratio):
                    values[b["pairs"].index(r.pair), b["ns"].index(r.n)] = math.log2(r.ratio)
            ax.imshow(values, cmap=cmap, norm=norm, aspect="auto", extent=(-0.5, ncol - 0.5, nrow - 0.5, -0.5))
            for r in b["r"].itertuples():
                y, x = b["pairs"].index(r.pair), b["ns"].index(r.n)
                v = values[y, x]
                rgb = cmap(norm(v))[:3] if not np.isnan(v) else (1, 1, 1)
                dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 0.5
                win = r.vkind in ("a", "b")
                ax.text(x, y, ("–" if np.isnan(v) else units.trim(units.significant(r.ratio, 3)))
                        + "\n" + VERDICT_SYMBOLS.get(r.vkind, "?"), ha="center", va="center", fontsize=8.5,
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
    bar.set_ticks(ticks, labels=[_ratio_label(2 ** k) for k in ticks])
    lower, upper = _direction_words(metric)
    bar.set_label(f"Go / Rust (blue: {lower}; red: {upper})", fontsize=9)
    fig.text(0.5 * (fig_w - bar_w) / fig_w, 1 - 0.2 / fig_h, f"Verdicts on {units.metric_name(metric)}: Go / Rust ratio of medians",
             ha="center", va="top", fontsize=plt.rcParams["figure.titlesize"], fontweight="bold")
    fig.text(0.5 * (fig_w - bar_w) / fig_w, 1 - 0.52 / fig_h,
             _join(_threads_caption(table), "bold in a frame: significant win of Go or Rust; ≈: equivalent"
                   + (f" within ±{margin:.0%}" if margin else "") + "; ?: inconclusive"),
             ha="center", va="top", fontsize=9.5, color="0.3")
    return fig


# --- distributions ---------------------------------------------------------------------------------------

def distributions(df: pd.DataFrame, workload: str, metric: str = "elapsed_s", ns=None) -> plt.Figure:
    """Every valid sample of a workload's cells: a box (median, quartiles) with the samples on top,
    one panel per N."""
    d = df[(df["workload"] == workload) & df["valid"]].copy()
    if ns is not None:
        d = d[d["n"].isin(ns)]
    varying, constant = _split_params(d, "params")
    d["cell"] = [f"{lang}\n{v}" + (f"\n{p}" if p else "") for lang, v, p in zip(d["lang"], d["variant"], varying)]
    unit = units.metric_unit(metric)
    nvals = sorted(d["n"].unique())
    fig, axes = _panels(len(nvals), width=4.6, height=4.0)
    for ax, n in zip(axes, nvals):
        g = d[d["n"] == n]
        order = sorted(g["cell"].unique())
        data = [g.loc[g["cell"] == c, metric].to_numpy(dtype=float) for c in order]
        boxes = ax.boxplot(data, positions=range(len(order)), widths=0.5, showfliers=False, patch_artist=True,
                           orientation="vertical", medianprops={"color": "0.1"})
        rng = np.random.default_rng(0)  # fixed jitter: the same figure from the same samples
        for i, (c, values, box) in enumerate(zip(order, data, boxes["boxes"])):
            color = LANG_COLORS.get(c.split()[0], "0.5")
            box.set(facecolor=mcolors.to_rgba(color, 0.35), edgecolor="0.25")
            ax.scatter(i + rng.uniform(-0.12, 0.12, len(values)), values, s=12, color="0.1", alpha=0.8, zorder=3)
        ax.set_xticks(range(len(order)), order)
        _value_axis(ax, g[metric], unit)
        if not _spans_decades(g[metric]):
            lo, hi = g[metric].min(), g[metric].max()
            pad = (hi - lo) * 0.15 or abs(hi) * 0.05 or 1
            ax.set_ylim(max(lo - pad, 0) if lo >= 0 else lo - pad, hi + pad)
        ax.set_title(f"N = {units.count(n)}")
        ax.set_xlabel("")
        ax.set_ylabel(units.metric_name(metric))
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", visible=False)
    counts = d.groupby(["cell", "n"]).size()
    _header(fig, f"{workload}: every valid sample of {units.metric_name(metric)}",
            _join(_params_caption(constant), _threads_caption(d),
                  f"{counts.min()}–{counts.max()} samples per cell" if counts.min() != counts.max()
                  else f"{counts.min()} samples per cell", "box: median and quartiles"))
    return fig


# --- cost per task ---------------------------------------------------------------------------------------

def per_task(costs: pd.DataFrame) -> plt.Figure | None:
    """The marginal cost of one more task (the slope of the per-N typical values over N, 95% t interval
    where the series has 3 or more values of N) of every series, on a log
    axis; only workloads where N counts tasks, workers or messages (not cpu_loops, whose N is an array
    length).  None when no such series exists."""
    c = costs[costs["workload"].map(lambda w: per_unit(w) is not None)].copy()
    if c.empty:
        return None
    metric = c["metric"].iloc[0]
    unit = units.metric_unit(metric)
    c = c.sort_values(["workload", "lang", "variant", "params"])
    labels = []
    for w, g in c.groupby("workload", sort=False):
        varying, _ = _split_params(g, "params")
        labels += [_join(f"{w}: {lang} {v}", p) for lang, v, p in zip(g["lang"], g["variant"], varying)]
    c["label"] = labels
    vals = pd.concat([c["per_task"], c["per_task_ci_low"], c["per_task_ci_high"]])
    pos = [v for v in vals if _finite_positive(v)]
    lo_lim, hi_lim = (min(pos) / 2.5, max(pos) * 2.5) if pos else (1e-9, 1.0)
    fig, ax = plt.subplots(figsize=(8.5, 0.34 * len(c) + 1.9), layout="constrained")
    fig.get_layout_engine().set(rect=(0, 0, 1, 1 - 0.85 / fig.get_figheight()))
    y = np.arange(len(c))[::-1]
    for yi, row in zip(y, c.itertuples()):
        color = LANG_COLORS.get(row.lang, "0.4")
        low = row.per_task_ci_low if _finite_positive(row.per_task_ci_low) else lo_lim
        high = row.per_task_ci_high if _finite_positive(row.per_task_ci_high) else lo_lim
        ax.hlines(yi, low, high, color=color, linewidth=2)
        if _finite_positive(row.per_task):
            ax.plot([row.per_task], [yi], "o", color=color, ms=6)
        else:
            ax.text(lo_lim, yi, " ≤ 0 (no cost resolved)", va="center", fontsize=8, color="0.3")
        if not _finite_positive(row.per_task_ci_low) and _finite_positive(row.per_task_ci_high):
            ax.annotate("", (lo_lim, yi), (lo_lim * 1.8, yi), arrowprops={"arrowstyle": "->", "color": color})
    ax.set_xscale("log")
    ax.set_xlim(lo_lim, hi_lim)
    _log_ticks(ax.xaxis, lo_lim, hi_lim, unit)
    ax.xaxis.set_major_formatter(_unit_formatter(unit))
    ax.set_yticks(y, c["label"], fontsize=8.5)
    ax.set_ylim(-0.7, len(c) - 0.3)
    ax.grid(axis="y", visible=False)
    words = sorted({per_unit(w) for w in c["workload"]})
    ax.set_xlabel(f"{units.metric_name(metric)} per {' / '.join(words)} (log scale)")
    ax.legend(handles=[Line2D([], [], color=LANG_COLORS[k], marker="o", label=k) for k in ("go", "rust")],
              loc="lower right", fontsize=8.5)
    _header(fig, f"Cost of one more task: {units.metric_name(metric)}",
            _join("slope of the per-N typical values over N, 95% CI from 3 values of N", _threads_caption(c)))
    return fig


def per_task_bars(costs: pd.DataFrame, unit_scale: float = 1.0, unit: str = "") -> plt.Figure | None:
    """Kept for callers of the earlier name: the same figure as `per_task` (the unit comes from the
    table's metric)."""
    return per_task(costs)


# --- memory notebook figures ------------------------------------------------------------------------------

def rss_timeline(tl: pd.DataFrame) -> plt.Figure:
    """RSS over time, one line per sample, time from the workload timer's start; dotted verticals
    mark when all tasks were spawned and dash-dotted when they had all finished (per language)."""
    fig, ax = plt.subplots(figsize=(9, 4.8), layout="constrained")
    ns = sorted(tl["n"].unique())
    series = tl[["lang", "variant", "n"]].drop_duplicates().sort_values(["lang", "variant", "n"])
    colors = {}
    for lang, g in series.groupby("lang"):
        keys = list(g.itertuples(index=False, name=None))
        colors.update(zip(keys, _shades(LANG_COLORS.get(lang, "#666666"), len(keys))))
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
    ax.yaxis.set_major_formatter(_unit_formatter("MiB"))
    ax.set_title("Memory over time, and what each runtime gives back after its tasks end"
                 + (f" (N = {units.count(ns[0])})" if len(ns) == 1 else ""))
    return fig


def metrics_side_by_side(table: pd.DataFrame) -> plt.Figure:
    """One panel per metric: the median of every cell with its 95% CI (one N: categorical axis)."""
    metrics = list(dict.fromkeys(table["metric"]))
    fig, axes = _panels(len(metrics), width=3.7, height=3.9, ncols=5, header=0.8)
    t = table.copy()
    ns = sorted(t["n"].unique())
    t["cell"] = t["lang"] + " " + t["variant"] + ("" if len(ns) == 1 else "\nN=" + t["n"].map(units.count))
    for ax, m in zip(axes, metrics):
        g = t[t["metric"] == m]
        x = np.arange(len(g))
        err = np.vstack([g["median"] - g["ci_low"], g["ci_high"] - g["median"]])
        ax.errorbar(x, g["median"], yerr=np.nan_to_num(err), fmt="none", ecolor="0.2", capsize=4, zorder=3)
        ax.scatter(x, g["median"], color=[LANG_COLORS.get(lang, "0.5") for lang in g["lang"]], s=45, zorder=4)
        ax.set_xticks(x, g["cell"], rotation=35, ha="right", fontsize=8.5)
        ax.set_xlim(-0.6, len(g) - 0.4)
        _value_axis(ax, pd.concat([g["median"], g["ci_low"], g["ci_high"]]), units.metric_unit(m) or "count")
        ax.set_ylabel("")
        ax.set_title(units.metric_name(m), fontsize=10.5)
        ax.grid(axis="x", visible=False)
    workloads = ", ".join(dict.fromkeys(t["workload"]))
    _header(fig, f"{workloads}: median and 95% CI per metric",
            _join(f"N = {units.count(ns[0])}" if len(ns) == 1 else "", _threads_caption(t)))
    return fig


def ping_pong_bars(rates: pd.DataFrame) -> plt.Figure:
    """Round trips per second by channel capacity, one panel per mode, one bar per runtime flavour."""
    modes = list(dict.fromkeys(rates["mode"]))
    fig, axes = _panels(len(modes), width=6.0, height=4.2, header=0.8)
    for ax, mode in zip(axes, modes):
        g = rates[rates["mode"] == mode].copy()
        g["runtime"] = g["lang"] + " " + g["variant"]
        buffers = sorted(g["buffer"].unique())
        runtimes = list(dict.fromkeys(g.sort_values(["lang", "variant"])["runtime"]))
        width = 0.8 / max(len(runtimes), 1)
        colors = {}
        for lang in ("go", "rust"):
            names = [r for r in runtimes if r.startswith(lang + " ")]
            colors.update(zip(names, _shades(LANG_COLORS[lang], len(names))))
        for k, rt in enumerate(runtimes):
            s = g[g["runtime"] == rt].set_index("buffer").reindex(buffers)
            x = np.arange(len(buffers)) + (k - (len(runtimes) - 1) / 2) * width
            err = np.vstack([s["round_trips_per_s"] - s["ci_low"], s["ci_high"] - s["round_trips_per_s"]])
            ax.bar(x, s["round_trips_per_s"], width, yerr=np.nan_to_num(err), capsize=3, color=colors.get(rt, "0.5"),
                   label=rt)
        ax.set_xticks(np.arange(len(buffers)), [str(b) for b in buffers])
        ax.set_xlabel("channel capacity (buffer)")
        ax.set_ylabel("round trips per second (median, 95% CI)")
        ax.yaxis.set_major_formatter(_unit_formatter("/s"))
        ax.set_title(f"ping-pong, {mode}")
        ax.grid(axis="x", visible=False)
        ax.legend(fontsize=8.5)
    ns = sorted(rates["n"].unique()) if "n" in rates else []
    _header(fig, "Channel ping-pong: round trips per second",
            f"N = {units.count(ns[0])} messages" if len(ns) == 1 else "")
    return fig


def save(fig: plt.Figure, directory, name: str, formats=("svg", "png")):
    """Write the figure in every format; see `export.images.save`."""
    from .export import images

    return images.save(fig, directory, name, formats, close=False)
