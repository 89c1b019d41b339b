"""Several hosts, one report: the hosts behind the directories, each host's verdicts, the combined
ratios with tau and I^2, "holds on k of m", and the forest plots, written to one directory."""
from __future__ import annotations

import re

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..analysis import hosts, rules
from ..store.meta import META
from . import figures, tables, theme, units
from .export import images
from .export.base import written as writing



@dataclass
class HostsReport:
    df: pd.DataFrame
    overview: pd.DataFrame
    per_host: dict[str, pd.DataFrame] = field(default_factory=dict)
    combined: dict[str, pd.DataFrame] = field(default_factory=dict)
    values: dict[str, pd.DataFrame] = field(default_factory=dict)  # each host's value as combined (hosts.host_values)
    files: list[Path] = field(default_factory=list)  # what `save` wrote

    @property
    def machines(self) -> int:
        return len(self.overview)

    @property
    def distinct_machines(self) -> int:
        """Machines behind the hosts (the hosts of a local cluster share one)."""
        return int(self.overview["machine"].nunique()) if not self.overview.empty else 0

    @property
    def directories(self) -> int:
        return len({d for dirs in self.overview["results_dirs"] for d in dirs.split(", ")})


def overview(df: pd.DataFrame) -> pd.DataFrame:
    """One row per host: its label, its directories, its measured samples."""
    rows = []
    for h, entry in df.attrs.get("hosts", {}).items():
        mine = df[(df["host"] == h) & (df["phase"] == "measured")] if not df.empty else df
        rows.append({"host": h, "label": entry["label"], "machine": entry.get("machine", h),
                     "directories": len(entry["results_dirs"]),
                     "results_dirs": ", ".join(entry["results_dirs"]), "measured_samples": len(mine)})
    return pd.DataFrame(rows, columns=["host", "label", "machine", "directories", "results_dirs", "measured_samples"])


def analyse(df: pd.DataFrame, metrics=hosts.METRICS, margin: float = rules.MARGIN) -> HostsReport:
    rep = HostsReport(df, overview(df))
    for metric in metrics:
        if metric in df.columns:
            logs = hosts.host_log_ratios(df, metric)
            rep.per_host[metric] = hosts.per_host(df, metric, margin)
            rep.combined[metric] = hosts.across_hosts(df, metric, margin, logs=logs)
            rep.values[metric] = hosts.host_values(logs, rep.combined[metric])
    return rep


def summary_lines(rep: HostsReport) -> list[str]:
    """The answer first: how many machines stand behind the directories, then per metric the
    combined verdicts counted and each difference with its ratio, interval and the hosts it holds on
    (analysis.hosts.holds: those whose own interval calls the same side)."""
    out = [f"{rep.directories} results director{'y' if rep.directories == 1 else 'ies'} from {rep.distinct_machines} "
           "distinct machine(s) (a machine is a fingerprint: hostname, machine ID, CPU, caches, memory, kernel, "
           "toolchains, the programs' sha256)."]
    caveat = tables.hosts.machines_caveat(rep.machines, rep.distinct_machines)
    if caveat:
        out.append(caveat)
    if rep.machines < 2:
        out.append("One host: no verdict across machines; each directory's blocks are pooled as blocks of that host.")
    chance = tables.hosts.chance_text([k for t in rep.combined.values() if not t.empty for k in t["hosts"]])
    if chance:
        out.append(f"{chance[:1].upper()}{chance[1:]}.")
    for metric, t in rep.combined.items():
        if t.empty:
            continue
        counts = tables.hosts.verdicts(t).value_counts()
        out.append(f"{units.metric_name(metric)}: " + "; ".join(f"{v} {k}" for k, v in counts.items())
                   + f" of {len(t)} Go-vs-Rust comparisons across hosts")
        alone = int((t["hosts"] < 2).sum())
        if alone and rep.machines >= 2:
            out.append(f"  {alone} of them not tested across hosts: fewer than 2 hosts with {rules.MIN_PAIRS} pairs or "
                       "more (a host with fewer is left out of the combination, as its own table leaves the comparison "
                       "untested); the per-host table has each host's own row")
        left = t["left_out_hosts"].fillna("") if "left_out_hosts" in t else pd.Series("", index=t.index)
        without = int(((t["hosts"] >= 2) & (left != "")).sum())
        if without:
            out.append(f"  {without} of them combined without a host that had fewer than {rules.MIN_PAIRS} pairs (the "
                       "row's note names it)")
        factor = t.attrs.get("factor")
        called = t[t["verdict_kind"].isin(["a", "b"])]
        keys = tables.hosts.key_texts(called)
        for i, r in called.iterrows():
            shared = f", {factor} {r[factor]}" if factor in t.columns else ""
            spread = tables.hosts.heterogeneity_text(r)
            # how far the hosts differ last: its Welch test's "p" never reads as the row's
            out.append(f"- {keys[i]}{shared}): "
                       f"Go/Rust {units.ratio(r['ratio'], r['ratio_ci_low'], r['ratio_ci_high'])} "
                       f"({r['ci_level']:.1%} interval), holds on {r['holds_on_text']} hosts (those whose own "
                       f"interval calls the same side); {spread}")
    return out


