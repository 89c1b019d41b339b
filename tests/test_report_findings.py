"""The answer first: the findings that open every report, read from the comparison tables."""
import re
from pathlib import Path

import numpy as np
import pandas as pd

import report_data
from bench_src.analysis import compare, rules
from bench_src.report import findings, units


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
    sizes = [(d.short("elapsed_s"), -min(abs(np.log(d.low)), abs(np.log(d.high)))) for d in time.differences]
    assert sizes == sorted(sizes), "largest first by the interval's end nearest 1, times of microseconds last"
    top = time.differences[0]
    assert top.low <= top.ratio <= top.high and (top.high < 1 or top.low > 1), "its interval excludes 1"
    line = top.text("elapsed_s")
    assert line.startswith(f"{top.who} faster (") and "Go/Rust" in line and "N = " in line
    # the counts add up to the default pairs of the table
    assert len(time.differences) + time.equivalent + time.open == len(defaults)
    assert "false discovery rate 0.05" in time.summary() and "adjusted over the family's" in time.summary()
    if time.open:  # the open rows' mde: excluded by the interval, or a statement of power: the summary says which
        assert ("is excluded by the interval or would have been called at the spread measured: with 80% power were "
                "that spread the true one") in time.summary()


def test_differences_are_ordered_by_the_smallest_difference_their_interval_supports():
    # a large estimate from 6 noisy pairs (3.5x, its interval reaching 1.8x) comes after a smaller
    # one its interval is sure of (2.9x, at least 2.1x): ordered by the end nearest 1, not the estimate
    rows = [{"workload": w, "n": 10, "ratio": r, "ratio_ci_low": lo, "ratio_ci_high": hi, "verdict_kind": "a",
             "go_default": True, "rust_default": True, "go_median": 1e-3, "rust_median": 3e-3, "pairs": p,
             "pairing": "paired", "ci_level": 0.96, "family_size": 3}
            for w, r, lo, hi, p in (("files_read", 0.285, 0.154, 0.554, 6), ("ping_pong", 0.346, 0.257, 0.468, 6),
                                    ("sleep", 0.9, 0.85, 0.95, 40))]
    found = findings.metric_findings(pd.DataFrame(rows), "elapsed_s")
    assert [d.workload for d in found.differences] == ["ping_pong", "files_read", "sleep"]
    assert [round(d.assured(), 3) for d in found.differences] == [round(-np.log(0.468), 3), round(-np.log(0.554), 3),
                                                                   round(-np.log(0.95), 3)]
    assert findings.ORDER in found.summary(), "the summary says how the list is ordered"
    assert "its end nearest 1" in findings.markdown([found])


def test_the_power_of_an_open_rows_mde_is_the_one_the_simulation_measured():
    # "80% power" held only were the spread a row measured the true one; averaged over its own
    # uncertainty the package's simulation measured less (docs/statistics.md): the summary says both,
    # the measured share at the open rows' pairs (rules.MDE_POWER_MEASURED)
    base = dict(metric="elapsed_s", differences=[], equivalent=0, level=0.95, family_size=25, all_pairs={},
                open_mde=(0.03, 0.045))
    text = findings.MetricFindings(**base, open=3, open_small=3, open_pairs=(14, 21, 171)).summary()
    assert ("with 80% power were that spread the true one, 70–79% averaged over its own uncertainty (the package's "
            "simulation at 14 to 20 pairs, the most it tried, where these rows have 14 to 171: docs/statistics.md)"
            ) in text
    assert "called with 80% power" not in text
    six = findings.MetricFindings(**base, open=1, open_small=0, open_pairs=(6,)).summary()
    assert "59–63% averaged over its own uncertainty (the package's simulation at 6 pairs: " in six
    # read from the table: the pairs of its open paired rows
    table = _tables()["go_vs_rust_elapsed_s"].copy()
    rows = table.index[table["go_default"] & table["rust_default"]][:2]
    table.loc[rows, "verdict_kind"] = "inconclusive"
    table.loc[rows, "pairs"] = [10, 14]
    found = findings.findings({"go_vs_rust_elapsed_s": table})[0]
    assert len(found.open_pairs) == found.open and {10, 14} <= set(found.open_pairs)


