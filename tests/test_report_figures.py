"""Figures for publishing, checked on what they draw: shared log2 ratio axes centred on 1 with the
direction and the equivalence band, categorical axes for a single N, log axes with unit ticks,
per-task panels only where N counts tasks, the verdict map per workload, boxes and points instead
of violins, constants in captions, and no change to the caller's global style."""
import math

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.patches import Rectangle

import report_data
from bench_src.analysis import compare, scaling, stats
from bench_src.report import figures, tables, theme, units

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def df():
    return report_data.frame()


@pytest.fixture(scope="module")
def ratios(df):
    return compare.compare(df, "elapsed_s")


def _texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text)]


def _panel(fig, title):
    return next(ax for ax in fig.axes if ax.get_title() == title)


def test_figure_functions_leave_the_global_style_alone(df, ratios):
    before = dict(plt.rcParams)
    s = stats.summarize(df, "elapsed_s")
    for fig in (figures.metric_vs_n(s), figures.ratio_vs_n(ratios, 0.02), figures.verdict_heatmap(ratios, 0.02),
                figures.distributions(df, "sleep"), figures.per_task(scaling.per_task_cost(df, "elapsed_s"))):
        plt.close(fig)
    after = dict(plt.rcParams)
    assert {k for k in before if before[k] != after[k]} == set()
    with theme.context():
        assert plt.rcParams["svg.fonttype"] == "path"
    assert plt.rcParams["svg.fonttype"] == before["svg.fonttype"]


def test_ratio_panels_share_one_log2_axis_centred_on_one(ratios):
    fig = figures.ratio_vs_n(ratios, 0.02)
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
    assert len(axes) == ratios["workload"].nunique()
    limits = {tuple(np.round(ax.get_ylim(), 9)) for ax in axes}
    assert len(limits) == 1
    low, high = limits.pop()
    assert low * high == pytest.approx(1.0) and high > 1.49  # symmetric around 1, holds the 1.49 ratio
    for ax in axes:
        assert ax.get_yscale() == "log" and ax.yaxis.get_transform().base == 2
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert "1×" in labels
        # the equivalence band 1 ± 2% is drawn on every panel
        assert any(isinstance(p, Rectangle) or p.__class__.__name__ == "Rectangle" for p in ax.patches) or \
            any(np.allclose(sorted(c.get_paths()[0].vertices[:, 1].tolist())[::len(c.get_paths()[0].vertices) - 1],
                            [0.98, 1.02]) for c in ax.collections if c.get_paths())
    texts = _texts(fig)
    assert any("Go faster" in t for t in texts) and any("Rust faster" in t for t in texts)
    plt.close(fig)
    mem = figures.ratio_vs_n(compare.compare(report_data.frame(), "peak_rss_mib"), 0.02)
    texts = _texts(mem)
    assert any("Go smaller" in t for t in texts) and any("Rust smaller" in t for t in texts)
    plt.close(mem)


def test_the_ratio_figure_names_the_level_of_the_intervals_it_draws(ratios):
    level = ratios["ci_level"].dropna().unique()
    assert len(level) == 1 and level[0] != 0.95, "the family's level, 1 - max(R, 1) x 5% / m, not 95%"
    fig = figures.ratio_vs_n(ratios, 0.02)
    header = [t for t in _texts(fig) if t.startswith("Go / Rust ratio of ")]
    name = units.metric_name(ratios["metric"].iloc[0])
    assert header == [f"Go / Rust ratio of {name} (paired estimate), with {units.percent(float(level[0]), digits=3)} CI"
                      ], header
    assert not any("95%" in t for t in _texts(fig))
    plt.close(fig)
    mixed = ratios.assign(ci_level=np.where(np.arange(len(ratios)) % 2 == 0, level[0], 0.99))
    fig = figures.ratio_vs_n(mixed, 0.02)
    mixed_name = f"CI at {units.coverage([level[0], 0.99])}, each at its family's level"
    assert any(t.endswith(f"{name} (paired estimate), with {mixed_name}") for t in _texts(fig))
    plt.close(fig)


def test_single_n_gets_a_categorical_axis_and_several_n_a_log_axis(ratios, df):
    fig = figures.ratio_vs_n(ratios, 0.02)
    tvt = _panel(fig, "threads_vs_tasks")  # one N; like for like: goroutines meet tokio tasks only
    assert tvt.get_xscale() == "linear" and len(tvt.get_xticks()) == 1
    assert not any("thread" in t.get_text().replace("threads", "") for t in fig.findobj(matplotlib.text.Text)
                   if "threads_vs_tasks" not in t.get_text()), "OS threads are not in the Go-vs-Rust figure"
    sleep = _panel(fig, "sleep")
    assert sleep.get_xscale() == "log" and list(sleep.get_xticks()) == [10, 1000, 100000]
    assert [t.get_text() for t in sleep.get_xticklabels()] == ["10", "1k", "100k"]
    plt.close(fig)
    fig = figures.metric_vs_n(stats.summarize(df, "elapsed_s"))
    sq = _panel(fig, "sqlite")
    assert sq.get_xscale() == "linear"
    assert [t.get_text() for t in sq.get_xticklabels()] == ["go pool\ndriver=mattn", "rust pool\ndriver=sqlx"]
    assert not any("100" == t.get_text() for t in sq.get_xticklabels())
    plt.close(fig)


def test_log_value_axes_have_unit_ticks_and_constants_stay_out_of_legends(df):
    fig = figures.metric_vs_n(stats.summarize(df, "peak_rss_mib"))
    sleep = _panel(fig, "sleep")  # 5.5 MiB to 250 MiB: a log axis
    assert sleep.get_yscale() == "log"
    ticks = [t.get_text() for t in sleep.get_yticklabels() if t.get_text()]
    assert ticks and all(t.endswith("MiB") for t in ticks)
    legend = [t.get_text() for t in sleep.get_legend().get_texts()]
    assert legend == ["go waitgroup", "rust join-handles"]  # kernel and work are the same for every series
    assert "kernel=xorshift, work=0" in _texts(fig)  # ... and said once, under the panel title
    # each band's edges are drawn in its series' colour, so that overlapping bands stay apart
    from matplotlib.colors import to_rgb
    medians = {line.get_label(): line for line in sleep.get_lines() if line.get_label() in legend}
    for name, line in medians.items():
        edges = [other for other in sleep.get_lines() if other is not line and other.get_label().startswith("_")
                 and to_rgb(other.get_color()) == to_rgb(line.get_color()) and other.get_linewidth() < 1]
        assert len(edges) == 2, name
    plt.close(fig)


