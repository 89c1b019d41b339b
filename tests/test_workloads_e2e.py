"""Every workload through the real harness path (fixtures restored, servers started by the
harness), checked against the Python oracle: Go and Rust agree, and every sample of a cell prints
the same checksum.  The database runs also show that no password is at rest or in argv, that
another local user cannot reach the servers during a run, that two runs side by side do not
disturb each other, and that every driver fails fast when its server is killed."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from bench_src import api
from bench_src.catalogue import WORKLOADS
from bench_src.run import measure, runner, servers
from bench_src.plan import make_plan
from bench_src.run.resources import Resources
from bench_src.store import DirLock
from reference import files_read_checksum, files_rw_checksum, ping_pong_checksum, sql_checksum

pytestmark = pytest.mark.slow
QUIET = dict(progress=False, log=lambda *_: None)

ORACLE = {
    "files_read": files_read_checksum,
    "files_rw": files_rw_checksum,
    "sqlite": sql_checksum,
    "mysql": sql_checksum,
    "postgres": sql_checksum,
}


def need_servers(*kinds):
    for kind in kinds:
        why = servers.missing(kind)
        if why:
            if os.environ.get("CI"):
                pytest.fail(f"CI must install the servers: {why}")
            pytest.skip(why)


def run_and_load(plan, path):
    report = runner.run(plan, path, **QUIET)
    assert report.taken == len(plan.schedule())
    return api.load(path)


def assert_agrees_with_oracle(df, oracle):
    bad = df[df["status"] != "ok"]
    assert bad.empty, bad[["cell_id", "status", "reason"]].to_string()
    for (w, n), g in df.groupby(["workload", "n"]):
        assert set(g["checksum"]) == {oracle[w](int(n))}, (w, n, set(g["checksum"]))
        assert set(g["lang"]) == {"go", "rust"}


@pytest.mark.parametrize("workload", ["files_read", "files_rw", "sqlite"])
def test_file_workloads_all_variants_agree(built, tmp_path, workload):
    plan = make_plan("quick", workloads=[workload], ns=[10, 1000], variants="all", samples=2, smoke=True, warmup=0)
    df = run_and_load(plan, tmp_path / "r")
    assert_agrees_with_oracle(df, ORACLE)


def test_file_switches_agree_with_the_oracle(built, tmp_path):
    """digest=off (both workloads) and flush=off (files_rw, Rust only) in every variant: files_read
    without its digest sums the bytes read, and neither switch changes files_rw's checksum (the
    files' final sizes count every append, waited for or not)."""
    plan = make_plan("quick", workloads=["files_read", "files_rw"], ns=[10, 1000], variants="all", samples=1,
                     smoke=True, warmup=0,
                     params={"files_read": {"digest": ["on", "off"]},
                             "files_rw": {"digest": ["on", "off"], "flush": ["on", "off"]}})
    df = run_and_load(plan, tmp_path / "r")
    bad = df[df["status"] != "ok"]
    assert bad.empty, bad[["cell_id", "status", "reason"]].to_string()
    for row in df.itertuples():
        want = (files_read_checksum(row.n, row.p_digest) if row.workload == "files_read"
                else files_rw_checksum(row.n))
        assert row.checksum == want, row.cell_id
    rust_rw = df[(df["workload"] == "files_rw") & (df["lang"] == "rust")]
    assert set(rust_rw["p_flush"]) == {"on", "off"}
    assert df.loc[df["lang"] == "go", "p_flush"].isna().all(), "Go takes no flush"
    assert set(df["p_digest"]) == {"on", "off"}


# SQLite stays at N = 1000: at 10,000 a connection starved past the 5 s busy
# timeout (a legitimate, recorded outcome) shows up whenever the disk is busy.
@pytest.mark.parametrize(("workload", "n"), [("files_rw", 10000), ("sqlite", 1000)])
def test_mutating_workloads_repeat_identically(built, tmp_path, workload, n):
    plan = make_plan("quick", workloads=[workload], ns=[n], samples=3, smoke=True, warmup=0)
    df = run_and_load(plan, tmp_path / "r")
    assert_agrees_with_oracle(df, ORACLE)
    assert df.groupby("cell_id")["checksum"].nunique().eq(1).all()


def test_sqlite_drivers_agree(built, tmp_path):
    plan = make_plan("quick", workloads=["sqlite"], ns=[100], samples=1, smoke=True, warmup=0,
                     params={"sqlite": {"driver": ["mattn", "modernc", "sqlx", "rusqlite"], "journal": ["wal", "delete"]}})
    df = run_and_load(plan, tmp_path / "r")
    assert_agrees_with_oracle(df, ORACLE)
    assert set(df["p_driver"]) == {"mattn", "modernc", "sqlx", "rusqlite"}


