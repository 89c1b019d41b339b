"""Private database servers on loopback, started and stopped by the harness, usable by it alone.

A `MariaDB` and a `Postgres` server each get a directory of their own per instance (by default
`data/servers/<mariadb|postgres>-XXXXXXXX/`, locked by the harness process that owns it), so that
two runs never share or stop each other's server.  Data, sockets and the server's file area live
in a `home` owned by the server's user with mode 0700: the directory itself, or, when that user
cannot reach it (a checkout under a private directory), a private directory under $TMPDIR.

Who can do what:

- the servers run as the distribution's `mysql` / `postgres` user (as the harness's own user when
  the harness is not root), never as root;
- they listen on 127.0.0.1 and on a socket in that 0700 directory only;
- MariaDB: the benchmark account `bench`@`127.0.0.1` has a password generated at every start and
  privileges on the `bench` database only (no FILE privilege, `secure_file_priv` is an empty
  private directory); the admin account authenticates by the operating-system user on the private
  socket (`unix_socket`: root, or the harness's own user); an account left without a password by
  the installer gets a random one and is locked;
- PostgreSQL: password (SCRAM) authentication on TCP and on the socket; the superuser `postgres`
  has a password generated when the cluster is made; the role `bench` (generated password) is not
  a superuser and owns only its database, so it can neither `COPY ... TO PROGRAM` nor write files;
- passwords go to the clients in their environment (MYSQL_PWD, PGPASSWORD), never in argv, and to
  the servers as hashes (a SCRAM verifier, a mysql_native_password hash), so no server log can
  show one.

A pid file is acted on only after checking that the process is the expected server binary
running on the expected data directory; an unrelated process that took over a stale PID is never
signalled.  An `External` server is one the user points at with a DSN; it is used as it is, but it
must answer with the credentials given (`check_external`, run before anything is built): a server
the user named that refuses them stops the run, naming the server with its password masked.

Every server keeps the template table `users_template` (the same 10,000 rows as the SQLite
fixture) and `restore_users()` rebuilds `users` from it before every sample.  SQL goes through the
servers' own command-line clients (`mariadb`, `psql`), which come with the server packages.
"""
from __future__ import annotations

import base64
import getpass
import hashlib
import hmac
import os
import pwd
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
from ..store.lock import DirLock, LockedError
from ..plan.dsn import redact_dsn
from ..store.secrets import Scrubber, dsn_secrets
from . import fixtures

INSTALL = {"mysql": "mariadb-server", "postgres": "postgresql"}
CLIENT_INSTALL = {"mysql": "mariadb-client", "postgres": "postgresql-client"}
START_TIMEOUT_S = 90
SERVERS_DIR = paths.DATA / "servers"
LOCK = ".lock"
HOME_FILE = "home"          # in a server's root: the path of its home when that is elsewhere
MAX_SOCKET_DIR = 80         # a Unix socket path must stay under 108 bytes


class ServerError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redact(dsn: str) -> str:
    return redact_dsn(dsn)


def new_password() -> str:
    return secrets.token_hex(16)


def scram_sha256_verifier(password: str, iterations: int = 4096) -> str:
    """The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802 / 7677), computed here
    so that the clear password is never sent to the server."""
    salt = secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def mysql_native_hash(password: str) -> str:
    """The mysql_native_password hash: '*' + upper hex of SHA1(SHA1(password))."""
    return "*" + hashlib.sha1(hashlib.sha1(password.encode()).digest()).hexdigest().upper()


# --- processes -------------------------------------------------------------------------------------
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


