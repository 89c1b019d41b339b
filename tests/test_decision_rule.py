"""The decision rule's parts, each against an independent computation: the per-comparison tests and
their intervals (paired, unpaired), the false discovery rate over a family, the looks, and the
promise that a verdict never contradicts the interval beside it."""
import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from bench_src.analysis import compare, multiplicity, paired, ranktests, simulate, unpaired


# --- one comparison ---------------------------------------------------------------------------------------
def test_the_test_is_chosen_by_the_design_not_the_data():
    # 6 pairs cannot reach 0.05 / 72 with any exact test (2/64 = 0.031): signed-rank down to its
    # floor, Student's t below
    assert paired.choose_test(6, 0.05 / 72) == paired.RANK_THEN_T
    # 20 pairs can (2 / 2^20 = 1.9e-6): the exact signed-rank test
    assert paired.choose_test(20, 0.05 / 72) == paired.SIGNED_RANK
    assert paired.choose_test(13, 0.05 / 72) == paired.SIGNED_RANK  # 2/8192 = 2.4e-4 <= 6.9e-4
    assert paired.choose_test(13, 0.05 * 0.25 / 72) == paired.RANK_THEN_T  # 1.7e-4 < 2.4e-4


@pytest.mark.parametrize("test", [paired.T_TEST, paired.SIGNED_RANK, paired.RANK_THEN_T])
def test_interval_excludes_zero_exactly_when_p_is_at_most_the_level(test):
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(6, 22))
        d = rng.normal(rng.uniform(-1, 1), 1, n)
        loc = paired.Location(d, test)
        level = float(rng.choice([0.05, 0.01, 0.002, 0.0005]))
        lo, hi = loc.interval(level)
        if np.isnan(lo):
            assert test == paired.SIGNED_RANK and ranktests.min_p_paired(n) > level
            continue
        assert lo <= float(loc.estimate) <= hi
        p = float(loc.p_value())
        assert (lo > 0 or hi < 0) == (p <= level), (test, n, level, lo, hi, p)


def test_signed_rank_then_t_is_the_exact_interval_down_to_its_floor_and_the_hull_with_t_below():
    rng = np.random.default_rng(11)
    d = rng.normal(0.05, 0.02, 6)
    both = paired.Location(d, paired.RANK_THEN_T)
    rank, t = paired.Location(d, paired.SIGNED_RANK), paired.Location(d, paired.T_TEST)
    floor = 2 / 2 ** 6
    assert float(both.estimate) == pytest.approx(float(rank.estimate)), "the Hodges-Lehmann estimate"
    for level in (0.05, floor):  # the signed-rank test's own levels: its Tukey-Moses interval
        assert both.interval(level) == pytest.approx(rank.interval(level))
        assert both.coverage(level) == pytest.approx(rank.coverage(level))
        assert both.test_at(level) == paired.SIGNED_RANK
    for level in (0.01, 0.001):  # below: the hull of Student's interval and [min d, max d]
        lo, hi = both.interval(level)
        assert float(lo) == pytest.approx(min(float(t.interval(level)[0]), d.min()))
        assert float(hi) == pytest.approx(max(float(t.interval(level)[1]), d.max()))
        assert both.test_at(level) == paired.T_TEST and both.coverage(level) == pytest.approx(1 - level)
    # every d above 0: the p-value is Student's wherever that is below the floor
    assert float(both.p_value()) == pytest.approx(min(float(t.p_value()), floor))
    # nested as the level falls, through the floor
    widths = [np.diff(both.interval(lv))[0] for lv in (0.2, 0.05, floor, 0.02, 0.005, 0.0005)]
    assert all(a <= b + 1e-12 for a, b in zip(widths, widths[1:])), widths
    # one d on the other side of 0: nothing below the floor can be called, whatever t says
    d2 = np.r_[np.full(9, 0.10) + rng.normal(0, 1e-3, 9), -0.001]
    assert float(paired.Location(d2, paired.T_TEST).p_value()) < 1e-4  # far below 2 / 2^10 = 2e-3
    assert float(paired.Location(d2, paired.RANK_THEN_T).p_value()) > 2 / 2 ** 10


