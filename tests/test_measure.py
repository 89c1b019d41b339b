"""The launcher measures the child exactly, whatever the size of the harness."""
import dataclasses
import json
import os
import re
import subprocess
import sys

import pytest

from bench_src.run.measure import measure, run_launched
from bench_src.catalogue import WORKLOADS
from bench_src.plan import Cell

pytestmark = pytest.mark.slow
TOUCH_200MB = "b = bytearray(200 * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1\n"


def test_a_small_program_is_measured_small_from_a_500mb_parent(built):
    ballast = bytearray(500 * 1024 * 1024)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1  # make it resident
    cell = Cell("sleep", "go", "waitgroup", 10, 1, (("kernel", "xorshift"), ("work", "10")))
    rec = measure(cell, timeout_s=30, mem_limit_mb=4096)
    assert rec["status"] == "ok", rec["reason"]
    assert rec["maxrss_kb"] < 30 * 1024, f"{rec['maxrss_kb']} KiB: the parent's 500 MB leaked into the child"
    del ballast


def test_200mb_program_agrees_with_gnu_time(built):
    launched, _, _ = run_launched([sys.executable, "-c", TOUCH_200MB], timeout_s=60, mem_limit_mb=4096)
    gnu = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-c", TOUCH_200MB],
                         capture_output=True, text=True, check=True)
    gnu_kb = int(re.findall(r"^(\d+)$", gnu.stderr, re.M)[-1])
    assert launched["maxrss_kb"] > 200 * 1024
    assert abs(launched["maxrss_kb"] - gnu_kb) / gnu_kb < 0.05, (launched["maxrss_kb"], gnu_kb)


def test_timeout_becomes_a_timeout_sample(built):
    launched, _, _ = run_launched(["sleep", "5"], timeout_s=0.3, mem_limit_mb=1024)
    assert launched["killed_by"] == "timeout" and launched["signal"] == 9
    assert 0.25e9 < launched["wall_ns"] < 2e9


def test_memory_guard_kills_a_growing_program(built):
    launched, _, _ = run_launched([sys.executable, "-c", TOUCH_200MB + "import time; time.sleep(5)"],
                                  timeout_s=30, mem_limit_mb=100)
    assert launched["killed_by"] == "memory_limit"


def test_a_peak_above_the_limit_between_two_reads_of_the_guard_is_a_memory_limit_too(built):
    # a program that ends within milliseconds is never read by the guard (every 20 ms): with a 1 MiB
    # limit its exact peak, a few MiB, passed it all the same; it was stored as ok beside samples of
    # the same cell that the guard had caught
    cell = Cell("cpu_loops", "rust", "plain", 100, None, (("inner", "1000"), ("u", "10")))
    for _ in range(3):
        rec = measure(cell, timeout_s=30, mem_limit_mb=1)
        assert rec["maxrss_kb"] > 1024 and rec["status"] == "memory_limit", (rec["status"], rec["reason"])
        assert "memory limit of 1 MiB" in rec["reason"]


def test_failed_program_is_recorded_with_its_message(built):
    cell = Cell("sleep", "rust", "join-handles", 10, None, (("kernel", "nosuch"), ("work", "1")))
    rec = measure(cell, timeout_s=30, mem_limit_mb=1024)
    assert rec["status"] == "failed"
    assert rec["exit_code"] == 2 and "nosuch" in rec["reason"]


def test_ok_sample_has_times_memory_and_checksum(built):
    cell = Cell("cpu_loops", "rust", "plain", 100, None, (("inner", "1000"), ("u", "10")))
    rec = measure(cell, timeout_s=30, mem_limit_mb=1024)
    assert rec["status"] == "ok", rec["reason"]
    assert rec["checksum"] == "000000000006ee38"  # 100 elements of 0x11be
    assert rec["wall_ns"] >= rec["elapsed_ns"] > 0
    assert rec["maxrss_kb"] > 0 and rec["user_ns"] >= 0 and rec["nvcsw"] >= 0


def test_the_timeline_sampler_does_not_change_the_exact_peak(built):
    prog = [sys.executable, "-c", TOUCH_200MB + "import time; time.sleep(0.3)"]
    plain = [run_launched(prog, timeout_s=60, mem_limit_mb=4096)[0]["maxrss_kb"] for _ in range(3)]
    sampled = [run_launched(prog, timeout_s=60, mem_limit_mb=4096, timeline_ms=10)[0] for _ in range(3)]
    for s in sampled:
        assert len(s["timeline"]) >= 20, "10 ms sampling over at least 0.3 s"
        times = [t for t, _ in s["timeline"]]
        assert times == sorted(times) and s["start_mono_ns"] <= times[0] <= s["end_mono_ns"]
        assert max(r for _, r in s["timeline"]) <= s["maxrss_kb"] * 1024 * 1.02
    base = sorted(plain)[1]
    for s in sampled:
        assert abs(s["maxrss_kb"] - base) / base < 0.02, (s["maxrss_kb"], plain)


