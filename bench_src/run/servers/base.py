"""What every server is: its connection (`Conn`), the template table and the restore before every
sample, SQL through its own client; the error a server gives, and its DSN redacted."""
from __future__ import annotations

import subprocess
import urllib.parse
from dataclasses import dataclass

from ... import paths
from ...plan.dsn import redact_dsn
from .. import fixtures


INSTALL = {"mysql": "mariadb-server", "postgres": "postgresql"}
CLIENT_INSTALL = {"mysql": "mariadb-client", "postgres": "postgresql-client"}
START_TIMEOUT_S = 90
# the command-line client's deadline: a restore of the users table takes well under a second, so a
# client still waiting after CLIENT_TIMEOUT_S has a hung server; `alive` asks SELECT 1 within
# PROBE_TIMEOUT_S (before, one probe of a stopped server waited 300 s and escaped as a traceback)
CLIENT_TIMEOUT_S = 120
PROBE_TIMEOUT_S = 10
# the restore before a sample waits at most the plan's timeout of a sample (one restore takes 30-50 ms
# on a 2-core EPYC), but never less than this: a hung server then holds a run for seconds, not the
# 120 s of CLIENT_TIMEOUT_S and a probe more (resources.Resources.before_sample)
RESTORE_MIN_TIMEOUT_S = 5
SERVERS_DIR = paths.DATA / "servers"
HOME_FILE = "home"          # in a server's root: the path of its home when that is elsewhere
MAX_SOCKET_DIR = 80         # a Unix socket path must stay under 108 bytes


class ServerError(RuntimeError):
    pass


class NoAnswer(ServerError):
    """The client got no answer within its timeout: the server is hung (or stopped), not refusing."""



def redact(dsn: str) -> str:
    return redact_dsn(dsn)



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
    def sql(self, statements: str, admin: bool = False, timeout: float = CLIENT_TIMEOUT_S) -> str:
        """Run `statements` with the command-line client; a ServerError when it fails or gets no
        answer within `timeout` seconds (a hung server, not only a dead one)."""
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
        try:  # a server that answers nothing within seconds (stopped, hung) is as good as dead
            return self.sql("SELECT 1", timeout=PROBE_TIMEOUT_S).strip() == "1"
        except ServerError:
            return False

    def ensure_template(self) -> None:
        have = self.sql("SELECT COUNT(*) FROM users_template") if self._has_template() else ""
        if have.strip() != str(fixtures.N_USERS):
            self.sql(self._template_ddl() + "\n" + fixtures.users_insert_sql("users_template"))

    def _has_template(self) -> bool:
        raise NotImplementedError

    def restore_users(self, timeout: float = CLIENT_TIMEOUT_S) -> None:
        self.sql(self._restore_sql(), timeout=timeout)

    def ensure_running(self) -> bool:
        """Restart a managed server that died; return True when it had to be restarted."""
        if self.alive():
            return False
        self.restart()
        return True

    def restart(self) -> None:
        """Stop and start a managed server (one found dead: the caller probed it); a server the
        user named is not ours to restart (ServerError)."""
        if not self.managed:
            raise ServerError(f"the {self.kind} server at {redact(self.dsn)} does not answer")
        self.stop()
        self.start()

    def _run_client(self, cmd: list[str], statements: str, env: dict, timeout: float = CLIENT_TIMEOUT_S) -> str:
        try:
            proc = subprocess.run(cmd, input=statements, capture_output=True, text=True, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise NoAnswer(f"{self.kind}: no answer within {timeout:g} s (the client was stopped)") from None
        if proc.returncode != 0:
            msg = (proc.stderr or proc.stdout).strip().splitlines()
            # the error rather than a HINT, DETAIL or indented hint line after it ("psql: error: ... Connection
            # refused" then "\tIs the server running on that host ...")
            errors = [ln.strip() for ln in msg if "ERROR" in ln or "error:" in ln]
            line = errors[-1] if errors else msg[-1] if msg else f"client exit {proc.returncode}"
            raise ServerError(f"{self.kind}: {line}")
        return proc.stdout
