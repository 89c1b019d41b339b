"""The answer first: the findings that open every report, read from the comparison tables."""
import numpy as np

import report_data
from bench_src.analysis import compare
from bench_src.report import findings


def _tables():
    df = report_data.frame()
    return {f"go_vs_rust_{m}": compare.compare(df, m) for m in ("elapsed_s", "peak_rss_mib")}


def test_differences_of_the_defaults_come_largest_first_with_their_intervals():
    tables = _tables()
    found = findings.findings(tables)
    assert [f.metric for f in found] == ["elapsed_s", "peak_rss_mib"]
    time = found[0]
    t = tables["go_vs_rust_elapsed_s"]
    defaults = t[t["go_default"] & t["rust_default"]]
    called = defaults[defaults["verdict_kind"].isin(["a", "b"])]
    assert len(time.differences) == len(called)
    sizes = [abs(np.log(d.ratio)) for d in time.differences]
    assert sizes == sorted(sizes, reverse=True), "largest first"
    top = time.differences[0]
    assert top.low <= top.ratio <= top.high and (top.high < 1 or top.low > 1), "its interval excludes 1"
    line = top.text("elapsed_s")
    assert line.startswith(f"{top.who} faster (") and "Go/Rust" in line and "N = " in line
    # the counts add up to the default pairs of the table
    assert len(time.differences) + time.equivalent + time.open == len(defaults)
    assert "false discovery rate 0.05" in time.summary() and "adjusted over the family's" in time.summary()


def test_findings_as_markdown_and_without_any_table():
    text = findings.markdown(findings.findings(_tables()))
    assert text.startswith("**Workload time: ") and "\n1. " in text
    assert findings.markdown([]).startswith("No Go-vs-Rust comparison could be made")
