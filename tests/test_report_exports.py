"""Every export format behind the one Exporter interface, and golden files of every exported table
format: CSV (raw), Markdown and the HTML markup of report.html (formatted), the samples as CSV and
Parquet (benchstat's golden files: tests/test_report_benchstat.py).  UPDATE_GOLDEN=1 rewrites them
after a reviewed change."""
import io
import os
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from bench_src.report import tables
from bench_src.report.export import registry

GOLDEN = Path(__file__).parent / "golden" / "exports"


@pytest.fixture
def report(synthetic_report):
    return synthetic_report


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed: review the diff, then UPDATE_GOLDEN=1 to accept it"


def _tables(report, suffix: str) -> str:
    d = report.export_dir / "tables"
    return "".join(f"==> {name}{suffix} <==\n{(d / f'{name}{suffix}').read_text()}\n" for name in report.tables)


def test_every_format_is_one_exporter_of_the_registry(report):
    names = [e.name for e in registry.exporters(render_notebooks=True)]
    assert names == ["csv", "markdown", "parquet", "benchstat", "method", "html", "notebooks"]
    assert registry.exporter("csv") is registry.EXPORTERS[0]
    with pytest.raises(ValueError, match="unknown export format 'xlsx'; allowed: csv, markdown"):
        registry.exporter("xlsx")
    written = [p for p in report.files]
    assert len(written) == len(set(written)) and all(p.is_file() for p in written)
    assert all(report.export_dir in p.parents for p in written)


def test_each_exporter_writes_exactly_the_files_it_returns(report, tmp_path):
    for exporter in registry.EXPORTERS:
        out = tmp_path / exporter.name
        files = exporter.save(report, out)
        assert files, exporter.name
        assert sorted(files) == sorted(p for p in out.rglob("*") if p.is_file()), exporter.name


def test_golden_tables_as_csv(report):
    _golden("tables.csv.txt", _tables(report, ".csv"))


def test_golden_tables_as_markdown(report):
    _golden("tables.md.txt", _tables(report, ".md"))


def test_golden_tables_as_html_markup_inside_the_report(report):
    page = (report.export_dir / "report.html").read_text()
    markup = {name: tables.readable(t, name).to_html() for name, t in report.tables.items()}
    assert all(m in page for m in markup.values()), "report.html holds every table's markup"
    _golden("tables.html.txt", "".join(f"==> {name} <==\n{m}\n" for name, m in markup.items()))


def test_golden_samples_as_csv_and_parquet(report):
    text = (report.export_dir / "samples.csv").read_text()
    _golden("samples.csv", text)
    parquet = pq.read_table(report.export_dir / "samples.parquet")
    schema = "".join(f"{f.name}: {f.type}\n" for f in parquet.schema)
    _golden("samples.parquet.schema.txt", schema)
    back = parquet.to_pandas()
    assert len(back) == len(report.df)
    pd.testing.assert_frame_equal(back[["sample_id", "elapsed_s"]], report.df[["sample_id", "elapsed_s"]]
                                  .reset_index(drop=True), check_dtype=False)
    assert io.StringIO(text).readline().rstrip("\n").split(",") == list(report.df.columns)
