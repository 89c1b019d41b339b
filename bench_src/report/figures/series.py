"""How the series of a figure are told apart when a language has several variants: each variant its
own colour from its language's family and its own marker, a second parameter set of a variant with
open markers, each language its line style."""
from __future__ import annotations

from ..theme import LANG_COLORS
from .axes import LANG_STYLE, shades

# Colours of a language's variants: its own colour first, then hues of the same family (Go's blues
# and greens, Rust's reds, oranges and purples), far enough apart to tell three or four variants
# apart, which shades of one colour are not; each variant has its own marker too.
FAMILIES = {"go": [LANG_COLORS["go"], "#1F4E9C", "#2A9D74", "#6C5BB8"],
            "rust": [LANG_COLORS["rust"], "#E8962E", "#8C2D7A", "#6B2A12"]}
MARKERS = ["o", "s", "^", "D", "v", "P"]


def series_styles(keys) -> dict:
    """Per series key (lang, variant, parameters): its colour and marker (one per variant, from its
    language's family), filled for the variant's first parameter set and open (and larger, so that
    both show where they coincide) for the others, and the language's line style."""
    styles = {}
    for lang in dict.fromkeys(k[0] for k in keys):
        variants = list(dict.fromkeys(k[1] for k in keys if k[0] == lang))
        family = FAMILIES.get(lang) or shades(LANG_COLORS.get(lang, "#666666"), len(variants))
        family = family if len(variants) <= len(family) else shades(family[0], len(variants))
        for i, variant in enumerate(variants):
            rest = list(dict.fromkeys(k[2] for k in keys if k[:2] == (lang, variant)))
            for j, params in enumerate(rest):
                styles[(lang, variant, params)] = {"color": family[i], "marker": MARKERS[i % len(MARKERS)],
                                                   "filled": j == 0, "linestyle": LANG_STYLE.get(lang, "-")}
    return styles


def line_style(style: dict) -> dict:
    """Keyword arguments of `Axes.plot` for a style of `series_styles`."""
    color = style["color"]
    return {"color": color, "marker": style["marker"], "linestyle": style["linestyle"], "markeredgecolor": color,
            "markerfacecolor": color if style["filled"] else "white", "markersize": 5 if style["filled"] else 7.5,
            "markeredgewidth": 1.3, "zorder": 3 if style["filled"] else 2.5}
