"""One plan on several hosts through Dask distributed: a LocalCluster started by the tests, the real
programs.  Blocks stay whole on one host, a host lost mid-block costs nothing but a re-run of that
block, programs that are not the session's are refused (and missing ones shipped), and the
default, in-process path imports nothing of Dask."""
import gc
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import psutil
import pytest
import tmpfs

from bench_src.cluster_spec import ClusterError, ClusterSpec, parse_cluster
from bench_src.plan import make_plan
from bench_src.run import runner
from bench_src.run.engines import engines_take_blocks
from bench_src.run.keeper import SampleKeeper
from bench_src.run.progress import Progress
from bench_src.store import ResultsStore, current_attempts, hosts as store_hosts
from report_data import alive_extra

ROOT = Path(__file__).resolve().parent.parent
two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a local cluster of 2 hosts needs 2 CPUs")
# A resumed run's client registers its watch in the killed client's place, under the same name
# (run/cluster/watch.py), which distributed's scheduler says in a warning.
WATCH_REPLACED = pytest.mark.filterwarnings(
    "ignore:Scheduler already contains a plugin with name bench-client-watch")


@pytest.fixture(autouse=True)
def dask_scratch_in_tmp_path(tmp_path):
    """The tests' own clusters stand for a user's: their workers keep Dask's scratch space in the
    test's directory, not in the machine's temporary directory (the package's own local clusters
    choose theirs in `engine`)."""
    import dask

    with dask.config.set({"temporary-directory": str(tmp_path / "dask")}):
        yield


def small_plan(samples=6, warmup=1, threads=1):
    # sleep: each task sleeps lcg(42)[i] % 300 ms, so a block of 4 samples takes about a second;
    # threads=1: each host of a local cluster of 2 has one CPU
    return make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=samples, warmup=warmup,
                     params={"sleep": {"work": 0}}, threads=threads)


def run(plan, directory, cluster, **kw):
    logs = []
    report = runner.run(plan, directory, progress=False, cluster=cluster, log=logs.append, **kw)
    return report, logs


def measured(records):
    return [r for r in records if r["phase"] == "measured"]


def hosts_without_a_cluster(plan, done=()):
    """A cluster engine with no cluster behind it, for its bookkeeping alone: the records it would
    store land in `stored`; `block` is the plan's first measured block."""
    from bench_src.run.cluster import engine

    stored = []
    store = SimpleNamespace(run_id="r", session=1)
    hosts = engine.Hosts(ClusterSpec("local", workers=1), plan, store, lambda slot, rec, tl: stored.append(rec),
                         set(done), lambda *_: None)
    block = [(i, s) for i, s in enumerate(plan.schedule()) if s.phase == "measured" and s.block == 0]
    return hosts, stored, block


# --- the parameter ------------------------------------------------------------------------------

def test_cluster_values_read_and_refused_with_what_is_allowed():
    assert parse_cluster(None) is None and parse_cluster("None") is None and parse_cluster(" None ") is None
    assert parse_cluster("local:2", usable=2) == ClusterSpec("local", workers=2)
    assert str(parse_cluster("tcp://10.0.0.5:8786")) == "tcp://10.0.0.5:8786"
    for bad, words in (("local:3", "each needs a CPU of its own"), ("http://x:1", "is not a cluster"),
                       ("tcp://h:99999", "a port is 1 to 65535"), (2, "is not a string")):
        with pytest.raises(ValueError) as err:
            parse_cluster(bad, usable=2)
        assert words in str(err.value) and "cluster" in str(err.value), (bad, str(err.value))


@pytest.mark.parametrize("count", [0, -1])
def test_a_local_cluster_of_no_host_is_named_as_such_with_what_is_allowed(count):
    """local:0 was refused for want of CPUs ("each needs a CPU of its own and this machine has 2
    usable"), which is not why; local:-1 was "not a cluster"."""
    with pytest.raises(ValueError) as err:
        parse_cluster(f"local:{count}", usable=2)
    assert str(err.value) == (f"cluster: 'local:{count}' asks for {count} local hosts, and a local cluster needs at "
                              "least one; allowed: local:N with 1 <= N <= 2 (this machine's usable CPUs)")
    with pytest.raises(ValueError) as err:
        parse_cluster("local:3", usable=2)
    assert str(err.value).endswith("this machine has 2 usable; allowed: local:N with 1 <= N <= 2 (this machine's "
                                   "usable CPUs)"), str(err.value)


@pytest.mark.parametrize("given", ["null", "none", "NONE", "", "  "])
def test_the_cluster_reads_none_as_every_parameter_does(given):
    """cluster read "null", "none" (any case) and "" as None with a rule of its own, where every other
    parameter reads only the word None (values.read_none) and refuses the rest naming it: `-p threads
    null` was an error, `-p cluster null` a run in this process."""
    from bench_src import api

    with pytest.raises(ValueError) as err:
        parse_cluster(given, usable=2)
    assert str(err.value) == (f"cluster: {given.strip()!r} is not a cluster; allowed: None (the plan runs in this "
                              'process); "local:N" (N hosts on this machine, each on its own CPUs); "tcp://HOST:PORT" '
                              "(a running Dask scheduler)")
    with pytest.raises(ValueError, match=re.escape(f"cluster: {given.strip()!r} is not a cluster; allowed: None")):
        api.check_run_parameters({"cluster": given})


def test_a_bad_cluster_is_refused_by_the_command_line_before_anything_is_built(tmp_path):
    out = subprocess.run([sys.executable, "-m", "bench_src", "check", "--cluster", "local:99", "--results-dir",
                          str(tmp_path / "r")], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("error: cluster: 'local:99'"), out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "r").exists()


def test_a_scheduler_that_does_not_answer_is_refused_before_anything_is_built(tmp_path):
    import socket

    from bench_src import api

    with socket.socket() as s:  # a port on which nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for value, words in ((f"tcp://127.0.0.1:{port}", f"no scheduler answers at 127.0.0.1:{port}"),
                         ("tls://127.0.0.1:8786", "a tls:// scheduler needs the client's TLS settings in Dask's configuration")):
        out = subprocess.run([sys.executable, "-m", "bench_src", "run", "--cluster", value, "--results-dir",
                              str(tmp_path / "r"), "--workloads", "[sleep]", "--ns", "[10]"], cwd=ROOT,
                             capture_output=True, text=True)
        assert out.returncode == 2 and out.stderr.startswith(f"error: cluster {value}: {words}"), out.stderr
        assert len(out.stderr.splitlines()) == 1 and not (tmp_path / "r").exists(), out.stderr
        with pytest.raises(ClusterError, match=words):  # the notebooks' check, before their build
            api.cluster_from_parameter(value)



