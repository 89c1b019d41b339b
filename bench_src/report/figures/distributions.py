"""The distribution of the samples of each cell of a workload."""
from __future__ import annotations

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import units
from ..theme import LANG_COLORS
from .axes import (figure_header, fit_category_labels, join_parts, panel_grid, params_caption, spans_decades,
                   split_params, threads_caption, value_axis)


def distributions(df: pd.DataFrame, workload: str, metric: str = "elapsed_s", ns=None) -> plt.Figure:
    """Every valid sample of a workload's cells: a box (median, quartiles) with the samples on top,
    one panel per N; only the N in `ns` where given, and then the header names the N drawn among
    those run."""
    d = df[(df["workload"] == workload) & df["valid"]].copy()
    run = sorted(d["n"].unique())
    if ns is not None:
        d = d[d["n"].isin(ns)]
    varying, constant = split_params(d, "params")
    d["cell"] = [f"{lang}\n{v}" + (f"\n{p}" if p else "") for lang, v, p in zip(d["lang"], d["variant"], varying)]
    unit = units.metric_unit(metric)
    nvals = sorted(d["n"].unique())
    fig, axes = panel_grid(len(nvals), width=4.6, height=4.0)
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
        value_axis(ax, g[metric], unit)
        if not spans_decades(g[metric]):
            lo, hi = g[metric].min(), g[metric].max()
            pad = (hi - lo) * 0.15 or abs(hi) * 0.05 or 1
            ax.set_ylim(max(lo - pad, 0) if lo >= 0 else lo - pad, hi + pad)
        ax.set_title(f"N = {units.count(n)}")
        ax.set_xlabel("")
        ax.set_ylabel(units.metric_name(metric))
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", visible=False)
    counts = d.groupby(["cell", "n"]).size()
    title, drawn = f"{workload}: every valid sample of {units.metric_name(metric)}", ""
    if len(nvals) < len(run):
        which = "the smallest and largest N" if list(nvals) == [run[0], run[-1]] else \
            "the smallest N" if list(nvals) == [run[0]] else "the largest N" if list(nvals) == [run[-1]] else \
            f"{len(nvals)} of the {len(run)} N run"
        title += f", at {which}"
        drawn = (f"N = {_and([units.count(n) for n in nvals])} of {', '.join(units.short_count(n) for n in run)}"
                 if nvals else "")
    figure_header(fig, title,
            join_parts(drawn, params_caption(constant), threads_caption(d),
                  f"{counts.min()}–{counts.max()} samples per cell" if counts.min() != counts.max()
                  else f"{counts.min()} samples per cell", "box: median and quartiles"))
    fit_category_labels(fig, axes)
    return fig


def _and(words: list[str]) -> str:
    return " and ".join(words) if len(words) <= 2 else ", ".join(words[:-1]) + " and " + words[-1]
