"""Private database servers on loopback, started and stopped by the harness.

A `MariaDB` and a `Postgres` server each get a data directory under `data/servers/`, a free port on
127.0.0.1, a password generated at every start, and `max_connections` above the largest pool of
the plan.  An `External` server is one the user points at with a DSN; it is used as it is.

Every server keeps the template table `users_template` (the same 10,000 rows as the SQLite
fixture) and `restore_users()` rebuilds `users` from it before every sample.  SQL goes through the
servers' own command-line clients (`mariadb`, `psql`), which come with the server packages.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from . import fixtures

INSTALL = {"mysql": "mariadb-server", "postgres": "postgresql"}
START_TIMEOUT_S = 90


class ServerError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redact(dsn: str) -> str:
    u = urllib.parse.urlsplit(dsn)
    if u.password:
        netloc = f"{u.username}:***@{u.hostname}:{u.port}"
        return urllib.parse.urlunsplit((u.scheme, netloc, u.path, u.query, u.fragment))
    return dsn


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child is dead for our purposes
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return True


def _kill_pidfile(pidfile: Path, wait_s: float = 30) -> None:
    """Stop a server left behind by an earlier harness that was killed."""
    try:
        pid = int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    if not _pid_alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + wait_s
    while _pid_alive(pid) and time.time() < deadline:
        time.sleep(0.1)
    if _pid_alive(pid):
        os.kill(pid, signal.SIGKILL)


@dataclass
class Conn:
    host: str
    port: int
    user: str
    password: str
    database: str

    @classmethod
    def from_dsn(cls, dsn: str) -> "Conn":
        u = urllib.parse.urlsplit(dsn)
        if not u.hostname or not u.path.strip("/"):
            raise ValueError(f"DSN {redact(dsn)!r} needs a host and a database: scheme://user:pass@host:port/db")
        return cls(u.hostname, u.port or 0, urllib.parse.unquote(u.username or ""),
                   urllib.parse.unquote(u.password or ""), u.path.strip("/"))

    def url(self, scheme: str) -> str:
        user = urllib.parse.quote(self.user, safe="")
        pw = urllib.parse.quote(self.password, safe="")
        return f"{scheme}://{user}:{pw}@{self.host}:{self.port}/{self.database}"


class Server:
    """Common behaviour: SQL through the client, the template table, restore before a sample."""

    kind = ""
    scheme = ""
    managed = True

    def __init__(self):
        self.conn: Conn | None = None
        self.proc: subprocess.Popen | None = None

    # --- to implement --------------------------------------------------------------------------
    def sql(self, statements: str, admin: bool = False) -> str:
        raise NotImplementedError

    def _template_ddl(self) -> str:
        raise NotImplementedError

    def _restore_sql(self) -> str:
        raise NotImplementedError

    def describe(self) -> dict:
        raise NotImplementedError

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    # --- shared --------------------------------------------------------------------------------
    @property
    def dsn(self) -> str:
        assert self.conn is not None
        return self.conn.url(self.scheme)

    def alive(self) -> bool:
        if self.managed and (self.proc is None or self.proc.poll() is not None):
            return False
        try:
            return self.sql("SELECT 1").strip() == "1"
        except ServerError:
            return False

    def ensure_template(self) -> None:
        have = self.sql("SELECT COUNT(*) FROM users_template") if self._has_template() else ""
        if have.strip() != str(fixtures.N_USERS):
            self.sql(self._template_ddl() + "\n" + fixtures.users_insert_sql("users_template"))

    def _has_template(self) -> bool:
        raise NotImplementedError

    def restore_users(self) -> None:
        self.sql(self._restore_sql())

    def ensure_running(self) -> bool:
        """Restart a managed server that died; return True when it had to be restarted."""
        if self.alive():
            return False
        if not self.managed:
            raise ServerError(f"the {self.kind} server at {redact(self.dsn)} does not answer")
        self.stop()
        self.start()
        return True

    def _shut_down(self, sig: int, pidfile: Path) -> None:
        """Ask the server to stop with `sig`, kill it after a minute, and clear a stale pid file."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        _kill_pidfile(pidfile)

    def _run_client(self, cmd: list[str], statements: str, env: dict) -> str:
        proc = subprocess.run(cmd, input=statements, capture_output=True, text=True, env=env, timeout=300)
        if proc.returncode != 0:
            msg = (proc.stderr or proc.stdout).strip().splitlines()
            raise ServerError(f"{self.kind}: {msg[-1] if msg else 'client exit ' + str(proc.returncode)}")
        return proc.stdout

    def _wait_until_ready(self, what: str) -> None:
        deadline = time.time() + START_TIMEOUT_S
        last = ""
        while time.time() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise ServerError(f"{what} exited with status {self.proc.returncode} while starting; see {self.log}")
            try:
                if self.sql("SELECT 1", admin=True).strip() == "1":
                    return
            except ServerError as exc:
                last = str(exc)
            time.sleep(0.2)
        raise ServerError(f"{what} did not answer within {START_TIMEOUT_S} s ({last}); see {self.log}")