def test_the_measured_power_is_the_table_of_docs_statistics():
    # one owner: rules.MDE_POWER_MEASURED holds the lowest and highest share per row of the table
    # in docs/statistics.md ("Minimum detectable effect"), the mde read as the tables read it
    doc = (Path(__file__).resolve().parents[1] / "docs" / "statistics.md").read_text()
    table = doc[doc.index("| pairs | interval at 0.05 / 30 |"):].split("\n\n")[0].splitlines()[2:]
    measured = {}
    for line in table:
        cells = [c.strip() for c in line.strip("|").split("|")]
        shares = [float(re.match(r"([0-9.]+)%", c).group(1)) / 100 for c in cells[2:]]
        measured[int(cells[0])] = (round(min(shares), 3), round(max(shares), 3))
    assert measured == rules.MDE_POWER_MEASURED


def test_findings_as_markdown_and_without_any_table():
    text = findings.markdown(findings.findings(_tables()))
    assert text.startswith("**Workload time: ") and "\n1. " in text
    assert findings.markdown([]).startswith("No Go-vs-Rust comparison could be made")


def test_a_small_difference_reads_as_a_percentage_and_says_it_is_inside_the_margin():
    tiny = findings.Difference("sleep", 10, "", 0.997, 0.995, 0.998, "Go", False, within_margin=True)
    assert tiny.text("elapsed_s").startswith("Go faster, by less than 2% (0.30%): sleep, N = 10: Go/Rust 0.997 [")
    large = findings.Difference("sleep", 10, "", 0.25, 0.2, 0.3, "Go", False)
    assert large.text("elapsed_s").startswith("Go faster (4.00x): ")
    # three significant digits, as every other factor of the list (4.298 is not "4.3x" beside "4.05x")
    assert findings.Difference("sleep", 10, "", 0.232686, 0.2, 0.3, "Go", False).size() == "4.30x"
    middle = findings.Difference("sleep", 10, "", 1 / 0.8, 1.2, 1.3, "Rust", False)
    assert middle.text("peak_rss_mib").startswith("Rust smaller (25%): ")
    table = _tables()["go_vs_rust_elapsed_s"]
    called = table[table["verdict_kind"].isin(["a", "b"]) & table["go_default"] & table["rust_default"]]
    margin_rows = int(called["within_margin"].fillna(False).astype(bool).sum())
    lines = [d.text("elapsed_s") for d in findings.findings(_tables())[0].differences]
    assert sum("by less than 2%" in x for x in lines) == margin_rows
    assert not any("(1x)" in x for x in lines)


def test_the_findings_name_the_level_as_the_tables_do():
    from bench_src.report import units
    time = findings.findings(_tables())[0]
    assert f"intervals at {units.percent(time.level, digits=3)}, adjusted" in time.summary()


def _differences_with_rows(table):
    """Each finding of a Go-vs-Rust time table with the table row it was read from."""
    found = findings.findings({"go_vs_rust_elapsed_s": table})[0]
    called = table[table["verdict_kind"].isin(["a", "b"]) & table["go_default"] & table["rust_default"]]
    assert found.differences
    for d in found.differences:
        yield d, called[(called["workload"] == d.workload) & (called["n"] == d.n)
                        & (called["ratio"] == d.ratio)].iloc[0]


def test_each_difference_says_how_many_pairs_its_interval_rests_on():
    # a run of the sequential rule gives comparisons from 6 to hundreds of pairs: the count is part of
    # the finding, as the ratio and the interval are
    table = _tables()["go_vs_rust_elapsed_s"]
    for d, row in _differences_with_rows(table):
        assert row["pairing"] == "paired"
        assert d.text("elapsed_s").split("]")[1].startswith(f", {int(row['pairs'])} pairs")
    unpaired = table.iloc[[0]].assign(pairing="unpaired", pairs=0, go_samples=7, rust_samples=9,
                                      verdict_kind="a", go_default=True, rust_default=True)
    line = findings.findings({"go_vs_rust_elapsed_s": unpaired})[0].differences[0].text("elapsed_s")
    assert ", 7 Go and 9 Rust samples, unpaired" in line


