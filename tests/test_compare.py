import math

import numpy as np
import pandas as pd
import pytest

from bench_src.analysis import compare, multiplicity, published, quality, rules, scaling


def test_holm_matches_a_hand_worked_example():
    # p sorted: 0.01, 0.02, 0.03, 0.04 (m = 4): 0.01*4 = 0.04; max(0.04, 0.02*3 = 0.06) = 0.06;
    # max(0.06, 0.03*2 = 0.06) = 0.06; max(0.06, 0.04*1) = 0.06
    p = [0.03, 0.01, 0.04, 0.02, np.nan]
    adj = multiplicity.holm(p)
    assert np.allclose(adj[:4], [0.06, 0.04, 0.06, 0.06]) and np.isnan(adj[4])
    assert np.allclose(multiplicity.holm([0.5, 0.001]), [0.5, 0.002])


def test_cliffs_delta_by_counting():
    a, b = [1, 2, 3], [2, 4]
    # pairs a>b: (3,2) = 1; a<b: (1,2),(1,4),(2,4),(3,4) = 4; ties: (2,2) = 1 -> (1 - 4) / 6
    assert compare.cliffs_delta(a, b) == pytest.approx(-0.5)
    assert compare.cliffs_delta([5, 6], [1, 2]) == 1.0


def frame(rows):
    """sleep samples (lang, n, value[, arm]), every task alive at the last spawn as both programs
    count them (validity.all_alive)."""
    return pd.DataFrame([{"workload": "sleep", "variant": "waitgroup" if r[0] == "go" else "join-handles",
                          "threads_requested": None, "params": "kernel=xorshift,work=10", "arm": r[3] if len(r) > 3 else "",
                          "lang": r[0], "n": r[1], "elapsed_s": r[2], "valid": True, "seq": i, "alive_at_spawn": r[1]}
                         for i, r in enumerate(rows)])


def go_half_of_rust(metric: str) -> pd.DataFrame:
    """12 samples a side, Go's values half of Rust's, in `metric` as well as in elapsed_s."""
    rng = np.random.default_rng(2)
    rows = [("go", 10, x) for x in rng.normal(1.0, 0.01, 12)] + [("rust", 10, x) for x in rng.normal(2.0, 0.02, 12)]
    df = frame(rows)
    df[metric] = df["elapsed_s"]
    return df


def test_memory_verdict_says_smaller():
    df = go_half_of_rust("peak_rss_mib")
    assert compare.compare(df, "peak_rss_mib")["verdict"].iloc[0] == "Go smaller"


def test_compare_family_gets_adjusted_p_values_and_verdicts():
    rng = np.random.default_rng(1)
    rows = [("go", 10, x) for x in rng.normal(1.0, 0.01, 20)] + [("rust", 10, x) for x in rng.normal(2.0, 0.02, 20)]
    rows += [("go", 100, x) for x in rng.normal(1.0, 0.003, 20)] + [("rust", 100, x) for x in rng.normal(1.0, 0.003, 20)]
    t = compare.compare(frame(rows))
    v = dict(zip(t["n"], t["verdict"]))
    assert v[10] == "Go faster" and v[100].startswith("equivalent")
    assert (t["p_adjusted"] >= t["p_value"]).all() and (t["pairing"] == "unpaired").all()
    assert t.loc[t["n"] == 10, "cliffs_delta"].iloc[0] == -1.0


def test_aa_run_has_no_significant_difference_after_correction():
    rng = np.random.default_rng(3)
    rows = [("go", n, x, arm) for n in (10, 100, 1000, 10000) for arm in "AB" for x in rng.lognormal(0, 0.05, 20)]
    t = compare.compare_arms(frame(rows))
    assert len(t) == 4
    summary = quality.aa_summary(t)
    assert summary["significant_after_correction"] == 0 and "A/A check" in summary["text"]


def in_blocks(df: pd.DataFrame) -> pd.DataFrame:
    """The k-th sample of every cell taken in block k (a run's design: every block holds every cell)."""
    return df.assign(block=df.groupby(["lang", "n", "arm"]).cumcount())


def test_a_known_per_task_cost_is_recovered_from_the_blocks_whatever_one_wild_block_does():
    rng = np.random.default_rng(4)
    rows = []
    for n in (1000, 10000, 100000, 1000000):
        for _ in range(20):  # 2.5 MiB fixed + 2 KiB per task, 1% noise, plus one wild block
            rows.append(("go", n, (2.5 * 2**20 + 2048 * n) * rng.normal(1, 0.01)))
        rows.append(("go", n, 50 * 2**20 + 2048 * n * 3))
    df = in_blocks(frame(rows))
    df["peak_rss_bytes"] = df["elapsed_s"]
    t = scaling.per_task_cost(df, "peak_rss_bytes")
    row = t.iloc[0]
    assert row["blocks"] == 21 and row["per_task_ci_low"] <= 2048 <= row["per_task_ci_high"]
    assert row["per_task"] == pytest.approx(2048, rel=0.02)
    # a fixed cost bends the log-log line below 1; a pure power law gives its exponent back
    pure = in_blocks(frame([("go", n, 3e-6 * n ** 0.5 * rng.normal(1, 0.01)) for n in (10, 100, 1000, 10000)
                            for _ in range(10)]))
    p = scaling.per_task_cost(pure, "elapsed_s").iloc[0]
    assert p["exponent_ci_low"] <= 0.5 <= p["exponent_ci_high"] and p["exponent"] == pytest.approx(0.5, abs=0.02)


def test_a_condition_shared_by_every_n_of_a_block_shows_in_the_per_task_interval():
    # each block runs 10% faster or slower as a whole (the machine that hour): the per-N typical values
    # lie on a line whatever the blocks did, so a fit to them had no residual and gave an interval of no
    # width; the blocks' own lines differ by their 10%, and the interval says so
    factors = [0.9, 1.1, 0.9, 1.1, 0.9, 1.1, 1.0]
    rows = [("go", n, (0.01 + 1e-4 * n) * f) for b, f in enumerate(factors) for n in (10, 100, 1000, 10000)]
    df = in_blocks(frame(rows))
    row = scaling.per_task_cost(df, "elapsed_s").iloc[0]
    assert row["blocks"] == 7 and row["per_task"] == pytest.approx(1e-4)
    assert row["per_task_ci_low"] <= 0.92e-4 and row["per_task_ci_high"] >= 1.08e-4


