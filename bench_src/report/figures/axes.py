"""What every figure shares: its grid of panels, title and caption, the N axis, value axes in the
metric's unit (log when the values span a decade), the captions of what every series shares, and
the colours and markers of languages and verdicts."""
from __future__ import annotations

import math

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import matplotlib.transforms as mtransforms
import numpy as np
import pandas as pd

from ...catalogue import WORKLOADS
from .. import units
from ..tables import blank, params_dict, threads_exceptions


VERDICT_MARKERS = {"a": ("o", True), "b": ("o", True), "equivalent": ("D", True), "inconclusive": ("o", False)}
LANG_STYLE = {"go": "-", "rust": "--"}



def panel_grid(count: int, width: float = 5.4, height: float = 4.0, ncols: int = 3, header: float = 0.9):
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


def figure_header(fig: plt.Figure, title: str, caption: str = "") -> None:
    """Title and caption line in the space `_panels` left on top; the title is kept on the figure
    (`bench_title`) for the report's caption of it."""
    fig.bench_title = title
    h = fig.get_figheight()
    fig.text(0.5, 1 - 0.22 / h, title, ha="center", va="top", fontsize=plt.rcParams["figure.titlesize"],
             fontweight="bold")
    if caption:
        fig.text(0.5, 1 - 0.55 / h, caption, ha="center", va="top", fontsize=9.5, color="0.3", wrap=True)


def panel_title(ax, title: str, subtitle: str = "") -> None:
    """A bold panel title with a smaller grey line under it for what the panel's series share."""
    ax.set_title(title, pad=17 if subtitle else 6)
    if subtitle:
        ax.text(0.5, 1.012, subtitle, transform=ax.transAxes, ha="center", va="bottom", fontsize=8.5, color="0.35")


def spans_decades(values) -> bool:
    v = np.asarray([x for x in values if finite_positive(x)], dtype=float)
    return v.size > 1 and v.max() / v.min() >= 10


def finite_positive(x) -> bool:
    try:
        return math.isfinite(float(x)) and float(x) > 0
    except (TypeError, ValueError):
        return False


def category_label(text: str) -> str:
    """A label of a categorical tick, broken into lines at its parts and after commas."""
    return text.replace(" · ", "\n").replace(", ", ",\n")


# Turns tried, in degrees, for the labels of a categorical axis that do not fit upright: the first
# whose turned lines stand farther apart than their height.
CATEGORY_TURNS = (35, 60, 90)


def fit_category_labels(fig: plt.Figure, axes) -> None:
    """The tick labels of categorical axes (`axes`) that would overlap their neighbours (many
    cells, long names: ping-pong's fourteen, the CPU loop's eight) are written on one line and
    turned, anchored at their tick, by the first of CATEGORY_TURNS that keeps each turned line
    apart from the next: every label reads whole.  Measured on the drawn figure."""
    axes = [ax for ax in axes if len(ax.get_xticks()) > 1]
    if not axes:
        return
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in axes:
        labels = [t for t in ax.get_xticklabels() if t.get_text()]
        boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.x0)
        if all(b.x0 >= a.x1 for a, b in zip(boxes, boxes[1:])):
            continue
        ticks = np.asarray(ax.get_xticks(), dtype=float)
        xs = np.sort(ax.transData.transform(np.column_stack([ticks, np.zeros_like(ticks)]))[:, 0])
        # the axes narrow a little when turned labels take room at its sides: a tenth to spare
        step = 0.9 * float(np.min(np.diff(xs)))
        size = labels[0].get_fontsize()
        height = size * fig.dpi / 72
        turn = next((a for a in CATEGORY_TURNS if step * math.sin(math.radians(a)) >= height), CATEGORY_TURNS[-1])
        texts = [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()]
        ax.set_xticks(ticks, texts, rotation=turn, ha="right" if turn < 90 else "center",
                      rotation_mode="anchor" if turn < 90 else "default", fontsize=size)


# Where a panel's legend may stand inside it, tried in this order.
LEGEND_PLACES = ("upper left", "upper right", "lower right", "lower left", "center left", "center right",
                 "upper center", "lower center")