def test_each_difference_says_what_its_factor_is_a_factor_of():
    # "7x faster" of 20 µs and of 20 s are different findings: the line gives both cells' medians
    for d, row in _differences_with_rows(_tables()["go_vs_rust_elapsed_s"]):
        go, rust = units.quantity(row["go_median"], "s"), units.quantity(row["rust_median"], "s")
        assert go and rust
        assert d.text("elapsed_s").endswith(f"pairs (medians: Go {go}, Rust {rust})")
    small = findings.Difference("idle_tasks", 1, "", 0.141, 0.06, 0.307, "Go", False, samples="6 pairs",
                                medians=(21.3e-6, 151e-6))
    # Go's time is under 100 µs: the line says what that means for the ratio (findings.short_time)
    assert small.text("elapsed_s").endswith("6 pairs (medians: Go 21.3 µs, Rust 151 µs); a time under 100 µs, a few "
                                            "wake-ups of the scheduler: such a ratio can move between runs by more "
                                            "than its interval says")
    memory = findings.Difference("sleep", 10, "", 0.5, 0.4, 0.6, "Go", False, medians=(3.0, 6.0))
    assert memory.text("peak_rss_mib").endswith("(medians: Go 3.00 MiB, Rust 6.00 MiB)")
    assert "medians" not in findings.Difference("sleep", 10, "", 0.5, 0.4, 0.6, "Go", False).text("elapsed_s")


def test_without_any_comparison_the_findings_say_why():
    # a run of one language has no failure to point at: the findings name the plan's choice instead
    df = report_data.frame()
    go_only = df[df["lang"] == "go"]
    text = findings.markdown([], df=go_only)
    assert text == ("No Go-vs-Rust comparison could be made in this run: only Go was run (languages: go); "
                    "run both languages (go and rust) to compare them.")
    rust_failed = df.assign(valid=df["valid"] & (df["lang"] == "go"))
    assert findings.markdown([], df=rust_failed).endswith(": no Rust sample was valid (see the failures table).")
    assert "see the failures table" in findings.markdown([])


def test_one_difference_is_counted_in_the_singular():
    table = _tables()["go_vs_rust_elapsed_s"]
    called = table[table["verdict_kind"].isin(["a", "b"]) & table["go_default"] & table["rust_default"]]
    one = findings.findings({"go_vs_rust_elapsed_s": called.iloc[[0]]})[0]
    assert one.summary().startswith("Workload time: 1 difference, 0 equivalent")


def test_the_summary_counts_the_differences_smaller_than_the_margin():
    # a difference called because its interval is clear of 1, though it lies inside ±2% (0.996
    # [0.995, 0.997] in a quick run), is still a difference; the headline count says how many are
    def metric(*margins):
        return findings.MetricFindings("elapsed_s", [findings.Difference("sleep", 10 ** (i + 1), "", 0.996, 0.995, 0.997,
                                                                         "Go", False, within_margin=m)
                                                     for i, m in enumerate(margins)],
                                       equivalent=0, open=0, open_small=0, level=0.97, family_size=25, all_pairs={})

    assert metric(True, False, True).summary().startswith(
        "Workload time: 3 differences (2 of them smaller than 2%: intervals clear of 1 and inside ±2%), 0 equivalent")
    assert metric(True, False).summary().startswith(
        "Workload time: 2 differences (1 of them smaller than 2%: interval clear of 1 and inside ±2%), 0 equivalent")
    assert metric(True).summary().startswith(
        "Workload time: 1 difference (smaller than 2%: its interval clear of 1 and inside ±2%), 0 equivalent")
    assert metric(False, False).summary().startswith("Workload time: 2 differences, 0 equivalent")


