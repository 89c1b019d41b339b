"""Tables for reading: units, one cell for a ratio with its interval and verdict, p-values with two
significant digits, constant columns in the caption, every row shown; and the golden Markdown of
a comparison table."""
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import report_data
from bench_src.analysis import compare, stats
from bench_src.report import tables, units

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("value, unit, text", [
    (0.01234, "s", "12.3 ms"), (1.5, "s", "1.50 s"), (2.5e-7, "s", "250 ns"), (0.0009996, "s", "1.00 ms"),
    (3.2e-5, "s", "32.0 µs"), (1536, "MiB", "1.50 GiB"), (0.5, "MiB", "512 KiB"), (2048, "B", "2.00 KiB"),
    (12345, "count", "12.3 k"), (2.5e6, "/s", "2.50 M/s"), (0, "s", "0 s"), (np.nan, "s", ""),
])
def test_quantities_are_scaled_to_a_readable_unit(value, unit, text):
    assert units.quantity(value, unit) == text


def test_intervals_ratios_and_p_values():
    assert units.interval(0.0123, 0.0119, 0.0128, "s") == "12.3 ms [11.9, 12.8]"
    assert units.interval(0.0123, np.nan, np.nan, "s") == "12.3 ms"
    assert units.ratio(1.2345, 1.1, 1.4) == "1.23 [1.10, 1.40]"
    # two significant digits, trailing zeros kept: '0.002' and '1e-12' read as one digit
    assert [units.p_value(p) for p in (0.0031, 1.234e-5, 0.5, 0.99996, 0.002, 1e-12, np.nan)] == [
        "0.0031", "1.2e-05", "0.50", "1.0", "0.0020", "1.0e-12", ""]
    # an end never reads as the estimate it differs from
    assert units.ratio(1.0361, 1.0277, 1.0446) == "1.036 [1.028, 1.045]"
    assert units.ratio(0.9975, 0.9961, 0.9983) == "0.9975 [0.9961, 0.9983]"
    assert units.ratio(1.0, 1.0, 1.0) == "1.00 [1.00, 1.00]"
    # an end that excludes 1 by less than six digits show never reads as 1.00
    assert units.ratio(1.0000001, 1.00000005, 1.0000002) == "1.0000001 [1.00000005, 1.0000002]"
    # a detectable effect of a factor either way: never "±48%" for 0.68 to 1.48
    assert [units.detectable(v) for v in (0.045, 0.099, 0.48, 2.75)] == ["±4.5%", "±9.9%", "×/÷ 1.48", "×/÷ 3.75"]
    assert [units.short_count(n) for n in (10, 1000, 3000, 1_500_000)] == ["10", "1k", "3k", "1.5M"]
    assert units.count(1_000_000) == "1,000,000"


def test_a_p_value_of_zero_reads_as_below_the_smallest_shown():
    """A p-value that underflowed to 0 must not read as "0.0": it is below 1e-300, not nothing."""
    assert units.p_value(0.0) == "< 1e-300"
    assert units.p_value(1e-300) == "1.0e-300"


def test_a_lower_end_at_the_floor_reads_as_at_most_the_floor():
    """A time's interval reaching 0 reads "≤ 0": the quantity cannot be below it, and "0" alone would read as measured."""
    assert units.interval(3.56e-6, 0.0, 1.29e-5, "s", floor=0) == "3.56 µs [≤ 0, 12.9]"


def test_a_ratio_whose_interval_lies_below_the_margin_keeps_its_estimate_off_the_margin():
    """0.97996 with its interval under 0.98 must not read "0.980", the margin's own edge."""
    assert units.ratio_point(0.97996, 0.975, 0.97999) == "0.97996"
    assert units.ratio_point(0.97996) == "0.980"


def _comparison() -> pd.DataFrame:
    return compare.compare(report_data.frame(), "elapsed_s")


def test_comparison_table_is_compact_and_formatted():
    raw = _comparison()
    r = tables.comparison(raw)
    f = r.frame
    # one cell holds ratio, interval and verdict; medians carry their unit; p has two significant digits
    ratio_col = f"Go/Rust [{tables.ci_name(raw)}], verdict"
    assert ratio_col != "Go/Rust [CI], verdict", "the table's one level names its intervals"
    sleep = f[(f["workload"] == "sleep") & (f["N"] == "100,000")].iloc[0]
    assert sleep[ratio_col].startswith("1.49 [") and sleep[ratio_col].endswith("] Rust faster")
    assert sleep["Go median"].endswith(" ms") and sleep["Rust median"].endswith(" ms")
    assert all(len(p.replace("0.", "").lstrip("0").replace("e-", "").replace(".", "")) <= 4 for p in f["p (BH)"])
    # the driver is shown on each side, the shared parameters once
    sqlite = f[f["workload"] == "sqlite"].iloc[0]
    assert sqlite["Go"] == "pool (driver=mattn)" and sqlite["Rust"] == "pool (driver=sqlx)"
    assert sqlite["parameters"] == "journal=wal, pool=8"
    # constant columns go to the caption: every row has 10 samples a side
    assert "samples" not in f.columns
    assert "pairing: paired" in r.caption and "samples: 10 pairs" in r.caption
    # the threads each side ran with, not the request alone: Rust's plain loop ran on 1 (all CPUs requested)
    assert set(f.loc[f["workload"] == "cpu_loops", "threads"]) == {"Go 2, Rust 1 (all CPUs requested)"}
    assert set(f.loc[f["workload"] != "cpu_loops", "threads"]) == {"2"}
    assert "false discovery rate 5%" in r.caption and "exactly when its interval excludes 1" in r.caption
    # no raw float with six decimals anywhere, and no empty column
    assert not f.apply(lambda c: c.str.contains(r"\.\d{5,}").any()).any()
    assert not (f == "").all().any()
    assert len(f) == len(raw)


def test_a_row_that_could_not_be_tested_reads_not_tested_not_inconclusive():
    # the findings and the Method count a comparison without pairs that count as "not tested", apart
    # from the open rows; its table row says the same, not "inconclusive" beside an empty ratio
    raw = compare.compare(report_data.frame(failing=(("sqlite", "rust", "pool", 100),)), "elapsed_s")
    untested = compare.untested(raw)
    assert untested.any(), "a comparison whose Rust cell failed in every sample"
    f = tables.comparison(raw).frame
    ratio_col = f"Go/Rust [{tables.ci_name(raw)}], verdict"
    assert set(f.loc[untested.to_numpy(), ratio_col]) == {"not tested"}
    assert not f.loc[~untested.to_numpy(), ratio_col].str.contains("not tested").any()
    assert not (f[ratio_col] == "inconclusive").any(), "every inconclusive row shows its ratio and interval"


def test_the_threads_shown_are_those_the_samples_ran_with():
    # An article run's Rust cpu_loops loops (plain, local, unrolled) ran on 1 thread under a caption
    # saying 2: every table and figure caption states the threads the samples reported (`threads`),
    # with the request beside where they differ, and a Go-vs-Rust row whose two sides ran with
    # different threads says so in its warning (like for like: the same threads for both runtimes)
    from bench_src.report.figures.axes import threads_caption

    df = report_data.frame().assign(threads_requested=2)
    raw = compare.compare(df, "elapsed_s")
    loops = raw[raw["workload"] == "cpu_loops"]
    assert set(loops["go_threads"]) == {2} and set(loops["rust_threads"]) == {1}
    assert loops["warning"].str.contains("not the same threads: Go ran with 2, Rust with 1 where 2 were requested "
                                         "for both").all()
    assert not raw.loc[raw["workload"] != "cpu_loops", "warning"].str.contains("same threads").any()
    f = tables.comparison(raw).frame
    assert set(f.loc[f["workload"] == "cpu_loops", "threads"]) == {"Go 2, Rust 1 (2 requested)"}
    assert set(f.loc[f["workload"] != "cpu_loops", "threads"]) == {"2"}
    assert threads_caption(raw) == "threads: 2 (Rust plain ran 1)"
    # a cell's own: the summary and the variants table
    summary = stats.summarize(df, "elapsed_s")
    s = tables.summary(summary).frame
    assert set(s.loc[(s["workload"] == "cpu_loops") & (s["lang"] == "rust"), "threads"]) == {"1 (2 requested)"}
    assert set(s.loc[(s["workload"] == "threads_vs_tasks") & (s["variant"] == "thread"), "threads"]) == {
        "1,000 (2 requested)"}
    assert threads_caption(summary) == "threads: 2 (Rust plain ran 1; Rust thread ran one per task)"
    v = tables.variants(compare.compare_variants(df, "elapsed_s")).frame
    assert set(v.loc[v["variant"] == "thread", "threads"]) == {"variant 1,000, baseline 2 (2 requested)"}