def test_the_result_key_schema_feeds_the_sample_record():
    """result_keys.json is the one list of the programs' standard keys: every key it stores as a
    column is a column of the samples frame, and the other standard keys stay out of `extra`."""
    from bench_src.run import measure as m
    from bench_src.store.frame import COLUMNS

    assert {"elapsed_ns", "checksum", "tasks_ok", "threads"} <= set(m.PROGRAM_KEYS)
    assert set(m.PROGRAM_KEYS) <= set(COLUMNS)
    assert {"lang", "workload", "variant", "n", "params", "runtime"} == set(m.HELD_ELSEWHERE)
    for spec in m.RESULT_KEYS:
        assert set(spec) == {"key", "type", "required", "stored", "meaning"}, spec
        assert spec["type"] in ("string", "integer", "object", "array") and spec["meaning"], spec
        assert spec["stored"] in ("column", "cell", "runtime", "extra"), spec


@pytest.mark.parametrize("lang", ["go", "rust"])
def test_the_launcher_pins_the_program_to_the_cpus_it_is_given(built, lang):
    """--cpus sets the program's affinity mask before exec: the program itself reports exactly
    that CPU set, and the sample keeps it in its `cpus` column; a cell of a plan with `cores` runs
    on exactly that many CPUs with as many threads, as the program itself reports."""
    from bench_src import paths

    cmd = [str(paths.program(lang)), "sleep", "--n", "3", "--threads", "1", "--param", "work=0"]
    allowed = sorted(os.sched_getaffinity(0))
    for cpu in allowed[:2]:
        launched, stdout, stderr = run_launched(cmd, timeout_s=30, mem_limit_mb=1024, cpus=str(cpu))
        assert launched["exit_code"] == 0, stderr
        assert json.loads(stdout.strip().splitlines()[-1])["cpus"] == [cpu]
    _, stdout, _ = run_launched(cmd, timeout_s=30, mem_limit_mb=1024)
    assert json.loads(stdout.strip().splitlines()[-1])["cpus"] == allowed
    cell = Cell("sleep", lang, WORKLOADS["sleep"].default_variant(lang), 3, 1, (("kernel", "xorshift"), ("work", "0")))
    rec = measure(cell, timeout_s=30, mem_limit_mb=1024)
    assert rec["status"] == "ok", rec["reason"]
    assert rec["cpus"] == ",".join(map(str, allowed))
    for k in range(1, min(len(allowed), 2) + 1):
        pinned = dataclasses.replace(cell, threads=k, cores=k)
        rec = measure(pinned, timeout_s=30, mem_limit_mb=1024)
        assert rec["status"] == "ok", rec["reason"]
        assert rec["cpus"] == ",".join(map(str, allowed[:k])) and rec["threads"] == k, rec
        assert "--threads " + str(k) in rec["command"]


@pytest.mark.parametrize("cpus", ["x", "1-0", "0,", "99999"])
def test_a_bad_cpu_list_is_refused_with_one_line(built, cpus):
    with pytest.raises(RuntimeError, match=rf"--cpus.*'?{cpus}"):
        run_launched(["true"], timeout_s=5, mem_limit_mb=64, cpus=cpus)


def test_a_crash_is_recorded_with_the_line_that_says_why_not_the_last_of_its_dump():
    from bench_src.run.measure import failure_line
    dump = "SIGABRT: abort\nPC=0x47a1c1 m=0 sigcode=0\n\ngoroutine 1 [sleep]:\nmain.main()\n\trax    0x0\n\tgs     0x0\n"
    assert failure_line(dump) == "SIGABRT: abort"
    assert failure_line("fatal error: failed to reserve page summary memory\n\nruntime stack:\n"
                        "runtime/asm_amd64.s:373 +0x123 fp=0x7ffd\n") == \
        "fatal error: failed to reserve page summary memory"
    assert failure_line("panic: runtime error: index out of range [3] with length 3\n\ngoroutine 7 [running]:\n"
                        "main.f()\n\t/src/main.go:9 +0x1d\nexit status 2\n") == \
        "panic: runtime error: index out of range [3] with length 3"
    assert failure_line("gobench: error: open 2.txt: no such file or directory\n") == \
        "gobench: error: open 2.txt: no such file or directory"
    assert failure_line("") == ""


