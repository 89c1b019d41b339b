"""Paired comparisons, like-for-like families, verdict rules, minimum detectable effects, the
plan check, robustness across variants and the Method text."""
import ast
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from bench_src.analysis import (compare, feasibility, memory, multiplicity, paired, ranktests, robustness, rules,
                                sequential, simulate)
from bench_src.plan import comparisons, make_plan
from bench_src.plan import feasibility as plan_feasibility


# --- the exact tests ------------------------------------------------------------------------------------
def brute_force_signed_rank_p(d):
    d = np.asarray(d, float)
    ranks = sps.rankdata(np.abs(d))
    scores = ranks[d != 0]
    observed = scores[d[d != 0] > 0].sum()
    sums = [sum(s for s, keep in zip(scores, signs) if keep) for signs in itertools.product([0, 1], repeat=scores.size)]
    sums = np.array(sums)
    return min(1.0, 2 * min(np.mean(sums <= observed + 1e-9), np.mean(sums >= observed - 1e-9)))


@pytest.mark.parametrize("d", [
    [0.3, -0.1, 0.5, 0.2, 0.25, -0.05, 0.4, 0.15],
    [1, 1, 2, -1, 3, 0, 2.5, -0.5, 4, 4],  # ties and a zero
    [0.0, 0.0, 1.0, 2.0, -3.0],
    [5, 4, 3, 2, 1, 6, 7],
])
def test_signed_rank_p_is_the_exact_sign_flip_distribution(d):
    assert ranktests.signed_rank_p(d)[0] == pytest.approx(brute_force_signed_rank_p(d))


def test_smallest_p_values():
    assert ranktests.min_p_paired(10) == pytest.approx(2 / 1024)
    assert ranktests.signed_rank_p([1.0] * 10)[0] == pytest.approx(2 / 1024)
    assert ranktests.signed_rank_critical(5, 0.05) is None, "no 95% interval from 5 pairs of an exact test"


def test_mann_whitney_distribution_matches_enumeration():
    m, n = 3, 4
    counts = np.zeros(m * n + 1)
    for xs in itertools.combinations(range(m + n), m):
        u = sum(1 for x in xs for y in set(range(m + n)) - set(xs) if x > y)
        counts[u] += 1
    assert np.allclose(ranktests.mann_whitney_cdf(m, n), np.cumsum(counts) / counts.sum())


def test_holm_matches_statsmodels(monkeypatch):
    # statsmodels' Holm branch runs gc.collect() on every call, which costs a fifth of a second in a
    # test session's large heap; the collection does not touch the values compared
    import gc
    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    rng = np.random.default_rng(1)
    for _ in range(100):
        p = rng.uniform(0, 1, rng.integers(1, 40)) ** 3
        assert np.allclose(multiplicity.holm(p), multipletests(p, method="holm")[1])


# --- pairing -------------------------------------------------------------------------------------------------
def test_pairs_by_block_remove_block_effects():
    rng = np.random.default_rng(5)
    df = simulate.frame(simulate.go_rust_cells([1.03]), 10, rng, simulate.Conditions(cv=0.005, block_sd=0.2))
    paired = compare.compare(df).iloc[0]
    unpaired = compare.compare(df.drop(columns=["block"])).iloc[0]
    assert paired["pairing"] == "paired" and paired["pairs"] == 10
    assert unpaired["pairing"] == "unpaired" and "no block column" in unpaired["warning"]
    assert paired["verdict_kind"] == "b" and paired["ratio_ci_low"] > 1
    assert (paired["ratio_ci_high"] - paired["ratio_ci_low"]) < (unpaired["ratio_ci_high"] - unpaired["ratio_ci_low"]) / 5


def test_cells_of_one_run_that_share_too_few_blocks_get_no_verdict_and_say_why():
    # failures left Go valid in blocks 0-9 and Rust in 6-15 of one run: the unpaired test that
    # stood in read a 10% drift over the run as a difference (82% of equal cells "different"
    # in families of one); now fewer than MIN_PAIRS pairs give no test, no interval, no call
    rng = np.random.default_rng(6)
    df = simulate.frame(simulate.go_rust_cells([1.0]), 16, rng, simulate.Conditions(cv=0.01, drift=0.10))
    df = df[((df["lang"] == "go") & (df["block"] < 10)) | ((df["lang"] == "rust") & (df["block"] >= 6))]
    row = compare.compare(df).iloc[0]
    assert row["pairing"] == "paired" and row["pairs"] == 4
    assert row["verdict_kind"] == "inconclusive" and np.isnan(row["ratio"]) and np.isnan(row["ratio_ci_low"])
    assert np.isnan(row["p_value"]) and np.isnan(row["mde"])
    assert ("too few pairs: 4 blocks hold both cells, and a verdict needs 6 (the error rate is measured from "
            "there); not tested") in row["warning"]
    # cells of different runs (the engines' check) share no block by design: compared unpaired
    a = df[df["lang"] == "go"].assign(run_id="one")
    b = df[df["lang"] == "rust"].assign(run_id="two")
    other = compare.compare(pd.concat([a, b], ignore_index=True)).iloc[0]
    assert other["pairing"] == "unpaired" and "unpaired: the cells were taken in different runs" in other["warning"]
    assert not np.isnan(other["ratio"])


