"""The answer first: what a run found, Go vs Rust, before any table.

For each metric with a Go-vs-Rust table: the differences between the two languages' defaults
(like for like: goroutines against tokio tasks), largest first by the smallest difference each
interval supports (`Difference.assured`: the interval's end nearest 1, on the log scale; a row of 6
noisy pairs with a large estimate and a wide interval is not put above a precise one), times of
microseconds last, said so (SHORT_TIME_S), each with its ratio, its interval,
the work it was measured on, the pairs (or samples) the interval rests on and the two medians it
compares (the magnitude a factor is of); then how many
comparisons were equivalent and how many stayed open (with how many of those could still have
shown a difference of 5% or less).  Every number is read from the comparison tables, whose
intervals already carry the family's level.

A run on several hosts (a cluster) pools every host's blocks in those tables (pairs within a host):
a reading of these hosts, not of machines in general.  Its findings say so and name the rows whose
verdict the combination across hosts (the Hosts section) reads otherwise (`HostsReading`: the
comparison is analysis.hosts.pooled_against_hosts; only the words are here).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis import compare, hosts, robustness, rules
from . import units
from .tables.hosts import key_texts

FINDING_METRICS = rules.HEADLINE_METRICS
# an open comparison that could have shown this difference is "open, but small if anything": the
# size at which the sequential rule stops sampling an inconclusive comparison
SMALL_MDE = rules.PRECISION_TARGET
# A difference of times of which either is under this is listed after the others, and says why: a
# workload of microseconds (idle tasks at N = 1) is a few wake-ups of the scheduler, and its ratio
# moved between two article runs on one machine by more than either interval said (Rust join-all
# against Go's goroutine, 15 µs a sample: 0.750 [0.592, 0.949] in one, 1.034 [0.963, 1.084] in the
# other).  Either, not both: the ratio is as steady as its shorter side, and idle tasks at N = 1
# (Go 13-14 µs, Rust 92 µs in one run and 106 µs in another) fell on both sides of a rule that
# asked for both.
SHORT_TIME_S = 100e-6
# how the differences are ordered, in the words every rendering of the findings carries
ORDER = ("differences ordered by the smallest difference each interval supports (its end nearest 1), largest "
         "first, not by their estimates")


def short_time(metric: str, go_median: float, rust_median: float) -> bool:
    """A comparison of two times of which either is under SHORT_TIME_S (a few wake-ups of the
    scheduler), whose ratio can move between runs by more than its interval says: listed last here,
    and not one the ratio figure sets its axis by (figures/ratios.py)."""
    return units.is_time(metric) and any(v < SHORT_TIME_S for v in (go_median, rust_median))


@dataclass(frozen=True)
class Difference:
    workload: str
    n: int
    params: str
    ratio: float
    low: float
    high: float
    who: str  # "Go" or "Rust": the side that needs less
    depends_on_variant: bool
    within_margin: bool = False  # a difference inside the equivalence margin ("by less than 2%")
    samples: str = ""  # what the interval rests on: "10 pairs", or "10 Go and 9 Rust samples, unpaired"
    medians: tuple[float, float] = (math.nan, math.nan)  # Go's and Rust's cell medians, in the metric's unit
    arm: str = ""  # the arm of an A/A run ("A", "B"), where the same work was compared once in each
    # the verdicts of the other like-for-like pairs of variants of the same work, where one differs
    # from this one's (cpu_loops: "Rust faster" with the plain loop, inconclusive with the others):
    # {"Go": k, "Rust": k, "equivalent": k, "inconclusive": k}, the kinds present only
    others: tuple[tuple[str, int], ...] = ()

    def size(self) -> str:
        """How much less the side that needs less needs: a factor from 1.5x, else a percentage
        (0.997 is "0.30%", never "1x")."""
        factor = self.ratio if self.ratio >= 1 else 1 / self.ratio
        return f"{units.significant(factor, 3)}x" if factor >= units.FACTOR_FROM else f"{units.significant(100 * (factor - 1), 2)}%"

    def assured(self) -> float:
        """The smallest difference the interval supports, as |log| of its end nearest 1 (0 where
        the interval holds 1): what the list is ordered by, so that a large estimate resting on a
        wide interval does not come before a smaller one its interval is sure of."""
        if not (self.low > 1 or self.high < 1):
            return 0.0
        return min(abs(math.log(self.low)), abs(math.log(self.high)))

    def short(self, metric: str) -> bool:
        """A time of either side under SHORT_TIME_S."""
        return short_time(metric, *self.medians)

    def text(self, metric: str, margin: float = rules.MARGIN) -> str:
        """The line of this difference; `margin`: the equivalence margin its verdict was decided at."""
        where = (f"{self.workload}, N = {units.count(self.n)}" + (f" ({self.params})" if self.params else "")
                 + (f", arm {self.arm}" if self.arm else ""))
        note = "; the verdict depends on the variants chosen" if self.depends_on_variant else ""
        if self.others and not self.depends_on_variant:
            note += ("; the other variant pairs of this work read otherwise: "
                     + ", ".join(f"{k} {_OTHER_WORDS[w]}" for w, k in self.others))
        if self.short(metric):
            note += (f"; a time under {units.quantity(SHORT_TIME_S, 's')}, a few wake-ups of the scheduler: such "
                     "a ratio can move between runs by more than its interval says")
        verdict = rules.verdict_text("a" if self.who == "Go" else "b", self.within_margin, "Go", "Rust", metric, margin)
        rests_on = f", {self.samples}" if self.samples else ""
        return (f"{verdict} ({self.size()}): {where}: Go/Rust {units.ratio(self.ratio, self.low, self.high)}"
                f"{rests_on}{self._magnitude(metric)}{note}")

    def _magnitude(self, metric: str) -> str:
        """What the factor is a factor of: the two cells' medians with their unit (a 7x difference
        of 20 µs and of 20 s are different findings)."""
        go, rust = (units.quantity(v, units.metric_unit(metric)) for v in self.medians)
        return f" (medians: Go {go}, Rust {rust})" if go and rust else ""


# how many rows whose verdict differs across hosts are named (the rest are counted)
HOSTS_NAMED = 5


def _verdict_words(reading: str, verdict: str) -> str:
    """A row's verdict for the hosts' sentence: its table's words, or compare.NOT_TESTED /
    hosts.NOT_MEASURED where the table has no verdict to read (analysis.hosts.pooled_against_hosts)."""
    return reading if reading in (compare.NOT_TESTED, hosts.NOT_MEASURED) else verdict


@dataclass(frozen=True)
class HostsReading:
    """A table that pools the blocks of several hosts, against the combination across hosts."""

    hosts: int  # hosts whose blocks the table pools
    compared: int  # its Go-vs-Rust rows
    differ: tuple[tuple[str, str, str], ...] = ()  # (the row, its verdict pooled, its verdict across hosts)

    def pooled_text(self, subject: str = "these verdicts") -> str:
        """What `subject` (the pooled verdicts) read, and what the combination across hosts reads."""
        return (f"{subject} pool the blocks of the run's {self.hosts} hosts as one sample (pairs within a host): a "
                f"reading of these {self.hosts} hosts, not of machines in general, which the combination across hosts "
                "in the Hosts section is (random effects, each host one draw of the machines, so wide with few hosts)")

    def differ_text(self) -> str:
        """The rows whose verdict the combination across hosts reads otherwise (the first HOSTS_NAMED
        named, the rest counted), or that there are none."""
        if not self.differ:
            return f"every one of the {self.compared} Go-vs-Rust rows reads the same across hosts"
        named = "; ".join(f"{row} (pooled: {pooled}; across hosts: {there})"
                          for row, pooled, there in self.differ[:HOSTS_NAMED])
        more = len(self.differ) - HOSTS_NAMED
        reads = "reads" if len(self.differ) == 1 else "read"
        return (f"{len(self.differ)} of the {self.compared} Go-vs-Rust rows {reads} otherwise across hosts: {named}"
                + (f"; and {more} more (the Hosts section has them)" if more > 0 else ""))

    def text(self) -> str:
        """The sentence a reader needs beside the pooled verdicts."""
        return f"{self.pooled_text()}; {self.differ_text()}"


def hosts_reading(tables: dict[str, pd.DataFrame], metric: str) -> HostsReading | None:
    """How the Go-vs-Rust table of `metric` reads against the combination across hosts, for a run
    on several hosts (its tables hold `across_hosts_<metric>` and `per_host_<metric>`); None for a
    run on one host."""
    pooled, combined = tables.get(f"go_vs_rust_{metric}"), tables.get(f"across_hosts_{metric}")
    own = tables.get(f"per_host_{metric}")
    if pooled is None or combined is None or pooled.empty or "verdict_kind" not in pooled:
        return None
    count = int(own["host"].nunique()) if own is not None and "host" in own else 0
    if count < 2:
        return None
    against = hosts.pooled_against_hosts(pooled.reset_index(drop=True), combined)
    differ = against[against["differs"]]
    names = key_texts(differ)
    untested = compare.untested(pooled.reset_index(drop=True))
    readings = [(f"{names[i]})",
                 _verdict_words(compare.NOT_TESTED if untested[i] else "", r["pooled_verdict"]),
                 _verdict_words(hosts.NOT_MEASURED if r["hosts_kind"] == hosts.NOT_MEASURED else
                                "" if r["hosts_tested"] else compare.NOT_TESTED, r["hosts_verdict"]))
                for i, r in differ.iterrows()]
    return HostsReading(count, len(against), tuple(readings))


@dataclass(frozen=True)
class MetricFindings:
    metric: str
    differences: list[Difference]
    equivalent: int
    open: int
    open_small: int  # open, but an effect of SMALL_MDE would have been called
    level: float  # the intervals' confidence
    family_size: int
    all_pairs: dict  # verdict counts over every like-for-like pair of variants
    margin: float = rules.MARGIN  # the equivalence margin the table's verdicts were decided at
    open_mde: tuple[float, float] = (math.nan, math.nan)  # the open rows' smallest and largest MDE
    untested: int = 0  # comparisons with too few pairs to be tested (samples failed): no interval, not "open"
    open_pairs: tuple[int, ...] = ()  # the pairs each open paired row rests on (what its mde's power depends on)
    hosts: HostsReading | None = None  # a run on several hosts: the table pools them (HostsReading.text)

    def lines(self, limit: int = 10) -> list[str]:
        out = [d.text(self.metric, self.margin) for d in self.differences[:limit]]
        more = len(self.differences) - limit
        if more > 0:
            out.append(f"... and {more} more difference{'' if more == 1 else 's'} (the table has them all)")
        return out

    def summary(self) -> str:
        name = units.metric_name(self.metric)
        called = len(self.differences)
        small = sum(d.within_margin for d in self.differences)
        margin = f"{self.margin * 100:g}%"
        notes = [n for n in ("" if not small else
                             f"smaller than {margin}: its interval clear of 1 and inside ±{margin}" if called == 1 else
                             f"{small} of them smaller than {margin}: interval{'s' if small > 1 else ''} clear of 1 "
                             f"and inside ±{margin}", self._short_text()) if n]
        return (f"{name[:1].upper()}{name[1:]}: {called} difference{'' if called == 1 else 's'}"
                + (f" ({'; '.join(notes)})" if notes else "")
                + ", "
                f"{self.equivalent} equivalent "
                f"within ±{margin}, {self.open} open"
                + (f" ({self._open_text()})" if self.open else "")
                + (f", {self.untested} not tested (fewer than {rules.MIN_PAIRS} pairs of values that count: samples "
                   "failed, were left out, or for memory had tasks finish before the last was spawned; the table's "
                   "warning says which)" if self.untested else "")
                + f" among the defaults of both languages; intervals at {units.percent(self.level, digits=3)}, "
                f"adjusted over the family's {self.family_size} comparisons (false discovery rate {rules.ALPHA:g})"
                + (f"; {ORDER}" if called > 1 else "")
                + (f". {self._hosts_text()}" if self.hosts is not None else ""))

    def _hosts_text(self) -> str:
        """The run's hosts pooled in this table, and the rows the combination reads otherwise."""
        text = self.hosts.text()
        return text[:1].upper() + text[1:]

    def _short_text(self) -> str:
        """The differences with a time under SHORT_TIME_S, counted where the list may not reach them (it
        shows them last): such a ratio can move between runs by more than its interval says."""
        short = sum(d.short(self.metric) for d in self.differences)
        if not short:
            return ""
        which = "it has" if len(self.differences) == 1 else f"{short} of them {'has' if short == 1 else 'have'}"
        return (f"{which} a time under {units.quantity(SHORT_TIME_S, 's')}, listed last: a few wake-ups of the "
                "scheduler, whose ratio can move between runs by more than its interval says")

    def _open_text(self) -> str:
        """What the open comparisons could have shown: their MDEs' range and how many of them were
        precise enough that a difference of SMALL_MDE is excluded by the interval or would have been
        called (compare._detectable)."""
        low, high = (units.detectable(v) for v in self.open_mde)
        mdes = "" if not low else (f"MDE {low}" if low == high else f"MDEs {low} to {high}")
        one = self.open == 1  # "all of them" of a single open row reads as if there were several
        could = (("not" if one else "none of them") if self.open_small == 0
                 else ("" if one else "all of them") if self.open_small == self.open
                 else f"{self.open_small} of them")
        return ((mdes + "; " if mdes else "") + f"{could + ' ' if could else ''}precise enough that a difference of "
                f"{SMALL_MDE:.0%} is excluded by the interval or would have been called at the spread measured: "
                f"{self._power_text()}")

    def _power_text(self) -> str:
        """The power behind "would have been called": rules.POWER only were the spread measured the
        true one; averaged over its uncertainty, what the package's simulation measured at the open
        rows' pairs (rules.mde_power_measured)."""
        low, high, counts = rules.mde_power_measured(self.open_pairs or rules.MDE_POWER_MEASURED)
        at = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
        beyond = ""
        if self.open_pairs and max(self.open_pairs) > counts[-1]:
            fewest, most = (units.count(p) for p in (min(self.open_pairs), max(self.open_pairs)))
            beyond = (", the most it tried, where " + (f"this row has {most}" if len(self.open_pairs) == 1 else
                                                        f"these rows have {fewest} to {most}"))
        power = f"{low:.0%}" if f"{low:.0%}" == f"{high:.0%}" else f"{low * 100:.0f}–{high:.0%}"
        return (f"with {rules.POWER:.0%} power were that spread the true one, {power} averaged over its own "
                f"uncertainty (the package's simulation at {at} pairs{beyond}: docs/statistics.md)")


_OTHER_WORDS = {"a": "Go", "b": "Rust", "equivalent": "equivalent", "inconclusive": "inconclusive"}


def _others(table: pd.DataFrame, row: dict) -> tuple[tuple[str, int], ...]:
    """The verdict kinds (with counts) of the other rows of `row`'s work, where some differ from
    its own; () where every other row agrees or there is none."""
    if not set(robustness.GROUP) <= set(table.columns):
        return ()
    same = pd.Series(True, index=table.index)
    for c in robustness.GROUP:
        v = row.get(c)
        same &= table[c].isna() if v is None or (isinstance(v, float) and math.isnan(v)) else table[c] == v
    mine = (table["go_variant"] == row.get("go_variant")) & (table["rust_variant"] == row.get("rust_variant")) & \
        (table["go_params"] == row.get("go_params")) & (table["rust_params"] == row.get("rust_params"))
    kinds = table.loc[same & ~mine, "verdict_kind"].value_counts()
    if not (kinds.index != row.get("verdict_kind")).any():
        return ()
    return tuple((k, int(kinds[k])) for k in _OTHER_WORDS if k in kinds.index)


def _samples(row: dict) -> str:
    """How many pairs (or, unpaired, samples of each language) a row's interval rests on: a run of
    the sequential rule gives its comparisons from 6 to hundreds of pairs."""
    pairs, go, rust = (_number(row.get(key)) for key in ("pairs", "go_samples", "rust_samples"))
    if row.get("pairing") == "paired" and pairs > 0:
        return f"{units.count(pairs)} pair{'s' if pairs != 1 else ''}"
    if not (math.isnan(go) or math.isnan(rust)):
        return f"{units.count(go)} Go and {units.count(rust)} Rust samples, unpaired"
    return ""


