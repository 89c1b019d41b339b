"""Samples are stored as taken, a run resumes after an interruption, failures are recorded."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from collections import Counter

import pandas as pd
import pytest

from bench_src import paths
from bench_src.run import runner
from bench_src.run.interrupts import SigtermAsInterrupt, Terminated, held
from bench_src.run.keeper import SampleKeeper
from bench_src.run.progress import Progress
from bench_src.run.session_estimate import estimate_remaining
from bench_src.plan import make_plan
from bench_src.plan.model import Cell
from bench_src.store import ResultsStore
from bench_src.store.ledger import is_warmup_again
from report_data import alive_extra


def fake_measure(checksums=None, fail=None):
    """A stand-in for measure() with the same record shape, for fast bookkeeping tests.  Its peak RSS
    (8 MiB, equal on both sides) is far above the page size, so memory comparisons are decided as
    equivalent at the pilot (at 100 KiB a page is 4% of the value and no ratio can be shown within
    the 2% margin: the sequential rule would rightly sample on)."""
    calls = []

    def measure(cell, timeout_s, mem_limit_mb, env=None, **_):
        calls.append(cell.id)
        if fail and fail(cell, len(calls)):
            raise fail(cell, len(calls))
        ck = (checksums or {}).get(cell.lang, "00000000000000aa")
        return {"status": "ok", "reason": "", "checksum": ck, "elapsed_ns": 1000 + len(calls), "wall_ns": 2000,
                "user_ns": 1, "sys_ns": 1, "maxrss_kb": 8192, "peak_rss_bytes": 8 << 20, "tasks_ok": cell.n,
                "extra": alive_extra(cell)}

    measure.calls = calls
    return measure


def skipping_context(switch: dict, skips=lambda cell: cell.lang == "rust" and cell.n == 10):
    """A sample context that skips the cells `skips` picks (as a missing server would) while
    switch["on"]."""
    from bench_src.run.resources import SkipSample

    class Context(runner.NoContext):
        def before_sample(self, cell):
            if switch["on"] and skips(cell):
                raise SkipSample("no server here")
            return {}

    return Context


def kept_ids(results_dir) -> list[str]:
    """The sample ids the frame reads (one attempt per block), less the warm-ups a resumed session
    took again under names of its own."""
    return sorted(r["sample_id"] for r in ResultsStore(results_dir).latest_records() if not is_warmup_again(r))


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


def test_a_run_with_a_server_restart_note_and_one_without_have_the_same_columns(tmp_path):
    """`note` (what the harness did before a sample: a server restarted) is a column of every
    frame, empty where no sample has one: a run without a restart lacked it, so frames and exports
    of two runs of one plan differed in their columns."""
    from bench_src import api
    from bench_src.store import COLUMNS

    class Restarting(runner.NoContext):
        taken = 0

        def sample_note(self):
            self.taken += 1
            return "postgres was found stopped and restarted" if self.taken == 6 else None

    plan = small_plan()
    runner.run(plan, tmp_path / "plain", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    runner.run(plan, tmp_path / "noted", context=Restarting(), progress=False, measure_fn=fake_measure(),
               log=lambda *_: None)
    plain, noted = api.load(tmp_path / "plain"), api.load(tmp_path / "noted")
    assert "note" in COLUMNS and list(plain.columns) == list(noted.columns)
    assert plain["note"].isna().all()
    assert noted["note"].notna().sum() == 1 and noted["note"].dropna().iloc[0].startswith("postgres was found")


class Stop(KeyboardInterrupt):
    pass


def test_an_interrupted_run_resumes_without_loss_or_duplicates(tmp_path):
    plan = small_plan()
    first = fake_measure(fail=lambda cell, k: Stop() if k == 7 else None)
    r1 = runner.run(plan, tmp_path / "r", progress=False, measure_fn=first, log=lambda *_: None)
    assert r1.interrupted and r1.taken == 6
    second = fake_measure()
    r2 = runner.run(plan, tmp_path / "r", progress=False, measure_fn=second, log=lambda *_: None)
    # the resumed session starts cold: its 4 warm-ups again, then block 0 (2 of 4 taken before the
    # interruption) whole, so that its pairs come from one session, then blocks 1 and 2
    assert r2.already_done == 6 and r2.taken == 4 + 4 + 8 and r2.retaken == 2
    assert ("16 samples taken now (2 of them again: their blocks, left incomplete, were taken whole), "
            "4 kept from before, 20 planned") in str(r2)
    store = ResultsStore(tmp_path / "r")
    rows = store.records()
    session2 = [r for r in rows if r["session"] == 2]
    assert [r["phase"] for r in session2[:4]] == ["warmup"] * 4 and session2[4]["phase"] == "measured"
    assert all(r["sample_id"].endswith("@session:2") for r in session2[:4])
    kept = [r for r in store.latest_records() if r["phase"] == "measured"]
    assert sorted(r["sample_id"] for r in kept) == sorted(s.sample_id for s in plan.schedule() if s.phase == "measured")
    for block in range(3):  # every pair of the frame within one session
        assert len({r["session"] for r in kept if r["block"] == block}) == 1, block
    assert {r["session"] for r in kept if r["block"] == 0} == {2}
    frame = store.load()
    assert frame["sample_id"].is_unique and len(frame[frame["phase"] == "measured"]) == 12
    from bench_src import api
    from bench_src.report import method
    text = method.design_text(store.read_meta(), api.load(tmp_path / "r"))
    assert "took 2 sessions, and each resumed session took the warm-ups again" in text
    third = fake_measure()
    r3 = runner.run(plan, tmp_path / "r", progress=False, measure_fn=third, log=lambda *_: None)
    assert r3.taken == 0 and third.calls == []


def test_a_block_taken_again_and_cut_again_keeps_the_larger_attempt_and_the_closing_line_counts_it(tmp_path):
    """Session 1 stops after 3 of block 1's 4 samples; session 2 takes block 1 again and stops
    after 1: the store keeps session 1's larger attempt, and the closing line must count its 3
    samples as kept (before, it said 10 kept from before where the store kept 11)."""
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, log=lambda *_: None,
               measure_fn=fake_measure(fail=lambda cell, k: Stop() if k == 4 + 4 + 4 else None))
    second = runner.run(plan, tmp_path / "r", progress=False, log=lambda *_: None,
                        measure_fn=fake_measure(fail=lambda cell, k: Stop() if k == 4 + 2 else None))
    store = ResultsStore(tmp_path / "r")
    kept = store.latest_records()
    from_before = [r for r in kept if r["session"] == 1]
    assert len(from_before) == 11 and not any(r["session"] == 2 and r["phase"] == "measured" for r in kept)
    assert second.taken == 4 + 1 and "5 samples taken now (1 of them again: " in str(second)
    assert "11 kept from before" in str(second), str(second)
    third = runner.run(plan, tmp_path / "r", progress=False, log=lambda *_: None, measure_fn=fake_measure())
    # kept from before: session 1's warm-ups and block 0, and session 2's warm-ups taken again;
    # taken now: the warm-ups again, block 1 whole (its kept attempt was incomplete), block 2
    assert "12 samples taken now (3 of them again: " in str(third) and "12 kept from before, 24 planned" in str(third)
    assert sorted(r["sample_id"] for r in store.latest_records() if not is_warmup_again(r)) == \
        sorted(s.sample_id for s in plan.schedule())


def test_a_torn_last_line_is_dropped_and_retaken(tmp_path):
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    path = tmp_path / "r" / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # a write cut by kill -9
    again = fake_measure()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=again, log=lambda *_: None)
    # the last block lost a sample: the 4 warm-ups again, then that block whole
    assert len(again.calls) == 4 + 4
    latest = ResultsStore(tmp_path / "r").latest_records()
    assert sorted(r["sample_id"] for r in latest if not is_warmup_again(r)) == \
        sorted(s.sample_id for s in plan.schedule())


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


PLAN_ARGS = {"workloads": ["sleep"], "ns": [10, 50], "samples": 4, "warmup": 1, "params": {"sleep": {"work": 1000}}, "smoke": True}


def cli_run(out, plan_args=PLAN_ARGS):
    return [sys.executable, "-m", "bench_src", "run", "--profile", "quick", "--results-dir", str(out),
            "--plan", json.dumps(plan_args)]


def wait_for_samples(out, count, timeout=120):
    samples = out / "samples.jsonl"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if samples.exists() and len(samples.read_text().splitlines()) >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} samples after {timeout} s")


def sample_dirs_of(pid):
    """The /tmp/bench-sample-* directories whose lock names `pid`."""
    import glob
    import tempfile
    found = []
    for d in glob.glob(os.path.join(tempfile.gettempdir(), "bench-sample-*")):
        try:
            if open(os.path.join(d, ".lock")).read().split()[:1] == [str(pid)]:
                found.append(d)
        except (OSError, IndexError):
            pass
    return found


def assert_exactly_the_plan(out, plan_args=PLAN_ARGS):
    """The frame's samples are exactly the plan's, each block from one session, and a resumed
    session took its warm-ups again before its first measured sample."""
    store = ResultsStore(out)
    rows = [r for r in store.latest_records() if not is_warmup_again(r)]
    plan = make_plan("quick", **plan_args)
    assert sorted(r["sample_id"] for r in rows) == sorted(s.sample_id for s in plan.schedule())
    blocks = Counter((r["block"], r["session"]) for r in rows if r["phase"] == "measured")
    assert len(blocks) == len({b for b, _ in blocks}), f"a block of the frame spans sessions: {blocks}"
    for session in {r["session"] for r in store.records()} - {1}:
        phases = [r["phase"] for r in store.records() if r["session"] == session]
        if "measured" in phases:
            assert set(phases[:phases.index("measured")]) == {"warmup"} and phases.count("warmup") >= 4, phases
    per_cell = Counter((r["cell_id"], r["phase"]) for r in rows)
    assert set(per_cell.values()) <= {1, 4} and len(per_cell) == 2 * 2 * 2
    assert all(r["status"] == "ok" for r in rows), [r["reason"] for r in rows if r["status"] != "ok"]


@pytest.mark.slow
def test_kill_9_of_the_harness_then_rerun_gives_exactly_the_plan(built, tmp_path):
    """The real thing: a harness process killed with SIGKILL mid-run, then the same command again."""
    out = tmp_path / "r"
    proc = subprocess.Popen(cli_run(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for_samples(out, 5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    taken_before = len(ResultsStore(out).records())
    assert 5 <= taken_before < 20
    assert sample_dirs_of(proc.pid), "the killed harness left its sample directory (to be removed next time)"
    again = subprocess.run(cli_run(out), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert not sample_dirs_of(proc.pid), "the next run removes what the killed one left"
    assert_exactly_the_plan(out)
    sessions = json.loads((out / "meta.json").read_text())["sessions"]
    assert sessions[0]["interrupted"] is True and "killed" in sessions[0]["ended"]
    assert sessions[1]["ended"] == "finished"
    assert sessions[1]["taken"] == len(ResultsStore(out).records()) - taken_before


@pytest.mark.slow
def test_sigterm_ends_a_run_cleanly_and_it_resumes(built, tmp_path):
    out = tmp_path / "r"
    proc = subprocess.Popen(cli_run(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_samples(out, 3)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert "interrupted (SIGTERM)" in stdout
    session = json.loads((out / "meta.json").read_text())["sessions"][0]
    assert session["interrupted"] is True and session["ended"] == "SIGTERM" and "finished_at" in session
    assert not sample_dirs_of(proc.pid), "no /tmp/bench-sample-* directory is left after SIGTERM"
    assert subprocess.run(cli_run(out), capture_output=True, timeout=300).returncode == 0
    assert_exactly_the_plan(out)


@pytest.mark.slow
def test_a_normal_end_leaves_no_sample_directory(built, tmp_path):
    proc = subprocess.run(cli_run(tmp_path / "r", dict(PLAN_ARGS, samples=1, warmup=0)) + ["--no-progress"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    pid = json.loads((tmp_path / "r" / "meta.json").read_text())["sessions"][0]["pid"]
    assert not sample_dirs_of(pid)


@pytest.mark.slow
def test_two_identical_runs_started_together_the_second_fails_at_once(built, tmp_path):
    out = tmp_path / "r"
    slow = dict(PLAN_ARGS, cooldown_s=0.5)  # the first run lasts well beyond the second's start-up
    first = subprocess.Popen(cli_run(out, slow), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_samples(out, 1)
        second = subprocess.run(cli_run(out, slow), capture_output=True, text=True, timeout=120)
        assert first.poll() is None, "the first run must still be going for this test to mean anything"
        assert second.returncode == 2, second.stdout
        assert f"in use by PID {first.pid}" in second.stderr, second.stderr
    finally:
        assert first.wait(timeout=300) == 0
    assert_exactly_the_plan(out, slow)
    assert len(json.loads((out / "meta.json").read_text())["sessions"]) == 1


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


def test_a_resumed_sequential_run_whose_cell_can_no_longer_run_ends_at_the_budget(tmp_path):
    """Session 1 stops after the pilot; in session 2 Rust's cell is skipped (its server gone): its
    blocks bring no pairs, and the rule, counting pairs, gave it block after block without end
    (one such run reached block 15,155).  It now ends once the cell was given its budget."""
    plan = sequential_plan(samples=8, max_samples=14, looks=3)
    gone = {"on": False}
    Context = skipping_context(gone, lambda cell: cell.lang == "rust")

    first = noisy_measure(0.2, {"go": 1.0, "rust": 1.0})
    first_calls = first.calls
    runner.run(plan, tmp_path / "r", context=Context(), progress=False, log=lambda *_: None,
               measure_fn=lambda cell, *a, **kw: (_ for _ in ()).throw(Stop()) if len(first_calls) == 16
               else first(cell, *a, **kw))
    assert len(ResultsStore(tmp_path / "r").records()) == 16, "the pilot, then stopped"
    gone["on"] = True
    second = noisy_measure(0.2, {"go": 1.0, "rust": 1.0})
    lines = []

    def bounded(cell, *a, **kw):
        if len(second.calls) >= 100:  # the run took block after block: stopped here
            raise Stop()
        return second(cell, *a, **kw)

    report = runner.run(plan, tmp_path / "r", context=Context(), progress=False, measure_fn=bounded, log=lines.append)
    assert not report.interrupted, "the run took block after block"
    rows = ResultsStore(tmp_path / "r").records()
    assert Counter(r["cell_id"] for r in rows) == {c.id: 14 for c in plan.cells()}, "each cell given its budget"
    assert any("1 of them with fewer pairs" in line for line in lines), lines


def test_a_sequential_run_stopped_inside_a_pilot_block_resumes_and_once_finished_takes_nothing(tmp_path):
    """Its resume crashed after the pilot's look: the estimate read every attempt, the abandoned
    part of the block too, 7 values of a cell against 6.  And a finished run, run again, took every
    warm-up again each time."""
    plan = make_plan("quick", workloads=["sleep"], ns=[10, 100], params={"sleep": {"work": 10}}, warmup=1, samples=8,
                     max_samples=14, looks=3)
    base, calls = noisy_measure(0.2, {"go": 1.0, "rust": 1.0}), []

    def stopping(cell, *args, **kwargs):
        calls.append(cell.id)
        if len(calls) == 4 + 2 + 1:  # the 4 warm-ups, then inside block 0
            raise Stop()
        return base(cell, *args, **kwargs)

    assert runner.run(plan, tmp_path / "r", progress=False, measure_fn=stopping, log=lambda *_: None).interrupted
    report = runner.run(plan, tmp_path / "r", progress=False, measure_fn=noisy_measure(0.2, {"go": 1.0, "rust": 1.0}),
                        log=lambda *_: None)
    assert not report.interrupted and report.retaken == 2
    kept = [r for r in ResultsStore(tmp_path / "r").latest_records() if r["phase"] == "measured"]
    assert Counter(r["cell_id"] for r in kept) == {c.id: 14 for c in plan.cells()}
    assert all(len({r["session"] for r in kept if r["block"] == b}) == 1 for b in range(14))
    again = fake_measure()
    third = runner.run(plan, tmp_path / "r", progress=False, measure_fn=again, log=lambda *_: None)
    assert again.calls == [] and third.taken == 0, "a finished run takes nothing more, no warm-up either"


def test_a_sample_skipped_in_the_attempt_that_replaced_an_ok_one_is_taken_again(tmp_path):
    """Session 1 stops inside block 1 after its Rust N = 10 sample (ok); session 2 takes block 1
    again whole but must skip that cell; session 3 can run it.  The ok sample of the abandoned
    attempt counted as done, so the kept attempt's skip stayed in the frame for good."""
    from bench_src import api
    plan = small_plan()
    skip = {"on": False}
    Context = skipping_context(skip)

    for k in range(4 + 4 + 1, 4 + 8 + 1):  # stopped at each sample of block 1 in turn
        out = tmp_path / f"r{k}"
        first = fake_measure(fail=lambda cell, n, k=k: Stop() if n == k else None)
        runner.run(plan, out, context=Context(), progress=False, measure_fn=first, log=lambda *_: None)
        skip["on"] = True
        runner.run(plan, out, context=Context(), progress=False, measure_fn=fake_measure(), log=lambda *_: None)
        skip["on"] = False
        runner.run(plan, out, context=Context(), progress=False, measure_fn=fake_measure(), log=lambda *_: None)
        measured = api.load(out).query("phase == 'measured'")
        assert set(measured["status"]) == {"ok"} and len(measured) == 12, (k, measured["status"].tolist())


