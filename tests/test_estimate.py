"""The duration estimate: per-cell seconds from earlier runs, else the stated defaults; expected
samples per cell; what a resumed run still has to take."""
import pytest

from bench_src.plan import make_plan
from bench_src.plan import estimate as est


def plan(**kw):
    base = dict(workloads=["sleep"], ns=[10, 100], samples=3, warmup=1, params={"sleep": {"work": 1000}}, smoke=True)
    base.update(kw)
    return make_plan("quick", **base)


def test_defaults_per_workload_when_nothing_was_measured():
    p = plan()
    e = est.estimate(p)
    want = sum(4 * est.default_seconds(c) for c in p.cells())
    assert e.seconds == pytest.approx(want) and e.samples == 16 and e.cells == 4 and e.cells_from_history == 0
    assert "4 cells from default per-workload times" in e.basis and "an estimate" in str(e)


def test_measured_seconds_per_cell_win_and_are_capped_at_the_timeout():
    p = plan(timeout_s=5, cooldown_s=0.5)
    cells = p.cells()
    measured = {cells[0].id: 2.0, cells[1].id: 100.0}
    e = est.estimate(p, measured)
    want = 4 * (2.0 + 0.5) + 4 * (6.0 + 0.5) + sum(4 * (est.default_seconds(c) + 0.5) for c in cells[2:])
    assert e.seconds == pytest.approx(want) and e.cells_from_history == 2
    assert e.basis.startswith("2 of 4 cells timed from earlier runs")


def test_a_runs_own_times_outrank_earlier_runs_and_say_so():
    # after its pilot a run is timed by its own samples, wherever its results directory is
    p = plan()
    cells = p.cells()
    records = [{"cell_id": cells[0].id, "status": "ok", "harness_s": s} for s in (1.0, 3.0, 2.0)]
    records += [{"cell_id": cells[0].id, "status": "failed", "harness_s": 50.0},
                {"cell_id": cells[1].id, "status": "ok", "wall_ns": 4e9}]
    own = est.seconds_per_sample(records)
    assert own == {cells[0].id: 2.0, cells[1].id: 4.0}, "medians of the samples that succeeded"
    e = est.estimate(p, {cells[0].id: 9.0, cells[2].id: 1.0}, own_seconds=own)
    want = 4 * 2.0 + 4 * 4.0 + 4 * 1.0 + 4 * est.default_seconds(cells[3])
    assert e.seconds == pytest.approx(want) and e.cells_from_run == 2 and e.cells_from_history == 1
    assert e.basis.startswith("2 of 4 cells timed from this run's samples") and \
        "1 of 4 cells timed from earlier runs" in e.basis and "1 cell from default" in e.basis


def test_the_warm_ups_scale_the_default_times_to_this_machine():
    p = plan()
    cells = p.cells()
    warm = {c.id for c in p.warmup_cells()}
    assert est.speed_factor(p, []) is None, "no warm-up taken: nothing measured"
    records = [{"cell_id": c.id, "phase": "warmup", "status": "ok", "harness_s": 0.5 * est.default_seconds(c)}
               for c in cells if c.id in warm]
    # a failed warm-up, a measured sample and a cell of another plan are no part of the ratio
    records += [{"cell_id": cells[0].id, "phase": "warmup", "status": "timeout", "harness_s": 999.0},
                {"cell_id": cells[0].id, "phase": "measured", "status": "ok", "harness_s": 999.0},
                {"cell_id": "elsewhere", "phase": "warmup", "status": "ok", "harness_s": 999.0}]
    speed = est.speed_factor(p, records)
    assert speed.factor == pytest.approx(0.5) and speed.warmups == len(warm)
    e = est.estimate(p, speed=speed)
    assert e.seconds == pytest.approx(est.estimate(p).seconds * 0.5)
    assert f"x 0.50, what this machine's {len(warm)} warm-up samples took of their default times" in e.basis
    # a ratio of sums: the longer warm-up weighs more
    wide = plan(ns=[10, 1000000])
    slow, fast = sorted(wide.cells(), key=est.default_seconds)[-1], sorted(wide.cells(), key=est.default_seconds)[0]
    both = [{"cell_id": slow.id, "phase": "warmup", "status": "ok", "harness_s": 2 * est.default_seconds(slow)},
            {"cell_id": fast.id, "phase": "warmup", "status": "ok", "harness_s": 0.5 * est.default_seconds(fast)}]
    ds, df = est.default_seconds(slow), est.default_seconds(fast)
    assert ds > 2 * df
    want = (2 * ds + 0.5 * df) / (ds + df)
    assert est.speed_factor(wide, both).factor == pytest.approx(want)
    # cells timed by measurements are not scaled, and the basis names the factor only where it is used
    measured = {c.id: 1.0 for c in cells}
    assert est.estimate(p, measured, speed=speed).seconds == pytest.approx(16.0)
    assert "warm-up" not in est.estimate(p, measured, speed=speed).basis