def test_the_unpaired_stand_in_s_error_under_drift_is_gone(monkeypatch):
    # 200 equal comparisons sharing 4 of their 10 blocks under a 10% drift: none called now
    rng = np.random.default_rng(61)
    called = 0
    for _ in range(200):
        df = simulate.frame(simulate.go_rust_cells([1.0]), 16, rng, simulate.Conditions(cv=0.01, drift=0.10))
        df = df[((df["lang"] == "go") & (df["block"] < 10)) | ((df["lang"] == "rust") & (df["block"] >= 6))]
        called += compare.compare(df).iloc[0]["verdict_kind"] in ("a", "b")
    assert called == 0


def test_an_infinite_value_is_left_out_and_said_to_be():
    t = compare.pair_test(np.arange(8), [1.0] * 7 + [np.inf], np.arange(8), [1.1] * 8)
    assert t.stats["pairs"] == 7 and t.stats["a_samples"] == 7
    assert "1 value not finite left out" in t.stats["warning"] and "values <= 0" not in t.stats["warning"]


def test_cells_that_share_the_fewest_pairs_the_rule_decides_from_are_paired_whatever_else_they_took():
    # each cell sampled on in extra blocks of its own other comparisons: 14 samples each, only the
    # pilot's 6 blocks shared; the sequential rule decided the comparison on those 6 pairs, and so
    # must the table (it fell back to unpaired: 6 < half of 14)
    rng = np.random.default_rng(7)
    df = simulate.frame(simulate.go_rust_cells([1.3]), 22, rng, simulate.Conditions(cv=0.01))
    go, rust = df["lang"] == "go", df["lang"] == "rust"
    df = df[(df["block"] < 6) | (go & df["block"].between(6, 13)) | (rust & (df["block"] >= 14))]
    row = compare.compare(df).iloc[0]
    assert row["pairing"] == "paired" and row["pairs"] == 6, row["warning"]
    assert row["verdict_kind"] == "b" and row["ratio_ci_low"] > 1


def frame_of(cells, values_by_cell, blocks=12):
    rows = []
    for b in range(blocks):
        for (workload, lang, variant, n, params), v in zip(cells, values_by_cell):
            rows.append({"workload": workload, "lang": lang, "variant": variant, "n": n, "threads_requested": None,
                         "arm": "", "block": b, "valid": True, "elapsed_s": v * (1 + 0.001 * ((b * 7 + len(variant)) % 5)),
                         **{f"p_{k}": val for k, val in params.items()}})
    return pd.DataFrame(rows)


def test_go_vs_rust_is_like_for_like_and_other_models_have_their_own_table():
    it = {"iterations": "10"}
    cells = [("threads_vs_tasks", "go", "goroutine", 1000, it), ("threads_vs_tasks", "rust", "tokio", 1000, it),
             ("threads_vs_tasks", "rust", "thread", 1000, it), ("threads_vs_tasks", "rust", "thread-pinned", 1000, it)]
    df = frame_of(cells, [1.0, 1.1, 2.0, 2.1])
    t = compare.compare(df)
    assert list(zip(t["go_variant"], t["rust_variant"])) == [("goroutine", "tokio")]
    assert (t["go_model"] == t["rust_model"]).all() and t["p_iterations"].iloc[0] == "10"
    m = compare.compare_models(df)
    assert sorted(zip(m["variant"], m["ref_lang"], m["ref_variant"])) == [
        ("thread", "go", "goroutine"), ("thread", "rust", "tokio"),
        ("thread-pinned", "go", "goroutine"), ("thread-pinned", "rust", "tokio")]
    assert (m["model"] == "thread").all() and (m["ref_model"] == "task").all()
    assert (m["verdict"].str.endswith("(task) faster")).all()
    v = compare.compare_variants(df)
    assert sorted(v["variant"]) == ["thread", "thread-pinned"] and (v["baseline_variant"] == "tokio").all()


def test_the_variants_table_shows_each_switch_of_optional_work_against_the_whole_work():
    # digest (both languages) and flush (Rust) switch off work the 2022 programs skipped: the
    # variants table sets each cell with a switch off against the default with all of them on,
    # while Go vs Rust still pairs only cells that do the same work
    cells = [("files_rw", lang, variant, 1000, {"retain": "digest", "digest": d, **({"flush": f} if lang == "rust" else {})})
             for lang, variant, flushes in (("go", "readfile", ("on",)), ("rust", "spawn-blocking", ("on", "off")))
             for d in ("on", "off") for f in flushes]
    df = frame_of(cells, [1.0, 0.9, 1.2, 1.1, 1.05, 0.95])
    v = compare.compare_variants(df)
    rows = sorted(zip(v["lang"], v["params"], v["baseline_params"]))
    assert rows == [("go", "digest=off,retain=digest", "digest=on,retain=digest"),
                    ("rust", "digest=off,flush=off,retain=digest", "digest=on,flush=on,retain=digest"),
                    ("rust", "digest=off,flush=on,retain=digest", "digest=on,flush=on,retain=digest"),
                    ("rust", "digest=on,flush=off,retain=digest", "digest=on,flush=on,retain=digest")]
    go_off = v[(v["lang"] == "go")].iloc[0]
    assert go_off["ratio"] == pytest.approx(0.9, rel=0.01)
    t = compare.compare(df)
    assert sorted(zip(t["go_params"], t["rust_params"])) == [
        ("digest=off,retain=digest", "digest=off,flush=off,retain=digest"),
        ("digest=off,retain=digest", "digest=off,flush=on,retain=digest"),
        ("digest=on,retain=digest", "digest=on,flush=off,retain=digest"),
        ("digest=on,retain=digest", "digest=on,flush=on,retain=digest")]
    assert sorted(t.loc[t["go_default"] & t["rust_default"], "rust_params"]) == ["digest=on,flush=on,retain=digest"]