def test_a_go_program_that_crashes_is_recorded_with_its_runtime_s_first_line(built):
    """SIGABRT makes the Go runtime print "SIGABRT: abort", the registers and every goroutine's
    stack, and exit 2: the reason is that first line."""
    import threading
    import time

    import psutil

    cell = Cell("idle_tasks", "go", "goroutine", 10, None,
                (("duration_ms", "5000"), ("linger_ms", "0"), ("wait", "sleep")))

    def abort_the_program():
        deadline = time.time() + 20
        while time.time() < deadline:  # this test's own program only: other tests run programs too
            for p in psutil.Process().children(recursive=True):
                try:
                    if p.name() == "gobench":
                        time.sleep(0.3)
                        p.send_signal(6)
                        return
                except psutil.Error:
                    continue
            time.sleep(0.05)

    killer = threading.Thread(target=abort_the_program)
    killer.start()
    rec = measure(cell, timeout_s=30, mem_limit_mb=1024)
    killer.join()
    assert rec["status"] == "failed" and rec["exit_code"] == 2, rec
    assert rec["reason"] == "exit 2: SIGABRT: abort", rec["reason"]


def test_a_hung_launcher_is_killed_and_said_to_be(built, monkeypatch):
    import signal
    import threading
    import time

    import psutil

    from bench_src.run import measure as m
    monkeypatch.setattr(m, "LAUNCHER_GRACE_S", 1)

    def stop_the_launcher():
        deadline = time.time() + 10
        while time.time() < deadline:
            for p in psutil.Process().children():
                if p.name() == "benchlaunch":
                    p.send_signal(signal.SIGSTOP)
                    return
            time.sleep(0.02)

    stopper = threading.Thread(target=stop_the_launcher)
    stopper.start()
    with pytest.raises(RuntimeError, match=r"^the launcher did not finish within 1.5 s \(the sample's timeout plus 1 s\) "
                                           r"and was killed$"):
        m.run_launched(["sleep", "2"], timeout_s=0.5, mem_limit_mb=1024)
    stopper.join()


# --- waits that were not waited, and the programs' environment ------------------------------------
def _wrapped_go(tmp_path, body: str):
    """A bin directory whose gobench runs the real one and then `body` (Python, with `line`: its result
    as a dict), printing the result line it leaves: a program that does what gobench does, less."""
    from bench_src import paths

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "benchlaunch").symlink_to(paths.launcher())
    script = bin_dir / "gobench"
    script.write_text(f"#!{sys.executable}\nimport json, os, subprocess, sys\n"
                      f"out = subprocess.run([{str(paths.program('go'))!r}] + sys.argv[1:], capture_output=True, "
                      "text=True, check=True).stdout\nline = json.loads(out.strip().splitlines()[-1])\n"
                      f"{body}\nprint(json.dumps(line))\n")
    script.chmod(0o755)
    return bin_dir


def test_a_sleep_sample_shorter_than_its_longest_sleep_is_too_fast_whatever_its_checksum(built, tmp_path):
    # a gobench without its time.Sleep printed the checksum of one that slept (the checksum adds the
    # sleeps asked for) and was stored as ok in 158 ms, where its longest sleep is 299 ms
    cell = Cell("sleep", "go", "waitgroup", 1000, 2, (("kernel", "xorshift"), ("work", "10")))
    honest = measure(cell, timeout_s=30, mem_limit_mb=1024)
    assert honest["status"] == "ok", honest["reason"]
    assert honest["elapsed_ns"] >= 299_000_000
    hurried = measure(cell, timeout_s=30, mem_limit_mb=1024,
                      bin_dir=_wrapped_go(tmp_path, "line['elapsed_ns'] = 158_000_000"))
    assert hurried["checksum"] == honest["checksum"]
    assert hurried["status"] == "too_fast"
    assert hurried["reason"] == ("workload time 158.000 ms, below the longest wait the work asks for (299 ms): "
                                 "not every task waited as the work says")