def test_expected_samples_per_cell_and_samples_already_taken():
    p = plan()
    cells = p.cells()
    measured = {c.id: 1.0 for c in cells}
    assert est.estimate(p, measured, expected_samples=10).seconds == pytest.approx(40)
    assert est.estimate(p, measured, expected_samples={cells[0].id: 20}).seconds == pytest.approx(20 + 3 * 4)
    assert est.estimate(p, measured, done={cells[0].id: 4, cells[1].id: 1}).seconds == pytest.approx(0 + 3 + 8)


def test_with_every_sample_taken_the_estimate_is_0_s_for_0_samples_resting_on_nothing():
    """A finished run opened again: its basis named the cells' default times and the warm-ups'
    factor, for nothing to take."""
    p = plan(workloads=["sleep", "mysql"], ns=[10], params=None)
    speed = est.Speed(0.9, 2)
    e = est.estimate(p, done={c.id: 4 for c in p.cells()}, speed=speed)
    assert e.seconds == 0 and e.samples == 0 and e.server_start_s == 0
    assert e.basis == "nothing to take", e.basis
    assert str(e) == "estimated duration: about 0 s for 0 samples (an estimate, not a promise: nothing to take)"
    e.notes.append("samples per cell as the sequential rule expects them, from the stored pilot")
    assert e.basis == "nothing to take; samples per cell as the sequential rule expects them, from the stored pilot"


def test_database_servers_add_their_start_up_unless_external():
    p = plan(workloads=["mysql", "postgres"], ns=[10], params=None)
    assert est.estimate(p).server_start_s == est.SERVER_START_S["mysql"] + est.SERVER_START_S["postgres"]
    assert est.estimate(plan(workloads=["postgres"], ns=[10], params=None)).server_start_s == est.SERVER_START_S["postgres"]
    q = plan(workloads=["mysql"], ns=[10], params=None, dsn={"mysql": "mysql://u:p@h:3306/db"})
    assert est.estimate(q).server_start_s == 0


def test_durations_read_well():
    assert est.format_duration(42) == "42 s"
    assert est.format_duration(125) == "2 min 05 s"
    assert est.format_duration(3 * 3600 + 7 * 60) == "3 h 07 min"


def test_a_cell_without_a_parameter_is_timed_at_the_catalogues_default():
    """default_seconds reads a parameter the cell does not hold from the catalogue, not from a
    default of its own (sleep's work was taken as 0 where the catalogue says 50000)."""
    from bench_src.catalogue import WORKLOADS
    from bench_src.plan import Cell

    for name in ("sleep", "cpu_loops", "idle_tasks", "threads_vs_tasks"):
        w = WORKLOADS[name]
        for lang in ("go", "rust"):
            variant = w.default_variant(lang)
            bare = Cell(name, lang, variant, 1000, None, ())
            full = Cell(name, lang, variant, 1000, None, tuple(sorted(w.default_params(lang).items())))
            assert est.default_seconds(bare) == pytest.approx(est.default_seconds(full)), (name, lang)


