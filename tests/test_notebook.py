"""run.ipynb executed through papermill with tiny parameters, as a user would."""
import json
import re

import papermill as pm
import pytest

from bench_src import api, paths
from bench_src.report import notebook as nb_module
from test_notebook_sections import first_section_after

pytestmark = pytest.mark.slow


def test_run_notebook_end_to_end(built, tmp_path):
    out = tmp_path / "results"
    pm.execute_notebook(
        str(paths.ROOT / "notebooks" / "run.ipynb"), str(tmp_path / "run.out.ipynb"),
        parameters={"workloads": '["sleep", "cpu_loops"]', "ns": "[10, 100]", "samples": 3, "warmup": 1, "smoke": True,
                    "params": '{"sleep": {"work": 1000}, "cpu_loops": {"inner": 1000}}',
                    "results_dir": str(out), "progress": True},
        cwd=str(paths.ROOT), kernel_name="python3", progress_bar=False, engine_name="bench")  # as make run
    df = api.load(out)
    assert len(df) == 2 * 2 * 2 * 4  # workloads x languages x N x (1 warm-up + 3 measured)
    assert (df["status"] == "ok").all(), df.loc[df["status"] != "ok", "reason"].tolist()
    assert set(df["phase"]) == {"warmup", "measured"}
    assert df["valid"].sum() == 2 * 2 * 2 * 3
    meta = json.loads((out / "meta.json").read_text())
    assert meta["plan"]["workloads"] == ["sleep", "cpu_loops"]
    for name in ("elapsed_s_vs_n", "ratio_elapsed_s_vs_n", "verdicts_elapsed_s"):
        for ext in ("svg", "png", "pdf"):
            f = out / "export" / "figures" / f"{name}.{ext}"
            assert f.exists() and f.stat().st_size > 1000, f
    assert not (out / "figures").exists()  # one place for figures
    assert (out / "export" / "report.html").stat().st_size > 10000
    executed = json.loads((tmp_path / "run.out.ipynb").read_text())
    assert not any(o.get("output_type") == "error" for c in executed["cells"] for o in c.get("outputs", []))
    shown = "".join("".join(o.get("data", {}).get("text/html", "")) for c in executed["cells"]
                    for o in c.get("outputs", []))
    assert "Go/Rust [" in shown and "CI], verdict" in shown and "bootstrap" not in "".join(
        "".join(c["source"]) for c in executed["cells"] if c["cell_type"] == "markdown")
    # the answer first: after the setup, the build and the run (stderr only), the findings
    heading, source, _ = first_section_after(executed["cells"], "refuse_unknown_parameters")
    assert heading.startswith("## Findings") and source == "nb.findings(rep)"
    log = "".join("".join(o.get("text", "")) for c in executed["cells"] if "".join(c["source"]).startswith("run_log.show()")
                  for o in c["outputs"])
    assert "gobench: " in log and "rustbench: " in log, "the build's lines are shown after the findings"
    # the progress lines went out of the run's cell once it ended (the notebook opens with the
    # findings) and are kept for "The run"
    run_cell = next(c for c in executed["cells"] if "api.run_plan(" in "".join(c["source"]))
    assert not [o for o in run_cell["outputs"] if o.get("name") == "stderr"], run_cell["outputs"]
    assert "samples" in log and "ETA" in log, log


def test_bad_parameter_fails_before_any_build(tmp_path, monkeypatch):
    from bench_src.run import build
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    with pytest.raises(ValueError, match="unknown workload 'nosuch'"):
        api.plan_from_parameters(workloads='["nosuch"]')
    with pytest.raises(ValueError, match="N=0|>= 1"):
        api.plan_from_parameters(workloads="sleep", ns="[0]")