def test_a_port_where_another_server_answers_is_refused_as_no_scheduler_before_anything_is_built(tmp_path):
    """A scheduler's dashboard port, or any server that is not Dask's: refused in one line after a
    bounded wait, nothing written (before, the run waited minutes, then died of Dask reading an HTTP
    reply as a frame of exabytes, and left a results directory)."""
    import http.server
    import threading

    # bound here, on a port the kernel picks, so that no other process can take it before it listens
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        value = f"tcp://127.0.0.1:{port}"
        out = subprocess.run([sys.executable, "-m", "bench_src", "run", "--cluster", value, "--results-dir",
                              str(tmp_path / "r"), "--workloads", "[sleep]", "--ns", "[10]"], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
        server.server_close()
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith(f"error: cluster {value}: what answers at 127.0.0.1:{port} is not a Dask scheduler")
    assert len(out.stderr.splitlines()) == 1 and not (tmp_path / "r").exists(), out.stderr


def test_a_running_scheduler_passes_the_check():
    from distributed import LocalCluster

    from bench_src.run.cluster import engine

    with LocalCluster(n_workers=0, processes=False, protocol="tcp://", dashboard_address=None, host="127.0.0.1") as cluster:
        assert engine.check_scheduler(parse_cluster(cluster.scheduler_address)) is None  # no HostsError
    # and the same check refuses the address once nothing answers there
    with pytest.raises(engine.HostsError, match="no scheduler answers at 127.0.0.1"):
        engine.check_scheduler(parse_cluster(cluster.scheduler_address))

def test_the_default_path_imports_nothing_of_dask():
    code = ("import sys, bench_src.api, bench_src.__main__, bench_src.run.runner, bench_src.report.full;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_local_cluster_runs_as_many_threads_as_each_host_has_cpus():
    from bench_src import api

    assert api.plan_from_parameters(cluster="local:2", profile="quick").threads == len(os.sched_getaffinity(0)) // 2
    assert api.plan_from_parameters(cluster="local:2", profile="quick", threads="3").threads == 3
    assert api.plan_from_parameters(profile="quick").threads == len(os.sched_getaffinity(0))


def test_cores_on_a_local_cluster_set_the_threads_and_must_fit_in_one_host():
    from bench_src import api

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("a local cluster of 2 needs two usable CPUs")
    plan = api.plan_from_parameters(cluster="local:2", profile="quick", workloads="[sleep]", ns="[10]", cores="[1]")
    assert {(c.cores, c.threads) for c in plan.cells()} == {(1, 1)}, "the cores, not a threads the user never gave"
    per_host = len(os.sched_getaffinity(0)) // 2
    with pytest.raises(ValueError, match=rf"^cores: {per_host + 1} is more than the {per_host} CPUs? each host of "
                                         rf"cluster 'local:2' has; allowed: 1..{per_host}, or fewer hosts$"):
        api.plan_from_parameters(cluster="local:2", profile="quick", workloads="[sleep]", ns="[10]",
                                 cores=f"[{per_host + 1}]")


def test_cores_more_than_a_schedulers_host_may_run_on_are_refused_before_the_first_sample():
    """The hosts of a scheduler are known only once they are described: a cell pinned to more cores
    than one of them has is refused then, naming the host, instead of failing every sample there."""
    from bench_src.run.cluster import engine

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("a plan pinned to 2 cores needs two usable CPUs")
    plan = make_plan("quick", workloads=["sleep"], ns=[10], samples=6, cores=[1, 2])
    one = {"machine": {"usable_cpus": 1}}
    two = {"machine": {"usable_cpus": 2}}
    engine.refuse_too_few_cpus(plan, {"tcp://a:1": two, "tcp://b:1": two})
    with pytest.raises(engine.HostsError, match=r"^the plan pins cells to 2 cores, but host tcp://b:1 may run on 1 "
                                                r"CPU\(s\): .* give cores of at most 1"):
        engine.refuse_too_few_cpus(plan, {"tcp://a:1": two, "tcp://b:1": one})
    engine.refuse_too_few_cpus(make_plan("quick", workloads=["sleep"], ns=[10], samples=6), {"tcp://b:1": one})


def test_the_kept_attempt_of_a_block_is_its_fullest():
    rec = lambda sid, block, attempt, host: {"sample_id": sid, "phase": "measured", "block": block,
                                              "attempt": attempt, "host": host}
    records = [rec("m:0:a", 0, "x", "h1"), rec("m:0:b", 0, "x", "h1"),  # block 0, complete on h1
               rec("m:1:a", 1, "y", "h1"),  # block 1: h1 lost after one sample ...
               rec("m:1:a", 1, "z", "h2"), rec("m:1:b", 1, "z", "h2"),  # ... and run again whole on h2
               {"sample_id": "m:2:a", "phase": "measured", "block": 2}]  # in-process: always kept
    kept, abandoned = current_attempts(records)
    assert abandoned == [records[2]]
    assert [r["sample_id"] for r in kept] == ["m:0:a", "m:0:b", "m:1:a", "m:1:b", "m:2:a"]
    assert {r["host"] for r in kept if r.get("block") == 1} == {"h2"}


# --- runs on a local cluster -----------------------------------------------------------------------

@two_cpus
def test_a_local_cluster_runs_each_block_whole_on_one_host(built, tmp_path, monkeypatch):
    import tempfile

    shared_tmp = tmp_path / "tmp"  # the temporary directory every process of the machine shares
    shared_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(shared_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    plan = small_plan()
    report, logs = run(plan, tmp_path / "r", ClusterSpec("local", workers=2))
    assert list(shared_tmp.iterdir()) == [], "Dask's scratch space (its lock files) is the run's own, removed"
    # threads 1 on hosts of one CPU each: no note that Rust may use a CPU more than Go
    assert not [line for line in logs if line.startswith("note: threads is")], logs
    store = ResultsStore(tmp_path / "r")
    records = store.records()
    meta = store.read_meta()
    session = meta["sessions"][-1]
    assert session["engine"] == "cluster local:2" and len(session["hosts"]) == 2
    cpu_of = {h: d["cpu_set"] for h, d in session["hosts"].items()}
    assert sorted(cpu_of.values()) == ["0", "1"], "each host is pinned to a CPU of its own"
    # each host made itself ready before its first block: its programs' open-file limit raised (and
    # the programs evicted from the page cache); before, the check at the join left both undone
    assert all(d.get("nofile_limit_for_programs", {}).get("soft") for d in session["hosts"].values()), \
        session["hosts"]
    done = measured(records)
    assert sorted(r["sample_id"] for r in done) == sorted(s.sample_id for s in plan.schedule()
                                                          if s.phase == "measured")
    assert all(r["status"] == "ok" for r in records), [r["reason"] for r in records if r["status"] != "ok"]
    per_block = {}
    for r in done:
        per_block.setdefault(r["block"], set()).add((r["host"], r["attempt"]))
    assert all(len(v) == 1 for v in per_block.values()), "every block whole on one host, in one attempt"
    assert len({r["host"] for r in done}) == 2, "samples from both hosts"
    # the CPUs each program says it ran on are its host's
    assert all(r["cpus"] == cpu_of[r["host"]] and r["threads"] == 1 for r in records)
    # every host took the warm-ups itself
    assert Counter(r["host"] for r in records if r["phase"] == "warmup") == {h: 4 for h in cpu_of}
    assert report.taken == len(records) == report.planned
    # the hosts are this machine as a run in this process records it: its hostname and machine ID
    from bench_src.run import machine

    here = machine.describe()
    assert all((d["fingerprint"]["machine"].get("hostname"), d["fingerprint"]["machine"].get("machine_id_digest"))
               == (here["hostname"], here["machine_id_digest"]) for d in session["hosts"].values())
    said = [line for line in logs if line.startswith("estimated duration:")]
    assert len(said) == 1 and f" for {report.planned} samples " in said[0], (said, report.planned)
    df = store_hosts.load_hosts([tmp_path / "r"])
    assert set(df["host"]) == set(cpu_of) and len(df.attrs["hosts"]) == 2
    assert len({e["machine"] for e in df.attrs["hosts"].values()}) == 1, "two shares of one machine"


def kill_the_worker_on(cpu: int) -> int | None:
    """SIGKILL the local cluster's worker process pinned to `cpu` (a Python child of this process);
    its pid, or None where none is found."""
    for p in psutil.Process().children(recursive=True):
        try:
            if "python" in p.name() and p.cpu_affinity() == [cpu]:
                p.send_signal(signal.SIGKILL)
                return p.pid
        except psutil.NoSuchProcess:
            continue
    return None


def kill_a_host_mid_block(directory: Path, from_block: int) -> tuple[threading.Thread, dict]:
    """A started thread that, at the first measured sample of a block from `from_block` on, SIGKILLs
    the worker that took it, and the dict it fills with that worker's pid, block, host and attempt."""
    killed: dict = {}

    def watch():
        deadline = time.monotonic() + 120
        path = directory / "samples.jsonl"
        while time.monotonic() < deadline and not killed:
            for line in (path.read_text().splitlines() if path.exists() else []):
                r = json.loads(line)
                if r["phase"] == "measured" and r["block"] >= from_block and r["pos"] == 0:
                    pid = kill_the_worker_on(int(r["cpus"]))
                    if pid:
                        killed.update(pid=pid, block=r["block"], host=r["host"], attempt=r["attempt"])
                    break
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher, killed


@two_cpus
def test_a_host_lost_mid_block_loses_nothing_and_counts_nothing_twice(built, tmp_path):
    plan = small_plan(samples=8, warmup=0)
    directory = tmp_path / "r"
    watcher, killed = kill_a_host_mid_block(directory, from_block=3)
    report, logs = run(plan, directory, ClusterSpec("local", workers=2))
    watcher.join(5)
    assert killed, "the test found no worker to kill"
    store = ResultsStore(directory)
    records = store.records()
    lost = [r for r in records if r.get("attempt") == killed["attempt"]]
    assert 1 <= len(lost) < 4, "the killed attempt delivered part of its block"
    assert all(r["host"] == killed["host"] for r in lost), "what it delivered stays, marked with its host"
    # the block ran again whole, in one other attempt
    again = [r for r in measured(records) if r["block"] == killed["block"] and r["attempt"] != killed["attempt"]]
    assert len(again) == 4 and len({(r["host"], r["attempt"]) for r in again}) == 1
    # nothing lost, nothing counted twice: one kept sample per planned id, all ok
    df = store.load()
    kept = df[df["phase"] == "measured"]
    planned = sorted(s.sample_id for s in plan.schedule())
    assert sorted(kept["sample_id"]) == planned and kept["sample_id"].is_unique
    assert (kept["status"] == "ok").all()
    assert df.attrs["abandoned_samples"] == len(lost)
    assert set(kept.loc[kept["block"] == killed["block"], "attempt"]) == {again[0]["attempt"]}
    assert not report.interrupted
    # the loss is said in one line and recorded in meta.json, and the samples set aside carry its reason
    said = [line for line in logs if line.startswith(f"host {killed['host']} at ") and " was lost " in line]
    assert len(said) == 1 and f"while it ran measured block {killed['block']} (" in said[0], logs
    assert f"{len(lost)} of its 4 samples had arrived; the block runs again whole (should Dask give up" in said[0]
    entries = store.read_meta()["sessions"][-1]["hosts_lost"]
    assert [(e["host"], e["phase"], e["block"], e["attempt"], e["samples_delivered"]) for e in entries] == \
        [(killed["host"], "measured", killed["block"], killed["attempt"], len(lost))]
    assert entries[0]["reason"].startswith("the scheduler lost its connection to the worker") and entries[0]["at"]
    assert list(df.attrs["abandoned_reasons"]) == [f"its host {killed['host']} was lost at {entries[0]['at']} "
                                                   f"while it ran the block ({entries[0]['reason']}), and the block "
                                                   "was taken again whole"]


@two_cpus
def test_a_run_whose_samples_were_lost_with_their_host_ends_incomplete_and_the_same_command_takes_them(
        built, tmp_path):
    """With the block's host lost and Dask giving up on it (allowed-failures 0), its samples were
    stored as host_lost, and the run still ended "finished ... 132/132 samples (100%)", exit 0,
    `taken` counting samples never taken.  It ends incomplete: the closing line (an error a user
    can fix: one line, exit 2) counts the samples taken and those lost apart and says the same
    command takes them; meta.json records the end and both counts; the same command takes them."""
    import dask
    import distributed  # noqa: F401 - its configuration loaded before it is set here, and kept after

    plan = small_plan(samples=8, warmup=0)
    directory = tmp_path / "r"
    watcher, killed = kill_a_host_mid_block(directory, from_block=1)
    logs = []
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with pytest.raises(ClusterError) as err:
            runner.run(plan, directory, progress=False, cluster=ClusterSpec("local", workers=2), log=logs.append)
    watcher.join(5)
    assert killed, "the test found no worker to kill"
    assert isinstance(err.value, runner.RunIncomplete)
    records = ResultsStore(directory).records()
    lost = [r for r in records if r["status"] == "host_lost"]
    assert 1 <= len(lost) <= 3 and {r["block"] for r in lost} == {killed["block"]}
    report = err.value.report
    assert report.lost == len(lost) and report.taken == len(records) - len(lost)
    text = str(err.value)
    assert text.startswith("incomplete after ") and "\n" not in text
    assert (f": {report.taken} samples taken now, {len(lost)} lost with their hosts (host_lost, never taken), "
            in text) and text.endswith(f"; the same command takes the {len(lost)} missing "
                                       f"sample{'s' if len(lost) != 1 else ''}"), text
    session = ResultsStore(directory).read_meta()["sessions"][-1]
    assert session["ended"].startswith(f"incomplete: {len(lost)} sample{'s' if len(lost) != 1 else ''} lost with their hosts")
    assert session["taken"] == report.taken and session["samples_lost"] == len(lost) and not session["interrupted"]
    from bench_src import api

    assert isinstance(err.value, api.USER_ERRORS), "one line, exit 2, as every error a user can fix"
    # the same command takes them, and then finishes
    again, _ = run(plan, directory, ClusterSpec("local", workers=2))
    assert not again.incomplete and again.lost == 0 and str(again).startswith("finished after ")
    df = ResultsStore(directory).load()
    kept = df[df["phase"] == "measured"]
    assert sorted(kept["sample_id"]) == sorted(s.sample_id for s in plan.schedule()) and (kept["status"] == "ok").all()


@two_cpus
def test_a_host_lost_during_its_warm_ups_leaves_the_progress_honest(built, tmp_path, monkeypatch):
    """A local host killed while it took its warm-ups: its nanny starts it again and it takes them all
    again.  The progress line never counts more samples than planned, and a finished run ends with
    as many done as planned (it ended at "57/68 samples (84%)": the warm-ups the lost host never
    took stayed planned)."""
    plan = small_plan(samples=8, warmup=3)
    directory = tmp_path / "r"
    killed = {}
    lines = []
    real_update = Progress.update

    def update(self, cell, note="", counted=True):
        real_update(self, cell, note, counted)
        lines.append((self.done, self.planned))

    def emit(self, note="", final=False):
        if final:
            lines.append((self.done, self.planned))

    monkeypatch.setattr(Progress, "update", update)
    monkeypatch.setattr(Progress, "emit", emit)

    def kill_a_host_in_its_warm_ups():
        deadline = time.monotonic() + 120
        path = directory / "samples.jsonl"
        while time.monotonic() < deadline and not killed:
            text = path.read_text() if path.exists() else ""
            if "\n" in text:  # the first sample, a warm-up: its host is killed at once
                first = json.loads(text.split("\n", 1)[0])
                pid = kill_the_worker_on(int(first["cpus"]))
                if pid:
                    killed.update(pid=pid, host=first["host"])
            time.sleep(0.02)

    watcher = threading.Thread(target=kill_a_host_in_its_warm_ups, daemon=True)
    watcher.start()
    report, _ = run(plan, directory, ClusterSpec("local", workers=2))
    watcher.join(5)
    assert killed, "the test found no worker to kill"
    records = ResultsStore(directory).records()
    rounds = Counter(r["attempt"] for r in records if r["phase"] == "warmup")
    per_round = sum(s.phase == "warmup" for s in plan.schedule())
    assert len(rounds) == 3 and sorted(rounds.values())[0] < per_round, "a round cut short, and one taken again"
    assert all(done <= planned for done, planned in lines), [x for x in lines if x[0] > x[1]]
    assert lines[-1][0] == lines[-1][1] == report.planned == report.taken == len(records), (lines[-1], report)
    assert not report.interrupted


@two_cpus
def test_a_client_killed_mid_block_resumes_with_the_block_whole(built, tmp_path):
    plan = small_plan(samples=6, warmup=0)
    directory = tmp_path / "r"
    run(plan, directory, ClusterSpec("local", workers=2))
    store = ResultsStore(directory)
    lines = store.samples_path.read_text().splitlines(keepends=True)
    # as if the client had been killed after the first two samples of the last block had arrived
    last = max(json.loads(line)["block"] for line in lines)
    cut = [line for line in lines if json.loads(line)["block"] != last]
    first_two = [line for line in lines if json.loads(line)["block"] == last][:2]
    store.samples_path.write_text("".join(cut + first_two))
    meta = json.loads(store.meta_path.read_text())
    for key in ("taken", "finished_at", "interrupted", "ended"):  # a killed session records no end
        meta["sessions"][-1].pop(key, None)
    store.meta_path.write_text(json.dumps(meta))
    report, _ = run(plan, directory, ClusterSpec("local", workers=2))
    records = ResultsStore(directory).records()
    rerun = [r for r in records if r["block"] == last][2:]
    assert len(rerun) == 4 and len({r["attempt"] for r in rerun}) == 1, "the block ran again whole"
    df = ResultsStore(directory).load()
    assert sorted(df["sample_id"]) == sorted(s.sample_id for s in plan.schedule()) and df["sample_id"].is_unique
    assert report.taken == 4


def start_host(bin_dir: Path):
    """A one-host cluster of our own whose worker looks for its programs in bin_dir."""
    from distributed import LocalCluster

    return LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"host": 1},
                        memory_limit=0, dashboard_address=None, env={"BENCH_BIN_DIR": str(bin_dir)})


def test_a_host_with_other_programs_is_refused_before_the_first_sample(built, tmp_path):
    other = tmp_path / "bin"
    shutil.copytree(ROOT / "data" / "bin", other)
    (other / "gobench").write_bytes((other / "gobench").read_bytes() + b"\0")  # another build
    cluster = start_host(other)
    logs = []
    try:
        with pytest.raises(ClusterError) as err:
            runner.run(small_plan(), tmp_path / "r", progress=False, cluster=parse_cluster(cluster.scheduler_address),
                       log=logs.append)
    finally:
        cluster.close()
    assert "other programs" in str(err.value) and "gobench" in str(err.value), str(err.value)
    assert not any("stopping the hosts' servers" in line for line in logs), "no server was started: none to stop"
    samples = tmp_path / "r" / "samples.jsonl"
    assert not samples.exists() or samples.read_text() == "", "not one sample taken"


def test_a_host_without_programs_gets_the_sessions(built, tmp_path):
    empty = tmp_path / "nothing"
    empty.mkdir()
    cluster = start_host(empty)
    try:
        report, logs = run(small_plan(samples=6, warmup=0), tmp_path / "r", parse_cluster(cluster.scheduler_address))
    finally:
        cluster.close()
    assert any("programs shipped from here" in line for line in logs), logs
    records = ResultsStore(tmp_path / "r").records()
    assert len(records) == 24 and all(r["status"] == "ok" for r in records)
    # the shipped copies, in the host's scratch directory, not its own (empty) program directory
    assert all("/bench-host-" in r["command"].split()[0] and str(empty) not in r["command"] for r in records)


def run_while_a_host_joins(directory: Path, env: dict) -> tuple[list[dict], list[str]]:
    """A 12-block run on a one-worker cluster to which a second worker, with `env` (no toolchains on
    its PATH: another fingerprint, another machine), is added after the first sample is stored;
    the stored records and the run's log."""
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"host": 1},
                           memory_limit=0, dashboard_address=None)
    joined = threading.Event()

    def add_a_worker_after_the_first_sample():
        path = directory / "samples.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (path.exists() and path.read_text().strip()):
            time.sleep(0.05)
        cluster.new_spec["options"]["env"] = env
        cluster.scale(2)
        joined.set()

    watcher = threading.Thread(target=add_a_worker_after_the_first_sample, daemon=True)
    watcher.start()
    try:
        _, logs = run(small_plan(samples=12, warmup=0), directory, parse_cluster(cluster.scheduler_address))
    finally:
        watcher.join(5)
        cluster.close()
    assert joined.is_set()
    return ResultsStore(directory).records(), logs


