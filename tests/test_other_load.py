"""What other processes take of the CPUs while a session measures: counted from the kernel's CPU
times less the harness tree's own, stated in the Method and warned of at the end of a run."""
import os
import subprocess
import sys
import time

import pytest

from bench_src.run import other_load, runner
from bench_src.report import method
from bench_src.store import ResultsStore

from test_store_runner import fake_measure, small_plan

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"


def stat_text(busy: int, steal: int = 0, idle: int = 1000) -> str:
    """A /proc/stat of two CPUs, each with `busy` ticks of user time."""
    head = f"cpu  {2 * busy} 0 0 {2 * idle} 0 0 0 {2 * steal} 0 0\n"
    return head + "".join(f"cpu{i} {busy} 0 0 {idle} 0 0 0 {steal} 0 0\n" for i in range(2)) + "intr 1 2 3\n"


def test_the_cpu_lines_are_those_of_the_cpus_asked_for_and_not_the_total():
    rows = other_load.cpu_lines(stat_text(5), {1})
    assert rows == [[5, 0, 0, 1000, 0, 0, 0, 0, 0, 0]]
    assert other_load.cpu_lines(stat_text(5), {0, 1, 7}) == [[5, 0, 0, 1000, 0, 0, 0, 0, 0, 0]] * 2


def test_other_use_is_the_busy_time_less_the_harness_trees_and_steal_apart():
    a = other_load.CpuClock(at=10.0, busy_s=100.0, steal_s=1.0, own_s=5.0, cpus=2)
    b = other_load.CpuClock(at=20.0, busy_s=112.0, steal_s=1.5, own_s=11.0, cpus=2)
    use = other_load.other_use(a, b)
    assert use == {"other_s": 6.0, "steal_s": 0.5, "capacity_s": 20.0, "span_s": 10.0, "cpus": 2, "share": 0.3,
                   "steal_share": 0.025}
    assert other_load.competed(use)
    # a session shorter than WARN_SPAN_S: its share is a moment's, said but not warned of
    short = other_load.other_use(a, other_load.CpuClock(at=19.0, busy_s=112.0, steal_s=1.5, own_s=11.0, cpus=2))
    assert short["share"] > other_load.WARN_SHARE and not other_load.competed(short)
    assert "30.0% of the CPU time of the 2 CPUs" in other_load.words(use)
    assert "the hypervisor took 2.5%" in other_load.words(use)
    # the harness's own work is no competition, and rounding never gives a negative share
    quiet = other_load.other_use(a, other_load.CpuClock(at=20.0, busy_s=110.9, steal_s=1.0, own_s=16.0, cpus=2))
    assert quiet["other_s"] == 0.0 and not other_load.competed(quiet)
    assert "hypervisor" not in other_load.words(quiet)
    assert other_load.other_use(a, a) is None


def test_time_stolen_for_other_guests_counts_as_competition_with_other_processes():
    """A run of the article profile lost 4.9% of its CPU time to the hypervisor, and its start estimate
    was 15.6% short; stolen time delays a sample as another process does."""
    stolen = {"other_s": 0.0, "steal_s": 6.0, "capacity_s": 100.0, "span_s": 50.0, "cpus": 2, "share": 0.0,
              "steal_share": 0.06}
    assert other_load.competed(stolen)
    assert "the hypervisor took 6.0% for other guests" in other_load.words(stolen)
    assert not other_load.competed({**stolen, "steal_s": 4.0, "steal_share": 0.04})
    # the two together: 3% each
    assert other_load.competed({**stolen, "other_s": 3.0, "share": 0.03, "steal_s": 3.0, "steal_share": 0.03})
    assert not other_load.competed({**stolen, "span_s": 5.0})
    text = method.when_text({"sessions": [session(0.5, other_cpu=stolen)]})
    assert "the hypervisor took 6.0% for other guests; they competed with the samples" in text


def test_read_clock_reads_the_affine_cpus_of_a_stat_file(tmp_path):
    f = tmp_path / "stat"
    f.write_text(stat_text(busy=300, steal=40))
    clock = other_load.read_clock(str(f))
    tick = os.sysconf("SC_CLK_TCK")
    mine = [c for c in os.sched_getaffinity(0) if c < 2]
    assert clock.cpus == len(mine)
    assert clock.busy_s == pytest.approx(300 * len(mine) / tick)
    assert clock.steal_s == pytest.approx(40 * len(mine) / tick)
    assert other_load.read_clock(str(tmp_path / "missing")) is None


