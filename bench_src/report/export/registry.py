"""The export formats a full report writes, in order (report/full.py iterates them).  The Method
and the HTML report come after the tables they describe; `notebooks` only when asked for."""
from __future__ import annotations

from .base import Exporter
from .benchstat import BenchstatExporter
from .csv import CsvExporter
from .html import HtmlExporter
from .markdown import MarkdownExporter
from .method import MethodExporter
from .notebooks import NotebooksExporter
from .parquet import ParquetExporter

EXPORTERS: tuple[Exporter, ...] = (CsvExporter(), MarkdownExporter(), ParquetExporter(), BenchstatExporter(),
                                   MethodExporter(), HtmlExporter())
ON_REQUEST: tuple[Exporter, ...] = (NotebooksExporter(),)


def exporters(render_notebooks: bool = False) -> list[Exporter]:
    return list(EXPORTERS) + (list(ON_REQUEST) if render_notebooks else [])


def exporter(name: str) -> Exporter:
    for e in EXPORTERS + ON_REQUEST:
        if e.name == name:
            return e
    raise ValueError(f"unknown export format {name!r}; allowed: {', '.join(e.name for e in EXPORTERS + ON_REQUEST)}")