def test_a_switch_of_another_variant_is_costed_within_that_variant_even_without_the_default():
    # the article's variants (chan-per-task, tokio-fs) with flush on and off and no default variant
    # in the plan: the table sets tokio-fs flush=off against tokio-fs flush=on (it was empty)
    shared = {"retain": "content", "digest": "on"}
    cells = [("files_rw", "go", "chan-per-task", 1000, shared),
             ("files_rw", "rust", "tokio-fs", 1000, {**shared, "flush": "on"}),
             ("files_rw", "rust", "tokio-fs", 1000, {**shared, "flush": "off"})]
    v = compare.compare_variants(frame_of(cells, [1.0, 1.2, 0.96]))
    assert list(zip(v["lang"], v["variant"], v["params"], v["baseline_variant"], v["baseline_params"])) == [
        ("rust", "tokio-fs", "digest=on,flush=off,retain=content", "tokio-fs", "digest=on,flush=on,retain=content")]
    assert v["ratio"].iloc[0] == pytest.approx(0.8, rel=0.01)
    # with the default in the plan too: a variant at the whole work against the default, its switch
    # against itself
    cells += [("files_rw", "rust", "spawn-blocking", 1000, {**shared, "flush": "on"})]
    v = compare.compare_variants(frame_of(cells, [1.0, 1.2, 0.96, 1.5]))
    assert sorted(zip(v["variant"], v["params"], v["baseline_variant"], v["baseline_params"])) == [
        ("tokio-fs", "digest=on,flush=off,retain=content", "tokio-fs", "digest=on,flush=on,retain=content"),
        ("tokio-fs", "digest=on,flush=on,retain=content", "spawn-blocking", "digest=on,flush=on,retain=content")]


def test_the_article_family_pairs_the_articles_own_programs_across_shared_parameters():
    # the article's SQLite: Go chan-per-task with the rollback journal and an unlimited pool, Rust
    # pool with WAL and 10 connections; journal and pool are shared parameters, so only this
    # family pairs the two, and the stopping rule follows it
    plan = make_plan("quick", workloads=["sqlite"], ns=[10, 100], article_preset=True, samples=6, max_samples=20,
                     looks=3, warmup=0)
    fams = comparisons.plan_comparisons(plan)
    pairs = [(a.n, a.variant, a.params_text, b.variant, b.params_text) for a, b in fams["article"]]
    assert pairs == [(n, "chan-per-task", "driver=mattn,journal=delete,pool=0", "pool", "driver=sqlx,journal=wal,pool=10")
                     for n in (10, 100)]
    assert not set(fams["article"]) & set(fams["go_vs_rust"])
    assert {("article", a, b) for a, b in fams["article"]} <= set(sequential.plan_comparisons(plan))
    assert plan_feasibility.family_sizes(plan)["article"] == 2
    plain = make_plan("quick", workloads=["sqlite"], ns=[10, 100], samples=6, max_samples=20, looks=3, warmup=0)
    assert comparisons.plan_comparisons(plain)["article"] == [], "without the article's settings, no such family"


def test_rows_carry_the_columns_the_report_reads():
    rng = np.random.default_rng(8)
    t = compare.compare(simulate.frame(simulate.go_rust_cells([1.1, 1.0]), 10, rng))
    for col in ("workload", "n", "threads_requested", "p_kernel", "p_work", "go_variant", "rust_variant", "go_model",
                "rust_model", "go_params", "rust_params", "metric", "pairing", "pairs", "go_samples", "rust_samples",
                "go_median", "rust_median", "ratio", "ratio_ci_low", "ratio_ci_high", "ci_level", "test", "p_value",
                "p_adjusted", "effect_size", "mde", "verdict", "verdict_kind", "within_margin", "warning"):
        assert col in t.columns, col
    assert set(t["verdict_kind"]) <= {"a", "b", "equivalent", "inconclusive"}
    assert t["family_size"].iloc[0] == 2


# --- verdicts ----------------------------------------------------------------------------------------------
def test_verdict_text_keeps_both_readings():
    assert rules.verdict_text("a", True, "Go", "Rust", "elapsed_s") == "Go faster, by less than 2%"
    assert rules.verdict_text("b", False, "Go", "Rust", "peak_rss_mib") == "Rust smaller"


def test_mde_is_finite_where_the_exact_tests_floor_used_to_forbid_any_call():
    # 27 comparisons of 10 pairs: no exact test reaches 0.05 / 27 (2 / 1024 > 0.00185), Student's t does
    # (below the signed-rank test's floor); at CV 1% per sample (sd of d 1.4%) a difference of a few
    # percent is within reach
    rng = np.random.default_rng(9)
    t = compare.compare(simulate.frame(simulate.go_rust_cells([1.0] * 27), 10, rng, simulate.Conditions(cv=0.01)))
    assert (t["test"] == paired.RANK_THEN_T).all()
    assert (t["mde"] > 0.005).all() and (t["mde"] < 0.05).all()