def test_the_per_task_interval_is_read_off_the_blocks_that_hold_every_n():
    # a sequential run stopped N = 10,000 after 6 blocks and took 34 more of the others: the line of a
    # block needs every N, so 6 blocks give the interval (and the largest N's 6 samples weigh as 6)
    rng = np.random.default_rng(8)
    rows = [("go", n, (1 + 1e-4 * n) * float(np.exp(0.05 * rng.standard_normal())))
            for b in range(40) for n in (10, 100, 1000, 10000) if b < 6 or n < 10000]
    row = scaling.per_task_cost(in_blocks(frame(rows)), "elapsed_s").iloc[0]
    assert row["blocks"] == 6 and row["samples"] == 126
    assert row["per_task_ci_low"] <= 1e-4 * np.exp(0.05 ** 2 / 2) <= row["per_task_ci_high"]


def test_the_lines_are_weighted_as_relative_errors_or_as_additive_noise_never_in_between():
    # a power read off the same samples leaned the weights on them: with two narrow modes an N whose
    # samples fell more in the upper mode is both higher and more spread, and the interval covered 93.0%
    # (40 blocks on N = 1e3..1e6); one of two models, chosen by the spread read off, covers its level
    typicals = np.array([1.0, 10.0, 100.0])
    assert np.allclose(scaling.line_weights(typicals, 0.6), [1.0, 1e-2, 1e-4])
    assert np.allclose(scaling.line_weights(typicals, 1.0), [1.0, 1e-2, 1e-4])
    assert np.allclose(scaling.line_weights(typicals, 0.4), [1.0, 1.0, 1.0])
    assert np.allclose(scaling.line_weights([-1.0, 10.0, 100.0], 1.0), [1.0, 1.0, 1.0])


def test_a_per_task_fit_says_which_n_it_left_out_for_want_of_a_valid_sample():
    # every sample at N = 1,000 failed (SQLite's "database is locked"): the line goes through the
    # other N, and the row says so rather than show its fixed cost as if the series were whole
    rng = np.random.default_rng(6)
    df = frame([("go", n, 0.01 + 1e-4 * n * rng.normal(1, 0.01)) for n in (10, 100, 1000, 10000) for _ in range(6)])
    df.loc[df["n"] == 1000, "valid"] = False
    row = scaling.per_task_cost(df, "elapsed_s").iloc[0]
    assert row["ns"] == "10,100,10000" and "no valid sample at N = 1,000: fitted without it" in row["warning"]
    whole = scaling.per_task_cost(df.assign(valid=True), "elapsed_s").iloc[0]
    assert "no valid sample" not in whole["warning"]


def idle_frame(alive_short_at=None, blocks=8, seed=7):
    """idle_tasks (Go) at N = 1, 1,000 and 10,000 in `blocks` blocks: 1 ms + 1 us per task, 2 MiB +
    2 KiB per task; at N = `alive_short_at` ten tasks of every sample had finished before the last
    was spawned."""
    rng = np.random.default_rng(seed)
    rows = []
    for b in range(blocks):
        for n in (1, 1000, 10000):
            f = float(np.exp(0.01 * rng.standard_normal()))
            rows.append({"workload": "idle_tasks", "lang": "go", "variant": "goroutine", "threads_requested": None,
                         "params": "wait=sleep", "p_wait": "sleep", "arm": "", "n": n, "block": b, "valid": True,
                         "alive_at_spawn": n - 10 if n == alive_short_at else n,
                         "elapsed_s": (1e-3 + 1e-6 * n) * f, "peak_rss_mib": (2 + 2 / 1024 * n) * f})
    return pd.DataFrame(rows)


def test_a_per_task_fit_reads_the_samples_that_count_for_its_metric():
    # every sample at N = 10,000 had ten tasks finished early: its time counts (the workload it timed
    # is its cell's), its memory does not (validity.counted), and the memory row names that N
    df = idle_frame(alive_short_at=10000)
    time_row = scaling.per_task_cost(df, "elapsed_s").iloc[0]
    assert time_row["ns"] == "1,1000,10000" and time_row["warning"] == ""
    memory_row = scaling.per_task_cost(df, "peak_rss_mib").iloc[0]
    assert memory_row["ns"] == "1,1000"
    assert "no sample with every task alive at N = 10,000: fitted without it" in memory_row["warning"]


def test_drift_is_flagged_only_when_present():
    rng = np.random.default_rng(5)
    steady = [("go", 10, x) for x in rng.normal(1, 0.01, 30)]
    drifting = [("rust", 10, 1 + 0.01 * i + rng.normal(0, 0.002)) for i in range(30)]
    d = quality.drift(frame(steady + drifting))
    flags = dict(zip(d["lang"], d["drift"]))
    assert flags == {"go": False, "rust": True}


def test_six_steadily_rising_samples_are_not_called_a_drift_among_many_cells():
    # a perfect rank correlation of 6 samples has exact p = 2 / 6! = 0.0028 (scipy's approximation
    # says 0): among 30 cells, Holm's correction leaves it far from 5%
    rng = np.random.default_rng(6)
    rows = [("rust", 10, 1 + 0.01 * i) for i in range(6)]
    rows += [("go", n, x) for n in range(100, 129) for x in rng.normal(1, 0.01, 6)]
    d = quality.drift(frame(rows))
    rising = d[d["lang"] == "rust"].iloc[0]
    assert rising["spearman_rho"] == pytest.approx(1.0) and rising["p_value"] == pytest.approx(2 / 720)
    assert not d["drift"].any(), d[d["drift"]]
    assert quality.spearman_p(range(6), [1, 1, 2, 2, 3, 3])[1] == pytest.approx(0.0222, abs=1e-4)


