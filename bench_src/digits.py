"""Numbers with a fixed count of significant digits, and with more where fewer would put a number on
the other side of an edge it is read against (1 for a ratio, an equivalence margin).  The report's
formatters (`bench_src/report/units.py`) and the analysis's few sentences that carry numbers
(`bench_src/analysis/published.py`) both read them here, so that a number reads alike in both.
"""
from __future__ import annotations

import math


def finite(value) -> bool:
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def significant(value: float, digits: int = 3) -> str:
    """`value` with `digits` significant digits, without an exponent for everyday magnitudes."""
    if not finite(value):
        return ""
    v = float(f"{float(value):.{digits - 1}e}")  # rounded first: 0.9999 -> 1.00, not 1.000
    if v == 0:
        return "0"
    exponent = math.floor(math.log10(abs(v)))
    if exponent >= 15 or exponent < -4:
        return f"{v:.{digits - 1}e}"
    decimals = max(digits - 1 - exponent, 0)
    text = f"{round(v, decimals):.{decimals}f}"
    return text


def beside(v: float, edges, digits: int = 3) -> str:
    """`v` with `digits` significant digits, more where rounding would carry it onto one of `edges`
    or across it: the text stays on the side of every edge that `v` is on."""
    for d in range(digits, 18):  # up to a double's 17 significant digits (1.0000001 [1.0000000x, ...])
        text = significant(v, d)
        shown = float(text)
        if all((shown > e) == (v > e) and (shown < e) == (v < e) for e in edges):
            return text
    return significant(v, digits)