def test_a_child_of_the_harness_counts_as_its_own_and_a_stranger_as_other():
    """A process the harness started (and reaped) is its own work; one outside its tree (a
    grandchild whose parent has gone, adopted by init) is another's."""
    before = other_load.read_clock()
    subprocess.run([sys.executable, "-c", BURN.format(s=0.6)], check=True)
    own = other_load.read_clock()
    assert own.own_s - before.own_s >= 0.55
    # a stranger: started by a shell that exits at once, so that init adopts it
    subprocess.run(["sh", "-c", f"{sys.executable} -c '{BURN.format(s=0.6)}' >/dev/null 2>&1 &"], check=True)
    time.sleep(0.05)
    start = other_load.read_clock()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # until the stranger has burnt its 0.6 s
        time.sleep(0.1)
        if other_load.read_clock().busy_s - start.busy_s >= 0.6 and not _stranger_alive():
            break
    end = other_load.read_clock()
    use = other_load.other_use(start, end)
    assert use["other_s"] >= 0.5, use
    assert end.own_s - start.own_s < 0.3  # the harness only slept


def _stranger_alive() -> bool:
    out = subprocess.run(["pgrep", "-f", "process_time() - t < 0.6"], capture_output=True, text=True).stdout
    return bool(out.strip())


def test_a_session_records_other_use_and_the_method_says_it(tmp_path):
    plan = small_plan()
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=fake_measure(), log=lambda *_: None)
    meta = ResultsStore(tmp_path / "r").read_meta()
    use = meta["sessions"][-1]["other_cpu"]
    assert set(use) == {"other_s", "steal_s", "capacity_s", "span_s", "cpus", "share", "steal_share"}
    assert use["cpus"] == len(os.sched_getaffinity(0)) and use["capacity_s"] > 0
    text = method.when_text(meta)
    assert "The samples were taken on " in text and "in one session of " in text
    assert "Other processes used " in text


def session(share: float, other_s: float = 1.0, **kw) -> dict:
    return {"started_at": "2026-11-29T15:25:10.079+00:00", "finished_at": "2026-11-29T15:27:23.235+00:00",
            "duration_s": 133.4, "taken": 572, "machine": {"logical_cpus": 2, "load_avg_at_start": [4.49, 1, 1]},
            "other_cpu": {"other_s": other_s, "steal_s": 0.0, "capacity_s": other_s / share,
                          "span_s": other_s / share / 2, "cpus": 2,
                          "share": share, "steal_share": 0.0}, **kw}


def test_the_method_warns_when_other_processes_competed_and_not_when_they_did_not():
    busy = method.when_text({"sessions": [session(0.35, other_s=93.0)]})
    assert "on 2026-11-29 from 15:25 to 15:27 UTC, in one session of 2 min 13 s" in busy
    assert "load average was 4.49 when the session started, on 2 logical CPUs" in busy
    assert "Other processes used 35.0% of the CPU time of the 2 CPUs" in busy and "competed" in busy
    quiet = method.when_text({"sessions": [session(0.004, other_s=1.0)]})
    assert "Other processes used 0.4%" in quiet and "competed" not in quiet
    # two sessions: the shares are summed over the CPU seconds, not averaged
    two = method.when_text({"sessions": [session(0.5, other_s=100.0), session(0.01, other_s=3.0)]})
    assert "in 2 sessions" in two and "Other processes used 20.6%" in two
    older = session(0.5)
    del older["other_cpu"]
    assert "in the 1 of 2 sessions that recorded it" in method.when_text({"sessions": [older, session(0.01)]})


def test_memory_is_shown_as_the_machine_has_it():
    assert method._gib(24 * 2**30) == "24 GiB"
    assert method._gib(23.54 * 2**30) == "23.5 GiB"


def test_the_competed_warning_goes_where_the_duration_goes(tmp_path, monkeypatch, capsys):
    """make run shows the notebook's stderr only: with progress lines on, the warning is on stderr
    beside "took ...; estimated ...", not in the log (a notebook cell's stdout); without, in the log."""
    busy = {"other_s": 30.0, "steal_s": 0.0, "capacity_s": 60.0, "span_s": 30.0, "cpus": 2, "share": 0.5,
            "steal_share": 0.0}
    monkeypatch.setattr(other_load, "other_use", lambda start, end: busy)
    logged = []
    runner.run(small_plan(), tmp_path / "r", progress=True, measure_fn=fake_measure(), log=logged.append)
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("warning: other processes used 50.0% of the CPU time of the 2 CPUs"), err[-1]
    assert not any(line.startswith("warning: other") for line in logged)
    runner.run(small_plan(seed=2), tmp_path / "q", progress=False, measure_fn=fake_measure(), log=logged.append)
    assert logged[-1].startswith("warning: other processes used 50.0%")
    assert "virtual machine" not in logged[-1]
    # time stolen for other guests: the advice names the host too
    monkeypatch.setattr(other_load, "other_use", lambda start, end: {**busy, "other_s": 0.0, "share": 0.0,
                                                                      "steal_s": 6.0, "steal_share": 0.1})
    runner.run(small_plan(seed=3), tmp_path / "s", progress=False, measure_fn=fake_measure(), log=logged.append)
    assert "the hypervisor took 10.0% for other guests" in logged[-1]
    assert logged[-1].endswith("nothing else running and, on a virtual machine, a quieter host"), logged[-1]