def test_per_task_panels_only_where_n_counts_tasks(df):
    costs = scaling.per_task_cost(df, "elapsed_s")
    fig = figures.per_task(costs)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels and not any(lab.startswith("cpu_loops") for lab in labels)
    assert any(lab.startswith("sleep") for lab in labels)
    assert fig.axes[0].get_xscale() == "log"
    # and says so: the table beside it has cpu_loops rows the figure does not
    assert any("cpu_loops left out (N is not a count of tasks)" in t for t in _texts(fig))
    plt.close(fig)
    fig = figures.per_task(costs[costs["workload"] != "cpu_loops"])
    assert not any("left out" in t for t in _texts(fig))
    plt.close(fig)
    assert figures.per_task(costs[costs["workload"] == "cpu_loops"]) is None
    # a workload the run took at one N has no slope: the caption names it with those left out
    fig = figures.per_task(costs, one_n=["ping_pong", "threads_vs_tasks", "sleep"])
    assert any("ping_pong, threads_vs_tasks run at one N (no slope)" in t for t in _texts(fig))
    plt.close(fig)


def test_verdict_map_per_workload_coloured_by_ratio_with_verdicts_marked(ratios):
    fig = figures.verdict_heatmap(ratios, 0.02)
    heat = [ax for ax in fig.axes if ax.images]
    assert len(heat) == ratios["workload"].nunique()
    sleep = next(ax for ax in heat if [t.get_text() for t in ax.get_xticklabels()] == ["10", "1k", "100k"])
    cells = [t.get_text() for t in sleep.texts]
    assert "1.49\nRust" in cells and any(c.endswith("\n≈") for c in cells)
    assert sum(isinstance(p, Rectangle) for p in sleep.patches) == 2  # the two significant wins are framed
    image = sleep.images[0]
    assert image.norm.vmin == -image.norm.vmax  # diverging scale centred at a ratio of 1
    assert math.isclose(2 ** image.get_array()[0, 2], 1.494, rel_tol=0.01)
    plt.close(fig)


def test_a_comparison_that_could_not_be_tested_is_named_so_in_the_verdict_map_and_the_ratio_figure():
    # the findings count it apart from the open comparisons: the map does not mark it "?" (inconclusive),
    # and the ratio figure, which has no ratio to draw, names it rather than leave a silent gap
    failed = compare.compare(report_data.frame(failing=(("sqlite", "rust", "pool", 100),)), "elapsed_s")
    assert compare.untested(failed).sum() == 1
    fig = figures.verdict_heatmap(failed, 0.02)
    cells = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert "–\nnot tested" in cells and "–\n?" not in cells
    assert any("\nnot tested: too few pairs that count" in t for t in _texts(fig)), "the header says what it means, on a line of its own (the first is full)"
    plt.close(fig)
    fig = figures.verdict_heatmap(compare.compare(report_data.frame(), "elapsed_s"), 0.02)
    assert not any("not tested" in t for t in _texts(fig)), "said only where a comparison was not tested"
    plt.close(fig)
    fig = figures.ratio_vs_n(failed, 0.02)
    assert any("\nnot drawn: 1 comparison not tested, too few pairs that count" in t and t.endswith("sqlite at N = 100")
               for t in _texts(fig))
    plt.close(fig)


def test_verdict_map_fades_the_colour_of_inconclusive_cells(ratios):
    """An open comparison's ratio is not a result: its cell's colour is veiled, the others' not."""
    from bench_src.report.figures.ratios import verdict_kinds
    r = ratios.copy()
    r["vkind"] = verdict_kinds(r).values
    assert (r["vkind"] == "inconclusive").any() and (r["vkind"] != "inconclusive").any()
    r.loc[r["vkind"] == "inconclusive", "ratio"] = 2.0  # strongly coloured, were it not veiled
    fig = figures.verdict_heatmap(r.drop(columns="vkind"), 0.02)
    faded = strong = 0
    for ax in (ax for ax in fig.axes if ax.images):
        values, veil = ax.images
        shown = values.to_rgba(values.get_array())
        for t in ax.texts:
            x, y = (int(round(c)) for c in t.get_position())
            base = np.array(shown[y, x][:3])
            a = veil.get_array()[y, x, 3]
            seen = base * (1 - a) + a
            if t.get_text().endswith("\n?"):
                assert a > 0.5 and min(seen) > 0.6, (t.get_text(), seen)  # pale
                faded += 1
            else:
                assert a == 0, t.get_text()
                strong += 1
    assert faded and strong
    assert any("?: inconclusive (colour faded)" in t for t in _texts(fig))
    plt.close(fig)


def test_verdict_map_prints_each_estimate_as_the_tables_do_and_marks_a_win_inside_the_margin(ratios):
    from bench_src.report import units
    r = ratios.copy()
    small = r.index[(r["workload"] == "sleep") & r["verdict_kind"].isin(["a", "b"])][0]
    r.loc[small, "within_margin"] = True
    # an open row whose interval's ends need a fourth digit to be told from the estimate: the table
    # prints "0.9946 [0.9577, 1.021]", and the map printed "0.995"
    wide = r.index[(r["workload"] == "cpu_loops")][0]
    r.loc[wide, ["ratio", "ratio_ci_low", "ratio_ci_high", "verdict_kind", "verdict"]] = [
        0.99459, 0.95773, 1.02114, "inconclusive", "inconclusive"]
    fig = figures.verdict_heatmap(r, 0.02)
    cells = [t.get_text() for ax in fig.axes if ax.images for t in ax.texts]
    table = tables.comparison(r).frame
    column = next(c for c in table.columns if c.startswith("Go/Rust ["))
    expected = {cell.split(" [")[0] for cell in table[column]}
    assert "0.9946" in expected and "0.995" not in expected
    assert {c.split("\n")[0] for c in cells} == expected, "no trimmed zeros, the digits of the tables"
    who = "Go" if r.loc[small, "verdict_kind"] == "a" else "Rust"
    point = units.ratio(r.loc[small, 'ratio'], r.loc[small, 'ratio_ci_low'], r.loc[small, 'ratio_ci_high']).split(" [")[0]
    assert f"{point}\n{who} <2%" in cells
    assert any("<2%: by less than 2%" in t for t in _texts(fig))
    plt.close(fig)


