"""Core count as a plan dimension: cells per core count, the ratio against cores with the paired
test of its change, and the speed-up per language."""
import numpy as np
import pytest

from bench_src.analysis import cores
from bench_src.plan import make_plan
from bench_src.run import runner
from bench_src.run.machine import usable_cpus
from bench_src.store import load
from bench_src.report import units
from report_data import alive_extra

pytestmark = pytest.mark.skipif(usable_cpus() < 2, reason="needs 2 usable CPUs")


def scaled_measure(go_power: float, rust_power: float, seed: int = 0, spread: float = 0.01):
    """Fake samples: time = k ** -power at k cores (Go and Rust scale differently)."""
    rng = np.random.default_rng(seed)

    def measure(cell, *args, **kwargs):
        power = go_power if cell.lang == "go" else rust_power
        t = cell.cores ** -power * (1 + spread * rng.standard_normal())
        return {"status": "ok", "reason": "", "checksum": "00000000000000aa", "elapsed_ns": int(1e9 * t),
                "wall_ns": 2000, "user_ns": 1, "sys_ns": 1, "maxrss_kb": 8192, "peak_rss_bytes": 8 << 20,
                "extra": alive_extra(cell),
                "tasks_ok": cell.n, "threads": cell.threads, "cpus": ",".join(map(str, range(cell.cores)))}

    return measure


def plan(**kw):
    return make_plan("quick", workloads=["sleep"], ns=[10], samples=8, warmup=0, params={"sleep": {"work": 10}},
                     cores=[1, 2], **kw)


def test_every_cell_runs_at_every_core_count_in_the_same_blocks():
    p = plan()
    assert p.cores == (1, 2)
    assert {(c.cores, c.threads) for c in p.cells()} == {(1, 1), (2, 2)}
    for block in range(p.samples):
        assert {s.cell.cores for s in p.schedule() if s.block == block and s.phase == "measured"} == {1, 2}


def test_the_ratio_moves_with_cores_and_the_change_is_tested(tmp_path):
    # Go halves its time with 2 cores (power 1), Rust gains 10% (power ~0.14): Go/Rust at 2 cores is
    # 0.55 of the ratio at 1 core
    runner.run(plan(), tmp_path / "r", progress=False, measure_fn=scaled_measure(1.0, 0.137), log=lambda *_: None)
    df = load(tmp_path / "r")
    assert set(df["cores"].dropna().astype(int)) == {1, 2}
    t = cores.ratio_vs_cores(df)
    assert sorted(t["cores"]) == [1, 2]
    one, two = t[t["cores"] == 1].iloc[0], t[t["cores"] == 2].iloc[0]
    assert one["change_kind"] == "" and np.isnan(one["change"])
    assert 0.5 < two["change"] < 0.6 and two["change_ci_high"] < 1 and two["change_kind"] == "lower", two.to_dict()
    assert two["change_pairs"] == 8
    s = cores.speedup(df)
    go, rust = s[s["lang"] == "go"].iloc[0], s[s["lang"] == "rust"].iloc[0]
    assert 1.9 < go["speedup"] < 2.1 and go["verdict_kind"] == "less with more cores"
    assert 1.05 < rust["speedup"] < 1.15 and rust["speedup_ci_low"] > 1
    assert set(s["warning"]) == {""} and "fixed design" not in " ".join(t["warning"].astype(str))
    # in a sequential run both tables say that their tests spend no alpha over the looks
    df.attrs["design"] = {"looks": [6, 11, 20]}
    assert all("fixed design" in w for w in cores.speedup(df)["warning"])
    changed = cores.ratio_vs_cores(df)
    assert all("fixed design" in w for w in changed.loc[changed["cores"] == 2, "warning"])


def test_equal_scaling_gives_no_change(tmp_path):
    runner.run(plan(), tmp_path / "r", progress=False, measure_fn=scaled_measure(0.8, 0.8, seed=3),
               log=lambda *_: None)
    t = cores.ratio_vs_cores(load(tmp_path / "r"))
    two = t[t["cores"] == 2].iloc[0]
    assert two["change_ci_low"] < 1 < two["change_ci_high"] and two["change_kind"] != "lower"


