"""Results of several hosts in one analysis.

A **host** is a machine fingerprint (`store.hosts`): two results directories taken on machines
with the same fingerprint are blocks of one host, not two independent machines.  Pairs form only
within a block, so only within a host.

Per comparison (`combine`), the per-host log ratios (the mean of the per-block log ratios d, and
its variance var(d) / n) are combined as a random-effects model: the hosts' true log ratios vary
around a common mean with variance tau^2.  The combined log ratio is the mean of the hosts'
estimates and its interval Student's t on their spread with k - 1 degrees of freedom: each host's
estimate is one draw from the population of hosts, its own noise included, so the interval is
exact for normal host estimates of equal precision whatever tau is.  Assumption: the hosts are a
sample of the machines the claim is about.  tau^2 (Paule and Mandel's estimate) and I^2 (the share
of the spread between hosts that is not sampling noise) are read off one statistic, Cochran's
generalised Q (`heterogeneity`), so that I^2 > 0 exactly where tau^2 > 0; where a host's own
variance is 0 (its per-block log ratios never varied) or not finite, neither can be estimated, and
both are NaN with a note saying why.
Measured (`simulate.hosts_coverage`, `tests/test_simulations.py`; 2, 3 and 5 hosts, with and
without heterogeneity): hosts of equal precision 94.6-95.4%; hosts whose noise differs up to
tenfold 95.9-98.9% (conservative, never too narrow), where the inverse-variance weighted
Hartung-Knapp interval falls to 77.7% (weights from 10 pairs are noisy); docs/statistics.md has
the table.  With 2 hosts the interval is wide by construction (t on one degree of freedom): two
machines say little about a third.

Directories that differ by a named factor (store.hosts.load_hosts(..., factor="commit" or
"plan")) carry it in a column of that name, and `df.attrs["factor"]` names it: it joins the key of
every comparison, so each of its values has its own per-host verdicts and its own combination
(pairs stay within a block of one directory either way).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats as sps

from . import multiplicity, rules
from .compare import CellValues, compare, go_vs_rust_row
from ..plan.comparisons import comparisons

# the metrics analysed per host and across hosts: a cluster run's report and the hosts command both read it
METRICS = rules.HEADLINE_METRICS


@dataclass(frozen=True)
class Combined:
    """A random-effects combination of per-host log ratios (log units)."""

    hosts: int
    estimate: float
    low: float
    high: float
    p_value: float
    tau2: float  # between-host variance of the true log ratios (NaN: not estimable, `note` says why)
    i2: float  # share of the between-host spread that is not sampling noise (0..1; NaN as tau2)
    note: str = ""

    @property
    def tau(self) -> float:
        return math.sqrt(self.tau2) if self.tau2 >= 0 else math.nan


NOT_ESTIMABLE = ("tau² and I² not estimable: a host's own variance is 0 (its per-block log ratios never varied) "
                 "or not finite, so the spread between hosts cannot be split into sampling noise and heterogeneity")


def heterogeneity(effects, variances) -> tuple[float, float, str]:
    """tau^2 and I^2 of per-host estimates with their own variances, both read off Cochran's
    generalised Q(t) = sum w_i (y_i - ybar_w)^2, w_i = 1 / (v_i + t): tau^2 is Paule and Mandel's
    estimate, the t >= 0 at which Q(t) = k - 1 (0 where Q(0) <= k - 1 already), found by bracketing
    (Q falls with t, and Q(t) <= sum (y_i - ybar)^2 / t); I^2 = (Q(0) - (k - 1)) / Q(0), clipped at
    0.  So I^2 > 0 exactly where tau^2 > 0.  A variance of 0 or not finite leaves Q(0) undefined
    (an estimate with no noise of its own): (NaN, NaN, NOT_ESTIMABLE).  Fewer than two hosts:
    (NaN, NaN, "")."""
    eff = np.asarray(effects, dtype=float)
    var = np.asarray(variances, dtype=float)
    k = eff.size
    if k < 2:
        return math.nan, math.nan, ""
    if not (np.isfinite(var).all() and (var > 0).all()):
        return math.nan, math.nan, NOT_ESTIMABLE

    def q(t: float) -> float:
        w = 1.0 / (var + t)
        return float((w * (eff - (w * eff).sum() / w.sum()) ** 2).sum())

    q0 = q(0.0)
    if not math.isfinite(q0):
        return math.nan, math.nan, NOT_ESTIMABLE
    if q0 <= k - 1:
        return 0.0, 0.0, ""
    high = 2 * float(((eff - eff.mean()) ** 2).sum()) / (k - 1)  # Q(high) <= (k - 1) / 2
    tau2 = optimize.brentq(lambda t: q(t) - (k - 1), 0.0, high, xtol=high * 1e-13, rtol=1e-13)
    return float(tau2), (q0 - (k - 1)) / q0, ""


def combine(effects, variances, level: float = rules.ALPHA) -> Combined:
    """The common log ratio of per-host estimates (their mean) with its 1 - level Student's t
    interval on k - 1 degrees of freedom and the dual p-value; tau^2 and I^2 from the per-host
    variances (`heterogeneity`: NaN, with a note, where a host's variance is 0 or not finite).  A
    host without a finite estimate is left out.  One host: its own estimate, no interval."""
    eff = np.asarray(effects, dtype=float)
    var = np.asarray(variances, dtype=float)
    ok = np.isfinite(eff)
    eff, var = eff[ok], var[ok]
    k = eff.size
    if k == 0:
        return Combined(0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    est = float(eff.mean())
    if k == 1:
        return Combined(1, est, math.nan, math.nan, math.nan, math.nan, math.nan)
    se = float(eff.std(ddof=1) / math.sqrt(k))
    crit = float(sps.t.isf(level / 2, k - 1))
    p = float(2 * sps.t.sf(abs(est) / se, k - 1)) if se > 0 else (0.0 if est else 1.0)
    tau2, i2, note = heterogeneity(eff, var)
    return Combined(k, est, est - crit * se, est + crit * se, p, tau2, i2, note)


# --- a family of comparisons across hosts ----------------------------------------------------------
KEY = ["workload", "n", "threads_requested", "arm", "shared_params", "go_variant", "rust_variant",
       "go_params", "rust_params"]


def key_columns(frame: pd.DataFrame) -> list[str]:
    """The key of a comparison across hosts: KEY, and the named factor's column when the frame
    (or a table made from it) has one (`attrs["factor"]`)."""
    factor = frame.attrs.get("factor")
    return [*KEY, factor] if factor and factor in frame.columns else list(KEY)


def _with_factor(table: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    table.attrs["factor"] = df.attrs.get("factor")
    return table


def per_host(df: pd.DataFrame, metric: str = "elapsed_s", margin: float = rules.MARGIN) -> pd.DataFrame:
    """The Go-vs-Rust table of each host on its own samples (its own family, its own rule), with
    `host` and `host_label` columns."""
    out = []
    factor = key_columns(df)[len(KEY):]
    for values, g in df.groupby(["host", *factor], sort=True):
        host = values[0]
        g = g.copy()
        g.attrs = dict(df.attrs)
        t = compare(g, metric, margin=margin)
        if not t.empty:
            out.append(t.assign(host=host, host_label=g["host_label"].iloc[0] if "host_label" in g else host,
                                **dict(zip(factor, values[1:]))))
    return _with_factor(pd.concat(out, ignore_index=True) if out else pd.DataFrame(), df)


def host_log_ratios(df: pd.DataFrame, metric: str = "elapsed_s") -> pd.DataFrame:
    """Per host and Go-vs-Rust comparison: the mean of the per-block log ratios log(Go / Rust) and
    its variance var(d) / n (paired blocks only: a comparison without two pairs on a host is left
    out there)."""
    rows = []
    key_cols = key_columns(df)
    factor = key_cols[len(KEY):]
    for values, g in df.groupby(["host", *factor], sort=True):
        host = values[0]
        cv = CellValues(g, metric)
        for a, b in comparisons(cv.refs(), "go_vs_rust"):
            ac, bc = cv.cells[a][0], cv.cells[b][0]
            shared = np.intersect1d(ac, bc)
            if shared.size < 2:
                continue
            va, vb = cv.per_block(a).loc[shared].to_numpy(), cv.per_block(b).loc[shared].to_numpy()
            ok = (va > 0) & (vb > 0)
            d = np.log(va[ok]) - np.log(vb[ok])
            if d.size < 2:
                continue
            key = {k: v for k, v in go_vs_rust_row(a, b).items() if k in KEY}
            rows.append({**key, **dict(zip(factor, values[1:])), "host": host, "pairs": int(d.size),
                         "log_ratio": float(d.mean()), "variance": float(d.var(ddof=1) / d.size)})
    return _with_factor(pd.DataFrame(rows, columns=[*key_cols, "host", "pairs", "log_ratio", "variance"]), df)


def agrees(host_kind: str, host_within: bool, kind: str, within: bool) -> bool:
    """Whether a host's own verdict says what the combined one says: the same verdict, or both
    within the margin (an equivalence and a difference called but smaller than the margin say
    alike that the two differ by less than it)."""
    if host_kind == kind:
        return True
    return (host_kind == "equivalent" and kind in ("a", "b") and within) or \
        (kind == "equivalent" and host_kind in ("a", "b") and host_within)


def across_hosts(df: pd.DataFrame, metric: str = "elapsed_s", margin: float = rules.MARGIN,
                 alpha: float = rules.ALPHA) -> pd.DataFrame:
    """One row per Go-vs-Rust comparison measured on at least one host: the combined ratio
    (`combine`) with its interval, tau and I^2, the verdict, and on how many of the hosts that
    measured it the host's own verdict agrees (`agrees`: "holds on k of m").  The comparisons form one
    family: Benjamini-Hochberg over their combined p-values, every interval shown at the level
    max(R, 1) alpha / m, the verdict read off that interval (as in the one-host tables)."""
    logs = host_log_ratios(df, metric)
    own = per_host(df, metric, margin)
    key_cols = key_columns(df)
    cols = [*key_cols, "metric", "hosts", "host_list", "ratio", "ratio_ci_low", "ratio_ci_high", "ci_level", "p_value",
            "p_adjusted", "tau", "i2", "verdict_kind", "within_margin", "verdict", "holds_on", "holds_on_text",
            "host_verdicts", "host_verdict_texts", "note"]
    if logs.empty:
        return _with_factor(pd.DataFrame(columns=cols), df)
    rows, combos = [], []
    for key, g in logs.groupby(key_cols, sort=True, dropna=False):
        c = combine(g["log_ratio"], g["variance"])
        combos.append(c)
        rows.append({**dict(zip(key_cols, key)), "metric": metric, "hosts": c.hosts, "host_list": ",".join(g["host"])})
    est = np.array([c.estimate for c in combos])
    k = np.array([c.hosts for c in combos])
    # each combination's standard error, read back off its interval at combine's level
    se = np.array([(c.high - c.low) / (2 * sps.t.isf(rules.ALPHA / 2, c.hosts - 1)) if c.hosts > 1 else np.nan
                   for c in combos])
    p = np.array([c.p_value for c in combos])

    def interval_at(level):
        crit = np.where(k > 1, sps.t.isf(np.asarray(level) / 2, np.maximum(k - 1, 1)), np.nan)
        return est - crit * se, est + crit * se

    fam = multiplicity.decide(np.where(np.isnan(p), 1.0, p), interval_at, alpha, margin)
    indexed = own.set_index([*key_cols, "host"]) if not own.empty else pd.DataFrame()
    for i, (r, c) in enumerate(zip(rows, combos)):
        kind = str(fam.kind[i]) if c.hosts > 1 else "inconclusive"
        within = bool(fam.within_margin[i]) if c.hosts > 1 else False
        theirs, texts = [], []
        for h in r["host_list"].split(","):
            idx = tuple(r[k_] for k_ in key_cols) + (h,)
            row = indexed.loc[idx] if len(indexed) and idx in indexed.index else None
            theirs.append((str(row["verdict_kind"]), bool(row["within_margin"])) if row is not None
                          else ("not measured", False))
            texts.append(str(row["verdict"]) if row is not None else "not measured")
        holds = sum(agrees(v, w, kind, within) for v, w in theirs)
        r.update({"ratio": math.exp(c.estimate), "ratio_ci_low": math.exp(fam.low[i]) if c.hosts > 1 else math.nan,
                  "ratio_ci_high": math.exp(fam.high[i]) if c.hosts > 1 else math.nan,
                  "ci_level": 1 - float(np.ravel(fam.level)[0]), "p_value": c.p_value,
                  "p_adjusted": float(fam.p_adjusted[i]) if c.hosts > 1 else math.nan,
                  "tau": c.tau, "i2": c.i2, "verdict_kind": kind, "within_margin": within,
                  "verdict": rules.verdict_text(kind, within, "Go", "Rust", metric, margin),
                  "holds_on": holds, "holds_on_text": f"{holds} of {c.hosts}",
                  "host_verdicts": ",".join(v for v, _ in theirs), "host_verdict_texts": "; ".join(texts),
                  "note": c.note})
    return _with_factor(pd.DataFrame(rows, columns=cols), df)