def test_comparison_tolerates_new_and_missing_columns():
    raw = _comparison()
    shared = [c for c in raw.columns if c.startswith("p_") and c not in ("p_value", "p_adjusted")]
    extended = raw.drop(columns=shared).assign(pairing="paired", pairs=10, mde=np.linspace(0.031, 0.05, len(raw)), go_model="task",
                          rust_model="task", verdict_kind=tables.verdict_kinds(raw).values, within_margin=False,
                          p_work=np.where(raw["workload"] == "sleep", "0", None))
    r = tables.comparison(extended)
    assert r.frame["MDE"].iloc[0] == "±3.1%"
    assert "pairing: paired" in r.caption and "model: task" in r.caption and "samples: 10 pairs" in r.caption
    # shared parameters come from the p_<key> columns when the table has them
    assert set(r.frame.loc[r.frame["workload"] == "sleep", "parameters"]) == {"work=0"}
    assert set(r.frame.loc[r.frame["workload"] != "sleep", "parameters"]) == {""}
    reduced = raw.drop(columns=["p_adjusted", "cliffs_delta", "warning", "go_params", "rust_params"])
    g = tables.comparison(reduced).frame
    assert "p" in g.columns and "p (BH)" not in g.columns and len(g) == len(raw)


def test_verdict_kinds_from_the_column_or_the_text():
    t = pd.DataFrame({"verdict": ["Go faster", "Rust smaller", "equivalent within ±2%", "inconclusive", None]})
    assert tables.verdict_kinds(t).tolist() == ["a", "b", "equivalent", "inconclusive", "inconclusive"]
    t["verdict_kind"] = ["b", "b", "b", "b", "b"]
    assert tables.verdict_kinds(t).tolist() == ["b"] * 5


def test_constant_and_empty_columns_leave_the_table_for_the_caption():
    frame = pd.DataFrame({"a": ["x", "y"], "b": ["same", "same"], "c": ["", ""], "d": [None, None]})
    kept, constants = tables.split_constants(frame)
    assert list(kept.columns) == ["a"] and constants == {"b": "same"}
    one_row, constants = tables.split_constants(frame.iloc[:1])
    assert "b" in one_row.columns and constants == {}  # one row: nothing is "constant"


def test_status_and_failures_show_every_row():
    df = report_data.frame(failing=(("sqlite", "rust", "pool", 100),))
    counts = tables.status_counts(df)
    status = tables.status(counts)
    cells = df["cell_id"].nunique()
    assert len(status.frame) == cells
    assert status.frame.iloc[0]["workload"] == "sqlite"  # cells with a problem first
    assert status.frame.iloc[0]["failed"] == "10 +1 w" and status.frame.iloc[0]["ok"] == ""
    html = status.to_html()
    assert html.count("</tr>") == cells + 1 and "rows x" not in html and "..." not in html
    failures = tables.failures(tables.failure_groups(df))
    assert len(failures.frame) == 1 and "11 samples not ok" in failures.caption
    assert "exit 2: unknown param \\| see usage" in failures.to_markdown()  # a | inside a cell is escaped
    # a long table is still shown in full as a notebook displays it
    many = pd.concat([counts.assign(n=counts["n"] + k * 10**7) for k in range(8)], ignore_index=True)
    assert tables.status(many)._repr_html_().count("</tr>") == 8 * cells + 1


def test_summary_and_per_task_units():
    from bench_src.analysis import scaling, stats

    df = report_data.frame()
    s = tables.summary(stats.summarize(df, "peak_rss_mib")).frame
    assert s["median [CI]"].str.contains(r" (?:MiB|KiB) \[").all()
    assert "95% CI" not in " ".join(s.columns), "the level is the coverage shown beside it (93.5% at 10 samples)"
    readable_costs = tables.per_task(scaling.per_task_cost(df, "elapsed_s"))
    # the exponent is of the whole value: a fixed cost keeps it below 1 however linear the per-N cost
    assert "fitted to the whole value, fixed cost included" in readable_costs.caption
    costs = readable_costs.frame
    sleep = costs[costs["workload"] == "sleep"].iloc[0]
    assert sleep["per N [95% CI]"].endswith(" per task")
    cpu = costs[costs["workload"] == "cpu_loops"].iloc[0]
    assert cpu["per N [95% CI]"].endswith(" per N")  # N is an array length, not a task


def test_the_caption_says_what_the_ratio_estimates():
    """The ratio is exp of the paired estimate, the centre of the per-block log ratios (the
    Hodges-Lehmann estimate; their mean where Student's t alone decides), not the ratio of the two
    medians beside it: the caption says which, by the tests the table's rows used."""
    from bench_src.analysis import paired

    df = report_data.frame()
    time = compare.compare(df, "elapsed_s")
    assert set(time["test"]) == {"signed-rank"}
    caption = tables.comparison(time).caption
    assert "Go/Rust: the centre of the per-block ratios (Hodges-Lehmann), not the ratio of the medians shown." in caption
    # what the caption says: one row's ratio is exp of the median of its Walsh averages
    row = time[(time["workload"] == "sleep") & (time["n"] == 100_000)].iloc[0]
    cells = df[(df["workload"] == "sleep") & (df["n"] == 100_000) & df["valid"]]
    per_block = cells.pivot_table(index="block", columns="lang", values="elapsed_s")
    d = np.log(per_block["go"]) - np.log(per_block["rust"])
    assert row["ratio"] == pytest.approx(np.exp(float(paired.rank_estimate(paired.walsh(d.to_numpy())))))
    # peak memory on its page grid: rows whose values tie are tested by Student's t alone, on the mean
    memory = compare.compare(df, "peak_rss_mib")
    assert set(memory["test"]) == {"t", "signed-rank"}
    assert ("Go/Rust: the centre of the per-block ratios (Hodges-Lehmann; their geometric mean where values tie and "
            "Student's t alone decides), not the ratio of the medians shown.") in tables.comparison(memory).caption
    tied = memory[memory["test"] == "t"]
    assert "Go/Rust: the geometric mean of the per-block ratios (Student's t)" in tables.comparison(tied).caption
    # the other tables of one cell against another say it too
    for readable in (tables.variants(compare.compare_variants(df, "elapsed_s")),
                     tables.models(compare.compare_models(df, "elapsed_s"))):
        assert "ratio: the centre of the per-block ratios (Hodges-Lehmann), not the ratio of the medians shown." \
            in readable.caption


def test_golden_markdown_of_a_comparison_table():
    text = tables.readable(_comparison(), "go_vs_rust_elapsed_s").to_markdown()
    golden = GOLDEN / "go_vs_rust_elapsed_s.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text)
    assert text == golden.read_text(), "formatting changed: review the diff, then UPDATE_GOLDEN=1 to accept it"


def aa_frame():
    """An A/A run of the two sleep cells at N = 10: every sample of each cell taken in arm A and in arm
    B (the same program and arguments)."""
    from bench_src.store import mark_valid, samples_frame

    out = []
    for arm, seed in (("A", 7), ("B", 8)):
        for r in report_data.records(seed=seed, cells=report_data.CELLS[:2]):
            out.append({**r, "arm": arm, "cell_id": f"{r['cell_id']}|{arm}", "sample_id": f"{r['sample_id']}|{arm}",
                        "seq": 2 * r["seq"] + (arm == "B")})
    return mark_valid(samples_frame(out))