def test_samples_needed_scales_with_the_square_of_the_width():
    # ±4% (on the log scale, where the interval is built) at 10 pairs: (log 1.04 / log 1.02)^2 x 10 = 39.2
    t = pd.DataFrame({"ratio": [1.0], "ratio_ci_low": [1 / 1.04], "ratio_ci_high": [1.04], "go_samples": [10],
                      "rust_samples": [10]})
    needed = quality.samples_needed(t, 0.02)
    assert needed["samples_needed"].iloc[0] == 40 and needed["half_width"].iloc[0] == pytest.approx(0.04)
    # by default the target is the equivalence margin, the rules'
    assert quality.samples_needed(t)["target_half_width"].iloc[0] == rules.MARGIN


def test_a_wide_interval_s_half_width_is_the_factor_it_reaches_either_way():
    # idle_tasks N = 1 of a quick run: 0.175 [0.116, 0.277] reaches 34% below and 58% above its ratio;
    # its half-width is the factor sqrt(0.277 / 0.116) = 1.545 either way, not ±46% of the ratio
    t = pd.DataFrame({"ratio": [0.175], "ratio_ci_low": [0.116], "ratio_ci_high": [0.277], "go_samples": [10],
                      "rust_samples": [10]})
    assert quality.samples_needed(t, 0.02)["half_width"].iloc[0] == pytest.approx(math.sqrt(0.277 / 0.116) - 1)


def test_the_drift_table_says_which_cells_it_could_not_flag_whatever_their_order():
    """Among many cells Holm's first threshold lies below the smallest exact p of a cell of 6 samples
    (2 / 6! = 0.0028): such a cell is not flagged however steadily it rises, and the table says how
    many cells that is, so that "no drift" is not read as a check they passed."""
    from bench_src.report import tables

    rng = np.random.default_rng(6)
    rows = [("rust", 10, 1 + 0.01 * i) for i in range(6)]
    rows += [("go", n, x) for n in range(100, 129) for x in rng.normal(1, 0.01, 6)]
    rows += [("go", 7, 1 + 0.01 * i + rng.normal(0, 0.001)) for i in range(30)]
    d = quality.drift(frame(rows))
    assert quality.smallest_p(6) == pytest.approx(2 / 720) and quality.smallest_p(30) == 0.0
    assert list(d["reachable"]) == [n == 7 for n in d["n"]], d
    assert bool(d.loc[d["n"] == 7, "drift"].iloc[0]), "a long steady rise is flagged"
    caption = tables.drift(d).caption
    assert ("30 of 31 cells cannot reach Holm's first threshold (0.05 / 31 = 0.0016) whatever the order of "
            "their samples: the exact p of a cell of n samples is at least 2 / n! (0.0028 at 6)") in caption, caption


def test_cpu_time_verdict_says_uses_less_cpu_not_faster():
    # CPU time is what a program used, not how long it took: a program that uses more CPU may finish
    # first (variants_cpu_s read "tokio faster" at 11.6x while the wall-time ratio was 1.06)
    df = go_half_of_rust("cpu_s")
    assert compare.compare(df, "cpu_s")["verdict"].iloc[0] == "Go uses less CPU"
    assert compare.compare(df, "elapsed_s")["verdict"].iloc[0] == "Go faster"


def test_an_idle_task_sample_whose_early_tasks_had_finished_counts_for_time_not_for_memory():
    """idle_tasks with wait=sleep: a Go sample whose spawning was slow had 677,083 of its 1,000,000
    tasks alive at the peak; its peak RSS measured fewer tasks than its N, so it is left out of
    every memory comparison and cell summary (validity.counted), while its time, the workload its
    cell defines, still counts."""
    from bench_src.analysis import stats

    rng = np.random.default_rng(5)
    rows = []
    for block in range(8):
        for lang, rss in (("go", 2600.0), ("rust", 460.0)):
            alive = 677_083 if (lang, block) == ("go", 0) else 1_000_000
            rows.append({"workload": "idle_tasks", "lang": lang, "variant": "goroutine" if lang == "go" else "spawn",
                         "n": 1_000_000, "threads_requested": None, "arm": "", "block": block, "valid": True,
                         "params": "duration_ms=10000,linger_ms=0,wait=sleep", "alive_at_spawn": alive,
                         "elapsed_s": 5.0 * float(np.exp(rng.normal(0, 0.02))) + (2.5 if alive < 1e6 else 0.0),
                         "peak_rss_mib": rss * float(np.exp(rng.normal(0, 0.005))) * (alive / 1e6)})
    df = pd.DataFrame(rows)
    memory, time = compare.compare(df, "peak_rss_mib").iloc[0], compare.compare(df, "elapsed_s").iloc[0]
    assert (memory["go_samples"], memory["rust_samples"], memory["pairs"]) == (7, 8, 7)
    assert (time["go_samples"], time["rust_samples"], time["pairs"]) == (8, 8, 8)
    cells = stats.summarize(df, "peak_rss_mib").set_index("lang")
    assert cells.loc["go", "samples"] == 7 and cells.loc["go", "min"] > 2500
    assert stats.summarize(df, "elapsed_s").set_index("lang").loc["go", "samples"] == 8
    # a sample without the count (an older program) is not trusted for memory either
    untrusted = compare.compare(df.assign(alive_at_spawn=np.nan), "peak_rss_mib")
    assert len(untrusted) == 1 and untrusted["verdict_kind"].iloc[0] == "inconclusive"
    assert np.isnan(untrusted["ratio"].iloc[0]) and (untrusted["pairs"].iloc[0], untrusted["go_samples"].iloc[0]) == (0, 0)