@pytest.mark.parametrize("renamed", [False, True])
def test_a_skipped_sample_taken_again_alone_replaces_the_skip(tmp_path, renamed):
    """A cell that could not run in one session (its server missing) and can in the next: its
    samples, taken again alone, join their blocks' attempts (before, the block's larger attempt of
    the first session was kept, the new samples dropped, and the cell stayed skipped for good).
    The directory renamed between the sessions keeps its run's name (before, the new samples
    carried the new name, and were paired with nothing: every comparison of that cell had 0 pairs)."""
    plan = small_plan()
    skip_rust_10 = {"on": True}
    Context = skipping_context(skip_rust_10)

    runner.run(plan, tmp_path / "r", context=Context(), progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    assert Counter(r["status"] for r in ResultsStore(tmp_path / "r").records()) == {"ok": 12, "skipped": 4}
    skip_rust_10["on"] = False
    out = tmp_path / "r"
    if renamed:
        out = (tmp_path / "r").rename(tmp_path / "moved")
    m = fake_measure()
    runner.run(plan, out, context=Context(), progress=False, measure_fn=m, log=lambda *_: None)
    # its skipped warm-up, the 3 others again, then the 3 skipped measured samples alone
    rust_10 = next(c.id for c in plan.cells() if c.lang == "rust" and c.n == 10)
    assert len(m.calls) == 1 + 3 + 3 and Counter(m.calls)[rust_10] == 4
    from bench_src import api
    from bench_src.analysis import compare
    df = api.load(out)
    assert set(df["status"]) == {"ok"} and len(df[df["phase"] == "measured"]) == 12
    assert set(df["run_id"]) == {"r"}, "the run keeps the name it was created with"
    table = compare.compare(df)
    assert list(table["pairs"]) == [3, 3], table[["n", "pairs"]]
    third = fake_measure()
    runner.run(plan, out, context=Context(), progress=False, measure_fn=third, log=lambda *_: None)
    assert third.calls == []


# --- exclusive use of a results directory -----------------------------------------------------------
def test_a_second_run_into_a_locked_directory_fails_at_once_naming_the_holder(tmp_path):
    from bench_src.store import DirLock, LockedError
    plan = small_plan()
    holder = DirLock(tmp_path / "r" / ".lock", "test").acquire()
    m = fake_measure()
    with pytest.raises(LockedError, match=rf"in use by PID {os.getpid()}"):
        runner.run(plan, tmp_path / "r", progress=False, measure_fn=m, log=lambda *_: None)
    assert m.calls == [] and not (tmp_path / "r" / "samples.jsonl").exists()
    assert not (tmp_path / "r" / "meta.json").exists(), "nothing is written before the lock is held"
    from bench_src import api
    with pytest.raises(ValueError, match=rf"in use by PID {os.getpid()}"):
        api.results_dir_for(plan, tmp_path / "r")
    holder.release()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=m, log=lambda *_: None)
    assert len(m.calls) == len(plan.schedule())