def test_the_rows_of_an_aa_run_say_which_language_variant_and_arm_they_are():
    from bench_src.analysis import quality, robustness, stats

    df = aa_frame()
    aa = tables.readable(compare.compare_arms(df, "elapsed_s"), "aa_elapsed_s")
    # one row per language's cell, A against B: the row names its language and variant
    assert list(zip(aa.frame["lang"], aa.frame["variant"])) == [("go", "waitgroup"), ("rust", "join-handles")]
    assert list(aa.frame.columns[-4:]) == ["B median", "A/B [97.5% CI], verdict", "Cliff's δ", "MDE"]
    assert "A/B < 1: arm A needs less" in aa.caption
    # Go vs Rust once in each arm: the arm tells the rows apart
    go_rust = compare.compare(df, "elapsed_s")
    for name, t in (("go_vs_rust_elapsed_s", go_rust), ("samples_needed_elapsed_s", quality.samples_needed(go_rust)),
                    ("robustness_elapsed_s", robustness.robustness(table=go_rust, metric="elapsed_s"))):
        f = tables.readable(t, name).frame
        assert list(f["arm"]) == ["A", "B"], name
    drift = tables.readable(quality.drift(df, "elapsed_s"), "drift_elapsed_s").frame
    assert sorted(zip(drift["lang"], drift["variant"], drift["arm"])) == [
        ("go", "waitgroup", "A"), ("go", "waitgroup", "B"), ("rust", "join-handles", "A"), ("rust", "join-handles", "B")]
    summary = tables.readable(stats.summarize(df, "elapsed_s"), "summary_elapsed_s").frame
    assert len(set(zip(summary["lang"], summary["arm"]))) == len(summary) == 4
    # a run without arms shows no arm column
    assert "arm" not in tables.readable(_comparison(), "go_vs_rust_elapsed_s").frame


def cores_frame():
    """The two sleep cells at N = 10 and 1,000, each pinned to 1 and to 2 cores in the same blocks: Go
    twice as fast on 2 cores, Rust 1.25 times, and Go's peak 10% higher on 2 cores, Rust's the same."""
    from bench_src.store import mark_valid, samples_frame

    out = []
    for k, seed in ((1, 7), (2, 8)):
        for r in report_data.records(seed=seed, cells=report_data.CELLS[:4]):
            faster = 2.0 if r["lang"] == "go" else 1.25
            larger = 1.1 if r["lang"] == "go" else 1.0
            out.append({**r, "cores": k, "threads_requested": k, "cell_id": f"{r['cell_id']}|c={k}",
                        "sample_id": f"{r['sample_id']}|c={k}", "seq": 2 * r["seq"] + k - 1,
                        "elapsed_ns": int(r["elapsed_ns"] / faster ** (k - 1)),
                        "maxrss_kb": int(r["maxrss_kb"] * larger ** (k - 1)),
                        "peak_rss_bytes": int(r["peak_rss_bytes"] * larger ** (k - 1))})
    return mark_valid(samples_frame(out))


GOLDEN_RATIO_VS_CORES = "\n".join([
    "**Go vs Rust against cores: workload time**",
    "",
    "Every row: workload: sleep; parameters: kernel=xorshift, work=0; Go: waitgroup; Rust: join-handles; model: task; "
    "pairing: paired; samples: 10 pairs. Cores: the CPUs each program was pinned to, with as many threads. "
    "Go/Rust < 1: Go needs less; each core count's interval and verdict are the Go-vs-Rust table's, at its family's "
    "level. Change: per block, Go/Rust at these cores over Go/Rust at 1 core (the paired test of the change, "
    "Benjamini-Hochberg over the changes of this metric, each interval at the level its verdict is read from); "
    "Go/Rust lower or higher: its interval excludes 1, the ratio moved with the cores; blank at 1 core.",
    "",
    "| N     | cores   | Go median   | Rust median   | Go/Rust [96.2% CI], verdict                       | p (BH)   | "
    "Cliff's δ   | MDE    | change from 1 core [95.0% CI], verdict   | change p (BH)   | change pairs   |",
    "|:------|:--------|:------------|:--------------|:--------------------------------------------------|:---------|"
    ":------------|:-------|:-----------------------------------------|:----------------|:---------------|",
    "| 10    | 1       | 299 ms      | 301 ms        | 0.996 [0.983, 1.01] equivalent within ±2%         | 0.43     | "
    "-0.26       | ±1.7%  |                                          |                 |                |",
    "| 10    | 2       | 151 ms      | 239 ms        | 0.629 [0.620, 0.639] Go faster                    | 0.0039   | "
    "-1.00       | ±2.1%  | 0.632 [0.625, 0.640] Go/Rust lower       | 0.0020          | 10             |",
    "| 1,000 | 1       | 309 ms      | 305 ms        | 1.012 [1.004, 1.018] Rust faster, by less than 2% | 0.0078   | "
    "+0.78       | ±0.99% |                                          |                 |                |",
    "| 1,000 | 2       | 155 ms      | 245 ms        | 0.634 [0.627, 0.642] Go faster                    | 0.0039   | "
    "-1.00       | ±1.6%  | 0.626 [0.622, 0.634] Go/Rust lower       | 0.0020          | 10             |",
    ""])

GOLDEN_PEAK_RSS_WITH_CORES = "\n".join([
    "**Peak RSS with cores**",
    "",
    "Every row: workload: sleep; parameters: kernel=xorshift, work=0; cores: 1 → 2; samples: 10 pairs. Peak RSS at "
    "1 core over peak RSS at k cores, not a speed-up: above 1 the program needs less with more cores, below 1 more. "
    "Per block (the same program, variant, N and parameters, pinned to k CPUs with k threads), the paired test of "
    "each cell's quotient, Benjamini-Hochberg over this metric's quotients; a verdict other than equivalent or "
    "inconclusive: its interval excludes 1.",
    "",
    "| lang   | variant      | N     | peak RSS at 1 core / at k cores [97.5% CI], verdict   | p (BH)   |",
    "|:-------|:-------------|:------|:------------------------------------------------------|:---------|",
    "| go     | waitgroup    | 10    | 0.906 [0.898, 0.913] larger with more cores           | 0.0039   |",
    "| go     | waitgroup    | 1,000 | 0.910 [0.902, 0.918] larger with more cores           | 9.7e-09  |",
    "| rust   | join-handles | 10    | 0.997 [0.983, 1.01] equivalent within ±2%             | 0.92     |",
    "| rust   | join-handles | 1,000 | 1.001 [0.9865, 1.015] equivalent within ±2%           | 0.92     |",
    ""])


def test_golden_markdown_of_the_cores_tables():
    from bench_src.analysis import cores

    df = cores_frame()
    assert tables.readable(cores.ratio_vs_cores(df, "elapsed_s"), "ratio_vs_cores_elapsed_s").to_markdown() \
        == GOLDEN_RATIO_VS_CORES
    assert tables.readable(cores.speedup(df, "peak_rss_mib"), "speedup_peak_rss_mib").to_markdown() \
        == GOLDEN_PEAK_RSS_WITH_CORES