def test_in_an_aa_run_each_difference_names_its_arm():
    # the same work is compared once in each arm: without the arm two lines would read alike but
    # for their numbers
    table = _tables()["go_vs_rust_elapsed_s"]
    called = table[table["verdict_kind"].isin(["a", "b"]) & table["go_default"] & table["rust_default"]].iloc[[0]]
    both = pd.concat([called.assign(arm="A"), called.assign(arm="B", ratio=called["ratio"] * 1.001)])
    lines = findings.findings({"go_vs_rust_elapsed_s": both})[0].lines()
    row = called.iloc[0]
    where = f"{row['workload']}, N = {units.count(row['n'])} ({row['shared_params'].replace(',', ', ')})"
    assert sorted(line.split(": ")[1] for line in lines) == [f"{where}, arm A", f"{where}, arm B"]
    # a run without arms names none
    assert ", arm" not in findings.findings({"go_vs_rust_elapsed_s": called})[0].lines()[0]


def test_the_findings_speak_of_the_margin_the_tables_were_computed_with():
    # the report's margin decides the tables' verdicts; the Findings name that margin, not the default
    from pathlib import Path

    from bench_src.report import full

    df = report_data.frame()
    tables = {f"go_vs_rust_{m}": compare.compare(df, m, margin=0.05) for m in ("elapsed_s", "peak_rss_mib")}
    for found in (findings.findings(tables, 0.05), full.Report(Path("."), df, margin=0.05, tables=tables).findings):
        time = found[0]
        assert "equivalent within ±5%" in time.summary() and "2%" not in time.summary().replace("(2 of", "")
        inside = [d for d in time.differences if d.within_margin]
        assert inside, "the synthetic run has a difference inside ±5%"
        lines = time.lines(limit=len(time.differences))
        assert sum("by less than 5%" in line for line in lines) == len(inside)
        assert not any("than 2%" in line or "±2%" in line for line in lines)
    tiny = findings.Difference("sleep", 10, "", 0.97, 0.96, 0.98, "Go", False, within_margin=True)
    assert tiny.text("elapsed_s", 0.05).startswith("Go faster, by less than 5% (3.1%): ")


def test_the_html_report_s_findings_speak_of_the_report_s_margin():
    from pathlib import Path

    from bench_src.report import full
    from bench_src.report.export import html

    df = report_data.frame()
    tables = {f"go_vs_rust_{m}": compare.compare(df, m, margin=0.05) for m in ("elapsed_s", "peak_rss_mib")}
    section = html._findings(full.Report(Path("."), df, margin=0.05, tables=tables), set())
    assert "equivalent within ±5%" in section and "by less than 5%" in section
    assert "±2%" not in section and "than 2%" not in section


def test_the_differences_left_out_of_the_list_are_counted_in_the_singular_for_one():
    def metric(count):
        return findings.MetricFindings("elapsed_s", [findings.Difference("sleep", 10 ** (i + 1), "", 0.5, 0.4, 0.6,
                                                                         "Go", False) for i in range(count)],
                                       equivalent=0, open=0, open_small=0, level=0.97, family_size=25, all_pairs={})

    assert metric(3).lines(limit=2)[-1] == "... and 1 more difference (the table has them all)"
    assert metric(4).lines(limit=2)[-1] == "... and 2 more differences (the table has them all)"
    assert len(metric(2).lines(limit=2)) == 2 and "more" not in metric(2).lines(limit=2)[-1]