def _covers(ax, box) -> bool:
    """Whether the display box covers some line, marker or band of the panel."""
    inner = mtransforms.Bbox.from_extents(box.x0 + 1, box.y0 + 1, box.x1 - 1, box.y1 - 1)
    for line in ax.get_lines():
        path = ax.transData.transform_path(line.get_path())
        if path.intersects_bbox(inner, filled=False):
            return True
        if line.get_marker() not in (None, "", "None", " "):
            r = line.get_markersize() * ax.figure.dpi / 72 / 2
            near = mtransforms.Bbox.from_extents(inner.x0 - r, inner.y0 - r, inner.x1 + r, inner.y1 + r)
            if any(near.contains(x, y) for x, y in path.vertices):
                return True
    for band in ax.collections:
        to_display = band.get_transform()
        if any(to_display.transform_path(p).intersects_bbox(inner, filled=True) for p in band.get_paths()):
            return True
    return False


def legend_off_the_data(fig: plt.Figure, axes, fontsize: float = 8) -> None:
    """Each panel's legend (`axes`: the panels that have one) inside it where some place of
    LEGEND_PLACES leaves every line, marker and band of the panel uncovered; where none does (eight
    idle-task series from 10 µs to 5 s, a steep line through the top), under the panel, below its
    axis label, in two columns where they fit its width (the layout makes room).  Measured on the
    drawn figure."""
    axes = [ax for ax in axes if ax.get_legend() is not None]
    if not axes:
        return
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in axes:
        legend = ax.get_legend()
        for place in LEGEND_PLACES:
            legend.set_loc(place)
            if not _covers(ax, legend.get_window_extent(renderer)):
                break
        else:  # under the axis label, a fixed distance below the panel's edge however the layout moves it
            handles, labels = ax.get_legend_handles_labels()
            drop = ax.get_window_extent(renderer).y0 - ax.xaxis.label.get_window_extent(renderer).y0 + 4
            anchor = mtransforms.offset_copy(ax.transAxes, fig=fig, y=-drop * 72 / fig.dpi, units="points")
            width = ax.get_window_extent(renderer).width
            for ncols in (2, 1):  # two columns where they fit the panel's width
                legend = ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=anchor,
                                   ncols=ncols, fontsize=fontsize, frameon=False)
                if legend.get_window_extent(renderer).width <= width:
                    break


class UnitFormatter(mticker.Formatter):
    """Tick labels in a metric's unit with `digits` significant digits, more where the ticks of an
    axis would otherwise read alike (0.2825 s and 0.2830 s are not both "283 ms") or read rounded
    (ticks 2.5 ms apart read "282.5 ms, 285 ms, 287.5 ms", not "282 ms, 285 ms, 288 ms")."""

    def __init__(self, unit: str, digits: int = 3):
        self.unit, self.digits = unit, digits

    def label(self, v: float, digits: int) -> str:
        if v == 0:
            return "0"
        number, _, name = units.quantity(v, self.unit, digits).partition(" ")
        return f"{units.trim(number)} {name}".strip()

    def __call__(self, v, pos=None) -> str:
        return self.label(v, self.digits)

    def format_ticks(self, values) -> list[str]:
        for digits in range(self.digits, self.digits + 5):
            labels = [self.label(v, digits) for v in values]
            # distinct, and each as one more digit would write it (a round tick gains nothing by it)
            if len(set(labels)) == len(labels) and labels == [self.label(v, digits + 1) for v in values]:
                return labels
        for digits in range(self.digits, self.digits + 5):  # ticks that are not round numbers: distinct
            labels = [self.label(v, digits) for v in values]
            if len(set(labels)) == len(labels):
                return labels
        return labels


def unit_formatter(unit: str, digits: int = 3):
    if unit == "count":
        return mticker.FuncFormatter(lambda v, _: units.short_count(v) if v >= 1 or v == 0 else units.significant(v, 2))
    return UnitFormatter(unit, digits)


BYTE_UNITS = {"B": 1.0, "KiB": 2.0**10, "MiB": 2.0**20}