def test_a_planned_comparison_of_a_cell_whose_values_do_not_count_is_a_row_that_says_why():
    """Go's 1,000,000 sleeping idle tasks were never all alive at once on a slow machine (spawning
    took longer than the sleep), so no Go sample measured the memory of N tasks: the comparison
    had no row in the peak-RSS tables, and the findings counted one comparison fewer than the
    workload time's without a word.  It is a row, untested, whose warning says why; a cell whose
    samples all failed is one too, in every metric."""
    rng = np.random.default_rng(7)
    rows = []
    for block in range(6):
        for lang, variant in (("go", "goroutine"), ("rust", "spawn")):
            for n, alive in ((100_000, 100_000), (1_000_000, 677_083 if lang == "go" else 1_000_000)):
                rows.append({"workload": "idle_tasks", "lang": lang, "variant": variant, "n": n, "threads_requested": 2,
                             "arm": "", "block": block, "phase": "measured", "valid": True,
                             "params": "duration_ms=3000,linger_ms=0,wait=sleep", "alive_at_spawn": alive,
                             "elapsed_s": 4.0 * float(np.exp(rng.normal(0, 0.02))),
                             "peak_rss_mib": 300.0 * float(np.exp(rng.normal(0, 0.005)))})
    df = pd.DataFrame(rows)
    memory = compare.compare(df, "peak_rss_mib").set_index("n")
    assert sorted(memory.index) == [100_000, 1_000_000], "both planned comparisons are rows"
    row = memory.loc[1_000_000]
    assert row["verdict_kind"] == "inconclusive" and np.isnan(row["ratio"]) and row["go_samples"] == 0
    assert "no value of the Go goroutine cell counts for peak_rss_mib" in row["warning"]
    assert "none of its 6 valid samples had every task alive at once" in row["warning"]
    assert memory.loc[100_000, "verdict_kind"] in ("a", "b", "equivalent", "inconclusive")
    assert np.isfinite(memory.loc[100_000, "ratio"])
    time = compare.compare(df, "elapsed_s").set_index("n")
    assert np.isfinite(time.loc[1_000_000, "ratio"]), "its time counts: the workload its cell defines"
    failed = df.assign(valid=~((df["lang"] == "go") & (df["n"] == 1_000_000)))
    for metric in ("elapsed_s", "peak_rss_mib"):
        t = compare.compare(failed, metric).set_index("n")
        assert np.isnan(t.loc[1_000_000, "ratio"]), metric
        assert "none of its 6 measured samples is valid (the failures and checksums tables say why)" in \
            t.loc[1_000_000, "warning"], metric
    # warm-ups are no measured cell: a cell the frame holds only as a warm-up makes no row
    warm = df[~((df["lang"] == "go") & (df["n"] == 1_000_000))].copy()
    extra = df[(df["lang"] == "go") & (df["n"] == 1_000_000)].head(1).assign(phase="warmup", valid=False)
    assert sorted(compare.compare(pd.concat([warm, extra]), "elapsed_s")["n"]) == [100_000]


def test_above_the_exact_limit_the_signed_rank_test_is_labelled_as_its_normal_approximation():
    from bench_src.analysis import paired, ranktests

    rng = np.random.default_rng(1)
    for n, label in ((ranktests.EXACT_MAX, paired.SIGNED_RANK), (ranktests.EXACT_MAX + 50, paired.SIGNED_RANK_NORMAL)):
        b = np.exp(rng.normal(0, 0.01, n))
        a = b * np.exp(rng.normal(0.01, 0.01, n))
        assert compare.pair_test(np.arange(n), a, np.arange(n), b).stats["test"] == label
    assert "normal approximation" in paired.TEST_NAMES[paired.SIGNED_RANK_NORMAL]


def test_a_variants_verdict_names_each_side_by_what_differs_from_the_other():
    # "tokio [iterations=10] faster" named a parameter both sides share; a side is its variant, with
    # the parameters whose values differ from the other side's
    from bench_src.analysis.compare import _named
    assert _named("tokio", "iterations=10", "iterations=10") == "tokio"
    assert _named("default", "driver=sqlx,pool=64", "driver=sqlx,pool=10") == "default [pool=64]"
    assert _named("default", "", "") == "default"


def test_a_block_that_holds_a_cell_more_than_once_counts_the_median_of_its_values():
    # blocks 0-5: Go 1.0 and Rust 2.0 once each; block 6 holds Go three times (1, 2 and 10) and Rust
    # once (2.0): its Go value is their median, 2, not their mean (4.33) nor its first value (1)
    rows = [("go", 10, 1.0), ("rust", 10, 2.0)] * 6 + [("go", 10, v) for v in (1.0, 2.0, 10.0)] + [("rust", 10, 2.0)]
    df = frame(rows)
    df["block"] = [b for b in range(6) for _ in (0, 1)] + [6, 6, 6, 6]
    values = compare.CellValues(df, "elapsed_s")
    go = next(ref for ref in values.cells if ref.lang == "go")
    per_block = values.per_block(go)
    assert list(per_block.index) == list(range(7)) and per_block.loc[6] == 2.0
    assert (per_block.loc[:5] == 1.0).all()
    # the paired comparison divides the blocks' values: six ratios of 0.5 and one of 1.0, whose
    # geometric mean it reports (the mean would give block 6 a ratio of 2.17, the first value 0.5)
    row = compare.compare(df).iloc[0]
    assert row["pairs"] == 7 and row["ratio"] == pytest.approx(math.exp(6 * math.log(0.5) / 7), rel=1e-9)


def test_the_drift_tables_caption_states_the_rules_alpha(monkeypatch):
    from bench_src.report import tables

    rng = np.random.default_rng(0)
    rows = [("go", 10, 1 + rng.normal(0, 0.01)) for _ in range(30)] + [("rust", 10, 1 + 0.01 * i) for i in range(30)]
    monkeypatch.setattr(rules, "ALPHA", 0.1)
    caption = tables.readable(quality.drift(frame(rows)), "drift_elapsed_s").caption
    assert "drift: Holm-corrected p (over the table's cells) < 0.1." in caption and "0.05" not in caption