def test_a_host_that_joins_mid_run_is_described_in_meta_json(built, tmp_path):
    directory = tmp_path / "r"
    records, logs = run_while_a_host_joins(directory, {"PATH": "/nonexistent"})
    took = Counter(r["host"] for r in records)
    assert len(took) == 2, f"the second worker took no block: {took}"
    described = ResultsStore(directory).read_meta()["sessions"][-1]["hosts"]
    assert set(took) == set(described), "every host that took a sample is described in meta.json"
    late = next(h for h in took if described[h]["toolchains"]["go"] == "missing")
    assert any(line.startswith(f"host {late}: ") and "joined the run" in line for line in logs), logs
    df = store_hosts.load_hosts([directory])
    assert set(df["host"]) == set(took) and df["host_label"].notna().all()
    # a directory written before such a host was described still loads, the host named as undescribed
    meta = json.loads((directory / "meta.json").read_text())
    del meta["sessions"][-1]["hosts"][late]
    (directory / "meta.json").write_text(json.dumps(meta))
    df = store_hosts.load_hosts([directory])
    assert set(df.loc[df["host"] == late, "host_label"]) == {f"a host not described in meta.json [{late}]"}


def test_a_scheduler_lost_mid_run_ends_it_with_one_line_and_its_blocks_recorded(built, tmp_path, monkeypatch):
    import dask
    from distributed import LocalCluster

    from bench_src.run.cluster import engine

    monkeypatch.setattr(engine, "CONNECT_S", 3.0)  # how long the client tries to reconnect before it gives up
    # and for the closing cluster, which tries to reach the scheduler that has gone (Dask's default
    # connect timeout, 30 s, was the test's longest wait)
    monkeypatch.setitem(dask.config.config["distributed"]["comm"]["timeouts"], "connect", "3s")
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"host": 1},
                           memory_limit=0, dashboard_address=None)
    directory = tmp_path / "r"

    def kill_the_scheduler_after_a_few_samples():
        path = directory / "samples.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (path.exists() and len(path.read_text().splitlines()) >= 3):
            time.sleep(0.05)
        cluster.sync(cluster.scheduler.close)

    watcher = threading.Thread(target=kill_the_scheduler_after_a_few_samples, daemon=True)
    watcher.start()
    try:
        with pytest.raises(ClusterError) as err:
            run(small_plan(samples=12, warmup=0), directory, parse_cluster(cluster.scheduler_address))
    finally:
        watcher.join(5)
        cluster.close()
    message = str(err.value)
    assert "the scheduler is gone" in message and "resume" in message and "\n" not in message, message
    store = ResultsStore(directory)
    records = store.records()
    assert len(records) >= 3 and all(r["status"] in ("ok", "host_lost") for r in records)
    assert all("scheduler was lost" in r["reason"] for r in records if r["status"] == "host_lost")
    # a lost record of a block that delivered samples names its host; one of a block that delivered none says so
    assert all(r.get("host") if "while the block ran" in r["reason"] else "before any sample" in r["reason"]
               for r in records if r["status"] == "host_lost")
    session = store.read_meta()["sessions"][-1]
    lost = sum(r["status"] == "host_lost" for r in records)  # stored, never taken: counted apart
    assert session["interrupted"] and session["taken"] == len(records) - lost and session.get("samples_lost", 0) == lost


def test_an_acknowledgement_that_cannot_reach_the_scheduler_is_kept_once_and_a_full_disk_is_not_taken_for_it(
        monkeypatch):
    import errno

    from bench_src.run.cluster import engine

    tried = []

    class Unreachable:  # what distributed's Event.set raises when its connect to the scheduler gives up
        def __init__(self, name, client=None):
            self.name = name

        def set(self):
            tried.append(self.name)
            raise OSError("Timed out trying to connect to tcp://127.0.0.1:1 after 3 s")

    monkeypatch.setattr(engine, "Event", Unreachable)
    hosts, _, _ = hosts_without_a_cluster(small_plan())
    hosts.acknowledge("bench-stored-a")
    hosts.acknowledge("bench-stored-b")  # no second wait for the connect timeout
    assert tried == ["bench-stored-a"] and "Timed out trying to connect" in str(hosts.lost)
    line = str(hosts.scheduler_lost(hosts.lost))
    assert "the scheduler is gone (OSError: Timed out trying to connect" in line and "resume" in line

    class DiskFull(Unreachable):
        def set(self):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(engine, "Event", DiskFull)
    hosts, _, _ = hosts_without_a_cluster(small_plan())
    with pytest.raises(OSError) as err:
        hosts.acknowledge("bench-stored-a")
    assert err.value.errno == errno.ENOSPC and hosts.lost is None
    assert engine.scheduler_unreachable(engine.CommClosedError("in <TCP ...>: Stream is closed"))
    assert not engine.scheduler_unreachable(PermissionError(errno.EACCES, "Permission denied"))


def test_a_scheduler_unreachable_at_an_acknowledgement_ends_the_run_with_one_line_and_its_block_recorded(
        built, tmp_path, monkeypatch):
    """The scheduler dying while the client tells a host that its sample is stored: distributed's
    connect raises a plain OSError (no errno), which ends the run as the scheduler lost does; the
    samples of the running block that did not arrive are stored as lost, with the reason."""
    from distributed import LocalCluster

    from bench_src.run.cluster import engine

    plan = small_plan(samples=12, warmup=0)
    per_block = sum(1 for s in plan.schedule() if s.phase == "measured" and s.block == 0)
    # the host's announcement (it waits to be recorded), then the samples: the second sample of the second block
    fails_at = 1 + per_block + 2
    real = engine.Event
    acks = []

    class LostMidBlock(real):
        def set(self):
            acks.append(self.name)
            if len(acks) >= fails_at:
                raise OSError(f"Timed out trying to connect to {cluster.scheduler_address} after 3 s")
            return super().set()

    monkeypatch.setattr(engine, "Event", LostMidBlock)
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"host": 1},
                           memory_limit=0, dashboard_address=None)
    directory = tmp_path / "r"
    try:
        with pytest.raises(ClusterError) as err:
            run(plan, directory, parse_cluster(cluster.scheduler_address))
    finally:
        cluster.close()
    message = str(err.value)
    assert "the scheduler is gone (OSError: Timed out trying to connect" in message and "\n" not in message, message
    assert len(acks) == fails_at, "no acknowledgement is tried after the one that found the scheduler gone"
    store = ResultsStore(directory)
    records = store.records()
    ok = [r for r in records if r["status"] == "ok"]
    lost = [r for r in records if r["status"] != "ok"]
    assert len(ok) == fails_at - 1 and {r["block"] for r in ok} == {0, 1}
    assert len(lost) == per_block - 2 and {r["block"] for r in lost} == {1}, \
        "the samples of the running block that did not arrive are stored as lost"
    assert all(r["status"] == "host_lost" and "scheduler was lost" in r["reason"] for r in lost)
    assert not {r["sample_id"] for r in lost} & {r["sample_id"] for r in ok}
    session = store.read_meta()["sessions"][-1]
    assert session["interrupted"] and session["taken"] == len(ok) and session["samples_lost"] == len(lost)


