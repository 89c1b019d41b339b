"""Exports for an article, into `<results_dir>/export/`, one module per format:

- `images`: figures as SVG, PNG and PDF (`export/figures/`);
- `csv`: tables raw at full precision, and the samples (`export/tables/*.csv`, `samples.csv`);
- `markdown`: tables formatted for reading (`export/tables/*.md`);
- `parquet`: the samples with typed columns (`samples.parquet`);
- `benchstat`: Go benchmark format so benchstat compares Go with Rust (`export/benchstat/`);
- `method`: the Method text generated from the run (`method.md`);
- `html`: one self-contained report with every table and figure (`report.html`);
- `notebooks`: executed notebooks that ran to the end, as HTML (`export/notebooks/`).

Each format but `images` has one `Exporter` (`base.py`: a name and `save(report, directory)`);
`registry.py` lists them in the order report/full.py writes them.  The tables' markup (title,
caption, Markdown and HTML) is shared: `Readable` in bench_src/report/tables/.

The helpers below are what notebooks call to add a table or figure of their own to the export.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from . import csv, images, markdown, notebooks
from .base import FIGURES, TABLES, export_dir


def save_table(table: pd.DataFrame, results_dir: str | Path, name: str, readable=None) -> list[Path]:
    """`export/tables/<name>.csv` (raw) and `.md` (formatted for reading: `readable`, the form a
    notebook shows, where given; else the reading form of the table's name)."""
    d = export_dir(results_dir) / TABLES
    md = markdown.save_readable(readable, d / f"{name}.md") if readable is not None else \
        markdown.save_table(table, name, d / f"{name}.md")
    return [csv.save_table(table, d / f"{name}.csv"), md]


def save_figure(fig: plt.Figure, results_dir: str | Path, name: str) -> list[Path]:
    """`export/figures/<name>.{svg,png,pdf}`; the figure is closed."""
    return images.save(fig, export_dir(results_dir) / FIGURES, name)


def manifest(results_dir: str | Path) -> pd.DataFrame:
    """Every file under export/, with its size."""
    d = export_dir(results_dir)
    files = sorted(p for p in d.rglob("*") if p.is_file()) if d.is_dir() else []
    return pd.DataFrame({"file": [str(p.relative_to(d)) for p in files], "bytes": [p.stat().st_size for p in files]})


def render_notebooks(results_dir: str | Path) -> list[Path]:
    """The directory's executed notebooks that ran to the end, as HTML (see `notebooks.render`)."""
    return notebooks.render(results_dir)