def byte_ticks(lo: float, hi: float, unit: str) -> list[float]:
    """Powers of two (in bytes: 256 B, 1 KiB, 4 KiB, ...) between lo and hi, given in `unit`; at
    most about eight of them."""
    scale = BYTE_UNITS[unit]
    k0, k1 = math.floor(math.log2(lo * scale)), math.ceil(math.log2(hi * scale))
    step = max(1, math.ceil((k1 - k0) / 8))
    return [2.0 ** k / scale for k in range(k0 - k0 % step, k1 + 1, step) if lo <= 2.0 ** k / scale <= hi]


def enclosing_powers_of_two(lo: float, hi: float, unit: str) -> tuple[float, float]:
    """The tick of `byte_ticks` at or below lo and the one at or above hi (in `unit`)."""
    scale = BYTE_UNITS[unit]
    k0, k1 = math.floor(math.log2(lo * scale)), math.ceil(math.log2(hi * scale))
    step = max(1, math.ceil((k1 - k0) / 8))
    k0 -= k0 % step
    k1 += -k1 % step
    return 2.0 ** k0 / scale, 2.0 ** k1 / scale


def log_ticks(a, lo: float, hi: float, unit: str) -> None:
    """Major ticks of a log axis: powers of two for sizes, 1-2-5 or decades otherwise."""
    if unit in BYTE_UNITS:
        a.set_major_locator(mticker.FixedLocator(byte_ticks(lo, hi, unit)))
    else:
        subs = (1.0,) if hi / lo >= 1000 else (1.0, 2.0, 5.0)
        a.set_major_locator(mticker.LogLocator(base=10, subs=subs))
    a.set_minor_locator(mticker.NullLocator() if unit in BYTE_UNITS else
                        mticker.LogLocator(base=10, subs=np.arange(2, 10)))
    a.set_minor_formatter(mticker.NullFormatter())


