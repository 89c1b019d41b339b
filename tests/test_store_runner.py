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
    # 3 samples can never call a difference: a smoke run, allowed on purpose
    return make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=3, warmup=1, params={"sleep": {"work": 10}},
                     smoke=True, **kw)


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
                            "params": {"sleep": {"work": 1000}}, "smoke": True})
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


def noisy_measure(spread, centres=None):
    """Workload times around a centre per language (default Go 1.0, Rust 2.0) with the given
    relative spread."""
    import numpy as np
    rng = np.random.default_rng(0)
    base = fake_measure()
    centres = centres or {"go": 1.0, "rust": 2.0}

    def measure(cell, *args, **kwargs):
        rec = base(cell, *args, **kwargs)
        rec["elapsed_ns"] = int(1e9 * centres[cell.lang] * (1 + spread * rng.standard_normal()))
        return rec

    measure.calls = base.calls
    return measure


def sequential_plan(ns=(10,), **kw):
    return make_plan("quick", workloads=["sleep"], ns=list(ns), params={"sleep": {"work": 10}}, warmup=0, **kw)


def per_sample_measure(done_before=()):
    """Times that depend only on the cell and on how many samples of it came before (so on the
    block), not on the order of calls: an interrupted and resumed run sees the same values."""
    import zlib

    import numpy as np
    counts = Counter(done_before)
    base = fake_measure()

    def measure(cell, *args, **kwargs):
        rec = base(cell, *args, **kwargs)
        k = counts[cell.id]
        counts[cell.id] += 1
        rng = np.random.default_rng(zlib.crc32(f"{cell.id}:{k}".encode()))
        rec["elapsed_ns"] = int(1e9 * (1 + 0.2 * rng.standard_normal()))
        return rec

    measure.calls = base.calls
    return measure


def test_sequential_rule_stops_decided_cells_and_respects_the_budget(tmp_path):
    # Go twice as fast: decided at the pilot look (8 pairs: p = 2/256 < 0.05 * 0.5), no extra block
    clear = sequential_plan(samples=8, max_samples=20)
    runner.run(clear, tmp_path / "clear", progress=False, measure_fn=noisy_measure(0.01), log=lambda *_: None)
    rows = ResultsStore(tmp_path / "clear").records()
    assert len(rows) == 2 * 8, "cells whose comparison is decided get no extra block"

    # equal centres with a 20% spread: neither different nor equivalent, so sampled to the budget
    loose = sequential_plan(samples=8, max_samples=14, looks=3)
    m = noisy_measure(0.2, {"go": 1.0, "rust": 1.0})
    runner.run(loose, tmp_path / "loose", progress=False, measure_fn=m, log=lambda *_: None)
    rows = ResultsStore(tmp_path / "loose").records()
    assert Counter(r["cell_id"] for r in rows) == {c.id: 14 for c in loose.cells()}, "the budget caps every cell"
    assert len({r["sample_id"] for r in rows}) == len(rows) and len({r["seq"] for r in rows}) == len(rows)
    extra = [r for r in rows if r["block"] >= 8]
    assert Counter(r["block"] for r in extra) == {b: 2 for b in range(8, 14)}, "both sides in every extra block"
    again = fake_measure()
    runner.run(loose, tmp_path / "loose", progress=False, measure_fn=again, log=lambda *_: None)
    assert again.calls == [], "a finished sequential run takes nothing more"


def test_an_interrupted_sequential_run_resumes_with_the_same_decisions(tmp_path):
    plan = sequential_plan(ns=[10, 100, 1000], samples=8, max_samples=14, looks=3)
    whole = tmp_path / "whole"
    runner.run(plan, whole, progress=False, measure_fn=per_sample_measure(), log=lambda *_: None)
    first = per_sample_measure()
    pilot = len(plan.schedule())

    def stopping(cell, *args, **kwargs):
        if len(first.calls) == pilot + 3:  # inside the extra blocks after the first look
            raise Stop()
        return first(cell, *args, **kwargs)

    cut = tmp_path / "cut"
    r1 = runner.run(plan, cut, progress=False, measure_fn=stopping, log=lambda *_: None)
    assert r1.interrupted and r1.taken == pilot + 3
    stored = [r["cell_id"] for r in ResultsStore(cut).records()]
    rest = per_sample_measure(stored)
    runner.run(plan, cut, progress=False, measure_fn=rest, log=lambda *_: None)
    assert rest.calls, "the resumed run carries on sampling"
    taken = {r["sample_id"]: r["seq"] for r in ResultsStore(whole).records()}
    resumed = {r["sample_id"]: r["seq"] for r in ResultsStore(cut).records()}
    assert len(taken) > pilot, "the plan must need extra blocks for this test to mean anything"
    assert resumed == taken, "the same samples, in the same order, as without the interruption"


def test_sequential_parameters_are_validated():
    with pytest.raises(ValueError, match=r"max_samples \(5\) must be >= samples \(10\)"):
        make_plan("quick", samples=10, max_samples=5)
    with pytest.raises(ValueError, match="looks .* only applies to sequential sampling"):
        make_plan("quick", looks=3)
    with pytest.raises(ValueError, match="adaptive_target .* replaced by the sequential rule"):
        make_plan("quick", adaptive_target=0.02)
    with pytest.raises(ValueError, match="smoke must be true or false"):
        make_plan("quick", smoke="maybe")
    plan = make_plan("quick", samples=10, max_samples=40)
    assert (plan.max_samples, plan.looks) == (40, 3)
    assert make_plan("quick", samples=10, max_samples=12, looks=5).looks == 3, "at most one look per block"
    assert make_plan("quick", samples=10, max_samples=10).max_samples == 0, "a budget of the pilot is the fixed design"
