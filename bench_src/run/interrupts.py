"""SIGINT and SIGTERM during a run.  `SigtermAsInterrupt`: SIGTERM raised as an interrupt
(`Terminated`), so that it ends a run as cleanly as Ctrl-C.  `held`: a stretch that an interrupt
must not cut, a sample stored and counted, so that the session's count in meta.json is the number
of its samples the file holds (an interrupt between the two left the count one short).

Python runs a signal's handler in the main thread only, between two bytecodes; elsewhere neither
helper changes anything (no handler can be installed there, and no interrupt is raised there)."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

HELD = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an interrupt so that a run ends as cleanly as after Ctrl-C."""


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class SigtermAsInterrupt:
    """Within the block, SIGTERM raises Terminated.  A second SIGTERM kills at once."""

    def __enter__(self):
        self.old = None
        if _main_thread():
            self.old = signal.signal(signal.SIGTERM, self._handler)
        return self

    def _handler(self, signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated()

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGTERM, self.old)


def _restore(handlers: list) -> None:
    """Each signal's handler put back, the rest even where an interrupt ends the first."""
    if handlers:
        try:
            signal.signal(*handlers[0])
        finally:
            _restore(handlers[1:])


@contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM arriving within the block are delivered when it ends, to the handlers
    that were in place before it (Ctrl-C's KeyboardInterrupt, Terminated, or the default action),
    the first of them once.  A handler installed outside Python (getsignal None) is left alone.
    Handlers, not the thread's signal mask: a signal blocked in the main thread is taken by
    another thread of the process, and its handler still runs in the main thread, at its next step."""
    if not _main_thread():
        yield
        return
    caught: list[int] = []
    before = [(s, h) for s in HELD if (h := signal.getsignal(s)) is not None]
    try:
        for s, _ in before:
            signal.signal(s, lambda signum, frame: caught.append(signum))
        yield
    finally:
        _restore(before)
        if caught:
            signal.raise_signal(caught[0])