def test_a_sequential_design_adjusts_p_for_its_looks():
    rng = np.random.default_rng(10)
    df = simulate.frame(simulate.go_rust_cells([1.05]), 30, rng, simulate.Conditions(cv=0.01))
    design = compare.Design((10, 20, 30), (0.5, 0.25, 0.25))
    seq = compare.compare(df, design=design).iloc[0]
    d = np.log(df[df.lang == "go"]["elapsed_s"].to_numpy()) - np.log(df[df.lang == "rust"]["elapsed_s"].to_numpy())
    # a family of one: every look's level (0.025, 0.0125) is within the exact signed-rank test's reach
    assert seq["test"] == "signed-rank"
    expected = min(ranktests.signed_rank_p(d[:10])[0] / 0.5, ranktests.signed_rank_p(d[:20])[0] / 0.25,
                   ranktests.signed_rank_p(d)[0] / 0.25, 1.0)
    assert seq["p_value"] == pytest.approx(expected) and seq["looks"] == 3
    df.attrs["design"] = design.to_dict()
    assert compare.compare(df).iloc[0]["p_value"] == pytest.approx(expected), "the design travels in df.attrs"


def test_looks_whose_intervals_do_not_overlap_show_the_shortest_interval_meeting_each():
    # the intersection of the looks' intervals is empty where they disagree (an article run's CPU time of
    # SQLite N = 100 read 0.787 [0.765, 0.746]): an interval shown upside down, with a negative mde
    rng = np.random.default_rng(12)
    d = np.concatenate([0.10 + rng.normal(0, 0.005, 6), -0.10 + rng.normal(0, 0.005, 26)])
    design = compare.Design((6, 32), (0.5, 0.5))
    codes = np.arange(d.size)
    t = compare.pair_test(codes, np.exp(d), codes, np.ones(d.size), looks=design.plan_looks(), level_min=0.05)
    parts = [loc.interval(0.05 * share) for share, loc in t.tested.looks]
    assert max(float(lo) for lo, _ in parts) > min(float(hi) for _, hi in parts), "the case: no common point"
    assert bool(t.tested.disjoint(0.05))
    low, high = (float(x) for x in t.tested.interval(0.05))
    assert low == min(float(hi) for _, hi in parts) and high == max(float(lo) for lo, _ in parts)
    row = compare.decide_family([t], 0.05, 0.02, 1)[0]
    assert row["ratio_ci_low"] <= row["ratio_ci_high"]
    assert row["note"].startswith("the looks' intervals do not overlap")
    assert row["mde"] >= 0
    excludes = row["ratio_ci_low"] > 1 or row["ratio_ci_high"] < 1
    assert excludes == (row["verdict_kind"] in ("a", "b")), "the verdict is read off the interval shown"
    # overlapping looks keep their intersection
    calm = compare.pair_test(codes, np.exp(rng.normal(0.05, 0.01, d.size)), codes, np.ones(d.size),
                             looks=design.plan_looks(), level_min=0.05)
    assert not bool(calm.tested.disjoint(0.05))
    parts = [loc.interval(0.05 * share) for share, loc in calm.tested.looks]
    low, high = (float(x) for x in calm.tested.interval(0.05))
    assert low == max(float(lo) for lo, _ in parts) and high == min(float(hi) for _, hi in parts)


def test_a_sequential_rows_mde_is_read_off_its_last_looks_own_interval():
    # a quiet pilot, then noisy blocks: the interval shown (the intersection of the looks' intervals)
    # keeps the pilot's narrow bounds, but a difference of its mde must be called by the last look's
    # test, whose interval is wider.  An mde read off the narrow intersection promised power that no
    # look has (an article run's PostgreSQL row at N = 10: 55% instead of 80% when resampled).
    rng = np.random.default_rng(11)
    d = np.concatenate([rng.normal(0.0, 0.002, 10), rng.normal(0.0, 0.03, 20)])
    design = compare.Design((10, 20, 30), (0.5, 0.25, 0.25))
    codes = np.arange(d.size)
    t = compare.pair_test(codes, np.exp(d), codes, np.ones(d.size), looks=design.plan_looks(), level_min=0.05)
    row = compare.decide_family([t], 0.05, 0.02, 1)[0]
    share, last = t.tested.last
    own_low, own_high = (float(x) for x in last.interval(0.05 * share))
    shown = np.log(row["ratio_ci_high"]) - np.log(row["ratio_ci_low"])
    assert shown < (own_high - own_low) / 2, "the case: the interval shown is narrower than the last look's"
    expected = float(multiplicity.detectable((own_high - own_low) / 2, 0.05 * share, str(last.test_at(0.05 * share)),
                                             paired.t_dof(last.n), rules.POWER))
    reach = max(np.log(row["ratio_ci_high"]), -np.log(row["ratio_ci_low"]))  # beyond it: excluded already
    assert compare._detectable_power(np.log(row["ratio_ci_low"]), np.log(row["ratio_ci_high"]), last,
                                     0.05 * share) == pytest.approx(min(expected, shown))
    assert np.log1p(row["mde"]) == pytest.approx(min(expected, shown, reach))
    assert np.log1p(row["mde"]) > shown / 2, "more than the shown half-width the old mde was read off"
    assert np.log1p(row["mde"]) <= min(shown, reach) + 1e-12, "never beyond what the interval shown resolves"


