"""A server the user runs, named by a DSN: used as it is, never started or stopped here, and
checked before anything is built (it must answer with the credentials given)."""
from __future__ import annotations

import subprocess

from ...store.secrets import Scrubber, dsn_secrets
from .base import CLIENT_INSTALL, Conn, Server, ServerError, redact
from .mariadb import MariaDB
from .postgres import Postgres


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
