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

import matplotlib.pyplot as plt

from ..export import images
from .axes import n_label
from .cores import ratio_vs_cores, speedup
from .distributions import distributions
from .forest import forest
from .memory import metrics_side_by_side, ping_pong_bars, rss_timeline
from .ratios import ratio_limit, ratio_vs_n, sets_axis, verdict_heatmap
from .scaling import metric_vs_n, per_task, per_task_bars

__all__ = ["distributions", "forest", "metric_vs_n", "metrics_side_by_side", "n_label", "per_task", "per_task_bars",
           "ping_pong_bars", "ratio_limit", "ratio_vs_cores", "ratio_vs_n", "rss_timeline", "save", "sets_axis", "speedup",
           "verdict_heatmap"]


def save(fig: plt.Figure, directory, name: str, formats=("svg", "png")):
    """Write the figure in every format; see `export.images.save`."""

    return images.save(fig, directory, name, formats, close=False)
