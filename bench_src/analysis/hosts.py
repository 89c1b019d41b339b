"""Results of several hosts in one analysis.

A **host** is a machine fingerprint (`store.hosts`): two results directories taken on machines
with the same fingerprint are blocks of one host, not two independent machines.  Pairs form only
within a block, so only within a host.

Per comparison (`combine`), the per-host log ratios (the mean of the per-block log ratios d, and
its variance var(d) / n) are combined as a random-effects model: the hosts' true log ratios vary
around a common mean with variance tau^2.  The combined log ratio is the mean of the hosts'
estimates (equal weights), and its interval the wider of two (Wiksten, Ruecker and Schwarzer 2016;
Jackson, Law, Ruecker and Schwarzer 2017, Stat Med 36:3923):

- the t interval on the hosts' spread: Student's t with k - 1 degrees of freedom on the unweighted
  variance of the hosts' means, s^2 / k.  Each host's estimate is one draw from the population of
  hosts, its own noise included, so this interval is exact for normal host estimates of equal
  precision whatever tau is.  It is not Hartung and Knapp's (Hartung-Knapp-Sidik-Jonkman, `hksj`),
  which weights the hosts by 1 / (v_i + tau^2) and scales its variance by
  q = sum w_i (y_i - mu_w)^2 / (k - 1); the two coincide only where the hosts' own variances are
  equal.  But the spread goes to 0 where the hosts' means happen to coincide (on a page grid, or
  values that never vary), and with it the interval: a zero-width interval and p = 0 from hosts
  each of which called nothing.
- the classic random-effects interval: the normal on the model's own variance of that mean,
  sum (v_i + tau^2) / k^2 (each host's variance v_i, read off its n pairs, plus tau^2), which
  never falls below what the hosts' own noise allows.

The wider of the two covers at least as often as the t interval alone; it widens only the draws
whose hosts agree more closely than their noise (where that interval's misses lie), so its median
width is the t interval's.  Measured against Hartung and Knapp's (weighted) interval on the same
draws (`simulate.hosts_coverage`, docs/statistics.md): the weighted one came nearer 95% on average
where the hosts are alike, but fell to 78% where their precisions differ tenfold (weights read off
10 pairs are noisy), while this one stayed at 94.9% or above; an interval too narrow is the error
that makes false calls, so this one is taken.  The t interval's variance floored at the model's,
with t kept on k - 1 degrees of freedom (as the ad hoc q* = max(1, q) of Knapp and Hartung 2003;
Roever, Knapp and Friede 2015), was measured too and not taken: it covered 99.5-100% at 2 and 3 hosts without
heterogeneity, its median interval 1.3 to 1.6 times as wide.  Assumption: the hosts are a sample
of the machines the claim is about.

A metric on a grid (memory in pages, a clock's tick) carries a rounding error in each host's mean
that no spread shows (every host may round the same way): the interval at level L is widened, as
each host's own is (paired.rounding, read off the paired values with the metric's resolution), by
the mean of the hosts' rounding bounds at L.  Where every host's values round alike (one true
value on one grid, the case that matters) that is the bound of the combined mean's error; for
errors independent across hosts it is wider than needed.  The p-value is the smallest level whose
interval excludes 0 (paired.smallest_level), so the verdict read off the interval and the p-value
agree.

tau^2 (Paule and Mandel's estimate) and I^2 (the share of the spread between hosts that is not
sampling noise) are read off one statistic, Cochran's generalised Q (`heterogeneity`), so that
I^2 > 0 exactly where tau^2 > 0; Cochran's Q itself is given beside them with its k - 1 degrees of
freedom, since all three rest on k hosts (with 2, I^2 >= 50% comes up by chance in 16% of sets
without heterogeneity), and with them the test of homogeneity, Welch's F test of equal host means
(its p-value near its level where Q's chi^2 is not: the hosts' variances are read off few pairs);
where a host's own variance is 0 (its per-block log ratios never varied) or not finite, neither can
be estimated, and both are NaN with a note saying why (the model's variance then takes tau^2 as 0,
and a host's variance that is not finite adds nothing).
Measured (`simulate.hosts_coverage`, `tests/test_simulations.py`; 2, 3 and 5 hosts, with and
without heterogeneity, and on the page grid): docs/statistics.md has the table; the family across
hosts that each ran the sequential rule on their own: `simulate.hosts_sequential_study`.  With 2 hosts
the t interval is wide (t on one degree of freedom) unless the two agree closely: two machines say
little about a third.

Where a machine not measured would be, and how far machines differ (`prediction_half_width`,
`tau2_interval`): the interval of the mean says where the hosts' average is, tau^2 a point estimate
of their spread; neither says where a new machine's ratio would fall.  The prediction interval of a
new host's true log ratio is, as the interval of the mean, the wider of a t interval on the hosts'
spread, t(k - 1) x s x sqrt(1 + 1/k) (each host's estimate one draw of a machine's true value plus
its own noise: exact for a new host's *estimate* of equal precision, conservative for its true
value), and the normal on the model's tau^2 + sum (v_i + tau^2) / k^2, which keeps it open where
the hosts' means coincide; shown from 3 hosts.  tau^2's interval is the Q-profile (Viechtbauer
2007, Stat Med 26:37) with Q's distribution read by parametric bootstrap, each host's variance
redrawn as v_i chi^2(n_i - 1) / (n_i - 1), since Q's chi^2 takes the variances as known and is too
eager with 6-30 pairs a host.  Measured (`simulate.hosts_prediction_report`, 216 cases: normal,
heavy-tailed and bimodal samples, 2, 3 and 5 hosts of 6, 10 and 30 pairs, noise alike or threefold
apart, tau 0 to 3 host standard errors, 4,000 sets each; docs/statistics.md): the prediction
interval covered a new host's true log ratio in 94.5-100% of sets from 3 hosts (near 95% where the
hosts clearly differ, 99.4-100% where they agree), the bootstrap test of tau^2 accepted the true
tau^2 in 93.0-98.8% (in the band, in its lower half where tau > 0); Higgins, Thompson and
Spiegelhalter's prediction interval (2009, J R Stat Soc A 172:137: t on k - 2 degrees of freedom on
tau^2 + SE^2) fell to 90.0% at 5 hosts and the chi^2 Q-profile to 87.8% at 6 pairs a host, and
neither was taken.  With few hosts both intervals are wide: that is what a few machines say about
the others.

A host enters a comparison's combination only with rules.MIN_PAIRS pairs of it or more, the floor
of every comparison (`host_log_ratios`' `left_out`): the rule's error rate is measured from there,
and a host's variance read off 2 to 5 pairs is too noisy to weigh it by; a comparison left with
fewer than two such hosts is not tested across hosts.  `host_values` gives each host's value as the
combination reads it (its mean log ratio, the normal on its own variance plus its rounding), which
the forest plot draws.

Directories that differ by a named factor (store.hosts.load_hosts(..., factor="commit" or
"plan")) carry it in a column of that name, and `df.attrs["factor"]` names it: it joins the key of
every comparison, so each of its values has its own per-host verdicts and its own combination
(pairs stay within a block of one directory either way).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import optimize, stats as sps
from statsmodels.stats.oneway import anova_generic

from . import multiplicity, paired, rules
from .compare import NOT_TESTED, CellValues, cell_name, compare, go_vs_rust_row, too_few_pairs
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
    se_spread: float = math.nan  # the t interval's standard error: the hosts' unweighted spread, s / sqrt(k)
    se_model: float = math.nan  # the model's: sqrt(sum (v_i + tau^2)) / k
    grid: paired.Rounding = paired.NO_ROUNDING  # each host's rounding on the metric's grid
    q: float = math.nan  # Cochran's Q (NaN as tau2), on hosts - 1 degrees of freedom
    welch_f: float = math.nan  # Welch's F test of equal host means (`heterogeneity`), NaN as tau2 or without pairs
    welch_df2: float = math.nan  # its denominator degrees of freedom (the numerator's: hosts - 1)
    welch_p: float = math.nan  # its p-value: the test of homogeneity shown
    # the 95% prediction interval of a new host's true log ratio (`prediction_half_width`, plus the
    # hosts' mean rounding bound), NaN below PREDICTION_MIN_HOSTS hosts (`predict_note` says why)
    predict_low: float = math.nan
    predict_high: float = math.nan
    # the 95% interval of tau^2 (`tau2_interval`), NaN as tau2 or without pairs
    tau2_low: float = math.nan
    tau2_high: float = math.nan
    predict_note: str = ""  # why there is no prediction interval ("" where there is one, or one host)

    @property
    def q_df(self) -> int:
        """Cochran's Q's degrees of freedom: hosts - 1 (0 for one host or none)."""
        return max(self.hosts - 1, 0)

    @property
    def tau(self) -> float:
        return math.sqrt(self.tau2) if self.tau2 >= 0 else math.nan

    @property
    def tau_low(self) -> float:
        """The lower end of tau's 95% interval (the square root of tau2_low's; NaN as it)."""
        return math.sqrt(self.tau2_low) if self.tau2_low >= 0 else math.nan

    @property
    def tau_high(self) -> float:
        return math.sqrt(self.tau2_high) if self.tau2_high >= 0 else math.nan

    def half_width(self, level) -> np.ndarray:
        """The half-width of the 1 - level interval: the wider of Student's t on hosts - 1 degrees
        of freedom times `se_spread` and the normal times `se_model`, plus the mean of the hosts'
        rounding bounds at that level (NaN for one host)."""
        level = np.asarray(level, dtype=float)
        if self.hosts < 2:
            return np.full(level.shape, np.nan)
        with np.errstate(invalid="ignore"):
            spread = paired.t_isf(level / 2, self.hosts - 1) * self.se_spread if self.se_spread > 0 else 0.0 * level
            model = paired.norm_isf(level / 2) * self.se_model if self.se_model > 0 else 0.0 * level
        rounding = self.grid.half_width(level[..., None]).mean(axis=-1) if self.grid.any else 0.0
        return np.maximum(spread, model) + rounding

    def interval(self, level) -> tuple[np.ndarray, np.ndarray]:
        half = self.half_width(level)
        return self.estimate - half, self.estimate + half


NOT_ESTIMABLE = ("tau² and I² not estimable: a host's own variance is 0 (its per-block log ratios never varied) "
                 "or not finite, so the spread between hosts cannot be split into sampling noise and heterogeneity")


class Heterogeneity(NamedTuple):
    """What `heterogeneity` reads off the hosts: tau^2, I^2 and Cochran's Q on `df` = k - 1
    degrees of freedom; Welch's F test of equal host means (`welch_f` on k - 1 and `welch_df2`
    degrees of freedom, its p-value `welch_p`), the test of homogeneity; and why they are NaN
    where they are."""

    tau2: float
    i2: float
    q: float
    df: int
    welch_f: float = math.nan
    welch_df2: float = math.nan
    welch_p: float = math.nan
    note: str = ""


def _welch(effects: np.ndarray, variances: np.ndarray, pairs) -> tuple[float, float, float]:
    """Welch's heteroscedastic one-way ANOVA of the hosts' per-block log ratios, from each host's
    mean, variance of that mean and pairs (statsmodels' anova_generic on the per-block variance
    v_i n_i): (F, its denominator degrees of freedom, p).  NaN without pairs, or where a host has
    fewer than 2."""
    if pairs is None:
        return math.nan, math.nan, math.nan
    n = np.asarray(pairs, dtype=float)
    if n.shape != effects.shape or not (n >= 2).all():
        return math.nan, math.nan, math.nan
    res = anova_generic(effects, variances * n, n, use_var="unequal", welch_correction=True)
    return float(res.statistic), float(res.df[1]), float(res.pvalue)


def heterogeneity(effects, variances, pairs=None) -> Heterogeneity:
    """tau^2 and I^2 of per-host estimates with their own variances, both read off Cochran's
    generalised Q(t) = sum w_i (y_i - ybar_w)^2, w_i = 1 / (v_i + t): tau^2 is Paule and Mandel's
    estimate, the t >= 0 at which Q(t) = k - 1 (0 where Q(0) <= k - 1 already), found by bracketing
    (Q falls with t, and Q(t) <= sum (y_i - ybar)^2 / t); I^2 = (Q(0) - (k - 1)) / Q(0), clipped at
    0.  So I^2 > 0 exactly where tau^2 > 0.  Beside them Cochran's Q = Q(0) on k - 1 degrees of
    freedom.  All three are estimated from k hosts: with 2, one degree of freedom, I^2 >= 50%
    (Q >= 2) comes up by chance in 16% of sets without any heterogeneity (`i2_by_chance`), so I^2
    is read with the test of homogeneity's p-value.

    The test of homogeneity (no tau^2) is Welch's F test of equal means with unequal variances
    (Welch 1951, Biometrika 38:330), given each host's `pairs`: its numerator is Q / (k - 1), its
    denominator and degrees of freedom correct for variances read off each host's pairs.  Q's own
    chi^2 on k - 1 degrees of freedom takes those variances as known, and its tail is heavier with
    few pairs: without heterogeneity its p-value fell below 5% in 7.6%, 8.7% and 10.2% of sets of
    2, 3 and 5 hosts of 10 pairs and up to 15% at 6, where Welch's fell below 5% in 4.5-6.0% of
    sets (6 to 30 pairs, the hosts' noise alike or threefold apart;
    `simulate.hosts_heterogeneity_null`, docs/statistics.md).  Assumption: each host's per-block
    log ratios are near normal around the host's mean (on heavy-tailed samples Welch's rate was
    3.1-4.8%, on bimodal ones 4.3-6.1%); a large p with 2 or 3 hosts is not evidence of no
    heterogeneity.  Without `pairs` (or with a host of fewer than 2) the test is NaN.

    A variance of 0 or not finite leaves Q(0) undefined (an estimate with no noise of its own): NaN
    with NOT_ESTIMABLE.  Fewer than two hosts: NaN, note ""."""
    eff = np.asarray(effects, dtype=float)
    var = np.asarray(variances, dtype=float)
    k = eff.size
    if k < 2:
        return Heterogeneity(math.nan, math.nan, math.nan, max(k - 1, 0))
    if not (np.isfinite(var).all() and (var > 0).all()):
        return Heterogeneity(math.nan, math.nan, math.nan, k - 1, note=NOT_ESTIMABLE)

    def q(t: float) -> float:
        w = 1.0 / (var + t)
        return float((w * (eff - (w * eff).sum() / w.sum()) ** 2).sum())

    q0 = q(0.0)
    if not math.isfinite(q0):
        return Heterogeneity(math.nan, math.nan, math.nan, k - 1, note=NOT_ESTIMABLE)
    welch = _welch(eff, var, pairs)
    if q0 <= k - 1:
        return Heterogeneity(0.0, 0.0, q0, k - 1, *welch)
    high = 2 * float(((eff - eff.mean()) ** 2).sum()) / (k - 1)  # Q(high) <= (k - 1) / 2
    tau2 = optimize.brentq(lambda t: q(t) - (k - 1), 0.0, high, xtol=high * 1e-13, rtol=1e-13)
    return Heterogeneity(float(tau2), (q0 - (k - 1)) / q0, q0, k - 1, *welch)


def i2_by_chance(hosts: int, share: float = 0.5) -> float:
    """How often I^2 reaches `share` among `hosts` hosts without any heterogeneity: I^2 >= s exactly
    where Q >= (k - 1) / (1 - s), and Q is chi^2 on k - 1 degrees of freedom there (each host's
    variance taken as known): 16% at 2 hosts, 14% at 3, 9% at 5 for s = 50%.  NaN below 2 hosts."""
    if hosts < 2:
        return math.nan
    return float(sps.chi2.sf((hosts - 1) / (1 - share), hosts - 1))


def combine(effects, variances, level: float = rules.ALPHA, rounding: paired.Rounding | None = None,
            pairs=None) -> Combined:
    """The common log ratio of per-host estimates (their mean) with its 1 - level interval, the
    wider of the t interval on the hosts' spread (t on k - 1 degrees of freedom, s^2 / k of the
    unweighted means) and the classic
    random-effects one (normal, the model's variance sum (v_i + tau^2) / k^2), and the dual p-value
    (the smallest level whose interval excludes 0); see the module's docstring.  `rounding`: each
    host's rounding on the metric's grid (paired.Rounding with one entry per host), whose mean bound
    widens the interval.  tau^2 and I^2 from the per-host variances (`heterogeneity`: NaN, with a
    note, where a host's variance is 0 or not finite; the model's variance then takes tau^2 as 0,
    and a variance that is not finite adds nothing to it); Welch's test of homogeneity where each
    host's `pairs` are given, and with them tau^2's 95% interval (`tau2_interval`).  The 95%
    prediction interval of a new host's true log ratio (`prediction_half_width`, widened by the
    hosts' mean rounding bound as the interval of the mean is) from PREDICTION_MIN_HOSTS hosts on
    (`predict_note` says why not below).  A host without a finite estimate is left out.  One host:
    its own estimate, no interval."""
    eff = np.asarray(effects, dtype=float)
    var = np.asarray(variances, dtype=float)
    ok = np.isfinite(eff)
    eff, var = eff[ok], var[ok]
    n = None if pairs is None else np.broadcast_to(np.asarray(pairs, dtype=float), ok.shape)[ok]
    k = eff.size
    if k == 0:
        return Combined(0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    est = float(eff.mean())
    if k == 1:
        return Combined(1, est, math.nan, math.nan, math.nan, math.nan, math.nan)
    grid = paired.NO_ROUNDING
    if rounding is not None and rounding.any:
        u, v, fixed = (np.broadcast_to(np.asarray(x, dtype=float), ok.shape)[ok]
                       for x in (rounding.u, rounding.v, rounding.fixed))
        grid = paired.Rounding(u, v, fixed)
    het = heterogeneity(eff, var, n)
    tau2 = het.tau2
    spread = float(eff.std(ddof=1) / math.sqrt(k))
    model = math.sqrt(float((np.where(np.isfinite(var), var, 0.0) + (tau2 if math.isfinite(tau2) else 0.0)).sum())) / k
    c = Combined(k, est, math.nan, math.nan, math.nan, tau2, het.i2, het.note, spread, model, grid, het.q,
                 het.welch_f, het.welch_df2, het.welch_p)
    low, high = c.interval(level)
    predict = float(prediction_half_width(eff, var, tau2))
    if math.isfinite(predict) and grid.any:
        predict += float(grid.half_width(np.array(1 - rules.CONFIDENCE)[..., None]).mean(axis=-1))
    tau2_low, tau2_high = tau2_interval(eff, var, n) if n is not None else (math.nan, math.nan)
    c = replace(c, predict_low=est - predict, predict_high=est + predict, tau2_low=tau2_low, tau2_high=tau2_high,
                predict_note=TOO_FEW_TO_PREDICT.format(hosts=k, s="s") if k < PREDICTION_MIN_HOSTS else "")
    if grid.any:
        p = float(paired.smallest_level(np.array(abs(est)), c.half_width))
    else:  # outside both intervals: the larger of their p-values
        by_t = 2 * sps.t.sf(abs(est) / spread, k - 1) if spread > 0 else float(est == 0)
        by_z = 2 * sps.norm.sf(abs(est) / model) if model > 0 else float(est == 0)
        p = float(max(by_t, by_z))
    return replace(c, low=float(low), high=float(high), p_value=p)


def hksj(effects, variances, tau2: float, level: float = rules.ALPHA) -> tuple[float, float]:
    """Hartung and Knapp's interval (Hartung-Knapp-Sidik-Jonkman; Hartung and Knapp 2001, Sidik
    and Jonkman 2002), measured beside `combine`'s and not taken (the module's docstring says why):
    the weighted mean mu = sum w_i y_i / sum w_i with random-effects weights w_i = 1 / (v_i + tau^2),
    and its variance q / sum w_i with q = sum w_i (y_i - mu)^2 / (k - 1), read with Student's t on
    k - 1 degrees of freedom.  Returns (mu, the half-width at `level`); NaN for fewer than two
    hosts or a weight that is not finite."""
    eff = np.asarray(effects, dtype=float)
    w = 1.0 / (np.asarray(variances, dtype=float) + tau2)
    k = eff.size
    if k < 2 or not np.isfinite(w).all():
        return math.nan, math.nan
    mu = float((w * eff).sum() / w.sum())
    q = float((w * (eff - mu) ** 2).sum()) / (k - 1)
    return mu, float(sps.t.isf(level / 2, k - 1) * math.sqrt(q / w.sum()))


# --- where a machine not measured would be, and how far machines differ ---------------------------
PREDICTION_MIN_HOSTS = 3  # a prediction interval rests on the hosts' spread: with 2 it is one difference
TOO_FEW_TO_PREDICT = ("no prediction interval: {hosts} host{s} combined, and a prediction needs "
                      f"{PREDICTION_MIN_HOSTS} or more (with 2 the spread between machines is one difference, read "
                      "with t on 1 degree of freedom)")
TAU2_DRAWS = 10_000  # the parametric bootstrap's draws per value of tau^2 tried (`tau2_interval`): the 2.5% quantile of
# chi^2 on 4 df read off them within 3.4% (one standard error), and an end of the interval about as closely


def prediction_half_width(effects, variances, tau2, level=1 - rules.CONFIDENCE,
                          min_hosts: int = PREDICTION_MIN_HOSTS) -> np.ndarray:
    """The half-width, around the hosts' plain mean, of the 1 - level prediction interval of a new
    host's true log ratio (a machine of the same population, not measured), per row of `effects`
    (hosts on the last axis; `variances` each host's variance of its mean, `tau2` the row's tau^2).
    The wider of two, as `combine`'s interval of the mean:

    - the t interval on the hosts' spread: t(k - 1) x s x sqrt(1 + 1/k), s the sample standard
      deviation of the hosts' estimates.  Each host's estimate is its true log ratio plus its own
      noise, so s^2 estimates tau^2 plus the hosts' noise, and the interval predicts a new host's
      *estimate*; for its true value (no noise of its own) it is conservative;
    - the normal on the model's variance of a new host's distance from the mean: tau^2 plus
      sum (v_i + tau^2) / k^2, which keeps the interval open where the hosts' estimates coincide (a
      page grid).

    NaN below `min_hosts` hosts.  A variance that is not finite adds nothing, a tau^2 that is not
    finite counts as 0 (as `combine`'s model does).  Measured (`simulate.hosts_prediction_report`):
    docs/statistics.md."""
    y = np.asarray(effects, dtype=float)
    v = np.asarray(variances, dtype=float)
    t2 = np.asarray(tau2, dtype=float)
    t2 = np.where(np.isfinite(t2), t2, 0.0)
    k = y.shape[-1]
    if k < max(min_hosts, 2):
        return np.full(y.shape[:-1], np.nan)
    spread = paired.t_isf(level / 2, k - 1) * y.std(axis=-1, ddof=1) * math.sqrt(1 + 1 / k)
    own = np.where(np.isfinite(v), v, 0.0)
    model = paired.norm_isf(level / 2) * np.sqrt(t2 + (own + t2[..., None]).sum(axis=-1) / k ** 2)
    return np.maximum(spread, model)


def tau2_q(effects, variances, tau2) -> np.ndarray:
    """Cochran's generalised Q(t) = sum w_i (y_i - ybar_w)^2, w_i = 1 / (v_i + t), per row (hosts on
    the last axis; `tau2` t broadcast against the rows)."""
    y = np.asarray(effects, dtype=float)
    w = 1.0 / (np.asarray(variances, dtype=float) + np.asarray(tau2, dtype=float)[..., None])
    mean = (w * y).sum(axis=-1, keepdims=True) / w.sum(axis=-1, keepdims=True)
    return (w * (y - mean) ** 2).sum(axis=-1)


def tau2_draws(rng: np.random.Generator, pairs, draws: int = TAU2_DRAWS, shape=()) -> tuple[np.ndarray, np.ndarray]:
    """The parametric bootstrap's standard draws for `tau2_accepts`, of shape (*shape, draws, k): a
    standard normal per host (its estimate) and chi^2 on n_i - 1 degrees of freedom over n_i - 1 (its
    variance read off n_i pairs, as a share of the true one)."""
    n = np.asarray(pairs, dtype=float)
    size = (*shape, draws, n.shape[-1])
    return rng.standard_normal(size), rng.chisquare(n - 1, size) / (n - 1)


def tau2_accepts(effects, variances, tau2, z, chi, level=1 - rules.CONFIDENCE) -> np.ndarray:
    """The test of "the hosts' true log ratios vary with variance `tau2`" that `tau2_interval`
    inverts, per row: Q(tau2) of the hosts (`tau2_q`) against its distribution under that tau^2 with
    each host's variance itself read off its pairs, by parametric bootstrap: each draw's estimates
    sqrt(tau2 + v_i) z and variances v_i chi (`tau2_draws`: z normal, chi a chi^2 on n_i - 1
    degrees of freedom over n_i - 1), Q of the draw on the draw's own variances.  Accepted where
    Q lies within the draws' level/2 and 1 - level/2 quantiles (at tau2 = 0, below the upper one:
    no tau^2 is below 0).  Rows on the leading axes of `effects` (hosts last), `z` and `chi` of
    shape (*rows, draws, hosts)."""
    y = np.asarray(effects, dtype=float)
    v = np.asarray(variances, dtype=float)
    t = np.broadcast_to(np.asarray(tau2, dtype=float), y.shape[:-1])
    star = tau2_q(np.sqrt(t[..., None, None] + v[..., None, :]) * z, v[..., None, :] * chi, t[..., None])
    low, high = np.quantile(star, [level / 2, 1 - level / 2], axis=-1)
    q = tau2_q(y, v, t)
    return (q <= high) & ((q >= low) | (t == 0))


def tau2_interval(effects, variances, pairs, level=1 - rules.CONFIDENCE, draws: int = TAU2_DRAWS,
                  seed: int = 0) -> tuple[float, float]:
    """The 1 - level interval of tau^2, the variance of the hosts' true log ratios: the Q-profile
    interval (Viechtbauer 2007, Stat Med 26:37) with Q's distribution read by parametric bootstrap
    instead of chi^2 on k - 1 degrees of freedom, which takes each host's variance as known (too
    eager with 6-30 pairs a host, as Q's test of homogeneity is: `heterogeneity`).  The values of
    tau^2 that `tau2_accepts` accepts, on one set of draws for every value tried (seeded by `seed`,
    so the interval is the same on every reading): its ends found by bisection where the
    acceptance changes (Q falls with tau^2).  Where even tau^2 = 0 is refused on the low side (the
    hosts agree more closely than their own noise), [0, 0], as the Q-profile's convention.  NaN
    where `heterogeneity` cannot estimate tau^2 (a variance 0 or not finite), with fewer than two
    hosts, or a host of fewer than 2 pairs.  Measured (`simulate.hosts_prediction_report`):
    docs/statistics.md."""
    y = np.asarray(effects, dtype=float)
    v = np.asarray(variances, dtype=float)
    n = np.asarray(pairs, dtype=float)
    k = y.size
    if k < 2 or n.shape != y.shape or not (n >= 2).all() or not (np.isfinite(v).all() and (v > 0).all()) \
            or not np.isfinite(y).all():
        return math.nan, math.nan
    z, chi = (x.T.copy() for x in tau2_draws(np.random.default_rng(seed), n, draws))  # hosts first: faster sums
    vchi = v[:, None] * chi

    def side(t: float, upper: bool) -> float:  # Q less the draws' quantile: > 0 where Q is above it (tau2_accepts)
        ystar, w = np.sqrt(t + v)[:, None] * z, 1.0 / (vchi + t)
        star = (w * (ystar - (w * ystar).sum(axis=0) / w.sum(axis=0)) ** 2).sum(axis=0)
        return float(tau2_q(y, v, np.asarray(t)) - np.quantile(star, 1 - level / 2 if upper else level / 2))

    def root(f, high: float) -> float:  # f(0) > 0 >= f(high): bisection to 1e-4 of the end (the draws' own error ~3%)
        low = 0.0
        for _ in range(200):
            mid = (low + high) / 2
            low, high = (mid, high) if f(mid) > 0 else (low, mid)
            if high - low <= 1e-4 * high:
                break
        return (low + high) / 2

    if side(0.0, upper=False) < 0:  # the hosts agree more closely than their noise allows at any tau^2
        return 0.0, 0.0
    big = max(float(((y - y.mean()) ** 2).sum()), float(v.max()))
    while side(big, upper=False) > 0:
        big *= 4
    upper = root(lambda t: side(t, upper=False), big)
    lower = root(lambda t: side(t, upper=True), upper) if side(0.0, upper=True) > 0 else 0.0
    return lower, upper


# --- a family of comparisons across hosts ----------------------------------------------------------
KEY = ["workload", "n", "threads_requested", "arm", "shared_params", "go_variant", "rust_variant",
       "go_params", "rust_params"]


# a host's rounding on the metric's grid, per comparison (paired.Rounding's u, v and fixed)
ROUNDING = ["rounding_u", "rounding_v", "rounding_fixed"]


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
    """Per host and Go-vs-Rust comparison: the mean of the per-block log ratios log(Go / Rust), its
    variance var(d) / n, and the rounding of the paired values on the metric's grid
    (`rounding_u`, `rounding_v`, `rounding_fixed`: paired.rounding, read as the host's own table
    reads it, off the two cells' values in the paired blocks with the metric's resolution) (paired
    blocks only: a comparison without a pair on a host has no row there); `warning`: the host's
    cells whose values are dispersed (compare.CellValues.dispersed, each named with its host).

    `left_out`: why the host is left out of the combination across hosts, '' where it is not.  A
    host's comparison with fewer than rules.MIN_PAIRS pairs is not tested on that host (its own
    table reads "not tested", compare.pair_test), and the combination holds it to the same floor
    (compare.too_few_pairs says why): the rule's error rate is measured from MIN_PAIRS pairs on, and
    a host's variance read off 2 to 5 pairs is too noisy to weigh it by."""
    rows = []
    key_cols = key_columns(df)
    factor = key_cols[len(KEY):]
    for values, g in df.groupby(["host", *factor], sort=True):
        host = values[0]
        label = g["host_label"].iloc[0] if "host_label" in g else host
        cv = CellValues(g, metric)
        for a, b in comparisons(cv.refs(), "go_vs_rust"):
            ac, bc = cv.cells[a][0], cv.cells[b][0]
            shared = np.intersect1d(ac, bc)
            va, vb = cv.per_block(a).loc[shared].to_numpy(), cv.per_block(b).loc[shared].to_numpy()
            ok = (va > 0) & (vb > 0)
            d = np.log(va[ok]) - np.log(vb[ok])
            if d.size == 0:
                continue
            enough = d.size >= rules.MIN_PAIRS
            grid = paired.Rounding(math.nan, math.nan, math.nan)
            if enough:
                a_pairs = cv.cells[a][1][np.isin(ac, shared[ok])]
                b_pairs = cv.cells[b][1][np.isin(bc, shared[ok])]
                grid = paired.rounding(paired.grid_step(a_pairs, b_pairs, rules.resolution(metric)), a_pairs, b_pairs)
            key = {k: v for k, v in go_vs_rust_row(a, b).items() if k in KEY}
            left_out = "" if enough else f"host {label} left out of the combination: {too_few_pairs(int(d.size))}"
            rows.append({**key, **dict(zip(factor, values[1:])), "host": host, "host_label": label,
                         "pairs": int(d.size), "log_ratio": float(d.mean()),
                         "variance": float(d.var(ddof=1) / d.size) if d.size > 1 else math.nan,
                         "rounding_u": float(grid.u), "rounding_v": float(grid.v), "rounding_fixed": float(grid.fixed),
                         "left_out": left_out,
                         "warning": "; ".join(cv.dispersed((a, b), lambda ref: f"{cell_name(ref)} (host {label})"))})
    return _with_factor(pd.DataFrame(rows, columns=[*key_cols, "host", "host_label", "pairs", "log_ratio", "variance",
                                                    *ROUNDING, "left_out", "warning"]), df)


