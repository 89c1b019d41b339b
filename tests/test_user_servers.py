"""A server the user names (`dsn`) must answer with the credentials given: one that refuses them
fails the check before anything is built, and a run before any sample, with an error that names
the server (its password masked).  Such a server is never skipped: "could not be started" and a
skipped cell are for the harness's private servers only."""
import json
import os
import subprocess
import sys

import pytest

from bench_src.plan import make_plan
from bench_src.run import build, runner, servers
from bench_src.store import ResultsStore
from test_store_runner import fake_measure

SECRET = "S3cretPassw0rd"
URL = f"mysql://bench:{SECRET}@db.example:3306/bench"
REFUSAL = "ERROR 1045 (28000): Access denied for user 'bench'@'10.1.2.3' (using password: YES)"
EXPECTED = (f"the mysql server of dsn[mysql], mysql://bench:***@db.example:3306/bench, cannot be used: {REFUSAL}; "
            "check the URL's user, password, host, port and database")


@pytest.fixture
def refusing_server(monkeypatch):
    """The mariadb client, as it answers for a server that refuses the password."""
    def sql(self, statements, admin=False):
        raise servers.ServerError(f"mysql: {REFUSAL}")

    monkeypatch.setattr(servers.MariaDB, "sql", sql)
    monkeypatch.setattr(servers.MariaDB, "client", classmethod(lambda cls: "/usr/bin/mariadb"), raising=False)


def test_check_and_run_refuse_a_user_server_that_refuses_its_credentials(refusing_server, monkeypatch, tmp_path,
                                                                         capsys):
    from bench_src.__main__ import main
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    plan = json.dumps({"workloads": ["mysql"], "ns": [10], "samples": 2, "warmup": 0, "smoke": True,
                       "dsn": {"mysql": URL}})
    for cmd in ("check", "run"):
        assert main([cmd, "--results-dir", str(tmp_path / "r"), "--plan", plan]) == 2
        assert capsys.readouterr().err == f"error: {EXPECTED}\n"
    monkeypatch.setenv("MY_MYSQL_URL", URL)  # the same through env:NAME
    assert main(["check", "--plan", json.dumps({"workloads": ["mysql"], "dsn": {"mysql": "env:MY_MYSQL_URL"}})]) == 2
    assert capsys.readouterr().err == f"error: {EXPECTED}\n"
    assert not (tmp_path / "r").exists()


def test_a_run_stops_before_any_sample_when_the_user_server_refuses(refusing_server, tmp_path):
    """Past the check (the password changed meanwhile, or a run started from the API)."""
    plan = make_plan("quick", workloads=["mysql"], ns=[10], samples=2, warmup=0, smoke=True, dsn={"mysql": URL})
    logged = []
    m = fake_measure()
    with pytest.raises(servers.ServerError) as err:
        runner.run(plan, tmp_path / "r", measure_fn=m, progress=False, log=logged.append)
    assert str(err.value) == EXPECTED
    assert m.calls == [] and ResultsStore(tmp_path / "r").records() == [], "no sample, not even a skipped one"
    assert not any("could not be started" in line or "skipping" in line for line in logged), logged
    meta = (tmp_path / "r" / "meta.json").read_text()
    assert json.loads(meta)["sessions"][0]["ended"] == f"error: ServerError: {EXPECTED}"
    assert SECRET not in meta


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["mysql", "postgres"])
def test_a_real_server_with_a_wrong_password_is_named_by_the_check(kind, tmp_path):
    why = servers.missing(kind)
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the servers: {why}")
        pytest.skip(why)
    own = servers.make_server(kind, None, max_connections=50)
    own.start()
    try:
        c = own.conn
        wrong = servers.Conn(c.host, c.port, c.user, "Wr0ngPassw0rd", c.database).url(own.scheme)
        answers = {"mysql": "ERROR 1045 (28000): Access denied for user 'bench'@",
                   "postgres": 'password authentication failed for user "bench"'}

        def cli(cmd, dsn):
            plan = {"workloads": [kind], "ns": [10], "samples": 2, "warmup": 0, "smoke": True, "dsn": {kind: dsn}}
            args = ["--results-dir", str(tmp_path / cmd), "--plan", json.dumps(plan)]
            return subprocess.run([sys.executable, "-m", "bench_src", cmd, *args], capture_output=True, text=True,
                                  timeout=600)

        for cmd in ("check", "run"):
            proc = cli(cmd, wrong)
            assert proc.returncode == 2, proc.stderr[-2000:]
            assert proc.stderr.startswith(f"error: the {kind} server of dsn[{kind}], {own.scheme}://bench:***@"
                                          f"127.0.0.1:{c.port}/bench, cannot be used: "), proc.stderr
            assert answers[kind] in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
            assert "Wr0ngPassw0rd" not in proc.stderr and "could not be started" not in proc.stderr
            assert not (tmp_path / cmd).exists()
        right = cli("check", own.dsn)
        assert right.returncode == 0 and right.stdout.strip() == str(tmp_path / "check"), right.stderr
    finally:
        own.close()


@pytest.mark.parametrize("kind", ["mysql", "postgres"])
def test_a_user_server_at_a_closed_port_is_named_with_the_clients_error_not_its_hint(kind, tmp_path):
    import socket

    if {"mysql": servers.MariaDB, "postgres": servers.Postgres}[kind].client() is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the {kind} client")
        pytest.skip(f"the {kind} command-line client is not installed here")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    plan = {"workloads": [kind], "ns": [10], "samples": 2, "warmup": 0, "smoke": True,
            "dsn": {kind: f"{kind}://bench:{SECRET}@127.0.0.1:{port}/bench"}}
    proc = subprocess.run([sys.executable, "-m", "bench_src", "check", "--results-dir", str(tmp_path / "r"),
                           "--plan", json.dumps(plan)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    said = proc.stderr.split(", cannot be used: ", 1)[1]
    assert {"mysql": "Can't connect", "postgres": "Connection refused"}[kind] in said, proc.stderr
    assert "Is the server running" not in said and SECRET not in proc.stderr