def test_a_difference_of_microseconds_comes_after_the_others_and_says_why():
    # the quick run's first finding was "Go faster (6.17x)" of 9.55 µs against 77.2 µs: a ratio of a
    # few scheduler wake-ups, which moved between two article runs by more than its intervals said
    table = _tables()["go_vs_rust_elapsed_s"].copy()
    called = table.index[table["verdict_kind"].isin(["a", "b"]) & table["go_default"] & table["rust_default"]]
    assert len(called) >= 2
    first = called[0]
    table.loc[first, ["ratio", "ratio_ci_low", "ratio_ci_high", "verdict_kind", "go_median", "rust_median"]] = \
        [0.162, 0.0375, 0.291, "a", 9.55e-6, 77.2e-6]
    diffs = findings.findings({"go_vs_rust_elapsed_s": table})[0].differences
    assert diffs[-1].ratio == 0.162 and all(not d.short("elapsed_s") for d in diffs[:-1])
    assert "a time under 100 µs, a few wake-ups of the scheduler" in diffs[-1].text("elapsed_s")
    assert "wake-ups" not in diffs[0].text("elapsed_s")
    # counted in the summary, which a list cut at its first lines may not reach
    summary = findings.findings({"go_vs_rust_elapsed_s": table})[0].summary()
    assert "1 of them has a time under 100 µs, listed last: a few wake-ups of the scheduler" in summary
    # with differences inside the margin as well, both notes share one parenthesis: never ") ("
    small = findings.MetricFindings(
        metric="elapsed_s", differences=[
            findings.Difference("sleep", 10, "", 1.01, 1.005, 1.015, "Rust", False, within_margin=True,
                                medians=(1.0, 0.99)),
            findings.Difference("sleep", 1, "", 0.5, 0.4, 0.6, "Go", False, medians=(4e-5, 8e-5))],
        equivalent=0, open=0, open_small=0, level=0.95, family_size=25, all_pairs={}).summary()
    assert ("2 differences (1 of them smaller than 2%: interval clear of 1 and inside ±2%; 1 of them has a time "
            "under 100 µs, listed last:") in small and ") (" not in small
    # memory is no time: never flagged
    assert not findings.Difference("idle_tasks", 1, "", 0.5, 0.4, 0.6, "Go", False,
                                   medians=(5e-5, 6e-5)).short("peak_rss_mib")


def test_the_open_comparisons_say_plainly_what_they_could_have_shown():
    # "13 open (for 0 of them a difference of 5% or more would have been called ...)" read as if
    # something had been called; now the MDEs' range, and none / k / all of them precise enough
    base = dict(metric="elapsed_s", differences=[], equivalent=0, level=0.95, family_size=25, all_pairs={})
    none = findings.MetricFindings(**base, open=13, open_small=0, open_mde=(0.08, 2.75)).summary()
    assert ("13 open (MDEs ±8.0% to ×/÷ 3.75; none of them precise enough that a difference of 5% is excluded by "
            "the interval or would have been called at the spread measured: with 80% power were that spread the true "
            "one, ") in none
    some = findings.MetricFindings(**base, open=2, open_small=1, open_mde=(0.04, 0.3)).summary()
    assert "2 open (MDEs ±4.0% to ×/÷ 1.30; 1 of them precise enough" in some
    one = findings.MetricFindings(**base, open=1, open_small=1, open_mde=(0.04, 0.04)).summary()
    assert "1 open (MDE ±4.0%; precise enough" in one, "one row is no 'all of them'"
    # read from the table: the open rows' MDEs
    table = _tables()["go_vs_rust_elapsed_s"].copy()
    rows = table.index[table["go_default"] & table["rust_default"]][:2]
    table.loc[rows, "verdict_kind"] = "inconclusive"
    table.loc[rows, "mde"] = [0.03, 0.6]
    found = findings.findings({"go_vs_rust_elapsed_s": table})[0]
    assert found.open_mde[0] <= 0.03 and found.open_mde[1] >= 0.6


def test_a_comparison_with_too_few_pairs_to_be_tested_is_counted_apart_from_the_open_ones():
    # one failed sample left 5 pairs: the row has no test, no interval, no spread; the summary read
    # "1 open (none of them precise enough ... at the spread measured)"
    table = _tables()["go_vs_rust_elapsed_s"].copy()
    first = table.index[table["go_default"] & table["rust_default"]][0]
    table.loc[first, ["ratio", "ratio_ci_low", "ratio_ci_high", "mde", "verdict_kind"]] = \
        [np.nan, np.nan, np.nan, np.nan, "inconclusive"]
    original = _tables()["go_vs_rust_elapsed_s"]
    before = findings.findings({"go_vs_rust_elapsed_s": original})[0]
    f = findings.findings({"go_vs_rust_elapsed_s": table})[0]
    was_open = int(original.loc[first, "verdict_kind"] == "inconclusive")
    assert f.untested == 1 and before.untested == 0 and f.open == before.open - was_open
    assert ("1 not tested (fewer than 6 pairs of values that count: samples failed, were left out, or for memory "
            "had tasks finish before the last was spawned; the table's warning says which)" in f.summary())