def test_a_session_that_fails_right_after_opening_its_directory_leaves_it_unlocked(tmp_path, monkeypatch):
    """An error between the store's opening and the samples (its notes, the CPU clock) closes the
    store: the same process can run into the directory again (before, its lock stayed held)."""
    plan = small_plan()

    def failing(*_, **__):
        raise RuntimeError("the notes failed")

    monkeypatch.setattr(runner, "threads_note", failing)
    with pytest.raises(RuntimeError, match="the notes failed"):
        runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    monkeypatch.undo()
    report = runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    assert report.taken == len(plan.schedule())


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / ".lock").write_text(f"{dead.pid} 2020-01-01T00:00:00+00:00\n")
    plan = small_plan()
    report = runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    assert report.taken == len(plan.schedule())


def test_results_are_private_to_their_owner(tmp_path):
    runner.run(small_plan(), tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    assert (tmp_path / "r").stat().st_mode & 0o777 == 0o700
    for name in ("samples.jsonl", "meta.json"):
        assert (tmp_path / "r" / name).stat().st_mode & 0o777 == 0o600, name


def test_results_dir_problems_are_reported_before_any_build(tmp_path, monkeypatch, capsys):
    from bench_src.__main__ import main
    from bench_src.run import build
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    (tmp_path / "file").write_text("x")
    for path, words in ((tmp_path / "file", "is a file"), (tmp_path / "file" / "sub", "is a file"),
                        ("/proc/bench-results", "not writable")):
        assert main(["run", "--results-dir", str(path), "--plan", "{workloads: [sleep], ns: [10]}"]) == 2
        assert words in capsys.readouterr().err


# --- loud corruption ----------------------------------------------------------------------------
@pytest.mark.parametrize("garbage", ["this is not json", "{}", "null", '{"sample_id": "x"}', "[1, 2]"])
def test_a_bad_line_is_reported_and_stops_a_resume_until_repaired(tmp_path, garbage):
    from bench_src import api
    from bench_src.store import CorruptRecords, CorruptRecordsWarning
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    path = tmp_path / "r" / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lost = json.loads(lines[5])["sample_id"]
    lines[5] = garbage + "\n"  # line 6: a sample overwritten by garbage
    lines.insert(9, garbage + "\n")  # line 10: an extra bad line
    path.write_text("".join(lines))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = api.load(tmp_path / "r")
    assert any(issubclass(w.category, CorruptRecordsWarning) and re.search(r"line 6: .*line 10: ", str(w.message))
               for w in caught)
    assert len(df) == len(plan.schedule()) - 1 and df.attrs["bad_lines"] == [6, 10]
    # the overwritten sample is missing, unless its garbage still names a sample (a damaged record)
    a_record = garbage.startswith('{"sample_id"')
    assert df.attrs["missing_samples"] == (0 if a_record else 1)
    assert any("1 are missing" in str(w.message) for w in caught) != a_record
    m = fake_measure()
    with pytest.raises(CorruptRecords, match=r"2 unreadable or incomplete line\(s\): line 6: .*repair=True"):
        runner.run(plan, tmp_path / "r", progress=False, measure_fn=m, log=lambda *_: None)
    assert m.calls == [] and path.read_text().count(garbage) == 2, "nothing is taken or changed"
    report = runner.run(plan, tmp_path / "r", progress=False, measure_fn=m, log=lambda *_: None, repair=True)
    # the lost sample was block 0's second: the 4 warm-ups again, then block 0 whole
    assert report.taken == 4 + 4 and len(m.calls) == 8
    assert kept_ids(tmp_path / "r") == sorted(s.sample_id for s in plan.schedule())
    assert lost in {r["sample_id"] for r in ResultsStore(tmp_path / "r").records()}
    rejected = [json.loads(x) for x in (tmp_path / "r" / "samples.rejected.jsonl").read_text().splitlines()]
    assert [r["line"] for r in rejected] == [6, 10] and all(r["text"] == garbage for r in rejected)
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["repairs"][0]["lines"] == [6, 10] and meta["repairs"][0]["moved_to"] == "samples.rejected.jsonl"


@pytest.mark.parametrize("loss, kept", [("deleted", 0), ("emptied", 0), ("halved", 8)])
def test_samples_missing_from_samples_jsonl_are_named_and_stop_a_resume_until_repaired(
        tmp_path, monkeypatch, capsys, loss, kept):
    from bench_src.__main__ import main
    from bench_src.report import full
    from bench_src.run import build
    from bench_src.store import CorruptRecordsWarning, MissingSamples
    plan, out = small_plan(), tmp_path / "r"
    runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    path = out / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    if loss == "deleted":
        path.unlink()
    else:
        path.write_text("".join(lines[:kept]))
    missing = 16 - kept
    said = (f"{path} holds {kept} of the 16 samples that meta.json records as taken: {missing} are missing (the "
            "file was deleted, emptied or cut)")
    with pytest.warns(CorruptRecordsWarning, match=re.escape(said)):
        df = ResultsStore(out).load()
    assert df.attrs["missing_samples"] == missing
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    assert main(["report", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"warning: {said}") and err.count("\n") == 1, err
    m = fake_measure()
    for attempt in (lambda: runner.run(plan, out, progress=False, measure_fn=m, log=lambda *_: None),
                    lambda: ResultsStore(out).check_plan(plan)):
        with pytest.raises(MissingSamples) as refused:
            attempt()
        assert str(refused.value).startswith(said + "; nothing was taken") and "--repair" in str(refused.value)
    small = json.dumps({"workloads": ["sleep"], "ns": [10, 100], "samples": 3, "warmup": 1,
                        "params": {"sleep": {"work": 10}}, "smoke": True})  # small_plan() as --plan
    assert main(["run", "--results-dir", str(out), "--plan", small]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {said}; nothing was taken") and err.count("\n") == 1, err
    assert m.calls == [] and len(ResultsStore(out).records()) == kept, "nothing is taken or changed"

    report = runner.run(plan, out, progress=False, measure_fn=m, log=lambda *_: None, repair=True)
    # with samples kept, the session resumes the run: its 4 warm-ups again first
    assert report.taken == missing + (4 if kept else 0) == len(m.calls)
    assert kept_ids(out) == sorted(s.sample_id for s in plan.schedule())
    meta = json.loads((out / "meta.json").read_text())
    lost = meta["repairs"][-1]
    assert lost["lost_samples"] == missing and lost["taken_recorded"] == 16 and lost["found"] == kept
    again = fake_measure()
    assert runner.run(plan, out, progress=False, measure_fn=again, log=lambda *_: None).taken == 0
    with pytest.warns(CorruptRecordsWarning, match=f"{missing} samples recorded as taken by an earlier session are "
                                                   f"missing from {re.escape(str(path))}; their loss is recorded"):
        full.analyse(out)


def test_a_line_that_is_no_sample_is_not_counted_as_one_and_hides_no_lost_sample(tmp_path, capsys):
    """One sample deleted and a line of garbage added: the garbage was counted as a sample found, so
    the file "held" all 16, the loss was neither said nor recorded, before a repair or after one had
    moved the garbage to samples.rejected.jsonl.  A damaged record (a sample whose N is text) still
    stands for its sample: moved aside, it is there, not missing."""
    from bench_src.__main__ import main
    from bench_src.store import MissingSamples, MissingSamplesWarning
    plan, out = small_plan(), tmp_path / "r"
    runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    path = out / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    damaged = json.loads(lines[7])
    damaged["n"] = "abc"
    lines[7] = json.dumps(damaged) + "\n"
    path.write_text("".join(lines[:5] + lines[6:]) + "not a sample\n")
    said = (f"{path} holds 14 of the 16 samples that meta.json records as taken (1 more there but unreadable, in "
            "it or in samples.rejected.jsonl): 1 are missing (the file was deleted, emptied or cut); 1 line(s) of it "
            "or of samples.rejected.jsonl that are no sample record are not counted")
    for repaired in (False, True):  # before a repair and after it moved both lines aside
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            df = ResultsStore(out).load()
        said_missing = [str(w.message) for w in caught if issubclass(w.category, MissingSamplesWarning)]
        assert len(said_missing) == 1 and said_missing[0].startswith(said), said_missing
        assert df.attrs["missing_samples"] == 1 and len(df) == 14
        if not repaired:
            assert main(["repair", str(out)]) == 0 and "2 line(s) moved" in capsys.readouterr().out
    with pytest.raises(MissingSamples, match=re.escape(said)):
        ResultsStore(out).check_plan(plan)
    m = fake_measure()
    runner.run(plan, out, progress=False, measure_fn=m, log=lambda *_: None, repair=True)
    assert kept_ids(out) == sorted(s.sample_id for s in plan.schedule())
    lost = json.loads((out / "meta.json").read_text())["repairs"][-1]
    assert (lost["lost_samples"], lost["found"], lost["unreadable"], lost["not_samples"]) == (1, 14, 1, 1)


def test_a_resume_after_a_kill_is_not_taken_for_lost_samples(tmp_path, monkeypatch):
    """A killed session records no `taken` (its end is never written) and may leave a torn last line;
    a session's count is written only after every sample it counts is stored."""
    plan, out = small_plan(), tmp_path / "r"
    first = fake_measure(fail=lambda cell, k: KeyboardInterrupt() if k == 5 else None)
    runner.run(plan, out, progress=False, measure_fn=first, log=lambda *_: None)  # taken: 4, recorded
    killed = fake_measure(fail=lambda cell, k: KeyboardInterrupt() if k == 7 else None)
    monkeypatch.setattr(ResultsStore, "end_session", lambda self, **fields: None)  # a kill: no end recorded
    runner.run(plan, out, progress=False, measure_fn=killed, log=lambda *_: None)
    monkeypatch.undo()
    path = out / "samples.jsonl"
    text = path.read_text()
    path.write_text(text + text.splitlines(keepends=True)[-1][:40])  # the torn line of the kill
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ResultsStore(out).load()
        report = runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    # 10 done: 4 warm-ups, the killed session's 4 warm-ups again and block 0's first 2; this session:
    # the 4 warm-ups again, block 0 whole, blocks 1 and 2
    assert report.already_done == 10 and report.taken == 4 + 4 + 8
    assert kept_ids(out) == sorted(s.sample_id for s in plan.schedule())
    assert "repairs" not in json.loads((out / "meta.json").read_text())


def test_repair_from_the_cli_and_a_clean_file_needs_none(tmp_path, capsys):
    from bench_src.__main__ import main
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    assert main(["repair", str(tmp_path / "r")]) == 0 and "nothing to repair" in capsys.readouterr().out
    with open(tmp_path / "r" / "samples.jsonl", "a") as f:
        f.write("garbage\n")
    assert main(["repair", str(tmp_path / "r")]) == 0 and "1 line(s) moved" in capsys.readouterr().out
    assert len(ResultsStore(tmp_path / "r").scan().bad) == 0


def test_a_path_without_meta_json_is_refused_before_anything_is_written(tmp_path):
    from bench_src import api
    from bench_src.store import NotAResultsDirectory
    for call in (api.load, api.report, lambda d: api.standard_figures(None, d), api.repair):
        with pytest.raises(NotAResultsDirectory, match="/missing' does not exist; run notebooks/run.ipynb"):
            call(tmp_path / "missing")
        assert not (tmp_path / "missing").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(NotAResultsDirectory, match="is not a results directory: it is empty; run notebooks/run.ipynb"):
        api.load(tmp_path / "empty")
    assert list((tmp_path / "empty").iterdir()) == []
    # one directory or a list: the same words, the report's (store.directory.require_run)
    for d in (tmp_path / "missing", tmp_path / "empty"):
        with pytest.raises(NotAResultsDirectory) as one:
            api.load(d)
        with pytest.raises(NotAResultsDirectory) as several:
            api.load([d])
        assert str(one.value) == str(several.value), (one.value, several.value)


# --- samples tied to binaries, sessions -------------------------------------------------------------
def test_resuming_with_other_binaries_is_refused_or_becomes_a_new_session(tmp_path, monkeypatch):
    from bench_src.run import build
    from bench_src.store.results import BinariesChanged
    plan = small_plan()
    first = fake_measure(fail=lambda cell, k: Stop() if k == 5 else None)
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "gobench": "g1", "rustbench": "r1"})
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=first, log=lambda *_: None)
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "gobench": "g2", "rustbench": "r1"})
    m = fake_measure()
    with pytest.raises(BinariesChanged, match=r"gobench: g1 then, g2 now.*new_binaries=True"):
        runner.run(plan, tmp_path / "r", progress=False, measure_fn=m, log=lambda *_: None)
    assert m.calls == []
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=m, log=lambda *_: None, new_binaries=True)
    rows = ResultsStore(tmp_path / "r").records()
    # session 2 takes the 4 warm-ups again (the new binaries start cold) and every measured sample
    assert Counter(r["session"] for r in rows) == {1: 4, 2: 4 + len(plan.schedule()) - 4}
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert [s["session"] for s in meta["sessions"]] == [1, 2], "the refused attempt opened no session"
    assert meta["sessions"][1]["binaries_changed"] == {"gobench": {"before": "g1", "now": "g2"}}
    assert meta["sessions"][1]["binaries"]["gobench"] == "g2"
    from bench_src import api
    assert set(api.load(tmp_path / "r")["session"]) == {1, 2}


