"""`make run` validates before papermill writes anything, so a refused re-run leaves the results
directory, its executed notebook included, exactly as it was."""
import os
import subprocess
import sys

import pytest

from bench_src import paths
from bench_src.plan import make_plan
from bench_src.run import runner

pytestmark = pytest.mark.slow


def test_a_refused_rerun_leaves_the_executed_notebook_alone(built, tmp_path):
    out = tmp_path / "r"
    plan = make_plan("quick", workloads=["sleep"], ns=[10], samples=1, smoke=True, warmup=0, seed=5)
    runner.run(plan, out, context=runner.NoContext(), progress=False, log=lambda *_: None,
               measure_fn=lambda cell, *a, **k: {"status": "ok", "reason": "", "checksum": "1"})
    (out / "run.ipynb").write_text('{"the": "notebook of the earlier run"}')
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    proc = subprocess.run(["make", "--no-print-directory", "run", f"RUN_DIR={out}", "SEED=1"], cwd=paths.ROOT,
                          capture_output=True, text=True, timeout=900, env=dict(os.environ, MAKEFLAGS=""))
    assert proc.returncode != 0
    assert "already holds a different plan" in proc.stderr, proc.stderr[-2000:]
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after == before, "nothing in the directory may change"


def test_a_bad_parameter_is_refused_before_anything_is_installed_or_built(tmp_path):
    """The check needs only the virtual environment: a bad profile is named before apt or the build."""
    out = tmp_path / "r"
    proc = subprocess.run(["make", "--no-print-directory", "run", "PROFILE=bogus", f"RUN_DIR={out}"], cwd=paths.ROOT,
                          capture_output=True, text=True, timeout=900, env=dict(os.environ, MAKEFLAGS=""))
    assert proc.returncode != 0
    assert proc.stderr.splitlines()[0] == ("error: unknown profile 'bogus'; allowed: quick, article, article-full, "
                                           "memory, kernel-article")
    for sign_of_work in ("bench_src build", '"toolchains"', "installing:", "please install:", "results:"):
        assert sign_of_work not in proc.stdout + proc.stderr, (sign_of_work, proc.stdout[-2000:])
    assert not out.exists()


@pytest.mark.parametrize("setting, error", [
    ("THREADS=0", "error: threads must be an integer >= 1 and <= 1024, or None for the usable CPUs"),
    ("MEM_LIMIT_MB=abc", "error: mem_limit_mb must be an integer >= 1 and <= 67108864, or None for 80% of RAM"),
])
def test_threads_and_the_memory_guard_reach_the_check_before_anything_is_built(tmp_path, setting, error):
    """THREADS and MEM_LIMIT_MB (the README's way to give several machines one plan) go through the
    same check as every parameter, before apt or the build."""
    out = tmp_path / "r"
    proc = subprocess.run(["make", "--no-print-directory", "run", setting, f"RUN_DIR={out}"], cwd=paths.ROOT,
                          capture_output=True, text=True, timeout=900, env=dict(os.environ, MAKEFLAGS=""))
    assert proc.returncode != 0 and proc.stderr.startswith(error), proc.stderr[-2000:]
    for sign_of_work in ("bench_src build", '"toolchains"', "installing:", "please install:", "results:"):
        assert sign_of_work not in proc.stdout + proc.stderr, (sign_of_work, proc.stdout[-2000:])
    assert not out.exists()


def test_the_same_threads_and_memory_guard_give_one_plan_on_machines_with_other_cpus(tmp_path):
    """What `make run` checks first names the run directory by the plan's digest: with THREADS and
    MEM_LIMIT_MB given, a run restricted to one CPU plans what a run on every CPU plans."""
    def planned(*prefix, extra=()):
        proc = subprocess.run([*prefix, sys.executable, "-m", "bench_src", "check",
                               "--profile", "quick", *extra], cwd=paths.ROOT, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip().rsplit("-", 1)[1]
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two usable CPUs to restrict one run to one")
    given = ("--threads", "2", "--mem-limit-mb", "4096")
    assert planned("taskset", "-c", "0", extra=given) == planned(extra=given)
    assert planned("taskset", "-c", "0") != planned(), "left out, the threads follow each machine"
