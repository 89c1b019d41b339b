import numpy as np
import pandas as pd
import pytest

from bench_src.analysis import compare, stats


def test_median_ci_brackets_the_median_and_narrows_with_n():
    rng = np.random.default_rng(1)
    small = rng.lognormal(0, 0.2, 20)
    large = rng.lognormal(0, 0.2, 400)
    m, lo, hi = stats.median_ci(small)
    assert lo <= m <= hi
    m2, lo2, hi2 = stats.median_ci(large)
    assert (hi2 - lo2) < (hi - lo)
    assert lo2 < 1.0 < hi2  # the true median of lognormal(0, s) is 1


@pytest.mark.parametrize("n", [10, 20, 40])
def test_median_ci_coverage_is_nominal_on_skewed_data(n):
    # 4,000 simulations: the standard error of a 95% coverage estimate is 0.34 points
    rng = np.random.default_rng(n)
    true_median = 1.0  # lognormal(0, s) has median exp(0)
    hits = sum(lo <= true_median <= hi
               for _, lo, hi in (stats.median_ci(rng.lognormal(0, 0.5, n)) for _ in range(4000)))
    assert 0.93 <= hits / 4000 <= 0.97, hits / 4000


def test_ratio_ci_coverage_is_nominal():
    # 1,000 simulations of two lognormal samples of 20 whose medians differ by 1.3x (SE 0.7 points)
    rng = np.random.default_rng(7)
    hits = 0
    trials = 1000
    for k in range(trials):
        a = 1.3 * rng.lognormal(0, 0.3, 20)
        b = rng.lognormal(0, 0.3, 20)
        _, lo, hi = stats.ratio_ci(a, b, n_resamples=1000, seed=k)
        hits += lo <= 1.3 <= hi
    assert 0.93 <= hits / trials <= 0.97, hits / trials


def test_degenerate_inputs():
    assert stats.median_ci([5.0])[0] == 5.0 and np.isnan(stats.median_ci([5.0])[1])
    assert stats.min_samples_for(0.95) == 6
    assert stats.median_ci([2.0] * 6) == (2.0, 2.0, 2.0)
    assert np.isnan(stats.median_ci([])[0])
    assert stats.ratio_ci([4.0, 4.0], [2.0, 2.0]) == (2.0, 2.0, 2.0)


def test_ratio_ci_recovers_a_known_ratio():
    rng = np.random.default_rng(3)
    rust = rng.lognormal(0, 0.05, 40)
    go = 1.5 * rng.lognormal(0, 0.05, 40)
    r, lo, hi = stats.ratio_ci(go, rust)
    assert lo < 1.5 < hi and lo < r < hi and hi - lo < 0.2


def _frame(values):
    rows = []
    for (lang, n), xs in values.items():
        for x in xs:
            rows.append({"workload": "sleep", "lang": lang, "variant": "v" + lang, "n": n,
                         "threads_requested": None, "params": "kernel=xorshift,work=10", "arm": "", "elapsed_s": x,
                         "valid": True})
    return pd.DataFrame(rows)


def test_summary_and_ratios_per_cell_with_small_sample_warning():
    df = _frame({("go", 10): [2.0, 2.1, 1.9, 2.0, 2.05, 1.95], ("rust", 10): [1.0, 1.1, 0.9, 1.0, 1.05, 0.95],
                 ("go", 100): [3.0, 3.1], ("rust", 100): [3.0, 2.9]})
    s = stats.summarize(df)
    assert len(s) == 4
    row = s[(s["lang"] == "go") & (s["n"] == 10)].iloc[0]
    assert row["median"] == pytest.approx(2.0) and row["ci_low"] <= 2.0 <= row["ci_high"]
    assert row["warning"] == ""
    assert "only 2 samples" in s[s["n"] == 100]["warning"].iloc[0]
    assert np.isnan(s[s["n"] == 100]["ci_low"]).all()
    assert row["mad"] == pytest.approx(0.05) and row["min"] == 1.9 and row["max"] == 2.1
    r = compare.compare(df, tests=False)
    assert len(r) == 2
    r10 = r[r["n"] == 10].iloc[0]
    assert r10["ratio"] == pytest.approx(2.0) and r10["ratio_ci_low"] < 2.0 < r10["ratio_ci_high"]
    assert r10["go_variant"] == "vgo" and r10["rust_variant"] == "vrust"
    assert "only 2" in r[r["n"] == 100]["warning"].iloc[0]


def test_describe_matches_numpy():
    x = [1.0, 2.0, 3.0, 4.0, 10.0, 6.0, 7.0]
    d = stats.describe(x)
    assert d["samples"] == 7 and d["median"] == 4.0 and d["mean"] == pytest.approx(np.mean(x))
    assert d["sd"] == pytest.approx(np.std(x, ddof=1)) and d["cv"] == pytest.approx(d["sd"] / d["mean"])
    assert d["mad"] == 2.0 and d["ci_low"] <= 4.0 <= d["ci_high"]


def test_the_fast_quantiles_are_scipys_to_the_last_bit():
    # paired.t_isf and norm_isf replace scipy.stats' t.isf and norm.isf in the bisections (smallest_level):
    # the same numbers, p = 0 (inf), p = 1, p above 1 and below 0 (NaN) included
    from scipy import stats as sps

    from bench_src.analysis import paired

    p = np.concatenate([10.0 ** -np.linspace(0, 300, 600), np.linspace(0, 1, 401), [1.5, -0.1, np.nan]])
    for dof in (1, 2, 5, 9, 19, 71):
        assert np.array_equal(paired.t_isf(p, dof), sps.t.isf(p, dof), equal_nan=True), dof
    assert np.array_equal(paired.norm_isf(p), sps.norm.isf(p), equal_nan=True)
    assert paired.t_isf(0.025, 9) == sps.t.isf(0.025, 9) and np.ndim(paired.t_isf(0.025, 9)) == 0