def test_the_programs_checked_for_a_change_are_named_as_paths_names_them(tmp_path, monkeypatch):
    """A resume compares the programs' digests under the names bench_src/paths.py gives them: a
    renamed program is still checked."""
    from bench_src.run import build
    from bench_src.store.results import BinariesChanged
    program = paths.program
    monkeypatch.setattr(paths, "program", lambda lang: program(lang).with_name(f"{lang}-renamed"))
    plan = small_plan()
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "go-renamed": "g1", "rust-renamed": "r1"})
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "go-renamed": "g2", "rust-renamed": "r1"})
    with pytest.raises(BinariesChanged, match=r"go-renamed: g1 then, g2 now"):
        runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)


def test_after_a_repair_the_binaries_of_samples_no_session_records_are_unknown_not_accepted(tmp_path, monkeypatch):
    """A repair rebuilt an unreadable meta.json without the lost sessions' binaries: a rebuilt program
    then resumed silently, and samples of two gobench binaries were kept together."""
    from bench_src.run import build
    from bench_src.store.results import BinariesChanged
    plan, out = small_plan(), tmp_path / "r"
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "gobench": "g1", "rustbench": "r1"})
    runner.run(plan, out, progress=False, measure_fn=fake_measure(fail=lambda cell, k: Stop() if k == 7 else None),
               log=lambda *_: None)
    (out / "meta.json").write_text('{"oops')
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "gobench": "g2", "rustbench": "r1"})
    m = fake_measure()
    with pytest.raises(BinariesChanged) as err:
        runner.run(plan, out, progress=False, measure_fn=m, log=lambda *_: None, repair=True)
    assert str(err.value) == (
        f"{out} holds samples whose binaries are unknown: no session records the binaries that took them (the record "
        "of session 1 was lost with an unreadable meta.json), so whether the programs now are those cannot be told; "
        "nothing was taken. Programs that may differ must not mix with earlier samples: choose another results_dir, "
        "or resume with new_binaries=True (CLI: --new-binaries) to continue in a new session whose samples carry its "
        "number in the `session` column (meta.json records the binaries before it as unknown)")
    assert m.calls == [] and (out / "meta.json").read_text() == '{"oops' and not (out / "meta.json.corrupt").exists(), \
        "a refused repair leaves the directory as it was"
    runner.run(plan, out, progress=False, measure_fn=m, log=lambda *_: None, repair=True, new_binaries=True)
    meta = json.loads((out / "meta.json").read_text())
    assert (out / "meta.json.corrupt").read_text() == '{"oops'
    assert meta["sessions"][1]["binaries_changed"] == {"benchlaunch": {"before": "unknown", "now": "l1"},
                                                       "gobench": {"before": "unknown", "now": "g2"},
                                                       "rustbench": {"before": "unknown", "now": "r1"}}
    assert Counter(r["session"] for r in ResultsStore(out).records())[2] > 0
    # from now on the binaries are known again: another rebuild is refused as any is
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "gobench": "g3", "rustbench": "r1"})
    with pytest.raises(BinariesChanged, match=r"gobench: g2 then, g3 now"):
        runner.run(plan, out, progress=False, measure_fn=m, log=lambda *_: None)


@pytest.mark.parametrize("damage", ["cut short", "bad plan field"])
def test_a_repair_keeps_the_session_records_the_unreadable_meta_json_still_holds(tmp_path, monkeypatch, damage):
    from bench_src.run import build
    from bench_src.store.results import BinariesChanged
    plan, out = small_plan(), tmp_path / "r"
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "gobench": "g1", "rustbench": "r1"})
    runner.run(plan, out, progress=False, measure_fn=fake_measure(fail=lambda cell, k: Stop() if k == 7 else None),
               log=lambda *_: None)
    text = (out / "meta.json").read_text()
    first = json.loads(text)["sessions"][0]
    if damage == "cut short":  # the end of the file lost: the sessions array's closing bracket and after
        (out / "meta.json").write_text(text[:text.rindex("]")])
    else:
        meta = json.loads(text)
        meta["plan"]["samples"] = "lots"
        (out / "meta.json").write_text(json.dumps(meta, indent=2))
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "gobench": "g2", "rustbench": "r1"})
    with pytest.raises(BinariesChanged, match=r"gobench: g1 then, g2 now"):
        runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None, repair=True)
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "gobench": "g1", "rustbench": "r1"})
    runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None, repair=True)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["rebuilt"]["recovered_sessions"] == [1]
    assert meta["sessions"][0] == first and "binaries_changed" not in meta["sessions"][1]
    assert kept_ids(out) == sorted(s.sample_id for s in plan.schedule())


def test_a_program_replaced_during_a_session_stops_it_before_its_next_sample(tmp_path, monkeypatch):
    """A rebuild during a run went unseen: the session recorded one digest and the later samples
    were taken by another program."""
    from bench_src.run import build
    from bench_src.store.results import BinariesChanged
    bins = tmp_path / "bin"
    bins.mkdir()
    for name in ("benchlaunch", "gobench", "rustbench"):
        (bins / name).write_bytes(b"v1")
    monkeypatch.setattr(paths, "launcher", lambda: bins / "benchlaunch")
    monkeypatch.setattr(paths, "program", lambda lang: bins / {"go": "gobench", "rust": "rustbench"}[lang])
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "gobench": "g1", "rustbench": "r1"})
    monkeypatch.setattr(build, "evict_from_page_cache", lambda paths_: [])

    def replace_rust(cell, k):
        if k == 6:  # a `make build` in another terminal: a new file at the same path
            (bins / "rustbench.new").write_bytes(b"v2")
            os.replace(bins / "rustbench.new", bins / "rustbench")

    m = fake_measure(fail=replace_rust)
    with pytest.raises(BinariesChanged, match=r"rustbench changed during this session"):
        runner.run(small_plan(), tmp_path / "r", progress=False, measure_fn=m, log=lambda *_: None)
    assert len(m.calls) == 6 and len(ResultsStore(tmp_path / "r").records()) == 6, "the 6th, taken as it changed, is kept"
    session = json.loads((tmp_path / "r" / "meta.json").read_text())["sessions"][0]
    assert session["interrupted"] is True and "changed during this session" in session["ended"]