def test_a_bad_parameter_reads_as_one_line_in_the_notebook_as_on_the_command_line(tmp_path):
    # not the stack of frames from the cell down to the validation: the line the command line prints
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(paths.ROOT / "notebooks" / "run.ipynb"), str(tmp_path / "bad.ipynb"),
                            parameters={"profile": "quik", "results_dir": str(tmp_path / "r")},
                            cwd=str(paths.ROOT), kernel_name="python3", progress_bar=False)
    line = "error: unknown profile 'quik'; allowed: quick, article"
    assert err.value.traceback == [line + ", article-full, memory, kernel-article"]
    assert str(err.value).rstrip().endswith(line + ", article-full, memory, kernel-article")
    executed = json.loads((tmp_path / "bad.ipynb").read_text())
    errors = [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert len(errors) == 1 and errors[0]["ename"] == "ValueError" and len(errors[0]["traceback"]) == 1
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("name", ["progress", "force_build"])
def test_a_bad_run_parameter_is_refused_in_the_first_cell_before_the_build(tmp_path, name):
    # read only where each is used, `progress maybe` was refused after the build cell had built both
    # programs; the first cell checks every run parameter (the build cell never runs).  The one read
    # by the run's cell and the one read by the build's; the first cell's check refuses repair and
    # new_binaries alike (test_notebook_parameters: api.check_run_parameters, each name)
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(paths.ROOT / "notebooks" / "run.ipynb"), str(tmp_path / "bad.ipynb"),
                            parameters={name: "maybe", "results_dir": str(tmp_path / "r"), "smoke": True,
                                        "workloads": "[sleep]", "ns": "[10]", "samples": 1},
                            cwd=str(paths.ROOT), kernel_name="python3", progress_bar=False)
    assert err.value.traceback == [f"error: {name} must be a boolean (true/false, yes/no, on/off, 1/0), got 'maybe'"]
    executed = json.loads((tmp_path / "bad.ipynb").read_text())
    code = [c for c in executed["cells"] if c["cell_type"] == "code"]
    first = next(c for c in code if "refuse_unknown_parameters" in "".join(c["source"]))
    built = next(c for c in code if "build_programs" in "".join(c["source"]))
    assert any(o.get("output_type") == "error" for o in first.get("outputs", []))
    assert built["execution_count"] is None and not built.get("outputs")
    assert not (tmp_path / "r").exists()


def test_only_the_errors_a_user_can_fix_lose_their_traceback():
    # a bug (here a TypeError) keeps its frames; the handler is installed only inside IPython
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    try:
        api.errors_in_one_line()
        assert shell.custom_exceptions == api.USER_ERRORS and TypeError not in api.USER_ERRORS
        from bench_src.store import CorruptFile, DiskFull
        assert issubclass(CorruptFile, api.USER_ERRORS) and issubclass(DiskFull, api.USER_ERRORS)
    finally:
        shell.set_custom_exc((), None)
        InteractiveShell.clear_instance()


def test_papermill_strings_are_read_as_yaml():
    plan = api.plan_from_parameters(workloads='["sleep"]', ns="[10,1000]", samples=5, smoke="true")
    assert plan.workloads == ("sleep",) and plan.ns["sleep"] == (10, 1000) and plan.samples == 5
    plan = api.plan_from_parameters(workloads=["sleep"], params='{"sleep": {"kernel": [article]}}')
    assert plan.params["sleep"]["go"]["kernel"] == ("article",)


def test_analysis_notebook_writes_every_export(built, tmp_path):
    from bench_src.run import runner
    from bench_src.plan import make_plan

    out = tmp_path / "results"
    plan = make_plan("quick", workloads=["sleep", "cpu_loops"], ns={"sleep": [10, 100], "cpu_loops": [100, 300]},
                     samples=6, smoke=True, warmup=0, params={"sleep": {"work": 1000}, "cpu_loops": {"inner": 1000}})
    runner.run(plan, out, progress=False, log=lambda *_: None)
    pm.execute_notebook(str(paths.ROOT / "notebooks" / "analysis.ipynb"), str(out / "analysis.ipynb"),
                        parameters={"results_dir": str(out)}, cwd=str(paths.ROOT), kernel_name="python3",
                        progress_bar=False)
    executed = json.loads((out / "analysis.ipynb").read_text())
    heading, source, _ = first_section_after(executed["cells"], "refuse_unknown_parameters")
    assert heading.startswith("## Findings") and source == "nb.findings(rep)"
    last = executed["cells"][-1]  # the several-hosts section, one line with one directory
    assert "".join(last["source"]) == "nb.hosts_section(hosts)"
    assert ["".join(o["data"]["text/plain"]) for o in last["outputs"]] == [nb_module.ONE]
    exp = out / "export"
    for name in ("elapsed_s_vs_n", "ratio_elapsed_s_vs_n", "verdicts_elapsed_s", "peak_rss_mib_vs_n",
                 "per_task_elapsed_s", "distribution_sleep"):
        for ext in ("svg", "png", "pdf"):
            assert (exp / "figures" / f"{name}.{ext}").stat().st_size > 1000, (name, ext)
    for name in ("summary_elapsed_s", "go_vs_rust_elapsed_s", "go_vs_rust_peak_rss_mib", "per_task_elapsed_s",
                 "drift_elapsed_s", "checksums"):
        assert (exp / "tables" / f"{name}.csv").exists() and (exp / "tables" / f"{name}.md").exists()
    import pandas as pd
    assert len(pd.read_parquet(exp / "samples.parquet")) == len(pd.read_csv(exp / "samples.csv")) == 2 * 2 * 2 * 6
    go = (exp / "benchstat" / "go.txt").read_text().splitlines()
    assert "pair: go waitgroup vs rust join-handles" in go and not any(ln.startswith("lang:") for ln in go)
    bench = [ln for ln in go if ln.startswith("Benchmark")]
    assert any(ln.startswith("BenchmarkSleep/n=10/kernel=xorshift/work=1000 1 ") for ln in bench)
    assert bench and all(" ns/op " in ln for ln in bench)
    # a line carries its peak RSS exactly when its sample counts for memory (a 1 ms sleep can end
    # before the last task starts, and then its peak is left out, as the memory tables leave it out)
    samples = pd.read_csv(exp / "samples.csv")
    valid = samples[samples["valid"] & (samples["lang"] == "go")]
    assert sum(" peak-RSS-B/op" in ln for ln in bench) == int(valid["counts_for_memory"].sum()) > 0
    assert len(bench) == len(valid)
    from bench_src.report.export import html
    assert html.external_references((exp / "report.html").read_text()) == []
    assert not (exp / "notebooks").exists()  # the analysis notebook renders no half-executed snapshot of itself
    assert "Benjamini-Hochberg" in (exp / "method.md").read_text()
    table = pd.read_csv(exp / "tables" / "go_vs_rust_elapsed_s.csv")
    assert {"ratio", "ratio_ci_low", "ratio_ci_high", "p_adjusted", "cliffs_delta", "verdict"} <= set(table.columns)
    svg = (exp / "figures" / "elapsed_s_vs_n.svg").read_text()
    # the unit is on the ticks (text as outlines; matplotlib keeps each string as a comment)
    assert "<!-- median workload time -->" in svg and "<!-- N (concurrent tasks) -->" in svg
    assert re.search(r"<!-- \d+ [mµ]?s -->", svg)