def test_a_lopsided_intervals_mde_is_read_off_its_longer_side():
    # 9 pairs below the signed-rank test's floor: the interval is the hull of Student's t (about the
    # mean) and the rank interval at the floor (the lowest to the highest pair), and two low pairs
    # pull it down, so it reaches twice as far below the rank estimate as above it.  A difference
    # upward is called only when the lower bound clears 0 (every pair above 0 and Student's t
    # significant), so it must clear the longer side; the half-width understates it (an article
    # run's sleep row at N = 100,000: called in 73% of resamples at its mde instead of 80%).
    rng = np.random.default_rng(0)
    d = np.concatenate([rng.normal(0.0, 0.003, 7), rng.normal(-0.05, 0.01, 2)])
    b = np.exp(rng.normal(0, 0.05, d.size))
    codes = np.arange(d.size)
    t = compare.pair_test(codes, b * np.exp(d), codes, b, level_min=0.05 / 30)
    row = compare.decide_family([t], 0.05, 0.02, 30)[0]
    share, last = t.tested.last
    level = (1 - row["ci_level"]) * share
    low, high = (float(x) for x in last.interval(level))
    est = float(last.estimate)
    assert est - low > 1.8 * (high - est), "the case: a lopsided interval"
    assert bool(last.is_hull(level)), "below the floor"

    def mde_of(half):
        return float(multiplicity.detectable(half, level, str(last.test_at(level)), paired.t_dof(last.n), rules.POWER))

    shown = np.log(row["ratio_ci_high"]) - np.log(row["ratio_ci_low"])
    reach = max(np.log(row["ratio_ci_high"]), -np.log(row["ratio_ci_low"]))
    power = compare._detectable_power(np.log(row["ratio_ci_low"]), np.log(row["ratio_ci_high"]), last, level)
    assert power == pytest.approx(min(mde_of(est - low), shown))
    assert power > mde_of((high - low) / 2), "more than the half-width gives"
    assert np.log1p(row["mde"]) == pytest.approx(min(power, reach))
    assert np.log1p(row["mde"]) <= min(shown, reach) + 1e-12, "never beyond what the interval shown resolves"
    # at a level the signed-rank test reaches, its interval's sides are as random as its estimate: the
    # half-width, as before (a row of 10 pairs tested at 5%)
    t10 = compare.pair_test(codes, b * np.exp(d), codes, b, level_min=0.05)
    row10 = compare.decide_family([t10], 0.05, 0.02, 1)[0]
    _, last10 = t10.tested.last
    assert not bool(last10.is_hull(0.05))
    lo10, hi10 = (float(x) for x in last10.interval(0.05))
    assert np.log1p(row10["mde"]) == pytest.approx(min(
        float(multiplicity.detectable((hi10 - lo10) / 2, 0.05, str(last10.test_at(0.05)), paired.t_dof(last10.n),
                                      rules.POWER)), hi10 - lo10))


# --- robustness across variants ------------------------------------------------------------------------------
def test_robustness_flags_a_verdict_that_depends_on_the_variant():
    k = {"kernel": "xorshift", "work": "10"}
    cells = [("sleep", "go", "waitgroup", 10, k), ("sleep", "go", "chan-per-task", 10, k),
             ("sleep", "rust", "join-handles", 10, k), ("sleep", "rust", "current-thread", 10, k),
             ("sleep", "go", "waitgroup", 100, k), ("sleep", "rust", "join-handles", 100, k)]
    # N=10: Go's default is faster than Rust's, Go's chan-per-task slower than it: a reversal
    df = frame_of(cells, [1.0, 1.5, 1.2, 0.5, 1.0, 1.5])
    rob = robustness.robustness(df)
    r10 = rob[rob["n"] == 10].iloc[0]
    assert r10["default_verdict_kind"] == "a" and r10["reverses"] and r10["depends_on_variant"]
    assert r10["rows"] == 2, "current-thread is another model: not in the Go-vs-Rust rows"
    assert r10["best_go_variant"] == "waitgroup" and r10["best_rust_variant"] == "join-handles"
    r100 = rob[rob["n"] == 100].iloc[0]
    assert not r100["depends_on_variant"]
    text = " ".join(robustness.headline(rob))
    assert "depends on the variant choice at N=10" in text


def test_the_row_flag_says_same_verdict_only_when_every_pair_has_it():
    work = {"workload": "cpu_loops", "n": 1000, "threads_requested": 2, "arm": "", "shared_params": ""}
    rob = pd.DataFrame([
        {**work, "rows": 4, "depends_on_variant": False, "go_rows": 0, "rust_rows": 1, "equivalent_rows": 1,
         "inconclusive_rows": 2},
        {**work, "n": 3000, "rows": 4, "depends_on_variant": False, "go_rows": 0, "rust_rows": 4,
         "equivalent_rows": 0, "inconclusive_rows": 0},
        {**work, "n": 10, "rows": 1, "depends_on_variant": False, "go_rows": 1, "rust_rows": 0, "equivalent_rows": 0,
         "inconclusive_rows": 0, "default_go_variant": "plain"}])
    table = pd.DataFrame([{**work}, {**work, "n": 3000}, {**work, "n": 10}])
    assert list(robustness.row_flags(table, rob)) == [
        "no reversal, 4 pairs (1 Rust, 1 equivalent, 2 inconclusive)", "same verdict, 4 pairs", "defaults only"]


def test_defaults_only_is_said_of_the_default_pair_alone():
    # files_read with retain=content: the run took one pair, Go's chan-per-task against Rust's
    # tokio-fs (the article's programs), neither language's default: not "defaults only"
    content, digest = {"digest": "on", "retain": "content"}, {"digest": "on", "retain": "digest"}
    cells = [("files_read", "go", "chan-per-task", 10, content), ("files_read", "rust", "tokio-fs", 10, content),
             ("files_read", "go", "readfile", 10, digest), ("files_read", "rust", "spawn-blocking", 10, digest)]
    t = compare.compare(frame_of(cells, [1.0, 1.2, 1.0, 1.1]))
    flags = dict(zip(zip(t["go_variant"], t["rust_variant"]),
                     robustness.row_flags(t, robustness.robustness(table=t, metric="elapsed_s"))))
    assert flags == {("chan-per-task", "tokio-fs"): "one pair, not the defaults",
                     ("readfile", "spawn-blocking"): "defaults only"}