def _die_with_parent() -> None:
    """Runs in the child before exec: a server outlives no harness, even one killed with -9."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _popen(cmd: list[str], log: Path) -> subprocess.Popen:
    out = open(log, "ab")
    try:
        # cwd "/": a server running as its own user may not be allowed into the caller's directory
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=_die_with_parent, cwd="/")
    finally:
        out.close()


class MariaDB(Server):
    kind, scheme = "mysql", "mysql"

    def __init__(self, root: Path | None = None, max_connections: int = 200):
        super().__init__()
        self.root = Path(root or paths.DATA / "servers" / "mariadb").absolute()
        self.datadir = self.root / "data"
        self.socket = self.root / "mysqld.sock"
        self.pidfile = self.root / "mariadbd.pid"
        self.log = self.root / "server.log"
        self.max_connections = max_connections

    @staticmethod
    def binaries() -> dict[str, str | None]:
        return {name: shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}")
                                                  if os.access(p, os.X_OK)), None)
                for name in ("mariadbd", "mariadb-install-db", "mariadb")}

    @classmethod
    def missing(cls) -> str | None:
        absent = [k for k, v in cls.binaries().items() if not v]
        if absent:
            return (f"MariaDB is not installed ({', '.join(absent)} not found): "
                    f"apt-get install {INSTALL['mysql']}, or pass dsn={{'mysql': 'mysql://user:pass@host:port/db'}}")
        return None

    def sql(self, statements: str, admin: bool = False) -> str:
        b = self.binaries()
        if admin:
            cmd = [b["mariadb"], "--no-defaults", f"--socket={self.socket}", "-uroot", "-N", "-B"]
            env = dict(os.environ)
        else:
            c = self.conn
            cmd = [b["mariadb"], "--no-defaults", "--protocol=TCP", f"-h{c.host}", f"-P{c.port}", f"-u{c.user}",
                   c.database, "-N", "-B"]
            env = dict(os.environ, MYSQL_PWD=c.password)
        return self._run_client(cmd, statements, env)

    def start(self) -> None:
        b = self.binaries()
        self.root.mkdir(parents=True, exist_ok=True)
        _kill_pidfile(self.pidfile)
        user = ["--user=root"] if os.geteuid() == 0 else []
        if not (self.datadir / "mysql").exists():
            shutil.rmtree(self.datadir, ignore_errors=True)
            proc = subprocess.run([b["mariadb-install-db"], "--no-defaults", f"--datadir={self.datadir}",
                                   "--auth-root-authentication-method=normal", "--skip-test-db", *user],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise ServerError(f"mariadb-install-db failed: {(proc.stderr or proc.stdout).strip()[-500:]}")
        port = free_port()
        self.proc = _popen([b["mariadbd"], "--no-defaults", f"--datadir={self.datadir}", f"--socket={self.socket}",
                            f"--port={port}", "--bind-address=127.0.0.1", f"--pid-file={self.pidfile}",
                            f"--max-connections={self.max_connections}", "--skip-name-resolve",
                            "--innodb-buffer-pool-size=256M", "--skip-log-bin", *user], self.log)
        self.conn = Conn("127.0.0.1", port, "bench", secrets.token_hex(12), "bench")
        self._wait_until_ready("mariadbd")
        pw = self.conn.password
        self.sql("CREATE DATABASE IF NOT EXISTS bench;\n"
                 f"CREATE USER IF NOT EXISTS 'bench'@'127.0.0.1' IDENTIFIED BY '{pw}';\n"
                 f"ALTER USER 'bench'@'127.0.0.1' IDENTIFIED BY '{pw}';\n"
                 "GRANT ALL PRIVILEGES ON bench.* TO 'bench'@'127.0.0.1';\n", admin=True)
        self.ensure_template()

    def stop(self) -> None:
        self._shut_down(signal.SIGTERM, self.pidfile)

    def _has_template(self) -> bool:
        return self.sql("SHOW TABLES LIKE 'users_template'").strip() == "users_template"

    def _template_ddl(self) -> str:
        return f"DROP TABLE IF EXISTS users_template;\nCREATE TABLE users_template ({fixtures.USERS_COLUMNS}) ENGINE=InnoDB;"

    def _restore_sql(self) -> str:
        return ("DROP TABLE IF EXISTS users;\nCREATE TABLE users LIKE users_template;\n"
                "INSERT INTO users SELECT * FROM users_template;\nANALYZE TABLE users;")

    def describe(self) -> dict:
        rows = self.sql("SELECT VERSION();\nSHOW VARIABLES WHERE Variable_name IN ('max_connections', "
                        "'innodb_buffer_pool_size', 'innodb_flush_log_at_trx_commit', 'sync_binlog', "
                        "'transaction_isolation', 'default_storage_engine')").strip().splitlines()
        return {"kind": self.kind, "managed": self.managed, "version": rows[0].strip(),
                "settings": dict(r.split("\t", 1) for r in rows[1:]), "dsn": redact(self.dsn)}


class Postgres(Server):
    kind, scheme = "postgres", "postgres"

    def __init__(self, root: Path | None = None, max_connections: int = 200):
        super().__init__()
        self.root = Path(root or paths.DATA / "servers" / "postgres").absolute()
        self.datadir = self.root / "data"
        self.sockdir = self.root
        self.log = self.root / "server.log"
        self.max_connections = max_connections

    @staticmethod
    def bindir() -> Path | None:
        if shutil.which("pg_config"):
            out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
            d = Path(out.stdout.strip())
            if (d / "postgres").exists():
                return d
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"))
        return found[-1].parent if found else None

    @classmethod
    def missing(cls) -> str | None:
        if cls.bindir() is None or not shutil.which("psql"):
            return ("PostgreSQL is not installed (postgres or psql not found): "
                    f"apt-get install {INSTALL['postgres']}, or pass dsn={{'postgres': 'postgres://user:pass@host:port/db'}}")
        return None

    def _as_owner(self, cmd: list[str]) -> list[str]:
        """PostgreSQL refuses to run as root: drop to the postgres user, keeping a parent-death signal."""
        if os.geteuid() != 0:
            return cmd
        return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--pdeathsig=TERM", *cmd]

    def sql(self, statements: str, admin: bool = False) -> str:
        if admin:
            cmd = ["psql", "-h", str(self.sockdir), "-p", str(self.conn.port), "-U", "postgres", "-d", "postgres"]
            env = dict(os.environ)
        else:
            c = self.conn
            cmd = ["psql", "-h", c.host, "-p", str(c.port), "-U", c.user, "-d", c.database]
            env = dict(os.environ, PGPASSWORD=c.password)
        return self._run_client([*cmd, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"], statements, env)

    def _owner_can_use(self, path: Path) -> bool:
        """Whether the user PostgreSQL runs as can write into `path` (every parent must let it through)."""
        if os.geteuid() != 0:
            return True
        probe = subprocess.run(self._as_owner(["test", "-w", str(path), "-a", "-x", str(path)]),
                               cwd="/", capture_output=True)
        return probe.returncode == 0

    def _use_reachable_dirs(self) -> None:
        """A checkout under a private directory (`mktemp -d` makes it 0700) is out of the postgres user's
        reach: the cluster and its socket then live in a directory of their own, named after the checkout so
        that later runs find it again; the log stays under `root`."""
        if self._owner_can_use(self.root):
            return
        tag = hashlib.sha1(str(self.root.resolve()).encode()).hexdigest()[:12]
        home = Path(tempfile.gettempdir()) / f"bench-postgres-{tag}"
        home.mkdir(mode=0o700, exist_ok=True)
        shutil.chown(home, "postgres", "postgres")
        self.datadir, self.sockdir = home / "data", home

    def start(self) -> None:
        bindir = self.bindir()
        self.root.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
            self._use_reachable_dirs()
        _kill_pidfile(self.datadir / "postmaster.pid")
        if not (self.datadir / "PG_VERSION").exists():
            shutil.rmtree(self.datadir, ignore_errors=True)
            proc = subprocess.run(self._as_owner([str(bindir / "initdb"), "-D", str(self.datadir), "-U", "postgres",
                                                  "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                                                  "--no-instructions"]), capture_output=True, text=True, cwd="/")
            if proc.returncode != 0:
                raise ServerError(f"initdb failed: {(proc.stderr or proc.stdout).strip()[-500:]}")
        port = free_port()
        self.conn = Conn("127.0.0.1", port, "bench", secrets.token_hex(12), "bench")
        self.proc = _popen(self._as_owner([str(bindir / "postgres"), "-D", str(self.datadir), "-p", str(port),
                                           "-k", str(self.sockdir), "-c", "listen_addresses=127.0.0.1",
                                           "-c", f"max_connections={self.max_connections}",
                                           "-c", "shared_buffers=256MB"]), self.log)
        self._wait_until_ready("postgres")
        pw = self.conn.password
        exists = self.sql("SELECT 1 FROM pg_roles WHERE rolname = 'bench'", admin=True).strip()
        verb = "ALTER" if exists == "1" else "CREATE"
        self.sql(f"{verb} ROLE bench WITH LOGIN PASSWORD '{pw}';", admin=True)
        if self.sql("SELECT 1 FROM pg_database WHERE datname = 'bench'", admin=True).strip() != "1":
            self.sql("CREATE DATABASE bench OWNER bench;", admin=True)
        self.ensure_template()

    def stop(self) -> None:
        self._shut_down(signal.SIGINT, self.datadir / "postmaster.pid")  # SIGINT: fast shutdown

    def _has_template(self) -> bool:
        return self.sql("SELECT to_regclass('users_template') IS NOT NULL").strip() == "t"

    def _template_ddl(self) -> str:
        return f"DROP TABLE IF EXISTS users_template;\nCREATE TABLE users_template ({fixtures.USERS_COLUMNS});"

    def _restore_sql(self) -> str:
        return ("DROP TABLE IF EXISTS users;\nCREATE TABLE users (LIKE users_template INCLUDING ALL);\n"
                "INSERT INTO users SELECT * FROM users_template;\nANALYZE users;")

    def describe(self) -> dict:
        version = self.sql("SHOW server_version").strip()
        rows = self.sql("SELECT name, setting FROM pg_settings WHERE name IN ('max_connections', 'shared_buffers', "
                        "'fsync', 'synchronous_commit', 'default_transaction_isolation')").strip().splitlines()
        return {"kind": self.kind, "managed": self.managed, "version": version,
                "settings": dict(r.split("|", 1) for r in rows), "dsn": redact(self.dsn)}


class External:
    """Mixin: a server the user runs, reached through a DSN; never started or stopped here."""

    managed = False

    def __init__(self, dsn: str):
        super().__init__()
        self.conn = Conn.from_dsn(dsn)

    def start(self) -> None:
        self.ensure_template()

    def stop(self) -> None:
        pass


class ExternalMariaDB(External, MariaDB):
    pass


class ExternalPostgres(External, Postgres):
    pass


def make_server(kind: str, dsn: str | None, max_connections: int) -> Server:
    if kind == "mysql":
        return ExternalMariaDB(dsn) if dsn else MariaDB(max_connections=max_connections)
    if kind == "postgres":
        return ExternalPostgres(dsn) if dsn else Postgres(max_connections=max_connections)
    raise ValueError(f"unknown server kind {kind!r}; allowed: mysql, postgres")


def missing(kind: str) -> str | None:
    return MariaDB.missing() if kind == "mysql" else Postgres.missing()