def test_a_source_edit_that_leaves_the_binaries_alone_is_recorded_and_said_not_refused(tmp_path, monkeypatch):
    """A comment added to a Go file changes the source digest, not the binary built with -trimpath:
    the same binaries take every sample, so the run continues, and the session and the log say so."""
    from bench_src.run import build
    plan = small_plan()
    monkeypatch.setattr(build, "binary_digests", lambda: {"benchlaunch": "l1", "gobench": "g1", "rustbench": "r1"})
    monkeypatch.setattr(build, "source_digests", lambda: {"benchlaunch": "sl", "gobench": "sg1", "rustbench": "sr"})
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(fail=lambda cell, k: Stop() if k == 5
                                                                              else None), log=lambda *_: None)
    monkeypatch.setattr(build, "source_digests", lambda: {"benchlaunch": "sl", "gobench": "sg2", "rustbench": "sr"})
    lines = []
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lines.append)
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["sessions"][1]["sources_changed"] == {"gobench": {"before": "sg1", "now": "sg2"}}
    assert "sources_changed" not in meta["sessions"][0] and "binaries_changed" not in meta["sessions"][1]
    assert any(ln.startswith("note: the source of gobench changed since the last session and its binary did not")
               for ln in lines), lines
    assert kept_ids(tmp_path / "r") == sorted(s.sample_id for s in plan.schedule())


def test_the_default_directory_keeps_dirty(monkeypatch):
    from bench_src.run import machine
    monkeypatch.setattr(machine, "git_commit", lambda: "0123456789abcdef-dirty")
    assert machine.default_results_dir(small_plan()).name.startswith("quick-0123456-dirty-")
    monkeypatch.setattr(machine, "git_commit", lambda: "0123456789abcdef")
    assert machine.default_results_dir(small_plan()).name.startswith("quick-0123456-")
    assert "dirty" not in machine.default_results_dir(small_plan()).name


def test_reading_the_commit_and_whether_the_tree_is_dirty_writes_nothing_in_the_checkout(tmp_path, monkeypatch):
    """`git status` refreshes the index's cached file times when a tracked file was touched; the
    harness reads the state without: the checkout's .git is the user's, outside the results."""
    import subprocess

    from bench_src.run import machine
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-q", "--allow-empty", "-m", "empty"]):
        subprocess.run(git + cmd, cwd=repo, check=True)
    (repo / "a.txt").write_text("a\n")
    subprocess.run(git + ["add", "a.txt"], cwd=repo, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "a"], cwd=repo, check=True)
    os.utime(repo / "a.txt", (1_000_000_000, 1_000_000_000))  # same content, other time: the index is stale
    index = repo / ".git" / "index"
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    monkeypatch.setattr(machine, "ROOT", repo)
    assert machine.git_commit() == subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                                                  text=True, check=True).stdout.strip()
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
    (repo / "a.txt").write_text("b\n")
    assert machine.git_commit().endswith("-dirty")
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before


def test_a_session_whose_process_was_killed_is_marked_on_the_next_open(tmp_path):
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    meta_path = tmp_path / "r" / "meta.json"
    meta = json.loads(meta_path.read_text())
    for key in ("finished_at", "interrupted", "ended"):
        meta["sessions"][0].pop(key)  # what a kill -9 leaves
    meta_path.write_text(json.dumps(meta))
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    first = json.loads(meta_path.read_text())["sessions"][0]
    assert first["interrupted"] is True and "killed" in first["ended"]


# --- estimate and progress ---------------------------------------------------------------------------
def test_estimate_progress_lines_and_the_real_duration(tmp_path, capsys):
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=True, measure_fn=fake_measure(), log=lambda *_: None)
    err = capsys.readouterr().err.splitlines()
    # the warm-ups come first: they time this machine for the estimate printed after them
    assert err[0].startswith("warming up first: 4 warm-up samples"), err
    assert err[1].startswith("[r] 1/16 samples (6%), elapsed ") and "ETA" in err[1] and "warmup" in err[1]
    assert err[2].startswith("estimated duration: about") and "an estimate" in err[2], err
    # the session's samples, the warm-ups it took before the estimate included (as its seconds include
    # their time): "for 12 samples" was not what the closing line said it took
    assert "for 16 samples" in err[2] and "the 4 warm-up samples)" in err[2], err[2]
    assert err[-2].startswith("[r] 16/16 samples (100%)") and err[-2].endswith("done")
    assert "ETA" not in err[-2], "the last line has nothing left to estimate"
    assert err[-1].startswith("took ") and "; estimated " in err[-1]
    session = json.loads((tmp_path / "r" / "meta.json").read_text())["sessions"][0]
    assert session["estimate_s"] > 0 and "default per-workload times" in session["estimate_basis"]
    assert "what this machine's 4 warm-up samples took of their default times" in session["estimate_basis"]
    assert "spent before the estimate" in session["estimate_basis"]
    assert session["duration_s"] >= 0 and session["ended"] == "finished"
    assert all(isinstance(r["harness_s"], float) for r in ResultsStore(tmp_path / "r").records())
    logged = []  # without progress lines the estimate and the duration go to the log
    runner.run(small_plan(seed=2), tmp_path / "q", progress=False, measure_fn=fake_measure(), log=logged.append)
    logged = own_lines(logged)
    assert logged[0].startswith("warming up first") and logged[1].startswith("estimated duration: about")
    assert logged[-1].startswith("took ")
    logged = []  # without warm-ups the estimate comes first, from the default times as fitted
    cold = make_plan("quick", workloads=["sleep"], ns=[10], samples=3, warmup=0, smoke=True)
    runner.run(cold, tmp_path / "w", progress=False, measure_fn=fake_measure(),
               log=logged.append)
    logged = own_lines(logged)
    assert logged[0].startswith("estimated duration: about") and "warm-up" not in logged[0], logged[0]
    assert capsys.readouterr().err == ""


def test_a_harness_error_message_holding_a_password_is_masked(tmp_path):
    plan = make_plan("quick", workloads=["mysql"], ns=[10], samples=1, warmup=0, smoke=True,
                     dsn={"mysql": "mysql://u:very-secret-pw@127.0.0.1:9/db"})
    boom = fake_measure(fail=lambda cell, k: RuntimeError("cannot connect to mysql://u:very-secret-pw@127.0.0.1:9/db"))
    logged = []
    runner.run(plan, tmp_path / "r", context=runner.NoContext(), progress=False, measure_fn=boom, log=logged.append)
    for f in (tmp_path / "r").rglob("*"):
        if f.is_file():
            assert "very-secret-pw" not in f.read_text(errors="replace"), f
    assert "u:***@" in (tmp_path / "r" / "meta.json").read_text()
    assert logged and not any("very-secret-pw" in line for line in logged)
    assert any("***" in line for line in logged)


def test_what_the_context_did_before_a_sample_is_that_samples_note(tmp_path):
    """A context that restarted a server before a sample (resources.Resources) says so through
    `sample_note`: that sample's record carries it as `note`, and no other record does."""

    class Restarting(runner.NoContext):
        def __init__(self):
            self.prepared, self.pending = 0, None

        def before_sample(self, cell):
            self.prepared += 1
            if self.prepared == 3:
                self.pending = "before this sample the mysql server had stopped (killed by SIGKILL); restarted"
            return {}

        def sample_note(self):
            note, self.pending = self.pending, None
            return note

    runner.run(small_plan(), tmp_path / "r", context=Restarting(), progress=False, measure_fn=fake_measure(),
               log=lambda *_: None)
    records = sorted(ResultsStore(tmp_path / "r").records(), key=lambda r: r["seq"])
    assert [r["seq"] for r in records if r.get("note")] == [2]
    from bench_src import api
    df = api.load(tmp_path / "r")
    assert df.loc[df["seq"] == 2, "note"].item().startswith("before this sample the mysql server had stopped")


def test_a_full_disk_met_while_a_sample_is_prepared_stops_the_run_rather_than_failing_the_sample(tmp_path):
    """DiskFull (meta.json could not take a server's restart, say) raised by the context before a
    sample: not a harness_error of that sample with the run going on, but the run's end."""
    from bench_src.store import DiskFull

    class Full(runner.NoContext):
        def __init__(self):
            self.prepared = 0

        def before_sample(self, cell):
            self.prepared += 1
            if self.prepared == 2:
                raise DiskFull(tmp_path, "meta.json")
            return {}

    with pytest.raises(DiskFull):
        runner.run(small_plan(), tmp_path / "r", context=Full(), progress=False, measure_fn=fake_measure(),
                   log=lambda *_: None)
    assert [r["status"] for r in ResultsStore(tmp_path / "r").records()] == ["ok"]


