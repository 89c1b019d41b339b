"""The harness's own MariaDB and PostgreSQL: started on loopback, template loaded, users restored,
restarted after a crash, stopped without leftovers; usable by the harness alone (another local
user cannot connect, no account has an empty password, the benchmark account can neither write
files nor run programs); one directory per instance, so that two runs never stop each other's
server, and a stale pid file never gets an unrelated process signalled; the server's account can
turn nothing of the harness's against it, nor read its environment; an interrupted start leaves
nothing behind.  Real servers, never mocks."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench_src import paths
from bench_src.run import servers

pytestmark = pytest.mark.slow


def require(kind):
    why = servers.missing(kind)
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the servers: {why}")
        pytest.skip(why)


@pytest.fixture(scope="module", params=["mysql", "postgres"])
def module_server(request):
    """One server of each kind for the tests of this module (a start takes 1-4 s)."""
    require(request.param)
    # under data/ rather than pytest's private tmp: PostgreSQL runs as its own user and must reach it
    root = paths.DATA / "test-servers" / request.param
    cls = servers.MariaDB if request.param == "mysql" else servers.Postgres
    s = cls(root=root, max_connections=150)
    s.start()
    yield s
    s.close()


@pytest.fixture
def server(module_server):
    """The module's server, running: the tests that stop or kill it start it again themselves, and
    one that failed before it could is made up for here, so that no test sees another's leftovers."""
    module_server.ensure_running()
    return module_server


def _pid_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_server_runs_on_loopback_with_the_template(server):
    assert server.conn.host == "127.0.0.1" and server.conn.port > 0
    assert server.sql("SELECT COUNT(*) FROM users_template").strip() == "10000"
    info = server.describe()
    assert info["version"] and "***" in info["dsn"] and server.conn.password not in info["dsn"]
    assert int(info["settings"]["max_connections"]) == 150


def test_restore_undoes_every_change(server):
    server.restore_users()
    total = server.sql("SELECT SUM(salary) FROM users").strip()
    server.sql("UPDATE users SET salary = salary + 1 WHERE id < 100")
    assert server.sql("SELECT SUM(salary) FROM users").strip() != total
    server.restore_users()
    assert server.sql("SELECT SUM(salary) FROM users").strip() == total == "999767"


def test_a_killed_server_is_detected_and_restarted(server):
    pid = server.proc.pid
    os.killpg(pid, signal.SIGKILL)
    server.proc.wait()
    assert not server.alive()
    assert server.ensure_running() is True
    assert server.alive() and server.proc.pid != pid
    server.restore_users()
    assert server.sql("SELECT COUNT(*) FROM users").strip() == "10000"


