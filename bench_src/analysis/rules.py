"""The statistical rules, fixed before any data, written once: every table, the check of a plan,
the sequential rule and the Method paragraph read them from here.  docs/statistics.md explains
them; `method_statistics` writes the statistics part of a Method paragraph from these constants
and from the tables actually produced.

This module imports nothing from the plan, run or store layers, so the plan's validation can
use it.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd

ALPHA = 0.05  # family-wise error rate of the "faster"/"smaller" verdicts of one table and metric
MARGIN = 0.02  # equivalence margin on the ratio: [1 - MARGIN, 1 + MARGIN]
CONFIDENCE = 0.95  # confidence of every interval reported beside an estimate
POWER = 0.8  # the power at which the minimum detectable effect is stated
MIN_PAIRS_FRACTION = 0.5  # paired when at least this share of the smaller side's samples pair up
TIME_METRICS = frozenset({"elapsed_s", "wall_s", "cpu_s", "user_s", "sys_s", "setup_s"})
# The sequential rule: the metric whose comparisons decide when a cell stops, the number of looks
# when a plan gives a budget but no number of looks, and the share of ALPHA spent at the pilot look
# (the rest is split evenly over the later looks) before the looks a family cannot use give
# their share to the others (family_spending).
SEQUENTIAL_METRIC = "elapsed_s"
DEFAULT_LOOKS = 3
PILOT_SPEND = 0.5

PAIRED_METHOD = ("exact Wilcoxon signed-rank test on the per-block differences of log values, "
                 "with the Hodges-Lehmann estimate and its exact (Tukey-Moses) interval")
UNPAIRED_METHOD = ("Mann-Whitney test on the log values, with the two-sample Hodges-Lehmann shift "
                   "and its exact interval")


def word(metric: str) -> str:
    return "faster" if metric in TIME_METRICS else "smaller"


def decide(low: float, high: float, p_adjusted: float, margin: float = MARGIN,
           alpha: float = ALPHA) -> tuple[str, bool]:
    """The verdict kind and whether a significant difference lies wholly within the margin.

    - "a" / "b": the corrected p-value is below alpha and the interval of the ratio a / b lies
      below / above 1 ("a" = the first side is faster or smaller); within_margin says that the
      interval also lies inside [1 - margin, 1 + margin] (report both readings);
    - "equivalent": not significant, and the interval lies inside [1 - margin, 1 + margin];
    - "inconclusive": anything else, including a missing interval.
    """
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (low, high)):
        return ("inconclusive", False)
    inside = (1 - margin) <= low and high <= (1 + margin)
    significant = p_adjusted is not None and not math.isnan(p_adjusted) and p_adjusted < alpha
    if significant and high < 1:
        return ("a", inside)
    if significant and low > 1:
        return ("b", inside)
    if inside:
        return ("equivalent", False)
    return ("inconclusive", False)


def verdict_text(kind: str, within_margin: bool, a: str, b: str, metric: str, margin: float = MARGIN) -> str:
    pct = f"{margin * 100:g}%"
    if kind in ("a", "b"):
        text = f"{a if kind == 'a' else b} {word(metric)}"
        return f"{text}, by less than {pct}" if within_margin else text
    if kind == "equivalent":
        return f"equivalent within ±{pct}"
    return "inconclusive"


def look_spending(looks: int, pilot_spend: float = PILOT_SPEND) -> tuple[float, ...]:
    """The share of alpha spent at each look (summing to 1)."""
    if looks <= 1:
        return (1.0,)
    rest = (1 - pilot_spend) / (looks - 1)
    return (pilot_spend, *([rest] * (looks - 1)))


def family_spending(m: int, looks: tuple[int, ...], alpha: float = ALPHA,
                    pilot_spend: float = PILOT_SPEND) -> tuple[float, ...]:
    """The share of alpha a family of m comparisons spends at each look.

    An exact paired test of n pairs cannot give a p-value below 2 / 2^n, so a look at n pairs
    whose level alpha * share / m lies at or below that can never call a difference: its share
    would be lost.  Starting from look_spending, such looks get no share and the others take
    theirs in proportion (the most hopeless look first), until every look with a share can use
    it.  The shares depend only on m and the look counts, both fixed before any data, so
    Bonferroni over the looks still bounds the family's error by alpha.  When no look can call a difference, the plain shares are
    returned (the plan's check refuses such a plan unless it only describes).
    """
    base = look_spending(len(looks), pilot_spend)
    shares = list(base)
    m = max(int(m), 1)
    while True:
        # how far each look with a share is from usable (>= 1: it cannot call a difference)
        shortfall = {k: 2.0 * 0.5 ** n * m / (alpha * w) for k, (n, w) in enumerate(zip(looks, shares)) if w > 0}
        worst = max(shortfall, key=shortfall.get, default=None)
        if worst is None or shortfall[worst] < 1:
            break
        shares[worst] = 0.0  # the most hopeless look first: its share may make the next usable
        total = sum(base[k] for k, w in enumerate(shares) if w > 0)
        if total == 0:
            return base
        shares = [base[k] / total if w > 0 else 0.0 for k, w in enumerate(shares)]
    return tuple(shares)


def look_counts(samples: int, max_samples: int, looks: int) -> tuple[int, ...]:
    """The block counts (pairs per comparison) at which the sequential rule looks: the pilot,
    evenly spaced counts, and the budget."""
    if max_samples <= samples or looks <= 1:
        return (samples,)
    counts = [samples + round(k * (max_samples - samples) / (looks - 1)) for k in range(looks)]
    return tuple(dict.fromkeys(counts))


def _grouped(per_family: Mapping[str, tuple]) -> dict[tuple, list[str]]:
    out: dict[tuple, list[str]] = {}
    for f, v in per_family.items():
        out.setdefault(v, []).append(f)
    return out


def _fmt_range(values) -> str:
    v = sorted(int(x) for x in values if pd.notna(x))
    if not v:
        return "none"
    return f"{v[0]}" if v[0] == v[-1] else f"{v[0]}-{v[-1]} (median {np.median(v):g})"


def _pct(x: float) -> str:
    return f"{x * 100:.3g}%"


def method_statistics(tables: Mapping[str, pd.DataFrame], design: Mapping | None = None,
                      margin: float = MARGIN, alpha: float = ALPHA) -> str:
    """The statistics part of a Method paragraph, from the rules above and the tables actually
    analysed: per-cell summaries (columns samples, ci_coverage), comparison tables (columns
    family, pairing, pairs, ...), per-task cost tables (column n_values).  `design` is the
    sequential design the comparisons were analysed with (sequential.Design.to_dict()), if any."""
    parts: list[str] = []
    summaries = [t for t in tables.values() if {"samples", "ci_coverage"} <= set(t.columns) and not t.empty]
    if summaries:
        s = pd.concat(summaries)
        cov = s["ci_coverage"].dropna()
        cov_text = (f"exact coverage {_pct(cov.min())}" if cov.nunique() == 1 else
                    f"exact coverage {_pct(cov.min())} to {_pct(cov.max())} depending on the number of samples"
                    ) if not cov.empty else "no interval (too few samples)"
        parts.append(
            f"Each cell's median is given with a distribution-free interval between two order statistics "
            f"chosen for a nominal {_pct(CONFIDENCE)} ({cov_text}); cells had {_fmt_range(s['samples'])} valid "
            f"samples.")
    comparisons = [(name, t) for name, t in tables.items() if "family" in t.columns and not t.empty]
    if comparisons:
        parts.append(
            f"Two cells measured in the same blocks are compared through their per-block pairs: the "
            f"{PAIRED_METHOD}; the reported ratio is exp of that estimate (the typical per-block ratio), and the "
            f"test, the estimate and the {_pct(CONFIDENCE)} interval are about this one quantity. Where pairs "
            f"are missing, the {UNPAIRED_METHOD} is used instead.")
        for name, t in comparisons:
            paired = t[t["pairing"] == "paired"]
            unpaired = t[t["pairing"] != "paired"]
            fam = t["family_title"].iloc[0] if "family_title" in t.columns else t["family"].iloc[0]
            metric = t["metric"].iloc[0] if "metric" in t.columns else "the metric"
            tested = t["p_value"].notna().sum() if "p_value" in t.columns else 0
            text = (f"{fam} ({metric}): {len(t)} comparisons, {len(paired)} paired "
                    f"({_fmt_range(paired['pairs'])} pairs each)")
            if len(unpaired):
                reasons = sorted(set(unpaired["warning"].dropna()) - {""}) if "warning" in t.columns else []
                text += f", {len(unpaired)} unpaired" + (f" ({'; '.join(reasons)})" if reasons else "")
            if "p_holm" in t.columns:
                text += (f"; Holm correction over the {int(tested)} tested comparisons of this table, "
                         f"alpha {alpha:g} family-wise")
            if "verdict_kind" in t.columns:
                kinds = t["verdict_kind"].value_counts()
                inside = int(t["within_margin"].sum()) if "within_margin" in t.columns else 0
                text += (f"; verdicts: {int(kinds.get('a', 0) + kinds.get('b', 0))} differences "
                         f"({inside} of them smaller than ±{margin * 100:g}%), {int(kinds.get('equivalent', 0))} "
                         f"equivalent, {int(kinds.get('inconclusive', 0))} inconclusive")
            if "mde" in t.columns and t["mde"].notna().any():
                finite = t["mde"][np.isfinite(t["mde"])]
                text += (f"; minimum detectable difference at {_pct(POWER)} power "
                         + (f"{_pct(finite.min())} to {_pct(finite.max())}" if not finite.empty else "none")
                         + (f", {int((~np.isfinite(t['mde'])).sum())} comparisons could detect no difference "
                            f"at their corrected level" if (~np.isfinite(t["mde"].fillna(np.inf))).any() else ""))
            parts.append(text + ".")
        parts.append(
            f"A difference is called when the Holm-corrected p-value is below {alpha:g} and the interval of the "
            f"ratio excludes 1; it is equivalence when it is not significant and the interval lies within "
            f"±{margin * 100:g}%; a significant difference whose interval lies within ±{margin * 100:g}% is "
            f"reported as such (\"faster, by less than {margin * 100:g}%\"); anything else is inconclusive. "
            f"Intervals are per comparison ({_pct(CONFIDENCE)}), not adjusted for multiplicity; the p-values are.")
    if design and len(design.get("looks", ())) > 1:
        looks = design["looks"]
        spend = design.get("spending", look_spending(len(looks)))
        per_family = {f: tuple(v) for f, v in (design.get("family_spending") or {}).items()
                      if (design.get("family_sizes") or {}).get(f)}
        from .families import FAMILY_TITLES
        shares = "; ".join(f"{', '.join(f'{x:.3g}' for x in v)} for {', '.join(FAMILY_TITLES.get(f, f) for f in fs)}"
                           for v, fs in _grouped(per_family).items())
        parts.append(
            f"Sampling was sequential: after {looks[0]} blocks and again at {', '.join(map(str, looks[1:]))} "
            f"pairs, a cell stopped once every comparison it took part in was decided (significant at its "
            f"share of alpha, or equivalent), and the remaining blocks went to the open cells; alpha was spent "
            f"over the looks as {', '.join(f'{s:.3g}' for s in spend)} of {alpha:g} (Bonferroni over looks)"
            + (f", except that a look whose pair count cannot reach a family's level (an exact test of n pairs "
               f"gives no p-value below 2 / 2^n) gives its share to that family's other looks, so the shares "
               f"were {shares}" if per_family and any(v != tuple(spend) for v in per_family.values()) else "")
            + "; a comparison's p-value is the smallest over its looks of p times 1 / that share.")
    costs = [t for t in tables.values() if "n_values" in t.columns and not t.empty]
    if costs:
        c = pd.concat(costs)
        with_ci = int(c["per_task_ci_low"].notna().sum())
        parts.append(
            f"Per-task costs and exponents are least-squares fits over one typical value per N (exp of the "
            f"Hodges-Lehmann location of the log values), weighted for relative errors, with t intervals on "
            f"n_values - 2 degrees of freedom; "
            f"{with_ci} of {len(c)} series had the 3 or more values of N an interval needs.")
    return " ".join(parts)