@pytest.mark.parametrize("workload", ["mysql", "postgres"])
def test_server_workloads_run_against_harness_started_servers(built, tmp_path, workload):
    need_servers(workload)
    drivers = {"mysql": ["go-sql-driver", "sqlx", "mysql_async"], "postgres": ["pgx", "sqlx", "tokio-postgres"]}
    plan = make_plan("quick", workloads=[workload], ns=[10, 1000], samples=2, smoke=True, warmup=0, variants="all",
                     params={workload: {"driver": drivers[workload]}})
    ctx = Resources(log=lambda *_: None)
    runner.run(plan, tmp_path / "r", context=ctx, **QUIET)
    assert not ctx.servers, "servers must be stopped at the end of the run"
    df = api.load(tmp_path / "r")
    assert_agrees_with_oracle(df, ORACLE)
    assert set(df["p_driver"]) == set(drivers[workload])
    meta = (tmp_path / "r" / "meta.json").read_text()
    assert '"version"' in meta and "***" in meta


DRIVERS = [("mysql", "go", "go-sql-driver"), ("mysql", "rust", "sqlx"), ("mysql", "rust", "mysql_async"),
           ("postgres", "go", "pgx"), ("postgres", "rust", "sqlx"), ("postgres", "rust", "tokio-postgres")]


def kill_when_busy(server, connections=4, after_s=1.0, give_up_s=60):
    """Kill -9 the server once the program holds `connections` connections, `after_s` later: in the
    middle of the work, not while the pool is being opened."""
    if server.kind == "mysql":
        query = "SELECT COUNT(*) FROM information_schema.processlist WHERE user = 'bench'"
    else:
        query = "SELECT count(*) FROM pg_stat_activity WHERE usename = 'bench'"
    deadline = time.time() + give_up_s
    while time.time() < deadline:
        try:
            if int(server.sql(query, admin=True).strip() or 0) >= connections:
                break
        except (servers.ServerError, ValueError):
            pass
        time.sleep(0.05)
    time.sleep(after_s)
    os.killpg(server.proc.pid, signal.SIGKILL)


@pytest.mark.parametrize(("workload", "lang", "driver"), DRIVERS)
def test_killing_the_server_mid_sample_fails_it_fast_then_recovers(built, tmp_path, workload, lang, driver):
    """kill -9 of the server while a sample is at work: that sample is stored as failed with the
    driver's message within 15 s of wall time (never a hang until the timeout), and later samples
    are ok."""
    need_servers(workload)
    plan = make_plan("quick", workloads=[workload], languages=[lang], ns=[10000], samples=3, smoke=True, warmup=0,
                     timeout_s=60, params={workload: {"driver": driver}})
    ctx = Resources(log=lambda *_: None)
    calls = []

    def measure_and_kill(cell, *args, **kwargs):
        calls.append(cell.id)
        if len(calls) == 2:  # kill the server while the second sample runs
            threading.Thread(target=kill_when_busy, args=(ctx.servers[workload],), daemon=True).start()
        return measure.measure(cell, *args, **kwargs)

    report = runner.run(plan, tmp_path / "r", context=ctx, measure_fn=measure_and_kill, **QUIET)
    assert report.taken == len(plan.schedule()) == 3
    df = api.load(tmp_path / "r").sort_values("seq")
    first = df[df["seq"] == 0].iloc[0]
    assert first["status"] == "ok", first["reason"]
    killed = df[df["seq"] == 1].iloc[0]
    assert killed["status"] == "failed", (killed["status"], killed["reason"])
    assert "no message on stderr" not in killed["reason"] and killed["reason"].startswith("exit "), killed["reason"]
    assert killed["wall_ns"] <= 15e9, f"the program took {killed['wall_ns'] / 1e9:.1f} s to fail"
    assert "server was found dead" in killed["reason"], "the cause is recorded with the failure"
    assert df.loc[df["seq"] == 2, "status"].item() == "ok", "the server must be restarted for later samples"


# --- no secret at rest or in argv, servers closed to other users, runs side by side -------------------
def _grep_files(directory, secrets):
    """(file, secret) for every file under `directory` that holds one of the secrets."""
    hits = []
    for f in directory.rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            hits += [(str(f), s) for s in secrets if s.encode() in data]
    return hits


class ArgvWatch(threading.Thread):
    """Reads `ps -eo args` over and over while a run goes on; remembers every line it saw."""

    def __init__(self):
        super().__init__(daemon=True)
        self.lines: set[str] = set()
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
            self.lines.update(out.splitlines())
            time.sleep(0.05)

    def stop(self):
        self.done.set()
        self.join()
        return self.lines


def test_no_password_at_rest_or_in_argv_and_no_way_in_for_other_users(built, tmp_path):
    need_servers("mysql", "postgres")
    from test_servers import as_nobody, client_attempts

    plan = make_plan("quick", workloads=["mysql", "postgres"], ns=[100], samples=2, smoke=True, warmup=0,
                     variants="all")
    ctx = Resources(log=lambda *_: None)
    secrets, refused = set(), []

    def measure_and_probe(cell, *args, **kwargs):
        for server in ctx.servers.values():
            secrets.update(server.secrets())
        if not refused and os.geteuid() == 0:
            for server in ctx.servers.values():
                for what, cmd in client_attempts(server):
                    proc = as_nobody(cmd)
                    refused.append((server.kind, what, proc.returncode != 0 and "in" not in proc.stdout.split()))
        return measure.measure(cell, *args, **kwargs)

    watch = ArgvWatch()
    watch.start()
    try:
        runner.run(plan, tmp_path / "r", context=ctx, measure_fn=measure_and_probe, **QUIET)
    finally:
        argv = watch.stop()
    df = api.load(tmp_path / "r")
    assert (df["status"] == "ok").all(), df.loc[df["status"] != "ok", "reason"].tolist()
    assert len(secrets) >= 3, "the bench passwords of both servers and the PostgreSQL admin password"
    assert _grep_files(tmp_path / "r", secrets) == []
    assert [ln for ln in argv if any(s in ln for s in secrets)] == []
    assert not df["command"].str.contains("--dsn").any()
    if os.geteuid() == 0:
        assert refused and all(ok for *_, ok in refused), [r for r in refused if not r[2]]