def test_stale_sample_directories_are_removed_only_when_dead_and_ours(tmp_path):
    from bench_src.run import measure
    from bench_src.store import DirLock
    from locks import held_elsewhere
    dead, alive, foreign, old_style = (tmp_path / f"bench-sample-{n}" for n in ("dead", "alive", "foreign", "old"))
    for d in (dead, alive, foreign, old_style):
        d.mkdir()
        (d / "1").mkdir()
    for d in (dead, foreign):
        (d / ".lock").write_text("999999 2020-01-01\n")  # no process holds it
    with held_elsewhere(alive / ".lock"):
        if os.geteuid() == 0:
            os.chown(foreign, 65534, 65534)
        removed = measure.remove_stale_scratch(str(tmp_path))
        assert dead in removed and not dead.exists()
        assert alive.exists() and old_style.exists(), "a live owner's directory, or one without a lock, stays"
        if os.geteuid() == 0:
            assert foreign.exists(), "another user's directory stays"
    assert DirLock.held_by(alive / ".lock") is None


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


def test_the_eta_counts_the_samples_the_sequential_rule_adds(tmp_path, monkeypatch):
    """Every sample the progress line counts as planned and not yet taken has its estimated seconds
    in what the ETA is made of: the blocks the sequential rule adds after the pilot as well (they
    were counted, their seconds were not, and the ETA read 0 s with a tenth of the run to go)."""
    seen = []
    real_update = Progress.update

    def update(self, cell, note="", counted=True):
        real_update(self, cell, note, counted)
        seen.append((self.done, self.planned, self.remaining_estimate, self.seconds(cell)))
    monkeypatch.setattr(Progress, "update", update)
    loose = sequential_plan(samples=8, max_samples=14, looks=3)
    runner.run(loose, tmp_path / "r", progress=True, measure_fn=noisy_measure(0.2, {"go": 1.0, "rust": 1.0}),
               log=lambda *_: None)
    assert seen[-1][:2] == (28, 28), "the rule sampled on to the budget: 2 x 14 samples"
    for done, planned, remaining, per_sample in seen:
        assert remaining == pytest.approx((planned - done) * per_sample), (done, planned, remaining)


def test_threads_below_the_usable_cpus_unpinned_are_a_note_naming_cores():
    """Rust's main thread is not one of its worker threads: with fewer threads than CPUs and no
    pinning, Rust may use one CPU more than Go; the run says so and how to pin both."""
    from bench_src.plan.validate import threads_note
    unpinned = make_plan("quick", workloads=["sleep"], ns=[10], params={"sleep": {"work": 10}}, threads=1, samples=6)
    note = threads_note(unpinned, usable=2)
    assert note and note.startswith("threads is 1, below this machine's 2 usable CPUs, and 1 Rust cell runs "
                                    "unpinned") and note.endswith("pin them: cores [1]")
    assert threads_note(unpinned, usable=1) is None
    assert threads_note(make_plan("quick", workloads=["sleep"], ns=[10], samples=6), usable=2) is None
    assert threads_note(make_plan("quick", workloads=["sleep"], ns=[10], threads=1, samples=6, languages=["go"]),
                        usable=2) is None
    assert threads_note(make_plan("quick", workloads=["sleep"], ns=[10], cores=[1], samples=6), usable=2) is None


def test_sequential_parameters_are_validated():
    with pytest.raises(ValueError, match=r"max_samples \(5\) must be >= samples \(10\)"):
        make_plan("quick", samples=10, max_samples=5)
    with pytest.raises(ValueError, match="looks .* only applies to sequential sampling"):
        make_plan("quick", looks=3)
    with pytest.raises(ValueError, match="adaptive_target .* replaced by the sequential rule"):
        make_plan("quick", adaptive_target=0.02)
    with pytest.raises(ValueError, match=r"smoke must be a boolean \(true/false, yes/no, on/off, 1/0\), got .maybe."):
        make_plan("quick", smoke="maybe")
    plan = make_plan("quick", samples=10, max_samples=40)
    assert (plan.max_samples, plan.looks) == (40, 3)
    assert make_plan("quick", samples=10, max_samples=12, looks=5).looks == 3, "at most one look per block"
    assert make_plan("quick", samples=10, max_samples=10).max_samples == 0, "a budget of the pilot is the fixed design"


def test_the_time_budget_stops_extra_blocks_but_never_the_pilot(tmp_path, monkeypatch):
    # equal centres with a 20% spread: the rule would sample to the budget of 14 per cell
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    unlimited = sequential_plan(samples=8, max_samples=14, looks=3)
    logged = []
    first = runner.run(unlimited, tmp_path / "results" / "u", progress=False,
                       measure_fn=noisy_measure(0.2, {"go": 1.0, "rust": 1.0}), log=logged.append)
    assert len(ResultsStore(tmp_path / "results" / "u").records()) > 2 * 8, "without a budget the plan samples on"
    # before a pilot, the estimate counts the pilot (the extra blocks cannot be projected yet), and
    # after the pilot's look it is made again from the pilot
    assert "no pilot yet: the pilot's samples" in first.estimate.basis, first.estimate.basis
    assert any(line.startswith("after the pilot:") and "estimated rest" in line for line in logged), logged

    # a budget of a microsecond, below what the pilot's 16 samples take on any machine (each is
    # stored before the next starts) and below the 28 samples the earlier run's pilot projects
    plan = sequential_plan(samples=8, max_samples=14, looks=3, time_budget_s=1e-6)
    logged = []
    report = runner.run(plan, tmp_path / "r", progress=False, measure_fn=noisy_measure(0.2, {"go": 1.0, "rust": 1.0}),
                        log=logged.append)
    rows = ResultsStore(tmp_path / "r").records()
    assert len(rows) == len(plan.schedule()) == 2 * 8, "the pilot runs whole, no extra block starts"
    assert any("time budget" in line and "1 comparisons open" in line for line in logged), logged
    # the earlier run's pilot projects extra blocks past the budget: the estimate is capped and says so
    assert "the pilot of an earlier run" in report.estimate.basis, report.estimate.basis
    assert report.estimate.seconds >= 0 and "capped by the time budget" in report.estimate.basis
    assert re.search(r"uncapped [^;]+, the pilot alone \S", report.estimate.basis), report.estimate.basis


def test_before_any_pilot_the_estimate_states_what_the_profiles_measured_shares_would_give(tmp_path, monkeypatch):
    """The extra blocks' share of the pilot is a prior that differs severalfold between machines
    (the article profile's ARTICLE_SEQUENTIAL_SHARE_MEASURED), read at the machine's speed factor:
    the start estimate says so and gives the durations of both ends beside its own."""
    from bench_src.plan.estimate import Speed, estimate, format_duration
    from bench_src.profiles import PROFILES

    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    plan = make_plan("article")
    low, high = PROFILES["article"].sequential_share_measured
    for speed in (Speed(0.8, 58), Speed(1.04, 58), None):
        share = PROFILES["article"].sequential_share_at(speed.factor if speed else None)
        assert low < share < high
        e = estimate_remaining(plan, [], {}, None, {}, [], 0.0, results_dir=tmp_path / "r", speed=speed)
        pilot = estimate(plan, {}, {c.id: float(plan.samples) for c in plan.cells()}, {}, [], speed=speed,
                         servers_started=True).seconds
        extra = share * pilot
        factor = f"{speed.factor:.2f}" if speed else "1, no warm-up having timed this machine"
        assert (f"{format_duration(extra)} for the sequential rule's extra blocks ({share:.0%} of the pilot: the "
                "article profile's measured shares read at") in e.basis, e.basis
        assert f"speed factor, {factor} (bench_src/profiles.py)" in e.basis, e.basis
        assert (f"in measured runs of the profile they took {low:.0%} to {high:.0%} of the pilot: "
                f"{format_duration(e.seconds - extra + low * pilot)} to "
                f"{format_duration(e.seconds - extra + high * pilot)} in all") in e.basis, e.basis
    slow, fast = (PROFILES["article"].sequential_share_at(f) for f in (1.04, 0.8))
    assert slow > 2 * fast, "a slower machine's extra blocks take a larger share of its pilot"
    quick = estimate_remaining(make_plan("quick", samples=6, max_samples=12), [], {}, None, {}, [], 0.0,
                               results_dir=tmp_path / "r")
    assert "in measured runs" not in quick.basis, "a profile without measured shares states none"


def test_after_the_warm_ups_the_range_beside_the_estimate_counts_what_the_estimate_counts(tmp_path, monkeypatch):
    """The figure printed after the warm-ups counts the seconds they took; the range the profile's
    measured shares give beside it ("... to ... in all") counts them too, and so does the figure
    before the cap.  (It once left them out: the range read 37 s lower than the figure's basis in
    the article runs on a 2-core Xeon.)"""
    from bench_src.plan.estimate import Speed, estimate, format_duration
    from bench_src.profiles import PROFILES
    from bench_src.run.session_estimate import SessionEstimate, SessionTakes

    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    plan = make_plan("article")
    speed = Speed(0.8, 58)
    low, high = PROFILES["article"].sequential_share_measured
    share = PROFILES["article"].sequential_share_at(speed.factor)
    pilot = estimate(plan, {}, {c.id: float(plan.samples) for c in plan.cells()}, {}, [], speed=speed,
                     servers_started=True).seconds
    session = SessionEstimate(plan, SessionTakes([], [], set()), None, 0.0, tmp_path / "r", {}, [], speed)
    before = session.now([], set(), servers_started=True)
    after = session.after_warmups([], set(), spent_now=37.0, warmups_taken=58)
    assert after.seconds == pytest.approx(before.seconds + 37.0)
    ends = [format_duration(after.seconds - share * pilot + s * pilot) for s in (low, high)]
    assert f"{ends[0]} to {ends[1]} in all" in after.basis, after.basis
    left_out = format_duration(before.seconds - share * pilot + low * pilot)
    assert left_out != ends[0] and f"{left_out} to" not in after.basis, after.basis

    def uncapped_s(basis: str) -> int:
        h, m, sec = re.search(r"uncapped (?:(\d+) h )?(\d+) min (\d+) s", basis).groups()
        return int(h or 0) * 3600 + int(m) * 60 + int(sec)

    capped = make_plan("article", time_budget_s=600)
    session = SessionEstimate(capped, SessionTakes([], [], set()), None, 0.0, tmp_path / "r", {}, [], speed)
    before = session.now([], set(), servers_started=True)
    after = session.after_warmups([], set(), spent_now=37.0, warmups_taken=58)
    assert "capped by the time budget" in after.basis, after.basis
    assert abs(uncapped_s(after.basis) - (uncapped_s(before.basis) + 37)) <= 1, (before.basis, after.basis)