def test_values_that_tie_take_students_t_whichever_cell_of_a_pair_holds_them():
    rng = np.random.default_rng(13)
    a, b = np.round(20 + rng.normal(0, 1, 12)), np.round(20 + rng.normal(0, 1, 12))  # a grid of 1: ties
    grid = paired.rounding(paired.grid_step(a, b), a, b)
    assert bool(grid.tied)
    d = np.log(a) - np.log(b)
    loc = paired.Location.of(d, 0.05 / 30, grid)
    assert loc.test == paired.T_TEST and float(loc.estimate) == pytest.approx(d.mean())
    # swapping the cells of any pairs (the signs of d) never changes the choice
    for _ in range(20):
        swap = rng.random(12) < 0.5
        assert bool(paired.repeats(np.where(swap, b, a), np.where(swap, a, b)))
    # continuous values never tie: the design's test
    x, y = rng.lognormal(0, 0.01, 12), rng.lognormal(0, 0.01, 12)
    assert not bool(paired.repeats(x, y))
    assert paired.Location.of(np.log(x / y), 0.05 / 30, paired.rounding(0.0, x, y)).test == paired.SIGNED_RANK
    # a family whose comparisons differ: each takes its own (the simulations decide many at once)
    values = np.stack([np.stack([a, b]), np.stack([x, y])])  # (comparison, side, block)
    both = paired.rounding(paired.grid_step(values[:, 0], values[:, 1]), values[:, 0], values[:, 1])
    dd = np.log(values[:, 0]) - np.log(values[:, 1])
    mixed = paired.Location.of(dd, 0.05 / 30, both)
    alone = [paired.Location(dd[0], paired.T_TEST, grid), paired.Location(dd[1], paired.SIGNED_RANK)]
    assert np.allclose(mixed.p_value(), [float(alone[0].p_value()), float(alone[1].p_value())])
    assert np.allclose(np.stack(mixed.interval(0.01)), np.stack([np.r_[alone[0].interval(0.01)],
                                                                 np.r_[alone[1].interval(0.01)]]).T)


def test_one_block_far_out_leaves_the_95_percent_interval_near_its_level():
    # a burst: one block of 6 whose Go cell ran 50% slower.  Student's interval widens to hold it
    # (and so covers ~100%); the signed-rank interval at 95% keeps its exact 96.9% (2,000 draws:
    # standard error 0.4 points)
    rng = np.random.default_rng(12)
    d = rng.normal(0, 0.014, (2000, 6))
    d[:, 0] += math.log(1.5)
    t_lo, t_hi = paired.Location(d, paired.T_TEST).interval(0.05)
    lo, hi = paired.Location(d, paired.RANK_THEN_T).interval(0.05)
    assert ((t_lo <= 0) & (0 <= t_hi)).mean() > 0.995
    assert abs(((lo <= 0) & (0 <= hi)).mean() - (1 - 2 / 64)) < 0.012


def test_t_test_is_students_with_one_degree_of_freedom_fewer_and_signed_rank_is_exact():
    rng = np.random.default_rng(2)
    d = rng.normal(0.02, 0.03, 9)
    loc = paired.Location(d, paired.T_TEST)
    t = d.mean() / (d.std(ddof=1) / 3)
    assert paired.t_dof(9) == 7
    assert float(loc.p_value()) == pytest.approx(2 * sps.t.sf(abs(t), 7))
    lo, hi = loc.interval(0.05)
    half = sps.t.isf(0.025, 7) * d.std(ddof=1) / 3
    assert (lo, hi) == pytest.approx((d.mean() - half, d.mean() + half))
    assert hi - lo > np.diff(sps.ttest_1samp(d, 0).confidence_interval(0.95))[0], "wider than Student's"
    d = np.array([0.3, -0.1, 0.5, 0.2, 0.25, -0.05, 0.4, 0.15])  # no ties: the Walsh count is W-
    rank = paired.Location(d, paired.SIGNED_RANK)
    assert float(rank.p_value()) == pytest.approx(ranktests.signed_rank_p(d)[0])
    walsh = [(d[i] + d[j]) / 2 for i in range(d.size) for j in range(i, d.size)]
    assert float(rank.estimate) == pytest.approx(np.median(walsh))