def test_a_per_task_interval_on_a_page_grid_allows_for_the_rounding_and_never_has_zero_width():
    """Peak RSS on 4 KiB pages with noise below a page: every block's line was the same, and the
    interval collapsed onto its centre (2.05 KiB [2.05, 2.05]), missing the true cost every time.
    A rounded N now widens it by half a step carried through the line."""
    from bench_src.analysis import scaling

    true = 2100.3  # bytes per task
    for seed in range(5):
        rng = np.random.default_rng(seed)
        rows = [("go", n, 4096 * np.round((2.5 * 2**20 + true * n + rng.normal(0, 50)) / 4096))
                for _ in range(10) for n in (1000, 10000, 100000, 1000000)]
        df = in_blocks(frame(rows))
        df["peak_rss_bytes"] = df["elapsed_s"]
        r = scaling.per_task_cost(df, "peak_rss_bytes").iloc[0]
        assert r.per_task_ci_low < true < r.per_task_ci_high, (seed, r.per_task_ci_low, r.per_task_ci_high)
        assert "rounded on a grid of 4096" in r.warning


def test_the_straightness_check_of_values_that_are_all_zero_or_not_finite_is_not_estimable():
    from bench_src.analysis import scaling

    assert np.isnan(scaling.straightness_p([10, 100, 1000], np.zeros((3, 8))))
    y = np.ones((3, 8))
    y[1, 2] = np.nan
    assert np.isnan(scaling.straightness_p([10, 100, 1000], y))


def test_a_series_grid_is_read_per_n_not_from_the_gaps_between_the_levels_of_n():
    """Memory that never varies sits on one page per N: the gaps between N's levels (205 and 9 x 205
    pages apart) are no grid, and reading them as one made the per-task interval ±30% wide."""
    from bench_src.analysis import paired

    samples = [np.full(6, 597 * 4096.0), np.full(6, 802 * 4096.0), np.full(6, 2647 * 4096.0)]
    pooled = np.concatenate(samples)
    assert float(paired.grid_step(pooled, pooled, 4096.0)) == 205 * 4096.0, "the pooled reading this replaces"
    assert scaling.series_step(samples, 4096.0) == 4096.0
    assert scaling.series_step([np.array([1.0, 1.5, 2.0]), np.array([3.0, 3.25])], 0.0) == 0.25
    assert scaling.series_step([np.array([0.1, 0.37]), np.array([1.0])], 0.0) == 0.0


def test_straightness_on_pages_does_not_read_the_rounding_as_a_bend_and_still_finds_one():
    """A straight series on 4 KiB pages with 1,200 B of noise leaves each N on one or two pages, off
    its line by its rounding in every block alike: Hotelling's T^2 read that as a bend (p = 0.001
    here, and 9-15% of straight series flagged at 5%); tested against the rounding's bounds it is
    not, and a bend of 5% at one N is still found."""
    ns = np.array([1000.0, 10000.0, 100000.0])
    true = 2e6 + 2000 * ns
    v = np.round((true[:, None] + np.random.default_rng(38).normal(0, 1200, (3, 10))) / 4096) * 4096
    assert scaling.straightness_p(ns, v) < 0.01
    assert scaling.straightness_p(ns, v, 4096.0) > 0.5
    bent = true * np.array([1.0, 1.05, 1.0])
    v = np.round((bent[:, None] + np.random.default_rng(3).normal(0, 1200, (3, 10))) / 4096) * 4096
    assert scaling.straightness_p(ns, v, 4096.0) < 1e-10


def test_straightness_with_three_values_of_n_is_the_t_test_of_the_one_contrast():
    """With 3 values of N, Hotelling's T^2 of the one contrast orthogonal to every line is Student's
    one-sample t test of it: an independent value of the p-value the table prints."""
    from scipy import stats as sps

    ns = np.array([10.0, 100.0, 1000.0])
    y = np.array([[1.0], [2.0], [10.0]]) + np.random.default_rng(4).normal(0, 0.3, (3, 8))
    design = np.column_stack([np.ones(3), ns])
    c = np.linalg.svd(design.T)[2][-1]  # the unit vector orthogonal to the columns of the design
    assert abs(c @ design).max() < 1e-9
    assert scaling.straightness_p(ns, y) == pytest.approx(sps.ttest_1samp(c @ y, 0).pvalue, rel=1e-9)


def test_the_grid_allowance_counts_an_n_on_one_or_two_points_by_half_a_step():
    """An N whose values lie on one or two grid points is rounded, off by up to half a step; three or
    more points are dithered by the noise."""
    assert scaling.grid_allowance([1, -1], [[5] * 6, [7] * 6], 2.0) == 2.0
    assert scaling.grid_allowance([1, -1], [[5] * 6, [7, 9] * 3], 2.0) == 2.0
    assert scaling.grid_allowance([1, -1], [[5] * 6, [7, 9, 11] * 2], 2.0) == 1.0
    assert scaling.grid_allowance([3, -1], [[5] * 6, [7, 9, 11] * 2], 2.0, scale=[2.0, 1.0]) == 1.5


def test_the_exponent_interval_on_values_that_never_vary_is_widened_by_the_grid():
    """Pages that never vary give every block the same log-log slope: the interval is the grid's."""
    ns = np.array([1000.0, 10000.0, 100000.0])
    pages = np.array([300.0, 320.0, 500.0]) * 4096
    blocks = np.repeat(pages[:, None], 8, axis=1)
    r = scaling.per_task_fit(ns, pages, 0.95, 1.0, blocks, 4096.0)
    assert r["exponent_ci_low"] < r["exponent"] < r["exponent_ci_high"]
    assert r["per_task_ci_low"] < r["per_task"] < r["per_task_ci_high"]


def test_the_typical_value_is_the_hodges_lehmann_centre_of_the_log_values():
    logs = np.log([1.0, 2.0, 10.0])
    walsh = [(logs[i] + logs[j]) / 2 for i in range(3) for j in range(i, 3)]
    assert scaling.typical(np.array([1.0, 2.0, 10.0])) == pytest.approx(math.exp(np.median(walsh)))
    assert scaling.typical(np.array([1.0, 2.0, 10.0])) == pytest.approx(2.51487, rel=1e-5)