def test_the_change_keeps_the_level_of_its_interval_and_the_table_shows_it(tmp_path):
    """Two changes, one called (Go gains from the second core at N = 10 only): each change's interval
    is at 1 - max(R, 1) x 5% / m = 97.5%, kept in `change_ci_level` and named in the column's header
    as the other comparison tables name theirs (before, "change from 1 core [CI]", no level)."""
    from bench_src.report import tables

    rng = np.random.default_rng(5)

    def measure(cell, *args, **kwargs):
        power = 1.0 if cell.lang == "go" and cell.n == 10 else 0.3
        t = cell.cores ** -power * (1 + 0.01 * rng.standard_normal())
        return {"status": "ok", "reason": "", "checksum": "00000000000000aa", "elapsed_ns": int(1e9 * t),
                "wall_ns": 2000, "user_ns": 1, "sys_ns": 1, "maxrss_kb": 8192, "peak_rss_bytes": 8 << 20,
                "extra": alive_extra(cell),
                "tasks_ok": cell.n, "threads": cell.threads, "cpus": ",".join(map(str, range(cell.cores)))}

    two_ns = make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=8, warmup=0, params={"sleep": {"work": 10}},
                       cores=[1, 2])
    runner.run(two_ns, tmp_path / "r", progress=False, measure_fn=measure, log=lambda *_: None)
    t = cores.ratio_vs_cores(load(tmp_path / "r"))
    changed = t[t["cores"] == 2].set_index("n")
    assert changed.loc[10, "change_kind"] == "lower" and changed.loc[100, "change_kind"] not in ("lower", "higher")
    assert list(changed["change_ci_level"]) == [pytest.approx(0.975)] * 2
    assert t.loc[t["cores"] == 1, "change_ci_level"].isna().all()
    header = [c for c in tables.readable(t, "ratio_vs_cores_elapsed_s").frame.columns if c.startswith("change from")]
    assert header == ["change from 1 core [97.5% CI], verdict"], header


@pytest.mark.parametrize("bad, message", [([3], "more than the 2 usable CPUs"), (["x"], "not a core count"),
                                          ([0], "not a core count")])
def test_core_counts_the_machine_lacks_are_refused_before_anything(bad, message):
    if usable_cpus() != 2:
        pytest.skip("the message names this machine's 2 CPUs")
    with pytest.raises(ValueError, match=message):
        make_plan("quick", workloads=["sleep"], ns=[10], cores=bad)


def test_the_report_gives_the_cores_tables_and_figures(tmp_path):
    from bench_src.report import full
    runner.run(plan(), tmp_path / "r", progress=False, measure_fn=scaled_measure(1.0, 0.5), log=lambda *_: None)
    rep = full.full_report(tmp_path / "r", render_html=False)
    assert not rep.tables["ratio_vs_cores_elapsed_s"].empty and not rep.tables["speedup_elapsed_s"].empty
    for name in ("ratio_elapsed_s_vs_cores", "speedup_elapsed_s"):
        assert sorted(p.suffix for p in rep.figures[name]) == [".pdf", ".png", ".svg"]
    assert (tmp_path / "r" / "export" / "tables" / "ratio_vs_cores_elapsed_s.csv").exists()


TASK_WORKLOADS = {"sleep", "idle_tasks", "threads_vs_tasks", "ping_pong"}


def test_the_article_full_profile_runs_the_task_workloads_at_1_and_2_cores():
    p = make_plan("article-full")
    assert p.cores == {w: (1, 2) for w in ("sleep", "idle_tasks", "threads_vs_tasks", "ping_pong")}
    counts = {}
    for c in p.cells():
        counts.setdefault(c.workload, set()).add((c.cores, c.threads))
    for w, seen in counts.items():
        assert seen == ({(1, 1), (2, 2)} if w in TASK_WORKLOADS else {(0, usable_cpus())}), (w, seen)
    # every task cell at both core counts, in the same blocks
    pinned = [c for c in p.cells() if c.cores]
    assert len([c for c in pinned if c.cores == 1]) == len([c for c in pinned if c.cores == 2])
    block = {s.cell.id for s in p.schedule() if s.phase == "measured" and s.block == 0}
    assert {c.id for c in p.cells()} == block
    # the profile's core counts can be replaced or turned off; a plan without cores keeps its digest
    off = make_plan("article-full", cores=[])
    assert off.cores == () and "cores" not in off.to_dict() and not any(c.cores for c in off.cells())
    assert "cores" not in make_plan("quick").to_dict()
    assert "cores" not in make_plan("article").to_dict(), "the one-hour article profile: the usable CPUs only"