def test_a_grid_widens_the_interval_by_its_rounding():
    # each cell's own gaps give the step: 1 here, not the 3 between the cells
    assert paired.grid_step(np.array([20.0, 21, 21]), np.array([24.0, 25])) == 1.0
    assert paired.grid_step(np.array([20.0, 22, 22]), np.array([24.0, 25])) == 1.0, "a step must fit every value"
    assert paired.grid_step(np.array([20.0, 22]), np.array([24.0, 27])) == 0.0, "neither 2 nor 3 fits all"
    # two cells that never vary: their distance is not a step; the known resolution is used
    assert paired.grid_step(np.full(6, 21.0), np.full(6, 20.0), resolution=1.0) == 1.0
    assert paired.grid_step(np.full(6, 21.0), np.full(6, 20.0)) == 0.0
    # continuous values lie on no grid
    rng = np.random.default_rng(0)
    assert paired.grid_step(rng.lognormal(0, 0.01, 8), rng.lognormal(0, 0.01, 8)) == 0.0
    # cells that never vary are rounded: each off by up to half a step, uniformly, so the 1 - level
    # bound of the error of d is the trapezoid's quantile, between the two half steps and their sum
    grid = paired.rounding(1.0, np.full(6, 21.0), np.full(6, 20.0))
    u, v = 1 / 40, 1 / 42
    assert (float(grid.u), float(grid.v), float(grid.fixed)) == pytest.approx((u, v, 0.0))
    assert float(grid.half_width(0.0)) == pytest.approx(u + v)
    assert float(grid.half_width(0.05)) == pytest.approx(u + v - 2 * math.sqrt(0.05 * u * v))
    assert float(grid.half_width(0.99)) == pytest.approx(u * 0.01)
    for level in (1e-4, 0.01, 0.05, 0.5, 0.98):  # survival inverts half_width
        assert float(grid.survival(grid.half_width(level))) == pytest.approx(level, rel=1e-9)
    # the quantile is what it says: over uniform places of the true values between grid points
    rng = np.random.default_rng(7)
    err = rng.uniform(-u, u, 400_000) - rng.uniform(-v, v, 400_000)
    assert np.mean(np.abs(err) > float(grid.half_width(0.05))) == pytest.approx(0.05, abs=0.002)
    # every block 20 against 20 on a grid of 1: rounding alone may hide a difference of up to a step
    equal = paired.Location(np.zeros(6), paired.T_TEST, paired.rounding(1.0, np.full(6, 20.0), np.full(6, 20.0)))
    assert float(equal.p_value()) == 1.0
    assert float(equal.interval(0.05)[1]) == pytest.approx(2 * 0.025 * (1 - math.sqrt(0.05)))
    # 21 against 20, never varying: the true values lie in [20.5, 21.5) and [19.5, 20.5), so only both
    # at 20.5 would make them equal; the p-value is where the rounding bound reaches the distance
    same = paired.Location(np.full(6, math.log(21 / 20)), paired.T_TEST, grid)
    assert float(same.p_value()) == pytest.approx(float(grid.survival(math.log(21 / 20))), rel=1e-6)
    assert float(same.p_value()) < 1e-6 and float(same.interval(0.05)[0]) > 0
    # 22 against 20: beyond anything rounding can give (a whole step more than both half steps)
    grid = paired.rounding(1.0, np.full(6, 22.0), np.full(6, 20.0))
    apart = paired.Location(np.full(6, math.log(22 / 20)), paired.T_TEST, grid)
    assert float(apart.p_value()) < 1e-200 and float(apart.interval(1e-12)[0]) > 0
    # with noise, the t part and the grid part add at the same level; the p-value stays dual
    d = math.log(1.1) + rng.normal(0, 0.02, 6)
    noisy = paired.Location(d, paired.T_TEST, grid)
    p = float(noisy.p_value())
    assert 0 < p < 1
    assert float(noisy.interval(p * 1.01)[0]) > 0 > float(noisy.interval(p * 0.99)[0])
    # the signed-rank test on a grid: the same duality, wherever the p-value lies above the smallest
    # level 20 pairs can reach
    grid = paired.rounding(1.0, np.full(20, 22.0), np.full(20, 20.0))
    checked = 0
    for _ in range(200):
        d = rng.uniform(0, 0.08) + rng.normal(0, 0.06, 20)
        rank = paired.Location(d, paired.SIGNED_RANK, grid)
        p = float(rank.p_value())
        if not 2 / 2 ** 20 < p < 0.9:
            continue
        low, high = rank.interval(p * 1.0001)
        below, above = rank.interval(p * 0.9999)
        assert (low > 0 or high < 0) and below <= 0 <= above, (p, low, high, below, above)
        checked += 1
    assert checked > 50


