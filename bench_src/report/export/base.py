"""The one interface of every export format: an `Exporter` has a name and writes its files for a
report into the export directory, returning their paths.  Each format is one module of this
package with one exporter; `registry.EXPORTERS` lists them in the order they are written.  A new
format is a module with a class like the others and one line in the registry."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pandas as pd


class ReportData(Protocol):
    """What an exporter reads of a report (report/full.py's Report)."""

    results_dir: Path
    df: pd.DataFrame
    meta: dict[str, Any]
    tables: dict[str, pd.DataFrame]
    figures: dict[str, list[Path]]
    method: str

    @property
    def empty(self) -> bool: ...


class Exporter(Protocol):
    name: str  # the format, as the registry and the tests name it

    def save(self, report: ReportData, directory: Path) -> list[Path]:
        """Write this format's files for the report under `directory` (the export directory)."""
        ...