def test_the_least_time_of_each_waiting_workload_is_its_longest_wait():
    from bench_src.catalogue import least_elapsed_ns
    from bench_src.run.measure import waited
    from tests.reference import lcg

    for n in (1, 2, 10, 100, 5000):
        assert least_elapsed_ns("sleep", n, {}) == max(x % 300 for x in lcg(42, n)) * 1_000_000
    # threads_vs_tasks at N = 100, iterations = 100: 198.353 ms (the spec's 198.4) + 100 x 10 ms
    assert least_elapsed_ns("threads_vs_tasks", 100, {"iterations": "100"}) == 1_198_353_000
    assert least_elapsed_ns("threads_vs_tasks", 100, {}) == 1_198_353_000  # the default, 100
    assert least_elapsed_ns("idle_tasks", 10, {"wait": "sleep", "duration_ms": "3000"}) == 3_000_000_000
    assert least_elapsed_ns("idle_tasks", 10, {"wait": "release", "duration_ms": "3000"}) is None
    assert least_elapsed_ns("files_read", 10, {}) is None and least_elapsed_ns("cpu_loops", 10, {}) is None
    cell = Cell("idle_tasks", "rust", "spawn", 10, 2, (("duration_ms", "3000"), ("linger_ms", "0"), ("wait", "sleep")))
    assert waited(cell, 2_999_999_999)[0] == "too_fast"
    assert waited(cell, 3_000_000_000) == ("ok", "")
    assert waited(cell, None) == ("ok", "")  # no workload time: bad_output says so, not this


def test_the_programs_run_without_the_variables_that_change_a_runtime_or_the_allocator(built, tmp_path,
                                                                                       monkeypatch):
    # MALLOC_MMAP_THRESHOLD_=0 in a user's shell made Rust's files_read 4x slower and 3x larger
    # while Go's allocator did not read it; nothing in meta.json said it was set
    from bench_src.run import machine
    from bench_src.run.measure import default_env, is_runtime_variable

    for var in [k for k in os.environ if is_runtime_variable(k)]:  # a worker's own (a nanny's MALLOC_*)
        monkeypatch.delenv(var)
    for var, value in (("MALLOC_MMAP_THRESHOLD_", "0"), ("MALLOC_ARENA_MAX", "1"), ("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0"),
                       ("RUST_MIN_STACK", "65536"), ("LD_PRELOAD", ""), ("GOGC", "off"), ("TOKIO_WORKER_THREADS", "1")):
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("BENCH_KEPT", "yes")
    env = default_env()
    assert "BENCH_KEPT" in env and not any(k.startswith("MALLOC_") for k in env)
    assert not {"GLIBC_TUNABLES", "RUST_MIN_STACK", "LD_PRELOAD", "GOGC", "TOKIO_WORKER_THREADS"} & set(env)
    assert machine.describe()["runtime_variables_removed"] == [
        "GLIBC_TUNABLES", "GOGC", "LD_PRELOAD", "MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "RUST_MIN_STACK",
        "TOKIO_WORKER_THREADS"]
    # and the program itself sees none of them
    seen = tmp_path / "env.json"
    cell = Cell("cpu_loops", "go", "plain", 10, 1, (("inner", "10"), ("u", "10")))
    rec = measure(cell, timeout_s=30, mem_limit_mb=1024,
                  bin_dir=_wrapped_go(tmp_path, f"open({str(seen)!r}, 'w').write(json.dumps(sorted(os.environ)))"))
    assert rec["status"] == "ok", rec["reason"]
    names = json.loads(seen.read_text())
    assert "BENCH_KEPT" in names and not [n for n in names if n.startswith("MALLOC_") or n in (
        "GLIBC_TUNABLES", "RUST_MIN_STACK", "LD_PRELOAD", "GOGC", "TOKIO_WORKER_THREADS")]


# --- a full scratch disk ($TMPDIR) --------------------------------------------------------------------
@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """TMPDIR (where a sample's scratch files go) in tmp_path/"scratch" (`scratch.dir`);
    `scratch.full(True)` makes its disk look full to os.statvfs, as a filled tmpfs does."""
    import tempfile
    import types

    from bench_src.run import measure as m

    d = tmp_path / "scratch"
    d.mkdir()
    m.remove_sample_dirs()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    real, state = os.statvfs, {"full": False}

    def statvfs(path):
        st = real(path)
        if not (state["full"] and str(path).startswith(str(d))):
            return st
        return types.SimpleNamespace(f_bavail=0, f_bfree=0, f_frsize=st.f_frsize, f_files=st.f_files,
                                     f_favail=st.f_favail)

    monkeypatch.setattr(os, "statvfs", statvfs)
    yield types.SimpleNamespace(dir=d, full=lambda on: state.update(full=on))
    m.remove_sample_dirs()


