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
"""
from __future__ import annotations

import os
import signal
import tempfile
import threading

from jupyter_client.manager import AsyncKernelManager
from papermill.engines import NBClientEngine

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


class PrivateKernelEngine(NBClientEngine):
    """papermill's nbclient engine, with the kernel on Unix sockets in a private directory, and
    Ctrl-C and SIGTERM passed on to it (`_Forward`)."""

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):
        remove_unheld(tempfile.gettempdir(), KERNEL_DIR_PREFIX)  # those of engines that were killed
        with tempfile.TemporaryDirectory(prefix=KERNEL_DIR_PREFIX) as private, \
                DirLock(os.path.join(private, LOCK_NAME), f"the kernel directory {private}"):  # mode 0700
            os.chmod(private, 0o700)

            kernels: list = []

            class PrivateKernelManager(AsyncKernelManager):  # nbclient starts, owns and shuts it down
                def __init__(self, **kw):
                    super().__init__(transport="ipc", ip=os.path.join(private, "kernel"), **kw)
                    kernels.append(self)

            with _Forward(kernels):
                return super().execute_managed_notebook(nb_man, kernel_name,
                                                        kernel_manager_class=PrivateKernelManager, **kwargs)
