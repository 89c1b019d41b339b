"""Samples are stored as taken, a run resumes after an interruption, failures are recorded."""
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from bench_src.run import runner
from bench_src.plan import make_plan
from bench_src.store import ResultsStore


def fake_measure(checksums=None, fail=None):
    """A stand-in for measure() with the same record shape, for fast bookkeeping tests."""
    calls = []

    def measure(cell, timeout_s, mem_limit_mb, env=None, **_):
        calls.append(cell.id)
        if fail and fail(cell, len(calls)):
            raise fail(cell, len(calls))
        ck = (checksums or {}).get(cell.lang, "00000000000000aa")
        return {"status": "ok", "reason": "", "checksum": ck, "elapsed_ns": 1000 + len(calls), "wall_ns": 2000,
                "user_ns": 1, "sys_ns": 1, "maxrss_kb": 100, "peak_rss_bytes": 102400, "tasks_ok": cell.n}

    measure.calls = calls
    return measure


def small_plan(**kw):
    return make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=3, warmup=1, **kw)


def test_every_planned_sample_is_stored_once(tmp_path):
    plan = small_plan()
    m = fake_measure()
    report = runner.run(plan, tmp_path / "r", progress=False, measure_fn=m, log=lambda *_: None)
    rows = ResultsStore(tmp_path / "r").records()
    assert report.taken == len(plan.schedule()) == len(rows) == 4 * 4
    assert Counter(r["phase"] for r in rows) == {"warmup": 4, "measured": 12}
    assert len({r["sample_id"] for r in rows}) == len(rows)
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["plan"]["seed"] == 1 and meta["plan_digest"] == plan.digest
    for key in ("cpu_model", "logical_cpus", "ram_bytes", "kernel"):
        assert key in meta["sessions"][0]["machine"]
    assert "go" in meta["sessions"][0]["toolchains"]


class Stop(KeyboardInterrupt):
    pass


def test_an_interrupted_run_resumes_without_loss_or_duplicates(tmp_path):
    plan = small_plan()
    first = fake_measure(fail=lambda cell, k: Stop() if k == 7 else None)
    r1 = runner.run(plan, tmp_path / "r", progress=False, measure_fn=first, log=lambda *_: None)
    assert r1.interrupted and r1.taken == 6
    second = fake_measure()
    r2 = runner.run(plan, tmp_path / "r", progress=False, measure_fn=second, log=lambda *_: None)
    assert r2.already_done == 6 and r2.taken == 10
    rows = ResultsStore(tmp_path / "r").records()
    assert sorted(r["sample_id"] for r in rows) == sorted(s.sample_id for s in plan.schedule())
    third = fake_measure()
    r3 = runner.run(plan, tmp_path / "r", progress=False, measure_fn=third, log=lambda *_: None)
    assert r3.taken == 0 and third.calls == []


def test_a_torn_last_line_is_dropped_and_retaken(tmp_path):
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    path = tmp_path / "r" / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # a write cut by kill -9
    again = fake_measure()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=again, log=lambda *_: None)
    assert len(again.calls) == 1
    assert len(ResultsStore(tmp_path / "r").records()) == len(plan.schedule())