def test_a_hung_server_is_found_dead_within_seconds_and_restarted(server, monkeypatch):
    """A stopped server (SIGSTOP) answers nothing: the client's wait was 300 s, and its timeout
    escaped the sample as a traceback that ended the run.  Now a client that gets no answer is a
    ServerError, the probe gives up within PROBE_TIMEOUT_S, and the restart continues the server
    so that it ends at once."""
    from bench_src.run.servers import base
    monkeypatch.setattr(base, "PROBE_TIMEOUT_S", 1)
    pid = server.proc.pid
    os.killpg(pid, signal.SIGSTOP)
    try:
        with pytest.raises(servers.ServerError, match=r"no answer within 0\.5 s"):
            server.sql("SELECT 1", timeout=0.5)
        began = time.monotonic()
        assert not server.alive() and time.monotonic() - began < 5
        began = time.monotonic()
        assert server.ensure_running() is True and time.monotonic() - began < 45
    finally:
        try:
            os.killpg(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    assert server.alive() and server.proc.pid != pid and not _pid_exists(pid)
    server.restore_users()
    assert server.sql("SELECT COUNT(*) FROM users").strip() == "10000"


def test_before_a_sample_one_client_call_restores_users_and_a_dead_server_is_restarted_first(server, monkeypatch):
    """The restore is the check that the server answers: one client call before each sample (a call
    of psql costs 25-75 ms, and there are hundreds of database samples in a run). A server that died
    since is restarted, said in the log, and then restored."""
    from bench_src.plan import make_plan
    from bench_src.run.resources import Resources

    lines = []
    resources = Resources(log=lines.append)
    resources.servers[server.kind] = server
    cell = make_plan("quick", workloads=[server.kind], ns=[10], samples=6, warmup=0).cells()[0]
    calls = []
    sql = server.sql
    monkeypatch.setattr(server, "sql", lambda statements, admin=False, **kw: calls.append(statements)
                        or sql(statements, admin, **kw))
    assert resources.before_sample(cell) == {"dsn": server.dsn}
    assert len(calls) == 1 and "INSERT INTO users SELECT" in calls[0], calls
    assert not lines

    os.killpg(server.proc.pid, signal.SIGKILL)
    server.proc.wait()
    assert resources.before_sample(cell) == {"dsn": server.dsn}, "the new password is in the DSN it gives"
    assert "INSERT INTO users SELECT" in calls[-1] and sql("SELECT COUNT(*) FROM users").strip() == "10000"
    assert lines and "had stopped (killed by SIGKILL); restarted it at" in lines[0] and server.alive(), lines


def _run_with_a_server_event(kind, tmp_path, event, **plan_args):
    """A run of `kind` through the runner with the real Resources and a stand-in for the programs
    that, in its first sample, does `event` to the server's process group (between two samples as
    far as the harness can tell: that sample is ok).  Returns the log, the run's records, its
    meta.json as text and as data, and every password the servers had."""
    import json

    from bench_src.plan import make_plan
    from bench_src.run import runner
    from bench_src.run.resources import Resources
    from test_store_runner import fake_measure

    require(kind)
    plan = make_plan("quick", workloads=[kind], ns=[10], samples=3, warmup=0, smoke=True, **plan_args)
    lines, passwords = [], set()
    ctx = Resources(log=lines.append)
    fake = fake_measure()

    def measure(cell, *args, **kwargs):
        server = ctx.servers[kind]
        passwords.update(server.secrets())
        if len(fake.calls) == 0:
            event(server)
        return fake(cell, *args, **kwargs)

    runner.run(plan, tmp_path / "r", context=ctx, measure_fn=measure, progress=False, log=lines.append)
    records = [json.loads(line) for line in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    text = (tmp_path / "r" / "meta.json").read_text()
    return lines, records, text, json.loads(text), passwords


@pytest.mark.parametrize("kind", ["mysql", "postgres"])
def test_a_server_killed_between_samples_is_restarted_and_the_next_sample_and_the_session_say_so(kind, tmp_path):
    """kill -9 of the server between two samples: the next sample's restore finds it stopped and
    restarts it.  Before, only a log line said so: every sample was ok, meta.json named the first
    server's port, and nothing stored mentioned a restart."""
    first = {}

    def kill(server):
        first["pid"], first["dsn"] = server.proc.pid, servers.redact(server.dsn)
        os.killpg(server.proc.pid, signal.SIGKILL)
        server.proc.wait()

    lines, records, text, meta, passwords = _run_with_a_server_event(kind, tmp_path, kill)
    assert [r["status"] for r in records] == ["ok"] * 6
    noted = [r for r in records if r.get("note")]
    assert [r["seq"] for r in noted] == [1], "the sample after the kill carries the note, and no other"
    described = meta["sessions"][-1]["context"][kind]
    said = [ln for ln in lines if "restarted it at" in ln]
    assert len(said) == 1 and said[0].startswith(f"the {kind} server had stopped (killed by SIGKILL); restarted it at "
                                                 f"{kind}://bench:***@127.0.0.1:"), lines
    assert noted[0]["note"].startswith(f"before this sample the {kind} server had stopped (killed by SIGKILL); "
                                       "restarted at "), noted[0]["note"]
    assert noted[0]["note"].endswith(f"it now runs at {described['dsn']}")
    assert described["dsn"] != first["dsn"] and described["dsn"].startswith(f"{kind}://bench:***@127.0.0.1:"), \
        "the session names the server in use, not the first one"
    (restart,) = described["restarts"]
    assert restart["seen"] == f"the {kind} server had stopped (killed by SIGKILL)"
    assert restart["dsn"] == described["dsn"] and restart["at"] in noted[0]["note"]
    assert restart["when"] == f"before a sample of {noted[0]['cell_id']}"
    assert len(passwords) >= 2, "a new password at the restart"
    for secret in passwords:
        assert secret not in text and all(secret not in json.dumps(r) for r in records)
    assert not _pid_exists(first["pid"])


def test_a_hung_server_holds_the_next_sample_no_longer_than_the_plans_timeout(tmp_path):
    """A server stopped with SIGSTOP between samples: the restore waited its client's 120 s, then a
    probe 10 s more, and the log said the server "had stopped".  Now the restore waits the plan's
    timeout of a sample (at least RESTORE_MIN_TIMEOUT_S), the server is restarted without a probe,
    and the log says it was not answering."""
    stopped = []

    def hang(server):
        stopped.append(server.proc.pid)
        os.killpg(server.proc.pid, signal.SIGSTOP)

    try:
        lines, records, text, meta, _ = _run_with_a_server_event("mysql", tmp_path, hang, timeout_s=2)
    finally:
        for pid in stopped:
            try:
                os.killpg(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
    after = next(r for r in records if r["seq"] == 1)
    assert after["harness_s"] < 40, f"the sample after the hang waited {after['harness_s']:.0f} s"
    assert after["status"] == "ok" and [r["seq"] for r in records if r.get("note")] == [1]
    said = [ln for ln in lines if "restarted it at" in ln]
    assert len(said) == 1 and said[0].startswith(
        f"the mysql server was not answering (no answer within {servers.RESTORE_MIN_TIMEOUT_S} s; its process was "
        "stopped by a signal); restarted it at mysql://bench:***@127.0.0.1:"), lines
    (restart,) = meta["sessions"][-1]["context"]["mysql"]["restarts"]
    assert restart["seen"].startswith("the mysql server was not answering (no answer within")
    assert not _pid_exists(stopped[0])


def test_a_failed_sample_on_a_dead_server_says_so_and_the_server_is_restarted_at_once(server):
    from bench_src.plan import make_plan
    from bench_src.run.resources import Resources

    resources = Resources(log=lambda *_: None)
    resources.servers[server.kind] = server
    cell = make_plan("quick", workloads=[server.kind], ns=[10], samples=6, warmup=0).cells()[0]
    pid = server.proc.pid
    os.killpg(pid, signal.SIGKILL)
    server.proc.wait()
    record = {"status": "failed", "reason": "exit 1: connection refused"}
    resources.after_sample(cell, record)
    assert record["reason"].startswith(f"exit 1: connection refused [the {server.kind} server was found dead after "
                                       "this sample; it was restarted at ")
    assert server.alive() and server.proc.pid != pid, "restarted now, not at the next sample's restore"


class _ProbedServer:
    """A server object that counts its probes and restarts (for Resources.after_sample)."""
    kind, dsn, managed = "mysql", "mysql://bench:pw@127.0.0.1:1/bench", True

    def __init__(self, answers, restart_error=None):
        self.answers, self.restart_error = list(answers), restart_error
        self.probes = self.restarts = 0

    def alive(self):
        self.probes += 1
        return self.answers.pop(0)

    def ensure_running(self):  # as servers.Server's
        if self.alive():
            return False
        self.restart()
        return True

    def restart(self):
        self.restarts += 1
        if self.restart_error:
            raise self.restart_error

    def secrets(self):
        return ["pw"]


@pytest.mark.parametrize("answers, error, then", [
    ([True], None, None),
    # dead at the probe: restarted without a second probe (a hung server costs PROBE_TIMEOUT_S a
    # probe; before, a second probe that found it answering was reported as "restarted")
    ([False, True], None, "it was restarted at "),
    ([False], PermissionError(13, "Permission denied"), "restarting it failed ([Errno 13] Permission denied)"),
    ([False], servers.ServerError("mysql: the private server did not start"), "restarting it failed (mysql: the "),
])
def test_a_failed_sample_probes_its_server_once_and_says_what_the_restart_did(answers, error, then):
    from bench_src.plan import make_plan
    from bench_src.run.resources import Resources

    resources = Resources(log=lambda *_: None)
    server = _ProbedServer(answers, error)
    resources.servers["mysql"] = server
    cell = make_plan("quick", workloads=["mysql"], ns=[10], samples=6, warmup=0).cells()[0]
    record = {"status": "failed", "reason": "exit 1"}
    resources.after_sample(cell, record)
    assert server.probes == 1
    if then is None:
        assert record["reason"] == "exit 1" and server.restarts == 0
    else:
        assert server.restarts == 1 and record["reason"].startswith(
            "exit 1 [the mysql server was found dead after this sample; " + then), record["reason"]
        assert "pw@" not in record["reason"]


def test_a_users_server_found_dead_after_a_sample_is_said_to_be_theirs_and_not_restarted():
    from bench_src.plan import make_plan
    from bench_src.run.resources import Resources

    resources = Resources(log=lambda *_: None)
    server = _ProbedServer([False])
    server.managed = False
    resources.servers["mysql"] = server
    cell = make_plan("quick", workloads=["mysql"], ns=[10], samples=6, warmup=0).cells()[0]
    record = {"status": "failed", "reason": "exit 1"}
    resources.after_sample(cell, record)
    assert server.restarts == 0 and "pw@" not in record["reason"]
    assert record["reason"].startswith("exit 1 [the mysql server at mysql://bench:***@127.0.0.1:1/bench did not "
                                       "answer after this sample; it is yours, not restarted here"), record["reason"]


def test_a_full_disk_while_restarting_a_server_stops_the_run():
    from bench_src.plan import make_plan
    from bench_src.run.resources import Resources

    resources = Resources(log=lambda *_: None)
    resources.servers["mysql"] = _ProbedServer([False], OSError(28, "No space left on device"))
    cell = make_plan("quick", workloads=["mysql"], ns=[10], samples=6, warmup=0).cells()[0]
    with pytest.raises(OSError, match="No space left"):
        resources.after_sample(cell, {"status": "failed", "reason": "exit 1"})


def test_psql_is_the_binary_itself_not_debians_wrapper():
    """Debian's /usr/bin/psql is a Perl script that picks a cluster's version and then runs the
    binary: about 50 ms more a call. The harness calls the binary."""
    require("postgres")
    if not list(Path("/usr/lib/postgresql").glob("*/bin/psql")):
        pytest.skip("no /usr/lib/postgresql/<version>/bin/psql here: psql is found on PATH")
    client = Path(servers.Postgres.client())
    assert client.read_bytes()[:4] == b"\x7fELF", f"{client} is not an executable binary"


def test_the_newest_postgresql_is_chosen_by_version_number_and_psql_comes_from_the_servers_own_bin(
        tmp_path, monkeypatch):
    """One rule for which installed version is used: 15 is newer than 9.6 (as numbers, not as text),
    and the client is the server's own psql while it has one."""
    from bench_src.run.servers import postgres
    for version, programs in {"9.6": ["postgres", "psql"], "15": ["postgres", "psql"], "16": ["psql"]}.items():
        (tmp_path / version / "bin").mkdir(parents=True)
        for program in programs:
            (tmp_path / version / "bin" / program).write_text("")
    monkeypatch.setattr(postgres, "INSTALLS", tmp_path)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    assert servers.Postgres.bindir() == tmp_path / "15" / "bin"
    assert servers.Postgres.client() == str(tmp_path / "15" / "bin" / "psql")
    assert servers.Postgres.missing() is None
    (tmp_path / "15" / "bin" / "psql").unlink()
    assert servers.Postgres.client() == str(tmp_path / "16" / "bin" / "psql"), "another version's psql"
    for version in ("9.6", "16"):
        (tmp_path / version / "bin" / "psql").unlink()
    assert servers.Postgres.client() is None
    assert "PostgreSQL is not installed" in servers.Postgres.missing()


def test_a_server_object_looks_its_psql_up_once(monkeypatch):
    """The lookup runs pg_config, a shell script on Debian (10-20 ms), and a client call precedes
    every sample: it is made once per server object, not once per call."""
    calls = []
    monkeypatch.setattr(servers.Postgres, "client", classmethod(lambda cls: calls.append(1) or "/x/bin/psql"))
    s = servers.Postgres()
    assert s._psql() == s._psql() == "/x/bin/psql"
    assert len(calls) == 1


def test_every_start_gives_the_benchmark_account_a_new_password(server):
    """docs/security.md: the benchmark account's password is generated at every start, so a restart
    (after the server died) leaves the old one useless."""
    old = server.conn.password
    server.stop()
    server.start()
    new = server.conn.password
    assert new != old and len(new) == len(old) == 32
    assert server.sql("SELECT 1").strip() == "1"
    server.conn.password = old
    try:
        with pytest.raises(servers.ServerError):
            server.sql("SELECT 1")
    finally:
        server.conn.password = new


def test_stop_leaves_no_process(server):
    pid = server.proc.pid
    server.stop()
    deadline = time.time() + 10
    while _pid_exists(pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not _pid_exists(pid)
    server.start()  # for the fixture's own stop


def test_postgres_under_a_private_directory(tmp_path):
    """A checkout under `mktemp -d` (mode 0700): the postgres user cannot reach it, so the cluster lives in a
    directory of its own while the log stays under the given root."""
    require("postgres")
    private = tmp_path / "checkout"
    private.mkdir(mode=0o700)
    s = servers.Postgres(root=private / "data" / "servers" / "postgres", max_connections=50)
    s.start()
    try:
        s.restore_users()
        assert s.sql("SELECT COUNT(*) FROM users").strip() == "10000"
        if os.geteuid() == 0:
            assert not s.datadir.is_relative_to(private)
        assert (s.root / "server.log").exists()
        home = s.home
    finally:
        s.close()
    assert not home.exists(), "close() removes the cluster's own directory"


# --- who can connect -------------------------------------------------------------------------------
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
CLIENT_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "LC_ALL": "C"}


def as_nobody(cmd, env=None):
    """Run a client as the unprivileged user `nobody`, without any password."""
    if os.geteuid() != 0:
        pytest.skip("switching to another local user needs root")
    return subprocess.run([*NOBODY, *cmd], capture_output=True, text=True, env=env or CLIENT_ENV, cwd="/",
                          timeout=60)


def client_attempts(server):
    """Every way in that must stay closed to another local user: (what, command)."""
    port = str(server.conn.port)
    if server.kind == "mysql":
        base = ["mariadb", "--no-defaults", "-N", "-B", "-e", "SELECT 'in'"]
        return [(f"TCP as {u}", [*base, "--protocol=TCP", "-h127.0.0.1", f"-P{port}", f"-u{u}"])
                for u in ("root", "bench", "mysql", "mariadb.sys", "")] + \
               [(f"socket as {u}", [*base, f"--socket={server.socket}", f"-u{u}"]) for u in ("root", "bench", "mysql")]
    base = ["psql", "-w", "-X", "-A", "-t", "-c", "SELECT 'in'"]
    return [(f"TCP as {u}", [*base, "-h", "127.0.0.1", "-p", port, "-U", u, "-d", "postgres"])
            for u in ("postgres", "bench", "nobody")] + \
           [(f"socket as {u}", [*base, "-h", str(server.sockdir), "-p", port, "-U", u, "-d", "postgres"])
            for u in ("postgres", "bench", "nobody")]


def test_another_local_user_cannot_connect_by_tcp_or_socket(server):
    for what, cmd in client_attempts(server):
        proc = as_nobody(cmd)
        assert proc.returncode != 0 and "in" not in proc.stdout.split(), (what, proc.stdout, proc.stderr)
    # the same client with the harness's credentials does get in: the refusals above are not an accident
    c = server.conn
    if server.kind == "mysql":
        ok = subprocess.run(["mariadb", "--no-defaults", "-N", "-B", "--protocol=TCP", "-h127.0.0.1", f"-P{c.port}",
                             f"-u{c.user}", "-e", "SELECT 'in'"], capture_output=True, text=True,
                            env={**CLIENT_ENV, "MYSQL_PWD": c.password})
    else:
        ok = subprocess.run(["psql", "-w", "-X", "-A", "-t", "-h", "127.0.0.1", "-p", str(c.port), "-U", c.user,
                             "-d", c.database, "-c", "SELECT 'in'"], capture_output=True, text=True,
                            env={**CLIENT_ENV, "PGPASSWORD": c.password})
    assert ok.stdout.strip() == "in", ok.stderr


def test_the_socket_directory_is_private_and_the_server_is_not_root(server):
    st = server.sockdir.stat()
    assert st.st_mode & 0o777 == 0o700
    proc_user = subprocess.run(["ps", "-o", "user=", "-p", str(server.proc.pid)], capture_output=True,
                               text=True).stdout.strip()
    if os.geteuid() == 0:
        want = "mysql" if server.kind == "mysql" else "postgres"
        assert proc_user == want and st.st_uid == pwd_uid(want)
    else:
        assert st.st_uid == os.geteuid()
    assert proc_user != "root"


def pwd_uid(name):
    import pwd
    return pwd.getpwnam(name).pw_uid


def test_no_account_has_an_empty_password(server):
    if server.kind == "mysql":
        rows = server.sql("SELECT CONCAT(user, '@', host) FROM mysql.user WHERE authentication_string = ''",
                          admin=True).split()
        accounts = server.sql("SELECT CONCAT(user, '@', host) FROM mysql.user", admin=True).split()
        assert "bench@127.0.0.1" in accounts and "root@localhost" in accounts
    else:
        rows = server.sql("SELECT rolname FROM pg_authid WHERE rolcanlogin AND coalesce(rolpassword, '') = ''",
                          admin=True).split()
        accounts = server.sql("SELECT rolname FROM pg_authid WHERE rolcanlogin", admin=True).split()
        assert {"postgres", "bench"} <= set(accounts)
    assert rows == [], f"accounts without a password: {rows}"
    # and an empty password gets nobody in, as any account, from the harness's own user either
    for user in accounts if server.kind == "postgres" else [a.rsplit("@", 1)[0] for a in accounts]:
        if server.kind == "mysql":
            cmd = ["mariadb", "--no-defaults", "--protocol=TCP", "-h127.0.0.1", f"-P{server.conn.port}",
                   f"-u{user}", "--password=", "-e", "SELECT 1"]
        else:
            cmd = ["psql", "-w", "-X", "-h", "127.0.0.1", "-p", str(server.conn.port), "-U", user, "-d", "postgres",
                   "-c", "SELECT 1"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**CLIENT_ENV, "PGPASSWORD": ""})
        assert proc.returncode != 0, (user, proc.stdout)


def test_the_benchmark_account_cannot_write_files_or_run_programs(server, tmp_path):
    target = f"/tmp/bench-server-test-{os.getpid()}"
    if server.kind == "mysql":
        assert server.sql("SELECT @@secure_file_priv", admin=True).strip().rstrip("/") == str(server.filesdir)
        assert list(server.filesdir.iterdir()) == []
        for path in (target, server.filesdir / "f"):
            with pytest.raises(servers.ServerError, match="Access denied"):
                server.sql(f"SELECT 'x' INTO OUTFILE '{path}'")
        grants = server.sql("SHOW GRANTS FOR CURRENT_USER")
        assert "FILE" not in grants.replace("PROFILE", "") and "SUPER" not in grants
    else:
        assert server.sql("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").strip() == "f"
        with pytest.raises(servers.ServerError, match="permission|privileges|superuser"):
            server.sql(f"COPY (SELECT 1) TO PROGRAM 'touch {target}'")
        with pytest.raises(servers.ServerError, match="permission|privileges|superuser"):
            server.sql(f"COPY (SELECT 1) TO '{target}'")
    assert not os.path.exists(target)


def test_passwords_never_reach_argv_or_the_server_log(server):
    secrets = server.secrets()
    assert secrets and all(len(s) >= 16 for s in secrets)
    server.restore_users()
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    log = server.log.read_text(errors="replace")
    for secret in secrets:
        assert secret not in ps and secret not in log


# --- a full disk and other failures to start, in one line -----------------------------------------
# what mariadb-install-db 10.11 printed on a full 3 MB tmpfs (its stdout's advice shortened)
INSTALL_DB_FULL = ("2026-11-29 15:41:29 0 [ERROR] InnoDB: preallocating 12582912 bytes for file ./ibdata1 failed "
                   "with error 28\n2026-11-29 15:41:29 0 [ERROR] InnoDB: Could not set the file size of './ibdata1'. "
                   "Probably out of disk space\n2026-11-29 15:41:29 0 [ERROR] Aborting\n")
INSTALL_DB_ADVICE = ("Installing MariaDB/MySQL system tables in '/x/data' ...\n\nInstallation of system tables failed!  "
                     "Examine the logs in\n/x/data for more information.\n")


def _failing_tool(stderr, stdout=""):
    return ["sh", "-c", 'printf %s "$1"; printf %s "$2" >&2; exit 1', "tool", stdout, stderr]


def test_a_set_up_tool_that_finds_the_disk_full_is_said_in_one_line_that_names_the_directory(tmp_path):
    """mariadb-install-db and initdb on a full disk: the message was their output's last 500
    characters, cut mid-word ("ata1 failed with error 28") and followed by the rest on lines of their
    own.  Now it is one line that names the directory to free space in; an OSError of ENOSPC."""
    from bench_src.store import is_disk_full

    s = servers.MariaDB(root=tmp_path / "mariadb-x")
    pg_full = ('2026-11-29 15:41:25.607 UTC [9923] FATAL:  could not write to file "pg_wal/xlogtemp.9923": No space '
               'left on device\nchild process exited with exit code 1\ninitdb: removing contents of data directory '
               '"/x/data"\n')
    for what, err, out in (("mariadb-install-db", INSTALL_DB_FULL, INSTALL_DB_ADVICE), ("initdb", pg_full, "")):
        with pytest.raises(servers.ServerDiskFull) as caught:
            s._run_as_owner(_failing_tool(err, out), what)
        msg = str(caught.value)
        assert msg.startswith(f"{what} failed: the disk is full: no space left on the device holding {tmp_path} ("), msg
        assert msg.endswith("; free some space there") and "\n" not in msg, msg
        assert is_disk_full(caught.value), "a full disk for whatever handles one (a restart during a run stops it)"


def test_a_set_up_tool_that_fails_otherwise_gives_its_first_error_line_whole(tmp_path):
    s = servers.MariaDB(root=tmp_path / "mariadb-x")
    long_error = "[ERROR] " + " ".join(f"word{i:03d}" for i in range(80))
    with pytest.raises(servers.ServerError) as caught:
        s._run_as_owner(_failing_tool(f"note: starting\n{long_error}\nsecond error line\n", INSTALL_DB_ADVICE),
                        "mariadb-install-db")
    msg = str(caught.value)
    assert not isinstance(caught.value, OSError) and "\n" not in msg, msg
    assert msg.startswith("mariadb-install-db failed (exit status 1): [ERROR] word000 word001 "), msg
    assert msg.endswith(" ...") and len(msg) < 360, msg
    assert all(w in long_error.split() for w in msg.split(": ", 1)[1].removesuffix(" ...").split()), \
        "cut between words, never inside one"


def test_a_full_disk_where_the_servers_live_skips_their_cells_in_one_line_and_a_resume_takes_them(tmp_path,
                                                                                                  monkeypatch):
    """A 3 MB tmpfs as the servers' directory: each kind's cells are skipped with one line that says
    the disk is full, where, and what to do (before: the tool's output cut mid-word, then its
    lines); once there is space the same command takes the skipped samples."""
    from bench_src.plan import make_plan
    from bench_src.run import runner
    from bench_src.run.resources import Resources
    from bench_src.run.servers import managed
    from bench_src.store import ResultsStore
    from test_store_runner import fake_measure

    require("mysql")
    require("postgres")
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    # a short path: under a long one (a clone in a deep temporary directory) the servers' sockets
    # would not fit, and their homes would go to $TMPDIR, away from the full disk
    mnt = Path(tempfile.mkdtemp(prefix="bsf", dir="/tmp"))
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m,mode=0755", "tmpfs", str(mnt)]).returncode != 0:
        mnt.rmdir()
        pytest.skip("cannot mount a tmpfs here")
    monkeypatch.setattr(managed, "SERVERS_DIR", mnt)
    plan = make_plan("quick", workloads=["mysql", "postgres"], ns=[10], samples=2, warmup=0, smoke=True)
    lines = []
    try:
        runner.run(plan, tmp_path / "r", context=Resources(log=lines.append), measure_fn=fake_measure(),
                   progress=False, log=lines.append)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
    for kind, tool in (("mysql", "mariadb-install-db"), ("postgres", "initdb")):
        (line,) = [ln for ln in lines if ln.startswith(f"skipping the {kind} cells: ")]
        why = line.removeprefix(f"skipping the {kind} cells: ")
        assert why.startswith(f"the private {kind} server could not be started: {tool} failed: the disk is full: no "
                              f"space left on the device holding {mnt} ("), why
        assert why.endswith("; free some space there; its samples are stored as skipped and taken when the same "
                            "command runs again") and "\n" not in why, why
        stored = [r for r in ResultsStore(tmp_path / "r").records() if r["workload"] == kind]
        assert stored and {(r["status"], r["reason"]) for r in stored} == {("skipped", why)}
    try:  # space again (the plain directory under the mount): the same command takes them
        report = runner.run(plan, tmp_path / "r", context=Resources(log=lambda *_: None),
                            measure_fn=fake_measure(), progress=False, log=lambda *_: None)
    finally:
        shutil.rmtree(mnt, ignore_errors=True)
    assert report.statuses == {"ok": 8}, report.statuses


# --- exclusive use ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["mysql", "postgres"])
def test_the_last_instance_to_close_removes_the_servers_directory(kind, monkeypatch):
    require(kind)
    from bench_src.run.servers import managed
    base = paths.DATA / f"test-servers-dir-{os.getpid()}"  # data/servers itself is shared by other tests
    monkeypatch.setattr(managed, "SERVERS_DIR", base)
    cls = servers.MariaDB if kind == "mysql" else servers.Postgres
    a, b, c = cls(max_connections=30), cls(max_connections=30), cls(max_connections=30)
    try:
        a.start()
        b.start()
        assert a.root.parent == b.root.parent == base
        a.close()
        assert base.is_dir(), "another instance still lives there"
        b.close()
        assert not base.exists()
        c.start()  # and the next one creates it again
        assert c.root.parent == base and c.alive()
        c.close()
        assert not base.exists()
    finally:
        for s in (a, b, c):
            s.close()
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("kind", ["mysql", "postgres"])
def test_two_instances_run_side_by_side_and_stop_only_themselves(kind):
    require(kind)
    cls = servers.MariaDB if kind == "mysql" else servers.Postgres
    a, b = cls(max_connections=30), cls(max_connections=30)
    try:
        a.start()
        b.start()
        assert a.root != b.root and a.conn.port != b.conn.port
        assert a.root.parent == b.root.parent == servers.SERVERS_DIR
        a.close()
        assert not a.root.exists()
        assert b.alive() and b.ensure_running() is False
        b.restore_users()
        assert b.sql("SELECT COUNT(*) FROM users").strip() == "10000"
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("kind", ["mysql", "postgres"])
def test_a_server_directory_in_use_is_refused_naming_its_owner(kind, tmp_path):
    require(kind)
    cls = servers.MariaDB if kind == "mysql" else servers.Postgres
    root = paths.DATA / "test-servers" / f"{kind}-locked"
    a = cls(root=root, max_connections=30)
    a.start()
    try:
        holder = subprocess.run(
            [sys.executable, "-c", "import sys; from bench_src.run import servers; "
             f"s = servers.{cls.__name__}(root=sys.argv[1]); s.start()", str(root)],
            capture_output=True, text=True, cwd=paths.ROOT, timeout=120)
        assert holder.returncode != 0 and f"in use by PID {os.getpid()}" in holder.stderr, holder.stderr
        assert a.alive()
    finally:
        a.close()


@pytest.mark.parametrize("kind", ["mysql", "postgres"])
def test_a_stale_pid_file_naming_an_unrelated_process_is_left_alone(kind):
    require(kind)
    cls = servers.MariaDB if kind == "mysql" else servers.Postgres
    root = paths.DATA / "test-servers" / f"{kind}-stale"
    shutil.rmtree(root, ignore_errors=True)
    bystander = subprocess.Popen(["sleep", "1000"])
    try:
        probe = cls(root=root)
        probe.home = root.absolute()
        pidfile = probe.pidfile()
        pidfile.parent.mkdir(parents=True)
        pidfile.write_text(f"{bystander.pid}\n")
        assert not servers.is_server_process(bystander.pid, cls.exe_name, probe.datadir)
        s = cls(root=root, max_connections=30)
        s.start()  # clears what a killed harness left in root: must not touch the bystander
        try:
            assert bystander.poll() is None
            s.stop()
            pidfile.parent.mkdir(parents=True, exist_ok=True)
            pidfile.write_text(f"{bystander.pid}\n")
            s.stop()  # stop() also reads the pid file
            assert bystander.poll() is None
        finally:
            s.close()
        assert bystander.poll() is None, "the unrelated process must never be signalled"
    finally:
        bystander.kill()
        bystander.wait()


def test_a_killed_harness_leaves_nothing_the_next_server_start_does_not_remove():
    """kill -9 of a process that started a server: the server dies with it (parent-death signal)
    and the next start removes the dead owner's directory."""
    require("mysql")
    code = ("import sys, time; from bench_src.run import servers; s = servers.MariaDB(max_connections=20); "
            "s.start(); print(s.root, s.proc.pid, flush=True); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=paths.ROOT)
    root, server_pid = proc.stdout.readline().split()
    proc.kill()
    proc.wait()
    deadline = time.time() + 30
    while _pid_exists(int(server_pid)) and time.time() < deadline:
        time.sleep(0.2)
    assert not _pid_exists(int(server_pid)), "the server must die with the harness that started it"
    # a run of another test module started meanwhile sweeps it as the next start would: gone either
    # way.  Such a sweep may hold the directory's lock while this one looks, which then passes it by
    # (remove_stale_servers skips a directory another process holds): wait for that sweep to end.
    deadline = time.time() + 30
    while os.path.exists(root) and time.time() < deadline:
        servers.remove_stale_servers()
        if os.path.exists(root):
            time.sleep(0.2)
    assert not os.path.exists(root), "the next server start must remove a killed harness's server directory"


def test_a_directory_left_by_a_kill_during_initdb_is_removed_whole(tmp_path):
    """kill -9 while initdb ran left the bootstrap password file (initdb.pw) beside a stale lock:
    the sweep removed the lock and the data but not that file, so the directory stayed, without a
    lock, and no later sweep looked at it again."""
    require("postgres")
    root = tmp_path / f"{servers.Postgres.dirname}-killed"
    root.mkdir()
    (root / ".lock").write_text("999999 2026-01-01T00:00:00+00:00\n")  # no process holds it
    (root / "initdb.pw").write_text("a bootstrap password\n")
    (root / "server.log").write_text("initdb: ...\n")
    removed = servers.remove_stale_servers(tmp_path)
    assert removed == [root] and not root.exists()


# --- what the server's account can do to the harness -------------------------------------------------
def test_the_server_account_owns_only_its_private_directories_in_a_home_the_harness_owns(server):
    """The instance's root (lock, home file, log) and home are the harness's: the server's account
    passes through them to its own directories and can add, replace or rename nothing there."""
    if os.geteuid() != 0:
        pytest.skip("the server runs as the harness's own user when the harness is not root")
    for d in {server.root, server.home}:
        st = os.lstat(d)
        assert (st.st_uid, st.st_mode & 0o777) == (0, 0o711), d
    for d in (server.datadir, server.sockdir, server.filesdir, server.tmpdir):
        st = os.lstat(d)
        assert (st.st_uid, st.st_mode & 0o777) == (pwd_uid(server.system_user), 0o700), d
    st = os.lstat(server.log)
    assert (st.st_uid, st.st_mode & 0o777) == (0, 0o600)
    for cmd in (["touch", str(server.root / "planted")], ["ln", "-sfn", "/etc/passwd", str(server.log)],
                ["mv", str(server.root / "lock"), str(server.tmpdir / "lock")],
                ["sh", "-c", f"echo /etc > {server.root / 'home'}"]):
        proc = subprocess.run(server._as_owner(cmd), capture_output=True, text=True, cwd="/")
        assert proc.returncode != 0, (cmd, proc.stdout)
    assert not (server.root / "planted").exists() and not server.log.is_symlink()


def test_a_forged_home_file_never_makes_the_harness_delete_another_directory(tmp_path):
    """A `home` file naming a directory the harness did not make (anywhere, or in $TMPDIR under the
    expected name but owned by the server's account) is ignored: nothing of it is deleted."""
    require("mysql")
    root = paths.DATA / "test-servers" / "mysql-forged"
    decoys = [tmp_path / "decoy"]
    if os.geteuid() == 0:  # as a killed harness's home would be named, but the server's account's
        decoys.append(Path(tempfile.mkdtemp(prefix="bench-mariadb-decoy-")))
    try:
        for decoy in decoys:
            for name in ("data", "run", "files", "tmp"):
                (decoy / name).mkdir(parents=True, exist_ok=True)
                (decoy / name / "canary").write_text("keep\n")
            if os.geteuid() == 0:
                subprocess.run(["chown", "-R", "mysql:mysql", str(decoy)], check=True)
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            (root / "home").write_text(f"{decoy}\n")
            s = servers.MariaDB(root=root, max_connections=20)
            s._claim()  # clears what a killed harness left in root
            s.close()
            assert all((decoy / name / "canary").read_text() == "keep\n" for name in ("data", "run", "files", "tmp"))
    finally:
        for decoy in decoys:
            shutil.rmtree(decoy, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)


def test_the_server_log_is_never_written_through_a_link(tmp_path):
    from bench_src.run.servers import process
    victim = tmp_path / "victim"
    victim.write_text("original\n")
    (tmp_path / "server.log").symlink_to(victim)
    with pytest.raises(OSError):
        process.popen_logged(["true"], tmp_path / "server.log")
    assert victim.read_text() == "original\n"


@pytest.mark.parametrize("kind", ["mysql", "postgres"])
def test_a_server_inherits_only_path_and_locale_of_the_harness_environment(kind, monkeypatch):
    """The harness's environment may hold the URL of a user's server; the server's account can read
    its own processes' environment, so a server gets none of it."""
    require(kind)
    monkeypatch.setenv("BENCH_TEST_CANARY", "mysql://bench:canary-secret@127.0.0.1:1/bench")
    cls = servers.MariaDB if kind == "mysql" else servers.Postgres
    s = cls(root=paths.DATA / "test-servers" / f"{kind}-env", max_connections=20)
    s.start()
    try:
        names = [v.split(b"=", 1)[0].decode() for v in
                 open(f"/proc/{s.proc.pid}/environ", "rb").read().split(b"\0") if v]
        assert "PATH" in names and "BENCH_TEST_CANARY" not in names
        assert set(names) <= {"PATH", "LANG", "LANGUAGE", "TZ"} | {n for n in names if n.startswith("LC_")} | \
            {"PGLOCALEDIR", "PGSYSCONFDIR"}, names
    finally:
        s.close()


@pytest.mark.parametrize("kind", ["mysql", "postgres"])
def test_a_port_taken_between_its_choice_and_the_servers_bind_is_replaced_by_another(kind, monkeypatch):
    """The free port is chosen, let go, and bound by the server a moment later: a process that
    takes it in between makes the server exit at start. The start is tried again on another port,
    and a port that is never free ends in one line that says so."""
    import socket
    from bench_src.run.servers import managed
    require(kind)
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    real_free_port = managed.free_port
    handed = []

    def first_a_taken_port():
        handed.append(taken if not handed else real_free_port())
        return handed[-1]

    cls = servers.MariaDB if kind == "mysql" else servers.Postgres
    s = cls(max_connections=30)
    try:
        monkeypatch.setattr(managed, "free_port", first_a_taken_port)
        s.start()
        assert handed[0] == taken and len(handed) == 2, handed
        assert s.conn.port == handed[1] and s.alive()
        s.stop()
        monkeypatch.setattr(managed, "free_port", lambda: taken)
        with pytest.raises(servers.ServerError, match=f"each of {managed.PORT_ATTEMPTS} free loopback ports taken"):
            s.start()
    finally:
        holder.close()
        s.close()


@pytest.mark.parametrize("kind", ["mysql", "postgres"])
@pytest.mark.parametrize("step", ["_init_datadir", "_wait_until_ready"])
def test_an_interrupt_while_a_server_starts_leaves_none_of_its_files(kind, step, monkeypatch, tmp_path):
    """Ctrl-C (or SIGTERM, which the harness turns into the same) while the data directory is being
    made or the server is coming up: the run's resources close the half-started server."""
    from bench_src.plan import make_plan
    from bench_src.run.resources import Resources
    require(kind)
    cls = servers.MariaDB if kind == "mysql" else servers.Postgres
    original = getattr(cls, step)
    started = []

    def interrupted(self, *args):
        original(self, *args)  # the step's work is done (files made, server process started) ...
        if self.proc is not None:
            started.append(self.proc.pid)
        raise KeyboardInterrupt  # ... when the interrupt arrives

    monkeypatch.setattr(cls, step, interrupted)

    def server_dirs():
        return set(servers.SERVERS_DIR.glob(f"{cls.dirname}-*")) | \
            set(Path(tempfile.gettempdir()).glob(f"bench-{cls.dirname}-*"))

    before = server_dirs()
    plan = make_plan("quick", workloads=[kind], ns=[10], samples=6, warmup=0)
    resources = Resources(log=lambda *_: None)
    with pytest.raises(KeyboardInterrupt):
        resources.start(plan, SimpleNamespace(dir=tmp_path))
    assert server_dirs() <= before, sorted(map(str, server_dirs() - before))
    assert (len(started) == 1) == (step == "_wait_until_ready")
    assert not any(_pid_exists(pid) for pid in started), "the half-started server is stopped"


def test_every_server_workload_names_a_kind_the_servers_and_the_dsn_know():
    """A workload's server is declared once, in the catalogue: the kind the servers package starts
    (and a user's `dsn` names), never a second table of workloads to kinds beside it."""
    from bench_src.catalogue import WORKLOADS
    from bench_src.plan.dsn import DSN_SCHEMES

    kinds = {name: w.server for name, w in WORKLOADS.items() if w.server is not None}
    assert kinds, "the catalogue has server workloads"
    assert {name: kind for name, kind in kinds.items() if kind not in servers.KINDS or kind not in DSN_SCHEMES} == {}
    assert set(servers.KINDS) == set(DSN_SCHEMES)
    assert not any(w.fixture == "server" for w in WORKLOADS.values()), "the server is `server`, not a fixture"


def test_a_new_server_workload_is_served_by_its_kind(monkeypatch, tmp_path):
    """A workload of the catalogue with a server, under a name of its own: its server is started
    with room for its pools, and its samples are skipped with the reason when the server is not
    installed (not a KeyError for a name no second table lists)."""
    from dataclasses import replace
    from types import SimpleNamespace

    from bench_src.catalogue import WORKLOADS
    from bench_src.plan import make_plan
    from bench_src.run import resources as resources_module
    from bench_src.run.resources import Resources, SkipSample

    monkeypatch.setitem(WORKLOADS, "pg_again", replace(WORKLOADS["postgres"], name="pg_again"))
    plan = make_plan("quick", workloads=["pg_again"], ns=[10], samples=6, warmup=0, params={"pg_again": {"pool": ["7"]}})
    assert resources_module.max_pool(plan, {"pg_again"}) == 7
    monkeypatch.setattr(servers, "missing", lambda kind: f"no {kind} here")
    resources = Resources(log=lambda *_: None)
    info = resources.start(plan, SimpleNamespace(dir=tmp_path))
    assert info["unavailable"] == {"postgres": "no postgres here"}
    with pytest.raises(SkipSample, match="no postgres here"):
        resources.before_sample(plan.cells()[0])