def test_distributions_are_boxes_with_points_not_violins(df):
    fig = figures.distributions(df, "sleep", ns=[10, 100000])
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        assert not any(isinstance(c, PolyCollection) for c in ax.collections)  # violins are PolyCollections
        assert len(ax.patches) >= 2  # the boxes
        points = sum(len(c.get_offsets()) for c in ax.collections)
        assert points == 2 * 10  # every sample of both cells
    assert any("10 samples per cell" in t for t in _texts(fig))
    plt.close(fig)


def test_figures_are_written_as_svg_png_and_pdf(tmp_path, ratios):
    with theme.context():
        paths = figures.save(figures.ratio_vs_n(ratios, 0.02), tmp_path, "ratio", ("svg", "png", "pdf"))
    assert [p.suffix for p in paths] == [".svg", ".png", ".pdf"]
    assert all(p.stat().st_size > 5000 for p in paths)
    assert "<text" not in paths[0].read_text()  # text drawn as outlines: no font needed to view it


def test_a_very_wide_interval_is_cut_with_an_arrow_instead_of_flattening_every_panel(ratios):
    wild = ratios.copy()
    wild.loc[wild["workload"] == "sqlite", "ratio_ci_low"] = 1 / 1000
    limit = figures.ratio_limit(wild, 0.02)
    assert 1.5 < 2 ** limit < 4.5  # the 1.49 ratio fits (the axis ends just beyond its 4x tick); the 1/1000 end
    # of an interval does not stretch the axis
    fig = figures.ratio_vs_n(wild, 0.02)
    arrows = [a for a in _panel(fig, "sqlite").texts if getattr(a, "arrow_patch", None) is not None]
    assert len(arrows) == 1
    assert any("arrow: the interval goes on beyond the axis" in t for t in _texts(fig))
    # and names the row and the interval it cuts, so that a reader need not look it up
    row = wild[wild["workload"] == "sqlite"].iloc[0]
    from bench_src.report import units
    named = f"sqlite, N = {units.count(row['n'])}, {units.ratio(row['ratio'], row['ratio_ci_low'], row['ratio_ci_high'])}"
    assert any(named in t and "0.001" in t for t in _texts(fig)), [t for t in _texts(fig) if "arrow" in t]
    plt.close(fig)
    assert not any("arrow:" in t for t in _texts(figures.ratio_vs_n(ratios, 0.02)))


def test_a_ratio_of_two_times_of_microseconds_does_not_set_the_ratio_axis(ratios):
    # An article run's idle tasks at N = 1 (12 µs against 90 µs: 0.111 [0.0579, 0.197]) stretched the
    # shared axis to 1/64x-64x and squeezed every other panel: rows with a time under 100 µs
    # (findings.SHORT_TIME_S) do not set it; one beyond it is a triangle at its edge, its value beside it
    from bench_src.report import units
    wild = ratios.copy()
    row = wild.index[(wild["workload"] == "sleep") & (wild["n"] == 10)][0]
    wild.loc[row, ["ratio", "ratio_ci_low", "ratio_ci_high", "go_median", "rust_median", "verdict_kind"]] = [
        0.1111, 0.05789, 0.1966, 12e-6, 90e-6, "a"]
    fig = figures.ratio_vs_n(wild, 0.02)
    sleep = _panel(fig, "sleep")
    low, high = sleep.get_ylim()
    assert high < 4.5 and low > 1 / 4.5, "the axis is the other rows' (a 1.49 ratio fits), not 1/64x-64x"
    assert 2 ** figures.ratio_limit(wild.drop(index=row), 0.02) == pytest.approx(high)
    down = [line for line in sleep.get_lines() if line.get_marker() == "v"]
    assert len(down) == 1 and down[0].get_ydata()[0] == pytest.approx(low, rel=0.3), "a triangle at the lower edge"
    written = units.ratio(0.1111, 0.05789, 0.1966)
    assert written == "0.111 [0.0579, 0.197]" and written in [t.get_text() for t in sleep.texts]
    assert any("▲/▼ at an edge: a ratio beyond the axis, its value written beside it (a row with a time under 100 µs "
               "does not set the axis" in t for t in _texts(fig))
    plt.close(fig)
    # the rows that set the axis: all but that one (findings.short_time, the findings' own rule)
    from bench_src.report import findings
    assert findings.short_time("elapsed_s", 12e-6, 90e-6) and not findings.short_time("peak_rss_mib", 12e-6, 90e-6)
    # either side under 100 µs is enough: an article run's idle tasks at N = 1 read Go 12.6 µs against
    # Rust 106 µs (a quick run's 14 µs against 92 µs), and a rule that asked for both took one and not the other
    assert findings.short_time("elapsed_s", 12.6e-6, 106e-6) and findings.short_time("elapsed_s", 0.5, 99e-6)
    assert not findings.short_time("elapsed_s", 100e-6, 2e-3)
    assert list(figures.sets_axis(wild)) == [i != row for i in wild.index]
    # without such a row nothing is said of it
    assert not any("▲/▼" in t for t in _texts(figures.ratio_vs_n(ratios, 0.02)))


def test_tick_labels_of_one_axis_never_read_alike():
    from bench_src.report.figures.axes import unit_formatter
    close = [0.2820, 0.2825, 0.2830, 0.2835, 0.2840]
    labels = unit_formatter("s").format_ticks(close)
    assert labels == ["282 ms", "282.5 ms", "283 ms", "283.5 ms", "284 ms"]
    assert unit_formatter("s").format_ticks([0.1, 0.2, 0.5, 1.0]) == ["100 ms", "200 ms", "500 ms", "1 s"]
    # ticks 2.5 ms apart read unevenly when rounded to three digits ("282 ms, 285 ms, 288 ms")
    assert unit_formatter("s").format_ticks([0.2825, 0.285, 0.2875, 0.29]) == \
        ["282.5 ms", "285 ms", "287.5 ms", "290 ms"]
    assert unit_formatter("s").format_ticks([1 / 3, 2 / 3, 1]) == ["333 ms", "667 ms", "1 s"]  # not round: distinct
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0.2819, 0.2841])
    ax.yaxis.set_major_formatter(unit_formatter("s"))
    fig.canvas.draw()
    drawn = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert len(drawn) == len(set(drawn)) >= 3, drawn
    plt.close(fig)


def _extent(artist, fig):
    return artist.get_window_extent(fig.canvas.get_renderer())