def test_noise_of_a_third_of_a_step_or_more_dithers_the_rounding():
    # values spread by noise of a step: the mean is as good as unrounded, the bound tiny; a drift that
    # walks the values across grid points without such noise leaves them rounded
    rng = np.random.default_rng(11)
    noisy = np.round(30 + rng.normal(0, 1.0, 20))
    walked = np.round(np.linspace(30, 33, 20) + rng.normal(0, 0.05, 20))
    grid = paired.rounding(1.0, noisy, walked)
    assert float(grid.fixed) < 0.001 / 30 and float(grid.u) == pytest.approx(0.5 / np.median(walked))
    assert float(paired.dithered_bound(0.0)) == 0.5 and float(paired.dithered_bound(0.5)) < 0.003
    assert float(paired.dithered_bound(0.3)) == pytest.approx(0.054, abs=0.001)
    assert paired.NO_ROUNDING.any is False


def test_one_jump_among_still_values_is_not_taken_for_noise_that_dithers_them():
    # a warm-up: the first value a step or two below the rest, which never vary.  Read off every
    # move, the jump is noise of 0.5 of a step and the cell "dithered", its mean taken as good to a
    # thousandth of a step, where every value but one may sit 0.5 of a step off; without its
    # largest move the cell shows no noise and is taken as rounded
    for warm in (np.array([21.0, 23, 23, 23, 23, 23]), np.array([21.0, 22, 22, 22, 22, 22, 22, 22, 22, 22])):
        grid = paired.rounding(1.0, warm, warm - 1)
        assert (float(grid.u), float(grid.fixed)) == pytest.approx((0.5 / np.median(warm - 1), 0.0)), warm
    # noise of a step still reads as noise at 6 values, and at 20
    rng = np.random.default_rng(5)
    dithered = sum(float(paired.rounding(1.0, v, v).u) == 0.0
                   for v in (np.round(30 + rng.normal(0, 1.0, 6)) for _ in range(400)))
    assert dithered > 0.8 * 400
    assert float(paired.rounding(1.0, *(np.round(30 + rng.normal(0, 1.0, (2, 20))))).u) == 0.0
    # a value flipping between two grid points after a level shift is not noise that dithers the
    # rounding: read off the moves less the jump, scaled up as if the jump were noise, it read as
    # 0.6 of a step and the cell as dithered
    shifted = np.array([24.0, 24, 24, 26, 27, 26])
    assert float(paired.noise_variance(shifted)) == pytest.approx(2 / 3 / 4)
    grid = paired.rounding(1.0, shifted, shifted - 1)
    assert float(grid.u) == pytest.approx(0.5 / 24) and float(grid.fixed) == 0.0
    # the stretches either side of the largest move: on white noise the reading is low by the
    # choice of the split, by as much as the docstring states
    white = rng.normal(0, 1, (100_000, 6))
    stretches = paired._stretch_variance(white, np.diff(white, axis=-1))
    assert stretches.mean() == pytest.approx(0.87, abs=0.01)
    assert paired.noise_variance(white).mean() == pytest.approx(0.75, abs=0.01)


def test_a_drift_that_walks_the_values_a_third_of_a_step_per_block_leaves_them_rounded():
    # 6 values that a steady drift carries two steps across the grid, with no noise of their own:
    # their successive differences (0 or 1 step) are the drift, not noise, so the cell is rounded
    # (taken about zero, they would read as noise of 0.34 of a step and the cell as dithered)
    walked = np.round(np.linspace(20.6, 22.6, 6))
    assert list(walked) == [21.0, 21.0, 21.0, 22.0, 22.0, 23.0]
    grid = paired.rounding(1.0, walked, walked - 1)
    assert float(grid.fixed) == 0.0 and (float(grid.u), float(grid.v)) == pytest.approx((0.5 / 20.5, 0.5 / 21.5))
    # the same walk with noise of a step on top is dithered
    noisy = np.round(np.linspace(20.6, 22.6, 12) + np.random.default_rng(4).normal(0, 1.0, 12))
    assert float(paired.rounding(1.0, noisy, noisy).u) == 0.0


