"""How the store writes a file: private to its owner (0600), whole (every byte, fsync'ed), and
where it replaces one, atomically; space claimed before it is needed."""
from __future__ import annotations

import errno
import os
from pathlib import Path


def _write_private(path: Path, text: str | bytes) -> None:
    """Write a file only its owner can read, atomically (temporary file, fsync, rename)."""
    tmp = path.with_name(path.name + ".tmp")
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)  # a partial copy (a full disk) must not stay behind
        raise
    os.close(fd)
    os.replace(tmp, path)


def _claim(fd: int, size: int) -> None:
    """Make the file `size` bytes of allocated space (ENOSPC if the disk has not that much free): a
    filesystem that cannot preallocate gets the bytes written."""
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
            raise
        os.lseek(fd, 0, os.SEEK_END)
        _write_all(fd, b"\0" * max(0, size - os.fstat(fd).st_size))
        os.fsync(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _private_opener(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_CLOEXEC, 0o600)
