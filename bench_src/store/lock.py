"""Exclusive use of a directory by one process: an advisory `flock` on a lock file that holds the
owner's PID.  The kernel drops the lock when its owner dies (even by kill -9), so a lock left by a
dead process is simply taken over; a live owner makes the second claimant fail at once, naming it."""
from __future__ import annotations

import datetime as dt
import fcntl
import os
import time
from pathlib import Path

# The lock of a directory: the file in it that a DirLock holds (a results directory, a server's, a
# sample's, a local cluster's scratch, the notebook kernel's), read by whoever asks whether the
# directory is in use (remove_unheld, check_results_dir, the report).
LOCK_NAME = ".lock"


class LockedError(RuntimeError):
    """Another live process holds the lock."""

    def __init__(self, what: str, path: Path, owner: str):
        self.path, self.owner = path, owner
        super().__init__(f"{what} is in use by {owner} (lock {path}); wait for it to finish or stop it")


def _owner(path: Path) -> str:
    try:
        fields = path.read_text().split()
    except OSError:
        fields = []
    if fields and fields[0].isdigit():
        since = f", since {fields[1]}" if len(fields) > 1 else ""
        return f"PID {fields[0]}{since}"
    return "another process"


class DirLock:
    """`with DirLock(path, what):` or acquire()/release().  `held_by(path)` asks without taking it."""

    def __init__(self, path: str | os.PathLike, what: str):
        self.path = Path(path)
        self.what = what
        self.fd: int | None = None

    def acquire(self) -> "DirLock":
        if self.fd is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = self._create_locked()
        if fd is None:
            fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
            for attempt in range(3):  # held_by() takes a shared lock for an instant: try again briefly
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if attempt == 2:
                        os.close(fd)
                        raise LockedError(self.what, self.path, _owner(self.path)) from None
                    time.sleep(0.05)
        stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {stamp}\n".encode(), 0)
        except OSError:  # a full disk: the lock is not taken (closing drops it)
            os.close(fd)
            raise
        self.fd = fd
        return self

    def _create_locked(self) -> int | None:
        """A new lock file appears already locked (made under another name, locked, then linked
        into place), so that no one can find it unlocked and take it for a dead owner's.  None when
        the file exists already."""
        if self.path.exists():
            return None
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{time.monotonic_ns()}")
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.link(tmp, self.path)
        except FileExistsError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        finally:
            tmp.unlink(missing_ok=True)
        return fd

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            pass
        os.close(self.fd)  # closing drops the flock
        self.fd = None

    def __enter__(self) -> "DirLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    @staticmethod
    def held_by(path: str | os.PathLike) -> str | None:
        """The owner ("PID n, since ...") when a live process holds the lock, else None."""
        path = Path(path)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _owner(path)
        finally:
            os.close(fd)
        return None


def remove_unheld(parent: str | os.PathLike, prefix: str, keep: Path | None = None) -> list[Path]:
    """Remove the directories `parent/prefix*` of this user whose lock (LOCK_NAME) no live process holds:
    those of harness processes that died (kill -9) before removing them.  A directory without a
    lock file, another user's, or `keep` stays.  Returns what was removed."""
    import shutil

    removed = []
    for d in Path(parent).glob(prefix + "*"):
        try:
            if not d.is_dir() or d.is_symlink() or d.stat().st_uid != os.geteuid():
                continue
        except OSError:
            continue
        if (d / LOCK_NAME).exists() and DirLock.held_by(d / LOCK_NAME) is None and d != keep:
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed
