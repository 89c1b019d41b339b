"""The tables of several hosts for reading: each host's own Go-vs-Rust verdicts and the
combination across hosts (analysis/hosts.py), their verdicts written as the one-host tables write
them.  The `hosts` command, the analysis notebook and a cluster run's report read them."""
from __future__ import annotations

import pandas as pd

from ...analysis.compare import NOT_TESTED, untested
from ...analysis.hosts import PREDICTION_MIN_HOSTS, i2_by_chance
from ...analysis.rules import CONFIDENCE, MIN_PAIRS
from .. import units
from .formatting import blank, column_of, shared_text, side_columns, work_columns
from .markup import Readable

# a verdict's kind in words, where a table has no verdict text of its own
KIND_WORDS = {"a": "Go lower", "b": "Rust lower", "equivalent": "equivalent", "inconclusive": "inconclusive"}


def _comparison_columns(t: pd.DataFrame) -> pd.DataFrame:
    """What a reader needs to know which comparison a row is, named as the Go-vs-Rust table names
    it (`work_columns`, `side_columns`: workload, N, threads, arm, the parameters both sides share,
    each side's variant with its own parameters), and the named factor.  A column empty in every
    row (the arm outside an A/A run) is left out."""
    out = pd.DataFrame(index=t.index)
    shared = shared_text(t)
    work_columns(t, out, shared)
    side_columns(t, out, shared)
    out = out.drop(columns=[c for c in out.columns if out[c].map(blank).all()])
    factor = t.attrs.get("factor")
    if factor and factor in t.columns:
        out[factor] = t[factor].astype(str)
    return out


# what "holds on k of m" counts (analysis.hosts.holds), for the captions and the summary
HOLDS_ON = ("for a difference, the hosts whose own interval calls the same side; for an equivalence, the hosts "
            "whose own interval lies inside the margin (equivalent, or a difference smaller than the margin); an "
            "inconclusive row claims nothing to hold, and the hosts' own verdicts are counted instead")


def holds_on_text(holds: str, counts: str) -> str:
    """"2 of 2 hosts" for a decided row; for an inconclusive one (no count to hold), the hosts'
    own verdicts counted: "no verdict to hold; hosts: 2 equivalent within ±2%"."""
    if not blank(holds):
        return f"{holds} hosts"
    return f"no verdict to hold; hosts: {counts}" if not blank(counts) else "no verdict to hold"


def verdicts(t: pd.DataFrame) -> pd.Series:
    """Each row's verdict as the one-host tables write it ("Go faster, by less than 2%"), where the
    table has it; else its kind in words; NOT_TESTED for a row without a ratio (compare.untested:
    too few pairs on a host, or too few hosts with enough pairs to combine; its note or warning says
    why)."""
    words = t["verdict_kind"].map(KIND_WORDS).fillna(t["verdict_kind"])
    shown = t["verdict"].where(t["verdict"].notna() & (t["verdict"] != ""), words) if "verdict" in t else words
    return shown.where(~untested(t), NOT_TESTED)


def machines_caveat(hosts: int, machines: int) -> str:
    """What hosts that share machines can say, wherever the hosts' tables are shown (the hosts
    command's summary, a cluster run's report): '' where every host is a machine of its own."""
    if machines >= hosts:
        return ""
    return (f"{hosts} hosts on {machines} machine(s): hosts of one machine are shares of it, each pinned to CPUs of "
            "its own (a local cluster, or workers pinned with taskset); a verdict that holds on all of them holds "
            "across those CPUs, not across machines.")


def hosts_df(hosts) -> str:
    """"2 hosts (1 df)": what tau², I² and Cochran's Q of a row are estimated from."""
    k = int(hosts)
    return f"{k} host{'' if k == 1 else 's'} ({max(k - 1, 0)} df)"


def q_text(q) -> str:
    """Cochran's Q, "2.25"; '' where it was not estimated."""
    return units.significant(q, 3) if pd.notna(q) else ""


def welch_text(f, df1, df2, p) -> str:
    """Welch's test of equal host means, "F 2.25 on 1 and 9.8 df, p 0.16"; '' where it was not
    computed."""
    if not all(pd.notna(v) for v in (f, df1, df2, p)):
        return ""
    return f"F {units.significant(f, 3)} on {int(df1)} and {units.significant(df2, 2)} df, p {units.p_value(p)}"


# the level of tau's interval and of the prediction interval (analysis.hosts: rules.CONFIDENCE, a lone
# interval's, not the family's level: neither tests anything)
LONE = f"{CONFIDENCE:.0%}"


def tau_text(tau, low=float("nan"), high=float("nan")) -> str:
    """tau in log units with its 95% interval where it has one, "0.012 [0, 0.041]"; '' where tau was
    not estimated."""
    if not pd.notna(tau):
        return ""
    ends = [units.significant(v, 2) if v > 0 else "0" for v in (low, high)] if pd.notna(low) and pd.notna(high) else []
    return (units.significant(tau, 3) if tau > 0 else "0") + (f" [{ends[0]}, {ends[1]}]" if ends else "")


