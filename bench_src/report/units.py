"""Quantities as a reader wants them: seconds as ns/µs/ms/s, memory as B/KiB/MiB/GiB, counts with SI
prefixes, ratios and p-values with a fixed number of significant digits.

Tables (`tables`) and figure axes (`figures`) use the same functions, so a value reads the same in both.
"""
from __future__ import annotations

import math

import numpy as np

from .. import digits as _digits
from ..analysis import rules
from ..digits import beside, significant  # noqa: F401  (the report's formatters use them as units.*)

# The unit of each metric column of the samples frame (and of the tables computed from it).
METRIC_UNITS = {
    "elapsed_s": "s", "wall_s": "s", "cpu_s": "s", "user_s": "s", "sys_s": "s",
    "peak_rss_mib": "MiB", "peak_rss_bytes": "B", "maxrss_kb": "KiB",
    "context_switches": "count", "per_s": "/s",
}

# What a metric measures, for axis labels and captions.
METRIC_NAMES = {
    "elapsed_s": "workload time",
    "wall_s": "process wall time",
    "cpu_s": "CPU time (user + system)",
    # the kernel's split of the CPU time, sampled at its timer tick on most kernels (the sum is exact)
    "user_s": "user CPU time (tick-sampled)",
    "sys_s": "system CPU time (tick-sampled)",
    "peak_rss_mib": "peak RSS",
    "peak_rss_bytes": "peak RSS",
    "maxrss_kb": "peak RSS",
    "context_switches": "context switches",
    "per_s": "tasks or messages per second",
}

_TIME = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
_BYTES = ((2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1.0, "B"))
_SI = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_TO_BASE = {"s": 1.0, "MiB": 2.0**20, "KiB": 2.0**10, "B": 1.0, "count": 1.0, "/s": 1.0}


def metric_unit(metric: str) -> str:
    return METRIC_UNITS.get(metric, "")


def metric_name(metric: str) -> str:
    return METRIC_NAMES.get(metric, metric)


def is_time(metric: str) -> bool:
    return metric_unit(metric) == "s"


def _finite(value) -> bool:
    return _digits.finite(value)


def _scale(value: float, unit: str) -> tuple[float, str]:
    """The factor and the unit name for displaying `value` (given in `unit`)."""
    base = float(value) * _TO_BASE.get(unit, 1.0)
    magnitude = abs(base)
    if magnitude == 0:
        return (1.0, "B") if unit in ("MiB", "KiB", "B") else (1.0, "s" if unit == "s" else unit.replace("count", ""))
    if unit == "s":
        for factor, name in _TIME:
            if magnitude >= factor * 0.9995:
                return factor, name
        return _TIME[-1]
    if unit in ("MiB", "KiB", "B"):
        for factor, name in _BYTES:
            if magnitude >= factor * 0.9995:
                return factor, name
        return _BYTES[-1]
    if unit in ("count", "/s"):
        for factor, name in _SI:
            if magnitude >= factor * 0.9995:
                return factor, name + ("/s" if unit == "/s" else "")
        return 1.0, "/s" if unit == "/s" else ""
    return 1.0, unit


def quantity(value: float, unit: str, digits: int = 3) -> str:
    """One value with its unit scaled for reading: 0.01234 s -> '12.3 ms', 1536 MiB -> '1.50 GiB'."""
    if not _finite(value):
        return ""
    factor, name = _scale(value, unit)
    number = significant(float(value) * _TO_BASE.get(unit, 1.0) / factor, digits)
    return f"{number} {name}".strip()


def interval(centre: float, low: float, high: float, unit: str, digits: int = 3, edges=(), floor=None) -> str:
    """'12.3 ms [11.9, 12.8]': the centre and its interval in the centre's unit; each number kept on
    its side of every value of `edges` (in `unit`) as `beside` keeps it.  Nor does an end read as the
    centre where it differs from it: up to three more digits ('282.8 ms [282.5, 283.2]', not
    '283 ms [283, 283]'), each with as many digits beyond `digits` as the others.  With a `floor`
    (in `unit`: a value the quantity cannot go below), a lower end at or below it reads '≤ floor':
    '3.56 µs [≤ 0, 12.9]'."""
    if not _finite(centre):
        return ""
    factor, name = _scale(centre, unit)
    base = _TO_BASE.get(unit, 1.0)
    scaled = [float(e) * base / factor for e in edges]
    if not (_finite(low) and _finite(high)):
        return f"{beside(float(centre) * base / factor, scaled, digits)} {name}".strip()
    values = [float(v) * base / factor for v in (centre, low, high)]
    c, lo, hi = _distinct_ends(values, scaled, digits)
    if floor is not None and float(low) <= floor:
        lo = f"≤ {beside(float(floor) * base / factor, scaled, digits)}"
    return f"{c} {name}".strip() + f" [{lo}, {hi}]"


