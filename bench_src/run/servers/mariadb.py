"""A private MariaDB server (see the package's docstring for who can do what)."""
from __future__ import annotations

import getpass
import os
import shutil
from pathlib import Path

from .. import fixtures
from .base import CLIENT_TIMEOUT_S, INSTALL, redact
from .managed import Managed
from .passwords import mysql_native_hash, new_password


class MariaDB(Managed):
    kind, scheme = "mysql", "mysql"
    dirname, exe_name, system_user = "mariadb", "mariadbd", "mysql"
    space_needed = 144 << 20  # MariaDB 10.11: 144 MiB (Managed._out_of_space)

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

    def sql(self, statements: str, admin: bool = False, timeout: float = CLIENT_TIMEOUT_S) -> str:
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
        return self._run_client(cmd, statements, env, timeout)

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