def _overlap(a, b) -> bool:
    """Two display boxes share more than a pixel."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1


def test_the_per_task_legend_stays_off_the_data(df):
    costs = scaling.per_task_cost(df, "elapsed_s")
    # the largest cost on the last row, where a legend in the lower right corner would sit on it
    last = costs.index[costs["workload"].map(lambda w: w != "cpu_loops")][-1]
    costs.loc[last, ["per_task", "per_task_ci_low", "per_task_ci_high"]] = costs["per_task"].max() * 1.5
    fig = figures.per_task(costs)
    fig.canvas.draw()
    ax = fig.axes[0]
    legends = [leg for leg in [ax.get_legend(), *fig.legends] if leg is not None]
    assert legends, "a legend says which colour is which language"
    points = [ax.transData.transform(xy) for line in ax.get_lines() for xy in line.get_xydata()]
    assert points
    for leg in legends:
        box = _extent(leg, fig)
        assert not _overlap(box, _extent(ax.patch, fig)), "the legend is outside the plotting area"
        assert not any(box.contains(x, y) for x, y in points)
    plt.close(fig)


def test_the_per_task_caption_says_which_rows_have_no_interval(df):
    everything = scaling.per_task_cost(df, "elapsed_s")
    fig = figures.per_task(everything)
    assert any("95% CI from the blocks that hold every N" in t for t in _texts(fig))
    assert not any("no interval" in t for t in _texts(fig))
    plt.close(fig)
    # Go's sleep cell at N = 100,000 lost 5 of its 10 samples: 5 blocks hold every N, too few for an interval
    fewer = df[~((df["workload"] == "sleep") & (df["lang"] == "go") & (df["n"] == 100000) & (df["block"] < 5))]
    costs = scaling.per_task_cost(fewer, "elapsed_s")
    costs = costs[costs["workload"] != "cpu_loops"]
    assert costs.loc[costs["lang"] == "go", "per_task_ci_low"].isna().all()
    fig = figures.per_task(costs)
    caption = next(t for t in _texts(fig) if "every N" in t)
    assert ("95% CI from the blocks that hold every N; no interval for the row (fewer than 6 blocks hold every N)"
            in caption)
    plt.close(fig)
    fig = figures.per_task(costs[costs["lang"] == "go"])
    assert any("no interval for every row (fewer than 6 blocks hold every N)" in t for t in _texts(fig))
    assert not any("95% CI" in t for t in _texts(fig))
    plt.close(fig)


def test_distributions_name_the_n_they_draw_among_those_run(df):
    fig = figures.distributions(df, "sleep", ns=[10, 100000])
    texts = _texts(fig)
    assert "sleep: every valid sample of workload time, at the smallest and largest N" in texts
    assert any(t.startswith("N = 10 and 100,000 of 10, 1k, 100k") for t in texts), texts
    plt.close(fig)
    fig = figures.distributions(df, "sleep", ns=[1000])
    assert any("at 1 of the 3 N run" in t for t in _texts(fig))
    assert any(t.startswith("N = 1,000 of 10, 1k, 100k") for t in _texts(fig))
    plt.close(fig)
    fig = figures.distributions(df, "sleep")  # every N: nothing to single out
    assert "sleep: every valid sample of workload time" in _texts(fig)
    assert not any(" of 10, 1k, 100k" in t for t in _texts(fig))
    plt.close(fig)


def test_the_median_figure_names_the_coverage_its_intervals_have(df):
    s = stats.summarize(df, "elapsed_s")
    coverage = s["ci_coverage"].unique()
    assert len(coverage) == 1 and coverage[0] < 0.94  # 10 samples: the 3rd to 9th order statistics, 93.5%
    fig = figures.metric_vs_n(s)
    texts = _texts(fig)
    assert "Median workload time with 93.5% CI" in texts
    assert any("93.5% distribution-free CI of the median (the 3rd to 9th of 10 ordered values" in t for t in texts)
    assert not any("95%" in t for t in texts)
    plt.close(fig)
    mixed = s.assign(ci_coverage=np.where(np.arange(len(s)) % 2 == 0, coverage[0], 0.9648),
                     samples=np.where(np.arange(len(s)) % 2 == 0, 10, 15))
    fig = figures.metric_vs_n(mixed)
    texts = _texts(fig)
    assert "Median workload time with 93.5–96.5% CI" in texts
    assert any("93.5–96.5% distribution-free CI of the median (by the number of samples, 10–15" in t for t in texts)
    plt.close(fig)
    tied = s.assign(ci_coverage_kind=["at least"] + ["exact"] * (len(s) - 1))
    fig = figures.metric_vs_n(tied)
    assert any(f"at least that in the 1 of {len(s)} cells whose values tie" in t for t in _texts(fig))
    plt.close(fig)


def test_the_direction_words_of_the_ratio_axis_sit_outside_the_plotting_area(ratios):
    fig = figures.ratio_vs_n(ratios, 0.02)
    fig.canvas.draw()
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
    for ax in panels:
        words = [t for t in ax.texts if "faster" in t.get_text()]
        assert len(words) == 2
        for t in words:
            assert not _overlap(_extent(t, fig), _extent(ax.patch, fig)), t.get_text()
            for other in panels:  # nor on a neighbouring panel
                if other is not ax:
                    assert not _overlap(_extent(t, fig), _extent(other.patch, fig))
    plt.close(fig)


@pytest.mark.parametrize("largest", [1.15, 1.9, 3.5, 8.5, 12.0, 40.0])
def test_the_ticks_of_the_ratio_axis_reach_its_ends_and_it_has_room_above_the_largest_interval(df, largest):
    r = compare.compare(df, "peak_rss_mib")  # every ratio above 1, up to 4.2x (sleep at N = 100,000)
    power = math.log2(largest) / math.log2(r["ratio_ci_high"].max())
    for column in ("ratio", "ratio_ci_low", "ratio_ci_high"):
        r[column] = r[column] ** power  # the same picture on a log axis, its largest interval ending at `largest`
    fig = figures.ratio_vs_n(r, 0.02)
    for ax in (ax for ax in fig.axes if ax.get_visible() and ax.get_title()):
        low, high = ax.get_ylim()
        ticks = [t for t in ax.get_yticks() if low <= t <= high]
        # the outermost ticks within a factor 2^0.25 of either end: a value near an end is read against a tick
        assert max(ticks) * 2 ** 0.25 >= high and min(ticks) / 2 ** 0.25 <= low, (largest, ticks, high)
        assert math.log2(high) >= 1.05 * math.log2(largest)  # the largest interval is not against the top edge
    plt.close(fig)


def _ping_pong_rates():
    """Round trips per second of a ping-pong run: Go at buffers 0, 1 and 4096, two Rust flavours at
    1 and 4096 (no rendezvous channel), with median intervals at the coverage of 6 and 14 samples."""
    rows = []
    for mode in ("lockstep", "pipelined"):
        for lang, variant, buffers, rate in (("go", "channels", (0, 1, 4096), 4.2e6),
                                             ("rust", "current-thread", (1, 4096), 3.5e6),
                                             ("rust", "multi-thread", (1, 4096), 2.4e6)):
            for b in buffers:
                rows.append({"workload": "ping_pong", "lang": lang, "variant": variant, "n": 1_000_000,
                             "mode": mode, "buffer": b, "samples": 6, "round_trips_per_s": rate,
                             "ci_low": rate * 0.95, "ci_high": rate * 1.04,
                             "ci_coverage": 0.96484375 if b == 4096 else 0.96875, "ci_coverage_kind": "exact"})
    return pd.DataFrame(rows)


def _side_by_side():
    """threads_vs_tasks in long form as memory.side_by_side gives it: 6 samples per cell (96.9%)."""
    rows = []
    for lang, variant, wall, sys_s, sys_low in (("go", "goroutine", 0.77, 0.026, 0.019),
                                                ("rust", "thread", 3.2, 4.4, 3.6),
                                                ("rust", "tokio", 0.80, 0.007, 0.0)):
        for metric, med, low, high in (("wall_s", wall, wall * 0.97, wall * 1.03),
                                       ("sys_s", sys_s, sys_low, sys_s * 3.2)):
            rows.append({"workload": "threads_vs_tasks", "lang": lang, "variant": variant, "n": 10000,
                         "threads_requested": 2, "metric": metric, "samples": 6, "median": med, "ci_low": low,
                         "ci_high": high, "ci_coverage": 0.96875, "ci_coverage_kind": "exact"})
    return pd.DataFrame(rows)


def test_the_memory_figures_name_the_coverage_their_intervals_have():
    fig = figures.metrics_side_by_side(_side_by_side())
    texts = _texts(fig)
    assert "threads_vs_tasks: median and 96.9% CI per metric" in texts
    assert not any("95%" in t for t in texts)
    plt.close(fig)
    fig = figures.ping_pong_bars(_ping_pong_rates())
    texts = _texts(fig)
    assert any("96.5–96.9% CI" in t for t in texts), texts
    assert not any("95%" in t for t in texts)
    plt.close(fig)
    tied = _ping_pong_rates().assign(ci_coverage_kind="at least")
    fig = figures.ping_pong_bars(tied)
    assert any("≥ 96.5–96.9% CI" in t for t in _texts(fig))
    plt.close(fig)


def test_the_ping_pong_legend_sits_outside_every_panel():
    with theme.context():
        fig = figures.ping_pong_bars(_ping_pong_rates())
        fig.canvas.draw()
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_title().startswith("ping-pong")]
    assert len(panels) == 2
    legends = [leg for leg in [*(ax.get_legend() for ax in panels), *fig.legends] if leg is not None]
    assert len(legends) == 1, "one legend for both panels"
    assert [t.get_text() for t in legends[0].get_texts()] == ["go channels", "rust current-thread",
                                                              "rust multi-thread"]
    box = _extent(legends[0], fig)
    for ax in panels:
        assert not _overlap(box, _extent(ax.patch, fig)), "the legend is outside the plotting areas"
    plt.close(fig)


def test_an_interval_beyond_a_log_axis_is_cut_with_an_arrow_and_named_in_the_caption():
    with theme.context():
        fig = figures.metrics_side_by_side(_side_by_side())
        fig.canvas.draw()
    sys_panel = _panel(fig, "system CPU time (tick-sampled)")
    assert sys_panel.get_yscale() == "log"
    arrows = [a for a in sys_panel.texts if getattr(a, "arrow_patch", None) is not None]
    assert len(arrows) == 1  # tokio's [0, 22.4 ms]: its low end cannot be on a log axis
    assert arrows[0].xy == (2, 0.0)  # at tokio's position, on the bottom edge of the panel
    assert not [a for a in _panel(fig, "process wall time").texts if getattr(a, "arrow_patch", None) is not None]
    caption = next(t for t in _texts(fig) if "arrow:" in t)
    assert "arrow: the interval goes on beyond the log axis (rust tokio, system CPU time (tick-sampled): 0 to 22.4 ms)" in caption
    plt.close(fig)
    whole = _side_by_side()
    whole.loc[whole["ci_low"] == 0, "ci_low"] = 0.004
    fig = figures.metrics_side_by_side(whole)
    assert not any("arrow:" in t for t in _texts(fig))
    assert not [a for a in _panel(fig, "system CPU time (tick-sampled)").texts if getattr(a, "arrow_patch", None) is not None]
    plt.close(fig)


def _idle_summary():
    """Median peak RSS of idle_tasks as stats.summarize gives it: Go's goroutines and three Rust
    variants, each released at once and sleeping, at N = 10,000 to 1,000,000."""
    rows = []
    for lang, variant, base, per in (("go", "goroutine", 9.7, 2.7e-3), ("rust", "current-thread", 5.3, 4.4e-4),
                                     ("rust", "join-all", 5.1, 1.8e-4), ("rust", "spawn", 5.7, 4.3e-4)):
        for wait, duration in (("release", 0), ("sleep", 3000)):
            for n in (10_000, 100_000, 1_000_000):
                med = base + per * n
                rows.append({"workload": "idle_tasks", "lang": lang, "variant": variant, "n": n,
                             "params": f"duration_ms={duration},linger_ms=0,wait={wait}", "threads_requested": 2,
                             "metric": "peak_rss_mib", "samples": 6, "median": med, "ci_low": med * 0.99,
                             "ci_high": med * 1.01, "ci_coverage": 0.96875, "ci_coverage_kind": "exact"})
    return pd.DataFrame(rows)


def test_every_idle_task_series_has_its_own_colour_marker_or_fill_in_its_language_family():
    import matplotlib.colors as mcolors
    with theme.context():
        fig = figures.metric_vs_n(_idle_summary(), "peak_rss_mib", distinct_series=True)
        fig.canvas.draw()
    ax = _panel(fig, "idle_tasks")
    lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert len(lines) == 8
    looks = {ln.get_label(): (mcolors.to_hex(ln.get_color()), ln.get_marker(),
                              mcolors.to_hex(ln.get_markerfacecolor())) for ln in lines}
    assert len(set(looks.values())) == 8, looks
    rust = [ln for ln in lines if ln.get_label().startswith("rust ")]
    # the three Rust variants differ in colour and marker, not only in the shade of one red
    assert len({mcolors.to_hex(ln.get_color()) for ln in rust}) == 3
    assert len({ln.get_marker() for ln in rust}) == 3
    for ln in lines:
        r, g, b = mcolors.to_rgb(ln.get_color())
        assert (b > r) if ln.get_label().startswith("go ") else (r > b), ln.get_label()  # Go blue-ish, Rust red-ish
        assert ln.get_linestyle() == ("-" if ln.get_label().startswith("go ") else "--")
    # the band of each line is drawn in the line's colour
    assert [mcolors.to_hex(c.get_facecolor()[0][:3]) for c in ax.collections] == \
        [mcolors.to_hex(ln.get_color()) for ln in lines]
    legend = ax.get_legend()
    assert legend is not None and len(legend.get_texts()) == 8
    assert not _overlap(_extent(legend, fig), _extent(ax.patch, fig)), "the legend is outside the plotting area"
    assert "Median peak RSS with 96.9% CI" in _texts(fig)
    plt.close(fig)


def _idle_costs(rel_half_width: float):
    """Bytes per task as analysis.memory.bytes_per_task gives them, each slope with a CI of ± rel_half_width."""
    rows = []
    for lang, variant, per in (("go", "goroutine", 2790), ("rust", "current-thread", 463),
                               ("rust", "join-all", 192), ("rust", "spawn", 455)):
        rows.append({"workload": "idle_tasks", "lang": lang, "variant": variant, "threads_requested": 2, "arm": "",
                     "params": "duration_ms=0,linger_ms=0,wait=release", "metric": "peak_rss_bytes",
                     "ns": "1,10000,100000,1000000", "n_values": 4, "samples": 30, "per_task": per,
                     "per_task_ci_low": per * (1 - rel_half_width), "per_task_ci_high": per * (1 + rel_half_width)})
    return pd.DataFrame(rows)


def test_the_per_task_caption_says_where_an_interval_is_narrower_than_its_marker():
    def caption(costs):
        fig = figures.per_task(costs)
        text = next(t for t in _texts(fig) if "every N" in t).splitlines()[-1]
        plt.close(fig)
        return text

    tight = _idle_costs(0.004)  # ± 0.4%, as the slopes of peak memory are: no bar shows beside the point
    assert caption(tight) == "95% CI from the blocks that hold every N, each narrower than its marker"
    one_wide = tight.copy()
    one_wide.loc[0, ["per_task_ci_low", "per_task_ci_high"]] = [1400, 5600]
    assert caption(one_wide) == ("95% CI from the blocks that hold every N, narrower than the marker where no bar "
                                 "shows (3 of 4 rows)")
    assert caption(_idle_costs(0.5)) == "95% CI from the blocks that hold every N"  # every bar shows
    none = tight.copy()  # a row with too few blocks has no interval: not counted as a narrow one
    none.loc[0, ["per_task_ci_low", "per_task_ci_high"]] = [np.nan, np.nan]
    assert "(3 of 3 rows)" not in caption(none) and "each narrower than its marker" in caption(none)
    assert figures.per_task(tight[tight["workload"] == "cpu_loops"]) is None


def _single_n_cells():
    """The cells of the two single-N workloads of the article profile: cpu_loops' eight (short
    names) and ping_pong's fourteen (long names)."""
    cells = [("cpu_loops", lang, v, 10_000, "inner=100000,u=10") for lang in ("go", "rust")
             for v in ("plain", "local", "unrolled", "parallel")]
    cells += [("ping_pong", "go", "channels", 1_000_000, f"buffer={b},mode={m}")
              for b in (0, 1, 4096) for m in ("lockstep", "pipelined")]
    cells += [("ping_pong", "rust", v, 1_000_000, f"buffer={b},mode={m}")
              for v in ("current-thread", "multi-thread") for b in (1, 4096) for m in ("lockstep", "pipelined")]
    return cells