def test_warm_ups_that_competed_are_warned_of_right_after_the_estimate_and_recorded(tmp_path, monkeypatch):
    """A run whose hypervisor took 4.9% of the CPU time for other guests said so only at its end,
    an hour later: what other processes and guests took during the warm-ups is said beside the
    start estimate, where the user can still stop the run."""
    readings = []

    def use_of(start, end):  # the warm-ups' reading first, the session's at its end
        readings.append((start, end))
        return busy if len(readings) == 1 else quiet

    busy = {"other_s": 0.6, "steal_s": 3.0, "capacity_s": 60.0, "span_s": 30.0, "cpus": 2, "share": 0.01,
            "steal_share": 0.05}
    quiet = {**busy, "steal_s": 0.0, "steal_share": 0.0}
    monkeypatch.setattr(other_load, "other_use", use_of)
    logged = []
    runner.run(small_plan(), tmp_path / "r", progress=False, measure_fn=fake_measure(), log=logged.append)
    at = next(i for i, line in enumerate(logged) if line.startswith("estimated duration:"))
    assert logged[at + 1] == (
        "warning: other processes used 1.0% of the CPU time of the 2 CPUs the harness ran on during the warm-ups "
        "(0.60 of 60.0 CPU seconds), and the hypervisor took 5.0% for other guests; they compete with the samples "
        "for the CPUs, which widens the intervals and may lengthen the run; for figures to publish, run "
        "on a machine with nothing else running and, on a virtual machine, a quieter host"), logged[at + 1]
    session = ResultsStore(tmp_path / "r").read_meta()["sessions"][-1]
    assert session["other_cpu_warmups"] == busy and session["other_cpu"] == quiet
    assert not any(line.startswith("warning: other processes used 0.0%") for line in logged)  # the end was quiet
    # quiet warm-ups: recorded, no warning; the same clock started both readings
    readings.clear()
    monkeypatch.setattr(other_load, "other_use", lambda start, end: readings.append((start, end)) or quiet)
    logged.clear()
    runner.run(small_plan(seed=2), tmp_path / "q", progress=False, measure_fn=fake_measure(), log=logged.append)
    assert not any(line.startswith("warning:") for line in logged), logged
    assert ResultsStore(tmp_path / "q").read_meta()["sessions"][-1]["other_cpu_warmups"] == quiet
    assert len(readings) == 2 and readings[0][0] is readings[1][0]
    assert readings[0][1].at <= readings[1][1].at


def test_the_method_states_each_sessions_estimates_beside_what_it_took_and_a_changed_budget():
    """A run of the article profile took 1 h 03 min where its start estimate said 31 min 42 s, with
    its budget raised from the profile's 3600 s to 7200 s; the Method said neither."""
    meta = {"plan": {"profile": "article", "time_budget_s": 7200.0},
            "sessions": [{"started_at": "2026-11-30T00:25:25+00:00", "finished_at": "2026-11-30T01:28:55+00:00",
                          "duration_s": 3810.0, "estimate_s": 1901.9, "estimate_after_pilot_s": 4559.0}]}
    text = method.when_text(meta)
    assert ("The session's duration estimate at its start said 31 min 42 s (-50% against the 1 h 03 min it took), "
            "the one after the pilot's look 1 h 15 min (+20%).") in text
    two = {"sessions": [{**meta["sessions"][0]}, {"started_at": "2026-11-30T02:00:00+00:00",
                                                  "finished_at": "2026-11-30T02:10:00+00:00", "duration_s": 600.0,
                                                  "estimate_s": 660.0}]}
    assert "session 2's duration estimate at its start said 11 min 00 s (+10% against the 10 min 00 s it took)" \
        in method.when_text(two)
    assert "estimate" not in method.when_text({"sessions": [{"started_at": "2026-11-30T00:25:25+00:00",
                                                            "duration_s": 10.0}]})
    design = {"looks": [6, 9, 14], "family_sizes": {}}
    assert "A time budget of 7200 s started no block after it (the article profile's own budget is 3600 s: this " \
           "run changed it)." in method.stopping(meta, design)
    same = {"plan": {**meta["plan"], "time_budget_s": 3600.0}}
    assert "A time budget of 3600 s started no block after it." in method.stopping(same, design)