def _open_pairs(rows: pd.DataFrame) -> tuple[int, ...]:
    """The pairs each paired row of `rows` rests on, fewest first (unpaired rows have none)."""
    if rows.empty or "pairs" not in rows:
        return ()
    paired = rows[rows["pairing"] == "paired"] if "pairing" in rows else rows
    pairs = pd.to_numeric(paired["pairs"], errors="coerce").dropna()
    return tuple(sorted(int(p) for p in pairs if p > 0))


def _text(value) -> str:
    """A label of a row as text: '' where it has none (None, NaN)."""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _number(value) -> float:
    v = pd.to_numeric(value, errors="coerce")
    return math.nan if pd.isna(v) else float(v)


def _defaults(table: pd.DataFrame) -> pd.DataFrame:
    if {"go_default", "rust_default"} <= set(table.columns):
        return table[table["go_default"].astype(bool) & table["rust_default"].astype(bool)]
    return table


def metric_findings(table: pd.DataFrame, metric: str, margin: float = rules.MARGIN,
                    hosts_read: HostsReading | None = None) -> MetricFindings | None:
    """The findings of one Go-vs-Rust table (None for an empty one), whose verdicts were decided at
    the equivalence margin `margin`; `hosts_read`: how the table reads against the combination
    across hosts, for a run on several hosts (`hosts_reading`)."""
    if table is None or table.empty or "verdict_kind" not in table:
        return None
    rows = _defaults(table)
    diffs = []
    for r in rows[rows["verdict_kind"].isin(["a", "b"])].to_dict("records"):
        params = str(r.get("shared_params") or "").replace(",", ", ")
        diffs.append(Difference(r["workload"], int(r["n"]), params, float(r["ratio"]),
                                float(r["ratio_ci_low"]), float(r["ratio_ci_high"]),
                                "Go" if r["verdict_kind"] == "a" else "Rust",
                                "depends" in str(r.get("robustness") or ""), r.get("within_margin") in (True, 1),
                                _samples(r), (_number(r.get("go_median")), _number(r.get("rust_median"))),
                                _text(r.get("arm")), _others(table, r)))
    # largest first by the difference each interval supports (its end nearest 1), the estimate
    # breaking ties; times of microseconds after the others (their lines say why)
    diffs.sort(key=lambda d: (d.short(metric), -d.assured(), -abs(math.log(d.ratio))))
    # an inconclusive row without a ratio had too few pairs to be tested: counted apart, since no
    # spread was measured that its precision could be read from
    not_tested = compare.untested(rows)
    open_rows = rows[(rows["verdict_kind"] == "inconclusive") & ~not_tested]
    untested = int(not_tested.sum())
    mde = pd.to_numeric(open_rows.get("mde", pd.Series(dtype=float)), errors="coerce")
    level = pd.to_numeric(table.get("ci_level", pd.Series(dtype=float)), errors="coerce").dropna()
    return MetricFindings(metric, diffs, int((rows["verdict_kind"] == "equivalent").sum()), len(open_rows),
                          int((mde <= SMALL_MDE).sum()), float(level.iloc[0]) if not level.empty else np.nan,
                          int(table["family_size"].iloc[0]) if "family_size" in table else len(table),
                          table["verdict_kind"].value_counts().to_dict(), margin,
                          (float(mde.min()), float(mde.max())) if mde.notna().any() else (math.nan, math.nan),
                          untested, _open_pairs(open_rows), hosts_read)


