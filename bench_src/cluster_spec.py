"""What the `cluster` run parameter names, read once: None (the plan runs here, in this process,
as always), a local cluster of N hosts on this machine (`"local:N"`, each host pinned to its own
CPUs: bench_src/cpus.py `split`), or the address of a running Dask scheduler whose workers are the
hosts (`"tcp://HOST:PORT"`, also `tls://`).  The run itself is bench_src/run/cluster/."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import cpus
from .values import read_none

_LOCAL = re.compile(r"local:(-?\d+)")  # local:-1 too, so that a count below 1 is named as one
_ADDRESS = re.compile(r"(tcp|tls)://([A-Za-z0-9._\-\[\]:]+):(\d{1,5})")
ALLOWED = ('None (the plan runs in this process)', '"local:N" (N hosts on this machine, each on its own CPUs)',
           '"tcp://HOST:PORT" (a running Dask scheduler)')


class ClusterError(RuntimeError):
    """A cluster that cannot run the plan (no scheduler, no host, a host refused): the message
    says what happened and what to do."""


@dataclass(frozen=True)
class ClusterSpec:
    kind: str  # "local" or "scheduler"
    workers: int = 0  # local: the number of hosts
    address: str = ""  # scheduler: its address

    def __str__(self) -> str:
        return f"local:{self.workers}" if self.kind == "local" else self.address

    def endpoint(self) -> tuple[str, str, int]:
        """A scheduler's address as (scheme, host, port): ("tcp", "10.0.0.1", 8786)."""
        scheme, host, port = _ADDRESS.fullmatch(self.address).groups()
        return scheme, host.strip("[]"), int(port)


def parse_cluster(value: Any, usable: int | None = None) -> ClusterSpec | None:
    """The cluster a run uses, or None for the in-process run: None or the word None, as every
    parameter reads it (values.read_none; "null", "none" or an empty string are refused as any other
    value that names no cluster).  A ValueError names the value and what is allowed; "local:N" needs
    1 <= N <= the usable CPUs (`usable`, default this process's): 0 or fewer hosts are named as such,
    more than the CPUs as hosts without a CPU of their own."""
    value = read_none(value)
    if value is None:
        return None
    allowed = f"allowed: {'; '.join(ALLOWED)}"
    if not isinstance(value, str):
        raise ValueError(f"cluster: {value!r} is not a string; {allowed}")
    text = value.strip()
    local = _LOCAL.fullmatch(text)
    if local:
        n = int(local.group(1))
        limit = cpus.usable_cpus() if usable is None else usable
        allowed_n = f"allowed: local:N with 1 <= N <= {limit} (this machine's usable CPUs)"
        if n < 1:
            raise ValueError(f"cluster: {text!r} asks for {n} local hosts, and a local cluster needs at least one; "
                             f"{allowed_n}")
        if n > limit:
            raise ValueError(f"cluster: {text!r} asks for {n} local hosts, but each needs a CPU of its own and this "
                             f"machine has {limit} usable; {allowed_n}")
        return ClusterSpec("local", workers=n)
    address = _ADDRESS.fullmatch(text)
    if address:
        port = int(address.group(3))
        if not 1 <= port <= 65535:
            raise ValueError(f"cluster: {text!r} has port {port}; a port is 1 to 65535")
        return ClusterSpec("scheduler", address=text)
    raise ValueError(f"cluster: {text!r} is not a cluster; {allowed}")


def host_threads(spec: ClusterSpec | None) -> int | None:
    """The `threads` of a plan that sets none, run on this cluster: each local host's CPUs (the
    fewest, when the CPUs do not divide evenly), so that no program runs more threads than its host
    has CPUs.  None for the in-process run and a scheduler's hosts (the usable-CPUs rule of
    bench_src/cpus.py applies; the run warns about a host with another number of CPUs)."""
    if spec is None or spec.kind != "local":
        return None
    return len(cpus.split(spec.workers)[-1])