def _labels_apart(fig, ax) -> None:
    """No two tick labels of a categorical axis overlap: side by side where they stand upright,
    each turned line farther from the next than its height where they are turned; and none
    reaches into another panel."""
    renderer = fig.canvas.get_renderer()
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert len(labels) >= 2
    angle = labels[0].get_rotation()
    if angle == 0:
        boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.x0)
        for a, b in zip(boxes, boxes[1:]):
            assert b.x0 >= a.x1, (ax.get_title(), [t.get_text() for t in labels])
    else:
        xs = np.sort(ax.transData.transform(np.column_stack([ax.get_xticks(), np.zeros(len(ax.get_xticks()))]))[:, 0])
        step = float(np.min(np.diff(xs)))
        lines = max(t.get_text().count("\n") + 1 for t in labels)
        height = lines * labels[0].get_fontsize() * fig.dpi / 72
        assert step * math.sin(math.radians(angle)) >= height, (ax.get_title(), angle, step, height)
    for other in fig.axes:
        if other is not ax and other.get_visible():
            for t in labels:
                assert not _overlap(_extent(t, fig), _extent(other.patch, fig)), (ax.get_title(), t.get_text())


def test_the_labels_of_a_categorical_axis_never_overlap():
    rows = [{"workload": w, "lang": lang, "variant": v, "n": n, "params": p, "threads_requested": 2,
             "metric": "elapsed_s", "samples": 6, "median": 0.3, "ci_low": 0.29, "ci_high": 0.31,
             "ci_coverage": 0.96875, "ci_coverage_kind": "exact"} for w, lang, v, n, p in _single_n_cells()]
    with theme.context():
        fig = figures.metric_vs_n(pd.DataFrame(rows), "elapsed_s")
        fig.canvas.draw()
    for title in ("cpu_loops", "ping_pong"):
        _labels_apart(fig, _panel(fig, title))
    plt.close(fig)
    rng = np.random.default_rng(3)
    samples = pd.DataFrame([{"workload": w, "lang": lang, "variant": v, "n": n, "params": p, "threads_requested": 2,
                             "valid": True, "elapsed_s": x}
                            for w, lang, v, n, p in _single_n_cells() if w == "ping_pong"
                            for x in 0.3 * rng.lognormal(0, 0.02, 6)])
    with theme.context():
        fig = figures.distributions(samples, "ping_pong", "elapsed_s")
        fig.canvas.draw()
    _labels_apart(fig, _panel(fig, "N = 1,000,000"))
    plt.close(fig)