def test_memory_notebook_reports_bytes_per_task_timelines_and_rates(built, tmp_path):
    from bench_src.store.timelines import timelines
    from bench_src.run import runner
    from bench_src.plan import make_plan

    out = tmp_path / "results"
    # six samples: the per-task interval is read off the blocks that hold every N and needs six of
    # them (scaling.per_task_cost); the tasks wait for their release, so all N are alive at once
    # however loaded the machine is
    plan = make_plan("memory", ns={"idle_tasks": [1000, 3000, 10000], "threads_vs_tasks": [200], "ping_pong": [2000]},
                     samples=6, smoke=True, warmup=0,
                     variants={"idle_tasks": {"go": "all", "rust": ["spawn", "join-all"]}},
                     params={"idle_tasks": {"wait": "release", "linger_ms": 300},
                             "threads_vs_tasks": {"iterations": 2},
                             "ping_pong": {"buffer": {"go": [0, 1], "rust": [1]}, "mode": ["lockstep", "pipelined"]}})
    runner.run(plan, out, progress=False, log=lambda *_: None)
    pm.execute_notebook(str(paths.ROOT / "notebooks" / "memory.ipynb"), str(out / "memory.ipynb"),
                        parameters={"results_dir": str(out)}, cwd=str(paths.ROOT), kernel_name="python3",
                        progress_bar=False)
    figs = out / "export" / "figures"
    for name in ("idle_tasks_peak_rss_vs_n", "idle_tasks_bytes_per_task", "idle_tasks_rss_timeline",
                 "threads_vs_tasks", "ping_pong_rates"):
        assert (figs / f"{name}.svg").stat().st_size > 1000, name
    import pandas as pd
    costs = pd.read_csv(out / "export" / "tables" / "idle_tasks_bytes_per_task.csv")
    assert set(zip(costs["lang"], costs["variant"])) == {("go", "goroutine"), ("rust", "spawn"), ("rust", "join-all")}
    assert (costs["per_task"] > 0).all()
    assert (costs["per_task_ci_low"] <= costs["per_task"]).all() and (costs["per_task"] <= costs["per_task_ci_high"]).all()
    tl = timelines(out)
    assert not tl.empty and (tl["rss_mib"] > 0).all()
    # the phases are on the timeline's clock: the points span the linger after the tasks finished
    for _, g in tl.groupby("sample_id"):
        assert g["t_s"].max() * 1e9 >= g["finished_ns"].iloc[0]
    rates = pd.read_csv(out / "export" / "tables" / "ping_pong_rates.csv")
    assert len(rates) == 2 * 2 + 2 * 2  # go: buffers 0 and 1 x 2 modes; rust: 2 flavours x buffer 1 x 2 modes
    assert (rates["round_trips_per_s"] > 0).all()
    tvt = pd.read_csv(out / "export" / "tables" / "threads_vs_tasks.csv")
    assert set(tvt["metric"]) == {"wall_s", "cpu_s", "user_s", "sys_s", "peak_rss_mib", "context_switches"}
    assert set(tvt["variant"]) == {"goroutine", "thread", "thread-pinned", "tokio"}