def test_a_user_dsn_is_kept_out_of_results_and_argv(built, tmp_path):
    """dsn given by the user (here: servers this test starts) as URLs with passwords."""
    need_servers("mysql", "postgres")
    own = [servers.MariaDB(max_connections=100), servers.Postgres(max_connections=100)]
    try:
        for s in own:
            s.start()
        dsn = {s.kind: s.dsn for s in own}
        secrets = {s.conn.password for s in own}
        plan = make_plan("quick", workloads=["mysql", "postgres"], ns=[100], samples=2, smoke=True, warmup=0, dsn=dsn)
        watch = ArgvWatch()
        watch.start()
        try:
            runner.run(plan, tmp_path / "r", **QUIET)
        finally:
            argv = watch.stop()
    finally:
        for s in own:
            s.close()
    df = api.load(tmp_path / "r")
    assert (df["status"] == "ok").all(), df.loc[df["status"] != "ok", "reason"].tolist()
    assert _grep_files(tmp_path / "r", secrets) == []
    assert [ln for ln in argv if any(s in ln for s in secrets)] == []
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["plan"]["dsn"]["mysql"].startswith("mysql://bench:***@127.0.0.1:")
    assert meta["sessions"][0]["context"]["postgres"]["managed"] is False


def test_two_database_runs_into_different_directories_both_finish(built, tmp_path):
    need_servers("mysql", "postgres")
    plan_args = {"workloads": ["mysql", "postgres"], "ns": [10, 1000], "samples": 3, "warmup": 0, "smoke": True}
    procs = [subprocess.Popen([sys.executable, "-m", "bench_src", "run", "--results-dir", str(tmp_path / name),
                               "--plan", json.dumps(plan_args), "--no-progress"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for name in ("a", "b")]
    outputs = [p.communicate(timeout=900)[0] for p in procs]
    for p, out in zip(procs, outputs):
        assert p.returncode == 0, out[-3000:]
    for name in ("a", "b"):
        df = api.load(tmp_path / name)
        assert len(df) == 2 * 2 * 2 * 3
        assert (df["status"] == "ok").all(), df.loc[df["status"] != "ok", "reason"].tolist()
    assert not list(servers.SERVERS_DIR.glob("*-*")) or all(
        DirLock.held_by(d / ".lock") for d in servers.SERVERS_DIR.glob("*-*")), "both runs removed theirs"


def test_ping_pong_and_experiments_agree(built, tmp_path):
    plan = make_plan("quick", workloads=["ping_pong", "idle_tasks", "threads_vs_tasks"],
                     ns={"ping_pong": [1000], "idle_tasks": [100], "threads_vs_tasks": [50]}, samples=2, smoke=True, warmup=0,
                     variants="all",
                     params={"ping_pong": {"buffer": [1, 64], "mode": ["lockstep", "pipelined"]},
                             "idle_tasks": {"duration_ms": 10}, "threads_vs_tasks": {"iterations": 2}})
    df = run_and_load(plan, tmp_path / "r")
    bad = df[df["status"] != "ok"]
    assert bad.empty, bad[["cell_id", "reason"]].to_string()
    pp = df[df["workload"] == "ping_pong"]
    assert set(pp["checksum"]) == {ping_pong_checksum(1000)}
    assert set(df.loc[df["workload"] == "idle_tasks", "checksum"]) == {f"{100:016x}"}
    assert set(df.loc[df["workload"] == "threads_vs_tasks", "checksum"]) == {f"{100:016x}"}


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_every_catalogue_workload_does_the_same_work_in_both_languages(built, tmp_path, workload):
    """Whatever its own tests check, a workload of the catalogue (a new one included) runs in both
    languages through the harness at its defaults, and the two print one checksum per work
    identity: the run's proof of equal work (store.equivalence) holds."""
    from bench_src.store import equivalence

    if WORKLOADS[workload].server:
        need_servers(WORKLOADS[workload].server)
    plan = make_plan("quick", workloads=[workload], ns=[10], samples=1, smoke=True, warmup=0)
    df = run_and_load(plan, tmp_path / "r")
    bad = df[df["status"] != "ok"]
    assert bad.empty, bad[["cell_id", "status", "reason"]].to_string()
    table = equivalence.check(df)
    assert not table.empty and table["agree"].all(), table.to_string()
    for key, g in df.groupby("equiv_key"):
        assert set(g["lang"]) == {"go", "rust"}, key
