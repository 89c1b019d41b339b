"""Tables as Markdown, formatted for reading (`tables.readable`): units, intervals, verdicts, and the
values every row shares in a caption line above the table.  Every row is written."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import tables
from .base import TABLES, written


def save_table(table: pd.DataFrame, name: str, path: str | Path) -> Path:
    return save_readable(tables.readable(table, name), path)


def save_readable(readable: tables.Readable, path: str | Path) -> Path:
    with written(path) as path:
        path.write_text(readable.to_markdown())
    return path


class MarkdownExporter:
    """Every table, formatted for reading, as `tables/<name>.md`."""

    name = "markdown"

    def save(self, report, directory: Path) -> list[Path]:
        return [save_table(t, name, directory / TABLES / f"{name}.md") for name, t in report.tables.items()]