def test_a_different_plan_in_the_same_directory_is_refused(tmp_path):
    runner.run(small_plan(), tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    with pytest.raises(ValueError, match="different plan"):
        runner.run(small_plan(seed=2), tmp_path / "r", progress=False, measure_fn=fake_measure())


def test_harness_errors_and_wrong_checksums_become_failed_samples(tmp_path):
    plan = small_plan()
    boom = fake_measure(checksums={"go": "0000000000000001", "rust": "0000000000000002"},
                        fail=lambda cell, k: RuntimeError("launcher vanished") if k == 3 else None)
    report = runner.run(plan, tmp_path / "r", progress=False, measure_fn=boom, log=lambda *_: None)
    assert report.taken == len(plan.schedule())
    rows = ResultsStore(tmp_path / "r").records()
    st = Counter(r["status"] for r in rows)
    assert st["harness_error"] == 1
    assert st["checksum_mismatch"] > 0
    mism = next(r for r in rows if r["status"] == "checksum_mismatch")
    assert "differs from" in mism["reason"]

    from bench_src import api
    from bench_src.store import equivalence
    df = api.load(tmp_path / "r")
    table = equivalence.check(df)
    assert not table["agree"].any()
    assert not df["valid"].any(), "samples of a disagreeing key must not enter the statistics"


@pytest.mark.slow
def test_kill_9_of_the_harness_then_rerun_gives_exactly_the_plan(built, tmp_path):
    """The real thing: a harness process killed with SIGKILL mid-run, then the same command again."""
    out = tmp_path / "r"
    plan_args = json.dumps({"workloads": ["sleep"], "ns": [10, 50], "samples": 4, "warmup": 1,
                            "params": {"sleep": {"work": 1000}}})
    cmd = [sys.executable, "-m", "bench_src", "run", "--profile", "quick", "--results-dir", str(out),
           "--plan", plan_args]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    samples = out / "samples.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline:
        if samples.exists() and len(samples.read_text().splitlines()) >= 5:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    taken_before = len(ResultsStore(out).records())
    assert 5 <= taken_before < 20
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    rows = ResultsStore(out).records()
    plan = make_plan("quick", **json.loads(plan_args))
    assert sorted(r["sample_id"] for r in rows) == sorted(s.sample_id for s in plan.schedule())
    per_cell = Counter((r["cell_id"], r["phase"]) for r in rows)
    assert set(per_cell.values()) <= {1, 4} and len(per_cell) == 2 * 2 * 2
    assert all(r["status"] == "ok" for r in rows), [r["reason"] for r in rows if r["status"] != "ok"]


def noisy_measure(spread):
    """Workload times around 1.0 (Go) and 2.0 (Rust) with the given relative spread."""
    import numpy as np
    rng = np.random.default_rng(0)
    base = fake_measure()

    def measure(cell, *args, **kwargs):
        rec = base(cell, *args, **kwargs)
        centre = 1.0 if cell.lang == "go" else 2.0
        rec["elapsed_ns"] = int(1e9 * centre * (1 + spread * rng.standard_normal()))
        return rec

    measure.calls = base.calls
    return measure


def test_adaptive_mode_stops_settled_cells_and_respects_the_budget(tmp_path):
    tight = make_plan("quick", workloads=["sleep"], ns=[10], samples=6, warmup=0, adaptive_target=0.05, max_samples=12)
    runner.run(tight, tmp_path / "tight", progress=False, measure_fn=noisy_measure(0.001), log=lambda *_: None)
    rows = ResultsStore(tmp_path / "tight").records()
    assert len(rows) == 2 * 6, "cells whose ratio CI is already narrow get no extra block"

    loose = make_plan("quick", workloads=["sleep"], ns=[10], samples=6, warmup=0, adaptive_target=0.001, max_samples=9)
    m = noisy_measure(0.2)
    runner.run(loose, tmp_path / "loose", progress=False, measure_fn=m, log=lambda *_: None)
    rows = ResultsStore(tmp_path / "loose").records()
    assert Counter(r["cell_id"] for r in rows) == {c.id: 9 for c in loose.cells()}, "the budget caps every cell"
    assert len({r["sample_id"] for r in rows}) == len(rows) and len({r["seq"] for r in rows}) == len(rows)
    again = fake_measure()
    runner.run(loose, tmp_path / "loose", progress=False, measure_fn=again, log=lambda *_: None)
    assert again.calls == [], "a finished adaptive run takes nothing more"


def test_adaptive_parameters_are_validated():
    with pytest.raises(ValueError, match="max_samples .* must be >= samples"):
        make_plan("quick", samples=10, adaptive_target=0.02, max_samples=5)
    with pytest.raises(ValueError, match="adaptive_target"):
        make_plan("quick", adaptive_target=2)
    with pytest.raises(ValueError, match="only applies in adaptive mode"):
        make_plan("quick", max_samples=50)
    assert make_plan("quick", samples=10, adaptive_target=0.02).max_samples == 40
