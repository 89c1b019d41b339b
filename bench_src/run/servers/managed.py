"""A private server the harness starts and stops: its locked directory under data/servers/ (or a
home under $TMPDIR), its owner, start, readiness and stop, and the removal of directories whose
owner died.

Who owns what, when the harness is root and the server runs as its own account: the instance's
root (lock, `home` file, server log) and a home under $TMPDIR belong to the harness's user, mode
0711, so that the server's account can pass through them and nothing more; the server's account
owns only the 0700 directories inside the home (`data`, `run`, `files`, `tmp`).  So the server's
account cannot point the harness at another directory to delete (a forged `home` file) nor at
another file to append to (a link in place of the log), and a recorded home is trusted only where
the harness could have made it."""
from __future__ import annotations

import errno
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from ...store.lock import LOCK_NAME, DirLock, LockedError
from ...store.space import DiskFull, is_disk_full
from .base import HOME_FILE, MAX_SOCKET_DIR, SERVERS_DIR, START_TIMEOUT_S, Conn, Server, ServerError
from .passwords import new_password
from .process import first_error, free_port, log_tail, popen_logged, process_state, server_environment, stop_verified

# what a server or its set-up tool prints when the disk is full: the errno's text, MariaDB's "failed
# with error 28", "Errcode: 28" and "Probably out of disk space", "Disk full"
_DISK_FULL_TEXT = re.compile(r"no space left on device|\b(?:error|errno|errcode)\W{0,3}28\b|out of disk space|"
                             r"disk (?:is )?full|\bENOSPC\b", re.IGNORECASE)

# free_port() asks the kernel for a free loopback port and lets it go; the server binds it a moment
# later, and another process (a parallel test, another run's server, an outgoing connection) can
# take it in between: MariaDB says "Got error: 98: Address already in use", PostgreSQL "could not
# bind IPv4 address ...: Address already in use". Such a start is tried again on another port.
_PORT_TAKEN = re.compile(r"address already in use|error: 98\b", re.IGNORECASE)
PORT_ATTEMPTS = 5


class _PortTaken(ServerError):
    """The server exited at start because another process held its port."""


class ServerDiskFull(OSError):
    """No space for a private server's files (errno ENOSPC, so that whatever handles a full disk
    handles it: a server that cannot be restarted during a run stops the run as any full disk does);
    its text is one line that names the directory and says what to do."""

    def __str__(self) -> str:
        return str(self.strerror)