def findings(tables: dict[str, pd.DataFrame], margin: float = rules.MARGIN) -> list[MetricFindings]:
    """The findings of every metric with a Go-vs-Rust table, in FINDING_METRICS order; `margin`: the
    equivalence margin the tables were computed with (the report's), which their text names."""
    out = []
    for m in FINDING_METRICS:
        f = metric_findings(tables.get(f"go_vs_rust_{m}"), m, margin, hosts_reading(tables, m))
        if f is not None:
            out.append(f)
    return out


def none_made(df: pd.DataFrame | None) -> str:
    """Why a run has no Go-vs-Rust comparison, from its samples: one language run alone (a plan's
    `languages`), no valid sample of one language (its failures), or no cells of both languages
    with the same work."""
    base = "No Go-vs-Rust comparison could be made in this run"
    if df is None or df.empty or "lang" not in df:
        return f"{base} (see the failures table)."
    name = {"go": "Go", "rust": "Rust"}
    run = sorted(set(df["lang"]))
    if len(run) < 2:
        return (f"{base}: only {' and '.join(name.get(n, n) for n in run)} was run (languages: {', '.join(run)}); "
                "run both languages (go and rust) to compare them.")
    valid = set(df.loc[df["valid"].astype(bool), "lang"]) if "valid" in df else set(run)
    missing = [n for n in run if n not in valid]
    if missing:
        return f"{base}: no {' or '.join(name.get(n, n) for n in missing)} sample was valid (see the failures table)."
    return (f"{base}: no Go cell and Rust cell with valid samples measured the same work (workload, N and "
            "parameters) with the same model (see the failures and checksums tables).")


def markdown(found: list[MetricFindings], limit: int = 10, df: pd.DataFrame | None = None) -> str:
    """The findings as Markdown: per metric a summary line and the differences, largest first by
    what their intervals support (ORDER; without any, why: `none_made` of the samples `df`)."""
    if not found:
        return none_made(df)
    parts = []
    for f in found:
        parts.append(f"**{f.summary()}.**\n")
        parts += [f"{i}. {line}" for i, line in enumerate(f.lines(limit), 1)]
        parts.append("")
    return "\n".join(parts).strip() + "\n"