def _crowded_summary():
    """Two panels whose lines leave no corner free for a legend: idle tasks (eight series from
    10 µs to 5 s over N = 1 to 1M, as an article run has them) and SQLite (a steep line through
    the top of the panel)."""
    ns = (1, 10_000, 100_000, 1_000_000)
    release = {("go", "goroutine"): (1.5e-5, 2e-2, 2.2e-1, 2.0), ("rust", "current-thread"): (4e-5, 4e-3, 4.3e-2, 4.3e-1),
               ("rust", "join-all"): (1.1e-5, 2.8e-3, 2.9e-2, 2.9e-1), ("rust", "spawn"): (1.1e-4, 5.6e-3, 6.4e-2, 9e-1)}
    sleep = {("go", "goroutine"): (3.0, 3.2, 4.9), ("rust", "current-thread"): (3.0, 3.06, 3.57),
             ("rust", "join-all"): (3.0, 3.02, 3.25), ("rust", "spawn"): (3.0, 3.05, 3.44)}
    rows = []

    def add(workload, lang, variant, n, params, med):
        rows.append({"workload": workload, "lang": lang, "variant": variant, "n": n, "params": params,
                     "threads_requested": 2, "metric": "elapsed_s", "samples": 6, "median": med,
                     "ci_low": med * 0.9, "ci_high": med * 1.1, "ci_coverage": 0.96875, "ci_coverage_kind": "exact"})

    for (lang, variant), meds in release.items():
        for n, med in zip(ns, meds):
            add("idle_tasks", lang, variant, n, "duration_ms=0,linger_ms=0,wait=release", med)
    for (lang, variant), meds in sleep.items():
        for n, med in zip(ns[1:], meds):
            add("idle_tasks", lang, variant, n, "duration_ms=3000,linger_ms=0,wait=sleep", med)
    for lang, variant, params, meds in (("go", "chan-per-task", "driver=mattn,journal=delete,pool=0", (0.035, 1.5)),
                                        ("go", "pool", "driver=mattn,journal=wal,pool=8", (0.005, 0.045, 0.32)),
                                        ("rust", "pool", "driver=sqlx,journal=wal,pool=10", (0.009, 0.065, 0.35)),
                                        ("rust", "pool", "driver=sqlx,journal=wal,pool=8", (0.007, 0.05, 0.34))):
        for n, med in zip((10, 100, 1000), meds):
            add("sqlite", lang, variant, n, params, med)
    return pd.DataFrame(rows)