# The names `save` writes: a directory holding anything else (a run's results, someone's files) is
# not written into, so that a report of several hosts never mixes with or overwrites other files.
OWN_FILES = re.compile(r"hosts\.(csv|md)|(per_host|combined|host_values)_\w+\.csv|forest_\w+\.(svg|png|pdf)")


def refuse_foreign(directory: str | Path) -> None:
    """A ValueError naming the first entry of `directory` that `save` does not write (none if it
    does not exist or holds only a report of several hosts, which a new one replaces)."""
    d = Path(directory)
    try:
        d.exists()
    except OSError as exc:  # a name too long for the file system
        raise ValueError(f"the hosts report's directory cannot be used ({exc.strerror or exc}, {len(str(d))} "
                         "characters); give --out a shorter path") from None
    if d.exists() and not d.is_dir():
        raise ValueError(f"the hosts report's directory {str(d)!r} is a file; give --out a directory")
    foreign = sorted(p.name for p in d.iterdir() if not OWN_FILES.fullmatch(p.name)) if d.is_dir() else []
    if foreign:
        what = ("it is a run's results directory" if META in foreign
                else f"it holds {foreign[0]!r}, which a hosts report does not write")
        raise ValueError(f"the hosts report is not written into {str(d)!r}: {what}; give --out a new or empty "
                         "directory")


def save(rep: HostsReport, directory: str | Path, margin: float = rules.MARGIN) -> list[Path]:
    """Tables as CSV, the summary as Markdown, a forest plot per metric as SVG, PNG and PDF, in a
    directory that holds nothing else (`refuse_foreign`)."""
    d = Path(directory)
    refuse_foreign(d)
    d.mkdir(parents=True, exist_ok=True)
    written = []
    with writing(d / "hosts.csv") as path:
        rep.overview.to_csv(path, index=False)
    written.append(path)
    for metric in rep.combined:
        for name, t in (("per_host", rep.per_host[metric]), ("combined", rep.combined[metric]),
                        ("host_values", rep.values[metric])):
            with writing(d / f"{name}_{metric}.csv") as path:
                t.to_csv(path, index=False)
            written.append(path)
        if not rep.combined[metric].empty and not rep.values[metric].empty:
            with theme.context():
                fig = figures.forest(rep.values[metric], rep.combined[metric], margin)
                written += images.save(fig, d, f"forest_{metric}")
    with writing(d / "hosts.md") as path:
        path.write_text("# Several hosts\n\n" + "\n\n".join(summary_lines(rep)) + "\n")
    written.append(path)
    rep.files = written
    return written
