"""A private PostgreSQL server (see the package's docstring for who can do what)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

from .. import fixtures
from .base import CLIENT_TIMEOUT_S, INSTALL, redact
from .managed import Managed
from .passwords import new_password, scram_sha256_verifier


# Debian's layout: one directory per installed major version, each with its own bin/.
INSTALLS = Path("/usr/lib/postgresql")


def _version(bindir: Path) -> tuple[int, ...]:
    """/usr/lib/postgresql/<version>/bin -> its version as numbers (so that 15 sorts above 9.6)."""
    return tuple(int(part) for part in bindir.parent.name.split(".") if part.isdigit())


def _newest_installed(program: str) -> Path | None:
    """The bin/ directory of the newest version under INSTALLS that has `program`."""
    found = sorted((p.parent for p in INSTALLS.glob(f"*/bin/{program}")), key=_version)
    return found[-1] if found else None


class Postgres(Managed):
    kind, scheme = "postgres", "postgres"
    dirname, exe_name, system_user = "postgres", "postgres", "postgres"
    space_needed = 43 << 20  # PostgreSQL 15: 43 MiB (Managed._out_of_space)
    _stop_signal = signal.SIGINT  # fast shutdown
    _psql_path: str | None = None  # client(), once looked up (_psql)

    def pidfile(self) -> Path:
        return self.datadir / "postmaster.pid"

    @staticmethod
    def bindir() -> Path | None:
        """The server's binaries: pg_config's when it names a server, else the newest installed version."""
        if shutil.which("pg_config"):
            out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
            d = Path(out.stdout.strip())
            if (d / "postgres").exists():
                return d
        return _newest_installed("postgres")

    @classmethod
    def missing(cls) -> str | None:
        if cls.bindir() is None or cls.client() is None:
            return ("PostgreSQL is not installed (postgres or psql not found): "
                    f"apt-get install {INSTALL['postgres']}, or pass dsn={{'postgres': 'postgres://user:pass@host:port/db'}}")
        return None

    @classmethod
    def client(cls) -> str | None:
        """psql itself, from the server's own bin/ when it has one. On Debian /usr/bin/psql is
        postgresql-common's pg_wrapper, a Perl script that chooses a cluster's version before it runs
        the binary: about 50 ms more a call on a 2-core EPYC, where a call of the binary takes about
        25 ms, and one call precedes every sample. psql talks to servers of other versions too
        (a server given by dsn may be any), so where no local server's bin/ has one (a client-only
        install), the newest installed binary is taken, which is what the wrapper runs by default,
        then psql on PATH."""
        for d in (cls.bindir(), _newest_installed("psql")):
            if d is not None and (d / "psql").exists():
                return str(d / "psql")
        return shutil.which("psql")

    def _psql(self) -> str:
        """client(), looked up once per server object: the lookup runs pg_config (a shell script on
        Debian, 10-20 ms a call), and sql() precedes every sample."""
        if self._psql_path is None:
            self._psql_path = self.client() or "psql"
        return self._psql_path

    def sql(self, statements: str, admin: bool = False, timeout: float = CLIENT_TIMEOUT_S) -> str:
        env = dict(os.environ)
        for var in ("PGPASSWORD", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE"):
            env.pop(var, None)
        if admin:
            cmd = ["-h", str(self.sockdir), "-p", str(self.conn.port), "-U", "postgres", "-d", "postgres"]
            env["PGPASSWORD"] = self.admin_password or ""
        else:
            c = self.conn
            cmd = ["-h", c.host, "-p", str(c.port), "-U", c.user, "-d", c.database]
            env["PGPASSWORD"] = c.password
        return self._run_client([self._psql(), *cmd, "-w", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"],
                                statements, env, timeout)

    def _init_datadir(self) -> None:
        self.admin_password = new_password()
        pwfile = self.home / "initdb.pw"
        fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
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