def value_axis(ax, values, unit: str, axis: str = "y") -> None:
    """Log with unit ticks when the values span a decade, else linear from zero with unit ticks."""
    a = ax.yaxis if axis == "y" else ax.xaxis
    if spans_decades(values):
        (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
        v = np.asarray([x for x in values if finite_positive(x)], dtype=float)
        if unit in BYTE_UNITS:
            # the axis ends on ticks (powers of two) that enclose every value: a value beyond the
            # end ticks (98 MiB on an axis labelled up to 64 MiB) cannot be read off it
            lo, hi = enclosing_powers_of_two(v.min() / 1.05, v.max() * 1.05, unit)
            (ax.set_ylim if axis == "y" else ax.set_xlim)(lo, hi)
            log_ticks(a, lo, hi, unit)
        else:
            log_ticks(a, v.min() / 1.3, v.max() * 1.3, unit)
    else:
        top = max((float(x) for x in values if finite_positive(x)), default=0.0)
        (ax.set_ylim if axis == "y" else ax.set_xlim)(0, top * 1.1 if top > 0 else None)
        a.set_major_locator(mticker.MaxNLocator(6))
    a.set_major_formatter(unit_formatter(unit))


# Ratio axes (a log₂ axis centred on 1: Go/Rust, a speed-up, a ratio across hosts) end a little
# beyond 64x at most; what lies beyond is drawn at the edge
MAX_RATIO_LOG2 = 6.0


def ratio_ticks(limit: float) -> list[float]:
    """The ticks of a ratio axis from 2^-limit to 2^limit, symmetric about 1 on the log axis: for a
    narrow axis the round ratios near 1 (0.8, 0.9, 0.95 and their reciprocals; to 2x: 0.5, 0.67,
    0.8, 0.9 and theirs), beyond that every power of two (1/8, 1/4, 1/2, 1, 2, 4, 8): one step, a
    factor 2, between any two ticks, so that no step skips a power (16x to 64x) and every ratio is
    read against a tick no further than 2x from it.  Every ratio figure reads these."""
    if limit <= 0.35:
        candidates = [0.8, 0.85, 0.9, 0.95, 1.0, 1 / 0.95, 1 / 0.9, 1 / 0.85, 1.25]
    elif limit <= 1.2:
        candidates = [0.5, 0.67, 0.8, 0.9, 1.0, 1.11, 1.25, 1.5, 2.0]
    else:
        top = int(math.floor(min(limit, MAX_RATIO_LOG2) + 1e-9))
        candidates = [2.0 ** k for k in range(-top, top + 1)]
    return [c for c in candidates if abs(math.log2(c)) <= limit + 1e-9]


def covering_limit(need: float) -> float:
    """`need` (the half-height of a ratio axis in log₂ units, capped at MAX_RATIO_LOG2), or, where
    the axis would go on well beyond its outermost tick (a 3.5x ratio on an axis whose last tick is
    2x), the first tick level at or above it with a little room beyond, so that the ticks
    (`ratio_ticks`) span the axis and its largest values are read against a tick."""
    need = min(need, MAX_RATIO_LOG2)

    def covered(limit: float) -> bool:
        outermost = max(abs(math.log2(c)) for c in ratio_ticks(limit))
        return limit - outermost <= min(0.25, 0.1 * limit) + 1e-9

    if covered(need):
        return need
    levels = sorted({abs(math.log2(c)) for lim in (0.3, 1.0, MAX_RATIO_LOG2) for c in ratio_ticks(lim)})
    for level in levels:
        if level >= need and covered(level * 1.03):
            return level * 1.03
    return MAX_RATIO_LOG2 * 1.03


def ratio_label(v: float) -> str:
    """'2×', '1.25×', '1×', '0.8×', '1/4×' (reciprocals of whole numbers below 1 as fractions)."""
    if v < 1 and abs(1 / v - round(1 / v)) < 1e-6 and round(1 / v) >= 2:
        return f"1/{round(1 / v)}×"
    return f"{units.trim(units.significant(v, 3 if v >= 1 else 2))}×"


def ratio_axis(ax, limit: float, axis: str = "y") -> None:
    """A ratio axis: log₂ from 2^-limit to 2^limit, centred on 1, with the ticks of `ratio_ticks`
    labelled by `ratio_label`; a figure of several panels gives each the same limit."""
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log", base=2)
    (ax.set_ylim if axis == "y" else ax.set_xlim)(2 ** -limit, 2 ** limit)
    a = ax.yaxis if axis == "y" else ax.xaxis
    a.set_major_locator(mticker.FixedLocator(ratio_ticks(limit)))
    a.set_minor_locator(mticker.NullLocator())
    a.set_major_formatter(mticker.FuncFormatter(lambda v, _: ratio_label(v)))


def ratio_need(values, room: float = 1.1, floor: float = 0.25) -> float:
    """The half-height (log₂ units) a ratio axis needs for `values` (ratios and interval ends):
    the largest distance from 1 with `room` to spare, at least `floor`; not yet rounded to a tick
    (`covering_limit`)."""
    logs = [abs(math.log2(float(v))) for v in values if finite_positive(v)]
    return max(floor, room * max(logs, default=floor))


def n_axis(ax, ns, workload: str) -> None:
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


def split_params(frame: pd.DataFrame, column: str) -> tuple[pd.Series, dict[str, str]]:
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


def params_caption(constant: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in constant.items())


def join_parts(*parts: str) -> str:
    return " · ".join(p for p in parts if p)


def threads_caption(frame: pd.DataFrame) -> str:
    """"threads: 2" where every row requested the same, with the programs whose samples ran with
    other threads named (tables.threads_exceptions, from the threads the samples reported): "threads:
    2 (Rust plain, local, unrolled ran 1)"."""
    if "threads_requested" not in frame:
        return ""
    values = {("all CPUs" if blank(v) else str(int(float(v)))) for v in frame["threads_requested"]}
    if len(values) != 1:
        return ""
    other = threads_exceptions(frame)
    return f"threads: {values.pop()}" + (f" ({'; '.join(other)})" if other else "")


def shades(color: str, count: int) -> list:
    if count <= 1:
        return [color]
    base = np.array(mcolors.to_rgb(color))
    return [tuple(base * (1 - 0.45 * k / (count - 1))) for k in range(count)]
