import os

import pytest

from bench_src.cpus import usable_cpus
from bench_src.run import build


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """`pytest -n auto` (both sets of `make test`) starts one worker per CPU this process may use:
    the harness's own rule (bench_src.cpus), not the machine's count, which a cgroup or an affinity
    mask can cut."""
    return usable_cpus()


@pytest.fixture(scope="session")
def built():
    """Build the launcher and both programs once per test session (skipped when up to date)."""
    return build.build(("go", "rust"), log=lambda *_: None)


@pytest.fixture(scope="session")
def synthetic_report(tmp_path_factory):
    """The full report of report_data's synthetic run with one failing cell, made once per test
    process (analysis, figures and every export take about 20 s).  Tests only read it and its directory;
    a test that writes exports passes a directory of its own."""
    import report_data
    from bench_src.report import full

    d = report_data.write_results_dir(tmp_path_factory.mktemp("run") / "synthetic",
                                       report_data.records(failing=(("sqlite", "rust", "pool", 100),)))
    return full.full_report(d)


@pytest.fixture(autouse=True)
def environment_as_it_was():
    """Each test ends with this process's environment as it began: Dask's nanny sets its pre-spawn
    variables (MALLOC_TRIM_THRESHOLD_) in the parent process it starts workers from, and a run
    taken later in the same test process then strips them and says so in one more note line."""
    before = dict(os.environ)
    yield
    if os.environ != before:
        os.environ.clear()
        os.environ.update(before)