def test_the_noise_power_is_clipped_to_the_two_models():
    """theta = 2 (spread growing as value squared) is no model: it is read as relative errors, 1."""
    assert scaling.variance_power([10, 100], [1, 100], [1, 10]) == 1.0
    assert scaling.variance_power([10, 100], [1, 1], [100, 10]) == 0.0


def test_the_fixed_cost_is_the_robust_centre_of_the_blocks_intercepts():
    """One block shifted by +5 at every N moves a mean of the intercepts by 5/7; the centre barely."""
    ns = np.array([10.0, 100.0, 1000.0])
    base = 1.0 + 0.01 * ns
    noise = np.random.default_rng(5).normal(0, 0.01, (3, 7))
    blocks = base[:, None] + noise
    blocks[:, 6] += 5.0
    r = scaling.per_task_fit(ns, np.median(blocks, axis=1), 0.95, 0.0, blocks, 0.0)
    coef = scaling.line_coefficients(ns, np.ones(3))
    icpt = (coef @ blocks)[0]
    walsh = [(icpt[i] + icpt[j]) / 2 for i in range(7) for j in range(i, 7)]
    assert r["fixed_cost"] == pytest.approx(np.median(walsh))
    assert abs(r["fixed_cost"] - 1.0) < 0.05 and abs(icpt.mean() - 1.0) > 0.5


def _sleep_rows(n, go_alive, rust_alive, spawned_ns=1_000_000, blocks=6, seed=11):
    rng = np.random.default_rng(seed)
    rows = []
    for block in range(blocks):
        for lang, variant, alive, rss in (("go", "waitgroup", go_alive, 60.0), ("rust", "join-handles", rust_alive, 50.0)):
            rows.append({"workload": "sleep", "lang": lang, "variant": variant, "n": n, "threads_requested": 2,
                         "arm": "", "block": block, "phase": "measured", "valid": True,
                         "params": "kernel=xorshift,work=50000", "alive_at_spawn": alive, "spawned_ns": spawned_ns,
                         "elapsed_s": 6.4 * float(np.exp(rng.normal(0, 0.02))),
                         "peak_rss_mib": rss * float(np.exp(rng.normal(0, 0.005)))})
    return rows


def test_a_sleep_sample_whose_early_tasks_had_ended_counts_for_time_not_for_memory():
    """sleep at N = 100,000 with work=50000: Go spawned for 15-17 s while each task sleeps at most
    299 ms (some 0 ms), and only 3,264 to 4,525 of its tasks were alive at the last spawn, Rust's
    99,680 to 99,833: the peak held far fewer than N tasks, and the Go/Rust ratio of peaks compared
    spawning speeds.  Both programs now count the tasks alive at the last spawn, as idle_tasks does,
    and the same rule (validity.counted) leaves such a peak out; its time still counts."""
    from bench_src.analysis import stats, validity

    df = pd.DataFrame(_sleep_rows(100_000, 3_264, 99_833))
    memory, time = compare.compare(df, "peak_rss_mib").iloc[0], compare.compare(df, "elapsed_s").iloc[0]
    assert np.isnan(memory["ratio"]) and memory["verdict_kind"] == "inconclusive"
    assert "no value of the Go waitgroup cell counts for peak_rss_mib" in memory["warning"]
    assert "none of its 6 valid samples had every task alive at once" in memory["warning"]
    assert "(6 not every task alive at once (3,264 of 100,000 alive when the last was spawned))" in memory["warning"]
    assert np.isfinite(time["ratio"]) and time["pairs"] == 6
    assert stats.summarize(df, "peak_rss_mib").empty, "no cell summary of peaks that do not count"
    # all alive in both: the peaks count
    every = pd.DataFrame(_sleep_rows(100_000, 100_000, 100_000))
    assert np.isfinite(compare.compare(every, "peak_rss_mib")["ratio"].iloc[0])
    # a sample of a program older than the count: trusted where its last spawn came before its
    # shortest sleep could end (42 ms at N = 10, 0 ms from task 254 on), which proves every task alive
    old = pd.DataFrame(_sleep_rows(10, np.nan, np.nan, spawned_ns=50_000))
    assert validity.all_alive(old).all()
    assert np.isfinite(compare.compare(old, "peak_rss_mib")["ratio"].iloc[0])
    slow = pd.DataFrame(_sleep_rows(10, np.nan, np.nan, spawned_ns=50_000_000))
    assert not validity.all_alive(slow).any()
    late = pd.DataFrame(_sleep_rows(1000, np.nan, np.nan, spawned_ns=400_000))
    assert not validity.all_alive(late).any()
    row = compare.compare(late, "peak_rss_mib").iloc[0]
    assert np.isnan(row["ratio"])
    assert ("none of its 6 valid samples counts for memory: 6 with no count of the tasks alive at the last spawn "
            "(a program older than the count) whose last spawn (0.4 ms) came no earlier than their shortest wait "
            "could end (0 ms): not trusted") in row["warning"]