def predict_text(low, high) -> str:
    """Where the Go/Rust ratio would lie on a machine not measured, "[0.95, 1.06]"; '' where it has no
    prediction interval (fewer than analysis.hosts.PREDICTION_MIN_HOSTS hosts)."""
    if not (pd.notna(low) and pd.notna(high)):
        return ""
    return "[" + ", ".join(units.significant(v, 3) for v in (low, high)) + "]"


def heterogeneity_text(row) -> str:
    """A combined row's heterogeneity in words: tau with its 95% interval, I², Cochran's Q and the
    hosts (and degrees of freedom) they are estimated from, Welch's test of equal host means, and
    where a machine not measured would be (from 3 hosts)."""
    if not (pd.notna(row["tau"]) and pd.notna(row["i2"])):
        return "tau and I² not estimable (a host's own variance is 0 or not finite)"
    q = q_text(row.get("q"))
    welch = welch_text(row.get("welch_f"), row.get("q_df"), row.get("welch_df2"), row.get("welch_p"))
    tau = tau_text(row["tau"], row.get("tau_ci_low", float("nan")), row.get("tau_ci_high", float("nan")))
    another = predict_text(row.get("predict_low", float("nan")), row.get("predict_high", float("nan")))
    return (f"tau {tau}" + (f" ({LONE})" if "[" in tau else "") + f", I² {row['i2']:.0%}" + (f", Q {q}" if q else "")
            + f", from {hosts_df(row['hosts'])}" + (f"; equal hosts (Welch): {welch}" if welch else "")
            + (f"; a machine not measured: Go/Rust {another} ({LONE} prediction)" if another else ""))


def chance_text(hosts) -> str:
    """How often I² reaches 50% by chance among as many hosts as the rows combine (analysis.hosts
    .i2_by_chance), for the captions and the summary: '' where no row combines two hosts."""
    counts = sorted({int(k) for k in hosts if pd.notna(k) and int(k) >= 2})
    if not counts:
        return ""
    shares = ", ".join(f"{i2_by_chance(k):.0%} of sets of {k}" for k in counts)
    return (f"tau², I² and Q are estimated from the hosts each row combines (hosts - 1 df): without any "
            f"heterogeneity, I² reaches 50% by chance in {shares} hosts, so read I² with the p-value of Welch's "
            f"test of equal host means")


def key_texts(t: pd.DataFrame) -> pd.Series:
    """Each row's comparison in words, from the columns that name it in the tables (work_columns,
    side_columns: threads, arm, each side's own parameters): 'sleep N = 1,000 (waitgroup vs
    join-handles, threads 2, kernel=xorshift' (the caller closes it): the hosts' summary and the
    findings of a run on several hosts name rows by it."""
    if t.empty:
        return pd.Series(dtype=str)
    shared = t["shared_params"].map(lambda v: v if isinstance(v, str) else "") if "shared_params" in t else \
        pd.Series("", index=t.index)
    cols = pd.DataFrame(index=t.index)
    work_columns(t, cols, shared)
    side_columns(t, cols, shared)
    texts = {}
    for i, c in cols.iterrows():
        extra = [f"threads {c['threads']}" if c["threads"] else "", f"arm {c['arm']}" if c["arm"] else "",
                 str(c["parameters"] or "")]
        texts[i] = f"{c['workload']} N = {c['N']} ({c['Go']} vs {c['Rust']}" + "".join(f", {e}" for e in extra if e)
    return pd.Series(texts)


def _warnings(t: pd.DataFrame, out: pd.DataFrame) -> None:
    """The rows' warnings (a host's cell whose values are dispersed, too few pairs, ...), where a row
    has one."""
    warnings = column_of(t, "warning", "").fillna("").astype(str)
    if (warnings != "").any():
        out["warning"] = warnings


