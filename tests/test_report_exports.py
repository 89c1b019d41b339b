"""Every export format behind the one Exporter interface, and golden files of every exported table
format: CSV (raw), Markdown and the HTML markup of report.html (formatted), the samples as CSV and
Parquet (benchstat's golden files: tests/test_report_benchstat.py).  UPDATE_GOLDEN=1 rewrites them
after a reviewed change."""
import csv
import io
import math
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


def _golden(name: str, text: str, difference=None) -> None:
    """`text` against the golden file `name`: equal, or, with `difference(text, golden)`, None
    (which says where they differ otherwise)."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    golden, fix = path.read_text(), "review the diff, then UPDATE_GOLDEN=1 to accept it"
    if difference is None:
        assert text == golden, f"{name} changed: {fix}"
    else:
        where = difference(text, golden)
        assert where is None, f"{name} changed ({where}): {fix}"


# The raw CSV holds every number at full precision, and its last digits depend on the CPU (numpy
# picks its vector code by the CPU's instruction set): two machines differed by up to 3e-14
# relative on a fitted interval.  So its golden file is compared field by field: text exactly,
# numbers to 1e-9 relative (1e-15 absolute about zero).  A formatted table, Markdown or HTML, is
# compared as text.
NUMBER_RTOL = 1e-9


def _numbers_close(a: str, b: str) -> bool:
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=NUMBER_RTOL, abs_tol=1e-15)


def _csv_difference(text: str, golden: str) -> str | None:
    """Where the CSV sections of `text` first differ from `golden` beyond the numbers' last
    digits (None: they agree)."""
    got, want = text.splitlines(), golden.splitlines()
    if len(got) != len(want):
        return f"{len(got)} lines against the golden file's {len(want)}"
    for i, (g, w) in enumerate(zip(got, want), 1):
        if g == w:
            continue
        gf, wf = next(csv.reader([g])), next(csv.reader([w]))
        if len(gf) != len(wf) or not all(a == b or _numbers_close(a, b) for a, b in zip(gf, wf)):
            return f"line {i}:\n  got    {g}\n  golden {w}"
    return None


def test_csv_golden_comparison_tolerates_last_digits_only():
    golden = 'a,b,c\nx,"p=1,q=2",1.2790473301946859\n'
    assert _csv_difference('a,b,c\nx,"p=1,q=2",1.279047330194686\n', golden) is None
    assert "line 2" in _csv_difference('a,b,c\nx,"p=1,q=2",1.2790473\n', golden)
    assert "line 2" in _csv_difference('a,b,c\ny,"p=1,q=2",1.2790473301946859\n', golden)
    assert "lines" in _csv_difference('a,b,c\n', golden)


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
    _golden("tables.csv.txt", _tables(report, ".csv"), _csv_difference)


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
    # every column of the frame, then whether each peak counts for memory and why not (validity)
    assert io.StringIO(text).readline().rstrip("\n").split(",") == [*report.df.columns, "counts_for_memory",
                                                                    "memory_excluded"]


def test_an_empty_value_of_the_samples_is_null_in_parquet_never_the_text_na(tmp_path):
    """The frame fills a declared column no sample has (`host` and `cores` outside a cluster or a
    pinned plan) with pd.NA, which the Parquet export wrote as the text "<NA>" in every row."""
    from bench_src.report.export.parquet import save_samples
    df = pd.DataFrame({"host": [pd.NA, pd.NA], "cores": [pd.NA, "2"], "reason": ["", None],
                       "cpus": [float("nan"), "0,1"], "at": [pd.NaT, "t"]}, dtype=object)
    back = pq.read_table(save_samples(df, tmp_path / "samples.parquet")).to_pylist()
    assert back == [{"host": None, "cores": None, "reason": "", "cpus": None, "at": None},
                    {"host": None, "cores": "2", "reason": None, "cpus": "0,1", "at": "t"}]


def test_the_samples_say_whether_each_peak_counts_for_memory_as_the_analysis_decides(tmp_path):
    """samples.csv and samples.parquet keep every raw peak RSS and say, per sample, whether it
    counts for the memory metrics and why not, from the analysis's one rule (validity), so that a
    reader of the file does not take the peak of a sample whose tasks were not all alive as valid."""
    import report_data
    from bench_src.analysis import validity
    from bench_src.report import full

    d = report_data.idle_tasks_run(tmp_path / "run", (1000, 10000), warmup=1)
    rep = full.analyse(d)
    for exporter in registry.EXPORTERS:
        if exporter.name in ("csv", "parquet"):
            exporter.save(rep, rep.export_dir)
    for back in (pd.read_csv(rep.export_dir / "samples.csv", keep_default_na=False),
                 pq.read_table(rep.export_dir / "samples.parquet").to_pandas()):
        assert list(back.columns) == [*rep.df.columns, "counts_for_memory", "memory_excluded"]
        assert back["peak_rss_bytes"].tolist() == rep.df["peak_rss_bytes"].tolist(), "the raw value is kept"
        counts = back["counts_for_memory"].astype(str) == "True"
        assert set(back.loc[counts, "sample_id"]) == set(validity.counted(rep.df, "peak_rss_mib")["sample_id"])
        short = (back["lang"] == "go") & (back["n"] == 10000) & (back["phase"] == "measured")
        assert short.sum() == 6 and not counts[short].any()
        assert set(back.loc[short, "memory_excluded"]) == {
            "not every task alive at once: 9,990 of 10,000 alive when the last was spawned"}
        assert set(back.loc[back["phase"] == "warmup", "memory_excluded"]) == {validity.NOT_VALID}
        assert (back.loc[counts, "memory_excluded"] == "").all()