def test_a_dithered_cells_bound_is_its_relative_step_times_the_fourier_bound_of_its_noise():
    """The dithered cells' bound is added to every interval on a grid; halving it narrows them all."""
    a = np.array([30.0, 30, 31, 31, 30, 30, 29, 29, 30, 30, 31, 31])
    # the noise variance as documented: the smaller of the successive differences about their mean,
    # on 2 ((n - 1) - 1 / (n - 1)), and the pooled variance of the stretches either side of the
    # largest move (here the first +1), on n - 2
    n, moves = a.size, np.diff(a)
    every = ((moves - moves.mean()) ** 2).sum() / (2 * ((n - 1) - 1 / (n - 1)))
    first, rest = a[:2], a[2:]
    stretches = (((first - first.mean()) ** 2).sum() + ((rest - rest.mean()) ** 2).sum()) / (n - 2)
    sd = math.sqrt(min(every, stretches) - 1 / 12)  # in steps, less Sheppard's h^2 / 12
    assert sd >= paired.DITHER_SD_STEPS
    bound = sum(math.exp(-2 * math.pi ** 2 * k ** 2 * sd ** 2) / (math.pi * k) for k in range(1, 50))
    grid = paired.rounding(1.0, a, a)
    # both cells dithered, each off by at most (step / median) x bound
    assert float(grid.u) == 0.0
    assert float(grid.fixed) == pytest.approx(2 * bound / 30, rel=1e-6)
    assert float(grid.fixed) == pytest.approx(0.0012952, rel=1e-4)


def test_a_walsh_average_of_zero_counts_against_a_difference():
    """A zero Walsh average must not count for a difference, or the p-value falls below the level whose interval holds 0."""
    location = paired.Location(np.arange(6.0), paired.SIGNED_RANK)
    # one Walsh average (0 + 0) / 2 is 0: W = 1, p = 2 P(W <= 1) = 2 x 2 / 64
    assert float(location.p_value()) == 0.0625
    low, high = location.interval(0.05)
    assert low <= 0 <= high


def test_the_normal_approximation_above_400_pairs_matches_scipys_continuity_corrected_wilcoxon():
    """Above the exact range the p-value is the corrected normal approximation, not one made smaller by the correction."""
    d = np.random.default_rng(1).normal(0.002, 0.02, 450)
    assert 450 > ranktests.EXACT_MAX
    expected = sps.wilcoxon(d, correction=True, method="approx").pvalue
    assert float(paired.rank_p(paired.walsh(d), 450)) == pytest.approx(expected, rel=1e-9)


def test_the_normal_approximation_counts_the_grids_whole_bound_of_both_cells():
    """Above 400 pairs a grid's bound is both cells' half steps plus the dithered part; dropping v calls a difference rounding can explain."""
    d = np.random.default_rng(2).normal(0.004, 0.01, 450)
    grid = paired.Rounding(u=np.array(0.002), v=np.array(0.002), fixed=np.array(0.0))
    # the centre (about 0.004) does not clear the whole bound u + v = 0.004
    assert float(paired.rank_p(paired.walsh(d), 450, grid)) == 1.0