def test_the_cores_tables_read_as_the_other_tables_do():
    from bench_src.analysis import cores

    df = cores_frame()
    for metric in ("elapsed_s", "peak_rss_mib", "cpu_s"):
        for name, raw in ((f"ratio_vs_cores_{metric}", cores.ratio_vs_cores(df, metric)),
                          (f"speedup_{metric}", cores.speedup(df, metric))):
            r = tables.readable(raw, name)
            assert r.title[:1].isupper() and "_" not in r.title, r.title
            # no internal field in the caption or the header, no raw float
            text = r.caption + " ".join(r.frame.columns)
            for field in ("go_default", "family:", "ci_level", "looks:", "verdict_kind", "from_cores", "speedup_ci"):
                assert field not in text, (name, field)
            assert not r.frame.apply(lambda c: c.str.contains(r"\.\d{5,}").any()).any(), name
            assert len(r.frame) == len(raw) and len(r.frame.columns) <= 12, name
    speed = tables.readable(cores.speedup(df, "elapsed_s"), "speedup_elapsed_s")
    assert speed.title == "Speed-up with cores: workload time"
    assert list(speed.frame["speed-up [95.0% CI], verdict"].str.split(" ").str[-4:].str.join(" ")) == \
        ["faster with more cores"] * 4
    cpu = tables.readable(cores.speedup(df, "cpu_s"), "speedup_cpu_s")
    assert "not a speed-up" in cpu.caption and "speed-up [" not in " ".join(cpu.frame.columns)
    # each core count's ratio is the Go-vs-Rust table's cell, with the medians in their unit
    ratio = tables.readable(cores.ratio_vs_cores(df, "peak_rss_mib"), "ratio_vs_cores_peak_rss_mib").frame
    assert ratio["Go median"].str.endswith(" MiB").all() and set(ratio["cores"]) == {"1", "2"}


def test_samples_needed_reads_as_a_comparison_with_the_target():
    from bench_src.analysis import quality

    needed = quality.samples_needed(_comparison(), 0.02)
    f = tables.readable(needed, "samples_needed_elapsed_s").frame
    assert list(f.columns[-2:]) == ["CI half-width", "samples needed"]
    sqlite = f[f["workload"] == "sqlite"].iloc[0]
    assert sqlite["CI half-width"].startswith(("±", "×/÷ ")) and int(sqlite["samples needed"].replace(",", "")) > 10
    wide = quality.samples_needed(pd.DataFrame({"ratio": [0.175], "ratio_ci_low": [0.116], "ratio_ci_high": [0.277],
                                                "go_samples": [10], "rust_samples": [10]}), 0.02)
    assert list(tables.readable(wide, "samples_needed_elapsed_s").frame["CI half-width"]) == ["×/÷ 1.55"], \
        "read as the MDE column reads a factor, not ±46% of a ratio it reaches 58% above"
    # the extrapolation's assumption is stated beside the counts it gives
    caption = tables.readable(needed, "samples_needed_elapsed_s").caption
    assert "shrank as 1 / sqrt(n) with the test's critical value held where it is" in caption
    # the target is the analysis's equivalence margin, and the table says which
    assert "would be ±2% if" in caption
    wider = tables.readable(quality.samples_needed(_comparison(), 0.05), "samples_needed_elapsed_s")
    assert "would be ±5% if" in wider.caption and "for a ±5% interval" in wider.title


def test_an_interval_that_excludes_one_never_reads_as_reaching_it():
    from bench_src.report import units
    assert units.ratio(1.05, 1.0034, 1.13) == "1.05 [1.003, 1.13]"
    assert units.ratio(0.997, 0.995, 0.9998) == "0.997 [0.995, 0.9998]"
    assert units.ratio(1.0, 0.99, 1.01) == "1.00 [0.990, 1.01]", "an interval across 1 keeps 3 digits"
    assert units.ratio(1.2, 1.1, 1.3) == "1.20 [1.10, 1.30]"
    assert units.off_one(1.0035) == "1.004" and units.off_one(0.99996) == "0.99996"


def test_no_interval_end_reads_as_if_it_sat_inside_the_margin_when_it_does_not():
    # 0.97986 is below the margin's 0.98: "[0.980, 1.02] inconclusive" would read as an equivalence
    from bench_src.report import units
    assert units.ratio(0.989, 0.979862, 1.016179) == "0.989 [0.9799, 1.016]"
    assert units.ratio(1.01, 0.985, 1.0203) == "1.01 [0.985, 1.0203]"
    assert units.ratio(1.0, 0.9997, 1.01) == "1.00 [0.9997, 1.01]", "an end below 1 never reads 1.00"
    assert units.ratio(1.01, 0.98, 1.02) == "1.01 [0.980, 1.02]", "an end on the edge stays on it"
    # the estimate keeps the side of an edge that its whole interval is on
    assert units.ratio(1.0021, 1.0012, 1.0035) == "1.002 [1.001, 1.004]"
    assert units.ratio_point(0.9997, 0.99, 1.01) == "1.00"


def test_coverages_read_as_one_level_or_a_range_marked_where_a_bound():
    from bench_src.report import units
    assert units.coverage([0.9346, 0.9346]) == "93.5%"
    assert units.coverage([0.9346, 0.9614, float("nan")], ["exact", "at least", ""]) == "≥ 93.5–96.1%"
    assert units.coverage([float("nan")]) == ""


def test_a_detectable_effect_from_a_factor_of_1_1_reads_as_a_factor():
    from bench_src.report import units
    assert units.detectable(0.031) == "±3.1%"
    assert units.detectable(1.892856) == "×/÷ 2.89", "a ratio cannot be 189% lower"
    # ±49% would read as 0.51 to 1.49 where it means 0.67 to 1.49
    assert units.detectable(0.49) == "×/÷ 1.49" and units.detectable(0.1) == "×/÷ 1.10"
    assert units.detectable(0.0999) == "±10%"


def test_the_hosts_tables_print_their_ratios_as_ratios():
    # the across-hosts and per-host tables: an interval that excludes 1 keeps the digits that show it
    import pandas as pd

    row = {"workload": "mysql", "n": 1000, "threads_requested": 2, "arm": "", "shared_params": "pool=151",
           "go_variant": "pool", "rust_variant": "pool", "go_params": "", "rust_params": "", "metric": "elapsed_s",
           "ratio": 1.05, "ratio_ci_low": 1.0034, "ratio_ci_high": 1.13, "ci_level": 0.95, "verdict_kind": "b",
           "hosts": 2, "tau": 0.01, "i2": 0.1, "holds_on_text": "2 of 2", "host_verdicts": "b,b",
           "host_label": "a CPU"}
    t = pd.DataFrame([row])
    assert tables.hosts.combined(t).frame["Go/Rust [interval]"].iloc[0] == "1.05 [1.003, 1.13]"
    assert tables.hosts.per_host(t).frame["Go/Rust [interval]"].iloc[0] == "1.05 [1.003, 1.13]"
    # a cluster run's report exports them in the same reading form, by their names
    assert "holds on" in tables.readable(t, "across_hosts_elapsed_s").frame.columns
    assert list(tables.readable(t, "per_host_peak_rss_mib").frame["host"]) == ["a CPU"]
    # a run with no comparison on any host (one language): an empty table, not a KeyError
    assert tables.readable(pd.DataFrame(), "per_host_elapsed_s").frame.empty
    assert tables.readable(pd.DataFrame(), "across_hosts_elapsed_s").frame.empty
    tables.readable(pd.DataFrame(), "per_host_elapsed_s").to_markdown()


def test_intervals_of_several_families_are_named_by_their_levels():
    one = pd.DataFrame({"ci_level": [0.951, 0.951]})
    several = pd.DataFrame({"ci_level": [0.951, 0.997, np.nan]})
    assert tables.ci_name(one) == "95.1% CI"
    assert tables.ci_name(several) == "CI at 95.1–99.7%, each at its family's level"
    assert tables.ci_name(pd.DataFrame({"ratio": [1.0]})) == "CI"


def test_a_row_without_a_peak_that_counts_is_not_said_to_be_within_a_baseline():
    # sleep at N = 1,000 in a quick run: none of Go's samples held its N tasks at once, so Go has no
    # peak; Rust is 812 KiB above its baseline: the row has no ratio, and not because a side is
    # within its baseline
    row = {"workload": "sleep", "n": 1000, "threads_requested": 2, "shared_params": "kernel=xorshift,work=0",
           "go_variant": "waitgroup", "rust_variant": "join-handles", "go_median": np.nan, "rust_median": 6.26,
           "ratio": np.nan, "verdict": "inconclusive", "verdict_kind": "inconclusive",
           "go_baseline_mib": 9.70, "rust_baseline_mib": 5.47, "rust_above_mib": 0.793, "above_ci_level": 0.95}
    both = {**row, "n": 10000, "rust_median": np.nan, "rust_above_mib": np.nan}
    f = tables.memory_above_baseline(pd.DataFrame([row, both])).frame
    # the Go-vs-Rust cell beside it reads as in the Go vs Rust table (memory.above_baseline keeps its verdict_kind)
    assert f["Go/Rust [CI], verdict"].tolist() == ["not tested", "not tested"]
    above = f["Go/Rust above baseline [95% CI]"].tolist()
    assert above == ["no ratio: no peak of Go counts (the Go vs Rust table's warning says why)",
                     "no ratio: no peak of Go or Rust counts (the Go vs Rust table's warning says why)"]