def test_a_time_budget_needs_the_sequential_rule():
    with pytest.raises(ValueError, match=r"time_budget_s \(60\) limits the extra blocks .* set max_samples"):
        make_plan("quick", workloads=["sleep"], ns=[10], time_budget_s=60)
    with pytest.raises(ValueError, match="time_budget_s must be a finite number"):
        make_plan("quick", workloads=["sleep"], ns=[10], max_samples=20, time_budget_s="nan")
    assert make_plan("quick", workloads=["sleep"], ns=[10], max_samples=20, time_budget_s="90").time_budget_s == 90.0


def test_a_record_whose_keys_have_the_wrong_type_is_a_bad_line(tmp_path):
    from bench_src import api
    from bench_src.store import CorruptRecords, CorruptRecordsWarning
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    path = tmp_path / "r" / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    rec = json.loads(lines[5])
    lines[5] = json.dumps({**rec, "n": "abc", "seq": True}) + "\n"
    path.write_text("".join(lines))
    with pytest.warns(CorruptRecordsWarning, match=r"line 6: wrong type \(seq is True, not an integer; n is 'abc', "
                                                    r"not an integer\)"):
        df = api.load(tmp_path / "r")
    assert len(df) == len(plan.schedule()) - 1 and df.attrs["bad_lines"] == [6]
    assert pd.to_numeric(df["n"], errors="coerce").notna().all()
    with pytest.raises(CorruptRecords, match="line 6: wrong type"):
        runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)


@pytest.mark.parametrize("key, value, said", [("attempt", 7, "attempt is 7, not a string"),
                                              ("session", [1], "session is [1], not an integer"),
                                              ("extra", "[1]", "extra is '[1]', not a JSON object"),
                                              ("params", '{"kernel" "xorshift"}',
                                               """params is '{"kernel" "xorshift"}', not a JSON object""")])
def test_an_optional_key_of_the_wrong_type_is_a_bad_line(tmp_path, key, value, said):
    """attempt 7, session [1], extra "[1]" or params that are no JSON object passed the line check and
    stopped the report, the notebook and a resume with a traceback (or an error naming no file):
    such a line is a bad line, named when read and refused by a resume until repaired."""
    from bench_src import api
    from bench_src.store import CorruptRecords, CorruptRecordsWarning
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    path = tmp_path / "r" / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    rec = json.loads(lines[5])
    lines[5] = json.dumps({**rec, key: value}) + "\n"
    path.write_text("".join(lines))
    with pytest.warns(CorruptRecordsWarning, match=re.escape(f"line 6: wrong type ({said})")):
        df = api.load(tmp_path / "r")
    assert df.attrs["bad_lines"] == [6]
    with pytest.raises(CorruptRecords, match="line 6: wrong type"):
        runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)


@pytest.mark.parametrize("value", ["abc", -5, True])
def test_a_measurement_that_is_not_a_number_at_or_above_0_is_a_bad_line(tmp_path, value):
    """elapsed_ns "abc" was read as a missing value (the sample left its cell without a word and a
    resume never took it again); -5 entered the cell's statistics.  Either is a bad line now: named
    when read, refused by a resume until repaired, and the repair's resume takes the sample again."""
    from bench_src import api
    from bench_src.store import CorruptRecords, CorruptRecordsWarning
    plan = small_plan()
    out = tmp_path / "r"
    runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    path = out / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    measured = next(i for i, line in enumerate(lines) if json.loads(line)["phase"] == "measured")
    rec = json.loads(lines[measured])
    lines[measured] = json.dumps({**rec, "elapsed_ns": value}) + "\n"
    path.write_text("".join(lines))
    with pytest.warns(CorruptRecordsWarning, match=rf"line {measured + 1}: wrong type \(elapsed_ns is "
                                                    rf"{re.escape(repr(value))}, not a number >= 0\)"):
        api.load(out)
    with pytest.raises(CorruptRecords, match=f"line {measured + 1}: wrong type"):
        runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    again = runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None, repair=True)
    assert again.taken == 4 + 4  # the warm-ups again, then the first block (its first sample moved aside) whole
    assert kept_ids(out) == sorted(s.sample_id for s in plan.schedule())


