"""The harness's own MariaDB and PostgreSQL: started on loopback, template loaded, users restored,
restarted after a crash, stopped without leftovers.  Real servers, never mocks."""
import os
import shutil
import signal
import time

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


@pytest.fixture(params=["mysql", "postgres"])
def server(request):
    require(request.param)
    # under data/ rather than pytest's private tmp: PostgreSQL runs as its own user and must reach it
    root = paths.DATA / "test-servers" / request.param
    cls = servers.MariaDB if request.param == "mysql" else servers.Postgres
    s = cls(root=root, max_connections=150)
    s.start()
    yield s
    s.stop()


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
    finally:
        s.stop()
        if not s.datadir.is_relative_to(private):
            shutil.rmtree(s.datadir.parent)