class Managed(Server):
    """A server the harness starts, in a directory of its own (see the module's docstring)."""

    dirname = ""      # the prefix of its directory under data/servers
    exe_name = ""     # the server binary's file name
    system_user = ""  # the distribution's account the server runs as when the harness is root
    # about what a new instance's directory takes (measured after a first restore): a set-up tool
    # (initdb, mariadb-install-db) that fails where the disk has less free failed for want of space
    space_needed = 0

    def __init__(self, root: str | os.PathLike | None = None, max_connections: int = 200):
        super().__init__()
        self.root: Path | None = Path(root).absolute() if root else None
        self.home: Path | None = None
        self.lock: DirLock | None = None
        self.max_connections = max_connections
        self.admin_password: str | None = None
        self._initialized = False
        self._log_from = 0  # the log's size when the present start began

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
        """A directory only the server's user (and root) can enter: the data, socket, file and
        scratch directories inside the home."""
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)
        if os.geteuid() == 0:
            shutil.chown(path, self.system_user, self.system_user)

    def _harness_dir(self, path: Path) -> None:
        """A directory the harness's user owns and alone writes in (the instance's root, a home
        under $TMPDIR); when the harness is root the server's user may pass through it (0711) to
        its own directories inside, but can neither list it nor add, rename or replace anything."""
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            raise ServerError(f"{path} is not a directory: remove it and run again")
        if st.st_uid != os.geteuid():
            if os.geteuid() != 0:
                raise ServerError(f"{path} belongs to another user: remove it and run again")
            os.chown(path, 0, os.getegid())  # a directory an earlier version gave to the server's user
        os.chmod(path, 0o711 if os.geteuid() == 0 else 0o700)

    def _owner_can_reach(self, path: Path) -> bool:
        """Whether the server's user can pass through `path` (and every directory above it) to the
        directories inside that it owns."""
        if os.geteuid() != 0:
            return True
        probe = subprocess.run(self._as_owner(["test", "-x", str(path)]), cwd="/", capture_output=True,
                               env=server_environment())
        return probe.returncode == 0

    # --- the instance's directory --------------------------------------------------------------
    def _claim(self) -> None:
        """Choose and lock the instance's root, clear what a killed owner left there, choose home."""
        if self.root is None:
            self.root = _new_instance_dir(self.dirname)
        self.root.mkdir(parents=True, exist_ok=True)
        lock = DirLock(self.root / LOCK_NAME, f"the {self.kind} server directory {self.root}")
        try:
            lock.acquire()
        except LockedError as exc:
            raise ServerError(str(exc)) from None
        self.lock = lock
        self._discard_leftovers()
        self.home = self._choose_home()

    def _recorded_home(self) -> Path | None:
        """The home a killed harness recorded in this root, if it is one this harness could have
        made: a directory (not a link) directly in $TMPDIR, named `bench-<kind>-...` and owned by
        the harness's user; anything else is ignored, never deleted."""
        assert self.root is not None
        try:
            text = (self.root / HOME_FILE).read_text().strip()
        except OSError:
            return None
        home = Path(text)
        try:
            st = os.lstat(home)
        except (OSError, ValueError):
            return None
        made_here = (home.is_absolute() and home.parent == Path(tempfile.gettempdir())
                     and home.name.startswith(f"bench-{self.dirname}-"))
        return home if made_here and stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() else None

    def _discard_leftovers(self) -> None:
        """Stop a server a killed harness left in this root (verified by executable and data
        directory) and remove its files."""
        assert self.root is not None
        for home in {self.root, self._recorded_home() or self.root}:
            self.home = home
            stop_verified(self.pidfile(), self.exe_name, self.datadir, self._stop_signal)
            for name in ("data", "run", "files", "tmp"):
                shutil.rmtree(home / name, ignore_errors=True)
            if home != self.root:  # a home _recorded_home accepted: in $TMPDIR, the harness's own
                shutil.rmtree(home, ignore_errors=True)
        (self.root / HOME_FILE).unlink(missing_ok=True)
        self.home = None

    def _choose_home(self) -> Path:
        assert self.root is not None
        self._harness_dir(self.root)
        if self._owner_can_reach(self.root) and len(str(self.root / "run")) <= MAX_SOCKET_DIR:
            return self.root
        home = Path(tempfile.mkdtemp(prefix=f"bench-{self.dirname}-"))
        self._harness_dir(home)
        (self.root / HOME_FILE).write_text(str(home) + "\n")
        return home

    # --- a full disk ---------------------------------------------------------------------------
    def _space_dir(self) -> Path:
        """The directory whose device holds the instance's files (data/servers, or $TMPDIR for a
        home there): the one to free space in (the instance's own directory is removed on close)."""
        home = self.home or self.root
        return home.parent if home is not None else SERVERS_DIR

    def _out_of_space(self, output: str, setting_up: bool = False) -> bool:
        """Whether a failure of the server's start is for want of space: its output (a set-up tool's,
        the server log's) says so, or, for the set-up tool that makes the data directory, the device
        has less free space than a new instance takes (the tool may remove what it wrote first)."""
        if _DISK_FULL_TEXT.search(output):
            return True
        free = _free_bytes(self._space_dir()) if setting_up else None
        return free is not None and free < self.space_needed

    def _disk_full(self, doing: str) -> ServerDiskFull:
        where = self._space_dir()
        free = _free_bytes(where)
        room = (f" ({_mib(free)} free; a new {self.kind} server takes about {_mib(self.space_needed)})"
                if free is not None and self.space_needed else "")
        return ServerDiskFull(errno.ENOSPC, f"{doing} failed: {DiskFull(where).what}{room}; free some space there",
                              str(self.home or where))

    # --- life cycle ----------------------------------------------------------------------------
    _stop_signal = signal.SIGTERM

    def exited(self) -> str | None:
        """How the server's process ended ("killed by SIGKILL", "exited with status 1"); None while
        it runs."""
        if self.proc is None:
            return "its process is not running"
        code = self.proc.poll()
        if code is None:
            return None
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with status {code}"

    def suspended(self) -> bool:
        """Its process is stopped by a signal (kill -STOP): it answers nothing until continued."""
        return self.proc is not None and self.proc.poll() is None and process_state(self.proc.pid) in ("T", "t")

    def start(self) -> None:
        """Start the server (make its directory and data first, at a first start).  A full disk is
        a ServerDiskFull in one line, whatever step found it."""
        try:
            self._start()
        except ServerDiskFull:
            raise
        except OSError as exc:
            if is_disk_full(exc):
                raise self._disk_full(f"writing {exc.filename or 'its files'}") from None
            raise
        except ServerError as exc:  # the accounts or the template table, written by the server
            if _DISK_FULL_TEXT.search(str(exc)):
                raise self._disk_full(f"starting the {self.kind} server") from None
            raise

    def _start(self) -> None:
        if self.lock is None:
            self._claim()
        for d in (self.sockdir, self.filesdir, self.tmpdir):
            self._private_dir(d)
        if not self._initialized:
            shutil.rmtree(self.datadir, ignore_errors=True)
            self._private_dir(self.datadir)  # the server's user cannot create it in the harness's home
            self._init_datadir()
            self._initialized = True
        for attempt in range(1, PORT_ATTEMPTS + 1):
            port = free_port()
            self.conn = Conn("127.0.0.1", port, "bench", new_password(), "bench")  # a new password at every start
            self._log_from = self._log_size()
            self.proc = popen_logged(self._as_owner(self._server_command(port)), self.log)
            try:
                self._wait_until_ready()
                break
            except _PortTaken as exc:
                self.proc = None
                if attempt == PORT_ATTEMPTS:
                    raise ServerError(f"{self.exe_name} found each of {PORT_ATTEMPTS} free loopback ports taken "
                                      f"by the time it bound them (last {port}): {exc}") from None
        self._set_up_accounts()
        self.ensure_template()

    def stop(self) -> None:
        """Stop the server process (its files stay for a restart)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(self._stop_signal)
            try:  # a stopped server (SIGSTOP: the whole group, its children too) handles it at once
                os.killpg(self.proc.pid, signal.SIGCONT)
            except (ProcessLookupError, PermissionError):
                pass
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
            # initdb.pw: the bootstrap password file, left when a kill came during initdb
            for name in ("data", "run", "files", "tmp", "server.log", "initdb.pw", HOME_FILE):
                p = self.root / name
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
            (self.root / LOCK_NAME).unlink(missing_ok=True)
            self.lock.release()
            self.lock = None
            try:
                self.root.rmdir()
                if self.root.parent == SERVERS_DIR:
                    SERVERS_DIR.rmdir()  # the last instance leaves no empty data/servers behind
            except OSError:
                pass  # not empty: another instance's, or files this one could not remove
        self.home = None
        self._initialized = False

    def _wait_until_ready(self) -> None:
        deadline = time.time() + START_TIMEOUT_S
        last = ""
        while time.time() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                if self._out_of_space(log_tail(self.log, 20)):
                    raise self._disk_full(f"starting {self.exe_name}")
                if _PORT_TAKEN.search(self._log_since_start()):
                    raise _PortTaken(log_tail(self.log))
                raise ServerError(f"{self.exe_name} {self.exited()} while starting: {log_tail(self.log)}")
            try:
                if self.sql("SELECT 1", admin=True).strip() == "1":
                    return
            except ServerError as exc:
                last = str(exc)
            time.sleep(0.2)
        if self._out_of_space(log_tail(self.log, 20)):
            raise self._disk_full(f"starting {self.exe_name}")
        raise ServerError(f"{self.exe_name} did not answer within {START_TIMEOUT_S} s ({last}): {log_tail(self.log)}")

    def _log_size(self) -> int:
        try:
            return self.log.stat().st_size
        except OSError:
            return 0

    def _log_since_start(self) -> str:
        """What the server wrote to its log since this start (the log is appended to across starts)."""
        try:
            with open(self.log, "rb") as f:
                f.seek(self._log_from)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def _run_as_owner(self, cmd: list[str], what: str) -> None:
        """Run a set-up tool as the server's user; its failure is one line: a full disk said so
        (ServerDiskFull), else the first line of its output that names an error."""
        proc = subprocess.run(self._as_owner(cmd), capture_output=True, text=True, cwd="/", env=server_environment())
        if proc.returncode != 0:
            output = f"{proc.stderr}\n{proc.stdout}"
            if self._out_of_space(output, setting_up=True):
                raise self._disk_full(what)
            raise ServerError(f"{what} failed (exit status {proc.returncode}): {first_error(output)}")

    def _init_datadir(self) -> None:
        raise NotImplementedError

    def _server_command(self, port: int) -> list[str]:
        raise NotImplementedError

    def _set_up_accounts(self) -> None:
        raise NotImplementedError



def _free_bytes(path: Path) -> int | None:
    """The bytes an unprivileged user may still write on the device holding `path` (None when it
    cannot be read)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n < 10 * 2**20 else f"{n / 2**20:.0f} MiB"


def _new_instance_dir(prefix: str) -> Path:
    """A new directory for one instance under data/servers, created with it if missing (the last
    instance to close removes data/servers, possibly between this process's mkdir and mkdtemp:
    then the two are tried again)."""
    for _ in range(10):
        SERVERS_DIR.mkdir(parents=True, exist_ok=True)
        remove_stale_servers(SERVERS_DIR)
        try:
            return Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=SERVERS_DIR))
        except FileNotFoundError:
            continue
    raise ServerError(f"could not create a server directory in {SERVERS_DIR}: it kept disappearing")


def remove_stale_servers(base: Path = SERVERS_DIR) -> list[Path]:
    """Remove the server directories under `base` whose owner died (kill -9): stop a server still
    running there (after checking what it is) and delete its files.  Returns what was removed."""
    removed = []
    for cls in Managed.__subclasses__():  # the managed kinds: MariaDB, Postgres
        for root in sorted(base.glob(f"{cls.dirname}-*")):
            if not (root / LOCK_NAME).exists() or DirLock.held_by(root / LOCK_NAME) is not None:
                continue
            leftover = cls(root=root)
            try:
                leftover._claim()
            except ServerError:
                continue  # taken by another process meanwhile
            leftover.close()
            removed.append(root)
    return removed
