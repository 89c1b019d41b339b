"""The usable-CPUs rule, which the harness alone applies (it passes the number to both programs as
`--threads`): T = max(1, min(A, Q)), A = CPUs in the affinity mask, Q = the smallest
ceil(quota / period) over the process's cgroup and its ancestors.  The parsing is fed fixture text;
the real rule is checked under taskset and, when the kernel lets us make one, under a one-CPU
cgroup quota."""
import math
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from bench_src import paths
from bench_src import cpus

V1_MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
"""
V1_CGROUP = """\
4:memory:/elsewhere
3:cpuset:/
2:cpu,cpuacct:/app/job
0::/
"""
V2_MOUNTS = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
V2_CGROUP = "0::/user.slice/session-1.scope\n"


def reader(files):
    def read(path):
        if path not in files:
            raise FileNotFoundError(path)
        if files[path] is PermissionError:
            raise PermissionError(path)
        return files[path]
    return read


def test_v1_quota_of_the_process_cgroup():
    files = {"/sys/fs/cgroup/cpu,cpuacct/app/job/cpu.cfs_quota_us": "150000\n",
             "/sys/fs/cgroup/cpu,cpuacct/app/job/cpu.cfs_period_us": "100000\n"}
    assert cpus.cgroup_cpu_limit(V1_CGROUP, V1_MOUNTS, reader(files)) == 2  # ceil(1.5)
    assert cpus.usable_cpus_from(8, V1_CGROUP, V1_MOUNTS, reader(files)) == 2
    assert cpus.usable_cpus_from(1, V1_CGROUP, V1_MOUNTS, reader(files)) == 1


def test_v1_minus_one_is_no_limit_and_an_ancestor_can_limit():
    files = {"/sys/fs/cgroup/cpu,cpuacct/app/job/cpu.cfs_quota_us": "-1\n",
             "/sys/fs/cgroup/cpu,cpuacct/app/job/cpu.cfs_period_us": "100000\n",
             "/sys/fs/cgroup/cpu,cpuacct/app/cpu.cfs_quota_us": "300000\n",
             "/sys/fs/cgroup/cpu,cpuacct/app/cpu.cfs_period_us": "100000\n",
             "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
             "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n"}
    assert cpus.cgroup_cpu_limit(V1_CGROUP, V1_MOUNTS, reader(files)) == 3
    files["/sys/fs/cgroup/cpu,cpuacct/app/cpu.cfs_quota_us"] = "-1\n"
    assert cpus.cgroup_cpu_limit(V1_CGROUP, V1_MOUNTS, reader(files)) == math.inf
    assert cpus.usable_cpus_from(4, V1_CGROUP, V1_MOUNTS, reader(files)) == 4


def test_nested_limits_take_the_smallest():
    files = {"/sys/fs/cgroup/user.slice/session-1.scope/cpu.max": "400000 100000\n",
             "/sys/fs/cgroup/user.slice/cpu.max": "100000 100000\n",
             "/sys/fs/cgroup/cpu.max": "max 100000\n"}
    assert cpus.cgroup_cpu_limit(V2_CGROUP, V2_MOUNTS, reader(files)) == 1


def test_v2_max_and_fractions():
    files = {"/sys/fs/cgroup/user.slice/session-1.scope/cpu.max": "max 100000\n"}
    assert cpus.cgroup_cpu_limit(V2_CGROUP, V2_MOUNTS, reader(files)) == math.inf
    files["/sys/fs/cgroup/user.slice/session-1.scope/cpu.max"] = "250000 100000\n"
    assert cpus.cgroup_cpu_limit(V2_CGROUP, V2_MOUNTS, reader(files)) == 3
    files["/sys/fs/cgroup/user.slice/session-1.scope/cpu.max"] = "1000 100000\n"
    assert cpus.usable_cpus_from(16, V2_CGROUP, V2_MOUNTS, reader(files)) == 1


def test_unreadable_or_malformed_files_mean_no_limit():
    files = {"/sys/fs/cgroup/user.slice/session-1.scope/cpu.max": PermissionError,
             "/sys/fs/cgroup/user.slice/cpu.max": "garbage\n"}
    assert cpus.cgroup_cpu_limit(V2_CGROUP, V2_MOUNTS, reader(files)) == math.inf
    assert cpus.usable_cpus_from(2, V2_CGROUP, V2_MOUNTS, reader({})) == 2
    assert cpus.usable_cpus_from(0, "", "", reader({})) == 1, "T is at least 1"


def test_a_mount_root_below_the_hierarchy_root_and_paths_outside_it():
    # a container: the hierarchy's /docker/abc is mounted at /sys/fs/cgroup/cpu
    mounts = "40 31 0:29 /docker/abc /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
    files = {"/sys/fs/cgroup/cpu/sub/cpu.cfs_quota_us": "200000", "/sys/fs/cgroup/cpu/sub/cpu.cfs_period_us": "100000"}
    assert cpus.cgroup_cpu_limit("5:cpu:/docker/abc/sub\n", mounts, reader(files)) == 2
    # a cgroup outside the mounted part of the hierarchy cannot be read through this mount
    assert cpus.cgroup_cpu_limit("5:cpu:/other\n", mounts, reader(files)) == math.inf


def test_only_the_cpu_controller_of_v1_counts_and_hybrid_systems_read_both():
    mounts = ("34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
              "33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n"
              "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
              "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n")
    assert [m[2] for m in cpus.cgroup_mounts(mounts)] == ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/unified"]
    cgroup = "3:cpuset:/x\n2:cpuacct:/y\n1:cpu:/\n0::/\n"
    files = {"/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1", "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000",
             "/sys/fs/cgroup/unified/cpu.max": "200000 100000"}
    assert cpus.cgroup_cpu_limit(cgroup, mounts, reader(files)) == 2


def test_escaped_mount_points():
    mounts = r"32 31 0:29 / /sys/fs/cgroup/my\040cpu rw - cgroup cgroup rw,cpu" + "\n"
    assert cpus.cgroup_mounts(mounts) == [("v1", "/", "/sys/fs/cgroup/my cpu")]


PRINT_T = "from bench_src import cpus; print(cpus.usable_cpus())"


def test_the_rule_on_this_machine_and_under_taskset():
    out = subprocess.run([sys.executable, "-c", PRINT_T], capture_output=True, text=True, cwd=paths.ROOT, check=True)
    assert int(out.stdout) == cpus.usable_cpus() <= len(os.sched_getaffinity(0))
    if not shutil.which("taskset"):
        pytest.skip("taskset is not installed")
    one = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", PRINT_T], capture_output=True, text=True,
                         cwd=paths.ROOT, check=True)
    assert one.stdout.strip() == "1"


def test_a_one_cpu_cgroup_quota_gives_one_thread():
    """A cgroup with quota = period (one CPU) on a machine with more: the harness says 1."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs at least 2 CPUs to tell a quota from the affinity mask")
    if os.geteuid() != 0:
        pytest.skip("creating a cgroup needs root")
    mounts = cpus.cgroup_mounts(Path("/proc/self/mountinfo").read_text())
    v1 = next((point for version, _, point in mounts if version == "v1"), None)
    v2 = next((point for version, _, point in mounts if version == "v2"
               and "cpu" in (Path(point) / "cgroup.controllers").read_text(errors="replace").split()
               if (Path(point) / "cgroup.controllers").exists()), None)
    base = Path(v1) if v1 else Path(v2) if v2 else None
    if base is None:
        pytest.skip("no cgroup hierarchy with the cpu controller is mounted")
    d = base / f"bench-test-{uuid.uuid4().hex[:8]}"
    try:
        d.mkdir()
        if v1:
            (d / "cpu.cfs_period_us").write_text("100000")
            (d / "cpu.cfs_quota_us").write_text("100000")
        else:
            (d / "cpu.max").write_text("100000 100000")
    except OSError as exc:
        try:
            d.rmdir()  # a cgroup directory is removed with rmdir (its files are not real files)
        except OSError:
            pass
        pytest.skip(f"cannot create a cgroup with a CPU quota here: {exc}")
    try:
        out = subprocess.run(["sh", "-c", f'echo $$ > {d}/cgroup.procs && exec "$0" -c "$1"', sys.executable, PRINT_T],
                             capture_output=True, text=True, cwd=paths.ROOT, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "1"
    finally:
        d.rmdir()