def test_a_legend_never_covers_a_line_or_band_of_its_panel():
    from matplotlib.transforms import Bbox
    with theme.context():
        fig = figures.metric_vs_n(_crowded_summary(), "elapsed_s")
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for title in ("idle_tasks", "sqlite"):
        ax = _panel(fig, title)
        legend = ax.get_legend()
        assert legend is not None and len(legend.get_texts()) >= 4
        box = legend.get_window_extent(renderer)
        inner = Bbox.from_extents(box.x0 + 1, box.y0 + 1, box.x1 - 1, box.y1 - 1)
        for line in ax.get_lines():
            path = ax.transData.transform_path(line.get_path())
            assert not path.intersects_bbox(inner, filled=False), (title, line.get_label())
        for band in ax.collections:
            for path in band.get_paths():
                assert not ax.transData.transform_path(path).intersects_bbox(inner, filled=True), title
        # where it stands outside the panel, it covers no other panel and no label of its own
        for other in fig.axes:
            if other is not ax and other.get_visible():
                assert not _overlap(box, _extent(other.patch, fig)), title
        for label in (ax.xaxis.label, *ax.get_xticklabels()):
            if label.get_text():
                assert not _overlap(box, _extent(label, fig)), (title, label.get_text())
    plt.close(fig)


def test_the_per_task_caption_says_which_intervals_go_on_to_zero_or_below():
    """An interval whose lower end is 0 or below (no cost resolved there) is drawn to the log axis's
    end with an arrow; the caption says what the arrow means and how many rows have one."""
    def caption(costs):
        fig = figures.per_task(costs)
        text = next(t for t in _texts(fig) if "every N" in t).splitlines()[-1]
        plt.close(fig)
        return text

    costs = _idle_costs(0.5)
    assert "arrow" not in caption(costs)
    costs.loc[[0, 2], "per_task_ci_low"] = [-800.0, 0.0]
    assert caption(costs) == ("95% CI from the blocks that hold every N; arrow: the interval goes on to 0 or below "
                              "(2 of 4 rows)")


def test_a_log_axis_of_sizes_ends_on_ticks_that_enclose_every_value():
    # idle tasks' peaks of 4.4 to 98.4 MiB were drawn with ticks from 8 to 64 MiB only: the lowest
    # and the highest values lay beyond both end ticks
    import matplotlib.pyplot as plt

    from bench_src.report.figures.axes import value_axis

    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [4.4, 30.0, 98.4])
    value_axis(ax, [4.4, 30.0, 98.4], "MiB")
    fig.canvas.draw()
    low, high = ax.get_ylim()
    ticks = [t for t in ax.get_yticks() if low <= t <= high]
    assert (low, high) == (4.0, 128.0) and ticks[0] == low and ticks[-1] == high
    assert [t.get_text() for t in ax.get_yticklabels()] == ["4 MiB", "8 MiB", "16 MiB", "32 MiB", "64 MiB", "128 MiB"]
    plt.close(fig)


def _with_cores(metric: str) -> pd.DataFrame:
    """A speed-up table (analysis.cores.speedup) of one workload at 1 and 2 cores: the value at 1 core
    over the value at 2 cores of a Go and a Rust cell."""
    rows = [("go", "waitgroup", 0.98, 0.96, 0.99, "more with more cores"),
            ("rust", "join-handles", 1.3, 1.2, 1.4, "less with more cores")]
    return pd.DataFrame([{"workload": "sleep", "lang": lang, "variant": variant, "n": 10, "arm": "",
                          "params": "kernel=xorshift,work=0", "cores": 2, "from_cores": 1, "metric": metric,
                          "pairs": 6, "speedup": v, "speedup_ci_low": lo, "speedup_ci_high": hi, "ci_level": 0.975,
                          "p_adjusted": 0.01, "verdict_kind": kind, "warning": ""}
                         for lang, variant, v, lo, hi, kind in rows])


