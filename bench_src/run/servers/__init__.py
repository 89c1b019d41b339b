"""Private database servers on loopback, started and stopped by the harness, usable by it alone.

A `MariaDB` and a `Postgres` server each get a directory of their own per instance (by default
`data/servers/<mariadb|postgres>-XXXXXXXX/`, locked by the harness process that owns it), so that
two runs never share or stop each other's server.  Data, sockets and the server's file area live
in 0700 directories owned by the server's user inside a `home`: the directory itself, or, when that
user cannot reach it (a checkout under a private directory), a directory under $TMPDIR.  The
directory and the home belong to the harness's user (0711 as root), so the server's account can
change nothing the harness later deletes, appends to or reads (managed.py).

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
  show one;
- a server and its set-up tools inherit only PATH, the locale and the time zone of the harness's
  environment (which may hold a user's DSN): the server's account can read its processes'
  environment.

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

from .base import CLIENT_TIMEOUT_S, RESTORE_MIN_TIMEOUT_S, SERVERS_DIR, Conn, NoAnswer, Server, ServerError, redact
from .external import External, ExternalMariaDB, ExternalPostgres
from .managed import Managed, ServerDiskFull, remove_stale_servers
from .mariadb import MariaDB
from .postgres import Postgres
from .process import free_port, is_server_process

__all__ = ["CLIENT_TIMEOUT_S", "RESTORE_MIN_TIMEOUT_S", "SERVERS_DIR", "Conn", "External", "ExternalMariaDB",
           "ExternalPostgres", "EXTERNAL", "KINDS", "MANAGED", "Managed", "MariaDB", "NoAnswer", "Postgres", "Server", "ServerDiskFull", "ServerError",
           "check_external", "free_port", "is_server_process", "make_server", "missing", "redact",
           "remove_stale_servers"]


# The kinds of server (a workload's `server` in the catalogue, a key of the plan's `dsn`): the
# private server the harness starts, and the class for a user's.
MANAGED: dict[str, type[Managed]] = {"mysql": MariaDB, "postgres": Postgres}
EXTERNAL: dict[str, type[External]] = {"mysql": ExternalMariaDB, "postgres": ExternalPostgres}
KINDS = tuple(MANAGED)


def make_server(kind: str, dsn: str | None, max_connections: int) -> Server:
    if kind not in MANAGED:
        raise ValueError(f"unknown server kind {kind!r}; allowed: {', '.join(KINDS)}")
    return EXTERNAL[kind](dsn) if dsn else MANAGED[kind](max_connections=max_connections)


def missing(kind: str) -> str | None:
    return MANAGED[kind].missing()


def check_external(kind: str, dsn: str) -> None:
    """A server the user named must answer with the credentials of its DSN; a ServerError names it
    (password masked) with what it answered."""
    server = make_server(kind, dsn, max_connections=0)
    assert isinstance(server, External)
    server.check()