def test_a_memory_row_whose_cell_lost_samples_to_the_memory_rule_says_why_before_its_counts():
    """The quick profile's sleep at N = 1,000: 5 of Go's 6 samples had tasks finish before the last
    was spawned, so one value of Go's cell counted for memory, and its Go-vs-Rust row read only "only
    1 samples (< 6) ...; too few pairs: 1 block hold both cells ...; not tested", which names a count,
    not the cause.  The row now says first how many of the cell's valid samples do not count and why
    (validity.memory_excluded_summary); its time row, whose samples all count, says nothing of it."""
    from bench_src.analysis import stats

    rows = _sleep_rows(1000, 1000, 1000)
    for k, r in enumerate(x for x in rows if x["lang"] == "go" and x["block"] > 0):
        r["alive_at_spawn"] = 600 + 50 * k
    df = pd.DataFrame(rows)
    memory, time = compare.compare(df, "peak_rss_mib").iloc[0], compare.compare(df, "elapsed_s").iloc[0]
    assert memory["go_samples"] == 1 and compare.untested(compare.compare(df, "peak_rss_mib")).all()
    assert memory["warning"].startswith(
        "5 of the 6 valid samples of the Go waitgroup cell do not count for peak_rss_mib: 5 not every task alive "
        "at once (600 to 800 of 1,000 alive when the last was spawned); only 1 sample (< 6): the interval is "
        "missing or unreliable; too few pairs: 1 block holds both cells"), memory["warning"]
    assert "alive" not in time["warning"]
    assert stats.few_warning(1).startswith("only 1 sample (< ") and stats.few_warning(2).startswith("only 2 samples")
    # a row that is tested says it too: its cell has fewer values than the run took
    one = pd.DataFrame(_sleep_rows(1000, 1000, 1000, blocks=10))
    one.loc[(one["lang"] == "go") & (one["block"] == 3), "alive_at_spawn"] = 990
    tested = compare.compare(one, "peak_rss_mib").iloc[0]
    assert np.isfinite(tested["ratio"]) and tested["warning"].startswith(
        "1 of the 10 valid samples of the Go waitgroup cell does not count for peak_rss_mib: 1 not every task "
        "alive at once (990 of 1,000 alive when the last was spawned)"), tested["warning"]


def test_the_shortest_wait_of_a_counting_workload_is_its_shortest_sleep():
    from bench_src.catalogue import ALIVE_COUNTED, shortest_wait_ns
    from tests.reference import lcg

    for n in (1, 10, 100, 254, 255, 5000):
        assert shortest_wait_ns("sleep", n, {}) == min(x % 300 for x in lcg(42, n)) * 1_000_000
    assert shortest_wait_ns("sleep", 254, {}) == 1_000_000 and shortest_wait_ns("sleep", 255, {}) == 0
    assert shortest_wait_ns("idle_tasks", 10, {"wait": "sleep", "duration_ms": "3000"}) == 3_000_000_000
    assert shortest_wait_ns("idle_tasks", 10, {"wait": "release"}) is None
    assert shortest_wait_ns("files_read", 10, {}) is None and set(ALIVE_COUNTED) == {"idle_tasks", "sleep"}


# Go's files_rw at N = 100,000 in run V (readfile, retain=digest): peak RSS in MiB, two clusters
FILES_RW_GO_PEAKS = [69.3, 77.6, 78.5, 83.0, 83.1, 83.1, 84.5, 86.6, 86.8, 87.2, 87.5, 89.8, 90.0, 90.8, 93.2,
                     93.8, 93.9, 95.1, 96.3, 96.6, 96.7, 97.7, 98.0, 98.1, 99.4, 101.4, 103.1, 103.4, 104.9, 109.0,
                     112.8, 114.8, 116.4, 152.6, 162.5, 211.3, 260.3, 288.3, 383.5, 539.3, 560.5, 685.0, 697.0,
                     717.7, 746.1, 748.0, 789.3, 821.9, 1134.8]


def test_a_dispersed_memory_cell_is_named_on_every_comparison_row_of_it():
    """Go's files_rw at N = 100,000 in run V: 33 of 49 peaks at 69-117 MiB, the rest at 153-1,135 MiB
    (a standard deviation of 111% of the mean), and its Go-vs-Rust row read "Go smaller" with no word
    that Go's cell held two amounts.  A memory cell at rules.DISPERSED_CV or more now says so on each
    of its rows; its time rows, and memory rows of steady cells, do not."""
    rng = np.random.default_rng(4)
    rows = []
    for block, go in enumerate(FILES_RW_GO_PEAKS):
        for lang, variant, value in (("go", "readfile", go), ("rust", "spawn-blocking", 1900 * np.exp(rng.normal(0, 0.04)))):
            rows.append({"workload": "files_rw", "lang": lang, "variant": variant, "n": 100_000,
                         "threads_requested": 2, "arm": "", "block": block, "phase": "measured", "valid": True,
                         "params": "retain=digest", "elapsed_s": float(np.exp(rng.normal(0, 0.3))),
                         "peak_rss_mib": value})
    df = pd.DataFrame(rows)
    memory = compare.compare(df, "peak_rss_mib").iloc[0]
    assert memory["verdict"] == "Go smaller"
    assert ("the Go readfile cell's values are dispersed: standard deviation 111% of the mean (69.3 to 1,135 MiB); "
            "at 10% or more (pyperf's rule) its median and any ratio of it stand for no one amount") in memory["warning"]
    assert "Rust" not in memory["warning"], "the steady cell is not named"
    assert "dispersed" not in compare.compare(df, "elapsed_s").iloc[0]["warning"], "time is not checked"
    steady = df.assign(peak_rss_mib=np.where(df["lang"] == "go", 90 * np.exp(rng.normal(0, 0.02, len(df))),
                                             df["peak_rss_mib"]))
    assert "dispersed" not in compare.compare(steady, "peak_rss_mib").iloc[0]["warning"]


def _files_rw_peaks(rng, **extra) -> list[dict]:
    """files_rw at N = 100,000, one block per value of FILES_RW_GO_PEAKS: Go readfile's peaks those
    (dispersed), Rust spawn-blocking's steady about 1,900 MiB; `extra` columns on every row."""
    rows = []
    for block, go in enumerate(FILES_RW_GO_PEAKS):
        for lang, variant, value in (("go", "readfile", go), ("rust", "spawn-blocking", 1900 * np.exp(rng.normal(0, 0.02)))):
            rows.append({"workload": "files_rw", "lang": lang, "variant": variant, "n": 100_000,
                         "threads_requested": 2, "arm": "", "block": block, "phase": "measured", "valid": True,
                         "status": "ok", "params": "retain=digest", "p_retain": "digest",
                         "elapsed_s": float(np.exp(rng.normal(0, 0.05))), "peak_rss_mib": value, **extra})
    return rows