def test_the_drift_table_shows_the_corrected_p_its_verdict_is_read_from():
    # a cell with p = 0.0038 before the correction read "drift: no" under a caption "drift:
    # Holm-corrected p < 0.05", without the corrected p that explains it
    from bench_src.analysis import quality

    raw = quality.drift(report_data.frame(), "elapsed_s")
    r = tables.readable(raw, "drift_elapsed_s")
    f = r.frame
    assert "p (Holm)" in f.columns and "p: before the correction" in r.caption
    assert f["p (Holm)"].tolist() == [units.p_value(v) for v in raw.sort_values(
        "drift", key=lambda d: ~d.astype(bool), kind="stable")["p_holm"]]
    assert r.caption.count("before the correction") == 1


def test_memory_above_baseline_names_the_parameters_that_tell_its_rows_apart():
    """Rows of one workload and N that differ only by a parameter (idle tasks released or sleeping,
    ping-pong's buffer and mode, sleep's work) each say which they are."""
    from bench_src.analysis import memory

    def pair(shared, go_own="", rust_own=""):
        return {"workload": "idle_tasks", "n": 10_000, "threads_requested": 2, "shared_params": shared,
                "go_variant": "goroutine", "rust_variant": "spawn",
                "go_params": ",".join(filter(None, [shared, go_own])),
                "rust_params": ",".join(filter(None, [shared, rust_own])),
                "go_median": 37.0, "rust_median": 10.0, "ratio": 3.7, "ratio_ci_low": 3.6, "ratio_ci_high": 3.8,
                "verdict": "Rust smaller", "verdict_kind": "b"}

    pairs = pd.DataFrame([pair("duration_ms=0,wait=release"), pair("duration_ms=3000,wait=sleep"),
                          {**pair("pool=64", "driver=pgx", "driver=sqlx"), "workload": "postgres"}])
    base = pd.DataFrame({"lang": ["go", "rust"], "threads_requested": [2, 2], "baseline_samples": [6, 6],
                         "baseline_mib": [9.7, 5.8]})
    above = memory.above_baseline(pairs, base)
    assert list(above["verdict_kind"]) == ["b"] * 3  # kept, so a row not tested is told by its kind, not its text
    f = tables.memory_above_baseline(above).frame
    shown = f.drop(columns=[c for c in f.columns if "above" in c or "baseline" in c or "peak" in c])
    assert not shown.duplicated().any(), shown
    assert list(f["parameters"]) == ["duration_ms=0, wait=release", "duration_ms=3000, wait=sleep", "pool=64"]
    assert list(f["Go"]) == ["goroutine", "goroutine", "goroutine (driver=pgx)"]
    assert list(f["Rust"])[-1] == "spawn (driver=sqlx)"


def test_half_a_page_above_a_baseline_is_within_it():
    """Peak RSS is counted in pages: a median of an even number of samples can sit half a page above
    the baseline's without a page more in use, and a ratio over it would be any size (177 in an
    article run, from 2 KiB); a page or more above it counts."""
    from bench_src.analysis import memory

    page = 4096 / 2**20
    base = pd.DataFrame({"lang": ["go", "rust"], "threads_requested": [2, 2], "baseline_samples": [6, 6],
                         "baseline_mib": [9.712890625, 5.798828125]})
    pairs = pd.DataFrame({"workload": ["files_rw", "files_rw"], "n": [10, 100], "threads_requested": [2, 2],
                          "go_median": [10.06, 10.7], "rust_median": [5.798828125 + page / 2, 5.798828125 + page],
                          "ratio": [1.73, 1.68], "ratio_ci_low": [1.70, 1.60], "ratio_ci_high": [1.76, 1.79],
                          "verdict": ["Rust smaller"] * 2})
    out = memory.above_baseline(pairs, base)
    assert np.isnan(out.loc[0, "ratio_above_baseline"])
    assert out.loc[1, "ratio_above_baseline"] == pytest.approx((10.7 - 9.712890625) / page)
    readable = tables.memory_above_baseline(out)
    shown = list(readable.frame["Go/Rust above baseline [95% CI]"])
    assert shown[0] == "Rust within a page of its baseline"
    # without the samples there is no interval, and a ratio without one is never shown as resolved
    assert shown[1] == "253, not resolved (no interval)"
    assert not out["above_resolved"].any()
    assert "less than a page, 4.00 KiB" in readable.caption
    # the baseline is the language's, read off its default idle_tasks program, not each row's program
    assert "the language's default idle_tasks program at N = 1" in readable.caption
    assert "not each program's own" in readable.caption


def test_the_noise_model_of_a_per_task_fit_names_the_weights_and_the_spread_read_off():
    # the lines are weighted as relative errors or as additive noise (scaling.weight_power); the spread's
    # exponent read off the samples is named beside the model unless it prints as 1 or 0
    from bench_src.report.tables.cells import noise_model
    assert noise_model(1.0) == "relative" and noise_model(0.999) == "relative"
    assert noise_model(0.9448) == "relative (spread ~ value^0.94)"
    assert noise_model(0.5) == "relative (spread ~ value^0.5)"
    assert noise_model(0.0) == "additive" and noise_model(0.004) == "additive"
    assert noise_model(0.083) == "additive (spread ~ value^0.083)"
    assert noise_model(float("nan")) == ""


def test_a_comparison_in_both_the_models_and_the_variants_table_says_so_in_each():
    # Rust's OS threads against Rust's default tokio tasks sits in both families, each adjusted over
    # its own comparisons: a reader who meets two intervals for the same samples is told why.
    df = report_data.frame()
    models = compare.compare_models(df, "elapsed_s")
    variants = compare.compare_variants(df, "elapsed_s")
    same = models[(models["lang"] == "rust") & (models["ref_lang"] == "rust")]
    assert len(same) == 1 and same["ref_variant"].iloc[0] == "tokio", "the case: one shared comparison"
    assert (models["ref_lang"] != models["lang"]).any(), "and a cross-language one that is not shared"
    assert "1 row compares another model with its language's default tasks and also sits in the variants table" \
        in tables.readable(models, "models_elapsed_s").caption
    assert "1 row compares another model with its language's default tasks and also sits in the models table" \
        in tables.readable(variants, "variants_elapsed_s").caption
    others = variants[variants["model"] == "task"]
    assert "also sits" not in tables.readable(others, "variants_elapsed_s").caption


def test_the_rows_in_both_tables_are_counted_from_the_rows_the_caption_is_above():
    # cpu_loops' variants are each a model of their own name (not tasks), but no task cell of the
    # same work exists, so the models table has none of them: the variants table's caption counted
    # them among the rows "also in the models table" (26 against the models table's 20 in a real run)
    loops = {"inner": "100000", "u": "10"}
    cells = [*report_data.CELLS, ("cpu_loops", "go", "local", 1000, loops, 2, 0.180, 9.6),
             ("cpu_loops", "rust", "local", 1000, loops, 1, 0.190, 4.6)]
    df = report_data.frame(cells=cells)
    models = compare.compare_models(df, "elapsed_s")
    variants = compare.compare_variants(df, "elapsed_s")
    assert set(variants["workload"]) == {"cpu_loops", "files_read", "threads_vs_tasks"}
    # each row says whether the other family makes the same comparison: the one (OS threads against
    # Rust's default tokio tasks) in each table
    shared = variants[variants["also_in"] == "models"]
    assert list(zip(shared["variant"], shared["baseline_variant"])) == [("thread", "tokio")]
    assert list(zip(*(models.loc[models["also_in"] == "variants", c] for c in ("variant", "ref_variant")))) == [
        ("thread", "tokio")]
    assert "1 row compares another model with its language's default tasks and also sits in the models table" \
        in tables.readable(variants, "variants_elapsed_s").caption
    assert "1 row compares another model with its language's default tasks and also sits in the variants table" \
        in tables.readable(models, "models_elapsed_s").caption