def host_values(logs: pd.DataFrame, combined: pd.DataFrame) -> pd.DataFrame:
    """Each host's value as the combination reads it, for the forest plot: per row of `logs`
    (host_log_ratios) its ratio exp(mean log ratio) and the interval the combination's model gives
    it, the normal on its own variance plus its rounding bound (`combine`'s classic part, tau^2
    aside), at the level of the combined table's intervals (its `ci_level`: the family's).  A host
    left out (`left_out`) has its ratio and no interval."""
    out = logs.copy()
    confidence = pd.to_numeric(combined.get("ci_level", pd.Series(dtype=float)), errors="coerce").dropna()
    level = 1 - float(confidence.iloc[0]) if not confidence.empty else rules.ALPHA
    half = []
    for _, r in out.iterrows():
        if (isinstance(r["left_out"], str) and r["left_out"]) or not math.isfinite(r["variance"]):
            half.append(math.nan)
            continue
        grid = paired.Rounding(r["rounding_u"], r["rounding_v"], r["rounding_fixed"])
        bound = float(grid.half_width(np.array(level))) if grid.any else 0.0
        half.append(float(sps.norm.isf(level / 2)) * math.sqrt(r["variance"]) + bound)
    half = np.array(half, dtype=float)
    out["ratio"] = np.exp(out["log_ratio"].to_numpy(dtype=float))
    out["ratio_ci_low"] = np.exp(out["log_ratio"].to_numpy(dtype=float) - half)
    out["ratio_ci_high"] = np.exp(out["log_ratio"].to_numpy(dtype=float) + half)
    out["ci_level"] = 1 - level
    return _with_factor(out, logs)