def combined(t: pd.DataFrame) -> Readable:
    """The combined table for reading: the ratio across hosts with the interval its verdict is
    read from, the verdict, tau², I² (blank where they cannot be estimated, with a note) and on how
    many hosts it holds."""
    if t.empty or "workload" not in t:  # no comparison on any host (a run of one language, say)
        return Readable(pd.DataFrame(), "no Go-vs-Rust comparison on any host", "Go vs Rust across hosts")
    t = t.reset_index(drop=True)
    out = _comparison_columns(t)
    out["hosts"] = t["hosts"].astype(int)
    out["Go/Rust [interval]"] = [units.ratio(r, lo, hi) for r, lo, hi in
                                 zip(t["ratio"], t["ratio_ci_low"], t["ratio_ci_high"])]
    out["interval level"] = t["ci_level"].map(lambda v: f"{v:.1%}" if pd.notna(v) else "")
    out["verdict"] = verdicts(t)
    out["tau²"] = (t["tau"] ** 2).map(lambda v: units.significant(v, 2) if pd.notna(v) else "")
    out[f"tau [{LONE}]"] = [tau_text(*v) for v in zip(t["tau"], column_of(t, "tau_ci_low", float("nan")),
                                                  column_of(t, "tau_ci_high", float("nan")))]
    out["I²"] = t["i2"].map(lambda v: f"{v:.0%}" if pd.notna(v) else "")
    out["Q"] = column_of(t, "q", float("nan")).map(q_text)
    out["equal hosts (Welch)"] = [welch_text(*v) for v in zip(*(column_of(t, c, float("nan")) for c in
                                                               ("welch_f", "q_df", "welch_df2", "welch_p")))]
    out["estimated from"] = [hosts_df(k) if pd.notna(i2) else "" for k, i2 in zip(t["hosts"], t["i2"])]
    out[f"a machine not measured ({LONE})"] = [predict_text(lo, hi) for lo, hi in
                                           zip(column_of(t, "predict_low", float("nan")),
                                               column_of(t, "predict_high", float("nan")))]
    out["holds on"] = [holds_on_text(text, counts) for text, counts in
                       zip(t["holds_on_text"].fillna(""), column_of(t, "host_verdict_counts", ""))]
    out["hosts' own verdicts"] = (t["host_verdict_texts"] if "host_verdict_texts" in t else t["host_verdicts"].map(
        lambda v: ", ".join(KIND_WORDS.get(k, k) for k in str(v).split(","))))
    notes = t["note"].fillna("").astype(str) if "note" in t else pd.Series("", index=t.index)
    if (notes != "").any():  # tau² and I² blank where they cannot be estimated: the note says why
        out["note"] = notes
    _warnings(t, out)
    metric = units.metric_name(t["metric"].iloc[0]) if not t.empty else ""
    chance = chance_text(t["hosts"])
    return Readable(out, "one random-effects combination per comparison (the wider of Student's t on hosts - 1 "
                         "degrees of freedom on the hosts' spread and the normal on their own variances, widened on a "
                         f"grid by the hosts' rounding; BH over the comparisons); tau [{LONE}]: the spread of the "
                         "hosts' true log ratios with its interval (Q-profile, Q's distribution by parametric "
                         "bootstrap), whose upper end is how far machines like these may differ; a machine not "
                         "measured: where the Go/Rust ratio would lie on another machine like these hosts "
                         f"({LONE} prediction interval, from {PREDICTION_MIN_HOSTS} hosts; it tests nothing, and few "
                         "hosts make it wide); holds on: "
                    + HOLDS_ON
                    + (f"; {chance}" if chance else ""),
                    f"Go vs Rust across hosts, {metric}")


def values(t: pd.DataFrame) -> Readable:
    """Each host's value as the combination across hosts read it (analysis.hosts.host_values): its
    pairs, the Go/Rust ratio of its mean log ratio with the interval the combination's model gives
    it, and why a host was left out."""
    if t.empty or "workload" not in t:
        return Readable(pd.DataFrame(), "no Go-vs-Rust comparison on any host", "Each host as combined")
    t = t.reset_index(drop=True)
    out = _comparison_columns(t)
    out.insert(0, "host", t["host_label"] if "host_label" in t else t["host"])
    out["pairs"] = t["pairs"].astype(int)
    out["Go/Rust [interval]"] = [units.ratio(r, lo, hi) for r, lo, hi in
                                 zip(t["ratio"], t["ratio_ci_low"], t["ratio_ci_high"])]
    left = column_of(t, "left_out", "").fillna("").astype(str)
    if (left != "").any():
        out["left out"] = left
    level = t["ci_level"].dropna().iloc[0] if "ci_level" in t and t["ci_level"].notna().any() else None
    at = f" at {units.percent(level, digits=3)}" if level is not None else ""
    return Readable(out, "each host's value as the combination across hosts read it: the ratio of its mean "
                         f"log ratio, the normal on its own variance and its rounding{at} (the combined table's "
                         f"level); a host with fewer than {MIN_PAIRS} pairs is left out, as its own table leaves "
                         "the comparison untested", "Each host as combined")


def per_host(t: pd.DataFrame) -> Readable:
    """Each host's own Go-vs-Rust verdicts (its own family and rule), one row per host and
    comparison."""
    if t.empty or "workload" not in t:  # no comparison on any host (a run of one language, say)
        return Readable(pd.DataFrame(), "no Go-vs-Rust comparison on any host", "Go vs Rust on each host")
    t = t.reset_index(drop=True)
    out = _comparison_columns(t)
    out.insert(0, "host", t["host_label"] if "host_label" in t else t["host"])
    out["Go/Rust [interval]"] = [units.ratio(r, lo, hi) for r, lo, hi in
                                 zip(t["ratio"], t["ratio_ci_low"], t["ratio_ci_high"])]
    out["verdict"] = verdicts(t)
    _warnings(t, out)
    metric = units.metric_name(t["metric"].iloc[0]) if "metric" in t and not t.empty else ""
    return Readable(out, "each host's own Go-vs-Rust table: its verdicts under its own family",
                    f"Go vs Rust on each host, {metric}")
