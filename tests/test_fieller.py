"""The ratio of two amounts measured against baselines in the same blocks (bench_src.analysis.fieller):
Fieller's interval where both amounts are told from 0, a set reaching infinity or 0 where one is
not, and the grid's allowance where values never vary."""
import math

import numpy as np
import pytest
from scipy import stats as sps

from bench_src.analysis import fieller, paired


def _closed_form(x, y, level=0.95):
    """Fieller's bounded interval from its quadratic (on paired.t_dof degrees of freedom)."""
    n = x.size
    t = sps.t.isf((1 - level) / 2, paired.t_dof(n))
    mx, my = x.mean(), y.mean()
    vxx, vyy, vxy = x.var(ddof=1) / n, y.var(ddof=1) / n, np.cov(x, y)[0, 1] / n
    a, b, c = my ** 2 - t * t * vyy, -2 * (mx * my - t * t * vxy), mx ** 2 - t * t * vxx
    root = math.sqrt(b * b - 4 * a * c)
    return sorted([(-b - root) / (2 * a), (-b + root) / (2 * a)])


def test_where_both_amounts_are_told_from_zero_the_interval_is_fiellers():
    rng = np.random.default_rng(1)
    for n in (6, 20):
        x = 5 + rng.standard_normal(n)
        y = 3 + 0.5 * x + rng.standard_normal(n)  # correlated through a shared block effect
        r = fieller.amount_ratio(x, y)
        assert r.resolved and r.blocks == n
        assert [r.low, r.high] == pytest.approx(_closed_form(x, y), rel=1e-9)
        assert r.ratio == pytest.approx(x.mean() / y.mean()) and r.low < r.ratio < r.high


def test_an_amount_below_not_told_from_zero_makes_the_interval_reach_infinity():
    x = np.array([3.0, 2.5, 3.4, 2.8, 3.1, 2.9])
    y = np.array([0.6, -0.5, 0.9, -0.2, 0.4, 0.1])  # mean 0.22, far inside its own spread
    r = fieller.amount_ratio(x, y)
    assert r.x_resolved and not r.y_resolved and not r.resolved
    assert r.high == math.inf and r.low <= r.ratio
    # the whole set holds ratios far beyond the estimate and of the other sign (y may be below 0)
    assert r.contains(1e6) and r.contains(-1e6) and not r.contains(0.0)


def test_an_amount_above_not_told_from_zero_makes_the_interval_reach_zero():
    x = np.array([0.6, -0.5, 0.9, -0.2, 0.4, 0.1])
    y = np.array([3.0, 2.5, 3.4, 2.8, 3.1, 2.9])
    r = fieller.amount_ratio(x, y)
    assert not r.x_resolved and r.y_resolved and not r.resolved
    assert r.low < 0 < r.high < math.inf and r.contains(0.0)


def test_values_that_never_vary_are_allowed_what_the_grid_leaves_in_them():
    """Two cells on a grid that never move: each mean may be off by half a step, so an amount (a
    difference of two cells) by a step, and the ratio lies in the box those bounds make."""
    step = 1.0
    assert fieller.grid_bound(np.full(6, 40.0), step) == 0.5
    noisy = np.round(40 + 3 * np.random.default_rng(2).standard_normal(20))
    assert fieller.grid_bound(noisy, step) < 1e-6  # noise of 3 steps dithers the rounding away
    r = fieller.amount_ratio(np.full(6, 10.0), np.full(6, 5.0), ex=1.0, ey=1.0)
    assert (r.low, r.high) == pytest.approx((9 / 6, 11 / 4))
    assert r.resolved
    assert fieller.amount_ratio(np.full(6, 10.0), np.full(6, 5.0)).low == pytest.approx(2.0)


def test_too_few_blocks_give_no_interval():
    r = fieller.amount_ratio([1.0, 2.0], [1.0, 1.5])
    assert math.isnan(r.low) and not r.resolved


def test_a_set_of_two_rays_gives_the_ratios_it_excludes_between_them():
    x = np.array([3.0, 2.5, 3.4, 2.8, 3.1, 2.9])
    y = np.array([0.6, -0.5, 0.9, -0.2, 0.4, 0.1])
    for sign in (1.0, -1.0):  # the estimate in the upper ray, then in the lower
        r = fieller.amount_ratio(sign * x, y)
        a, b = r.gap
        assert a < 0 < b and (r.low, r.high) == ((b, math.inf) if sign > 0 else (-math.inf, a))
        assert r.contains(a - 1e-9) and r.contains(b + 1e-9) and not r.contains((a + b) / 2)
        assert r.contains(-1e9) and r.contains(1e9)
    # one interval, bounded or the whole line: no gap
    assert np.isnan(fieller.amount_ratio(y, x).gap).all()
    assert np.isnan(fieller.amount_ratio(y, y[::-1]).gap).all()


def test_each_amounts_own_interval_is_widened_by_its_grid_bound():
    """An amount that never varies is told from 0 by its grid bound alone: its own interval is mean ± that bound."""
    r = fieller.amount_ratio(np.full(6, 10.0), np.full(6, 5.0), ex=1.0, ey=1.0)
    assert (r.x_low, r.x_high) == pytest.approx((9.0, 11.0))
    assert (r.y_low, r.y_high) == pytest.approx((4.0, 6.0))


def test_a_grid_on_the_baseline_amount_leaves_the_set_symmetric_under_a_change_of_sign():
    """Negating x must negate the confidence set: the grid's allowance on y scales with |ratio|, whatever its sign."""
    x = np.array([3.0, 2.5, 3.4, 2.8, 3.1, 2.9])
    y = np.array([0.6, -0.5, 0.9, -0.2, 0.4, 0.1])
    r, mirrored = fieller.amount_ratio(x, y, ey=0.05), fieller.amount_ratio(-x, y, ey=0.05)
    assert (mirrored.low, mirrored.high) == pytest.approx((-r.high, -r.low), rel=1e-9)
    assert tuple(mirrored.gap) == pytest.approx((-r.gap[1], -r.gap[0]), rel=1e-9)