def _distinct_ends(values: list[float], edges, digits: int) -> list[str]:
    """A centre and its two ends (`values`), each kept on its side of every edge, with up to three
    more digits than `digits` where an end that differs from the centre would read as it, each then
    with as many more as the others (`_aligned`)."""
    centre, low, high = values
    for d in range(digits, digits + 4):
        texts = [beside(v, edges, d) for v in values]
        if (texts[1] != texts[0] or low == centre) and (texts[2] != texts[0] or high == centre):
            break
    return _aligned(values, texts, edges, digits)


def _aligned(values: list[float], texts: list[str], edges, digits: int) -> list[str]:
    """`texts` (of `values`, written with at least `digits` significant digits) with the same number
    of digits beyond `digits` each: where one was given more (to keep it off an edge or apart from the
    centre), the others get as many where they say more by it ('1.002 [1.001, 1.011]', not
    '1.002 [1.001, 1.01]'; but '0.997 [0.995, 0.9998]', not '0.99700 [0.99500, 0.9998]').  A text is
    left as it is where more would carry it onto an edge or across it, or where one is written with
    an exponent."""
    if any("e" in t or "inf" in t for t in texts) or not all(math.isfinite(v) for v in values):
        return texts

    def decimals(text: str) -> int:
        return len(text.split(".")[1]) if "." in text else 0

    def plain(v: float) -> int:  # the decimals of `digits` significant digits, before any rounding up
        return max(digits - 1 - math.floor(math.log10(abs(v))), 0) if v else 0

    extra = max(decimals(t) - plain(v) for v, t in zip(values, texts))
    out = []
    for v, t in zip(values, texts):
        longer = f"{v:.{plain(v) + extra}f}"
        shown = float(longer)
        keeps = all((shown > e) == (v > e) and (shown < e) == (v < e) for e in edges)
        says_more = len(longer) > len(t) and longer.rstrip("0") != (t if "." in t else t + ".").rstrip("0")
        out.append(longer if says_more and keeps else t)
    return out


def off_one(v: float, digits: int = 3) -> str:
    """`v` with `digits` significant digits, more where rounding would carry it onto 1 or across
    it (1.0034 is "1.003", not "1.00", beside a called difference)."""
    return beside(v, (1.0,), digits)


# The edges a verdict on a ratio is decided against: 1 (a difference) and the equivalence margin.
RATIO_EDGES = (1.0, 1 - rules.MARGIN, 1 + rules.MARGIN)


def ratio_point(value: float, low: float = np.nan, high: float = np.nan, digits: int = 3) -> str:
    """A ratio's estimate: `digits` significant digits, more where its interval lies on one side of
    an edge (1 or the margin's) and the rounded estimate would not (1.0021 [1.0012, 1.0035] reads
    "1.002", not "1.00")."""
    if not _finite(value):
        return ""
    edges = [e for e in RATIO_EDGES if _finite(low) and _finite(high) and (low > e or high < e)]
    return beside(value, edges, digits)


def ratio_parts(value: float, low: float = np.nan, high: float = np.nan, digits: int = 3) -> tuple[str, str, str]:
    """The estimate and the two ends of a ratio's interval as `ratio` writes them ('', '' for the
    ends where there is no interval): what the verdict map prints of the estimate, so that it reads
    as the tables do ('0.9946' beside [0.9577, 1.021], not '0.995')."""
    if not _finite(value):
        return "", "", ""
    if not (_finite(low) and _finite(high)):
        return ratio_point(value, low, high, digits), "", ""
    for d in range(digits, digits + 4):
        point, lo, hi = (ratio_point(value, low, high, d), beside(low, RATIO_EDGES, d), beside(high, RATIO_EDGES, d))
        if (lo != point or low == value) and (hi != point or high == value):
            break
    point, lo, hi = _aligned([value, low, high], [point, lo, hi], RATIO_EDGES, digits)
    return point, lo, hi


