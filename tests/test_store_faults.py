"""Faults of the results directory: a full disk (mid-run and before the start), a directory that is
not a run of this package, an unreadable meta.json.  Each gives one line that says what, where
and what to do; no sample is lost, nothing is left behind, and a directory the harness did not
create keeps its mode.

A full disk is injected (ENOSPC from the store's writes) so that these run anywhere; the last tests
fill a real 48 KiB tmpfs as the user would, and need root to mount it."""
import errno
import json
import os
import re
import stat
import subprocess
import sys

import pytest
import tmpfs

from bench_src import store
from bench_src.run import build, runner
from bench_src.store import ResultsStore
from bench_src.store import files as results_module
from test_store_runner import fake_measure, kept_ids, small_plan

QUIET = {"progress": False, "log": lambda *_: None}
PLAN_TEXT = json.dumps({"workloads": ["sleep"], "ns": [10, 100], "samples": 3, "warmup": 1,
                        "params": {"sleep": {"work": 10}}, "smoke": True})  # small_plan() as --plan


def enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FullDisk:
    """ENOSPC in the store's writes: samples.jsonl fills up after `samples_ok` appends (half of the
    next line reaches the file first, as on a real disk); with `meta_too`, meta.json cannot be
    written either once the disk is full (not even in the reserve's space); with `everything`,
    no write succeeds at all."""

    def __init__(self, monkeypatch, samples_ok=10**9, meta_too=False, everything=False):
        self.real = results_module._write_all
        self.samples_ok, self.meta_too, self.everything = samples_ok, meta_too, everything
        self.appends, self.full = 0, everything
        monkeypatch.setattr(results_module, "_write_all", self.write)

    def write(self, fd, data):
        name = os.readlink(f"/proc/self/fd/{fd}")
        if self.everything:
            raise enospc()
        if name.endswith("samples.jsonl"):
            if self.appends >= self.samples_ok:
                self.full = True
                self.real(fd, data[: len(data) // 2])
                raise enospc()
            self.appends += 1
        elif name.endswith("meta.json.tmp") and self.full and self.meta_too:
            raise enospc()
        self.real(fd, data)

    def freed(self):
        self.samples_ok, self.full, self.meta_too, self.everything = 10**9, False, False, False


def sessions(d):
    return json.loads((d / "meta.json").read_text())["sessions"]


# --- a full disk mid-run ------------------------------------------------------------------------------
def test_a_full_disk_mid_run_stops_with_one_error_and_the_session_records_it(tmp_path, monkeypatch):
    plan, out = small_plan(), tmp_path / "r"
    reserve_sizes = []

    def measure(cell, *a, **k):  # the reserve holds a copy of meta.json while the run is open
        reserve_sizes.append(((out / ".space-reserve").stat().st_size, (out / "meta.json").stat().st_size))
        return inner(cell, *a, **k)

    inner = fake_measure()
    disk = FullDisk(monkeypatch, samples_ok=5)
    with pytest.raises(store.DiskFull) as err:
        runner.run(plan, out, measure_fn=measure, **QUIET)
    assert str(err.value) == (
        f"the disk is full: no space left on the device holding {out} (writing samples.jsonl); 5 samples are "
        f"safely stored in {out / 'samples.jsonl'}; free some space, then run the same command again to resume")
    assert len(inner.calls) == 6, "the run stops at the first sample it cannot store"
    assert all(size >= meta + 4096 for size, meta in reserve_sizes), reserve_sizes
    text = (out / "samples.jsonl").read_text()
    assert text.endswith("\n") and len(text.splitlines()) == 5, "the half-written line is cut off"
    first = sessions(out)[0]
    assert first["interrupted"] is True and first["taken"] == 5 and "finished_at" in first
    assert first["ended"] == f"error: {err.value.what}"
    assert not (out / ".space-reserve").exists() and not (out / "meta.json.tmp").exists()

    disk.freed()  # space again: the same command resumes
    again = fake_measure()
    report = runner.run(plan, out, measure_fn=again, **QUIET)
    # 5 stored: the 4 warm-ups and block 0's first sample; the resume takes the warm-ups again, then
    # block 0 whole and the rest
    assert report.already_done == 5 and report.taken == 4 + len(plan.schedule()) - 4
    assert kept_ids(out) == sorted(s.sample_id for s in plan.schedule())
    assert sessions(out)[0]["ended"] == first["ended"], "still ended by the full disk, never 'killed'"


def test_when_even_the_end_cannot_be_written_the_next_run_says_why(tmp_path, monkeypatch):
    plan, out = small_plan(), tmp_path / "r"
    disk = FullDisk(monkeypatch, samples_ok=5, meta_too=True)
    with pytest.raises(store.DiskFull) as err:
        runner.run(plan, out, measure_fn=fake_measure(), **QUIET)
    assert err.value.end_recorded is False
    assert str(err.value).endswith("5 samples are safely stored in " f"{out / 'samples.jsonl'}; free some space, then "
                                   "run the same command again to resume; the end of this session could not be "
                                   "written to meta.json either (the next run records it as stopped by a full disk)")
    assert "finished_at" not in sessions(out)[0]
    assert (out / ".space-reserve").stat().st_size == 0, "the empty reserve is the mark of a full disk"
    disk.freed()
    runner.run(plan, out, measure_fn=fake_measure(), **QUIET)
    first, second = sessions(out)
    assert first["interrupted"] is True
    assert first["ended"] == "error: the disk was full; the session could not record its end"
    assert second["ended"] == "finished" and not (out / ".space-reserve").exists()
    assert kept_ids(out) == sorted(s.sample_id for s in plan.schedule())


def test_a_full_disk_outside_the_store_stops_the_run_the_same_way(tmp_path):
    """ENOSPC from a fixture or a scratch file is not the sample's failure: the run stops."""
    plan, out = small_plan(), tmp_path / "r"
    m = fake_measure(fail=lambda cell, k: enospc() if k == 4 else None)
    with pytest.raises(store.DiskFull, match=r"^the disk is full: .*; 3 samples are safely stored in .*to resume$"):
        runner.run(plan, out, measure_fn=m, **QUIET)
    assert [r["status"] for r in ResultsStore(out).records()] == ["ok"] * 3, "no harness_error sample for it"
    assert sessions(out)[0]["ended"].startswith("error: the disk is full")


def test_a_full_scratch_directory_stops_the_run_naming_it_and_the_same_command_resumes(tmp_path, monkeypatch):
    """$TMPDIR full (where each sample's launcher result and output go): the launcher, unable to
    write its result, exits 3 with no word on stderr.  Every sample was stored as a final
    harness_error and the run finished; now the run stops, naming the scratch directory."""
    import tempfile
    import types

    from bench_src.run import measure as measure_module
    scratch, bin_dir = tmp_path / "scratch", tmp_path / "bin"
    scratch.mkdir()
    bin_dir.mkdir()
    (bin_dir / "benchlaunch").write_text("#!/bin/sh\nexit 3\n")  # as the launcher does on a full disk
    (bin_dir / "benchlaunch").chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    real_statvfs = os.statvfs

    def statvfs(path):
        st = real_statvfs(path)
        if not str(path).startswith(str(scratch)):
            return st
        return types.SimpleNamespace(f_bavail=0, f_bfree=0, f_frsize=st.f_frsize, f_files=st.f_files,
                                     f_favail=st.f_favail)

    monkeypatch.setattr(os, "statvfs", statvfs)
    plan, out = small_plan(), tmp_path / "r"
    before = fake_measure()

    def measure(cell, *a, **k):  # the scratch disk fills up after 5 samples
        if len(before.calls) < 5:
            return before(cell, *a, **k)
        return measure_module.measure(cell, *a, bin_dir=bin_dir, **k)

    with pytest.raises(store.DiskFull) as err:
        runner.run(plan, out, measure_fn=measure, **QUIET)
    assert str(err.value) == (
        f"the disk is full: no space left on the device holding {scratch} (writing a sample's scratch files: the "
        f"harness's temporary directory, TMPDIR); 5 samples are safely stored in {out / 'samples.jsonl'}; free some "
        "space there or set TMPDIR to a directory on a disk with room, then run the same command again to resume")
    assert [r["status"] for r in ResultsStore(out).records()] == ["ok"] * 5, "no harness_error sample for it"
    assert sessions(out)[0]["ended"] == f"error: {err.value.what}"
    assert not list(scratch.iterdir()), "the sample directory is removed"
    report = runner.run(plan, out, measure_fn=fake_measure(), **QUIET)  # space again: the same command resumes
    assert report.already_done == 5 and kept_ids(out) == sorted(s.sample_id for s in plan.schedule())


def test_a_full_disk_is_one_line_from_the_cli(tmp_path, monkeypatch, capsys):
    from bench_src.__main__ import main
    monkeypatch.setattr(build, "build", lambda *a, **k: {})
    real_run = runner.run
    monkeypatch.setattr(runner, "run", lambda *a, **k: real_run(*a, measure_fn=fake_measure(),
                                                                context=runner.NoContext(), **k))
    FullDisk(monkeypatch, samples_ok=3)
    out = tmp_path / "r"
    assert main(["run", "--no-progress", "--results-dir", str(out), "--plan", PLAN_TEXT]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"error: the disk is full: no space left on the device holding {out} (writing samples.jsonl); "
                       f"3 samples are safely stored in {out / 'samples.jsonl'}; free some space, then run the same "
                       "command again to resume")
    assert not any("Traceback" in line for line in err)


# --- a full disk before the start ---------------------------------------------------------------------
def test_check_refuses_a_full_disk_in_one_line_before_anything_is_built(tmp_path, monkeypatch, capsys):
    from bench_src.__main__ import main
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    FullDisk(monkeypatch, everything=True)
    out = tmp_path / "new" / "r"
    for cmd in ("check", "run"):
        assert main([cmd, "--results-dir", str(out), "--plan", PLAN_TEXT]) == 2
        err = capsys.readouterr().err.strip()
        assert err == (f"error: the disk is full: no space left on the device holding {out}; nothing was left "
                       "behind; free some space, then run the same command again"), err
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("where", ["lock", "reserve", "meta"])
def test_a_full_disk_at_the_start_leaves_nothing_behind(tmp_path, monkeypatch, where):
    """Past the check (the disk filled up meanwhile): the run stops at its first write and removes
    what it had made, up to the directories it created."""
    if where == "lock":
        monkeypatch.setattr(os, "pwrite", lambda *a: (_ for _ in ()).throw(enospc()))
    elif where == "reserve":
        monkeypatch.setattr(os, "posix_fallocate", lambda *a: (_ for _ in ()).throw(enospc()))
    else:
        FullDisk(monkeypatch, everything=True)
    out = tmp_path / "new" / "deeper" / "r"
    m = fake_measure()
    with pytest.raises(store.DiskFull) as err:
        runner.run(small_plan(), out, measure_fn=m, **QUIET)
    assert str(err.value).startswith(f"the disk is full: no space left on the device holding {out}")
    assert "nothing was left behind; free some space, then run the same command again" in str(err.value)
    assert m.calls == [] and not (tmp_path / "new").exists() and list(tmp_path.iterdir()) == []


def test_a_full_disk_when_resuming_changes_nothing(tmp_path, monkeypatch):
    plan, out = small_plan(), tmp_path / "r"
    runner.run(plan, out, measure_fn=fake_measure(fail=lambda cell, k: KeyboardInterrupt() if k == 6 else None),
               **QUIET)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    monkeypatch.setattr(os, "posix_fallocate", lambda *a: (_ for _ in ()).throw(enospc()))
    with pytest.raises(store.DiskFull, match="; 5 samples are safely stored in .*run the same command again to resume$"):
        runner.run(plan, out, measure_fn=fake_measure(), **QUIET)
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert after == before, "no session was opened: meta.json and the samples are as they were"


# --- a directory that is not a run of this package ------------------------------------------------
def test_a_directory_holding_other_files_is_refused_and_its_mode_kept(tmp_path, capsys):
    from bench_src.__main__ import main
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    (shared / "other_file").write_text("x\n")
    assert main(["check", "--results-dir", str(shared), "--plan", PLAN_TEXT]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: results_dir '{shared}' is not empty (other_file) and holds no meta.json: it is not a "
                   "results directory of this package, and nothing is written into it; give a new or empty "
                   "directory, or the directory of an earlier run")
    with pytest.raises(ValueError, match="is not empty .other_file. and holds no meta.json"):
        runner.run(small_plan(), shared, measure_fn=fake_measure(), **QUIET)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert sorted(p.name for p in shared.iterdir()) == ["other_file"]


@pytest.mark.parametrize("content", ['{"name": "my project"}', "{", "[]"])
def test_a_meta_json_that_is_no_runs_record_without_samples_is_refused_even_with_repair(tmp_path, capsys, content):
    from bench_src.__main__ import main
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "meta.json").write_text(content)
    (theirs / "notes.txt").write_text("important\n")
    before = {p.name: p.read_bytes() for p in theirs.iterdir()}
    for argv in (["check", "--results-dir", str(theirs), "--plan", PLAN_TEXT],
                 ["run", "--repair", "--results-dir", str(theirs), "--plan", PLAN_TEXT]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err == (f"error: results_dir '{theirs}' is not empty (meta.json, notes.txt) and holds a meta.json that "
                       "is not the record of a run and no samples: it is not a results directory of this package, "
                       "and nothing is written into it; give a new or empty directory, or the directory of an "
                       "earlier run"), err
    with pytest.raises(ValueError, match="holds a meta.json that is not the record of a run and no samples"):
        runner.run(small_plan(), theirs, measure_fn=fake_measure(), repair=True, **QUIET)
    assert main(["report", str(theirs)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {theirs / 'meta.json'} cannot be read: ") and err.endswith(
        f", and no samples.jsonl is beside it: {theirs} is not a results directory of this package, or one of a run "
        "that stored no sample; give the results directory of a run"), err  # a report needs a run's, not a new one
    assert {p.name: p.read_bytes() for p in theirs.iterdir()} == before, "nothing moved, nothing written"


def test_papermills_output_notebook_in_the_results_directory_is_named_in_the_refusal(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "out.ipynb").write_text("{}")  # papermill writes its output before the first cell runs
    with pytest.raises(ValueError) as err:
        runner.run(small_plan(), out, measure_fn=fake_measure(), **QUIET)
    assert str(err.value).endswith("; if it is papermill's output notebook of this run, write that outside "
                                   "results_dir or name it run.partial.ipynb (make run names it run.partial.<PID>.ipynb)"), str(err.value)
    (out / "notes.txt").write_text("x")
    with pytest.raises(ValueError) as err:
        runner.run(small_plan(), out, measure_fn=fake_measure(), **QUIET)
    assert "output notebook of this run" not in str(err.value), "a directory with other files is someone's"


def test_an_existing_empty_directory_keeps_its_mode_and_the_session_says_others_can_read_it(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    os.chmod(mine, 0o755)
    logged = []
    runner.run(small_plan(), mine, measure_fn=fake_measure(), progress=False, log=logged.append)
    assert stat.S_IMODE(mine.stat().st_mode) == 0o755, "a directory the harness did not create keeps its mode"
    for name in ("samples.jsonl", "meta.json"):
        assert stat.S_IMODE((mine / name).stat().st_mode) == 0o600, name
    note = sessions(mine)[0]["results_dir_access"]
    assert note.startswith(f"{mine} is mode 755, not private: other users can see the names of its files")
    assert f"note: {note}" in logged
    created = tmp_path / "created"
    runner.run(small_plan(), created, measure_fn=fake_measure(), **QUIET)
    assert stat.S_IMODE(created.stat().st_mode) == 0o700 and "results_dir_access" not in sessions(created)[0]
    # the report says so too (its Method, which report.html and method.md show), and says nothing for a private one
    from bench_src.report import full
    shown = full.describe_method(full.analyse(mine)).method
    assert f"### Results directory\n\nThe results directory was not private when the run wrote into it: {note}." in shown
    assert "Results directory" not in full.describe_method(full.analyse(created)).method


# --- an unreadable meta.json --------------------------------------------------------------------------
def test_a_truncated_meta_json_is_named_with_what_to_do_and_repair_rebuilds_it(tmp_path, monkeypatch, capsys):
    from bench_src.__main__ import main
    plan, out = small_plan(), tmp_path / "r"
    runner.run(plan, out, measure_fn=fake_measure(fail=lambda cell, k: KeyboardInterrupt() if k == 11 else None),
               **QUIET)
    samples_before = (out / "samples.jsonl").read_bytes()
    meta = out / "meta.json"
    with open(meta, "r+b") as f:
        f.truncate(500)
    expected = (f"{meta} cannot be read: it is not valid JSON (")
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    for argv in (["check", "--results-dir", str(out), "--plan", PLAN_TEXT],
                 ["run", "--results-dir", str(out), "--plan", PLAN_TEXT],
                 ["report", str(out)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and err.startswith(f"error: {expected}"), err
        assert "; it ends before the JSON does: the file was cut short. The samples are intact (10 lines in " in err
        assert err.endswith("To recover, put back a copy of meta.json, or run the same plan again with repair=True "
                            "(CLI: --repair): it rebuilds meta.json from the plan, keeps the samples and moves this "
                            "file to meta.json.corrupt"), err
    assert (out / "samples.jsonl").read_bytes() == samples_before

    m = fake_measure()
    # cut in its plan, meta.json holds no session whole: the binaries of the samples are unknown
    with pytest.raises(store.results.BinariesChanged, match=r"holds samples whose binaries are unknown: .*the "
                       r"record of session 1 was lost with an unreadable meta.json.*--new-binaries"):
        runner.run(plan, out, measure_fn=m, repair=True, **QUIET)
    assert m.calls == [] and meta.stat().st_size == 500 and not (out / "meta.json.corrupt").exists()
    report = runner.run(plan, out, measure_fn=m, repair=True, new_binaries=True, **QUIET)
    # 10 stored: 4 warm-ups, block 0 and half of block 1: the warm-ups again, block 1 whole, block 2
    assert report.already_done == 10 and report.taken == 4 + 4 + 4
    rebuilt = json.loads(meta.read_text())
    assert rebuilt["rebuilt"]["unreadable_copy"] == "meta.json.corrupt" and rebuilt["plan_digest"] == plan.digest
    assert (out / "meta.json.corrupt").stat().st_size == 500
    assert [s["session"] for s in rebuilt["sessions"]] == [1, 2], "the lost session keeps its number"
    assert rebuilt["sessions"][0]["ended"].startswith("unknown: its record was lost")
    assert {r["session"] for r in ResultsStore(out).records()} == {1, 2}


@pytest.mark.parametrize("content, why", [
    ("[]", "it is JSON but not a run's record (no plan or no sessions)"),
    ('{"plan": {}}', "it is JSON but not a run's record (no plan or no sessions)"),
    (b"\xff\xfe{", "it is not UTF-8 text"),
    ('{"plan": {}, "sessions": [}', "it is not valid JSON (Expecting value at line 1, column 27)"),
])
def test_other_unreadable_meta_json_is_named_too(tmp_path, content, why):
    plan, out = small_plan(), tmp_path / "r"
    runner.run(plan, out, measure_fn=fake_measure(), **QUIET)
    (out / "meta.json").write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(store.CorruptFile) as err:
        runner.run(plan, out, measure_fn=fake_measure(), **QUIET)
    assert str(err.value).startswith(f"{out / 'meta.json'} cannot be read: {why}. The samples are intact (16 lines")


def test_repair_rebuilds_meta_json_only_from_the_plan_of_its_samples(tmp_path):
    out = tmp_path / "r"
    runner.run(small_plan(), out, measure_fn=fake_measure(), **QUIET)
    (out / "meta.json").write_text("{")
    from bench_src.plan import make_plan
    other = make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=3, warmup=1, params={"sleep": {"work": 20}},
                      smoke=True)
    with pytest.raises(store.CorruptFile, match=r"cannot be rebuilt from this plan: .* holds 16 samples of other cells"):
        runner.run(other, out, measure_fn=fake_measure(), repair=True, **QUIET)
    assert (out / "meta.json").read_text() == "{", "nothing changes"


@pytest.mark.parametrize("change, field", [
    (lambda m: m["plan"].update(samples="lots"), "plan.samples is 'lots', not an integer"),
    (lambda m: m["plan"].update(ns="x"), "plan.ns is 'x', not a mapping"),
    (lambda m: m["plan"].update(workloads=["nope"]), "plan.workloads holds 'nope', not a workload of the catalogue"),
    (lambda m: m.update(sessions=[{"foo": 1}, 5]), "sessions[1] is 5, not a mapping"),
    # values no plan holds: they rebuilt into a plan, read as "a different plan" to a resume (even
    # with --repair) and failed in the report's int() with a traceback
    (lambda m: m["plan"]["ns"].update(sleep=["ten"]), "plan.ns.sleep holds 'ten', not an N of 1 to 1,000,000"),
    (lambda m: m["plan"]["ns"].update(sleep=[10.5]), "plan.ns.sleep holds 10.5, not an N of 1 to 1,000,000"),
    (lambda m: m["plan"]["params"]["sleep"]["go"].update(work=["abc"]), "plan.params.sleep.go.work = 'abc': expected"),
    # a session's fields that a resume or the report reads: a traceback in _changed ("'str' object has
    # no attribute 'get'"), or "error: could not convert string to float: 'abc'", naming nothing
    (lambda m: m["sessions"][0].update(binaries="x"), "sessions[0].binaries is 'x', not a mapping"),
    (lambda m: m["sessions"][0].update(sources=[1]), "sessions[0].sources is [1], not a mapping"),
    (lambda m: m["sessions"][0]["binaries"].update(gobench=5), "sessions[0].binaries.gobench is 5, not a sha256 digest"),
    (lambda m: m["sessions"][0].update(duration_s="abc"), "sessions[0].duration_s is 'abc', not a number of seconds"),
    (lambda m: m["sessions"][0].update(duration_s=-1), "sessions[0].duration_s is -1, not a number of seconds"),
    (lambda m: m["sessions"][0].update(engine=5), "sessions[0].engine is 5, not text"),
    (lambda m: m["sessions"][0].update(machine="x"), "sessions[0].machine is 'x', not a mapping"),
    (lambda m: m["sessions"][0].update(hosts={"h": 1}), "sessions[0].hosts.h is 1, not a mapping"),
    (lambda m: m["sessions"][0].update(session=[1]), "sessions[0].session is [1], not a session number"),
])
def test_garbage_inside_a_valid_meta_json_is_one_line_naming_the_field(tmp_path, monkeypatch, capsys, change, field):
    from bench_src.__main__ import main
    from bench_src.report import full
    plan, out = small_plan(), tmp_path / "r"
    runner.run(plan, out, measure_fn=fake_measure(), **QUIET)
    meta = json.loads((out / "meta.json").read_text())
    change(meta)
    (out / "meta.json").write_text(json.dumps(meta))
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    for argv in (["run", "--results-dir", str(out), "--plan", PLAN_TEXT], ["report", str(out)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and err.startswith(f"error: {out / 'meta.json'} cannot be read: {field}"), err
        assert "(CLI: --repair): it rebuilds meta.json from the plan" in err
    for call in (lambda: full.full_report(out), lambda: runner.run(plan, out, measure_fn=fake_measure(), **QUIET)):
        with pytest.raises(store.CorruptFile, match=re.escape(field)):
            call()
    assert not (out / "export").exists()
    # a session kept whole, or its binaries alone, tells them: else they are unknown, and a repair needs new_binaries
    unknown = field.startswith(("sessions[1] is 5", "sessions[0].binaries", "sessions[0].session"))
    if unknown:
        with pytest.raises(store.results.BinariesChanged, match="holds samples whose binaries are unknown"):
            runner.run(plan, out, measure_fn=fake_measure(), repair=True, **QUIET)
    report = runner.run(plan, out, measure_fn=fake_measure(), repair=True, new_binaries=unknown, **QUIET)
    assert report.already_done == len(plan.schedule()) and (out / "meta.json.corrupt").exists()
    rebuilt = json.loads((out / "meta.json").read_text())["rebuilt"]
    if not unknown:  # a bad field of the plan: session 1 kept whole; of a session: its digests alone
        assert rebuilt.get("recovered_sessions" if field.startswith("plan") else "recovered_digests_of_sessions") == [1]
    assert ResultsStore(out).read_plan() == plan


def test_text_that_is_not_json_is_not_called_cut_short(tmp_path):
    plan, out = small_plan(), tmp_path / "r"
    runner.run(plan, out, measure_fn=fake_measure(), **QUIET)
    (out / "meta.json").write_text("garbage {{{ not json")
    with pytest.raises(store.CorruptFile) as err:
        ResultsStore(out).read_meta()
    assert "it is not valid JSON (Expecting value at line 1, column 1). The samples" in str(err.value)
    assert "cut short" not in str(err.value)


@pytest.mark.parametrize("name", ["samples.jsonl", "meta.json"])
def test_a_directory_in_place_of_a_runs_file_is_one_line(tmp_path, monkeypatch, capsys, name):
    from bench_src.__main__ import main
    from bench_src.report import full
    plan, out = small_plan(), tmp_path / "r"
    runner.run(plan, out, measure_fn=fake_measure(), **QUIET)
    (out / name).unlink()
    (out / name).mkdir()
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    argvs = [["run", "--results-dir", str(out), "--plan", PLAN_TEXT]]
    if name == "samples.jsonl":
        argvs += [["report", str(out)], ["repair", str(out)]]
    for argv in argvs:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and err.startswith(f"error: {out / name} cannot be read: it is a directory"), err
    calls = [lambda: runner.run(plan, out, measure_fn=fake_measure(), **QUIET)]
    if name == "samples.jsonl":
        calls += [lambda: full.full_report(out), lambda: ResultsStore(out).load(), lambda: ResultsStore(out).repair()]
    for call in calls:
        with pytest.raises(store.CorruptFile, match="it is a directory"):
            call()


# --- a real full disk: a 48 KiB tmpfs, as in the report of the fault --------------------------------
@pytest.fixture
def small_tmpfs(tmp_path):
    with tmpfs.mounted(tmp_path / "disk", "48k", "the tests above inject ENOSPC instead") as disk:
        yield disk


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "bench_src", *args], capture_output=True, text=True, timeout=600,
                          env=env)


# the plan of the report of the fault, its tasks sleeping 0 ms (the disk fills as fast; the runs end sooner)
ISSUE_PLAN = "{workloads: [sleep], ns: [10, 100], samples: 8, smoke: true, params: {sleep: {work: 0}}}"


@pytest.mark.slow
def test_a_real_full_disk_mid_run_then_the_same_command_resumes(built, small_tmpfs):
    out = small_tmpfs / "r"
    first = cli("run", "--no-progress", "--plan", ISSUE_PLAN, "--results-dir", str(out))
    lines = first.stderr.strip().splitlines()
    assert first.returncode == 2 and "Traceback" not in first.stderr, first.stderr[-3000:]
    assert lines[-1].startswith(f"error: the disk is full: no space left on the device holding {out} (writing ")
    stored = int(lines[-1].split("; ")[1].split()[0])
    assert lines[-1].endswith(f"; {stored} samples are safely stored in {out / 'samples.jsonl'}; free some space, "
                              "then run the same command again to resume")
    assert 0 < stored == len((out / "samples.jsonl").read_text().splitlines())
    assert sessions(out)[0]["ended"].startswith("error: the disk is full")

    subprocess.run(["mount", "-o", "remount,size=4m", str(small_tmpfs)], check=True)
    second = cli("run", "--no-progress", "--plan", ISSUE_PLAN, "--results-dir", str(out))
    assert second.returncode == 0, second.stderr[-2000:]
    # the samples of the block the full disk cut are taken again whole: the rest are kept
    again = re.search(r"\((\d+) of them again: their blocks, left incomplete, were taken whole\)", second.stdout)
    assert f"{stored - (int(again.group(1)) if again else 0)} kept from before" in second.stdout, second.stdout
    from bench_src.plan import make_plan
    plan = make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=8, smoke=True, params={"sleep": {"work": 0}})
    assert kept_ids(out) == sorted(s.sample_id for s in plan.schedule())
    first_session, second_session = sessions(out)
    assert first_session["ended"].startswith("error: the disk is full") and second_session["ended"] == "finished"


@pytest.mark.slow
def test_a_real_full_disk_before_the_start_is_one_line_and_leaves_nothing(built, small_tmpfs):
    with open(small_tmpfs / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    out = small_tmpfs / "r"
    for cmd in ("check", "run"):
        proc = cli(cmd, "--plan", ISSUE_PLAN, "--results-dir", str(out))
        assert proc.returncode == 2 and proc.stderr == (
            f"error: the disk is full: no space left on the device holding {out}; nothing was left behind; free "
            "some space, then run the same command again\n"), proc.stderr
        assert not out.exists()


@pytest.mark.slow
def test_a_real_full_tmpdir_stops_the_run_in_one_line_naming_it_then_the_same_command_resumes(built, small_tmpfs,
                                                                                                tmp_path):
    """TMPDIR on a filled tmpfs, the results directory elsewhere, as in the report of the fault: every
    sample was `harness_error: ... the launcher failed (exit 3): no message on stderr`, the run
    ended with exit 0, and the same command then found every sample taken."""
    with open(small_tmpfs / "filler", "wb") as f:
        f.write(b"\0" * (40 * 1024))
    out, env = tmp_path / "r", {**os.environ, "TMPDIR": str(small_tmpfs)}
    first = cli("run", "--no-progress", "--plan", ISSUE_PLAN, "--results-dir", str(out), env=env)
    assert first.returncode == 2 and "Traceback" not in first.stderr, first.stderr[-3000:]
    assert first.stderr.strip().splitlines()[-1] == (
        f"error: the disk is full: no space left on the device holding {small_tmpfs} (writing a sample's scratch "
        "files: the harness's temporary directory, TMPDIR); no sample is stored; free some space there or set TMPDIR "
        "to a directory on a disk with room, then run the same command again"), first.stderr[-2000:]
    assert not (out / "samples.jsonl").exists() or not (out / "samples.jsonl").read_text()
    (small_tmpfs / "filler").unlink()
    second = cli("run", "--no-progress", "--plan", ISSUE_PLAN, "--results-dir", str(out), env=env)
    assert second.returncode == 0, second.stderr[-2000:]
    assert {r["status"] for r in ResultsStore(out).records()} == {"ok"}
    assert sessions(out)[-1]["ended"] == "finished"


def test_make_runs_partial_notebook_named_by_its_pid_is_a_runs_own_file(tmp_path):
    """`make run` writes its notebook as run.partial.<PID>.ipynb before the first sample: the run
    takes the directory as its own; any other name there is someone else's."""
    from bench_src.store.directory import foreign_entries
    out = tmp_path / "r"
    out.mkdir()
    (out / "run.partial.4242.ipynb").write_text("{}")
    assert foreign_entries(out) == []
    runner.run(small_plan(), out, measure_fn=fake_measure(), **QUIET)
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "run.partial.x.ipynb").write_text("{}")
    assert foreign_entries(tmp_path / "s") == ["run.partial.x.ipynb"]


def test_check_refuses_a_disk_with_a_block_free_but_not_what_the_run_writes_before_its_first_sample(
        small_tmpfs, monkeypatch, capsys):
    """check's probe wrote one block: with a few KiB free it passed, the run then stopped at its
    start, and `make run` built both programs and died writing its notebook.  check and run now
    claim what a run writes before its first sample (space.start_bytes) and refuse the same disk."""
    from bench_src.__main__ import main
    from bench_src.store.space import start_bytes
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    with open(small_tmpfs / "filler", "wb") as f:
        f.write(b"\0" * (36 * 1024))
    free = os.statvfs(small_tmpfs).f_bavail * os.statvfs(small_tmpfs).f_frsize
    assert 4096 < free < start_bytes(len(PLAN_TEXT)), free
    out = small_tmpfs / "r"
    for cmd in ("check", "run"):
        assert main([cmd, "--results-dir", str(out), "--plan", PLAN_TEXT]) == 2
        assert capsys.readouterr().err.startswith(f"error: the disk is full: no space left on the device holding {out}")
    assert sorted(p.name for p in small_tmpfs.iterdir()) == ["filler"], "the probe is not left behind"
    (small_tmpfs / "filler").unlink()
    assert main(["check", "--results-dir", str(out), "--plan", PLAN_TEXT]) == 0


def test_a_path_too_long_for_the_file_system_is_one_line(tmp_path, capsys, monkeypatch):
    from bench_src.__main__ import main
    from bench_src.report import hosts_report
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    long = tmp_path / ("a" * 300)
    assert main(["check", "--plan", PLAN_TEXT, "--results-dir", str(long)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "cannot be used: File name too long; give a shorter path" in err, err
    with pytest.raises(ValueError, match="give --out a shorter path"):
        hosts_report.refuse_foreign(long)


def test_a_dangling_link_as_the_results_directory_is_refused_before_the_build(tmp_path, capsys, monkeypatch):
    # check passed it, then `make run` built, failed to mkdir, and ran the notebook with an empty path
    from bench_src.__main__ import main
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    for cmd in ("check", "run"):
        assert main([cmd, "--plan", PLAN_TEXT, "--results-dir", str(link)]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "is a link to" in err and "which does not exist" in err, err


@pytest.mark.parametrize("name", [".lock", "samples.jsonl"])
def test_a_runs_file_that_cannot_be_written_is_refused_by_check_before_the_build(tmp_path, capsys, monkeypatch, name):
    """A .lock or samples.jsonl of mode 000 passed `check`; `run` then failed after the build with a
    traceback, and recorded a session in meta.json.  (Root writes whatever the mode: the refusal is
    simulated where the file is opened.)"""
    from bench_src.__main__ import main
    out = tmp_path / "r"
    runner.run(small_plan(), out, measure_fn=fake_measure(), **QUIET)
    real_open = os.open

    def refusing(path, flags, *args, **kwargs):
        if os.fspath(path) == os.fspath(out / name) and flags & (os.O_WRONLY | os.O_RDWR):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    before = (out / "meta.json").read_bytes()
    assert main(["check", "--plan", PLAN_TEXT, "--results-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"its {name} cannot be written (Permission denied)" in err, err
    assert (out / "meta.json").read_bytes() == before


def test_a_repair_on_a_full_disk_is_one_line_and_moves_nothing_twice(tmp_path, capsys, monkeypatch):
    """`repair` on a full disk gave a traceback, and each attempt appended the same bad line to
    samples.rejected.jsonl again; the copies then counted as found samples and hid lost ones."""
    from bench_src.__main__ import main
    out = tmp_path / "r"
    runner.run(small_plan(), out, measure_fn=fake_measure(), **QUIET)
    path = out / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(4, "garbage\n")
    path.write_text("".join(lines))
    before = path.read_bytes()
    real = results_module._write_private

    def full(target, text):
        if target == path:
            raise enospc()
        return real(target, text)

    monkeypatch.setattr(results_module, "_write_private", full)
    for _ in range(2):
        assert main(["repair", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "error: " in err and "disk" in err.lower(), err
        assert path.read_bytes() == before
        assert not (out / "samples.rejected.jsonl").exists() or not (out / "samples.rejected.jsonl").read_text()
    monkeypatch.setattr(results_module, "_write_private", real)
    assert main(["repair", str(out)]) == 0
    assert len((out / "samples.rejected.jsonl").read_text().splitlines()) == 1


def test_a_name_too_long_under_a_directory_still_to_be_made_is_refused_by_check(tmp_path, capsys, monkeypatch):
    # stat says "no such file" before "too long" under a missing parent: check passed, the run built
    # and then failed with a traceback, leaving the parent behind
    from bench_src.__main__ import main
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    target = tmp_path / "new" / ("b" * 300) / "c"
    assert main(["check", "--plan", PLAN_TEXT, "--results-dir", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "has 300 bytes, more than the 255 its file system allows" in err, err
    assert not (tmp_path / "new").exists()