def test_a_dispersed_memory_cell_is_named_on_the_rows_of_the_cores_hosts_and_reproduction_tables():
    """The rows of the cores tables, of the table across hosts and of the reproduction table compare
    cells too: a memory cell of theirs whose values are dispersed is named in their warning by the
    same rule (quality.dispersion_warning), as on the Go-vs-Rust rows; the steady cells are not."""
    from bench_src.analysis import cores, hosts
    from bench_src.report import tables
    from bench_src.report.reproduce_view import ours_text

    rng = np.random.default_rng(5)
    dispersed = "cell's values are dispersed: standard deviation 111% of the mean (69.3 to 1,135 MiB)"
    # cores: Go's cell dispersed at 1 core, steady at 2
    one, two = pd.DataFrame(_files_rw_peaks(rng)), pd.DataFrame(_files_rw_peaks(rng))
    two["peak_rss_mib"] = np.where(two["lang"] == "go", 90 * np.exp(rng.normal(0, 0.02, len(two))), two["peak_rss_mib"])
    pinned = pd.concat([one.assign(cores=1, threads_requested=1), two.assign(cores=2, threads_requested=2)],
                       ignore_index=True)
    gain = cores.speedup(pinned, "peak_rss_mib").set_index("lang")
    assert f"the Go readfile at 1 core {dispersed}" in gain.loc["go", "warning"]
    assert "dispersed" not in gain.loc["rust", "warning"]
    by_cores = cores.ratio_vs_cores(pinned, "peak_rss_mib").set_index("cores")
    assert f"the Go readfile {dispersed}" in by_cores.loc[1, "warning"] and "dispersed" not in by_cores.loc[2, "warning"]
    # hosts: Go's cell dispersed on one host of two
    on = {"m1": pd.DataFrame(_files_rw_peaks(rng)), "m2": two.assign(threads_requested=2)}
    both = pd.concat([f.assign(host=h, host_label=h, run_id=h) for h, f in on.items()], ignore_index=True)
    across = hosts.across_hosts(both, "peak_rss_mib").iloc[0]
    assert across["warning"] == quality.dispersion_warning("Go readfile (host m1)", FILES_RW_GO_PEAKS, "peak_rss_mib")
    assert "warning" in tables.hosts.combined(hosts.across_hosts(both, "peak_rss_mib")).frame
    # the reproduction table: Go's cell with each language's defaults dispersed, its time steady
    go, rust = (published.default_setting("files_rw", lang) for lang in ("go", "rust"))
    rows = [{**r, "variant": (go if r["lang"] == "go" else rust).variant, "alive_at_spawn": np.nan,
             **{f"p_{k}": v for k, v in (go if r["lang"] == "go" else rust).params}} for r in _files_rw_peaks(rng)]
    side = published.side_by_side(pd.DataFrame(rows).drop(columns=["params"]))
    memory = side[(side["workload"] == "files_rw") & (side["n"] == 100_000) & (side["metric"] == "memory")].iloc[0]
    time = side[(side["workload"] == "files_rw") & (side["n"] == 100_000) & (side["metric"] == "time")].iloc[0]
    assert f"the Go {go.variant} {dispersed}" in memory["ours_default_warning"]
    assert "dispersed" not in time["ours_default_warning"]
    assert f"the Go {go.variant} {dispersed}" in ours_text(memory, "ours_default")


def test_the_dispersion_rule_seldom_fires_on_unimodal_memory_noise_and_does_on_far_apart_clusters():
    """The false-alarm rate of quality.dispersion_warning's rule (a standard deviation of at least 10%
    of the mean) on simulated unimodal cells shaped like peak RSS, 20,000 cells per shape and size
    (seed 1): lognormal noise of CV 1% and 5% (the median cell of run V had 1.4%, 95% of cells
    below 5%), and heavy-tailed noise (Student's t of 3 degrees of freedom in logs, sd 3% and 5%)."""
    from bench_src.analysis import quality, rules

    rng = np.random.default_rng(1)
    cells = 20_000

    def rate(values) -> float:
        return float(np.mean([bool(quality.dispersion_warning("x", v, "peak_rss_mib")) for v in values]))

    def fast_rate(values) -> float:  # the same rule on a whole array at once, checked against rate() below
        return float(np.mean(values.std(axis=1, ddof=1) / values.mean(axis=1) >= rules.DISPERSED_CV))

    for n in (6, 10, 20, 49):
        lognormal = {cv: np.exp(rng.normal(0, cv, (cells, n))) for cv in (0.01, 0.05)}
        heavy = {sd: np.exp(sd / np.sqrt(3) * rng.standard_t(3, (cells, n))) for sd in (0.03, 0.05)}
        assert fast_rate(lognormal[0.01]) == 0.0, n
        assert fast_rate(lognormal[0.05]) <= 0.002, n  # 0.1% at 6 samples, none from 10 on
        assert fast_rate(heavy[0.03]) <= 0.006, n  # 0.5% at 6 samples, 0.2% at 49
        assert fast_rate(heavy[0.05]) <= 0.03, n  # 2.7% at 6 samples, 1.2% at 49
        two = np.exp(np.where(rng.random((cells, n)) < 0.5, 0.0, np.log(2.0)) + rng.normal(0, 0.01, (cells, n)))
        assert fast_rate(two) >= 0.96, n  # equal clusters 2x apart: 96.9% at 6 samples, 99.8% or more from 10
    assert rate(heavy[0.05][:2000]) == pytest.approx(fast_rate(heavy[0.05][:2000]))
    assert quality.dispersion_warning("Go readfile", FILES_RW_GO_PEAKS, "peak_rss_mib")
    assert quality.dispersion_warning("Go readfile", FILES_RW_GO_PEAKS, "elapsed_s") == ""
    assert np.isnan(quality.dispersion([5.0])) and quality.dispersion_warning("x", [5.0], "peak_rss_mib") == ""