def test_a_second_ctrl_c_while_a_run_ends_does_not_say_nothing_was_measured(tmp_path, monkeypatch, capsys):
    from bench_src import __main__ as cli, api
    from bench_src.run import build

    def interrupted_while_ending(*args, **kwargs):  # the run took samples; a second Ctrl-C hits its cleanup
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "build", lambda *a, **k: {})
    monkeypatch.setattr(api, "run_plan", interrupted_while_ending)
    code = cli.main(["run", "--workloads", "[sleep]", "--ns", "[10]", "--results-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 130 and "nothing was measured" not in err and "resume" in err, err
    assert len(err.splitlines()) == 1


def test_the_eta_reprices_what_remains_when_the_warm_ups_time_the_machine():
    """The samples to take are priced when the ETA is made, not when they were expected: a run
    expects its samples at the default times, its warm-ups then scale those times to the machine,
    and the last sample must leave nothing behind (kept as a running sum of seconds, the
    difference of the two prices stayed, and a quick run's last lines read "ETA 36 s" with 5 s to
    go)."""
    factor = {"now": 1.0}
    go, rust = (Cell(workload="sleep", lang=lang, variant="default", n=10, threads=None, params=())
                for lang in ("go", "rust"))
    bar = Progress("r", planned=6, done_before=0, enabled=False,
                          seconds=lambda c: factor["now"] * (1.0 if c.lang == "go" else 3.0))
    bar.expect([go, rust] * 3)
    bar.begin()
    assert bar.remaining_estimate == pytest.approx(12.0)
    bar.update(go)
    bar.update(rust)  # the warm-ups: the machine is half as slow as the defaults say
    factor["now"] = 0.5
    assert bar.remaining_estimate == pytest.approx(0.5 * 8.0), "what remains, at the new price"
    assert bar.estimated_done == pytest.approx(0.5 * 4.0), "what was taken, at the same price"
    for cell in (go, rust, go, rust):
        bar.update(cell)
    assert bar.remaining_estimate == 0.0 and bar.eta() == 0.0
    bar.update(go)  # a sample nobody expected (a retry) takes nothing below zero
    assert bar.remaining_estimate == 0.0 and bar.pending[go] == 0


def test_a_sample_stored_again_in_a_session_does_not_count_twice_towards_the_planned(tmp_path):
    """A cluster's host runs a lost block again, and its samples arrive a second time: they cost
    time but are no more done (before, a run read "123/112 samples (110%)")."""
    from types import SimpleNamespace

    from bench_src.run.sample import record

    plan = small_plan()
    slots = [s for s in plan.schedule() if s.phase == "measured"][:2]
    bar = Progress("r", planned=len(slots), done_before=0, enabled=False, seconds=lambda c: 1.0)
    stored = []
    store = SimpleNamespace(append=stored.append, write_timeline=None)
    report = runner.RunReport(tmp_path, planned=len(slots), already_done=0)
    keep = SampleKeeper(store, runner.ChecksumBook([]), report, bar, lambda *_: None)
    for slot in (slots[0], slots[1], slots[0]):  # the first one again, from a second attempt
        keep(slot, record(slot, 0, "r", 1, {"status": "failed", "reason": "x"}), None)
    assert len(stored) == 3 and bar.taken == 3 and bar.done == 2 == bar.planned
    # the closing line says why more were taken than planned (it read "3 samples taken now, ... 2 planned")
    assert "3 samples taken now (1 of them again: their blocks, left incomplete, were taken whole), 0 kept from " \
           "before, 2 planned" in str(report), str(report)

    # a resume whose host takes an incomplete block whole: the sample done before is taken again,
    # counted once among the samples taken now and not as kept from before
    bar = Progress("r", planned=2, done_before=1, enabled=False, seconds=lambda c: 1.0)
    report = runner.RunReport(tmp_path, planned=2, already_done=1)
    keep = SampleKeeper(store, runner.ChecksumBook([]), report, bar, lambda *_: None,
                               done_before={slots[0].sample_id})
    for slot in slots:
        keep(slot, record(slot, 0, "r", 1, {"status": "failed", "reason": "x"}), None)
    assert bar.done == 2 == bar.planned and report.retaken == 1
    assert "2 samples taken now (1 of them again: their blocks, left incomplete, were taken whole), 0 kept from " \
           "before, 2 planned" in str(report)


@pytest.fixture
def ctrl_c():
    """Ctrl-C raising KeyboardInterrupt, as in a terminal: a process started in the background by a
    shell without job control (a CI script's `cmd &`) inherits SIGINT ignored."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize("signum, raised", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)])
def test_an_interrupt_right_after_a_sample_is_written_still_counts_it(tmp_path, signum, raised, ctrl_c):
    """Ctrl-C or SIGTERM landing between a sample's line and its count left the session's count in
    meta.json one short of the samples its file holds (a notebook run interrupted after 20 samples
    recorded 19).  The store and the counts are one step now: the interrupt is raised once both are
    done, and the sample counts."""
    from types import SimpleNamespace

    from bench_src.run.sample import record

    plan = small_plan()
    slot = next(s for s in plan.schedule() if s.phase == "measured")
    stored = []

    def append(rec):  # the signal arrives the moment the line is written
        stored.append(rec)
        os.kill(os.getpid(), signum)

    report = runner.RunReport(tmp_path, planned=1, already_done=0)
    bar = Progress("r", planned=1, done_before=0, enabled=False, seconds=lambda c: 1.0)
    keep = SampleKeeper(SimpleNamespace(append=append, write_timeline=None), runner.ChecksumBook([]), report, bar,
                        lambda *_: None)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(raised), SigtermAsInterrupt():
        keep(slot, record(slot, 0, "r", 1, {"status": "failed", "reason": "x"}), None)
    assert len(stored) == 1 and report.taken == 1 and report.statuses["failed"] == 1
    assert {s: signal.getsignal(s) for s in handlers} == handlers, "the handlers from before are back"


def test_held_delivers_an_interrupt_once_when_its_block_ends_and_nothing_without_one(ctrl_c):
    done = []
    with pytest.raises(KeyboardInterrupt):
        with held():
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
            done.append("the rest of the block")
    assert done == ["the rest of the block"]
    with held():
        done.append("quiet")
    assert done[-1] == "quiet"
    # an ignored Ctrl-C stays ignored: held delivers a signal to the handler from before
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with held():
        os.kill(os.getpid(), signal.SIGINT)
        done.append("ignored")
    assert done[-1] == "ignored" and signal.getsignal(signal.SIGINT) == signal.SIG_IGN


@pytest.mark.parametrize("change, why", [
    (lambda rec: {**rec, "lang": "java"}, r"a cell the run's plan does not hold \('sleep.*: workload 'sleep', lang 'java'"),
    (lambda rec: {**rec, "n": rec["n"] * 2}, r"a cell the run's plan does not hold"),
    (lambda rec: {**rec, "variant": "nope"}, r"a cell the run's plan does not hold .*variant 'nope'"),
    # the same workload, language, variant and N, with other threads and parameters: another plan's cell
    (lambda rec: {**rec, "cell_id": rec["cell_id"] + ",buffer=0"}, r"a cell the run's plan does not hold \('sleep"),
])
def test_a_record_of_no_cell_of_the_plan_is_a_bad_line(tmp_path, change, why):
    """lang "java" crashed the report with a KeyError and a resume counted the sample as taken; a
    samples file of another plan (N = 20 where the plan has 10) was analysed as this run's.  A record
    whose workload, language, variant and N are no cell of meta.json's plan is a bad line: named when
    read, refused by a resume until repaired, and repaired into samples.rejected.jsonl."""
    from bench_src import api
    from bench_src.store import CorruptRecords, CorruptRecordsWarning
    plan = small_plan()
    out = tmp_path / "r"
    runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    path = out / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[5] = json.dumps(change(json.loads(lines[5]))) + "\n"
    path.write_text("".join(lines))
    with pytest.warns(CorruptRecordsWarning, match="line 6: " + why):
        df = api.load(out)
    assert len(df) == len(plan.schedule()) - 1 and df.attrs["bad_lines"] == [6]
    with pytest.raises(CorruptRecords, match="line 6: a cell the run's plan does not hold"):
        runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None, repair=True)
    assert kept_ids(out) == sorted(s.sample_id for s in plan.schedule())


def test_a_line_that_is_not_utf_8_is_a_bad_line_and_moved_whole_by_a_repair(tmp_path):
    """A byte that is not UTF-8 in "ok" was read as "o\ufffd\ufffdk", a status no run writes,
    without a word; the line is a bad line now, and a repair moves it aside and keeps the others."""
    from bench_src import api
    from bench_src.store import CorruptRecordsWarning
    plan = small_plan()
    out = tmp_path / "r"
    runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    path = out / "samples.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[4] = lines[4].replace(b'"ok"', b'"o\xff\xfek"')
    path.write_bytes(b"\n".join(lines))
    with pytest.warns(CorruptRecordsWarning, match=r"line 5: not UTF-8 \(byte 0xff at column \d+\)"):
        df = api.load(out)
    assert set(df["status"]) == {"ok"}
    runner.run(plan, out, progress=False, measure_fn=fake_measure(), log=lambda *_: None, repair=True)
    assert kept_ids(out) == sorted(s.sample_id for s in plan.schedule())
    assert all(b"\xff" not in line for line in path.read_bytes().split(b"\n"))
    # the line moved as it was, so that it can be put back byte for byte
    import base64
    moved = json.loads((out / "samples.rejected.jsonl").read_text().splitlines()[0])
    assert b"\xff\xfe" in base64.b64decode(moved["base64"])


def _without_lines(results_dir, picks) -> None:
    """samples.jsonl less the records `picks(records)` names (by index), as a hand edit leaves it."""
    path = results_dir / "samples.jsonl"
    lines = path.read_text().splitlines(True)
    gone = set(picks([json.loads(line) for line in lines]))
    path.write_text("".join(line for i, line in enumerate(lines) if i not in gone))


def _middle_of_block_1(recs):
    return [next(i for i, r in enumerate(recs) if r["phase"] == "measured" and r["block"] == 1) + 1]


def _last_measured(recs):
    return [max(i for i, r in enumerate(recs) if r["phase"] == "measured")]


def _a_warmup(recs):
    return [next(i for i, r in enumerate(recs) if r["phase"] == "warmup")]


@pytest.mark.parametrize("picks, taken", [
    # the warm-ups again (4), then the cut block whole (4)
    (_middle_of_block_1, 8),
    (_last_measured, 8),
    # the missing warm-up alone: no measured sample, so no warm-up again
    (_a_warmup, 1),
    # the missing warm-up, the other 3 again, the cut block whole
    (lambda recs: _a_warmup(recs) + _middle_of_block_1(recs), 1 + 3 + 4),
])
def test_a_resumed_runs_estimate_and_planned_count_are_the_samples_it_takes(tmp_path, capsys, picks, taken):
    """A finished run less one line of samples.jsonl, resumed: the estimate counted the samples
    missing, not the block taken again whole around one nor the warm-ups taken again before the
    first measured sample ("about 4 s for 0 samples" for a session that took one; "for 1 samples"
    for one that took 104), and the progress line began at "15/16" to end at "19/19"."""
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    _without_lines(tmp_path / "r", picks)
    capsys.readouterr()
    report = runner.run(plan, tmp_path / "r", progress=True, measure_fn=fake_measure(), log=lambda *_: None,
                        repair=True)
    err = capsys.readouterr().err.splitlines()
    assert report.taken == taken and not report.interrupted
    assert report.estimate.samples == taken, (report.estimate.samples, taken)
    said = [line for line in err if line.startswith("estimated duration: about")]
    one = "s" if taken != 1 else ""
    assert len(said) == 1 and f" for {taken} sample{one} (" in said[0], said
    counts = [re.match(r"\[r\] (\d+)/(\d+) samples", line) for line in err]
    planned = {int(m.group(2)) for m in counts if m}
    assert planned == {report.planned}, (planned, report.planned)
    kept = report.kept_before
    assert kept + taken == report.planned, str(report)
    assert f": {taken} sample{one} taken now" in str(report) and f"{report.planned} planned" in str(report)


def own_lines(logged: list[str]) -> list[str]:
    """A run's log without the lines about a scratch or server directory that another test's killed
    harness left in the temporary directory (the next run to start removes it and says so first,
    runner.py), which a test in another worker can leave at any time."""
    return [line for line in logged if not line.endswith("left by a harness process that was killed")]


def test_a_run_with_every_sample_taken_says_so_and_estimates_nothing(tmp_path, capsys):
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    capsys.readouterr()
    logged, again = [], fake_measure()
    report = runner.run(plan, tmp_path / "r", progress=True, measure_fn=again, log=logged.append)
    assert again.calls == [] and report.taken == 0
    assert own_lines(logged)[0] == f"all 16 planned samples are already in {tmp_path / 'r'}", logged
    assert report.estimate.samples == 0 and report.estimate.seconds == 0
    assert "(estimated 0 s): 0 samples taken now, 16 kept from before, 16 planned" in str(report), str(report)
    session = json.loads((tmp_path / "r" / "meta.json").read_text())["sessions"][-1]
    assert session["estimate_s"] == 0 and session["estimate_basis"] == "nothing to take"


def test_a_resumed_sequential_runs_estimates_count_the_warm_ups_it_takes_again(tmp_path):
    """Session 1 stops between two of the rule's extra blocks; session 2 takes the warm-ups again
    before its first measured sample, then the extra blocks: its estimate, and the rest estimated
    after the pilot's look (which comes before them), left the warm-ups out (20 of 24)."""
    plan = make_plan("quick", workloads=["sleep"], ns=[10, 100], params={"sleep": {"work": 10}}, warmup=1, samples=8,
                     max_samples=14, looks=3)
    first = per_sample_measure()

    def stopping(cell, *args, **kwargs):
        if len(first.calls) == 4 + 8 * 4 + 4:  # the warm-ups, the pilot, one extra block
            raise Stop()
        return first(cell, *args, **kwargs)

    assert runner.run(plan, tmp_path / "r", progress=False, measure_fn=stopping, log=lambda *_: None).interrupted
    lines = []
    report = runner.run(plan, tmp_path / "r", progress=False, measure_fn=per_sample_measure(first.calls),
                        log=lines.append)
    assert report.taken == 4 + 20 and report.retaken == 0 and not report.interrupted
    assert report.estimate.samples == report.taken, report.estimate
    rest = [line for line in lines if line.startswith("after the pilot:")]
    assert len(rest) == 1 and f"for {report.taken} samples" in rest[0], rest


def test_the_engines_check_takes_no_block_past_its_deadline():
    """The engines' A/A check reads the clock before each block: past the deadline it takes none."""
    import time as clock

    from bench_src.run.engines import engines_take_blocks

    plan = small_plan(aa=True)
    taken = []
    take_blocks = engines_take_blocks(plan, lambda q, s: taken.append(s), lambda parts, d: taken.append(parts), set())
    blocks = runner.sequential.blocks_of(enumerate(plan.schedule()))
    assert take_blocks(blocks, clock.monotonic() - 1) is False
    assert taken == []
