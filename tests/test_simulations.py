"""Simulations on synthetic runs (bench_src.analysis.simulate): interval coverage, family-wise
false positives, power, and the sequential rule.  Every simulation is seeded; the number of
replications is given beside each, with the standard error it implies.  docs/statistics.md
reports the same quantities with more replications (`python -m bench_src.analysis.simulate`)."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from bench_src.analysis import compare, rules, scaling, sequential, simulate, stats

SHAPES = simulate.SHAPES


def within(x, low=0.93, high=0.97):
    return low <= x <= high


# --- the median's interval ----------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n", [16, 31])
def test_median_ci_covers_on_every_shape(shape, n):
    # 3,000 samples per case: standard error 0.4 points around a coverage of 95%.  CV 1%: the bimodal
    # samples fall into two narrow modes 20% apart with the median in the empty gap between them
    rng = np.random.default_rng(n * 7 + SHAPES.index(shape))
    truth = simulate.true_median(shape)
    reps = 3000
    hits = sum(lo <= truth <= hi for _, lo, hi in (stats.median_ci(simulate.noise(rng, shape, n, 0.01))
                                                    for _ in range(reps)))
    assert within(hits / reps), hits / reps
    assert abs(hits / reps - stats.median_ci_coverage(n)) < 0.015, "the exact coverage must be what it is"


def test_median_ci_coverage_at_small_n_is_exact_and_stated():
    assert stats.median_ci_coverage(4) != stats.median_ci_coverage(4)  # NaN: no interval from 4 values
    assert math.isnan(stats.median_ci([1, 2, 3, 4])[1])
    assert stats.median_ci_coverage(5) == pytest.approx(1 - 2 / 32)
    assert stats.median_ci_coverage(7) == pytest.approx(1 - 2 / 128)
    assert stats.median_ci_coverage(10) == pytest.approx(0.9346, abs=1e-4)
    assert stats.median_ci([5, 1, 4, 2, 3]) == (3.0, 1.0, 5.0)


# --- the paired ratio interval, through compare.compare ---------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
def test_paired_ratio_ci_covers_under_drift_and_block_effects(shape):
    # 40 frames x 25 comparisons = 1,000 intervals (standard error about 0.7 points; comparisons of
    # one frame share its drift and block effects)
    rng = np.random.default_rng(100 + SHAPES.index(shape))
    cover = simulate._ratio_coverage(shape, 40, rng, simulate.Conditions(cv=0.01, drift=0.1, block_sd=0.03))
    assert within(cover), cover


@pytest.mark.parametrize("shape", SHAPES)
def test_unpaired_fallback_covers_when_there_are_no_blocks(shape):
    # 24 frames x 25 comparisons = 600 intervals (standard error 0.9 points)
    rng = np.random.default_rng(200 + SHAPES.index(shape))
    ratios = np.exp(rng.uniform(-0.3, 0.3, 25))
    hits = total = 0
    for _ in range(24):
        df = simulate.frame(simulate.go_rust_cells(ratios), 10, rng, simulate.Conditions(shape, 0.02)).drop(
            columns=["block"])
        t = compare.compare(df, tests=False)
        assert (t["pairing"] == "unpaired").all() and t["warning"].str.contains("no block column").all()
        truth = ratios[t["n"].to_numpy() - 1]
        hits += int(((t["ratio_ci_low"] <= truth) & (truth <= t["ratio_ci_high"])).sum())
        total += len(t)
    assert within(hits / total), hits / total


# --- family-wise false positives on A/A frames ---------------------------------------------------------
@pytest.mark.parametrize("label, cond, burst", [
    ("drift +10% over the run", simulate.Conditions(cv=0.01, drift=0.1), False),
    ("a burst: half of one block 50% slower", simulate.Conditions(cv=0.01, burst=0.5), True),
])
def test_family_wise_false_positives_stay_below_alpha(label, cond, burst):
    # 250 A/A tables of 13 comparisons at 10 blocks.  The exact paired test of 10 pairs cannot go
    # below p = 2/1024, and Holm's first level is 0.05/13 = 0.0038, so the expected rate is
    # 13 x 2/1024 = 2.5%; 250 tables give a standard error of 1 point, so a method at 6% or more
    # would show.
    rng = np.random.default_rng(300 + burst)
    r = simulate.family_false_positives(250, rng, cond, m=13, burst=burst)
    assert r["fwer"] <= rules.ALPHA, (label, r)


def test_a_true_3_percent_difference_is_found_under_drift():
    # 20 tables of 25 Go-vs-Rust comparisons (the size of the quick profile's table), each with
    # Go 3% slower, CV 1% per sample, 10 blocks, drift +10% over the run: 500 comparisons
    rng = np.random.default_rng(400)
    found = wrong = total = 0
    for _ in range(20):
        t = compare.compare(simulate.frame(simulate.go_rust_cells([1.03] * 25), 10, rng,
                                           simulate.Conditions(cv=0.01, drift=0.1)))
        found += int((t["verdict_kind"] == "b").sum())
        wrong += int((t["verdict_kind"] == "a").sum())
        total += len(t)
    assert found / total >= 0.95, found / total
    assert wrong == 0, "a wrong direction must never be called"


def test_a_difference_within_the_margin_keeps_both_readings():
    rng = np.random.default_rng(401)
    t = compare.compare(simulate.frame(simulate.go_rust_cells([0.99] * 5), 30, rng, simulate.Conditions(cv=0.002)))
    assert (t["verdict_kind"] == "a").all() and t["within_margin"].all()
    assert (t["verdict"] == "Go faster, by less than 2%").all()


# --- per-task cost and exponent ---------------------------------------------------------------------------
@pytest.mark.parametrize("label, kw", [
    ("multiplicative noise", {}),
    ("a shared per-N effect of 5%", {"per_n_sd": 0.05}),
    ("heavy-tailed samples", {"shape": "heavy"}),
    ("bimodal samples", {"shape": "bimodal"}),
])
def test_scaling_intervals_cover(label, kw):
    # 2,000 series of 4 values of N with 10 samples each (CV 5%): standard error 0.5 points
    rng = np.random.default_rng(500 + len(label))
    c = simulate.scaling_coverage(2000, rng, **kw)
    assert within(c["per_task"]) and within(c["exponent"]), (label, c)


def test_scaling_with_two_values_of_n_gives_no_interval_and_says_why():
    df = pd.DataFrame([{"workload": "idle_tasks", "lang": "go", "variant": "goroutine", "n": n, "threads_requested": None,
                        "params": "", "valid": True, "peak_rss_bytes": 1e6 + 2000 * n * (1 + 0.01 * k)}
                       for n in (1000, 10000) for k in range(5)])
    row = scaling.per_task_cost(df, "peak_rss_bytes").iloc[0]
    assert row["per_task"] == pytest.approx(2000, rel=0.02)
    assert math.isnan(row["per_task_ci_low"]) and math.isnan(row["exponent_ci_high"])
    assert "only 2 values of N" in row["warning"] and "needs >= 3" in row["warning"]


# --- the sequential rule -------------------------------------------------------------------------------------
def test_sequential_rule_keeps_family_wise_false_positives_below_alpha():
    # 300 runs of a plan whose 12 Go-vs-Rust comparisons are all A/A-like (equal medians, CV 2%, so
    # most stay open past the pilot): the share of runs with any false positive.  The rule's bound
    # is 5% by construction (alpha split over the looks, Holm over the family); the study in
    # docs/statistics.md measured 4.3% with 2,000 runs.  300 runs cannot tell 4% from 5%, so
    # the assertion is a one-sided binomial test at the 1% level of "at most 5%": it fails for a
    # rule whose rate is 10% (expected 30 of 300) with probability above 99%.
    rng = np.random.default_rng(600)
    runs = 300
    r = simulate.sequential_study(runs, rng, dict.fromkeys(simulate.SEQUENTIAL_NS, 1.0), simulate.Conditions(cv=0.02))
    assert r["past_pilot"] > 0, "the simulation must go past the pilot to test the looks"
    false_runs = round(r["fwer"] * runs)
    assert binomtest(false_runs, runs, rules.ALPHA, alternative="greater").pvalue > 0.01, r


def test_sequential_rule_covers_and_saves_samples_on_a_mixed_run():
    # 80 runs of a plan whose 12 comparisons are clearly different (x1.3, x0.8), equal, or open
    # (1.5% apart at CV 1%): 960 intervals (standard error 0.7 points), and the samples each run took
    rng = np.random.default_rng(700)
    r = simulate.sequential_study(80, rng, simulate.MIXED, simulate.Conditions(cv=0.01))
    assert within(r["coverage"]), r
    assert r["wrong"] == 0, r
    assert r["mean_samples"] < 0.75 * r["budget"], r


@pytest.mark.parametrize("m, looks", [(1, (6, 13, 20)), (12, (10, 20, 30)), (28, (10, 20, 30)), (72, (6, 13, 20)),
                                      (200, (6, 13, 20)), (72, (6, 8, 10))])
def test_each_family_spends_alpha_only_at_looks_it_can_use(m, looks):
    shares = rules.family_spending(m, looks)
    assert sum(shares) == pytest.approx(1.0)
    usable = [w > 0 and 2 * 0.5 ** n < rules.ALPHA * w / m for n, w in zip(looks, shares)]
    if any(2 * 0.5 ** n < rules.ALPHA / m for n in looks):  # some look could use the whole of alpha
        assert all(u for u, w in zip(usable, shares) if w > 0), (m, looks, shares)
    else:
        assert shares == rules.look_spending(len(looks)), "nothing usable: the plain shares (the plan is refused)"


def test_spending_of_the_article_grid():
    # 72 Go-vs-Rust comparisons looked at after 6, 13 and 20 pairs: 6 pairs (p >= 0.031) can never
    # reach 0.05 x 0.5 / 72, and 13 pairs (p >= 2.4e-4) cannot reach 0.05 x 0.25 / 72 = 1.7e-4, so
    # the pilot's half goes to the later looks, where 13 pairs can reach 0.05 x 0.5 / 72 = 3.5e-4
    assert rules.family_spending(72, (6, 13, 20)) == (0.0, 0.5, 0.5)
    assert rules.family_spending(12, (10, 20, 30)) == rules.look_spending(3) == (0.5, 0.25, 0.25)
    assert rules.family_spending(200, (6, 13, 20)) == (0.0, 0.0, 1.0)


def test_a_large_family_decides_clear_differences_at_the_second_look():
    # 72 comparisons, 13 blocks of a sequential design with looks at 6, 13 and 20 pairs: every
    # Go/Rust ratio is 1.3 with CV 1%, so all 13 pairs of each comparison have one sign (p = 2.4e-4).
    rng = np.random.default_rng(900)
    df = simulate.frame(simulate.go_rust_cells([1.3] * 72), 13, rng, simulate.Conditions(cv=0.01))
    sizes = (("go_vs_rust", 72),)
    planned = compare.Design((6, 13, 20), rules.look_spending(3), sizes)
    t = compare.compare(df, design=planned)
    assert len(t) == 72 and (t["verdict_kind"] == "b").all(), t["p_holm"].describe()
    assert t["p_value"].max() == pytest.approx(2 * 0.5 ** 13 / 0.5)
    # the plain shares would have lost the pilot's half: 72 x 2.4e-4 / 0.25 is above alpha
    assert 72 * 2 * 0.5 ** 13 / rules.look_spending(3)[1] > rules.ALPHA
    # a design read back from meta.json without family sizes takes the family's size from the table
    unsized = compare.compare(df, design=compare.Design((6, 13, 20), rules.look_spending(3)))
    assert (unsized["verdict_kind"] == "b").all()


def test_sequential_rule_with_an_unusable_pilot_keeps_false_positives_below_alpha_and_decides():
    # The article's shape: a pilot of 6 pairs that can only call equivalence, looks at 13 and 20.
    # A/A-like (equal medians, CV 2%): 200 runs, one-sided binomial test of "at most 5%" at the 1%
    # level; and a mixed run: the clear differences are called, the intervals cover.
    plan = simulate.sequential_plan(samples=6, max_samples=20, looks=3)
    assert sequential.design_of(plan).shares("go_vs_rust") == (0.0, 0.5, 0.5)
    rng = np.random.default_rng(610)
    runs = 200
    r = simulate.sequential_study(runs, rng, dict.fromkeys(simulate.SEQUENTIAL_NS, 1.0), simulate.Conditions(cv=0.02),
                                  plan=plan)
    assert r["past_pilot"] > 0
    assert binomtest(round(r["fwer"] * runs), runs, rules.ALPHA, alternative="greater").pvalue > 0.01, r
    r = simulate.sequential_study(60, np.random.default_rng(710), simulate.MIXED, simulate.Conditions(cv=0.01),
                                  plan=plan)
    assert r["wrong"] == 0 and 0.92 <= r["coverage"] <= 0.98, r
    assert r["mean_samples"] < 0.8 * r["budget"], r


def test_blocks_bring_one_group_at_a_time_to_the_next_look():
    a, b, c, d = (sequential.CellRef("sleep", lang, "v", n, 2, "", ()) for n in (1, 2) for lang in ("go", "rust"))
    groups = [{a, b}, {c, d}]
    comps = [("go_vs_rust", a, b), ("go_vs_rust", c, d)]
    widths = {comps[0]: 0.05, comps[1]: 0.20}  # the second group is wider at the same cost
    order = sequential.block_order(groups, widths, comps, dict.fromkeys((a, b, c, d), 1.0), 6, 7)
    assert order == [1] * 7 + [0] * 7
    cheap = sequential.block_order(groups, widths, comps, {a: 0.01, b: 0.01, c: 1.0, d: 1.0}, 6, 7)
    assert cheap == [0] * 7 + [1] * 7, "per second of machine time, the cheap group first"


def test_expected_samples_from_a_pilot():
    plan = simulate.sequential_plan()
    ns = simulate.SEQUENTIAL_NS
    no_pilot = sequential.expected_samples(plan)
    assert set(no_pilot.values()) == {float(plan.max_samples)}, "without a pilot: the budget"
    rng = np.random.default_rng(800)
    truth = {n: (1.0 if n == 40 else r) for n, r in simulate.MIXED.items()}
    df = simulate.frame({simulate.SimCell(lang, n): (truth[n] if lang == "go" else 1.0) for n in ns
                         for lang in ("go", "rust")}, 10, rng, simulate.Conditions(cv=0.005))
    wide = df["n"] == 40  # equal medians but a spread of 5%: open at the pilot, and for long
    df.loc[wide, "elapsed_s"] *= np.exp(0.05 * rng.standard_normal(int(wide.sum())))
    cells = {(c.lang, c.n): c for c in plan.cells()}
    records = [{"phase": "measured", "block": int(r.block), "cell_id": cells[(r.lang, r.n)].id, "workload": "sleep",
                "lang": r.lang, "variant": r.variant, "n": int(r.n), "threads_requested": simulate.SIM_THREADS, "arm": "",
                "params": '{"kernel": "xorshift", "work": "10"}', "status": "ok", "checksum": "0", "equiv_key": "k",
                "elapsed_ns": int(r.elapsed_s * 1e9), "wall_ns": int(r.elapsed_s * 1e9), "seq": int(r.seq)}
               for r in df.itertuples()]
    expected = sequential.expected_samples(plan, records)
    by_n = {n: expected[cells[("go", n)].id] for n in ns}
    assert by_n[10] == by_n[50] == by_n[20] == plan.samples, "clear differences and equal cells stop at the pilot"
    assert by_n[40] > plan.samples + 10, by_n[40]
    assert sequential.expected_duration(plan, {c.id: 2.0 for c in plan.cells()}, records) == pytest.approx(
        2.0 * sum(expected.values()))
