"""The papermill engine `bench`: the notebook's kernel over Unix sockets in a private directory.

papermill's default engine starts the kernel over TCP on 127.0.0.1.  Its messages are signed with
the key of a 0600 connection file, so no other user can run code in it, but they are not encrypted,
and anyone on the machine may subscribe to the kernel's output port: every cell's code and output
(the run's progress, its results) is broadcast there to whoever connects (ipykernel says so in a
warning).  This engine runs the same kernel with jupyter_client's `ipc` transport, its five
channels' sockets in a new 0700 directory, removed afterwards: no other user can reach them.
(ipykernel still listens on one TCP port for the output of subprocesses it forks: it only
receives, and drops a message without its random key; docs/security.md.)  `make run` selects it
(through `python -m bench_src notebook`, papermill with `engine_name="bench"`, registered as an entry
point in pyproject.toml); so can any papermill command (`--engine bench`) or
`papermill.execute_notebook(..., engine_name="bench")`.

A cell that fails ends papermill with a PapermillExecutionError; papermill's own command lets it
reach Python, which printed papermill's frames above the cell's error, so that a bad parameter's one
line (`error: ...`, api.errors_in_one_line) came last, under a traceback that says nothing of it.
The engine has the process show such an error as the cell showed it (`failed_cell`), exit status 1
as before; `python -m bench_src notebook` shows it the same way, with the command line's status.
"""
from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading

from jupyter_client.manager import AsyncKernelManager
from papermill.engines import NBClientEngine
from papermill.exceptions import PapermillExecutionError

from ..store.lock import LOCK_NAME, DirLock, remove_unheld

NAME = "bench"
# SIGINT (Ctrl-C) and SIGTERM reach papermill, not the kernel (jupyter_client starts it in a session
# of its own), and papermill died of them: the kernel was torn down mid-cell ("Kernel died", pages of
# ZMQ errors), the run never recorded its end and its servers' data stayed in /tmp.  The engine
# passes them on to the kernel instead, where the run ends cleanly (the session is marked
# interrupted, one line says how to resume) and its cell fails, which ends papermill.  The third one
# is papermill's own again, for a kernel that does not answer.
FORWARDED = (signal.SIGINT, signal.SIGTERM)
# The kernel's private directory, under the temporary directory, locked while its engine lives: one
# left by an engine that was killed (kill -9) is removed by the next (store.lock.remove_unheld)
KERNEL_DIR_PREFIX = "bench-kernel-"
FORWARD_AT_MOST = 2
# ipykernel answers a shutdown request on its control thread, which then flushes the kernel's
# output; the main thread, stopped by that answer, may by then have closed the output's sockets, and
# the flush's ZMQError ("Socket operation on non-socket", ENOTSOCK) was logged by tornado with its
# traceback to the stderr the engine shows, below a failed cell's one-line error (seen once in a full
# test run).  The kernel drops that one record, a socket already closed, at its start (one
# expression run before any cell, defining no name in the notebook); every other error it logs
# stays as it was.
QUIET_CLOSED_SOCKETS = ('__import__("logging").getLogger("tornado.general").addFilter(lambda record: not ('
                        'record.exc_info and type(record.exc_info[1]).__module__.startswith("zmq") and '
                        'getattr(record.exc_info[1], "errno", None) == __import__("errno").ENOTSOCK))')


class _Forward:
    """A handler of FORWARDED signals that sends each to the kernels started (their pids) and,
    after FORWARD_AT_MOST, puts back the handlers it replaced and raises the signal again."""

    def __init__(self, kernels: list):
        self.kernels, self.count, self.previous = kernels, 0, {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.signal(s, self) for s in FORWARDED}
        return self

    def __call__(self, signum, frame):
        self.count += 1
        if self.count > FORWARD_AT_MOST:
            self.restore()
            signal.raise_signal(signum)
            return
        for km in self.kernels:
            pid = getattr(getattr(km, "provisioner", None), "pid", None)
            if pid:
                try:
                    os.kill(pid, signum)
                except ProcessLookupError:
                    pass

    def restore(self):
        for s, handler in self.previous.items():
            signal.signal(s, handler)
        self.previous = {}

    def __exit__(self, *exc):
        self.restore()

    @property
    def forced(self) -> bool:
        """More than FORWARD_AT_MOST signals came: papermill's own handlers have them again."""
        return self.count > FORWARD_AT_MOST


