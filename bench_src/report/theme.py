"""The figures' look, set once by the caller.

Figure functions (`figures`) never change matplotlib's or seaborn's global style.  The report wraps
its figures in `with theme.context():`; a notebook that draws figures itself calls `theme.apply()`
once (or uses the context manager).
"""
from __future__ import annotations

import contextlib

import matplotlib.pyplot as plt
import seaborn as sns

# Colours of the two languages (Go's gopher blue, Rust's orange-red) and of the verdict classes.
LANG_COLORS = {"go": "#00ADD8", "rust": "#CE422B"}
EQUIVALENCE_COLOR = "#7FB77E"
# Series that are not languages (pairs of variants, parameter values in one panel): dark and far from
# both languages' colours, so that a series never reads as Go or as Rust.
# What one series (a line, a bar) of a figure within one workload is: a cell less its threads and A/A
# arm, its parameters included (wait, linger); tables that list those series group by it too.
SERIES_KEYS = ["lang", "variant", "n", "params"]
SERIES_COLORS = ("#222222", "#7B3294", "#A6611A", "#1B7837", "#666666", "#C51B7D")


def series_colors(k: int) -> list:
    """`k` colours for series that are not languages (repeating after SERIES_COLORS)."""
    return [SERIES_COLORS[i % len(SERIES_COLORS)] for i in range(max(k, 1))]


def rc() -> dict:
    """matplotlib settings: seaborn's whitegrid style at notebook scale, sized for an article page."""
    settings = {**sns.axes_style("whitegrid"), **sns.plotting_context("notebook")}
    settings.update({
        "figure.dpi": 100,
        "savefig.dpi": 150,
        "savefig.bbox": "tight",
        "axes.titlesize": 12,
        "axes.titleweight": "bold",
        "axes.labelsize": 10.5,
        "xtick.labelsize": 9.5,
        "ytick.labelsize": 9.5,
        "legend.fontsize": 9,
        "legend.title_fontsize": 9,
        "legend.frameon": True,
        "legend.framealpha": 0.9,
        "figure.titlesize": 14,
        "figure.titleweight": "bold",
        "svg.fonttype": "path",  # text as outlines: the SVG needs no font on the reader's machine
        "pdf.fonttype": 42,
        "axes.spines.top": False,
        "axes.spines.right": False,
    })
    return settings


@contextlib.contextmanager
def context():
    """Draw inside this block with the report's style; the previous style comes back afterwards."""
    with plt.rc_context(rc()):
        yield


def apply() -> None:
    """Set the report's style for the rest of the session (for a notebook that draws figures)."""
    plt.rcParams.update(rc())