def start_workers_of_one_machine(pinned: bool):
    """A scheduler with two workers on this machine, as `dask worker --nworkers 2` starts them, or
    each pinned to a CPU of its own, as `taskset -c` does."""
    from distributed import Client, LocalCluster

    from bench_src.run.cluster import host

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, resources={"host": 1},
                           memory_limit=0, dashboard_address=None)
    if pinned:
        with Client(cluster, set_as_default=False) as client:
            for cpu, worker in enumerate(sorted(client.scheduler_info()["workers"])):
                client.run(host.pin_process, [cpu], workers=[worker])
    return cluster


@two_cpus
def test_workers_pinned_to_cpus_of_their_own_are_two_hosts_of_one_machine(built, tmp_path):
    cluster = start_workers_of_one_machine(pinned=True)
    try:
        run(small_plan(samples=6, warmup=0), tmp_path / "r", parse_cluster(cluster.scheduler_address))
    finally:
        cluster.close()
    described = ResultsStore(tmp_path / "r").read_meta()["sessions"][-1]["hosts"]
    assert sorted(d["cpu_set"] for d in described.values()) == ["0", "1"], "one description per worker"
    records = ResultsStore(tmp_path / "r").records()
    assert {r["host"] for r in records} == set(described)
    assert all(r["cpus"] == described[r["host"]]["cpu_set"] for r in records)
    df = store_hosts.load_hosts([tmp_path / "r"])
    assert df["host"].nunique() == 2 and len({e["machine"] for e in df.attrs["hosts"].values()}) == 1


def test_workers_sharing_the_cpus_of_one_machine_are_refused_before_the_first_sample(built, tmp_path):
    cluster = start_workers_of_one_machine(pinned=False)
    try:
        with pytest.raises(ClusterError, match=r"^workers tcp://\S+ and tcp://\S+ run on the same CPUs of machine "
                                               r".*start one worker per machine"):
            run(small_plan(samples=6, warmup=0), tmp_path / "r", parse_cluster(cluster.scheduler_address))
    finally:
        cluster.close()
    samples = tmp_path / "r" / "samples.jsonl"
    assert not samples.exists() or samples.read_text() == "", "not one sample taken"


def test_a_sample_of_an_earlier_sessions_block_is_not_stored(tmp_path):
    from bench_src.run.cluster import engine
    from bench_src.run.sample import record

    plan = small_plan()
    stored, logs = [], []

    class Store:
        run_id, session = "r", 2  # the resumed session; session 1's client was killed

    hosts = engine.Hosts(ClusterSpec("local", workers=2), plan, Store(), lambda slot, rec, tl: stored.append(rec),
                         set(), logs.append)
    seq, slot = next((i, s) for i, s in enumerate(plan.schedule()) if s.phase == "measured")
    hosts.slots[slot.sample_id] = slot  # the resumed session runs that block again too
    for session in (1, 2):
        rec = record(slot, seq, "r", session, {"status": "ok", "reason": ""})
        rec.update(host="h", attempt=f"attempt-of-session-{session}")
        hosts.receive({"kind": "sample", "record": rec, "timeline": None}, replayed=True)
    assert [r["session"] for r in stored] == [2], "the block still running for the killed client is not stored"
    assert any("for a client that is gone" in line for line in logs), logs


