"""The forest plot of a comparison across hosts: each host's Go/Rust ratio with its interval as the
combination reads them (analysis.hosts.host_values: the mean of its log ratios, the normal on its
own variance plus its rounding bound, at the family's level), and the combined ratio (a diamond)
with the interval its verdict is read from, on one log axis centred on 1.  A host left out of the
combination (fewer pairs than a verdict needs) is an open marker without an interval."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ...analysis.hosts import KEY, key_columns
from ...analysis.rules import MIN_PAIRS
from .. import units
from ..theme import EQUIVALENCE_COLOR
from .axes import covering_limit, ratio_axis, ratio_need



def _label(row, factor: str | None = None) -> str:
    pair = row["go_variant"] if row["go_variant"] == row["rust_variant"] else f"{row['go_variant']} vs {row['rust_variant']}"
    shared = row["shared_params"] if isinstance(row["shared_params"], str) else ""
    named = f", {factor} {row[factor]}" if factor else ""
    return f"{row['workload']}, N = {units.count(row['n'])}, {pair}{named}" + (f"\n{shared}" if shared else "")


def forest(values: pd.DataFrame, combined: pd.DataFrame, margin: float | None = None) -> plt.Figure:
    """One row per comparison: every host's ratio and interval as the combination reads them
    (`values`: analysis.hosts.host_values; a host left out, its `left_out` set, an open marker
    without an interval), and the combined ratio with its interval across hosts."""
    metric = combined["metric"].iloc[0] if not combined.empty else "elapsed_s"
    hosts = sorted(values["host_label"].unique()) if not values.empty else []
    palette = dict(zip(hosts, sns.color_palette("colorblind", max(len(hosts), 1))))
    rows = combined.reset_index(drop=True)
    factor = next(iter(key_columns(combined)[len(KEY):]), None)
    fig, ax = plt.subplots(figsize=(8.5, 1.6 + 0.55 * max(len(rows), 1) * (1 + 0.25 * len(hosts))), layout="constrained")
    ends = []
    left_out = drawn = False
    step = 0.6 / max(len(hosts), 1)
    for i, row in rows.iterrows():
        y0 = len(rows) - 1 - i
        mine = values
        for k in key_columns(combined):
            mine = mine[mine[k].astype(str) == str(row[k])]
        for j, h in enumerate(hosts):
            g = mine[mine["host_label"] == h]
            if g.empty:
                continue
            r = g.iloc[0]
            y = y0 + 0.35 - j * step
            if isinstance(r.get("left_out"), str) and r["left_out"]:
                ax.plot([r["ratio"]], [y], "o", color=palette[h], ms=5, markerfacecolor="white")
                ends.append(r["ratio"])
                left_out = True
                continue
            drawn = True
            ax.hlines(y, r["ratio_ci_low"], r["ratio_ci_high"], color=palette[h], linewidth=1.4)
            ax.plot([r["ratio"]], [y], "o", color=palette[h], ms=5)
            ends += [r["ratio_ci_low"], r["ratio_ci_high"]]
        lo, hi, est = row["ratio_ci_low"], row["ratio_ci_high"], row["ratio"]
        if np.isfinite(lo) and np.isfinite(hi):
            ax.fill([lo, est, hi, est], [y0 - 0.25, y0 - 0.1, y0 - 0.25, y0 - 0.4], color="0.15")
            ends += [lo, hi]
        else:
            ax.plot([est], [y0 - 0.25], "D", color="0.15", markerfacecolor="white")
    ratio_axis(ax, covering_limit(ratio_need(ends, room=1.1)), "x")
    ax.axvline(1, color="0.3", linewidth=1)
    if margin:
        ax.axvspan(1 - margin, 1 + margin, color=EQUIVALENCE_COLOR, alpha=0.5, linewidth=0)
    ax.set_yticks(range(len(rows)), [_label(r, factor) for _, r in rows.iloc[::-1].iterrows()], fontsize=8.5)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(f"Go / Rust, {units.metric_name(metric)} (log₂ axis; below 1 Go is lower)")
    ax.grid(axis="y", visible=False)
    handles = [Line2D([], [], marker="o", color=palette[h], label=h) for h in hosts]
    if drawn:
        handles.append(Line2D([], [], color="0.4", label="each host as combined: its mean log ratio, the normal on its "
                                                          "own variance (and its rounding), at the family's level"))
    if left_out:
        handles.append(Line2D([], [], marker="o", linestyle="", color="0.4", markerfacecolor="white",
                              label=f"left out of the combination: fewer than {MIN_PAIRS} pairs"))
    handles.append(Patch(color="0.15", label="combined: random effects, interval at the family's level"))
    if margin:
        handles.append(Patch(color=EQUIVALENCE_COLOR, alpha=0.5, label=f"equivalence band ±{margin:.0%}"))
    fig.legend(handles=handles, loc="outside lower center", ncols=1, fontsize=8, frameon=False)
    fig.bench_title = f"Go / Rust ratio of {units.metric_name(metric)} per host and combined"
    fig.suptitle(fig.bench_title, fontsize=12)
    return fig