def _four_cells(go_base_kib, go_above_kib, rust_base_kib, rust_above_kib) -> pd.DataFrame:
    """A samples frame of each language's baseline (idle_tasks at N = 1, released) and a ping-pong
    cell, block by block: each baseline at its level plus the offsets given (KiB), each program its
    baseline's value in that block plus the amounts given."""
    level = {"go": 3380.0, "rust": 2152.0}  # KiB, on the page grid
    rows = []
    for lang, base, above in (("go", go_base_kib, go_above_kib), ("rust", rust_base_kib, rust_above_kib)):
        idle, work = ("goroutine", "channels") if lang == "go" else ("spawn", "multi-thread")
        for block, (b, a) in enumerate(zip(base, above)):
            common = {"lang": lang, "threads_requested": 2, "arm": "", "block": block, "valid": True}
            rows.append({**common, "workload": "idle_tasks", "variant": idle, "n": 1, "p_wait": "release",
                         "p_buffer": None, "p_mode": None, "peak_rss_mib": (level[lang] + b) / 1024,
                         "alive_at_spawn": 1})
            rows.append({**common, "workload": "ping_pong", "variant": work, "n": 1000, "p_wait": None,
                         "p_buffer": "4096", "p_mode": "lockstep", "peak_rss_mib": (level[lang] + b + a) / 1024})
    return pd.DataFrame(rows)


def _above(df: pd.DataFrame) -> pd.DataFrame:
    from bench_src.analysis import memory
    out = memory.above_baseline(compare.compare(df, "peak_rss_mib"), memory.baselines(df), df)
    return out[out["workload"] == "ping_pong"].iloc[0], tables.memory_above_baseline(out)


def test_the_ratio_above_baseline_has_an_interval_that_holds_the_true_ratio():
    """20 blocks, Go 2 MiB and Rust 1 MiB above their baselines, with the baselines' spread of an
    article run (sd 93 and 75 KiB): the ratio of the amounts (2) lies in its 95% interval, which is
    bounded and clear of 0 (resolved), and the table says the level."""
    rng = np.random.default_rng(6)

    def kib(sd, size=20):
        return np.round(sd * rng.standard_normal(size) / 4) * 4

    df = _four_cells(kib(93), 2048 + kib(93 * 2 ** 0.5), kib(75), 1024 + kib(75 * 2 ** 0.5))
    row, readable = _above(df)
    assert row["above_blocks"] == 20 and row["above_ci_level"] == 0.95
    assert row["ratio_above_ci_low"] < 2.0 < row["ratio_above_ci_high"]
    assert row["above_resolved"] and row["ratio_above_ci_high"] < 2.3 and row["ratio_above_ci_low"] > 1.7
    assert row["go_above_ci_low"] < 2.0 < row["go_above_ci_high"]
    cell = readable.frame["Go/Rust above baseline [95% CI]"].iloc[-1]
    assert cell.startswith(f"{row['ratio_above_baseline']:.2f} [") and "not resolved" not in cell
    assert "Fieller" in readable.caption and "95%" in readable.caption and "describe" in readable.caption


def test_a_ratio_over_an_amount_the_size_of_the_baselines_spread_is_flagged_not_resolved():
    """An article run's ping-pong read 1.52 from 158 KiB above over 104 KiB above, with baselines
    whose samples spread by 93 and 75 KiB.  Here 6 blocks with the same means: Go's amount is told
    from 0, Rust's is not, so the ratio's set is unbounded and the table says so."""
    go_base, rust_base = [-120, 60, 140, -32, -88, 40], [-80, 92, 20, -100, 68, 0]
    go_above, rust_above = [300, 20, 252, 60, 208, 108], [260, -60, 212, -40, 148, 104]
    row, readable = _above(_four_cells(go_base, go_above, rust_base, rust_above))
    assert row["go_above_mib"] * 1024 == pytest.approx(158) and row["rust_above_mib"] * 1024 == pytest.approx(104)
    assert row["ratio_above_baseline"] == pytest.approx(158 / 104)
    assert row["go_above_ci_low"] > 0 and row["rust_above_ci_low"] < 0
    assert row["ratio_above_ci_high"] == np.inf and not row["above_resolved"]
    assert "Rust's amount above its baseline is not told from 0" in row["above_note"]
    cell = readable.frame["Go/Rust above baseline [95% CI]"].iloc[-1]
    assert cell.startswith("1.52, not resolved: unbounded (-∞, -") and cell.endswith(", ∞)"), cell
    assert readable.frame["Rust above [95% CI]"].iloc[-1].startswith("104 KiB [-")
    assert "Rust's amount" in readable.frame["note"].iloc[-1]


def test_when_neither_amount_is_told_from_0_the_note_says_the_set_is_unbounded_and_the_columns_say_their_level():
    """An article run's ping-pong (buffer 4096) read 2.47 [0.558, ∞), "not resolved", with the note
    that the interval reached 0, which the piece shown does not: with neither amount told from 0,
    Fieller's set is unbounded and the piece holding the estimate is what the table shows."""
    go_base, rust_base = [-120, 60, 140, -32, -88, 40], [-80, 92, 20, -100, 68, 0]
    go_above, rust_above = [420, -180, 352, -140, 308, 48], [260, -60, 212, -40, 148, 104]
    row, readable = _above(_four_cells(go_base, go_above, rust_base, rust_above))
    assert row["go_above_ci_low"] < 0 and row["rust_above_ci_low"] < 0 and not row["above_resolved"]
    assert row["above_note"].startswith("neither amount above its baseline is told from 0: the ratio's confidence "
                                        "set is unbounded"), row["above_note"]
    assert "reaches 0" not in row["above_note"]
    level = units.percent(float(row["ci_level"]), digits=3)
    assert f"Go/Rust [{level} CI], verdict" in readable.frame.columns, list(readable.frame.columns)


def test_the_checksum_table_names_a_work_by_the_parameters_that_make_it_in_its_raw_and_readable_forms():
    """One row per work identity stands for every cell of it: the CSV gave the first sample's own
    parameters ("driver=sqlx,pool=64" for a row of four cells of two drivers and two pools), the
    readable table the key's ("" for MySQL, whose driver and pool do not change the work)."""
    from bench_src.plan.model import Cell
    from bench_src.store import equivalence

    rows = []
    for lang, driver, pool in (("go", "go-sql-driver", "64"), ("rust", "sqlx", "64"), ("rust", "sqlx", "151")):
        cell = Cell(workload="mysql", lang=lang, variant="default", n=1000, threads=None,
                    params=(("driver", driver), ("pool", pool)))
        rows.append({"workload": "mysql", "lang": lang, "n": 1000, "status": "ok", "checksum": "00aa",
                     "cell_id": cell.id, "params": f"driver={driver},pool={pool}",
                     "equiv_key": equivalence.key_string(cell)})
    digest = Cell(workload="files_read", lang="go", variant="readfile", n=10, threads=None,
                  params=(("digest", "on"), ("retain", "digest")))
    key = equivalence.key_string(digest)
    rows.append({"workload": "files_read", "lang": "go", "n": 10, "status": "ok", "checksum": "00bb",
                 "cell_id": digest.id, "params": "digest=on,retain=digest", "equiv_key": key})
    identity = ",".join(f"{k}={v}" for k, v in json.loads(key)[2])
    assert identity and equivalence.identity_params(key) == identity
    raw = equivalence.check(pd.DataFrame(rows)).set_index("workload")
    assert raw.loc["mysql", "params"] == "" and raw.loc["mysql", "cells"] == 3
    assert raw.loc["files_read", "params"] == identity
    shown = tables.checksums(raw.reset_index()).frame.set_index("workload")["parameters"]
    assert shown["mysql"] == "" and shown["files_read"] == identity.replace(",", ", ")