def test_cores_per_workload_pins_those_and_leaves_the_others_unpinned():
    from bench_src.plan.model import plan_from_dict

    p = make_plan("quick", workloads=["sleep", "cpu_loops"], ns=[10], samples=6, warmup=0, cores={"sleep": [1, 2]})
    assert p.cores == {"sleep": (1, 2)} and p.cores_of("cpu_loops") == ()
    assert {(c.workload, c.cores) for c in p.cells()} == {("sleep", 1), ("sleep", 2), ("cpu_loops", 0)}
    again = plan_from_dict(p.to_dict())
    assert again.digest == p.digest and again.cells() == p.cells()
    assert make_plan("quick", workloads=["sleep"], ns=[10], cores=[1, 2]).cores == (1, 2), "plan-wide as before"
    from bench_src import api
    given = api.plan_from_parameters(profile="quick", workloads='["sleep", "cpu_loops"]', ns="[10]", samples="6",
                                     warmup="0", cores="{sleep: [1, 2]}")
    assert given.cores == {"sleep": (1, 2)}, "a papermill string is read as YAML"
    # a mapping may name the plan's workloads only, and the machine's core counts only
    with pytest.raises(ValueError, match="cores names workload 'files_read', which is not in this plan"):
        make_plan("quick", workloads=["sleep"], ns=[10], cores={"files_read": [1]})
    if usable_cpus() == 2:
        with pytest.raises(ValueError, match="cores: 3 is more than the 2 usable CPUs"):
            make_plan("quick", workloads=["sleep"], ns=[10], cores={"sleep": [3]})


def test_a_profile_leaves_out_core_counts_the_machine_lacks(monkeypatch):
    from bench_src import cpus
    monkeypatch.setattr(cpus, "usable_cpus", lambda: 1)
    p = make_plan("article-full", workloads=["sleep", "files_read"])
    assert p.cores == {"sleep": (1,)} and {c.cores for c in p.cells() if c.workload == "files_read"} == {0}
    with pytest.raises(ValueError, match="cores: 2 is more than the 1 usable CPUs"):
        make_plan("article-full", workloads=["sleep"], cores={"sleep": [1, 2]})


def test_unpinned_workloads_stay_out_of_the_cores_tables(tmp_path):
    p = make_plan("quick", workloads=["sleep", "cpu_loops"], ns=[10], samples=8, warmup=0,
                  params={"sleep": {"work": 10}}, cores={"sleep": [1, 2]})
    rng = np.random.default_rng(5)

    def measure(cell, *args, **kwargs):
        t = (cell.cores or 2) ** -(1.0 if cell.lang == "go" else 0.5) * (1 + 0.01 * rng.standard_normal())
        return {"status": "ok", "reason": "", "checksum": "00000000000000aa", "elapsed_ns": int(1e9 * t),
                "wall_ns": 2000, "user_ns": 1, "sys_ns": 1, "maxrss_kb": 8192, "peak_rss_bytes": 8 << 20,
                "extra": alive_extra(cell),
                "tasks_ok": cell.n, "threads": cell.threads, "cpus": ",".join(map(str, range(cell.cores or 2)))}

    runner.run(p, tmp_path / "r", progress=False, measure_fn=measure, log=lambda *_: None)
    df = load(tmp_path / "r")
    assert df.loc[df["workload"] == "cpu_loops", "cores"].isna().all()
    t = cores.ratio_vs_cores(df)
    assert set(t["workload"]) == {"sleep"} and sorted(t["cores"]) == [1, 2]
    assert set(cores.speedup(df)["workload"]) == {"sleep"}