def test_the_analysis_notebook_refuses_an_unknown_parameter_and_a_missing_directory(tmp_path):
    nb = str(paths.ROOT / "notebooks" / "analysis.ipynb")
    with pytest.raises(pm.PapermillExecutionError, match="unknown parameter 'render_html'"):
        pm.execute_notebook(nb, str(tmp_path / "a.ipynb"), parameters={"results_dir": str(tmp_path / "x"),
                            "render_html": False}, cwd=str(paths.ROOT), kernel_name="python3", progress_bar=False)
    with pytest.raises(pm.PapermillExecutionError, match="does not exist"):
        pm.execute_notebook(nb, str(tmp_path / "b.ipynb"), parameters={"results_dir": str(tmp_path / "nosuch")},
                            cwd=str(paths.ROOT), kernel_name="python3", progress_bar=False)
    assert not (tmp_path / "nosuch").exists()


def test_an_injected_parameter_the_notebook_does_not_declare_is_refused():
    import json as json_module

    namespace = {"In": [], "Out": {}, "get_ipython": print, "json_module": json_module, "_": 1,
                 "profile": "quick", "samples": 5}
    api.refuse_unknown_parameters(namespace, ["profile", "samples"])
    namespace["sample"] = 3
    with pytest.raises(ValueError, match=r"unknown parameter 'sample'; allowed: profile, samples"):
        api.refuse_unknown_parameters(namespace, ["profile", "samples"])


@pytest.mark.parametrize("notebook", ["analysis", "memory", "reproduce_article"])
def test_a_missing_results_directory_reads_as_one_line_in_every_analysis_notebook(tmp_path, notebook):
    missing = tmp_path / "nosuch"
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(paths.ROOT / "notebooks" / f"{notebook}.ipynb"), str(tmp_path / "out.ipynb"),
                            parameters={"results_dir": str(missing)}, cwd=str(paths.ROOT), kernel_name="python3",
                            progress_bar=False)
    assert err.value.traceback == [f"error: results directory {str(missing)!r} does not exist; run notebooks/run.ipynb "
                                   "or `python -m bench_src run` first, or pass the directory of a run"]
    assert not missing.exists()


@pytest.mark.slow
@pytest.mark.parametrize("signum", ["INT"])  # SIGTERM takes the same path (test_kernel_engine.py forwards it)
def test_ctrl_c_or_sigterm_to_papermill_ends_the_run_cleanly_and_stops_the_notebook(built, tmp_path, signum):
    """The kernel runs in a session of its own, so Ctrl-C and SIGTERM reached papermill alone, which
    died of them: the kernel was torn down mid-cell ("Kernel died", ZMQ errors), the session never
    recorded its end, and with SIGINT the notebook went on to report on part of a run.  The bench
    engine passes them on to the kernel: the run ends as interrupted, its cell fails with the one
    line, and papermill stops there."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "r"
    command = [sys.executable, "-m", "papermill", str(paths.ROOT / "notebooks" / "run.ipynb"),
               str(tmp_path / "out.ipynb"), "--engine", "bench", "--stderr-file", "-", "-p", "workloads", "[sleep]",
               "-p", "ns", "[10, 1000]", "-p", "samples", "10", "-p", "results_dir", str(out)]
    proc = subprocess.Popen(command, cwd=str(paths.ROOT), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    samples = out / "samples.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (samples.exists() and len(samples.read_text().splitlines()) >= 20):
        time.sleep(0.2)
    proc.send_signal(getattr(signal, f"SIG{signum}"))
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode != 0, output[-2000:]
    assert (f"error: interrupted (SIG{signum}): every sample taken so far is stored in {out}; run the same plan "
            "again to resume") in output, output[-3000:]
    assert "Kernel died" not in output and "ZMQError" not in output and "DeadKernelError" not in output
    session = json.loads((out / "meta.json").read_text())["sessions"][-1]
    taken = len(samples.read_text().splitlines())
    assert session["ended"] == f"SIG{signum}" and session["taken"] == taken and 20 <= taken < 88
    executed = json.loads((tmp_path / "out.ipynb").read_text())
    report_cell = next(c for c in executed["cells"] if "nb.report(out_dir)" in "".join(c.get("source", "")))
    assert report_cell["execution_count"] is None, "the notebook stopped at the run cell"