def test_the_summarys_level_is_the_tables_ci_level():
    """The level the findings name must be the one the table's intervals were computed at."""
    table = _tables()["go_vs_rust_elapsed_s"].copy()
    table["ci_level"] = 0.99
    found = findings.findings({"go_vs_rust_elapsed_s": table})[0]
    assert found.level == 0.99
    assert f"intervals at {units.percent(0.99, digits=3)}, adjusted" in found.summary()


def test_an_open_row_whose_mde_is_at_most_the_target_counts_as_precise_enough():
    """An MDE of 4% (or exactly 5%) could have shown a 5% difference: it counts among the precise open rows."""
    table = _tables()["go_vs_rust_elapsed_s"].copy()
    sqlite = table.index[(table["workload"] == "sqlite") & table["go_default"] & table["rust_default"]]
    table.loc[sqlite, "mde"] = 0.04
    found = findings.findings({"go_vs_rust_elapsed_s": table})[0]
    assert found.open == 1 and found.open_small == 1
    table.loc[sqlite, "mde"] = 0.05
    assert findings.findings({"go_vs_rust_elapsed_s": table})[0].open_small == 1
    table.loc[sqlite, "mde"] = 0.06
    assert findings.findings({"go_vs_rust_elapsed_s": table})[0].open_small == 0


def test_the_family_size_is_the_tables_not_its_row_count():
    """The family BH adjusted over may hold comparisons the table does not show: its size is the column's."""
    table = _tables()["go_vs_rust_elapsed_s"].copy()
    assert len(table) == 9
    table["family_size"] = 12
    found = findings.findings({"go_vs_rust_elapsed_s": table})[0]
    assert found.family_size == 12 and "adjusted over the family's 12 comparisons" in found.summary()


def test_a_ratio_of_at_least_one_and_a_half_either_way_reads_as_a_factor():
    """From 1.5x a difference reads as a factor: Go at 0.6 of Rust is 1.67x, not 67%; 1.25 stays 25%."""
    assert findings.Difference("sleep", 10, "", 0.6, 0.55, 0.65, "Go", False).size() == "1.67x"
    assert findings.Difference("sleep", 10, "", 1.8, 1.7, 1.9, "Rust", False).size() == "1.80x"
    assert findings.Difference("sleep", 10, "", 1.5, 1.45, 1.55, "Rust", False).size() == "1.50x"
    assert findings.Difference("sleep", 10, "", 1.25, 1.2, 1.3, "Rust", False).size() == "25%"


def test_a_difference_says_where_the_other_variant_pairs_of_its_work_read_otherwise():
    """cpu_loops at N = 10,000: the plain loop (both defaults) "Rust faster 1.18", the local and
    unrolled loops inconclusive; no pair reverses it, so the robustness flag did not say "depends",
    and the finding read as if every way of writing the loop agreed."""
    base = {"workload": "cpu_loops", "n": 10_000, "threads_requested": 2, "arm": "", "shared_params": "inner=100000,u=10",
            "pairing": "paired", "pairs": 9, "ci_level": 0.96, "family_size": 3, "within_margin": False,
            "robustness": "no reversal, 3 pairs (1 Rust, 2 inconclusive)", "go_median": 2.8, "rust_median": 2.35}
    rows = [{**base, "go_variant": v, "rust_variant": v, "go_params": "", "rust_params": "", "go_default": v == "plain",
             "rust_default": v == "plain", "ratio": r, "ratio_ci_low": lo, "ratio_ci_high": hi, "verdict_kind": k,
             "mde": m}
            for v, r, lo, hi, k, m in (("plain", 1.18, 1.08, 1.30, "b", 0.05), ("local", 0.995, 0.958, 1.021,
                                       "inconclusive", 0.04), ("unrolled", 1.0, 0.967, 1.03, "inconclusive", 0.04))]
    found = findings.metric_findings(pd.DataFrame(rows), "elapsed_s")
    assert found.lines()[0].endswith("; the other variant pairs of this work read otherwise: 2 inconclusive")
    agree = pd.DataFrame([{**r, "verdict_kind": "b", "ratio": 1.2, "ratio_ci_low": 1.1, "ratio_ci_high": 1.3}
                          for r in rows])
    assert "otherwise" not in findings.metric_findings(agree, "elapsed_s").lines()[0]