def holds(kind: str, host_kind: str, host_within: bool) -> bool:
    """Whether a combined verdict of `kind` holds on a host whose own verdict is `host_kind`
    (`host_within`: a difference called but smaller than the margin), each read off its interval:
    a difference ("a", "b") holds where the host's own interval calls the same side (whether or not
    smaller than the margin); an equivalence where the host's own interval lies inside the margin
    (its verdict equivalent, or a difference smaller than the margin).  An inconclusive combined
    verdict claims nothing, so it holds nowhere: across_hosts counts the hosts' own verdicts for it
    instead (`verdict_counts`)."""
    if kind in ("a", "b"):
        return host_kind == kind
    if kind == "equivalent":
        return host_kind == "equivalent" or (host_kind in ("a", "b") and host_within)
    return False


# the order in which the hosts' own verdicts are counted
_KIND_ORDER = {kind: i for i, kind in enumerate(multiplicity.KINDS)}
# What a comparison reads where a host (or the combination across hosts) has no row for it
NOT_MEASURED = "not measured"


def verdict_counts(verdicts: list[tuple[str, str]]) -> str:
    """The hosts' own verdicts counted, as (kind, text) pairs: "2 equivalent within ±2%", "1 Go
    faster; 1 inconclusive" (differences first, then equivalences, inconclusive, not measured)."""
    counts: dict[tuple[int, str], int] = {}
    for kind, text in verdicts:
        key = (_KIND_ORDER.get(kind, len(_KIND_ORDER)), text)
        counts[key] = counts.get(key, 0) + 1
    return "; ".join(f"{n} {text}" for (_, text), n in sorted(counts.items()))