def ratio(value: float, low: float = np.nan, high: float = np.nan, digits: int = 3) -> str:
    """'1.23 [1.10, 1.40]'.  No number reads as if it sat on an edge a verdict is decided against
    (1 and the equivalence margin, `RATIO_EDGES`) or beyond it when it does not: an interval that
    excludes 1 never reads as if it reached it ('1.05 [1.003, 1.13]'), nor one that reaches below
    the margin as if it were inside ('0.989 [0.9799, 1.02]').  Nor does an end read as the estimate
    where it differs from it: up to three more digits ('1.036 [1.028, 1.045]', not '1.04 [1.03, 1.04]').
    Each gets as many digits beyond `digits` as the others (`_aligned`).  The parts: `ratio_parts`."""
    point, lo, hi = ratio_parts(value, low, high, digits)
    return f"{point} [{lo}, {hi}]" if lo else point


def p_value(p: float) -> str:
    """Two significant digits, trailing zeros kept ('0.0020', '0.031', '1.0e-12', '1.0'); below
    1e-300 as '< 1e-300'."""
    if not _finite(p):
        return ""
    p = float(p)
    if p < 1e-300:
        return "< 1e-300"
    return significant(p, 2)


def percent(value: float, digits: int = 2, signed: bool = False) -> str:
    if not _finite(value):
        return ""
    text = significant(float(value) * 100, digits)
    if signed and float(value) > 0:
        text = "+" + text
    return text + "%"


# From this factor on a difference reads as a factor ("2.89x") in the Findings, below it as a
# percentage ("48%": the other side needs 48% more, a statement with a direction).
FACTOR_FROM = 1.5
# From this factor on a detectable effect or an interval's half-width reads as a factor ("×/÷ 1.48"),
# below it as a percentage ("±4.5%"): either stands for a factor either way, and "±48%" would read as
# 0.52 to 1.48 where it means 0.68 to 1.48; below 1.1 the two sides differ by less than a point.
DETECTABLE_FACTOR_FROM = 1.1


def detectable(mde: float) -> str:
    """The smallest detectable effect of a comparison (a ratio of 1 + mde either way): '±4.5%'
    below a factor of 1.1, and '×/÷ 1.48' from there on (a ratio 1.48 times higher or lower; a ratio
    cannot be 48% lower where it means 1 / 1.48)."""
    if not _finite(mde):
        return ""
    factor = 1 + float(mde)
    return f"×/÷ {significant(factor, 3)}" if factor >= DETECTABLE_FACTOR_FROM else "±" + percent(mde)


def lone_ci() -> str:
    """The name of a lone interval (a cell's slope, one comparison on its own), at the rules'
    confidence: "95% CI" at rules.CONFIDENCE = 0.95."""
    return f"{rules.CONFIDENCE * 100:.3g}% CI"


def coverage(values, kinds=()) -> str:
    """The exact coverage of intervals of a table or figure, as one text: '93.5%', '93.5–96.1%'
    where cells differ, '≥ ' before it where any is a lower bound (values that tie; `kinds` holds
    "at least" there), '' when none is known."""
    known = [float(v) for v in values if _finite(v)]
    if not known:
        return ""
    low, high = percent(min(known), digits=3), percent(max(known), digits=3)
    text = low if low == high else f"{low.rstrip('%')}–{high}"
    return ("≥ " if "at least" in set(kinds) else "") + text


def count(value) -> str:
    """An integer with thousands separators: 1000000 -> '1,000,000'."""
    if not _finite(value):
        return ""
    return f"{int(round(float(value))):,}"


def trim(text: str) -> str:
    """'1.50' -> '1.5', '2.00' -> '2'."""
    return text.rstrip("0").rstrip(".") if "." in text and "e" not in text else text


def short_count(value) -> str:
    """A compact integer for axis ticks: 1000 -> '1k', 100000 -> '100k', 1500000 -> '1.5M'."""
    if not _finite(value):
        return ""
    v = float(value)
    for factor, name in _SI:
        if abs(v) >= factor:
            return trim(significant(v / factor, 3)) + name
    return trim(significant(v, 3))
