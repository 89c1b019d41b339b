"""The papermill engine `bench`: the notebook's kernel over Unix sockets in a private directory.

papermill's default engine starts the kernel over TCP on 127.0.0.1.  Its messages are signed with
the key of a 0600 connection file, so no other user can run code in it, but they are not encrypted,
and anyone on the machine may subscribe to the kernel's output port: every cell's code and output
(the run's progress, its results) is broadcast there to whoever connects (ipykernel says so in a
warning).  This engine runs the same kernel with jupyter_client's `ipc` transport, its five
channels' sockets in a new 0700 directory, removed afterwards: no other user can reach them.
(ipykernel still listens on one TCP port for the output of subprocesses it forks: it only
receives, and drops a message without its random key; docs/security.md.)  `make run` selects it
(`papermill --engine bench`, registered as an entry point in pyproject.toml); so can any papermill
command or `papermill.execute_notebook(..., engine_name="bench")`.
"""
from __future__ import annotations

import os
import tempfile

from jupyter_client.manager import AsyncKernelManager
from papermill.engines import NBClientEngine

NAME = "bench"


class PrivateKernelEngine(NBClientEngine):
    """papermill's nbclient engine, with the kernel on Unix sockets in a private directory."""

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):
        with tempfile.TemporaryDirectory(prefix="bench-kernel-") as private:  # mode 0700
            os.chmod(private, 0o700)

            class PrivateKernelManager(AsyncKernelManager):  # nbclient starts, owns and shuts it down
                def __init__(self, **kw):
                    super().__init__(transport="ipc", ip=os.path.join(private, "kernel"), **kw)

            return super().execute_managed_notebook(nb_man, kernel_name, kernel_manager_class=PrivateKernelManager,
                                                    **kwargs)