def test_every_workload_of_the_catalogue_has_a_default_time():
    """A workload without one would be estimated at a fixed second a sample, whatever its N
    (docs/adding-a-workload.md, step 8)."""
    from bench_src.catalogue import WORKLOADS

    assert sorted(set(WORKLOADS) - set(est.DEFAULT_SAMPLE_S)) == []
    assert all(fixed > 0 and per_n > 0 for fixed, per_n in est.DEFAULT_SAMPLE_S.values())


def test_one_sample_reads_as_one():
    p = plan()
    e = est.estimate(p, done={c.id: 4 for c in p.cells()[1:]} | {p.cells()[0].id: 3})
    assert e.samples == 1 and " for 1 sample (an estimate" in str(e), str(e)


def test_spread_over_hosts_divides_the_measured_part_and_keeps_the_warm_ups_and_server_start():
    """Hosts share the measured blocks only: each still takes its warm-ups and starts its servers."""
    e = est.Estimate(seconds=12.88, samples=16, cells=4, cells_from_history=0)
    e.spread_over(2, warmup_s=10)
    assert e.seconds == pytest.approx(10 + (12.88 - 10) / 2) and e.seconds == pytest.approx(11.44)
    e = est.Estimate(seconds=100.0, samples=16, cells=4, cells_from_history=0, server_start_s=15.0)
    e.spread_over(4, warmup_s=10, warmups=2)
    assert e.seconds == pytest.approx(25 + 75 / 4) and e.samples == 16 + 2 * 3
    e = est.Estimate(seconds=8.0, samples=16, cells=4, cells_from_history=0)
    e.spread_over(2, warmup_s=10)
    assert e.seconds == pytest.approx(8.0), "no more than the whole run is fixed"


def test_a_cell_pinned_to_one_core_scales_its_per_n_part_by_the_fitted_cpus_over_its_cores():
    """The defaults were fitted on 2 CPUs: one core makes sleep's per-N part (2/1)^0.93 as long."""
    from bench_src.plan import Cell

    cell = Cell("sleep", "go", "waitgroup", 100_000, 1, (("kernel", "xorshift"), ("work", "0")), cores=1)
    want = 0.46 + 1.4e-6 * 2 ** 0.93 * 100_000
    assert want == pytest.approx(0.727, abs=5e-4)
    assert est.default_seconds(cell) == pytest.approx(want, rel=1e-12)


def test_sleeps_work_per_task_scales_with_the_cores_as_its_per_n_part_does():
    """The kernel's work is CPU work: on one core it takes (2/1)^0.93 as long as on the fitted two."""
    from bench_src.plan import Cell

    cell = Cell("sleep", "rust", "join-handles", 1000, 1, (("kernel", "xorshift"), ("work", "50000")), cores=1)
    want = 0.46 + (1.4e-6 + 6.1e-10 * 50_000) * 2 ** 0.93 * 1000
    assert est.default_seconds(cell) == pytest.approx(want, rel=1e-12)


def test_threads_vs_tasks_time_grows_with_its_iterations():
    """Each iteration is a 10 ms sleep and N wake-ups (fitted at 100 iterations): 1,000 at N = 1,000 take 13.5 s."""
    from bench_src.plan import Cell

    cell = Cell("threads_vs_tasks", "go", "goroutine", 1000, None, (("iterations", "1000"),))
    want = 0.1 + 0.01 * 1000 + 3.4e-4 * (1000 / 100) * 1000
    assert want == pytest.approx(13.5)
    assert est.default_seconds(cell) == pytest.approx(want, rel=1e-12)


def test_a_cell_with_more_samples_taken_than_expected_has_none_left_not_fewer_than_none():
    """A cell past its expected samples must not subtract from the other cells' time."""
    p = plan()
    cells = p.cells()
    e = est.estimate(p, {c.id: 1.0 for c in cells}, expected_samples=3, done={cells[0].id: 7})
    assert e.samples == 9 and e.seconds == pytest.approx(9.0)


def test_every_server_a_workload_starts_has_its_start_up_time():
    from bench_src.catalogue import WORKLOADS

    servers = {w.server for w in WORKLOADS.values() if w.server}
    assert servers and servers <= set(est.SERVER_START_S), servers - set(est.SERVER_START_S)
