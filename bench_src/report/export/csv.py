"""Tables and samples as CSV: raw values at full precision, for other tools.  The samples carry,
beside their raw peak RSS, whether it counts for the memory metrics and why not
(analysis/validity.py, `memory_columns`)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...analysis.validity import memory_columns
from .base import TABLES, written


def save_table(table: pd.DataFrame, path: str | Path) -> Path:
    with written(path) as path:
        table.to_csv(path, index=False)
    return path


def save_samples(df: pd.DataFrame, path: str | Path) -> Path:
    return save_table(df, path)


class CsvExporter:
    """Every table as `tables/<name>.csv`, and the samples as `samples.csv` (with
    `counts_for_memory` and `memory_excluded`)."""

    name = "csv"

    def save(self, report, directory: Path) -> list[Path]:
        out = [save_table(t, directory / TABLES / f"{name}.csv") for name, t in report.tables.items()]
        if not report.df.empty:
            out.append(save_samples(memory_columns(report.df), directory / "samples.csv"))
        return out