# --- the plan check -----------------------------------------------------------------------------------------
def test_a_plan_below_the_validated_pairs_is_refused_naming_the_fix():
    with pytest.raises(ValueError) as err:
        make_plan("memory", samples=5)
    text = str(err.value)
    assert "decided from 5 pairs" in text and f"samples >= {rules.MIN_PAIRS}" in text and "smoke=True" in text
    assert make_plan("memory", samples=5, smoke=True).smoke


def test_a_large_family_needs_no_more_samples_than_a_small_one():
    # 27 comparisons in one family: the exact test's floor asked for 11 samples; the rule now decides from 6
    kw = dict(workloads=["sleep"], ns=[10, 100, 1000], params={"sleep": {"work": 10}},
              variants={"sleep": {"go": ["waitgroup", "chan-per-task", "chan-shared"],
                                  "rust": ["join-handles", "joinset", "join-all"]}})
    assert plan_feasibility.family_sizes(make_plan("quick", samples=rules.MIN_PAIRS, **kw))["go_vs_rust"] == 27
    with pytest.raises(ValueError, match=rf"decided from 5 pairs.*set samples >= {rules.MIN_PAIRS}"):
        make_plan("quick", samples=5, **kw)
    with pytest.raises(ValueError, match=rf"set the pilot \(samples\) >= {rules.MIN_PAIRS}"):
        make_plan("quick", samples=rules.MIN_PAIRS - 1, max_samples=20, **kw)


def test_plan_mde_from_a_pilot():
    plan = make_plan("quick", workloads=["sleep"], ns=[10, 100], params={"sleep": {"work": 10}}, samples=10,
                     threads=simulate.SIM_THREADS)
    rng = np.random.default_rng(12)
    pilot = simulate.frame({simulate.SimCell(lang, n): 1.0 for n in (10, 100) for lang in ("go", "rust")}, 10, rng,
                           simulate.Conditions(cv=0.02))
    t = feasibility.plan_mde(plan, pilot)
    assert len(t) == 2 and (t["stored_pairs"] == 10).all()
    assert ((t["mde_at_samples"] > 0.01) & (t["mde_at_samples"] < 0.1)).all()
    assert feasibility.plan_mde(plan, pd.DataFrame())["mde_at_samples"].isna().all()


# --- the Method text ----------------------------------------------------------------------------------------
def test_the_methods_multiplicity_and_tests_are_written_from_the_tables_analysed():
    from bench_src.report import method
    rng = np.random.default_rng(13)
    df = simulate.frame(simulate.go_rust_cells([1.2, 1.0, 1.0]), 7, rng, simulate.Conditions(cv=0.001))
    tables = {"go_vs_rust_elapsed_s": compare.compare(df)}
    text = method.multiplicity(tables, rules.MARGIN, rules.ALPHA)
    from bench_src.report.tables import from_markdown

    row = from_markdown(next(b for b in text.split("\n\n") if b.startswith("|"))).frame.iloc[0]
    assert (row["family"], row["comparisons"], row["pairs each"]) == ("Go vs Rust, like for like", "3", "7")
    # at CV 0.1% even a 0.1% difference is resolved: 2 differences (one within the margin), 1 equivalent
    assert "Benjamini-Hochberg" in text and row["differences"] == "2 (1 within ±2%)"
    assert row["equivalent"] == "1" and row["intervals at"] == "96.7%"  # 1 - 2 x 0.05 / 3
    assert "Tests used: signed-rank: 3" in method.tests(tables)  # 7 pairs reach 0.05 / 3 (2 / 128 = 0.016)


# --- one analysis path ------------------------------------------------------------------------------------
def test_ping_pong_rates_read_the_parameter_columns():
    cells = [("ping_pong", "go", "channels", 1000, {"buffer": "0", "mode": "lockstep"}),
             ("ping_pong", "rust", "multi-thread", 1000, {"buffer": "1", "mode": "pipelined"})]
    df = frame_of(cells, [0.5, 0.25])
    df["per_s"] = df["n"] / df["elapsed_s"]
    t = memory.ping_pong_rates(df)
    assert sorted(zip(t["buffer"], t["mode"])) == [(0, "lockstep"), (1, "pipelined")]


def test_no_import_cycles_between_modules():
    root = Path(__file__).resolve().parents[1] / "bench_src"
    graph = {}
    for path in root.rglob("*.py"):
        mod = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
                deps |= {target} | {f"{target}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("bench_src")}
        graph[mod] = deps
    graph = {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}
    # a package's __init__ importing its own submodules is not a cycle of the layout
    graph = {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in graph.items()}
    state = {}

    def visit(m, stack):
        state[m] = "open"
        for d in graph[m]:
            if state.get(d) == "open":
                raise AssertionError(" -> ".join(stack + [m, d]))
            if d not in state:
                visit(d, stack + [m])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [])