def test_the_related_posts_table_quotes_each_published_figure_as_printed():
    table = pd.DataFrame({
        "source": ["a", "b", "c", "d"], "experiment": ["threads_vs_tasks", "threads_vs_tasks", "ping_pong", "x"],
        "lang": ["rust", "rust", "go", "go"], "their_variant": ["std::thread"] * 2 + ["unbuffered channel", "y"],
        "n": [10000, 10000, 1000000, 1], "metric": ["max_rss", "user_cpu", "round_trips", "wall"],
        "unit": ["KiB", "s", "1/s", "s"], "their_value": [94472.0, 0.55, 2208935.0, 4.96],
        "our_median": [93120.5, 0.61234, 3427912.4, float("nan")],
        "our_ci_low": [92001.0, 0.6, 807912.0, float("nan")], "our_ci_high": [94000.0, 0.7, 3871999.0, float("nan")],
        "our_ci_coverage": [0.96875, 0.96875, 0.96875, float("nan")], "our_samples": [6, 6, 6, 0],
        "ours_over_theirs": [0.98569, 1.1133, 1.5518, float("nan")], "note": ["", "", "", "not measured in this run"]})
    frame = tables.readable(table, "reproduce_other_posts").frame
    # before, every float went through 4 significant digits: 94472 read "94470", 2208935 "2209000"
    # and 0.55 "0.5500"
    assert list(frame["theirs"]) == ["94,472 KiB", "0.55 s", "2,208,935 1/s", "4.96 s"]
    assert frame["ours [CI]"].iloc[0] == "93,120 KiB [92,000, 94,000]"
    assert frame["ours [CI]"].iloc[2] == "3,428,000 1/s [807,900, 3,872,000]"
    assert frame["ours [CI]"].iloc[3] == ""
    assert list(frame["CI coverage"])[:3] == ["96.9%"] * 3 and list(frame["ours / theirs"])[:3] == ["0.986", "1.11", "1.55"]
    assert list(frame["samples"]) == ["6", "6", "6", ""], "a row without a sample of ours shows none, not 0"
    # a run without any of the posts' experiments: its caption says so, not "Every row: samples: 0"
    unmeasured = table.assign(our_median=float("nan"), our_ci_low=float("nan"), our_ci_high=float("nan"),
                              our_samples=0, ours_over_theirs=float("nan"))
    readable = tables.readable(unmeasured, "reproduce_other_posts")
    assert "samples: 0" not in readable.caption and "this run took none of these experiments" in readable.caption


def test_a_side_below_its_baseline_and_an_unbounded_ratio_say_so():
    # cpu_loops has no runtime: Rust's peak sits 929 KiB below its (tokio) baseline, which read
    # "within a baseline"; a ratio whose Fieller set is the whole line showed its point, "0.650 (-∞, ∞)"
    from bench_src.report.tables.comparisons import _above_ratio

    below = {"ratio_above_baseline": float("nan"), "go_above_mib": 3.0, "go_above_ci_high": 3.2,
             "rust_above_mib": -0.907, "rust_above_ci_high": -0.726}
    assert _above_ratio(below) == "Rust below its baseline"
    # a page or more under it, its interval reaching 0: not above it, and not "within a page"
    assert _above_ratio({**below, "rust_above_ci_high": 0.2}) == "Rust not above its baseline"
    assert _above_ratio({**below, "rust_above_mib": 0.002, "rust_above_ci_high": 0.01}) == \
        "Rust within a page of its baseline"
    whole = {"ratio_above_baseline": 0.650, "ratio_above_ci_low": float("-inf"), "ratio_above_ci_high": float("inf"),
             "above_resolved": False}
    assert _above_ratio(whole) == "not resolved: every ratio (-∞, ∞)"
    half = {**whole, "ratio_above_baseline": 16.2, "ratio_above_ci_low": 0.799}
    assert _above_ratio(half) == "16.2, not resolved: unbounded"


def test_values_that_never_vary_bound_the_ratio_above_baseline_by_each_cells_half_page():
    """Each of the four cells may be half a page off, so each amount a page: the interval is the box those bounds make."""
    from bench_src.analysis import memory

    page = 4096 / 2**20
    go, go_base, rust, rust_base = (np.full(6, pages * page) for pages in (3000, 1000, 2000, 1000))
    r = memory.amounts_ratio(go, go_base, rust, rust_base)
    assert (r.low, r.high) == pytest.approx((1999 / 1001, 2001 / 999), rel=1e-9)


def test_fewer_blocks_than_the_rule_needs_give_the_ratio_above_baseline_no_interval():
    """The amounts' interval needs as many blocks as a comparison (6): 4 blocks get a note, not a Fieller interval."""
    go_base, rust_base = [-120, 60, 140, -32], [-80, 92, 20, -100]
    go_above, rust_above = [2048, 2100, 1996, 2052], [1024, 1080, 972, 1028]
    row, _ = _above(_four_cells(go_base, go_above, rust_base, rust_above))
    assert row["above_blocks"] == 0 and np.isnan(row["ratio_above_ci_low"]) and not row["above_resolved"]
    assert row["above_note"] == "no interval: 4 blocks hold both programs and both baselines (it needs 6)"


def test_an_unbounded_ratio_above_baseline_is_shown_as_its_whole_set_never_as_one_ray():
    """Where Rust's amount is not told from 0, Fieller's set reaches infinity on both sides: two rays
    (-∞, a] ∪ [b, ∞).  The table showed only the ray that holds the estimate, "1.52 [1.07, ∞)",
    which reads as a ratio of at least 1.07 though the set holds every ratio up to a < 0 as well;
    where neither amount is told from 0, "2.01 [-0.367, ∞)" hid the ray up to -5.95."""
    from bench_src.analysis import memory
    from bench_src.report.tables.comparisons import _above_ratio

    go_base, rust_base = [-120, 60, 140, -32, -88, 40], [-80, 92, 20, -100, 68, 0]
    for go_above, rust_above in (([300, 20, 252, 60, 208, 108], [260, -60, 212, -40, 148, 104]),
                                 ([20, 124, 308, 448, -100, 452], [260, -60, 212, -40, 148, 104])):
        gb, rb = (3380 + np.asarray(go_base)) / 1024, (2152 + np.asarray(rust_base)) / 1024  # as _four_cells
        r = memory.amounts_ratio(gb + np.asarray(go_above) / 1024, gb, rb + np.asarray(rust_above) / 1024, rb)
        a, b = r.gap
        assert not r.y_resolved and a < b and r.contains(a - 1e-9) and r.contains(b + 1e-9)
        assert not r.contains((a + b) / 2) and r.contains(1e6) and r.contains(-1e6)
        row, readable = _above(_four_cells(go_base, go_above, rust_base, rust_above))
        assert (row["ratio_above_gap_low"], row["ratio_above_gap_high"]) == pytest.approx((a, b))
        cell = readable.frame["Go/Rust above baseline [95% CI]"].iloc[-1]
        assert cell == f"{units.beside(r.ratio, (0.0, 1.0))}, not resolved: unbounded " \
                       f"(-∞, {units.beside(a, (0.0, 1.0))}] ∪ [{units.beside(b, (0.0, 1.0))}, ∞)", cell
    # a bounded set is shown as it is, its ends as measured (an amount, so the ratio, may be below 0)
    bounded = {"ratio_above_baseline": 2.1, "ratio_above_ci_low": -0.3, "ratio_above_ci_high": 5.1,
               "ratio_above_gap_low": float("nan"), "ratio_above_gap_high": float("nan"), "above_resolved": False}
    assert _above_ratio(bounded) == "2.10 [-0.300, 5.10], not resolved"