def test_the_speed_up_figure_draws_an_ideal_for_a_duration_only():
    with theme.context():
        time = figures.speedup(_with_cores("elapsed_s"))
        memory = figures.speedup(_with_cores("peak_rss_mib"))
    ax = time.axes[0]
    assert time.bench_title == "Speed-up with cores: workload time, per language, with intervals"
    assert ax.get_ylabel() == "speed-up of workload time (at 1 core / at k)"
    assert "ideal (time / cores)" in [t.get_text() for t in ax.get_legend().get_texts()]
    # memory is not divided by the cores: the quotient is named for what it is, with no ideal beside it
    ax = memory.axes[0]
    assert memory.bench_title == "Peak RSS with cores: at 1 core / at k cores, per language, with intervals"
    assert "speed" not in memory.bench_title.lower() and "speed" not in ax.get_ylabel().lower()
    assert ax.get_ylabel() == "peak RSS at 1 core / at k cores\n(above 1: less with more cores)"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["go waitgroup, N = 10", "rust join-handles, N = 10"]
    assert not any(line.get_linestyle() == ":" for line in ax.get_lines())
    # a ratio on a log2 axis centred on 1, its ends holding every interval
    low, high = ax.get_ylim()
    assert ax.get_yscale() == "log" and math.isclose(low * high, 1.0) and low < 0.96 and high > 1.4
    plt.close(time)
    plt.close(memory)


def test_two_series_of_one_panel_stand_apart_in_colours_that_are_not_the_languages(ratios):
    # sleep with work=0 and work=50000 overlapped at each N (3% apart on a log axis of decades) in
    # seaborn's blue and orange, Go's and Rust's colours everywhere else
    import matplotlib.colors as mcolors

    from bench_src.report.theme import LANG_COLORS

    sleep = ratios[ratios["workload"] == "sleep"]
    other = sleep.assign(**{k: sleep[k].str.replace("work=0", "work=50000")
                            for k in ("shared_params", "go_params", "rust_params")})
    fig = figures.ratio_vs_n(pd.concat([sleep, other], ignore_index=True), 0.02)
    series = [ln for ln in _panel(fig, "sleep").lines if ln.get_linestyle() == "-" and ln.get_label().startswith("work")]
    assert len(series) == 2, [ln.get_label() for ln in _panel(fig, "sleep").lines]
    colours = {mcolors.to_hex(ln.get_color()) for ln in series}
    assert len(colours) == 2 and not colours & {mcolors.to_hex(c) for c in LANG_COLORS.values()}
    x0, x1 = (np.asarray(ln.get_xdata(), dtype=float) for ln in series)
    assert np.all(np.maximum(x0, x1) / np.minimum(x0, x1) >= 1.2), (x0, x1)
    plt.close(fig)


def _ratio_ticks_of(ax, axis: str = "y") -> tuple[list[float], list[str], tuple[float, float]]:
    ax.figure.canvas.draw()
    low, high = ax.get_ylim() if axis == "y" else ax.get_xlim()
    a = ax.yaxis if axis == "y" else ax.xaxis
    shown = [(t, lab.get_text()) for t, lab in zip(a.get_ticklocs(), a.get_ticklabels()) if low <= t <= high]
    return [t for t, _ in shown], [lab for _, lab in shown], (low, high)


@pytest.mark.parametrize("largest", [3.5, 12.0, 40.0, 100.0])
def test_every_ratio_figure_ticks_each_power_of_two_on_one_axis_centred_on_1(df, largest):
    """Run V's peak-RSS ratios (files_rw's interval down to 1/20) were drawn on an axis of 1/64x to
    64x ticked every fourth power of two (1/64, 1/16, 1/4, 1, 4, 16, 64): a 16x ratio sat a step of
    4x from the next tick, and the axis reached to 64x for values under 20x.  Every ratio figure
    (Go/Rust against N and against cores, the speed-up, the forest across hosts) reads one helper:
    beyond 2x a tick at every power of two, each 2x from the next, the axis ending a little beyond
    the tick that holds the largest value, one limit for every panel."""
    from bench_src.report.figures import cores as cores_figures
    from bench_src.report.figures.axes import ratio_label

    def check(ax, axis="y"):
        ticks, labels, (low, high) = _ratio_ticks_of(ax, axis)
        assert low * high == pytest.approx(1.0) and 1.0 in ticks
        assert all(b / a == pytest.approx(2.0) for a, b in zip(ticks, ticks[1:])), ticks
        assert labels == [ratio_label(t) for t in ticks]
        assert high <= 2.2 * max(largest, 2 ** 0.75), (largest, high)  # no room of a whole step left over
        return low, high

    r = compare.compare(df, "peak_rss_mib")  # every ratio above 1, up to 4.2x (sleep at N = 100,000)
    power = math.log2(largest) / math.log2(r["ratio_ci_high"].max())
    for column in ("ratio", "ratio_ci_low", "ratio_ci_high"):
        r[column] = r[column] ** -power  # Go smaller, down to 1 / largest
    fig = figures.ratio_vs_n(r, 0.02)
    assert len({check(ax) for ax in fig.axes if ax.get_visible() and ax.get_title()}) == 1
    plt.close(fig)
    # against cores: two workloads, one near 1 and one at the largest ratio, on one axis
    rows = [{"workload": w, "n": 10, "go_variant": "a", "rust_variant": "a", "shared_params": "", "cores": k,
             "ratio": v, "ratio_ci_low": v / 1.05, "ratio_ci_high": v * 1.05, "change_kind": "", "metric": "peak_rss_mib"}
            for w, v in (("sleep", 1.1), ("idle_tasks", 1 / largest)) for k in (1, 2)]
    fig = cores_figures.ratio_vs_cores(pd.DataFrame(rows))
    assert len({check(ax) for ax in fig.axes}) == 1
    plt.close(fig)
    gains = pd.DataFrame([{"workload": w, "lang": "go", "variant": "a", "n": 10, "params": "", "cores": 2,
                           "from_cores": 1, "metric": "peak_rss_mib", "speedup": v, "speedup_ci_low": v / 1.05,
                           "speedup_ci_high": v * 1.05} for w, v in (("sleep", 1.1), ("idle_tasks", largest))])
    fig = cores_figures.speedup(gains)
    assert len({check(ax) for ax in fig.axes}) == 1
    plt.close(fig)
    key = {"workload": "sleep", "n": 10, "threads_requested": 2, "arm": "", "shared_params": "", "go_variant": "a",
           "rust_variant": "a", "go_params": "", "rust_params": ""}
    hosts_rows = pd.DataFrame([{**key, "host_label": h, "ratio": v, "ratio_ci_low": v / 1.05, "ratio_ci_high": v * 1.05}
                               for h, v in (("m1", largest), ("m2", largest / 1.5))])
    combined = pd.DataFrame([{**key, "metric": "peak_rss_mib", "ratio": largest / 1.2,
                              "ratio_ci_low": largest / 1.6, "ratio_ci_high": largest / 1.1}])
    fig = figures.forest(hosts_rows, combined, 0.02)
    check(fig.axes[0], "x")
    plt.close(fig)