def test_robustness_without_a_default_pair_gives_the_best_of_the_one_model_run_and_says_why_no_default():
    # Go's chan-per-task against Rust's joinset, neither language's default variant: the
    # go_vs_rust table has the pair's verdict, so the robustness row shows it as the best of each,
    # and says there is no default pair (not "not run")
    from bench_src.report import tables

    k = {"kernel": "xorshift", "work": "50000"}
    df = frame_of([("sleep", "go", "chan-per-task", 10, k), ("sleep", "rust", "joinset", 10, k)], [1.0, 1.2])
    rob = robustness.robustness(df)
    row = rob.iloc[0]
    assert row["rows"] == 1 and pd.isna(row["default_ratio"]) and row["note"] == "no default-vs-default row"
    assert (row["best_go_variant"], row["best_rust_variant"], row["best_verdict_kind"]) == ("chan-per-task",
                                                                                             "joinset", "a")
    shown = tables.readable(rob, "robustness_elapsed_s").frame.iloc[0]
    assert shown["defaults: Go/Rust [CI], verdict"] == "no default pair run"
    assert shown["best of each: Go/Rust [CI], verdict"].startswith("chan-per-task vs joinset: 0.8")


def test_a_pilot_left_short_of_pairs_by_a_failed_sample_takes_the_blocks_that_make_it_testable():
    # one failed pilot sample left two comparisons at 5 pairs: untested, they were closed as "no
    # data" (never decidable) and took no more blocks; they are open, and a block later have 6 pairs
    from bench_src.analysis import sequential

    plan = simulate.sequential_plan(samples=6, max_samples=30, looks=3)
    centres = {c.id: (simulate.MIXED[c.n] if c.lang == "go" else 1.0) for c in plan.cells()}
    rng = np.random.default_rng(3)
    store = simulate._MemoryStore()
    drop = {c.id for c in plan.cells() if c.lang == "go" and c.n in (40, 100)}

    def take(seq, slot):
        c = slot.cell
        if slot.block == 2 and c.id in drop:  # its sample failed
            return
        value = centres[c.id] * float(simulate.noise(rng, "lognormal", 1, 0.01)[0])
        store.rows.append({"run_id": "sim", "seq": seq, "phase": "measured", "block": slot.block, "pos": slot.pos,
                           "cell_id": c.id, "workload": c.workload, "lang": c.lang, "variant": c.variant, "n": c.n,
                           "threads_requested": c.threads, "arm": c.arm,
                           "params": ",".join(f"{k}={v}" for k, v in c.params), **{f"p_{k}": v for k, v in c.params},
                           "valid": True, "elapsed_s": value, "wall_s": value})

    for seq, slot in enumerate(plan.schedule()):
        if slot.phase == "measured":
            take(seq, slot)
    said = []
    sequential.run_blocks(plan, store, take, set(), simulate._Bar(), said.append)
    assert "2 open" in said[0] and "no data" not in said[0]
    table = compare.compare(store.frame(), design=sequential.design_of(plan))
    short = table[table["n"].isin([40, 100])]
    assert (short["pairs"] >= rules.MIN_PAIRS).all() and short["ratio"].notna().all()


def test_a_comparison_stopped_as_precise_opens_again_when_a_later_look_reads_its_mde_above_the_target(monkeypatch):
    # An MDE can grow at the same pairs (the family's level rises as its other comparisons are
    # called).  Here the target moves instead: 50% at the pilot's look, where the comparison at
    # N = 10 (equal medians, CV 3%) is "precise", 5% from the next look on, where its 6 pairs read
    # open.  The rule kept "precise" once found, left its cells at the pilot and said every
    # comparison was decided while the final table read that MDE above 5%; it reads it again, and
    # the cells take blocks until it is decided.  N = 20 (CV 100%) is open at both looks, so the
    # rule looks a second time; every other comparison is a clear difference.
    from bench_src.analysis import sequential

    plan = simulate.sequential_plan(samples=6, max_samples=30, looks=3)
    rng = np.random.default_rng(5)
    store = simulate._MemoryStore()
    noisy, loud = simulate.SEQUENTIAL_NS[0], simulate.SEQUENTIAL_NS[1]

    def take(seq, slot, alone=False):
        c = slot.cell
        centre = 1.0 if c.n in (noisy, loud) or c.lang == "rust" else 2.0
        cv = 0.03 if c.n == noisy else 1.0 if c.n == loud else 0.002
        value = centre * float(simulate.noise(rng, "lognormal", 1, cv)[0])
        store.rows.append({"run_id": "sim", "seq": seq, "phase": "measured", "block": slot.block, "pos": slot.pos,
                           "cell_id": c.id, "workload": c.workload, "lang": c.lang, "variant": c.variant, "n": c.n,
                           "threads_requested": c.threads, "arm": c.arm,
                           "params": ",".join(f"{k}={v}" for k, v in c.params), **{f"p_{k}": v for k, v in c.params},
                           "valid": True, "elapsed_s": value, "wall_s": value})

    for seq, slot in enumerate(plan.schedule()):
        if slot.phase == "measured":
            take(seq, slot)
    real_look, targets = sequential.look, iter([0.5])

    def look(*args, **kwargs):
        monkeypatch.setattr(sequential.rules, "PRECISION_TARGET", next(targets, 0.05))
        return real_look(*args, **kwargs)

    monkeypatch.setattr(sequential, "look", look)
    said = []
    sequential.run_blocks(plan, store, take, set(), simulate._Bar(), said.append)
    assert "1 precise" in said[0] and "1 open" in said[0], said[0]
    table = compare.compare(store.frame(), design=sequential.design_of(plan))
    row = table[table["n"] == noisy].iloc[0]
    assert row["pairs"] > plan.samples, "the cells of the comparison found open again took blocks"
    assert row["verdict_kind"] in ("a", "b", "equivalent") or row["mde"] <= 0.05 or row["pairs"] >= plan.max_samples, \
        (row["verdict"], row["mde"], row["pairs"])
    assert sequential.kept_decisions(sequential.Look({}, {}, {}, {"elapsed_s": {
        ("f", 1, 2): "difference", ("f", 1, 3): "equivalent", ("f", 1, 4): "precise", ("f", 1, 5): "no data",
        ("f", 1, 6): "open"}})) == {("elapsed_s", ("f", 1, 2)): "difference", ("elapsed_s", ("f", 1, 3)): "equivalent"}