@WATCH_REPLACED
def test_a_client_killed_and_resumed_at_once_stores_nothing_of_its_orphaned_blocks(built, tmp_path):
    """kill -9 of the client leaves its blocks running on the hosts of a scheduler; the same
    command run again at once must neither store what they take nor wait for them."""
    import warnings

    import dask
    from distributed import LocalCluster

    # the killed client's lease is dropped by the scheduler once it has gone unrefreshed for the
    # lease timeout (Dask's default 30 s, checked every 10 s): 6 s here, in the scheduler, the resumed
    # client and the killed one alike (each client refreshes its lease every fifth of it)
    lease = {"distributed.scheduler.locks.lease-timeout": "6s",
             "distributed.scheduler.locks.lease-validation-interval": "1s"}
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_TIMEOUT": "6s",
           "DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_VALIDATION_INTERVAL": "1s"}
    with dask.config.set(lease):
        cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"host": 1},
                               memory_limit=0, dashboard_address=None)
        directory = tmp_path / "r"
        plan = small_plan(samples=12, warmup=0)
        try:
            given = {"profile": "quick", "workloads": ["sleep"], "ns": [10, 100], "samples": 12, "warmup": 0,
                     "params": {"sleep": {"work": 0}}, "threads": 1}  # small_plan's, on the command line
            client = subprocess.Popen([sys.executable, "-m", "bench_src", "run", "--plan", json.dumps(given),
                                       "--cluster", cluster.scheduler_address, "--results-dir", str(directory),
                                       "--no-progress"], cwd=ROOT, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            path = directory / "samples.jsonl"
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not (path.exists() and len(path.read_text().splitlines()) >= 6):
                time.sleep(0.05)
            client.kill()
            client.wait()
            run(plan, directory, parse_cluster(cluster.scheduler_address))
        finally:
            cluster.close()
    store = ResultsStore(directory)
    sessions = store.read_meta()["sessions"]
    records = store.records()
    assert sum(r["session"] == 2 for r in records) == sessions[1]["taken"]
    assert len(records) == sum(r["session"] == 1 for r in records) + sessions[1]["taken"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no samples "missing" that meta.json counts as taken
        df = store.load()
    assert sorted(df.loc[df["phase"] == "measured", "sample_id"]) == sorted(s.sample_id for s in plan.schedule())
    report, _ = run(plan, directory, ClusterSpec("local", workers=1))  # a further resume is not refused
    assert report.taken == 0


# --- the engine's A/A check ----------------------------------------------------------------------

def fake_measure(scale: float, seed: int):
    rng = np.random.default_rng(seed)

    def measure(cell, *args, **kwargs):
        t = 0.5 * scale * (1 + 0.001 * rng.standard_normal())
        return {"status": "ok", "reason": "", "checksum": "00000000000000aa", "elapsed_ns": int(1e9 * t),
                "wall_ns": int(1e9 * t) + 1000, "user_ns": 1, "sys_ns": 1, "maxrss_kb": 8192,
                "peak_rss_bytes": 8 << 20, "tasks_ok": cell.n,
                "extra": alive_extra(cell)}

    return measure


def test_a_local_clusters_directory_resumed_without_it_names_the_difference_and_the_cluster(tmp_path):
    """A local:2 directory resumed without --cluster was told "already holds a different plan (digest
    ...); choose another results_dir": the plans differ in the threads the cluster set, and the
    line names them and says to resume with that cluster.  Other differences keep the general line."""
    spec = dict(workloads=["sleep"], ns=[10], samples=6, warmup=0, params={"sleep": {"work": 0}})
    directory = tmp_path / "r"
    runner.run(make_plan("quick", threads=1, **spec), directory, progress=False, measure_fn=fake_measure(1.0, 1),
               log=lambda *_: None)
    meta = json.loads((directory / "meta.json").read_text())
    meta["sessions"][0]["engine"] = "cluster local:2"  # as a local:2 run of 1-CPU hosts records it
    (directory / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError) as err:
        ResultsStore(directory).check_plan(make_plan("quick", threads=2, **spec))
    text = str(err.value)
    assert text.startswith(f"{directory} holds a run of another plan (digest ") and "\n" not in text
    assert "they differ in threads: 1 vs 2), taken on the cluster local:2: resume it as it was started " \
           "(--cluster local:2; make run CLUSTER=local:2; " in text, text
    out = subprocess.run([sys.executable, "-m", "bench_src", "check", "--plan", json.dumps(spec), "--threads", "2",
                          "--results-dir", str(directory)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "(--cluster local:2;" in out.stderr, out.stderr
    with pytest.raises(ValueError) as err:  # a difference no cluster sets: the general line
        ResultsStore(directory).check_plan(make_plan("quick", threads=1, **{**spec, "samples": 8}))
    assert "already holds a different plan" in str(err.value) and "they differ in " in str(err.value)
    assert "--cluster" not in str(err.value)


def test_the_engine_check_tells_equal_runs_from_a_shifted_one(tmp_path):
    from bench_src.analysis import engines

    plan = make_plan("quick", workloads=["sleep"], ns=[10], samples=10, warmup=0, params={"sleep": {"work": 0}})
    frames = {}
    for name, scale, seed in (("here", 1.0, 1), ("same", 1.0, 2), ("slower", 1.03, 3)):
        runner.run(plan, tmp_path / name, progress=False, measure_fn=fake_measure(scale, seed), log=lambda *_: None)
        frames[name] = ResultsStore(tmp_path / name).load()
    same = engines.engine_check(frames["here"], frames["same"])
    assert set(same["metric"]) == {"wall_s", "elapsed_s", "peak_rss_mib"} and len(same) == 6
    assert same["inside_margin"].astype(bool).all(), same[["metric", "ratio_ci_low", "ratio_ci_high"]]
    assert (same.loc[same["metric"] == "peak_rss_mib", "rss_difference_kib"] == 0).all()
    slower = engines.engine_check(frames["here"], frames["slower"])
    time_rows = slower[slower["metric"] != "peak_rss_mib"]
    # ratio in-process / cluster: the cluster 3% slower reads about 0.971, a difference
    assert (time_rows["verdict_kind"] == "a").all() and time_rows["ratio"].between(0.96, 0.98).all()
    assert not time_rows["inside_margin"].astype(bool).any()


def test_the_paired_engine_check_takes_arm_a_here_and_arm_b_on_the_host_in_every_block(built, tmp_path):
    from bench_src.analysis import engines

    plan = make_plan("quick", workloads=["sleep"], ns=[10], samples=4, warmup=1, params={"sleep": {"work": 0}},
                     aa=True, smoke=True)
    with pytest.raises(ValueError, match="takes an A/A plan"):
        run(small_plan(), tmp_path / "no", ClusterSpec("local", workers=1), engines=True)
    report, logs = run(plan, tmp_path / "r", ClusterSpec("local", workers=1), engines=True)
    store = ResultsStore(tmp_path / "r")
    records = store.records()
    assert all(r["status"] == "ok" for r in records), [r.get("reason") for r in records]
    assert store.read_meta()["sessions"][-1]["engine"].startswith("engines-aa: arm A in-process, arm B on cluster")
    # the estimate counts what was taken: arm A's warm-ups here as well as every warm-up on the host
    assert report.estimate.samples == report.planned == len(records), (report.estimate, report.planned)
    assert "arm A's 2 warm-up samples taken here" in str(report.estimate)
    done = measured(records)
    assert sorted(r["sample_id"] for r in done) == sorted(s.sample_id for s in plan.schedule() if s.phase == "measured")
    by_arm = {arm: [r for r in done if r["arm"] == arm] for arm in "AB"}
    assert not any(r.get("host") for r in by_arm["A"]), "arm A is taken in this process"
    assert all(r.get("host") and r.get("attempt") for r in by_arm["B"]), "arm B on the host"
    per_block = {}
    for r in by_arm["B"]:
        per_block.setdefault(r["block"], set()).add(r["attempt"])
    assert sorted(per_block) == list(range(plan.samples)) and all(len(a) == 1 for a in per_block.values())
    # the two arms of a block run one after the other, in an order drawn per block
    import random

    firsts = {b: min((r for r in done if r["block"] == b), key=lambda r: r["started_at"])["arm"] for b in per_block}
    drawn = {b: "A" if random.Random(f"{plan.seed}:engines:measured:{b}").random() < 0.5 else "B" for b in per_block}
    assert firsts == drawn
    for b in per_block:  # one arm whole, then the other
        arms = [r["arm"] for r in sorted((r for r in done if r["block"] == b), key=lambda r: r["started_at"])]
        assert arms == sorted(arms, key=lambda a: a != firsts[b]), (b, arms)
    table = engines.paired_check(store.load())
    assert set(table["metric"]) == {"wall_s", "elapsed_s", "peak_rss_mib"}
    assert (table["pairing"] == "paired").all() and (table["pairs"] == plan.samples).all()
    # a directory of the check resumes as the check only
    with pytest.raises(ValueError, match="resume it the same way .as the engines' A/A check"):
        run(plan, tmp_path / "r", ClusterSpec("local", workers=1))


def test_the_engines_check_uses_the_callers_context_and_one_that_fails_to_stop_leaves_no_host(built, tmp_path):
    """Arm A is prepared by the context the caller gives (before, the check made its own and ignored
    it); a context whose stop fails still lets the session close its host (before, the local
    cluster's worker process outlived the run)."""
    plan = make_plan("quick", workloads=["sleep"], ns=[10], samples=3, warmup=1, params={"sleep": {"work": 0}},
                     aa=True, smoke=True)

    class Failing(runner.NoContext):
        started = 0

        def start(self, plan, store):
            self.started += 1
            return {"prepared_by": "the caller"}

        def stop(self):
            raise RuntimeError("the context failed to stop")

    context = Failing()
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(RuntimeError, match="failed to stop"):
        run(plan, tmp_path / "r", ClusterSpec("local", workers=1), engines=True, context=context)
    assert context.started == 1
    assert ResultsStore(tmp_path / "r").read_meta()["sessions"][-1]["context"] == {"prepared_by": "the caller"}
    # multiprocessing's resource tracker lives as long as this process does: not a host
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(p.cmdline())]
    assert left == [], [p.cmdline() for p in left]


def test_the_engines_check_takes_arm_a_warm_ups_again_only_before_a_measured_sample(built, tmp_path):
    """A finished sequential check run again looks again and takes nothing: before, it took every
    warm-up of arm A again in each such session (the host of arm B takes its own in its first block)."""
    plan = make_plan("quick", workloads=["sleep"], ns=[10], samples=3, max_samples=4, looks=2, warmup=1,
                     params={"sleep": {"work": 0}}, aa=True, smoke=True)
    run(plan, tmp_path / "r", ClusterSpec("local", workers=1), engines=True)
    store = ResultsStore(tmp_path / "r")
    first = store.records()
    assert any(r["phase"] == "warmup" and r["arm"] == "A" and not r.get("host") for r in first), "taken the first time"
    run(plan, tmp_path / "r", ClusterSpec("local", workers=1), engines=True)
    again = [r["sample_id"] for r in store.records()[len(first):] if r["phase"] == "warmup"]
    assert again == [], again


@two_cpus
def test_the_local_cluster_admits_no_one_without_its_keys(tmp_path):
    from distributed import Client

    from bench_src.run.cluster import engine

    hosts = engine.Hosts(ClusterSpec("local", workers=1), small_plan(), None, None, set(), lambda *_: None)
    hosts.cluster = None
    try:
        hosts.start_cluster()
        address = hosts.client.scheduler.address
        assert address.startswith("tls://127.0.0.1:"), address
        for attempt in (address, address.replace("tls://", "tcp://")):
            with pytest.raises(Exception):
                Client(attempt, timeout=3, set_as_default=False)
            # the refused Client sits in a reference cycle with its traceback: collected here, and
            # not by a collection inside the next Client's start, where its __del__ would wait for
            # the loop runner's lock that the start holds (a deadlock seen in a full test run)
            gc.collect()
    finally:
        hosts.close()


@two_cpus
def test_the_local_cluster_serves_no_page_to_anyone_over_http(tmp_path):
    """Dask's scheduler and workers listen for HTTP beside their TLS ports, dashboard or not (the
    scheduler on 127.0.0.1:8787 by default): pages of workers, logs, counts and metrics for any
    local user.  The local cluster's serve none, and the scheduler's is not on 8787."""
    import urllib.error
    import urllib.request

    import psutil

    from bench_src.run.cluster import engine

    hosts = engine.Hosts(ClusterSpec("local", workers=1), small_plan(), None, None, set(), lambda *_: None)
    hosts.cluster = None
    try:
        hosts.start_cluster()
        me = psutil.Process()
        listening = {c.laddr.port for p in [me, *me.children(recursive=True)] for c in p.net_connections("tcp")
                     if c.status == psutil.CONN_LISTEN}
        http = hosts.cluster.scheduler.http_server.port
        assert http in listening and http != 8787
        served = []
        for port in sorted(listening):
            for path in ("/health", "/metrics", "/json/identity.json", "/info/main/workers.html",
                         "/info/main/logs.html"):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
                        served.append((port, path, answer.status))
                except (urllib.error.HTTPError, OSError):
                    pass  # 404, or a TLS port that resets a plain connection
        assert served == []
    finally:
        hosts.close()


def test_the_programs_of_a_host_get_the_clients_values_of_what_dasks_nanny_sets(monkeypatch):
    from bench_src.run.cluster import host

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # as a nanny leaves it in a worker
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    plugin = host.HostPlugin({}, "r", 1, {}, [], client_env={"MALLOC_TRIM_THRESHOLD_": None, "OMP_NUM_THREADS": "4"})
    env = plugin.program_env()
    assert "MALLOC_TRIM_THRESHOLD_" not in env and env["OMP_NUM_THREADS"] == "4"


def test_a_lost_block_records_only_what_no_attempt_delivered_so_a_complete_block_stays_kept():
    """A block whose task is lost after every sample arrived (the host died before returning, or the
    scheduler went away) is complete: a lost attempt as long as it, written after it, would be the
    attempt the store keeps (of equally long attempts, the last written), its samples done, never
    taken again, and the block's measurements out of the frame."""
    from bench_src.run.sample import record

    plan = small_plan()
    hosts, stored, block = hosts_without_a_cluster(plan)
    hosts.done = {s.sample_id for _, s in block}
    delivered = [dict(record(s, i, "r", 1, {"status": "ok"}), attempt="a1") for i, s in block]
    hosts.running = {"future": block}
    hosts.scheduler_lost()
    assert stored == [] and hosts.running == {}
    kept, abandoned = current_attempts(delivered + stored)
    assert kept == delivered and abandoned == []

    # half of it delivered (by host h1): the other half stored as lost, with the reason and the host,
    # for the resume to take again
    hosts.done = {s.sample_id for _, s in block[: len(block) // 2]}
    hosts.block_host = {(block[0][1].phase, block[0][1].block): "h1"}
    hosts.running = {"future": block}
    hosts.scheduler_lost()
    assert [r["sample_id"] for r in stored] == [s.sample_id for _, s in block[len(block) // 2:]]
    assert all(r["status"] == "host_lost" and "scheduler was lost while the block ran" in r["reason"]
               and r["host"] == "h1" for r in stored)

    # nothing of it arrived (handed out as the scheduler went, perhaps never started): said so, no host
    stored.clear()
    hosts.done, hosts.block_host = set(), {}
    hosts.running = {"future": block}
    hosts.scheduler_lost()
    assert len(stored) == len(block) and all("before any sample of the block arrived" in r["reason"]
                                             and "host" not in r for r in stored)


def test_a_block_whose_result_cannot_be_fetched_from_a_scheduler_gone_is_stored_as_lost():
    from bench_src.run.cluster import engine

    class Finished:  # done on its host, but its result is on a scheduler that no longer answers
        status = "finished"

        def done(self):
            return True

        def add_done_callback(self, callback):
            pass

        def result(self):
            raise OSError("Timed out trying to connect to tcp://127.0.0.1:1 after 3 s")

    class Client:
        status = "running"

        def nthreads(self):
            return {"tcp://127.0.0.1:2": 1}

        def submit(self, *args, **kwargs):
            return Finished()

    hosts, stored, block = hosts_without_a_cluster(small_plan())
    hosts.client = Client()
    with pytest.raises(engine.HostsError, match="the scheduler is gone .OSError: Timed out trying to connect"):
        hosts.take_blocks([block], None)
    assert [r["sample_id"] for r in stored] == [s.sample_id for _, s in block]
    assert all(r["status"] == "host_lost" and "scheduler was lost" in r["reason"] for r in stored)


def test_a_block_dask_gives_up_on_is_stored_as_host_lost_and_taken_again_on_resume(tmp_path):
    from distributed import KilledWorker

    class GaveUp:  # what a future of a block looks like after its hosts kept dying
        status = "error"

        def exception(self):
            return KilledWorker("block-measured-0", SimpleNamespace(address="tls://127.0.0.1:1"), 3)

        def release(self):
            pass

    hosts, stored, block = hosts_without_a_cluster(small_plan())
    hosts.finish(GaveUp(), block)
    assert [r["sample_id"] for r in stored] == [s.sample_id for _, s in block]
    assert all(r["status"] == "host_lost" and "lost" in r["reason"] and "next resume" in r["reason"] for r in stored)
    from bench_src.store.ledger import RETRY_STATUSES

    assert "host_lost" in RETRY_STATUSES, "a resume takes them again"


def test_a_host_removed_from_the_scheduler_is_said_and_recorded_with_its_block_and_reason():
    """A host killed mid-run left no trace (no line, nothing in meta.json): the scheduler's event of
    a worker's removal is said in one line naming the host, its block and why, and recorded in the
    session's hosts_lost; a removal between blocks too, and a worker that never was a host not."""
    from bench_src.run.sample import record

    plan = small_plan()
    first = _host_description("tcp://127.0.0.1:1001", "0")
    hosts = _hosts_with({"tcp://127.0.0.1:1001": first}, live={"tcp://127.0.0.1:1001"})
    recorded, logs, stored = [], [], []
    hosts.store = SimpleNamespace(run_id="r", session=1, update_session=lambda **k: recorded.append(k))
    hosts.log, hosts.keep = logs.append, lambda slot, rec, tl: stored.append(rec)
    hid = store_hosts.host_id(first["fingerprint"])
    block = [(i, s) for i, s in enumerate(plan.schedule()) if s.phase == "measured" and s.block == 2]
    for seq, slot in block[:2]:  # two of its samples arrive, then its host goes
        hosts.slots[slot.sample_id] = slot
        rec = dict(record(slot, seq, "r", 1, {"status": "ok", "reason": ""}), host=hid, attempt="a1")
        hosts.receive({"kind": "sample", "record": rec})
    class Future:  # a running block's future, by its key
        key = "block-measured-2-abcd"

    hosts.running = {Future(): block}
    hosts.scheduler_event((1.0, {"action": "add-worker", "worker": "tcp://127.0.0.1:1009"}))
    hosts.scheduler_event((2.0, {"action": "remove-worker", "worker": "tcp://127.0.0.1:1001",
                                 "processing-tasks": {"block-measured-2-abcd"}, "expected": False,
                                 "stimulus_id": "handle-worker-cleanup-1718000000.5"}))
    hosts.scheduler_event((3.0, {"action": "remove-worker", "worker": "tcp://127.0.0.1:1009",
                                 "processing-tasks": set(), "expected": False, "stimulus_id": "x-1"}))
    hosts.drain()
    assert logs == [f"host {hid} at tcp://127.0.0.1:1001 was lost while it ran measured block 2 (the scheduler lost "
                    "its connection to the worker (killed, stopped, or its network went)): 2 of its 4 samples had "
                    "arrived; the block runs again whole (should Dask give up on it, those that did not arrive are "
                    "stored as host_lost)"], logs
    entry = recorded[-1]["hosts_lost"][0]
    assert len(recorded[-1]["hosts_lost"]) == 1 and entry["at"]
    assert {k: entry[k] for k in ("host", "worker", "phase", "block", "attempt", "samples_delivered")} == {
        "host": hid, "worker": "tcp://127.0.0.1:1001", "phase": "measured", "block": 2, "attempt": "a1",
        "samples_delivered": 2}
    # between blocks (retired by the scheduler): said, recorded, nothing lost
    hosts.running = {}
    hosts.receive({"kind": "worker removed", "worker": "tcp://127.0.0.1:1001", "tasks": [], "expected": True,
                   "stimulus": "retire-workers-1.0"})
    assert logs[-1] == (f"host {hid} at tcp://127.0.0.1:1001 left the run between blocks (the worker was retired "
                        "or closed); none of its samples is lost")
    assert len(recorded[-1]["hosts_lost"]) == 2 and "block" not in recorded[-1]["hosts_lost"][1]
    # the samples set aside carry the reason of their attempt's loss; others the general one
    from bench_src.store.ledger import LEFT_INCOMPLETE, set_aside_reasons

    reasons = set_aside_reasons([{"attempt": "a1"}, {"attempt": "a1"}, {"attempt": "session:1"}],
                                [{"hosts_lost": recorded[-1]["hosts_lost"]}])
    assert reasons == {f"its host {hid} was lost at {entry['at']} while it ran the block ({entry['reason']}), and "
                       "the block was taken again whole": 2, LEFT_INCOMPLETE: 1}


def test_samples_lost_with_their_host_are_counted_apart_from_those_taken():
    """A block Dask gave up on is stored as host_lost samples: counted as lost, not taken, and not
    done on the progress line, so that the run ends incomplete, not "finished" at 100%."""
    from bench_src.run.sample import record

    plan = small_plan()
    hosts, _, block = hosts_without_a_cluster(plan)
    report = runner.RunReport(Path("r"), len(block), 0)
    bar = Progress("r", report.planned, 0, enabled=False, seconds=lambda c: 1.0)
    hosts.keep = SampleKeeper(SimpleNamespace(append=lambda rec: None, write_timeline=None),
                              runner.ChecksumBook([]), report, bar, lambda *_: None)
    seq, slot = block[0]
    hosts.slots[slot.sample_id] = slot
    rec = dict(record(slot, seq, "r", 1, {"status": "failed", "reason": "exit 1"}), host="h1", attempt="a1")
    hosts.receive({"kind": "sample", "record": rec}, replayed=True)
    hosts.record_lost(block, "the block's host was lost 1 times while running it")
    assert (report.taken, report.lost, bar.done) == (1, len(block) - 1, 1)
    assert report.incomplete and str(report).startswith("incomplete after ")
    assert f"1 sample taken now, {len(block) - 1} lost with their hosts (host_lost, never taken)" in str(report)
    report.interrupted = True  # ended by an error (the scheduler gone): that error says so
    assert not report.incomplete


def test_the_method_says_a_host_was_lost_only_when_one_was_with_the_counts():
    """The Method said "A block whose host was lost mid-block was run again whole" of every cluster
    run, whether or not a host was lost."""
    from bench_src.report import method

    host = {"label": "a host"}
    meta = {"sessions": [{"engine": "cluster local:2", "hosts": {"h1": host, "h2": host}}]}
    assert "lost" not in method.cluster_text(meta) and "hosts of a Dask cluster" in method.cluster_text(meta)
    meta["sessions"][0]["hosts_lost"] = [
        {"host": "h1", "phase": "measured", "block": 3, "attempt": "a1", "samples_delivered": 2, "reason": "x"},
        {"host": "h2", "reason": "y"}]
    assert method.cluster_text(meta).endswith(
        " A host was lost 2 times during the run, 1 of them mid-block (2 samples of that block had arrived); a block "
        "cut by a lost host was taken again whole, and only complete runs of a block are analysed.")
    meta["sessions"][0]["hosts_lost"] = [{"host": "h2", "reason": "y"}]
    assert method.cluster_text(meta).endswith(" A host was lost 1 time during the run, each time between blocks.")


def test_a_block_cancelled_as_the_client_reconnects_says_whether_any_of_its_samples_arrived():
    """When the scheduler goes, Dask's client cancels every future at once while it reconnects:
    `finish` stores the block's samples as lost, saying "while the block ran" (with the host) only
    when some of them arrived, else that none did."""
    class Cancelled:
        status = "cancelled"

        def release(self):
            pass

    hosts, stored, block = hosts_without_a_cluster(small_plan())
    hosts.client = SimpleNamespace(status="connecting")
    hosts.finish(Cancelled(), block)
    assert len(stored) == len(block) and all("before any sample of the block arrived" in r["reason"]
                                             and "host" not in r for r in stored)
    stored.clear()
    hosts.block_host = {(block[0][1].phase, block[0][1].block): "h1"}
    hosts.done = {block[0][1].sample_id}
    hosts.finish(Cancelled(), block)
    assert len(stored) == len(block) - 1 and all("while the block ran" in r["reason"] and r["host"] == "h1"
                                                 for r in stored)


def test_a_host_that_joins_with_fewer_cpus_than_the_plans_cores_ends_the_run_naming_it():
    from bench_src.run.cluster import engine

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("a plan pinned to 2 cores needs two usable CPUs")
    hosts, stored, block = hosts_without_a_cluster(make_plan("quick", workloads=["sleep"], ns=[10], samples=6,
                                                             cores=[1, 2]))
    joiner = {"fingerprint": {"machine": {"usable_cpus": 1}}, "machine": {"usable_cpus": 1},
              "worker": "tcp://10.0.0.9:1", "label": "a small host"}
    with pytest.raises(engine.HostsError, match="host tcp://10.0.0.9:1 may run on 1 CPU"):
        hosts.record_host(joiner)


def test_the_engines_check_takes_a_block_cut_in_either_part_again_whole_in_both():
    """Arm A here and arm B on the host: a block whose arm A an earlier session completed and whose
    arm B it did not was resumed with arm B alone, a pair across two sessions."""
    plan = make_plan("quick", workloads=["sleep"], ns=[10], samples=3, warmup=0, params={"sleep": {"work": 0}},
                     aa=True, smoke=True)
    blocks = [[(q, s) for q, s in enumerate(plan.schedule()) if s.block == b] for b in range(3)]
    arm_a_done = {s.sample_id for _, s in blocks[0] if s.cell.arm != "B"}  # block 0: arm A only
    every_done = {s.sample_id for _, s in blocks[1]}  # block 1: whole
    here, there = [], []
    take_blocks = engines_take_blocks(plan, lambda q, s, **kw: here.append((s.block, kw)),
                                             lambda parts, deadline: there.extend(s.block for part in parts
                                                                                  for _, s in part),
                                             arm_a_done | every_done)
    assert take_blocks(blocks, None)
    assert sorted({b for b, _ in here}) == [0, 2] and all(kw == {} for _, kw in here), "block 0's arm A again, whole"
    assert sorted(set(there)) == [0, 2]


def test_a_host_stops_a_block_before_a_sample_when_a_program_was_replaced(tmp_path, monkeypatch):
    """A host checked its programs when it joined only: one rebuilt on the host during the session
    took the later samples under the session's old digest (an in-process session stops there)."""
    from bench_src.run.cluster import host
    from bench_src.run import sample as sample_module

    plan = small_plan(warmup=0)
    for name in ("benchlaunch", "gobench", "rustbench"):
        (tmp_path / name).write_bytes(b"v1")
    plugin = host.HostPlugin(plan.to_dict(), "r", 1, {}, ["benchlaunch", "gobench", "rustbench"])
    plugin.worker = SimpleNamespace(address="tcp://10.0.0.9:1", log_event=lambda *a: None)
    plugin.plan, plugin.scrubber, plugin.host, plugin.context = plan, host.Scrubber(), "h1", None
    plugin.bin_dir, plugin.watch = None, None
    monkeypatch.setattr(plugin, "programs", lambda: tmp_path)
    monkeypatch.setattr(plugin, "send_and_wait", lambda msg: None)
    taken = []

    def measure_slot(plan_, context, measure_fn, env, slot, seq, *args, **kw):
        taken.append(seq)
        if len(taken) == 2:  # a `make build` on the host: a new file at the same path
            (tmp_path / "rustbench.new").write_bytes(b"v2")
            os.replace(tmp_path / "rustbench.new", tmp_path / "rustbench")
        return {"status": "ok", "phase": slot.phase, "sample_id": slot.sample_id}, None

    monkeypatch.setattr(sample_module, "measure_slot", measure_slot)
    plugin.use_programs()
    block = [(q, s) for q, s in enumerate(plan.schedule()) if s.phase == "measured" and s.block == 0]
    with pytest.raises(host.BinariesRefused, match=r"host tcp://10.0.0.9:1: .*rustbench changed during this session"):
        plugin.take(block, "a1")
    assert len(taken) == 2, "the sample taken as it changed is delivered; none after it"


# --- one run per scheduler, a host that joins late, the harness each host runs -------------------
def test_a_second_run_on_a_scheduler_in_use_is_refused_before_any_sample(built, tmp_path, monkeypatch):
    """Two runs on one scheduler wrote each other's samples (the hosts' plugin, its events and
    acknowledgements have one name there): a run holds the scheduler's one lease, and another is
    refused, naming why, with nothing written (the lease is taken before the store opens)."""
    from distributed import Client, LocalCluster, Semaphore

    from bench_src.run.cluster import engine

    monkeypatch.setattr(engine, "LEASE_WAIT_S", 1.0)
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"host": 1},
                           memory_limit=0, dashboard_address=None)
    other = Client(cluster, set_as_default=False)
    try:
        held = Semaphore(max_leases=1, name=engine.RUN_LEASE, scheduler_rpc=other.scheduler, loop=other.loop)
        assert held.acquire(timeout=5)  # another run holds it
        with pytest.raises(ClusterError) as err:
            run(small_plan(), tmp_path / "r", parse_cluster(cluster.scheduler_address))
        assert "another run is using its hosts" in str(err.value) and "\n" not in str(err.value)
        # refused before the results directory was opened: no session recorded, no file written
        assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
        held.release()
    finally:
        other.close()
        cluster.close()


def _host_description(addr: str, cpu_set: str, digest: str = "same", hostname: str = "m1") -> dict:
    machine = {"hostname": hostname, "logical_cpus": 2, "usable_cpus": 1, "cpu_model": "x",
               "machine_id_digest": "0" * 16}
    d = {"machine": machine, "toolchains": {}, "binaries": {}, "worker": addr, "cpu_set": cpu_set,
         "harness": {"git_commit": "abc", "digest": digest}, "label": "a host"}
    d["fingerprint"] = store_hosts.fingerprint(d)
    return d


def _hosts_with(workers: dict[str, dict], live: set[str]):
    from bench_src.run.cluster import engine

    plan = small_plan()
    hosts = engine.Hosts(parse_cluster("tcp://127.0.0.1:1"), plan, SimpleNamespace(update_session=lambda **k: None),
                         lambda *a: None, set(), lambda text: None)
    hosts.client = SimpleNamespace(scheduler_info=lambda n_workers=-1: {"workers": {a: {} for a in live}})
    hosts.harness = {"git_commit": "abc", "digest": "same"}
    hosts.by_worker = dict(workers)
    hosts.hosts = {store_hosts.host_id(d["fingerprint"]): d for d in workers.values()}
    hosts.count = hosts.warmup_rounds = len(workers)  # as `start` leaves them
    hosts.unannounced = set(workers)
    return hosts


def test_a_worker_joining_on_cpus_another_host_runs_on_is_refused():
    """A worker started mid-run with `taskset -c 0` beside the one already on CPU 0 was taken in
    (44 pairs of samples overlapped in time): a host that joins is checked against the workers still
    there as the hosts at the start are; a worker restarted on the same CPUs replaces its old self."""
    from bench_src.run.cluster import engine

    first = _host_description("tcp://127.0.0.1:1001", "0")
    hosts = _hosts_with({"tcp://127.0.0.1:1001": first}, live={"tcp://127.0.0.1:1001", "tcp://127.0.0.1:1002"})
    with pytest.raises(engine.HostsError, match="run on the same CPUs"):
        hosts.record_host(_host_description("tcp://127.0.0.1:1002", "0"))
    # the old worker gone (its nanny restarted it at another address): the new one is that host again
    hosts = _hosts_with({"tcp://127.0.0.1:1001": first}, live={"tcp://127.0.0.1:1002"})
    hosts.record_host(_host_description("tcp://127.0.0.1:1002", "0"))
    # on CPUs of its own: joins, and its warm-ups add to the planned count (the progress read 110/100)
    hosts = _hosts_with({"tcp://127.0.0.1:1001": first}, live={"tcp://127.0.0.1:1001", "tcp://127.0.0.1:1003"})
    more = []
    hosts.on_warmups = more.append
    hosts.record_host({**first, "nofile_limit_for_programs": {"soft": 1, "hard": 1}})  # a host of the start: none
    hosts.record_host(_host_description("tcp://127.0.0.1:1003", "1"))
    assert set(hosts.by_worker) == {"tcp://127.0.0.1:1001", "tcp://127.0.0.1:1003"}
    assert more == [len(hosts.warmup_slots)] and more[0] > 0


def test_two_machines_of_the_same_hardware_are_two_hosts_and_workers_alike_are_named():
    """Two identical nodes (differing only in their hostname) were one host id: the second's
    description replaced the first's in meta.json.  They are two hosts, each described; two workers
    that nothing tells apart (one host id) are refused in one line that says so."""
    from bench_src.run.cluster import engine

    first = _host_description("tcp://10.0.0.1:1001", "0", hostname="nodeA")
    hosts = _hosts_with({"tcp://10.0.0.1:1001": first}, live={"tcp://10.0.0.1:1001", "tcp://10.0.0.2:1001"})
    hosts.record_host(_host_description("tcp://10.0.0.2:1001", "0", hostname="nodeB"))
    described = hosts.describe()
    assert len(described) == 2 and sorted(d["machine"]["hostname"] for d in described.values()) == ["nodeA", "nodeB"]
    twin = _host_description("tcp://10.0.0.3:1001", "0", hostname="nodeA")
    with pytest.raises(engine.HostsError) as err:
        engine.refuse_shared_cpus({"tcp://10.0.0.1:1001": first, "tcp://10.0.0.3:1001": twin})
    assert (f"or are two machines that nothing tells apart (one host {store_hosts.host_id(first['fingerprint'])} "
            "to this run") in str(err.value) and "give each a hostname of its own" in str(err.value)
    assert "\n" not in str(err.value)


def _hosts_counting(tmp_path, workers: dict[str, dict]):
    """Hosts with these workers at the start, storing what they receive through the runner's keeper
    into a progress line and a report planned as the runner plans them; and a function that sends a
    round of warm-ups as a host takes them, returning (done, planned) after each."""
    from bench_src.run.sample import record
    from bench_src.store.ledger import warmup_again_id

    hosts = _hosts_with(workers, live=set(workers) | {"tcp://127.0.0.1:1003"})
    report = runner.RunReport(tmp_path, hosts.warmup_samples(), 0)
    bar = Progress("r", report.planned, 0, enabled=False, seconds=lambda c: 1.0)
    hosts.on_warmups = bar.add_planned
    hosts.store = SimpleNamespace(run_id="r", session=1, update_session=lambda **k: None)
    hosts.keep = SampleKeeper(SimpleNamespace(append=lambda rec: None, write_timeline=None),
                                     runner.ChecksumBook([]), report, bar, lambda *_: None)

    def warm_ups(attempt, how_many):
        seen = []
        for seq, slot in list(enumerate(hosts.warmup_slots.values()))[:how_many]:
            rec = dict(record(slot, seq, "r", 1, {"status": "failed", "reason": "x"}), host="h1", attempt=attempt)
            rec["sample_id"] = warmup_again_id(slot.sample_id, f"h1:{attempt}")
            hosts.receive({"kind": "sample", "record": rec})
            seen.append((bar.done, bar.planned))
        return seen

    return hosts, bar, warm_ups


def test_a_host_that_starts_again_at_its_old_address_plans_its_warm_ups_again(tmp_path):
    """A worker started by hand with a fixed port, killed mid-run and restarted by its nanny at the
    same address, took the plan's warm-ups again without adding them to the planned count: the
    progress line read "44/40 samples (110%)".  Each time a host says it begins (once per start of
    its worker) is a round of warm-ups, planned; the warm-ups of a round cut short by the host's
    loss, and of a host given no block, leave the count once every block has run (a local host
    killed during its warm-ups left a finished run at "57/68 samples (84%)")."""
    first = _host_description("tcp://127.0.0.1:1001", "0")
    hosts, bar, warm_ups = _hosts_counting(tmp_path, {"tcp://127.0.0.1:1001": first})
    n = len(hosts.warmup_slots)
    hosts.receive({"kind": "host", "description": first})  # planned at the start
    seen = warm_ups("warmup-a", 2)  # then its worker is killed, and its nanny starts it again, as it was
    hosts.receive({"kind": "host", "description": first})
    seen += warm_ups("warmup-b", n)
    assert all(done <= planned for done, planned in seen), seen
    assert bar.done == n + 2 and bar.planned == 2 * n
    assert hosts.warmups_forgone() == n - 2, "the round cut short"
    # a worker that joins: a round more
    hosts.receive({"kind": "host", "description": _host_description("tcp://127.0.0.1:1003", "1")})
    assert bar.planned == 3 * n and hosts.warmups_forgone() == (n - 2) + n

    # a host of the start given no block takes none of the warm-ups planned for it
    idle = _host_description("tcp://127.0.0.1:1002", "1")
    hosts, bar, warm_ups = _hosts_counting(tmp_path, {"tcp://127.0.0.1:1001": first, "tcp://127.0.0.1:1002": idle})
    hosts.receive({"kind": "host", "description": first})
    warm_ups("warmup-a", n)
    assert bar.planned == 2 * n and hosts.warmups_forgone() == n


def test_a_host_that_runs_other_harness_code_is_refused():
    """A worker started from a checkout three commits back ran the blocks without a word: a host
    whose harness code differs from the client's (or that does not say, an older one) is refused,
    at the start and when it joins."""
    from bench_src.run.cluster import engine

    hosts = _hosts_with({}, live={"tcp://127.0.0.1:1001"})
    with pytest.raises(engine.HostsError, match="runs other harness code than this client"):
        hosts.record_host(_host_description("tcp://127.0.0.1:1001", "0", digest="older"))
    with pytest.raises(engine.HostsError, match="an older harness, which does not say"):
        hosts.refuse_other_harness("tcp://127.0.0.1:1001", None)
    hosts.refuse_other_harness("tcp://127.0.0.1:1001", {"git_commit": "abc", "digest": "same"})


def test_the_scheduler_stops_the_hosts_plugin_when_the_run_s_client_is_gone(tmp_path):
    """kill -9 of the client left each host's database servers running until the next run: the
    scheduler, told by watch.ClientWatch, unregisters the hosts' plugin when that client leaves (here
    a client that closes without unregistering it, as a killed one does), so each host tears down."""
    from distributed import Client, LocalCluster, WorkerPlugin

    from bench_src.run.cluster import watch

    marker = tmp_path / "torn-down"

    class Servers(WorkerPlugin):
        name = "bench-host-test"

        def teardown(self, worker):
            marker.write_text("stopped")

    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    try:
        other = Client(cluster, set_as_default=False)  # a second client, to see the scheduler afterwards
        client = Client(cluster, set_as_default=False)
        client.register_plugin(Servers(), name=Servers.name)
        client.register_plugin(watch.ClientWatch(client.id, Servers.name, grace_s=0.5), name=watch.NAME)
        client.close()  # gone without unregistering anything
        deadline = time.monotonic() + 20
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marker.exists(), "the hosts' plugin was not torn down"
        assert other.run_on_scheduler(lambda dask_scheduler: watch.NAME in dask_scheduler.plugins) is False
        # another client leaving changes nothing
        assert watch.ClientWatch("someone", "x").remove_client(None, "else") is None
        other.close()
    finally:
        cluster.close()


def test_a_local_clusters_scratch_left_by_a_killed_client_is_removed_by_the_next_run_of_any_kind(
        tmp_path, monkeypatch):
    """kill -9 of a local:N client left /tmp/bench-dask-* behind: each is locked by its client, and it
    went only when the next run was a local cluster's too (an in-process run or one on a scheduler
    left it for good).  The next run of any kind removes those no live process holds (and only
    those), where it removes the sample directories of a killed harness."""
    import tempfile

    from bench_src.run import measure
    from bench_src.run.cluster import engine
    from bench_src.store.lock import DirLock

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / (measure.LOCAL_CLUSTER_PREFIX + "killed")
    (stale / "dask-scratch-space" / "worker-x").mkdir(parents=True)
    (stale / ".lock").write_text("999999 2020-01-01\n")  # its client gone: nobody holds it
    held = tmp_path / (measure.LOCAL_CLUSTER_PREFIX + "running")
    held.mkdir()
    lock = DirLock(held / ".lock", "another run's scratch").acquire()
    said = []
    try:
        runner.run(small_plan(), tmp_path / "r", progress=False, log=said.append, measure_fn=fake_measure(1.0, 1))
        assert not stale.exists() and held.exists()
        assert f"removed {stale}, left by a harness process that was killed" in said, said
        # a local cluster's own scratch: locked while it runs, removed at its close
        hosts = engine.Hosts(parse_cluster("local:1"), small_plan(), SimpleNamespace(), lambda *a: None, set(),
                             said.append)
        try:
            hosts.start_cluster()
            mine = Path(hosts.scratch)
            assert mine.name.startswith(measure.LOCAL_CLUSTER_PREFIX)
            assert mine.exists() and DirLock.held_by(mine / ".lock") is not None
            assert measure.remove_stale_scratch() == [], "a live client's scratch stays"
        finally:
            hosts.close()
    finally:
        lock.release()
    assert not mine.exists()


def test_the_watch_leaves_the_hosts_alone_when_the_client_comes_back_within_its_grace():
    """A dropped connection (the client reconnects with the same id) tore the hosts down mid-sample:
    the watch waits watch.GRACE_S and stops the hosts only if the client has not come back."""
    import asyncio

    from bench_src.run.cluster import watch

    class Scheduler:
        def __init__(self, clients):
            self.clients, self.worker_plugins, self.plugins, self.removed = clients, {"bench-host": 1}, {}, []

        async def unregister_worker_plugin(self, comm, name):
            self.removed.append(name)
            self.worker_plugins.pop(name)

        def remove_plugin(self, name):
            self.plugins.pop(name)

    back, gone = Scheduler({"c1": object()}), Scheduler({})
    for scheduler in (back, gone):
        scheduler.plugins[watch.NAME] = watching = watch.ClientWatch("c1", "bench-host", grace_s=0.01)
        asyncio.run(watching.stop_hosts(scheduler))
    assert back.removed == [] and watch.NAME in back.plugins
    assert gone.removed == ["bench-host"] and watch.NAME not in gone.plugins
    assert watch.GRACE_S >= 60


@WATCH_REPLACED
def test_a_killed_clients_watch_leaves_the_hosts_of_the_run_resumed_within_its_grace(tmp_path):
    """kill -9 of a scheduler run's client, the same command again at once: the new client's watch
    and hosts' plugin replace the killed one's under the same names, and when the killed client's
    grace ended its watch unregistered the hosts' plugin, now the resumed run's, stopping its
    servers mid-run.  A watch that has been replaced does nothing; the registered one still acts."""
    from distributed import Client, LocalCluster, WorkerPlugin

    from bench_src.run.cluster import watch

    class Servers(WorkerPlugin):
        name = "bench-host-test"

        def __init__(self, owner):
            self.owner = owner

        def teardown(self, worker):
            (tmp_path / f"{self.owner}-torn-down").write_text("stopped")

    def torn_down(owner, within):
        deadline = time.monotonic() + within
        while not (tmp_path / f"{owner}-torn-down").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        return (tmp_path / f"{owner}-torn-down").exists()

    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    try:
        other = Client(cluster, set_as_default=False)  # to see the scheduler afterwards
        killed = Client(cluster, set_as_default=False)
        killed.register_plugin(watch.ClientWatch(killed.id, Servers.name, grace_s=1.5), name=watch.NAME)
        killed.register_plugin(Servers("killed"), name=Servers.name)
        killed.close()  # gone without unregistering anything, as a killed client is
        resumed = Client(cluster, set_as_default=False)  # within the killed one's grace, in engine.py's order
        resumed.register_plugin(watch.ClientWatch(resumed.id, Servers.name, grace_s=1.5), name=watch.NAME)
        resumed.register_plugin(Servers("resumed"), name=Servers.name)
        assert torn_down("killed", 5), "registering the resumed run's plugin replaces the killed one's"
        assert not torn_down("resumed", 4), "the killed client's watch stopped the resumed run's hosts"
        assert other.run_on_scheduler(lambda dask_scheduler: watch.NAME in dask_scheduler.plugins) is True
        resumed.close()  # killed in its turn: its own watch acts
        assert torn_down("resumed", 20)
        assert other.run_on_scheduler(lambda dask_scheduler: watch.NAME in dask_scheduler.plugins) is False
        other.close()
    finally:
        cluster.close()


def test_closing_releases_the_lease_and_closes_the_client_whatever_fails_before():
    """A full disk while the last samples were stored (drain) skipped the lease's release and the
    client's close; so did a watch already gone.  Each step is tried whatever the one before did."""
    from bench_src.run.cluster import engine

    calls = []
    hosts = engine.Hosts(parse_cluster("tcp://127.0.0.1:1"), small_plan(), SimpleNamespace(), lambda *a: None, set(),
                         calls.append)

    def failing(*_a, **_k):
        raise OSError(28, "No space left on device")

    hosts.drain = failing
    hosts.plugin, hosts.watched, hosts.following = True, True, True
    hosts.client = SimpleNamespace(unregister_worker_plugin=lambda name: calls.append("servers"),
                                   unregister_scheduler_plugin=failing, close=lambda: calls.append("closed"),
                                   unsubscribe_topic=lambda topic: calls.append(f"left {topic}"))
    hosts.lease = SimpleNamespace(release=lambda: calls.append("released"))
    with pytest.raises(OSError):
        hosts.close()
    assert "servers" in calls and "released" in calls and calls[-1] == "closed", calls
    # the scheduler's events left before the client closes: else the scheduler sends this client its
    # own removal as it leaves, and logs a closed connection with its traceback on the run's stderr
    assert f"left {engine.SCHEDULER_EVENTS}" in calls, calls


def test_a_host_that_joins_mid_run_without_programs_gets_the_sessions(built, tmp_path):
    """A worker added mid-run on a machine without programs ended the run ("build the same commit
    there, or remove them so that the client ships its own", though it had none): on a scheduler the
    client's programs go with the plugin to every host, and a host without its own uses them."""
    empty = tmp_path / "nothing"
    empty.mkdir()
    directory = tmp_path / "r"
    records, _ = run_while_a_host_joins(directory, {"PATH": "/nonexistent", "BENCH_BIN_DIR": str(empty)})
    took = Counter(r["host"] for r in records)
    assert len(took) == 2 and all(r["status"] == "ok" for r in records), (took, Counter(r["status"] for r in records))
    described = ResultsStore(directory).read_meta()["sessions"][-1]["hosts"]
    late = next(h for h in took if described[h]["toolchains"]["go"] == "missing")
    assert all("/bench-host-" in r["command"].split()[0] for r in records if r["host"] == late)


# --- a host's scratch directory full ----------------------------------------------------------------
def test_a_hosts_full_scratch_directory_stops_the_run_in_the_one_line_of_a_full_disk_naming_the_host(tmp_path):
    """A host whose TMPDIR filled up ended a cluster run with "a block failed on its host: ScratchFull:
    ...", where a run on one machine stops with the line of a full disk: the host sends back its
    ScratchFull naming itself, the client stops the run with it, and the store's line names both."""
    import errno
    import pickle

    from bench_src.run.cluster import host
    from bench_src.store.space import ScratchFull

    plugin = host.HostPlugin({}, "r", 1, {}, [])
    plugin.worker = SimpleNamespace(address="tls://127.0.0.1:1")
    plugin.host, plugin.scratch = "h1", tmp_path
    full = plugin.full_disk(ScratchFull("/scratch", "the launcher could not write its result"))
    again = pickle.loads(pickle.dumps(full))  # as Dask carries it from the host to the client
    assert (again.filename, again.host, again.detail) == ("/scratch", "h1 at tls://127.0.0.1:1",
                                                          "the launcher could not write its result")
    # a full disk met elsewhere on the host (its fixtures, the programs shipped to it) is its scratch's too
    other = plugin.full_disk(OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "fixtures" / "f")))
    assert other.filename == str(tmp_path / "fixtures") and other.host == "h1 at tls://127.0.0.1:1"

    class Failed:  # the block's task, failed on its host with that error
        status = "error"

        def exception(self):
            return again

        def release(self):
            pass

    hosts, stored, block = hosts_without_a_cluster(small_plan())
    with pytest.raises(ScratchFull) as raised:
        hosts.finish(Failed(), block)
    assert stored == [], "no sample of the block is recorded as failed: the resume takes it whole"
    line = str(ResultsStore(tmp_path / "r").disk_full(raised.value, created=True))
    assert line.startswith("the disk is full: no space left on the device holding /scratch on host h1 at "
                           "tls://127.0.0.1:1 (writing a sample's scratch files: the harness's temporary directory, "
                           "TMPDIR); "), line
    assert "give that host's worker a TMPDIR on a disk with room" in line and line.endswith("run the same command again")


@pytest.fixture
def small_scratch(tmp_path):
    """A 2 MB tmpfs for the hosts' TMPDIR."""
    with tmpfs.mounted(tmp_path / "scratch", "2m", "the test above sends a host's full disk to the client instead") \
            as disk:
        yield disk


@pytest.mark.slow
def test_a_real_full_tmpdir_on_a_host_stops_the_run_in_one_line_naming_it_then_the_same_command_resumes(
        built, small_scratch, tmp_path):
    """The hosts' TMPDIR on a 2 MB tmpfs, filled once a few samples are stored: the run ends with the
    line of a full disk naming the host and the directory, not a generic error, and the same command
    resumes once there is room."""
    out = tmp_path / "r"
    command = [sys.executable, "-m", "bench_src", "run", "--no-progress", "--cluster", "local:1", "--results-dir",
               str(out), "--plan", "{workloads: [sleep], ns: [10, 100], samples: 8, params: {sleep: {work: 0}}, "
               "threads: 1, smoke: true}"]
    env = {**os.environ, "TMPDIR": str(small_scratch)}
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    samples, deadline = out / "samples.jsonl", time.monotonic() + 300
    while first.poll() is None and time.monotonic() < deadline:
        if samples.exists() and len(samples.read_text().splitlines()) >= 3:
            with open(small_scratch / "filler", "wb", buffering=0) as f:
                try:
                    while True:
                        f.write(b"\0" * 65536)
                except OSError:
                    pass
            break
        time.sleep(0.05)
    _, err = first.communicate(timeout=300)
    last = err.strip().splitlines()[-1]
    assert first.returncode == 2 and "Traceback" not in err, err[-3000:]
    hid = next(iter(ResultsStore(out).read_meta()["sessions"][-1]["hosts"]))
    assert last.startswith(f"error: the disk is full: no space left on the device holding {small_scratch} on host "
                           f"{hid} at tls://127.0.0.1:"), last
    assert "(writing a sample's scratch files: the harness's temporary directory, TMPDIR)" in last, last
    assert last.endswith("then run the same command again to resume"), last
    (small_scratch / "filler").unlink()
    second = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert second.returncode == 0, second.stderr[-2000:]
    sessions = ResultsStore(out).read_meta()["sessions"]
    assert sessions[0]["ended"].startswith("error: the disk is full") and sessions[-1]["ended"] == "finished"
