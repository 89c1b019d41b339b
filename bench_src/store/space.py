"""Running out of disk space where a run writes.

A full disk is not a sample's failure: the run stops at once with one error (`DiskFull`) that says
so, where, how many samples are safely stored and that the same command resumes once there is
space.  So that the session can still record how it ended, a run holds a small reserve of
preallocated bytes in its results directory (`Reserve`, the file `.space-reserve`) while it is
open; the reserve is given back when the disk fills up, and meta.json is rewritten in that space.
Given back, the file stays, empty, until the session's end is recorded: a session that could not
record its end and left an empty reserve was stopped by a full disk (a killed one leaves it whole).

The harness's scratch space (`$TMPDIR`, where bench_src/run/measure.py keeps each sample's launcher
result and output files) filling up stops a run the same way (`ScratchFull`): the error names that
directory, not the results directory, and says to free space there or to set TMPDIR elsewhere.
On a cluster's host the same error names the host (`ScratchFull.host`): the host sends it back to
the client, which stops the run with the same one line.
"""
from __future__ import annotations

import errno
import os
from pathlib import Path

DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
RESERVE = ".space-reserve"
# The reserve holds a copy of meta.json as it was last written plus this margin (what one update
# adds, the end of a session, a filesystem block): a rewrite needs a new copy beside the old one.
RESERVE_MARGIN = 8 * 1024


# What a session's record holds besides its plan (the machine, the toolchains, the estimate: about
# 3 KB of JSON in an article run); meta.json, indented, is about twice the plan and this.
SESSION_BYTES = 4 * 1024


def start_bytes(plan_bytes: int = 0) -> int:
    """The space a run writes before its first sample, for a plan of `plan_bytes` bytes of JSON:
    meta.json, the copy a rewrite makes beside it, and the reserve (meta.json's size and the
    margin).  `check` and a run refuse a results directory with less, before anything is built: a
    probe of one block passed where the run then stopped at its start, and `make run` built both
    programs and then failed writing its notebook."""
    meta = 2 * (plan_bytes + SESSION_BYTES)
    return 3 * meta + RESERVE_MARGIN


def is_disk_full(exc: BaseException) -> bool:
    """Whether an error means that the disk (or the user's quota) is full."""
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


SCRATCH_WRITING = "a sample's scratch files: the harness's temporary directory, TMPDIR"
SCRATCH_ADVICE = "free some space there or set TMPDIR to a directory on a disk with room"
SCRATCH_ADVICE_HOST = ("free some space there or give that host's worker a TMPDIR on a disk with room (a local "
                       "cluster's workers take the run's)")


class ScratchFull(OSError):
    """No space left in the harness's scratch directory (`directory`: $TMPDIR): the OSError of a
    full disk (ENOSPC), which stops a run like any other; the run's DiskFull names that directory
    and says what to do about it (SCRATCH_WRITING, SCRATCH_ADVICE).  `host`: the cluster's host
    whose scratch directory it is (its id and address), empty for this process's own."""

    def __init__(self, directory: str | os.PathLike, detail: str = "", host: str = ""):
        self.detail, self.host = detail, host
        super().__init__(errno.ENOSPC, "no space left in the harness's scratch directory (TMPDIR)"
                         + (f" of host {host}" if host else "") + (f": {detail}" if detail else ""), str(directory))

    def __reduce__(self):  # a host of a cluster sends it back to the client whole
        return type(self), (self.filename, self.detail, self.host)

    @property
    def advice(self) -> str:
        return SCRATCH_ADVICE_HOST if self.host else SCRATCH_ADVICE


class DiskFull(RuntimeError):
    """No space left where a run writes.  `stored`: samples safely stored in `samples_path` (None:
    the run had not started); `left_nothing`: what the run had made was removed again; `left`:
    what was left, in words, where the writer is no run (an export: the part of a file written
    was removed); `advice`: what to do before running again; `host`: the cluster's host whose disk
    it is (empty: this machine's); `end_recorded` is set to False when even the session's end could
    not be written."""

    def __init__(self, where: str | os.PathLike, writing: str = "", stored: int | None = None,
                 samples_path: Path | None = None, left_nothing: bool = False, left: str = "",
                 advice: str = "free some space", host: str = ""):
        self.where, self.writing, self.samples_path, self.host = Path(where), writing, samples_path, host
        self.stored, self.left_nothing, self.left, self.advice = stored, left_nothing, left, advice
        self.end_recorded = True
        super().__init__(self.what)

    @property
    def what(self) -> str:
        """The cause alone (what a session records as its end)."""
        writing = f" (writing {self.writing})" if self.writing else ""
        on = f" on host {self.host}" if self.host else ""
        return f"the disk is full: no space left on the device holding {self.where}{on}{writing}"

    def __str__(self) -> str:
        if self.stored:
            text = (f"{self.what}; {self.stored} samples are safely stored in {self.samples_path}; {self.advice}, "
                    "then run the same command again to resume")
        else:
            left = self.left or ("nothing was left behind" if self.left_nothing else "no sample is stored")
            text = f"{self.what}; {left}; {self.advice}, then run the same command again"
        if not self.end_recorded:
            text += ("; the end of this session could not be written to meta.json either (the next run "
                     "records it as stopped by a full disk)")
        return text


class Reserve:
    """A file of preallocated bytes, grown with `ensure` and given back with `release`."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def released(self) -> bool:
        """Given back and never removed: the mark of a session stopped by a full disk."""
        try:
            return self.path.stat().st_size == 0
        except OSError:
            return False

    def ensure(self, size: int) -> None:
        """Hold at least `size` bytes (never shrinks).  An OSError for a full disk propagates (the
        caller decides); any other failure (a filesystem that cannot preallocate) leaves the
        reserve as it is: it is a safeguard, not a condition of a run."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            if is_disk_full(exc):
                raise
            return
        try:
            if os.fstat(fd).st_size < size:
                os.posix_fallocate(fd, 0, size)
        except OSError as exc:
            if is_disk_full(exc):
                raise
        finally:
            os.close(fd)

    def release(self) -> None:
        """Give the space back (truncating needs none), keeping the empty file as a mark."""
        try:
            os.truncate(self.path, 0)
        except OSError:
            pass

    def remove(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