def _golden(name: str, text: str) -> None:
    golden = GOLDEN / f"{name}.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text(), "formatting changed: review the diff, then UPDATE_GOLDEN=1 to accept it"


def test_golden_markdown_of_the_memory_above_baseline_table():
    # every exported table has a golden file: this one is written by every run with idle tasks
    rng = np.random.default_rng(6)

    def kib(sd, size=12):
        return np.round(sd * rng.standard_normal(size) / 4) * 4

    resolved = _four_cells(kib(93), 2048 + kib(93 * 2 ** 0.5), kib(75), 1024 + kib(75 * 2 ** 0.5))
    unresolved = _four_cells([-120, 60, 140, -32, -88, 40], [300, 20, 252, 60, 208, 108],
                             [-80, 92, 20, -100, 68, 0], [260, -60, 212, -40, 148, 104])
    unresolved = unresolved.assign(n=np.where(unresolved["workload"] == "ping_pong", 100000, unresolved["n"]),
                                   block=unresolved["block"] + 100)
    _golden("memory_above_baseline", _above(pd.concat([resolved, unresolved], ignore_index=True))[1].to_markdown())


def test_golden_markdown_of_the_idle_wait_modes_table():
    from bench_src.analysis import memory

    rows = []
    for lang, variant, base in (("go", "goroutine", 2.6), ("rust", "spawn", 0.9)):
        for block in range(8):
            for wait, extra, seconds in (("release", 0.0, 0.004), ("sleep", 0.01 * (block % 3), 3.01)):
                rows.append({"workload": "idle_tasks", "lang": lang, "variant": variant, "n": 10000,
                             "threads_requested": 2, "block": block, "valid": True, "p_wait": wait,
                             "alive_at_spawn": 10000, "peak_rss_mib": base * 10 + extra + 0.004 * block,
                             "elapsed_s": seconds + 0.001 * block})
    _golden("idle_wait_modes", tables.readable(memory.wait_modes(pd.DataFrame(rows)), "idle_wait_modes").to_markdown())


def test_a_fixed_cost_below_0_says_it_is_none():
    # a 2-point fit read "fixed cost -12.0 ms", a cost no program can have
    import report_data
    from bench_src.analysis import scaling

    costs = scaling.per_task_cost(report_data.frame(), "elapsed_s").reset_index(drop=True)
    costs.loc[0, "fixed_cost"] = -0.012
    shown = tables.readable(costs, "per_task_elapsed_s").frame
    texts = list(shown["fixed cost"])
    assert texts[0] == "-12.0 ms (below 0: no fixed cost resolved)", texts[:2]
    assert not any("below 0" in t for t in texts[1:])


def test_a_median_interval_never_collapses_onto_its_centre_and_its_numbers_carry_as_many_digits():
    """A median of 282.755 ms with its interval [282.538, 283.151] read '283 ms [283, 283]'; and a
    ratio whose centre was given a digit more read '1.002 [1.001, 1.01]' (its end 1.0106)."""
    assert units.interval(0.282755, 0.282538, 0.283151, "s") == "282.8 ms [282.5, 283.2]"
    assert units.interval(12.3e-3, 11.9e-3, 12.8e-3, "s") == "12.3 ms [11.9, 12.8]"
    assert units.ratio(1.0021, 1.0012, 1.0106) == "1.002 [1.001, 1.011]"
    # a digit added to a round number says nothing, and values of different sizes keep their own
    assert units.ratio(0.997, 0.995, 0.9998) == "0.997 [0.995, 0.9998]"
    assert units.ratio(0.5, 0.0021, 130.0) == "0.500 [0.00210, 130]"


def test_a_per_task_interval_that_reaches_0_says_no_cost_is_resolved():
    # "3.56 µs [-5.75, 12.9] per task" read as a cost that may be negative, where the figure drew an
    # arrow and a fixed cost below 0 said "no fixed cost resolved": the table says it the same way
    import report_data
    from bench_src.analysis import scaling

    costs = scaling.per_task_cost(report_data.frame(), "elapsed_s").reset_index(drop=True)
    sleep = costs.index[costs["workload"] == "sleep"]
    costs.loc[sleep[0], ["per_task", "per_task_ci_low", "per_task_ci_high"]] = [3.56e-6, -5.75e-6, 12.9e-6]
    costs.loc[sleep[1], ["per_task", "per_task_ci_low", "per_task_ci_high"]] = [-1.2e-6, np.nan, np.nan]
    texts = tables.readable(costs, "per_task_elapsed_s").frame["per N [95% CI]"].tolist()
    assert texts[sleep[0]] == "3.56 µs [≤ 0, 12.9] per task (interval reaches 0: no cost resolved)"
    assert texts[sleep[1]] == "-1.20 µs per task (below 0: no cost resolved)"
    assert sum("resolved" in t for t in texts) == 2
    falling = costs.assign(per_task=-3e-6, per_task_ci_low=-5e-6, per_task_ci_high=-1e-6)
    assert tables.readable(falling, "per_task_elapsed_s").frame["per N [95% CI]"].iloc[sleep[0]] == (
        "-3.00 µs [-5.00, -1.00] per task (below 0: falls as N grows)")


def test_a_per_task_note_counts_one_block_in_the_singular():
    from bench_src.report.tables import cells

    t = pd.DataFrame([{"workload": "sleep", "lang": "go", "variant": "waitgroup", "metric": "elapsed_s", "ns": "10,100",
                       "n_values": 2, "samples": 9, "blocks": 1, "per_task": 1e-4, "fixed_cost": 0.01,
                       "warning": "only 1 block holds every N: no interval (needs >= 6)"}])
    assert cells.per_task(t).frame["note"].iloc[0] == "no interval: every N in only 1 block"


def test_the_robustness_and_idle_wait_tables_show_the_threads_the_samples_ran_with():
    """Both showed the threads requested: a Rust current-thread runtime (1 thread) read "2" in the
    idle-wait table, and cpu_loops' Go on 2 against Rust's loops on 1 read "all CPUs" in the
    robustness table.  Both now show the threads the samples ran with (stats.threads_used, the
    comparison tables' columns), written as the comparison tables write them; the robustness table
    gives the best pair's beside the defaults' where they differ."""
    from bench_src.analysis import memory, robustness
    from bench_src.store import mark_valid, samples_frame

    recs = report_data.records()
    for r in recs:  # Rust's tokio-fs the fastest files_read cell, on one thread
        if r["variant"] == "tokio-fs":
            r["threads"], r["elapsed_ns"] = 1, r["elapsed_ns"] // 3
    go_rust = compare.compare(mark_valid(samples_frame(recs)), "elapsed_s")
    shown = tables.readable(go_rust, "go_vs_rust_elapsed_s").frame
    rob = tables.readable(robustness.robustness(table=go_rust, metric="elapsed_s"), "robustness_elapsed_s").frame

    def threads(frame, workload):
        return set(frame.loc[frame["workload"] == workload, "threads"])

    assert threads(rob, "cpu_loops") == threads(shown, "cpu_loops") == {"Go 2, Rust 1 (all CPUs requested)"}
    assert threads(rob, "files_read") == {"defaults: 2; best: Go 2, Rust 1 (all CPUs requested)"}
    assert threads(rob, "sleep") == {"2"}
    rows = []
    for lang, variant, used in (("go", "goroutine", 2), ("rust", "current-thread", 1)):
        for block in range(6):
            for wait in ("release", "sleep"):
                rows.append({"workload": "idle_tasks", "lang": lang, "variant": variant, "n": 10000,
                             "threads_requested": 2, "threads": used, "block": block, "valid": True, "p_wait": wait,
                             "alive_at_spawn": 10000, "peak_rss_mib": 20 + 0.01 * block, "elapsed_s": 1.0})
    modes = memory.wait_modes(pd.DataFrame(rows))
    assert list(modes["sleep_threads"]) == list(modes["release_threads"]) == [2, 1]
    assert list(tables.readable(modes, "idle_wait_modes").frame["threads"]) == ["2", "1 (2 requested)"]
