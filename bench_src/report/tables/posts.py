"""The related posts' figures beside ours, for reading: each published figure exactly as printed
(no digit added or dropped), ours in the same unit with its interval, and the interval's coverage
as every other table gives it."""
from __future__ import annotations

import pandas as pd

from .. import units
from .formatting import blank, finish
from .markup import Readable


def published_number(value) -> str:
    """A figure as its source printed it: 94472 -> '94,472', 4.96 -> '4.96', 0.55 -> '0.55' (the
    reference file holds the printed digits; a float keeps at most 15 of them)."""
    if blank(value):
        return ""
    return f"{float(value):,.15g}"


def our_number(value, digits: int = 4) -> str:
    """One of our values in the post's unit, to `digits` significant digits, thousands separated."""
    if blank(value):
        return ""
    text = units.significant(float(value), digits)
    if "e" in text:
        return text
    whole, _, frac = text.partition(".")
    sign = "-" if whole.startswith("-") else ""
    return sign + f"{int(whole.lstrip('-') or 0):,}" + (f".{frac}" if frac else "")


def unit_text(unit: str) -> str:
    return "" if blank(unit) else f" {unit}"


def other_posts(table: pd.DataFrame) -> Readable:
    if table.empty:
        return finish(table, "The related posts' figures beside ours")
    out = pd.DataFrame({
        "source": table["source"], "experiment": table["experiment"], "lang": table["lang"],
        "their variant": table["their_variant"], "N": table["n"].map(units.count), "metric": table["metric"],
        "theirs": [published_number(v) + unit_text(u) for v, u in zip(table["their_value"], table["unit"])],
        "ours [CI]": [("" if blank(m) else our_number(m) + unit_text(u)
                       + (f" [{our_number(lo)}, {our_number(hi)}]" if not blank(lo) and not blank(hi) else ""))
                      for m, lo, hi, u in zip(table["our_median"], table["our_ci_low"], table["our_ci_high"],
                                              table["unit"])],
        "CI coverage": table["our_ci_coverage"].map(lambda v: "" if blank(v) else units.percent(v, digits=3)),
        "samples": table["our_samples"].map(lambda v: "" if blank(v) or v == 0 else units.count(v)),
        "ours / theirs": table["ours_over_theirs"].map(lambda v: "" if blank(v) else units.significant(v, 3)),
        "note": table["note"],
    })
    none = "" if table["our_median"].map(lambda v: not blank(v)).any() else (
        "; this run took none of these experiments (no sample of ours in any row: the memory and article "
        "profiles take them)")
    return finish(out, "The related posts' figures beside ours",
                  "theirs: as the post printed it; ours: our median in the post's unit with its distribution-free "
                  "interval, whose exact coverage is given; their machines and versions differ from ours "
                  f"(data/reference/README.md){none}", keep=("theirs", "ours [CI]"))