def test_the_articles_dead_loop_is_no_like_for_like_comparison_but_stays_in_the_article_family():
    """kernel=article is a float loop whose result is never used: Rust's compiler removes it and Go
    runs it (Go's CPU time at N = 1,000,000 was 28.5 s against Rust's 3.3 s), and no checksum can
    prove the work equal.  Its Go and Rust cells were rows of the like-for-like table ("Rust faster
    7.58x"); they are compared only in the article family, as the article's own programs."""
    plan = make_plan("article")
    families = comparisons.plan_comparisons(plan)
    dead = [(a, b) for a, b in families["go_vs_rust"] if ("kernel", "article") in a.params or ("kernel", "article") in b.params]
    assert dead == []
    article = [(a, b) for a, b in families["article"] if a.workload == "sleep"]
    assert article and all(("kernel", "article") in a.params and ("kernel", "article") in b.params for a, b in article)
    assert any(("kernel", "xorshift") in a.params for a, _ in families["go_vs_rust"] if a.workload == "sleep")
    cells = [comparisons.CellRef("sleep", lang, variant, 1000, 2, "", (("kernel", kernel), ("work", "50000")))
             for kernel in ("xorshift", "article") for lang, variant in (("go", "waitgroup"), ("rust", "join-handles"))]
    pairs = comparisons.comparisons(cells, "go_vs_rust")
    assert [a.params for a, _ in pairs] == [(("kernel", "xorshift"), ("work", "50000"))]
    assert comparisons.unequal_work(cells[2]) == "kernel=article" and comparisons.unequal_work(cells[0]) == ""


def test_a_pair_that_could_not_be_tested_is_counted_apart_from_the_inconclusive_ones():
    """The robustness row counts a pair of variants with no pairs of values that count (no ratio,
    verdict_kind inconclusive: compare.untested) as not tested, as the findings and the Method do;
    the readable table shows the fifth count only where some row has one."""
    from bench_src.report import tables

    base = {"workload": "sleep", "n": 1000, "threads_requested": 2, "arm": "", "shared_params": "work=0",
            "metric": "peak_rss_mib", "go_model": "task", "rust_model": "task", "go_params": "", "rust_params": "",
            "go_median": 1.0, "rust_median": 1.0, "verdict": "inconclusive"}
    table = pd.DataFrame([
        {**base, "go_variant": "waitgroup", "rust_variant": "join-handles", "go_default": True, "rust_default": True,
         "ratio": np.nan, "ratio_ci_low": np.nan, "ratio_ci_high": np.nan, "verdict_kind": "inconclusive"},
        {**base, "go_variant": "chan-per-task", "rust_variant": "join-handles", "go_default": False,
         "rust_default": True, "ratio": 1.01, "ratio_ci_low": 0.97, "ratio_ci_high": 1.05,
         "verdict_kind": "inconclusive"}])
    rob = robustness.robustness(table=table, metric="peak_rss_mib")
    assert (rob["inconclusive_rows"].iloc[0], rob["untested_rows"].iloc[0]) == (1, 1)
    assert list(robustness.row_flags(table, rob)) == ["no reversal, 2 pairs (1 inconclusive, 1 not tested)"] * 2
    shown = tables.comparisons.robustness(rob).frame
    assert shown["verdicts (Go / Rust / equivalent / inconclusive / not tested)"].iloc[0] == "0 / 0 / 0 / 1 / 1"
    none = tables.comparisons.robustness(rob.assign(untested_rows=0, inconclusive_rows=2)).frame
    assert none["verdicts (Go / Rust / equivalent / inconclusive)"].iloc[0] == "0 / 0 / 0 / 2"


def test_an_mde_never_reaches_past_the_farther_end_of_the_interval_beside_it():
    """An inconclusive row's mde is the smaller of the difference its test calls with 80% power and
    the farther end of its interval from 1: a difference beyond that end the interval excludes
    already (a quick run's files_rw row read "1.04 [0.748, 1.56], MDE x/÷ 1.67").  A difference of
    the mde or more is then excluded, or called with that power at the spread measured."""
    rng = np.random.default_rng(5)
    d = rng.normal(0.0, 0.25, 10)
    d -= d.mean() - 0.02  # an estimate near 0: the interval straddles 1 about evenly
    codes = np.arange(d.size)
    t = compare.pair_test(codes, np.exp(d), codes, np.ones(d.size), level_min=0.05 / 25)
    row = compare.decide_family([t], 0.05, 0.02, 25)[0]
    low, high = np.log(row["ratio_ci_low"]), np.log(row["ratio_ci_high"])
    share, last = t.tested.last
    power = compare._detectable_power(low, high, last, (1 - row["ci_level"]) * share)
    assert row["verdict_kind"] == "inconclusive" and low < 0 < high
    assert power > max(high, -low), "the case: the power reading reaches past the interval's ends"
    assert np.log1p(row["mde"]) == pytest.approx(max(high, -low)), "capped at the farther end"
    assert np.log1p(row["mde"]) >= (high - low) / 2 - 1e-12, "never below the half-width"
