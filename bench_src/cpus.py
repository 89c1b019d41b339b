"""The number of CPUs a program may use: the usable-CPUs rule, owned here alone.  The plan
resolves `threads=None` with it; the harness passes the number as `--threads` to every sample and
records it in meta.json (run/machine.describe).  A program run without `--threads` uses its
runtime's own default instead and says so in its result line (`threads_source`)."""
from __future__ import annotations

import math
import os
from typing import Callable


# T = max(1, min(A, Q)): A = CPUs in the affinity mask; Q = the smallest ceil(quota / period) of
# the CPU bandwidth limits of the process's cgroup and every ancestor (cgroup v2 `cpu.max`, v1
# `cpu.cfs_quota_us` / `cpu.cfs_period_us`), infinity when there is none or nothing can be read.
# The parsing takes the text of /proc/self/cgroup and /proc/self/mountinfo and a reader of cgroup
# files, so tests feed it fixture text.

def _unescape_mount_path(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash in paths as octal escapes (\\040 ...)."""
    out, i = [], 0
    while i < len(text):
        code = text[i + 1:i + 4]
        if text[i] == "\\" and len(code) == 3 and all(c in "01234567" for c in code):
            out.append(chr(int(code, 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def cgroup_mounts(mountinfo: str) -> list[tuple[str, str, str]]:
    """(version, mount root, mount point) of every cgroup2 mount and every cgroup v1 mount whose
    super options include the `cpu` controller, in mountinfo order."""
    mounts = []
    for line in mountinfo.splitlines():
        if " - " not in line:
            continue
        before, after = line.split(" - ", 1)
        pre, post = before.split(), after.split()
        if len(pre) < 5 or len(post) < 3:
            continue
        fstype, super_options = post[0], post[2]
        root, point = _unescape_mount_path(pre[3]), _unescape_mount_path(pre[4])
        if fstype == "cgroup2":
            mounts.append(("v2", root, point))
        elif fstype == "cgroup" and "cpu" in super_options.split(","):
            mounts.append(("v1", root, point))
    return mounts


def cgroup_paths(cgroup: str) -> dict[str, str]:
    """The process's cgroup path per version: v2 from the `0::/path` line, v1 from the line whose
    controller list contains `cpu`."""
    found: dict[str, str] = {}
    for line in cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hier, controllers, path = parts
        if hier == "0" and controllers == "":
            found.setdefault("v2", path)
        elif "cpu" in controllers.split(","):
            found.setdefault("v1", path)
    return found


def _cgroup_dirs(root: str, point: str, path: str) -> list[str] | None:
    """The directories of the cgroup `path` and its ancestors up to the mount point, or None when
    the path does not lie under the mount's root (the cgroup is not visible through this mount)."""
    root_n = "/" + root.strip("/") if root.strip("/") else "/"
    path_n = "/" + path.strip("/") if path.strip("/") else "/"
    if root_n != "/" and path_n != root_n and not path_n.startswith(root_n + "/"):
        return None
    rel = path_n[len(root_n):] if root_n != "/" else path_n
    parts = [p for p in rel.split("/") if p]
    dirs = []
    for k in range(len(parts), -1, -1):
        dirs.append(os.path.join(point, *parts[:k]))
    return dirs


def _ceil_div(quota: int, period: int) -> int | None:
    if quota <= 0 or period <= 0:
        return None
    return math.ceil(quota / period)


def cgroup_cpu_limit(cgroup: str, mountinfo: str, read: Callable[[str], str]) -> float:
    """Q of the rule: the smallest CPU limit over the process's cgroup and its ancestors in every
    cgroup hierarchy that can limit the CPU, or infinity.  `read(path)` returns a file's text or
    raises OSError."""
    paths = cgroup_paths(cgroup)
    best = math.inf
    for version, root, point in cgroup_mounts(mountinfo):
        path = paths.get(version)
        if path is None:
            continue
        dirs = _cgroup_dirs(root, point, path)
        for d in dirs or ():
            limit = None
            try:
                if version == "v2":
                    fields = read(os.path.join(d, "cpu.max")).split()
                    if len(fields) >= 2 and fields[0] != "max":
                        limit = _ceil_div(int(fields[0]), int(fields[1]))
                else:
                    quota = int(read(os.path.join(d, "cpu.cfs_quota_us")).strip())
                    if quota != -1:
                        period = int(read(os.path.join(d, "cpu.cfs_period_us")).strip())
                        limit = _ceil_div(quota, period)
            except (OSError, ValueError):
                limit = None
            if limit is not None:
                best = min(best, limit)
    return best


def usable_cpus_from(affinity: int, cgroup: str, mountinfo: str, read: Callable[[str], str]) -> int:
    """T = max(1, min(A, Q))."""
    q = cgroup_cpu_limit(cgroup, mountinfo, read)
    return max(1, int(min(affinity, q)))


def _read_text(path: str) -> str:
    with open(path) as f:
        return f.read()


def usable_cpus() -> int:
    """The number of CPUs this process may use: the `--threads` the harness passes when the plan
    does not set one (the same number either program computes when `--threads` is absent)."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = os.cpu_count() or 1
    try:
        cgroup, mountinfo = _read_text("/proc/self/cgroup"), _read_text("/proc/self/mountinfo")
    except OSError:
        return max(1, affinity)
    return usable_cpus_from(affinity, cgroup, mountinfo, _read_text)


def cpu_set(cores: int) -> str:
    """The CPUs a sample pinned to `cores` CPUs runs on: the first `cores` CPUs of this process's
    affinity mask, as the launcher's --cpus list ("0,1")."""
    mine = sorted(os.sched_getaffinity(0))
    if not 1 <= cores <= len(mine):
        raise ValueError(f"cores: {cores} CPUs asked for, but this process may run on {len(mine)} ({mine})")
    return ",".join(str(c) for c in mine[:cores])


def pinned_share() -> list[int] | None:
    """The CPUs this process is pinned to when they are fewer than its machine's (a process started
    under `taskset`, a job's cpuset), else None: the whole machine."""
    mine = sorted(os.sched_getaffinity(0))
    return mine if len(mine) < (os.cpu_count() or len(mine)) else None


def share_text(given: list[int] | None = None) -> str | None:
    """The CPU share a host records as its `cpu_set` ("0,1"): the CPUs given (a local cluster's
    host), else those this process is pinned to (pinned_share); None for a whole machine.  A run
    in this process and a cluster's host record it alike, so the same share of a machine is the
    same host whichever way the run was started."""
    share = given or pinned_share()
    return ",".join(str(c) for c in share) if share else None


def split(workers: int) -> list[list[int]]:
    """The CPUs of each of `workers` hosts of a local cluster: this process's affinity mask cut
    into that many disjoint runs of neighbouring CPUs (the first runs one CPU longer when the
    count does not divide), so that no two hosts ever share a CPU."""
    mine = sorted(os.sched_getaffinity(0))
    if not 1 <= workers <= len(mine):
        raise ValueError(f"a local cluster of {workers} hosts needs a CPU for each, but this process may run on "
                         f"{len(mine)} ({mine})")
    size, extra = divmod(len(mine), workers)
    out, start = [], 0
    for k in range(workers):
        end = start + size + (1 if k < extra else 0)
        out.append(mine[start:end])
        start = end
    return out
