"""The samples frame as Parquet (typed columns, for pandas, Polars, DuckDB, R arrow), with whether
each sample's peak RSS counts for the memory metrics and why not (analysis/validity.py,
`memory_columns`), as samples.csv has them."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...analysis.validity import memory_columns
from .base import written


def _empty(value) -> bool:
    return value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def save_samples(df: pd.DataFrame, path: str | Path) -> Path:
    flat = df.copy()
    for c in flat.columns:  # Parquet needs one type per column: mixed object columns become text
        if flat[c].dtype == object:  # an empty value (None, NaN, pd.NA, NaT) is null, never its repr ("<NA>")
            flat[c] = flat[c].map(lambda v: None if _empty(v) else str(v))
    with written(path) as path:
        flat.to_parquet(path, index=False)
    return path


class ParquetExporter:
    """The samples as `samples.parquet` (with `counts_for_memory` and `memory_excluded`)."""

    name = "parquet"

    def save(self, report, directory: Path) -> list[Path]:
        return [] if report.df.empty else [save_samples(memory_columns(report.df), directory / "samples.parquet")]
