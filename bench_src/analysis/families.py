"""The comparison families of bench_src/plan/comparisons.py, found in a samples frame: each row's
CellRef from its structured columns (`cell_refs`), and the frame's parameter columns."""
from __future__ import annotations

import math

import pandas as pd

from ..plan.comparisons import CellRef

KEY_COLUMNS = ["workload", "lang", "variant", "n", "threads_requested", "arm"]


def _clean(value):
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    return value


def key_threads(value) -> int | None:
    """A cell's threads as its key holds them: None where not set (None, NA, NaN or "")."""
    value = _clean(value)
    return None if value in (None, "") else int(value)


def key_text(value) -> str:
    """A text part of a cell's key (its arm, a variant, parameters): "" where not set."""
    value = _clean(value)
    return "" if value is None else str(value)


def key_params(columns, values) -> tuple[tuple[str, str], ...]:
    """A cell's parameters as its key holds them: (name, text) of each set `p_<name>` column, sorted."""
    return tuple(sorted((c[2:], str(v)) for c, v in zip(columns, values) if _clean(v) is not None))


def param_columns(df: pd.DataFrame) -> list[str]:
    return sorted(c for c in df.columns if c.startswith("p_"))


def with_param_columns(df: pd.DataFrame) -> pd.DataFrame:
    """The frame with one `p_<key>` column per parameter.  The samples frame has them; a frame
    built by hand with only the `params` text gets them here, the one place that text is read."""
    if param_columns(df) or "params" not in df.columns or df.empty:
        return df
    out = df.copy()
    parsed = out["params"].fillna("").astype(str).map(
        lambda s: dict(kv.split("=", 1) for kv in s.split(",") if "=" in kv))
    for key in sorted({k for p in parsed for k in p}):
        out[f"p_{key}"] = parsed.map(lambda p, key=key: p.get(key))
    return out


def cell_refs(df: pd.DataFrame) -> pd.Series:
    """Per row, the CellRef of its cell, from the structured columns."""
    df = with_param_columns(df)
    pcols = param_columns(df)
    if df.empty:
        return pd.Series([], dtype=object)
    arm = df["arm"] if "arm" in df.columns else pd.Series("", index=df.index)
    threads = df["threads_requested"] if "threads_requested" in df.columns else pd.Series(None, index=df.index)
    out = []
    for (w, lang, variant, n, t, a), pvals in zip(
            zip(df["workload"], df["lang"], df["variant"], df["n"], threads, arm),
            df[pcols].itertuples(index=False, name=None) if pcols else [()] * len(df)):
        out.append(CellRef(w, lang, variant, int(n), key_threads(t), key_text(a), key_params(pcols, pvals)))
    return pd.Series(out, index=df.index, dtype=object)