def across_hosts(df: pd.DataFrame, metric: str = "elapsed_s", margin: float = rules.MARGIN,
                 alpha: float = rules.ALPHA, logs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per Go-vs-Rust comparison measured on at least one host: the combined ratio
    (`combine`) with its interval, tau with its 95% interval (`tau_ci_low`, `tau_ci_high`:
    `tau2_interval`'s ends, square-rooted), I^2, Cochran's Q (`q`, on `q_df` = hosts - 1 degrees of
    freedom) and Welch's test of homogeneity (`welch_f` on q_df and `welch_df2` degrees of freedom,
    its p-value `welch_p`: `heterogeneity`), the ratio a machine not measured would have, its
    prediction interval (`predict_low`, `predict_high` at `predict_level` = rules.CONFIDENCE, not the
    family's level: it tests nothing; NaN below PREDICTION_MIN_HOSTS hosts, `predict_note` says
    why), the verdict, and on how many of the hosts combined
    the combined verdict holds (`holds`: "holds on k of m"; blank for an inconclusive row, which
    claims nothing), with the hosts' own verdicts counted (`host_verdict_counts`).  The
    comparisons form one family: Benjamini-Hochberg over their combined p-values, every interval
    shown at the level max(R, 1) alpha / m, the verdict read off that interval (as in the one-host
    tables).  `warning`: each host's cell of the row whose values are dispersed (host_log_ratios).

    A host with fewer than rules.MIN_PAIRS pairs of the comparison is left out of its combination
    (host_log_ratios' `left_out`, which `note` repeats; `left_out_hosts` lists them); `hosts` and
    `host_list` count and name the hosts combined.  A comparison left with fewer than two hosts is
    not tested across hosts: no ratio, no interval, inconclusive, and `note` says why (as a
    one-host table's row of too few pairs).  `logs`: host_log_ratios(df, metric), where the caller
    has it already."""
    logs = host_log_ratios(df, metric) if logs is None else logs
    own = per_host(df, metric, margin)
    key_cols = key_columns(df)
    cols = [*key_cols, "metric", "hosts", "host_list", "left_out_hosts", "ratio", "ratio_ci_low", "ratio_ci_high",
            "ci_level", "p_value", "p_adjusted", "tau", "tau_ci_low", "tau_ci_high", "i2", "q", "q_df", "welch_f",
            "welch_df2", "welch_p", "predict_low", "predict_high", "predict_level", "predict_note",
            "verdict_kind", "within_margin",
            "verdict", "holds_on", "holds_on_text", "host_verdicts", "host_verdict_texts", "host_verdict_counts", "note",
            "warning"]
    if logs.empty:
        return _with_factor(pd.DataFrame(columns=cols), df)
    rows, combos = [], []
    for key, g in logs.groupby(key_cols, sort=True, dropna=False):
        kept = g["left_out"].fillna("") == ""
        used, left = g[kept], g[~kept]
        c = combine(used["log_ratio"], used["variance"],
                    rounding=paired.Rounding(*(used[col].to_numpy() for col in ROUNDING)), pairs=used["pairs"])
        combos.append(c)
        notes = list(left["left_out"])
        if c.hosts < 2:
            notes.append(f"{NOT_TESTED} across hosts: {c.hosts} host{'' if c.hosts == 1 else 's'} with "
                         f"{rules.MIN_PAIRS} pairs or more, and a combination needs 2")
        rows.append({**dict(zip(key_cols, key)), "metric": metric, "hosts": c.hosts,
                     "host_list": ",".join(used["host"]), "left_out_hosts": ",".join(left["host"]),
                     "note": "; ".join([*notes, c.note] if c.note else notes),
                     # a host's cell whose values are dispersed: the combined row says so, as each host's row does
                     "warning": "; ".join(w for w in g["warning"] if w)})
    p = np.array([c.p_value for c in combos])

    def interval_at(level):
        level = float(np.asarray(level).ravel()[0])  # one family: one level
        bounds = [c.interval(level) for c in combos]
        return np.array([float(lo) for lo, _ in bounds]), np.array([float(hi) for _, hi in bounds])

    fam = multiplicity.decide(np.where(np.isnan(p), 1.0, p), interval_at, alpha, margin)
    indexed = own.set_index([*key_cols, "host"]) if not own.empty else pd.DataFrame()
    for i, (r, c) in enumerate(zip(rows, combos)):
        kind = str(fam.kind[i]) if c.hosts > 1 else "inconclusive"
        within = bool(fam.within_margin[i]) if c.hosts > 1 else False
        theirs, texts = [], []
        for h in (r["host_list"].split(",") if r["host_list"] else []):
            idx = tuple(r[k_] for k_ in key_cols) + (h,)
            row = indexed.loc[idx] if len(indexed) and idx in indexed.index else None
            theirs.append((str(row["verdict_kind"]), bool(row["within_margin"])) if row is not None
                          else (NOT_MEASURED, False))
            texts.append(str(row["verdict"]) if row is not None else NOT_MEASURED)
        decided = kind != "inconclusive"
        holding = sum(holds(kind, v, w) for v, w in theirs) if decided else math.nan
        tested = c.hosts > 1  # fewer than two hosts combined: not tested across hosts (`note` says why)
        r.update({"ratio": math.exp(c.estimate) if tested else math.nan,
                  "ratio_ci_low": math.exp(fam.low[i]) if tested else math.nan,
                  "ratio_ci_high": math.exp(fam.high[i]) if tested else math.nan,
                  "ci_level": 1 - float(np.ravel(fam.level)[0]), "p_value": c.p_value,
                  "p_adjusted": float(fam.p_adjusted[i]) if tested else math.nan,
                  "tau": c.tau, "tau_ci_low": c.tau_low, "tau_ci_high": c.tau_high, "i2": c.i2, "q": c.q,
                  "q_df": c.q_df,
                  "predict_low": math.exp(c.predict_low) if tested else math.nan,
                  "predict_high": math.exp(c.predict_high) if tested else math.nan,
                  "predict_level": rules.CONFIDENCE, "predict_note": c.predict_note if tested else "",
                  "welch_f": c.welch_f, "welch_df2": c.welch_df2, "welch_p": c.welch_p,
                  "verdict_kind": kind, "within_margin": within,
                  "verdict": rules.verdict_text(kind, within, "Go", "Rust", metric, margin),
                  "holds_on": holding, "holds_on_text": f"{holding} of {c.hosts}" if decided else "",
                  "host_verdicts": ",".join(v for v, _ in theirs), "host_verdict_texts": "; ".join(texts),
                  "host_verdict_counts": verdict_counts([(v, t) for (v, _), t in zip(theirs, texts)])})
    return _with_factor(pd.DataFrame(rows, columns=cols), df)


# --- the headline tables of a run on several hosts against the combination ------------------------
def _reading(kind, within, ratio) -> str:
    """A row's verdict as a comparable reading: NOT_TESTED where it has no ratio (too few pairs,
    or too few hosts combined), else its kind with "within" for a difference smaller than the margin."""
    if kind == "inconclusive" and not (isinstance(ratio, (int, float)) and math.isfinite(ratio)):
        return NOT_TESTED
    if kind in ("a", "b"):
        return f"{kind} within" if within in (True, 1) else str(kind)
    return str(kind)


def pooled_against_hosts(pooled: pd.DataFrame, combined: pd.DataFrame) -> pd.DataFrame:
    """Per row of a Go-vs-Rust table that pools every host's blocks (compare.compare on the samples
    of a run on several hosts: pairs within a host, but the hosts' pairs one sample, as if these
    hosts were the only machines; a fixed-effect reading of them), the verdict the same comparison
    gets combined across hosts (`across_hosts`: random effects, each host one draw of the machines),
    and whether the two readings differ (`differs`): a different kind, a difference called on one
    side only "within the margin", or one of them not tested (where the combination has no row the
    comparison reads "not measured" there).  Columns: KEY, `pooled_kind`, `pooled_within`,
    `pooled_verdict`, `hosts`, `hosts_kind`, `hosts_within`, `hosts_verdict`, `hosts_tested`,
    `differs`; one row per row of `pooled`, in its order."""
    keys = [k for k in KEY if k in pooled.columns]
    cols = [*keys, "pooled_kind", "pooled_within", "pooled_verdict", "hosts", "hosts_kind", "hosts_within",
            "hosts_verdict", "hosts_tested", "differs"]
    if pooled.empty or "verdict_kind" not in pooled:
        return pd.DataFrame(columns=cols)
    theirs = {} if combined.empty else {tuple(r[k] for k in keys): r for _, r in combined.iterrows()}
    rows = []
    for _, r in pooled.iterrows():
        key = tuple(r[k] for k in keys)
        c = theirs.get(key)
        mine = _reading(r["verdict_kind"], r.get("within_margin"), r.get("ratio"))
        other = _reading(c["verdict_kind"], c["within_margin"], c["ratio"]) if c is not None else NOT_MEASURED
        rows.append({**dict(zip(keys, key)), "pooled_kind": r["verdict_kind"],
                     "pooled_within": bool(r.get("within_margin") in (True, 1)), "pooled_verdict": r.get("verdict", ""),
                     "hosts": int(c["hosts"]) if c is not None else 0,
                     "hosts_kind": c["verdict_kind"] if c is not None else NOT_MEASURED,
                     "hosts_within": bool(c["within_margin"]) if c is not None else False,
                     "hosts_verdict": c["verdict"] if c is not None else NOT_MEASURED,
                     "hosts_tested": other not in (NOT_TESTED, NOT_MEASURED), "differs": mine != other})
    return pd.DataFrame(rows, columns=cols)