def test_the_tukey_moses_coverage_is_the_exact_signed_rank_distributions():
    """The coverage the tables state for the rank interval must be its exact one, not the nominal level."""
    def exact_coverage(n, level):
        import itertools
        sums = np.array([sum(r for r, s in zip(range(1, n + 1), signs) if s)
                         for signs in itertools.product((0, 1), repeat=n)])
        cdf = [np.mean(sums <= c) for c in range(n * (n + 1) // 2 + 1)]
        c = max(c for c in range(len(cdf)) if 2 * cdf[c] <= level)
        return 1 - 2 * cdf[c]

    assert exact_coverage(6, 0.05) == 62 / 64
    assert paired.rank_coverage(6, 0.05) == pytest.approx(62 / 64, rel=1e-12)
    assert exact_coverage(10, 0.05) == 0.951171875
    assert paired.rank_coverage(10, 0.05) == pytest.approx(0.951171875, rel=1e-12)


def test_signed_rank_then_t_p_value_at_the_floor_is_the_floor_when_t_says_more():
    """At the signed-rank floor the p-value is min(t, floor): a wild block that weakens t must not lift it above the floor."""
    d = np.array([0.01, 0.02, 0.03, 0.04, 0.05, 1.0])
    location = paired.Location(d, paired.RANK_THEN_T)
    assert float(location._t_p()) > 2 / 64  # the wild block weakens Student's t
    assert float(location.p_value()) == pytest.approx(2 / 64, rel=1e-12)


def test_unpaired_interval_is_dual_to_its_p_value():
    rng = np.random.default_rng(3)
    for _ in range(200):
        x, y = rng.normal(rng.uniform(-1, 1), 1, rng.integers(4, 12)), rng.normal(0, 1, rng.integers(4, 12))
        level = float(rng.choice([0.05, 0.01, 0.001]))
        s = unpaired.Shift(x, y, level)
        lo, hi = s.interval(level)
        if np.isnan(lo):
            continue
        assert (lo > 0 or hi < 0) == (s.p_value() <= level)
    x, y = rng.normal(0, 1, 4), rng.normal(0, 1, 5)  # exact rank tests of 4 and 5 values: p >= 2/126
    assert unpaired.Shift(x, y, 0.001).test == unpaired.WELCH
    welch = sps.ttest_ind(x, y, equal_var=False)
    assert unpaired.Shift(x, y, 0.001).p_value() == pytest.approx(welch.pvalue)
    assert unpaired.Shift(x, y, 0.05).test == unpaired.MANN_WHITNEY


# --- the family --------------------------------------------------------------------------------------------
def test_benjamini_hochberg_matches_statsmodels():
    rng = np.random.default_rng(4)
    for _ in range(50):
        p = np.concatenate([rng.uniform(0, 0.01, rng.integers(0, 10)), rng.uniform(0, 1, rng.integers(1, 40))])
        r, adjusted = multiplicity.benjamini_hochberg(p, 0.05)
        reject, expected, _, _ = multipletests(p, 0.05, "fdr_bh")
        assert r == reject.sum()
        assert adjusted == pytest.approx(expected)
    # a planned family larger than the comparisons at hand counts in m
    r, adjusted = multiplicity.benjamini_hochberg(np.array([0.01, 0.02]), 0.05, m=4)
    assert r == 2 and adjusted == pytest.approx([0.04, 0.04])  # 0.01 <= 0.05 / 4, 0.02 <= 2 x 0.05 / 4
    r, _ = multiplicity.benjamini_hochberg(np.array([0.02, 0.03]), 0.05, m=4)
    assert r == 0, "0.02 > 0.0125 and 0.03 > 0.025"


def test_benjamini_hochberg_calls_a_p_value_equal_to_its_step():
    """BH rejects at p <= r q / m: a p-value exactly at its step (2/64 at r = 5 of 8) is called."""
    r, _ = multiplicity.benjamini_hochberg(np.array([2 / 64] * 5 + [0.5] * 3), 0.05)
    assert 5 * 0.05 / 8 == 2 / 64
    assert int(r) == 5


def test_every_interval_is_at_the_familys_level_and_agrees_with_its_verdict():
    rng = np.random.default_rng(5)
    for _ in range(40):
        m = int(rng.integers(2, 40))
        d = rng.normal(rng.choice([0.0, 0.03, -0.1], m)[:, None], 0.02, (m, int(rng.integers(6, 21))))
        t = multiplicity.Tested.of(d, multiplicity.Looks((0,)), 0.05 / m)
        fv = multiplicity.decide(t.p_value(), t.interval, 0.05, 0.02)
        r = int(fv.called)
        assert fv.level == pytest.approx(max(r, 1) * 0.05 / m)
        excludes = (fv.low > 0) | (fv.high < 0)
        assert (excludes == np.isin(fv.kind, ["a", "b"])).all()
        assert (excludes == (fv.p_adjusted <= 0.05)).all(), "the called ones are BH's rejections"
        assert excludes.sum() == r


def test_looks_spend_their_share_and_intersect_their_intervals():
    rng = np.random.default_rng(6)
    d = rng.normal(0.02, 0.02, 20)
    looks = multiplicity.Looks((6, 13, 20), (0.5, 0.25, 0.25))
    assert looks.reached(20) == [(6, 0.5), (13, 0.25), (20, 0.25)]
    assert looks.reached(9) == [(6, 0.5), (9, 0.25)], "a look with pairs beyond the previous one counts"
    assert looks.reached(6) == [(6, 0.5)]
    t = multiplicity.Tested.of(d, looks, 0.05 / 10)
    expected = min(paired.Location.of(d[:6], 0.005 * 0.5).p_value() / 0.5,
                   paired.Location.of(d[:13], 0.005 * 0.25).p_value() / 0.25,
                   paired.Location.of(d, 0.005 * 0.25).p_value() / 0.25)
    assert float(t.p_value()) == pytest.approx(min(1.0, float(expected)))
    lo, hi = t.interval(0.01)
    parts = [paired.Location.of(d[:k], 0.005 * w).interval(0.01 * w) for k, w in ((6, 0.5), (13, 0.25), (20, 0.25))]
    assert float(lo) == pytest.approx(max(float(a) for a, _ in parts))
    assert float(hi) == pytest.approx(min(float(b) for _, b in parts))
    # the pilot's look alone (the sequential rule's first look) spends the pilot's share, as the
    # final tables do for a comparison that stopped there: never the whole alpha of a fixed design
    first = multiplicity.Looks((6,), (0.5,))
    assert first.sequential and first.reached(6) == [(6, 0.5)]
    pilot = multiplicity.Tested.of(d[:6], first, 0.005)
    assert float(pilot.p_value()) == pytest.approx(min(1.0, float(paired.Location.of(d[:6], 0.0025).p_value()) / 0.5))
    assert float(pilot.p_value()) == pytest.approx(float(multiplicity.Tested.of(d[:6], looks, 0.005).p_value()))
    assert multiplicity.Looks((0,)).reached(6) == [(6, 1.0)], "the fixed design uses every pair with all of alpha"


def test_detectable_difference_lies_between_the_half_width_and_the_full_width():
    for test, dof in ((paired.T_TEST, 4), (paired.T_TEST, 18), (paired.SIGNED_RANK, 19)):
        for level in (0.05, 0.001):
            mde = float(multiplicity.detectable(0.1, level, test, dof, 0.8))
            assert 0.1 < mde < 0.2


# --- the tables --------------------------------------------------------------------------------------------
def test_no_verdict_contradicts_its_interval_and_no_mde_outreaches_it():
    rng = np.random.default_rng(7)
    for cond, blocks in ((simulate.Conditions(cv=0.01), 6), (simulate.Conditions("heavy", 0.05), 10),
                         (simulate.Conditions("bimodal", 0.02, drift=0.1), 20)):
        ratios = np.exp(rng.uniform(-0.15, 0.15, 30))
        ratios[::3] = 1.0
        t = compare.compare(simulate.frame(simulate.go_rust_cells(ratios), blocks, rng, cond))
        excludes = (t["ratio_ci_low"] > 1) | (t["ratio_ci_high"] < 1)
        assert (excludes == t["verdict_kind"].isin(["a", "b"])).all()
        inside = (t["ratio_ci_low"] >= 0.98) & (t["ratio_ci_high"] <= 1.02)
        assert ((t["verdict_kind"] == "equivalent") == (inside & ~excludes)).all()
        assert t["ci_level"].nunique() == 1, "one level for the whole table"
        half = (np.log(t["ratio_ci_high"]) - np.log(t["ratio_ci_low"])) / 2
        mde = np.log1p(t["mde"])
        assert ((mde >= half - 1e-12) & (mde <= 2 * half + 1e-12)).all()


def test_a_clear_difference_is_called_from_six_pairs_in_a_family_of_72():
    rng = np.random.default_rng(8)
    t = compare.compare(simulate.frame(simulate.go_rust_cells([1.1] * 36 + [1.0] * 36), 6, rng,
                                       simulate.Conditions(cv=0.01)))
    assert (t["test"] == paired.RANK_THEN_T).all()
    called = t[t["n"] <= 36]
    assert (called["verdict_kind"] == "b").mean() >= 0.95
    assert t.loc[t["n"] > 36, "verdict_kind"].isin(["a", "b"]).sum() <= 1


def test_rows_say_which_test_and_level_they_used():
    rng = np.random.default_rng(9)
    t = compare.compare(simulate.frame(simulate.go_rust_cells([1.1, 1.0]), 20, rng))
    assert set(t["test"]) == {paired.SIGNED_RANK} and (t["pairs"] == 20).all()
    assert (t["ci_level"] > 0.95).all() and (t["ci_level"] < 1).all()
    one = compare.compare_pair(np.arange(8), np.full(8, 2.0) * rng.lognormal(0, 0.01, 8), np.arange(8),
                               rng.lognormal(0, 0.01, 8))
    assert one["ci_level"] == pytest.approx(0.95) and one["ratio_ci_low"] > 1.9


def test_a_paired_comparison_reads_ties_and_grid_off_its_own_pairs():
    # A cell that kept sampling for another comparison holds values in blocks its partner lacks.
    # The comparison rests on the shared blocks alone: a value repeated among the others, or a
    # finer gap there, must not change its test, estimate or interval (the sequential look, which
    # sees only the pairs, decided on those; an article run's Go/Rust idle_tasks N = 1 read 0.123
    # by Student's t on 6 pairs where its own pairs gave 0.132 by signed ranks)
    rng = np.random.default_rng(21)
    go, rust = 1.3 * rng.lognormal(0, 0.01, 21), rng.lognormal(0, 0.01, 6)
    go[11] = go[10]  # a tie outside the pairs
    full = compare.pair_test(np.arange(21), go, np.arange(6), rust, level_min=0.05 / 30)
    own = compare.pair_test(np.arange(6), go[:6], np.arange(6), rust, level_min=0.05 / 30)
    assert full.stats["pairs"] == 6 and full.stats["test"] == own.stats["test"] == paired.RANK_THEN_T
    assert float(full.tested.last[1].estimate) == float(own.tested.last[1].estimate)
    assert float(full.tested.p_value()) == float(own.tested.p_value())
    assert np.array_equal(np.r_[full.tested.interval(0.01)], np.r_[own.tested.interval(0.01)])
    assert full.stats["a_samples"] == 21  # the descriptive columns still count every sample
    # pages: the paired values two pages apart at least, the cell's other values one page from them
    # (a finer grid, another reading of the cell's noise)
    page = 4 / 1024  # MiB
    a = np.r_[1000, 1004, 1010, 1002, 1008, 1006, 1001, 1003, 1005, 1007] * page
    b = np.r_[500, 502, 506, 504, 508, 510] * page
    full = compare.pair_test(np.arange(10), a, np.arange(6), b, level_min=0.05 / 30, resolution=page)
    own = compare.pair_test(np.arange(6), a[:6], np.arange(6), b, level_min=0.05 / 30, resolution=page)
    assert np.array_equal(np.r_[full.tested.interval(0.001)], np.r_[own.tested.interval(0.001)])
    assert float(full.tested.p_value()) == float(own.tested.p_value())


def test_a_decision_made_at_a_look_stays_made_when_a_later_block_brings_a_tie():
    """Each look reads the grid and the ties off the blocks it tested: a value of a later block that
    ties with an earlier one (which makes the cells' values read as tied, so tested by Student's t)
    does not turn the earlier look's signed-rank test into a t test after the fact.  Here look 2
    (11 pairs) called "Rust faster" on its own; the final table, with 14 pairs, keeps that call."""
    looks = multiplicity.Looks((6, 11, 20), (0.5, 0.25, 0.25))
    rng = np.random.default_rng(0)
    b = 100 + rng.random(14) * 10
    d = np.r_[0.01, 0.011, 0.8, 0.012, 0.013, 0.014, 0.015, 0.016, 0.017, 0.018, 0.019, 0.01, 0.012, 0.011]
    a = b * np.exp(d)
    b[12] = a[3]  # block 12's Rust value equals block 3's Go value: the cells' values now tie
    a[12] = b[12] * np.exp(d[12])
    codes = np.arange(14)

    def decided(n, lk):
        t = compare.pair_test(codes[:n], a[:n], codes[:n], b[:n], True, lk, 0.05, 0.0)
        return t.stats["test"], compare.decide_family([t], 0.05, 0.02, 1)[0]

    test_at_look, at_look = decided(11, multiplicity.Looks((6, 11), (0.5, 0.25)))
    _, final = decided(14, looks)
    assert test_at_look == "signed-rank" and at_look["verdict_kind"] == "b"
    assert final["verdict_kind"] == "b" and final["p_value"] <= at_look["p_value"]
    assert final["ratio_ci_low"] > 1


def test_a_p_value_bh_passes_whose_interval_holds_1_is_no_discovery_of_the_family():
    # a comparison whose looks' intervals did not overlap: p = 1.4e-9, interval shown [0.94, 1.10],
    # "inconclusive"; BH still counted it in R, which loosened the family's level (and so every
    # other interval) and stood in the count of differences called
    from bench_src.analysis import multiplicity

    p = np.array([1e-9, 0.01, 0.5])

    def interval_at(level):
        lv = float(np.asarray(level).ravel()[0])
        return (np.array([-0.06, 0.01 if lv >= 0.05 / 3 * 0.999 else -0.01, -0.3]), np.array([0.1, 0.2, 0.3]))

    fv = multiplicity.decide(p, interval_at, 0.05, 0.02)
    assert list(fv.kind) == ["inconclusive", "b", "inconclusive"]
    assert int(fv.called) == 1 and float(fv.level) == pytest.approx(0.05 / 3)
    assert np.isnan(fv.p_adjusted[0]) and fv.p_adjusted[1] == pytest.approx(0.03) and fv.p_value[0] == 1e-9