def is_server_process(pid: int, exe_name: str, datadir: Path) -> bool:
    """Whether `pid` runs the server binary `exe_name` on `datadir` (its executable and its command
    line), so that a PID reused by an unrelated process is never signalled."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if Path(exe.removesuffix(" (deleted)")).name != exe_name:
        return False
    want = str(datadir).encode()
    return any(a == want or a.endswith(b"=" + want) for a in args)


def read_pidfile(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def stop_verified(pidfile: Path, exe_name: str, datadir: Path, sig: int = signal.SIGTERM,
                  wait_s: float = 30, log=None) -> bool:
    """Stop a server left behind by a harness that was killed, named by its pid file, after checking
    that the PID is that server.  Returns True when a server was signalled."""
    pid = read_pidfile(pidfile)
    if pid is None or pid == os.getpid() or not _pid_alive(pid):
        return False
    if not is_server_process(pid, exe_name, datadir):
        if log:
            log(f"{pidfile} names PID {pid}, which is not {exe_name} on {datadir}: left alone")
        return False
    os.kill(pid, sig)
    deadline = time.time() + wait_s
    while _pid_alive(pid) and time.time() < deadline:
        time.sleep(0.1)
    if _pid_alive(pid) and is_server_process(pid, exe_name, datadir):
        os.kill(pid, signal.SIGKILL)
    return True


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


def _tail(path: Path, lines: int = 5) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""


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

    def close(self) -> None:
        """Stop for good (a managed server's directory is removed)."""
        self.stop()

    # --- shared --------------------------------------------------------------------------------
    @property
    def dsn(self) -> str:
        assert self.conn is not None
        return self.conn.url(self.scheme)

    def secrets(self) -> list[str]:
        """The passwords this server object knows (to be masked in anything stored or printed)."""
        out = [self.conn.password] if self.conn and self.conn.password else []
        admin = getattr(self, "admin_password", None)
        return out + ([admin] if admin else [])

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

    def _run_client(self, cmd: list[str], statements: str, env: dict) -> str:
        proc = subprocess.run(cmd, input=statements, capture_output=True, text=True, env=env, timeout=300)
        if proc.returncode != 0:
            msg = (proc.stderr or proc.stdout).strip().splitlines()
            errors = [ln for ln in msg if "ERROR" in ln]  # rather than a HINT or DETAIL line after it
            line = errors[-1] if errors else msg[-1] if msg else f"client exit {proc.returncode}"
            raise ServerError(f"{self.kind}: {line}")
        return proc.stdout


class Managed(Server):
    """A server the harness starts, in a directory of its own (see the module's docstring)."""

    dirname = ""      # the prefix of its directory under data/servers
    exe_name = ""     # the server binary's file name
    system_user = ""  # the distribution's account the server runs as when the harness is root

    def __init__(self, root: str | os.PathLike | None = None, max_connections: int = 200):
        super().__init__()
        self.root: Path | None = Path(root).absolute() if root else None
        self.home: Path | None = None
        self.lock: DirLock | None = None
        self.max_connections = max_connections
        self.admin_password: str | None = None
        self._initialized = False

    # --- layout --------------------------------------------------------------------------------
    @property
    def log(self) -> Path:
        assert self.root is not None
        return self.root / "server.log"

    @property
    def datadir(self) -> Path:
        assert self.home is not None
        return self.home / "data"

    @property
    def sockdir(self) -> Path:
        assert self.home is not None
        return self.home / "run"

    @property
    def filesdir(self) -> Path:
        assert self.home is not None
        return self.home / "files"

    @property
    def tmpdir(self) -> Path:
        """The instance's own scratch directory: two instances initialised at the same moment never
        share temporary files (a shared /tmp made one bootstrap fail to remove its temporary table)."""
        assert self.home is not None
        return self.home / "tmp"

    def pidfile(self) -> Path:
        raise NotImplementedError

    @property
    def run_user(self) -> str:
        """The operating-system user the server runs as."""
        return self.system_user if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name

    def _as_owner(self, cmd: list[str]) -> list[str]:
        """Drop from root to the server's user, keeping a parent-death signal (set after the switch,
        which would clear one set before it)."""
        if os.geteuid() != 0:
            return cmd
        u = self.system_user
        return ["setpriv", f"--reuid={u}", f"--regid={u}", "--init-groups", "--pdeathsig=TERM", *cmd]

    def _private_dir(self, path: Path) -> None:
        """A directory only the server's user (and root) can enter."""
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)
        if os.geteuid() == 0:
            shutil.chown(path, self.system_user, self.system_user)

    def _owner_can_use(self, path: Path) -> bool:
        """Whether the server's user can write into `path` (every parent must let it through)."""
        if os.geteuid() != 0:
            return True
        probe = subprocess.run(self._as_owner(["test", "-w", str(path), "-a", "-x", str(path)]),
                               cwd="/", capture_output=True)
        return probe.returncode == 0

    # --- the instance's directory --------------------------------------------------------------
    def _claim(self) -> None:
        """Choose and lock the instance's root, clear what a killed owner left there, choose home."""
        if self.root is None:
            SERVERS_DIR.mkdir(parents=True, exist_ok=True)
            remove_stale_servers(SERVERS_DIR)
            self.root = Path(tempfile.mkdtemp(prefix=f"{self.dirname}-", dir=SERVERS_DIR))
        self.root.mkdir(parents=True, exist_ok=True)
        lock = DirLock(self.root / LOCK, f"the {self.kind} server directory {self.root}")
        try:
            lock.acquire()
        except LockedError as exc:
            raise ServerError(str(exc)) from None
        self.lock = lock
        self._discard_leftovers()
        self.home = self._choose_home()

    def _recorded_home(self) -> Path | None:
        assert self.root is not None
        try:
            text = (self.root / HOME_FILE).read_text().strip()
        except OSError:
            return None
        return Path(text) if text else None

    def _discard_leftovers(self) -> None:
        """Stop a server a killed harness left in this root (verified by executable and data
        directory) and remove its files."""
        assert self.root is not None
        for home in {self.root, self._recorded_home() or self.root}:
            self.home = home
            stop_verified(self.pidfile(), self.exe_name, self.datadir, self._stop_signal)
            for name in ("data", "run", "files", "tmp"):
                shutil.rmtree(home / name, ignore_errors=True)
            if home != self.root and home.name.startswith("bench-") and home.parent == Path(tempfile.gettempdir()):
                shutil.rmtree(home, ignore_errors=True)
        (self.root / HOME_FILE).unlink(missing_ok=True)
        self.home = None

    def _choose_home(self) -> Path:
        assert self.root is not None
        self._private_dir(self.root)
        if self._owner_can_use(self.root) and len(str(self.root / "run")) <= MAX_SOCKET_DIR:
            return self.root
        home = Path(tempfile.mkdtemp(prefix=f"bench-{self.dirname}-"))
        self._private_dir(home)
        (self.root / HOME_FILE).write_text(str(home) + "\n")
        return home

    # --- life cycle ----------------------------------------------------------------------------
    _stop_signal = signal.SIGTERM

    def start(self) -> None:
        if self.lock is None:
            self._claim()
        for d in (self.sockdir, self.filesdir, self.tmpdir):
            self._private_dir(d)
        if not self._initialized:
            shutil.rmtree(self.datadir, ignore_errors=True)
            self._init_datadir()
            self._initialized = True
        port = free_port()
        self.conn = Conn("127.0.0.1", port, "bench", new_password(), "bench")  # a new password at every start
        self.proc = _popen(self._as_owner(self._server_command(port)), self.log)
        self._wait_until_ready()
        self._set_up_accounts()
        self.ensure_template()

    def stop(self) -> None:
        """Stop the server process (its files stay for a restart)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(self._stop_signal)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.home is not None:
            stop_verified(self.pidfile(), self.exe_name, self.datadir, self._stop_signal)

    def close(self) -> None:
        """Stop the server and remove its directory (data, sockets, log) and lock."""
        self.stop()
        if self.root is not None and self.lock is not None:
            if self.home is not None and self.home != self.root:
                shutil.rmtree(self.home, ignore_errors=True)
            for name in ("data", "run", "files", "tmp", "server.log", HOME_FILE):
                p = self.root / name
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
            (self.root / LOCK).unlink(missing_ok=True)
            self.lock.release()
            self.lock = None
            try:
                self.root.rmdir()
            except OSError:
                pass
        self.home = None
        self._initialized = False

    def _wait_until_ready(self) -> None:
        deadline = time.time() + START_TIMEOUT_S
        last = ""
        while time.time() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise ServerError(f"{self.exe_name} exited with status {self.proc.returncode} while starting: "
                                  f"{_tail(self.log)}")
            try:
                if self.sql("SELECT 1", admin=True).strip() == "1":
                    return
            except ServerError as exc:
                last = str(exc)
            time.sleep(0.2)
        raise ServerError(f"{self.exe_name} did not answer within {START_TIMEOUT_S} s ({last}): {_tail(self.log)}")

    def _run_as_owner(self, cmd: list[str], what: str) -> None:
        proc = subprocess.run(self._as_owner(cmd), capture_output=True, text=True, cwd="/")
        if proc.returncode != 0:
            raise ServerError(f"{what} failed: {(proc.stderr or proc.stdout).strip()[-500:]}")

    def _init_datadir(self) -> None:
        raise NotImplementedError

    def _server_command(self, port: int) -> list[str]:
        raise NotImplementedError

    def _set_up_accounts(self) -> None:
        raise NotImplementedError


class MariaDB(Managed):
    kind, scheme = "mysql", "mysql"
    dirname, exe_name, system_user = "mariadb", "mariadbd", "mysql"

    def pidfile(self) -> Path:
        return self.sockdir / "mariadbd.pid"

    @property
    def socket(self) -> Path:
        return self.sockdir / "mysqld.sock"

    @property
    def admin_user(self) -> str:
        """The account that authenticates by the operating-system user on the private socket."""
        return "root" if os.geteuid() == 0 else getpass.getuser()

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

    @classmethod
    def client(cls) -> str | None:
        return cls.binaries()["mariadb"]

    def sql(self, statements: str, admin: bool = False) -> str:
        b = self.binaries()
        env = dict(os.environ)
        env.pop("MYSQL_PWD", None)
        if admin:
            cmd = [b["mariadb"], "--no-defaults", f"--socket={self.socket}", f"-u{self.admin_user}", "-N", "-B"]
        else:
            c = self.conn
            cmd = [b["mariadb"], "--no-defaults", "--protocol=TCP", f"-h{c.host}", f"-P{c.port}", f"-u{c.user}",
                   c.database, "-N", "-B"]
            env["MYSQL_PWD"] = c.password
        return self._run_client(cmd, statements, env)

    def _init_datadir(self) -> None:
        b = self.binaries()
        socket_user = [] if os.geteuid() == 0 else [f"--auth-root-socket-user={self.admin_user}"]
        self._run_as_owner([b["mariadb-install-db"], "--no-defaults", f"--datadir={self.datadir}",
                            "--auth-root-authentication-method=socket", *socket_user, "--skip-test-db",
                            f"--tmpdir={self.tmpdir}"],
                           "mariadb-install-db")

    def _server_command(self, port: int) -> list[str]:
        return [self.binaries()["mariadbd"], "--no-defaults", f"--datadir={self.datadir}",
                f"--socket={self.socket}", f"--port={port}", "--bind-address=127.0.0.1",
                f"--pid-file={self.pidfile()}", f"--max-connections={self.max_connections}",
                "--skip-name-resolve", "--innodb-buffer-pool-size=256M", "--skip-log-bin",
                f"--secure-file-priv={self.filesdir}", "--local-infile=0", "--symbolic-links=0",
                f"--tmpdir={self.tmpdir}"]

    def _set_up_accounts(self) -> None:
        h = mysql_native_hash(self.conn.password)
        self.sql("CREATE DATABASE IF NOT EXISTS bench;\n"
                 f"CREATE USER IF NOT EXISTS 'bench'@'127.0.0.1' IDENTIFIED BY PASSWORD '{h}';\n"
                 f"ALTER USER 'bench'@'127.0.0.1' IDENTIFIED BY PASSWORD '{h}';\n"
                 "GRANT ALL PRIVILEGES ON bench.* TO 'bench'@'127.0.0.1';\n", admin=True)
        # an account the installer left without a password (mariadb.sys, the definer of system
        # views) gets a random one it never uses, and stays locked
        empty = self.sql("SELECT user, host FROM mysql.user WHERE authentication_string = '' "
                         "AND plugin IN ('', 'mysql_native_password')", admin=True)
        for row in empty.strip().splitlines():
            user, host = row.split("\t")
            self.sql(f"ALTER USER '{user}'@'{host}' IDENTIFIED BY PASSWORD '{mysql_native_hash(new_password())}' "
                     "ACCOUNT LOCK;", admin=True)

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
        info = {"kind": self.kind, "managed": self.managed, "version": rows[0].strip(),
                "settings": dict(r.split("\t", 1) for r in rows[1:]), "dsn": redact(self.dsn)}
        if self.managed:
            info["runs_as"] = self.run_user
        return info


class Postgres(Managed):
    kind, scheme = "postgres", "postgres"
    dirname, exe_name, system_user = "postgres", "postgres", "postgres"
    _stop_signal = signal.SIGINT  # fast shutdown

    def pidfile(self) -> Path:
        return self.datadir / "postmaster.pid"

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

    @classmethod
    def client(cls) -> str | None:
        return shutil.which("psql")

    def sql(self, statements: str, admin: bool = False) -> str:
        env = dict(os.environ)
        for var in ("PGPASSWORD", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE"):
            env.pop(var, None)
        if admin:
            cmd = ["psql", "-h", str(self.sockdir), "-p", str(self.conn.port), "-U", "postgres", "-d", "postgres"]
            env["PGPASSWORD"] = self.admin_password or ""
        else:
            c = self.conn
            cmd = ["psql", "-h", c.host, "-p", str(c.port), "-U", c.user, "-d", c.database]
            env["PGPASSWORD"] = c.password
        return self._run_client([*cmd, "-w", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"], statements, env)

    def _init_datadir(self) -> None:
        self.admin_password = new_password()
        pwfile = self.home / "initdb.pw"
        fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.admin_password + "\n")
        if os.geteuid() == 0:
            shutil.chown(pwfile, self.system_user, self.system_user)
        try:
            self._run_as_owner([str(self.bindir() / "initdb"), "-D", str(self.datadir), "-U", "postgres",
                                f"--pwfile={pwfile}", "--auth-local=scram-sha-256", "--auth-host=scram-sha-256",
                                "-E", "UTF8", "--no-instructions"], "initdb")
        finally:
            pwfile.unlink(missing_ok=True)

    def _server_command(self, port: int) -> list[str]:
        return [str(self.bindir() / "postgres"), "-D", str(self.datadir), "-p", str(port),
                "-k", str(self.sockdir), "-c", "unix_socket_permissions=0700",
                "-c", "listen_addresses=127.0.0.1", "-c", f"max_connections={self.max_connections}",
                "-c", "shared_buffers=256MB"]

    def _set_up_accounts(self) -> None:
        verifier = scram_sha256_verifier(self.conn.password)
        exists = self.sql("SELECT 1 FROM pg_roles WHERE rolname = 'bench'", admin=True).strip()
        verb = "ALTER" if exists == "1" else "CREATE"
        self.sql(f"{verb} ROLE bench WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS "
                 f"PASSWORD '{verifier}';", admin=True)
        if self.sql("SELECT 1 FROM pg_database WHERE datname = 'bench'", admin=True).strip() != "1":
            self.sql("CREATE DATABASE bench OWNER bench;", admin=True)

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
        info = {"kind": self.kind, "managed": self.managed, "version": version,
                "settings": dict(r.split("|", 1) for r in rows), "dsn": redact(self.dsn)}
        if self.managed:
            info["runs_as"] = self.run_user
        return info


def remove_stale_servers(base: Path = SERVERS_DIR) -> list[Path]:
    """Remove the server directories under `base` whose owner died (kill -9): stop a server still
    running there (after checking what it is) and delete its files.  Returns what was removed."""
    removed = []
    for cls in (MariaDB, Postgres):
        for root in sorted(base.glob(f"{cls.dirname}-*")):
            if not (root / LOCK).exists() or DirLock.held_by(root / LOCK) is not None:
                continue
            leftover = cls(root=root)
            try:
                leftover._claim()
            except ServerError:
                continue  # taken by another process meanwhile
            leftover.close()
            removed.append(root)
    return removed


class External:
    """Mixin: a server the user runs, reached through a DSN; never started or stopped here."""

    managed = False

    def __init__(self, dsn: str):
        Server.__init__(self)
        self.conn = Conn.from_dsn(dsn)
        self._scrub = Scrubber(dsn_secrets(dsn))

    def refused(self, why: str, fix: str = "check the URL's user, password, host, port and database") -> ServerError:
        """The error that names this server (password masked), what went wrong and what to do."""
        why = self._scrub.text(why.removeprefix(f"{self.kind}: "))
        return ServerError(f"the {self.kind} server of dsn[{self.kind}], {redact(self.dsn)}, cannot be used: {why}; "
                           f"{fix}")

    def check(self) -> None:
        """Connect as the harness will and run SELECT 1."""
        if self.client() is None:
            raise self.refused("its command-line client is not installed here",
                               f"apt-get install {CLIENT_INSTALL[self.kind]}")
        try:
            answer = self.sql("SELECT 1").strip()
        except (ServerError, OSError, subprocess.TimeoutExpired) as exc:
            raise self.refused(str(exc)) from None
        if answer != "1":
            raise self.refused(f"SELECT 1 answered {answer[:80]!r}")

    def start(self) -> None:
        self.check()
        try:
            self.ensure_template()
        except ServerError as exc:
            raise self.refused(f"loading the template table failed: {exc}") from None

    def stop(self) -> None:
        pass

    def close(self) -> None:
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


def check_external(kind: str, dsn: str) -> None:
    """A server the user named must answer with the credentials of its DSN; a ServerError names it
    (password masked) with what it answered."""
    server = make_server(kind, dsn, max_connections=0)
    assert isinstance(server, External)
    server.check()