def test_the_reproduction_notebook_says_whether_a_claim_holds_at_both_core_counts(tmp_path):
    from bench_src.report import notebook as nb
    from bench_src.report.reproduce_view import ReproduceView

    p = make_plan("quick", workloads=["sleep"], ns=[10000], samples=8, warmup=0, cores={"sleep": [1, 2]})
    runner.run(p, tmp_path / "r", progress=False, measure_fn=scaled_measure(1.0, 0.5), log=lambda *_: None)
    view = ReproduceView(nb.reproduce_parameters(str(tmp_path / "r")))
    t = view.across_cores()
    assert list(t.frame.columns[-3:]) == ["defaults, 1 core", "defaults, 2 cores", "defaults: at every core count"]
    assert list(t.frame["N"].unique()) == ["10,000"], "only the article's cells this run measured"
    memory = t.frame[t.frame["metric"] == "memory"].iloc[0]
    # the article's Go used 4.6x Rust's memory at N = 10,000; our fake programs use the same: not reproduced
    assert memory["claim"] == "Rust" and memory["defaults: at every core count"] == "holds at none (1 and 2 cores)"
    assert memory["defaults, 1 core"].endswith("not reproduced: equivalent")
    assert (tmp_path / "r" / "export" / "tables" / "reproduce_article_by_cores.csv").is_file()
    side = view.side_by_side()
    assert "cores" in side.frame.columns
    # the caption names the levels the ratios' intervals were computed at, not a fixed 95%
    levels = view.side_frame()["ours_default_ci_level"].dropna()
    shown = units.percent(float(levels.min()), digits=3)
    assert side.caption.startswith("Go/Rust ratios [CI at the level of the family each comes from: ")
    assert f"{shown}" in side.caption and "settings' effect [95% CI]" not in side.caption, side.caption
    # the settings' effect: from the blocks holding all four cells, its pairs and its own level said
    assert "not adjusted over the table's rows" in side.caption and "over the blocks that hold all four cells" \
        in side.caption
    claims = side.frame["claim (beyond)"]
    assert claims.str.contains(r"\(±\d+(?:\.\d+)?%\)").all() and not claims.str.contains(r"±0%").any()
    # the Markdown exports are the tables as the notebook shows them, not raw frames
    exported = tmp_path / "r" / "export" / "tables"
    by_cores = (exported / "reproduce_article_by_cores.md").read_text()
    assert "Does each claim hold at every core count?" in by_cores and "ours_default_at_" not in by_cores
    side_md = [p for p in exported.glob("reproduce_article_*.md") if p.stem not in
               ("reproduce_article_by_cores", "reproduce_article_outcomes")]
    assert side_md and all("The article's cells beside ours" in p.read_text() and "ours_default_ci_level" not in
                           p.read_text() for p in side_md)


def test_the_cores_figures_name_the_parameters_where_the_lines_differ_by_them(tmp_path):
    from bench_src.report.figures import cores as cores_figures

    p = make_plan("quick", workloads=["sleep"], ns=[10], samples=6, warmup=0, params={"sleep": {"work": [0, 10]}},
                  cores=[1, 2])
    runner.run(p, tmp_path / "r", progress=False, measure_fn=scaled_measure(1.0, 0.5), log=lambda *_: None)
    df = load(tmp_path / "r")
    for fig, table in ((cores_figures.ratio_vs_cores, cores.ratio_vs_cores(df)),
                       (cores_figures.speedup, cores.speedup(df))):
        drawn = fig(table)
        labels = [t.get_text() for ax in drawn.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
        series = [x for x in labels if not x.startswith("ideal")]
        assert len(series) == len(set(series)) >= 2, labels
        assert any("work=0" in x for x in series) and any("work=10" in x for x in series), labels


def test_each_core_counts_row_is_the_go_vs_rust_tables_row_when_other_workloads_are_unpinned():
    # a plan that pins some comparisons (here N = 1..4 at 1 and 2 cores) and leaves others unpinned
    # (N = 5..24, x1.3 apart): the Go-vs-Rust table decides all 28 comparisons as one family, and the
    # cores table must show each core count's row as that table shows it (interval, level, verdict),
    # not re-decided in a family of the 8 pinned rows alone
    from bench_src.analysis import compare, simulate

    rng = np.random.default_rng(3)
    f = simulate.frame(simulate.go_rust_cells([1.012] * 8 + [1.3] * 20), 6, rng, simulate.Conditions(cv=0.01))
    f["cores"] = np.nan
    pin = f["n"] <= 8
    f.loc[pin, "cores"] = np.where(f.loc[pin, "n"] <= 4, 1, 2)
    f.loc[pin, "threads_requested"] = f.loc[pin, "cores"]
    f.loc[pin & (f["n"] > 4), "n"] -= 4
    main = compare.compare(f)
    t = cores.ratio_vs_cores(f)
    assert sorted(zip(t["n"], t["cores"])) == [(n, k) for n in range(1, 5) for k in (1, 2)]
    both = t.merge(main, left_on=["n", "cores"], right_on=["n", "threads_requested"], suffixes=("", "_main"))
    assert len(both) == 8
    for col in ("ratio", "ratio_ci_low", "ratio_ci_high", "ci_level", "p_adjusted"):
        assert np.allclose(both[col], both[f"{col}_main"]), col
    assert (both["verdict_kind"] == both["verdict_kind_main"]).all()
    assert (t.loc[t["cores"] == 2, "change_pairs"] == 6).all()