def _fake_bin(tmp_path, launcher: str | None = None, gobench: str | None = None):
    """A bin directory with the real launcher and gobench, or scripts (sh) in their place."""
    from bench_src import paths

    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(parents=True)
    for name, script, real in (("benchlaunch", launcher, paths.launcher()), ("gobench", gobench, paths.program("go"))):
        if script is None:
            (bin_dir / name).symlink_to(real)
        else:
            (bin_dir / name).write_text(f"#!/bin/sh\n{script}\n")
            (bin_dir / name).chmod(0o755)
    return bin_dir


SLEEP_CELL = Cell("sleep", "go", "waitgroup", 10, 1, (("kernel", "xorshift"), ("work", "0")))


def test_a_launcher_that_cannot_write_its_result_on_a_full_scratch_disk_is_a_full_disk(tmp_path, scratch):
    # every sample became `harness_error: the launcher failed (exit 3): no message on stderr`, a final
    # status, and the run finished as if nothing were wrong
    from bench_src.store import is_disk_full

    bin_dir = _fake_bin(tmp_path, launcher="exit 3")  # what benchlaunch does when it cannot write its result
    scratch.full(True)
    with pytest.raises(OSError) as err:
        measure(SLEEP_CELL, timeout_s=30, mem_limit_mb=1024, bin_dir=bin_dir)
    assert is_disk_full(err.value) and err.value.filename == str(scratch.dir), err.value
    assert "the launcher could not write its result" in str(err.value)
    scratch.full(False)  # with room, exit 3 is the launcher's own failure, as before
    with pytest.raises(RuntimeError, match=r"^the launcher failed \(exit 3\): no message on stderr$"):
        measure(SLEEP_CELL, timeout_s=30, mem_limit_mb=1024, bin_dir=bin_dir)


def test_a_program_output_cut_short_on_a_full_scratch_disk_is_a_full_disk(built, tmp_path, scratch):
    from bench_src.store import is_disk_full

    bin_dir = _fake_bin(tmp_path, gobench="printf '{\"elapsed_ns\": 12'")  # its result line cut short
    scratch.full(True)
    with pytest.raises(OSError) as err:
        measure(SLEEP_CELL, timeout_s=30, mem_limit_mb=1024, bin_dir=bin_dir)
    assert is_disk_full(err.value) and err.value.filename == str(scratch.dir)
    assert "the program's output came out missing or cut short" in str(err.value)
    scratch.full(False)
    rec = measure(SLEEP_CELL, timeout_s=30, mem_limit_mb=1024, bin_dir=bin_dir)
    assert rec["status"] == "bad_output", rec
    scratch.full(True)  # a whole result line is no sign of a full disk
    rec = measure(SLEEP_CELL, timeout_s=30, mem_limit_mb=1024)
    assert rec["status"] == "ok", rec["reason"]


def test_a_scratch_disk_is_full_by_its_free_counts_or_by_a_quota(tmp_path, monkeypatch):
    import errno

    from bench_src.run.measure import SCRATCH_LEAST_BYTES, scratch_full
    assert os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize > SCRATCH_LEAST_BYTES
    assert scratch_full(tmp_path) is False and list(tmp_path.iterdir()) == []

    def over_quota(fd, offset, length):
        raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))

    monkeypatch.setattr(os, "posix_fallocate", over_quota)  # the free counts do not show a quota
    assert scratch_full(tmp_path) is True and list(tmp_path.iterdir()) == [], "the probe is removed"


def test_a_program_killed_by_a_signal_keeps_the_line_it_printed_on_stderr(built, tmp_path):
    # a Rust allocation failure prints "memory allocation of 256 bytes failed" and aborts: the reason
    # was only "terminated by signal 6"
    bin_dir = _fake_bin(tmp_path, gobench="echo 'memory allocation of 256 bytes failed' >&2\nkill -ABRT $$")
    rec = measure(SLEEP_CELL, timeout_s=30, mem_limit_mb=1024, bin_dir=bin_dir)
    assert rec["status"] == "killed" and rec["signal"] == 6, rec
    assert rec["reason"] == "terminated by signal 6: memory allocation of 256 bytes failed", rec["reason"]
    silent = _fake_bin(tmp_path / "silent", gobench="kill -ABRT $$")  # nothing on stderr: the signal alone
    rec = measure(SLEEP_CELL, timeout_s=30, mem_limit_mb=1024, bin_dir=silent)
    assert rec["status"] == "killed" and rec["reason"] == "terminated by signal 6", rec["reason"]