def manager_class(private: str, kernels: list, forward: _Forward) -> type[AsyncKernelManager]:
    """The kernel manager nbclient starts, owns and shuts down: its kernel on Unix sockets under
    `private`, each instance added to `kernels` (for `forward`).

    jupyter_client sends a kernel SIGINT before every shutdown.  nbclient shuts the kernel down
    after the notebook's last cell or its failed one, when nothing of the notebook runs; but a
    kernel still finishing the failed cell's request (its reply sent, its handler not yet left)
    takes the signal there, and ipykernel writes "[IPKernelApp] ERROR | KeyboardInterrupt caught in
    kernel." to the stderr the engine shows, above the cell's one-line error.  So the manager
    leaves that interrupt out, unless the user forced papermill's end (a third Ctrl-C: `forward`'s
    `forced`), when a cell may still be running and the interrupt is what stops it.  A shutdown
    that finds the kernel busy otherwise ends as jupyter_client ends it, with SIGTERM, then SIGKILL,
    after its shutdown_wait_time.  The kernel starts with QUIET_CLOSED_SOCKETS."""

    class PrivateKernelManager(AsyncKernelManager):
        def __init__(self, **kw):
            super().__init__(transport="ipc", ip=os.path.join(private, "kernel"), **kw)
            kernels.append(self)

        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            return super().format_kernel_cmd([*(extra_arguments or []),
                                              f"--IPKernelApp.exec_lines={QUIET_CLOSED_SOCKETS}"])

        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down and not forward.forced:
                return
            await super()._async_interrupt_kernel()

    return PrivateKernelManager


def failed_cell(error: PapermillExecutionError) -> str:
    """A failed cell's error as the cell showed it: one line for an error a user can fix, the cell's
    traceback for any other; not papermill's frames, which lead to every failed cell alike."""
    return "\n".join(error.traceback) or f"{error.ename}: {error.evalue}"


def show_failed_cells() -> None:
    """Have this process show a PapermillExecutionError that ends it as `failed_cell` does, every
    other error as before (the hook it replaces).  Once per process."""
    previous = sys.excepthook
    if getattr(previous, "shows_failed_cells", False):
        return

    def hook(etype, value, tb):
        if isinstance(value, PapermillExecutionError):
            print(failed_cell(value), file=sys.stderr)
        else:
            previous(etype, value, tb)

    hook.shows_failed_cells = True
    sys.excepthook = hook


class PrivateKernelEngine(NBClientEngine):
    """papermill's nbclient engine, with the kernel on Unix sockets in a private directory, Ctrl-C
    and SIGTERM passed on to it (`_Forward`), no interrupt at its shutdown and no log of its sockets
    closed by then (`manager_class`), and a
    failed cell shown as the cell showed it when it
    ends the process (`show_failed_cells`)."""

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):
        show_failed_cells()
        remove_unheld(tempfile.gettempdir(), KERNEL_DIR_PREFIX)  # those of engines that were killed
        with tempfile.TemporaryDirectory(prefix=KERNEL_DIR_PREFIX) as private, \
                DirLock(os.path.join(private, LOCK_NAME), f"the kernel directory {private}"):  # mode 0700
            os.chmod(private, 0o700)

            kernels: list = []
            with _Forward(kernels) as forward:
                return super().execute_managed_notebook(
                    nb_man, kernel_name, kernel_manager_class=manager_class(private, kernels, forward), **kwargs)
