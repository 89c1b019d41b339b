"""The whole report of a results directory: refused before writing anything when the directory is
missing or not a results directory; a run without a valid sample says so; the HTML report is
self-contained and holds every figure and table; only notebooks that ran to the end are rendered."""
import base64
import json
import re

import numpy as np
import pandas as pd
import pytest

import report_data
from bench_src.report import full
from bench_src.report.export import html, notebooks


@pytest.fixture
def report(synthetic_report):
    return synthetic_report


def skip_figures(monkeypatch) -> None:
    """The report's analysis, tables and pages without its figures, for a test that reads none of
    them (drawing them is most of a report's time): make_figures leaves the report as analysed."""
    monkeypatch.setattr(full, "make_figures", lambda rep: rep)


@pytest.fixture
def without_figures(monkeypatch):
    skip_figures(monkeypatch)


def test_a_missing_or_empty_directory_is_refused_before_anything_is_written(tmp_path):
    missing = tmp_path / "nosuch"
    with pytest.raises(FileNotFoundError, match=r"results directory '.*nosuch' does not exist"):
        full.full_report(missing)
    assert not missing.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="is not a results directory: it is empty"):
        full.full_report(empty)
    assert list(empty.iterdir()) == []
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    with pytest.raises(FileNotFoundError, match="has no meta.json"):
        full.full_report(other)
    assert [p.name for p in other.iterdir()] == ["notes.txt"]
    odd = tmp_path / "odd"
    (odd / "meta.json").mkdir(parents=True)  # `check` names it so; the report said "has no meta.json"
    with pytest.raises(FileNotFoundError, match="is not a results directory: it has a directory named meta.json, not "
                                                "the run's record"):
        full.full_report(odd)


def test_a_run_without_samples_says_so_instead_of_a_method_paragraph(tmp_path):
    d = report_data.write_results_dir(tmp_path / "run")  # meta.json, no samples.jsonl
    rep = full.full_report(d)
    method = (d / "export" / "method.md").read_text()
    assert "No sample has been taken in this run yet" in method and "0 samples entered" not in method
    assert rep.empty and rep.figures == {}
    assert html.external_references((d / "export" / "report.html").read_text()) == []


def test_a_run_whose_samples_all_failed_reports_the_failures(tmp_path):
    cells = [c for c in report_data.CELLS if c[0] == "sqlite"]
    recs = report_data.records(samples=3, cells=cells, failing=(("sqlite", "go", "pool", 100),
                                                                ("sqlite", "rust", "pool", 100)))
    d = report_data.write_results_dir(tmp_path / "run", recs, report_data.meta(samples=3, cells=cells))
    rep = full.full_report(d)
    method = (d / "export" / "method.md").read_text()
    assert "No sample of this run entered the analysis: 8 samples were taken (6 measured)" in method
    assert "failed: 8" in method and "Benjamini" not in method
    assert set(rep.tables) == {"status", "failures", "checksums"}
    page = (d / "export" / "report.html").read_text()
    assert "exit 2: unknown param | see usage" in page and html.external_references(page) == []


@pytest.mark.slow
def test_every_table_and_figure_is_exported(report):
    exp = report.export_dir
    for name in report.tables:
        assert (exp / "tables" / f"{name}.csv").exists() and (exp / "tables" / f"{name}.md").exists()
    assert {"go_vs_rust_elapsed_s", "go_vs_rust_peak_rss_mib", "summary_elapsed_s", "per_task_elapsed_s",
            "variants_elapsed_s", "drift_elapsed_s", "status", "failures", "checksums"} <= set(report.tables)
    assert {"verdicts_elapsed_s", "ratio_elapsed_s_vs_n", "elapsed_s_vs_n", "per_task_elapsed_s",
            "distribution_sleep"} <= set(report.figures)
    for name, paths in report.figures.items():
        assert [p.suffix for p in paths] == [".svg", ".png", ".pdf"] and all(p.parent == exp / "figures" for p in paths)
    # the distributions in name order, as every other section (not the run's random order)
    shown = [name for name in report.figures if name.startswith("distribution_")]
    assert len(shown) > 1 and shown == sorted(shown), shown
    assert not (report.results_dir / "figures").exists()  # one place for figures: export/figures/
    for name in ("go.txt", "rust.txt", "all.txt"):
        assert (exp / "benchstat" / name).stat().st_size > 1000
    assert (exp / "samples.parquet").exists() and (exp / "samples.csv").exists()
    method = (exp / "method.md").read_text()
    assert "Test CPU" in method and "Benjamini-Hochberg" in method and "measured samples were excluded (failed: 10)" in method
    for heading in ("Design", "Measurement", "Tests", "Multiplicity", "Stopping", "What was excluded"):
        assert f"\n## {heading}\n" in method, heading  # one level below "# Method"


@pytest.mark.slow
def test_the_html_report_is_self_contained_and_holds_every_figure_and_table(report):
    page = (report.export_dir / "report.html").read_text()
    assert html.external_references(page) == []
    import html as html_text
    titled = 0
    for name in report.figures:
        said = html_text.escape(report.figure_titles.get(name) or name)
        m = f"<figure id='fig-{name}'><img alt='{said}' src='data:image/svg+xml;base64,"
        assert m in page, name
        # captioned with the figure's own title, not its file name
        assert f"<figcaption>{said} (export/figures/{name}.svg, .png, .pdf)</figcaption>" in page, name
        titled += name in report.figure_titles
    assert titled == len(report.figures), sorted(set(report.figures) - set(report.figure_titles))
    for name in report.tables:
        assert f"id='table-{name}'" in page, name
    # every embedded SVG is a whole figure and refers to nothing outside itself
    uris = page.split("src='data:image/svg+xml;base64,")[1:]
    assert len(uris) == len(report.figures)
    for uri in uris:
        svg = base64.b64decode(uri.split("'", 1)[0]).decode()
        assert svg.lstrip().startswith("<?xml") and svg.rstrip().endswith("</svg>")
    # the status table shows every cell, the failure with its reason, and the Method text
    assert page.count("<tr") >= report.df["cell_id"].nunique()
    assert "exit 2: unknown param | see usage" in page and "All measurements were taken on Test CPU" in page


@pytest.mark.parametrize("snippet", [
    "<img src='http://example.org/x.png'>", "<link rel='stylesheet' href='style.css'>",
    "<script src='https://cdn.example.org/x.js'></script>", "<style>@import url(fonts.css);</style>",
    "<div style=\"background: url('https://example.org/a.png')\"></div>",
    "<img src='data:image/svg+xml;base64," + base64.b64encode(
        b"<svg xmlns='http://www.w3.org/2000/svg'><image href='http://example.org/a.png'/></svg>").decode() + "'>",
])
def test_the_self_containment_check_finds_external_references(snippet):
    assert html.external_references(f"<html><body>{snippet}</body></html>") != []


def test_only_notebooks_that_ran_to_the_end_are_rendered(tmp_path):
    def nb(statuses, exception=None, end=True):
        return {"metadata": {"papermill": {"exception": exception, "end_time": "t" if end else None}},
                "cells": [{"cell_type": "code", "metadata": {"papermill": {"status": s}}, "outputs": [],
                           "execution_count": 1, "source": ""} for s in statuses]}

    assert notebooks.incomplete_reason(nb(["completed", "completed"])) is None
    assert notebooks.incomplete_reason(nb(["completed", "running", "pending"])) == "code cell 2 of 3 is running"
    assert notebooks.incomplete_reason(nb(["completed", "failed"], exception=True)) == "execution stopped on an error"
    assert notebooks.incomplete_reason(nb(["completed"], end=False)) == "papermill has not finished it"
    (tmp_path / "half.ipynb").write_text(json.dumps({**nb(["completed", "pending"]), "nbformat": 4,
                                                     "nbformat_minor": 5}))
    said = []
    assert notebooks.render(tmp_path, log=said.append) == []
    assert said == ["not rendered: half.ipynb: code cell 2 of 2 is pending"]
    assert not (tmp_path / "export").exists()


@pytest.mark.slow
def test_the_method_describes_each_family_once_and_every_table_reads_as_a_table(report):
    import re

    from bench_src.report import tables

    method = (report.export_dir / "method.md").read_text()
    # a file of its own: '# Method', its subsections one level below, no level skipped
    levels = [len(line) - len(line.lstrip("#")) for line in method.splitlines() if line.startswith("#")]
    assert levels[0] == 1 and set(levels[1:]) == {2}, levels
    # the Multiplicity's table: one row per family and metric
    described = re.findall(r"^\| ([A-Za-z, ]+?) +\| (elapsed_s|peak_rss_mib|cpu_s) +\| \d+ ", method, re.M)
    assert described and len(described) == len(set(described)), described
    # every table has a reading form of its own: no raw column names such as p_holm or go_median
    for name, table in report.tables.items():
        text = tables.readable(table, name).to_markdown()
        for raw in ("p_adjusted", "go_median", "ratio_ci_low", "depends_on_variant", "go_above_mib", "ref_variant"):
            assert raw not in text, (name, raw)
    # the Go vs Rust table says per row whether its verdict holds across the variants run
    assert "robustness" in report.tables["go_vs_rust_elapsed_s"]
    assert "across variants" in tables.readable(report.tables["go_vs_rust_elapsed_s"], "go_vs_rust_elapsed_s").to_markdown()


def test_the_methods_stopping_and_multiplicity_say_what_the_rule_does():
    from bench_src.analysis import rules
    from bench_src.report import method

    meta = {"plan": {"samples": 6, "max_samples": 600, "time_budget_s": 3600}}
    text = method.stopping(meta, {"looks": [6, 9, 14], "family_sizes": {"go_vs_rust": 30}})
    assert "still inconclusive, could already have shown a difference of 5%" in text and "\"precise\"" in text
    assert "minimum detectable effect is read off its last look's own interval" in text
    assert "below the signed-rank test's floor, off that interval's longer side about the estimate" in text
    assert "where they have no point in common, the shortest interval meeting each" in text
    assert rules.PRECISION_TARGET == 0.05
    import report_data
    from bench_src.analysis import compare
    tables = {"go_vs_rust_elapsed_s": compare.compare(report_data.frame(), "elapsed_s")}
    text = method.multiplicity(tables, 0.02, 0.05)
    assert "at the level 1 - max(R, 1) x 0.05 / m (R differences called" in text
    # equivalence as the verdict decides it: an interval inside the margin that excludes 1 is a difference
    assert "called when that same interval holds 1 and lies inside the margin" in text
    assert "(\"by less than 2%\" where it also lies inside ±2%)" in text
    # the inconclusive rows' MDEs as the tables print them: a factor from 1.5 on, never "±190%"
    t = tables["go_vs_rust_elapsed_s"].copy()
    open_row = t.index[t["verdict_kind"] == "inconclusive"][0]
    t.loc[open_row, "mde"] = 1.892856
    text = method.multiplicity({"go_vs_rust_elapsed_s": t}, 0.02, 0.05)
    assert "| ×/÷ 2.89 " in text, text
    t.loc[t.index[0], ["verdict_kind", "mde"]] = ["inconclusive", 0.04]
    text = method.multiplicity({"go_vs_rust_elapsed_s": t}, 0.02, 0.05)
    assert "| ±4.0% to ×/÷ 2.89 " in text and "inconclusive rows' MDE" in text
    assert "Families of their own" not in text
    # the cores' and the hosts' tables are families of their own: named, and not counted as the run's
    own = {**tables, "speedup_elapsed_s": pd.DataFrame({"family": ["go_vs_rust"], "speedup": [1.9]}),
           "ratio_vs_cores_elapsed_s": tables["go_vs_rust_elapsed_s"].assign(cores=2)}
    text = method.multiplicity(own, 0.02, 0.05)
    assert "each program's speed-up with more cores" in text and "from the fewest cores" in text
    assert "tested as a fixed design" in text and "across hosts" not in text
    assert text.count("| " + tables["go_vs_rust_elapsed_s"]["family_title"].iloc[0] + " ") == 1, "one row"


# --- a full disk while the exports are written ----------------------------------------------------------
def _small_run(tmp_path):
    from test_store_runner import fake_measure, small_plan
    from bench_src.run import runner
    out = tmp_path / "r"
    runner.run(small_plan(), out, measure_fn=fake_measure(), progress=False, log=lambda *_: None)
    return out


def _half_then_enospc(real, target):
    """`real` (a method of a Path, or one taking the path as its first argument after self) writes
    a part of its file, then fails as a full disk does, when it writes a file named `target`."""
    import errno
    import os
    from pathlib import Path

    def write(self, first, *args, **kwargs):
        path = self if isinstance(self, Path) else Path(first)
        if path.name != target:
            return real(self, first, *args, **kwargs)
        with open(path, "wb") as f:
            f.write(b"a part of a file")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return write


@pytest.mark.parametrize("writer, target, where", [
    ("savefig", "elapsed_s_vs_n.svg", "figures"),
    ("to_csv", "status.csv", "tables"),
    ("to_parquet", "samples.parquet", ""),
    ("write_text", "report.html", ""),
    ("write_text", "method.md", ""),
])
def test_a_full_disk_while_exporting_is_one_line_naming_the_file_and_leaves_no_part_of_it(
        tmp_path, monkeypatch, capsys, writer, target, where):
    from pathlib import Path

    import matplotlib.figure
    import pandas as pd

    from bench_src.__main__ import main
    from bench_src.store import DiskFull
    out = _small_run(tmp_path)
    if writer != "savefig":
        skip_figures(monkeypatch)
    owner = {"savefig": matplotlib.figure.Figure, "to_csv": pd.DataFrame, "to_parquet": pd.DataFrame,
             "write_text": Path}[writer]
    monkeypatch.setattr(owner, writer, _half_then_enospc(getattr(owner, writer), target))
    where = out / "export" / where if where else out / "export"
    expected = (f"error: the disk is full: no space left on the device holding {where} (writing {target}); the "
                f"part of {target} written was removed, the samples are untouched; free some space, then run the "
                "same command again")
    assert main(["report", str(out)]) == 2
    assert capsys.readouterr().err == expected + "\n"
    assert not (where / target).exists()
    if target == "report.html":  # the notebooks' call, once (the same error the command printed for every file)
        with pytest.raises(DiskFull) as err:  # one line through api.USER_ERRORS
            full.full_report(out)
        assert f"error: {err.value}" == expected and not (where / target).exists()


def _executed_notebook(text):
    """A notebook as papermill leaves one that ran to the end: one code cell that printed `text`."""
    import nbformat
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('x')", execution_count=1,
                                     outputs=[nbformat.v4.new_output("stream", name="stdout", text=text)])
    cell.metadata["papermill"] = {"status": "completed"}
    nb.cells = [cell]
    nb.metadata["papermill"] = {"exception": None, "end_time": "2026-01-01T00:00:00"}
    return nbformat.writes(nb)


def test_an_executed_notebook_is_rendered_as_html_and_a_full_disk_there_is_one_line(tmp_path, monkeypatch,
                                                                                    without_figures):
    from pathlib import Path

    from bench_src.store import DiskFull
    out = _small_run(tmp_path)
    (out / "run.ipynb").write_text(_executed_notebook("the answer is 42\n"))
    assert notebooks.render(out) == [out / "export" / "notebooks" / "run.html"]
    assert "the answer is 42" in (out / "export" / "notebooks" / "run.html").read_text()
    (out / "export" / "notebooks" / "run.html").unlink()
    monkeypatch.setattr(Path, "write_text", _half_then_enospc(Path.write_text, "run.html"))
    with pytest.raises(DiskFull) as err:  # as the notebooks call it (api.report renders them)
        full.full_report(out, render_html=True)
    where = out / "export" / "notebooks"
    assert str(err.value) == (f"the disk is full: no space left on the device holding {where} (writing run.html); "
                              "the part of run.html written was removed, the samples are untouched; free some "
                              "space, then run the same command again")
    assert not (where / "run.html").exists()


@pytest.mark.slow
def test_a_real_full_disk_while_exporting_is_one_line(tmp_path):
    import os
    import shutil
    import subprocess
    import sys
    import tmpfs
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the test above injects ENOSPC instead")
    run = _small_run(tmp_path)
    with tmpfs.mounted(tmp_path / "disk", "2m", "the test above injects ENOSPC instead") as disk:
        out = disk / "r"
        shutil.copytree(run, out)
        free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
        (disk / "filler").write_bytes(b"\0" * (free - 64 * 1024))  # room for a few tables, not for the figures
        proc = subprocess.run([sys.executable, "-m", "bench_src", "report", str(out)], capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        line = proc.stderr.strip()
        assert "\n" not in line and line.startswith("error: the disk is full: no space left on the device holding "
                                                    f"{out / 'export'}"), line
        written = line.split(" (writing ")[1].split(")")[0]
        assert line.endswith("free some space, then run the same command again")
        assert not any(p.name == written for p in (out / "export").rglob("*"))
        assert [p for p in (out / "export").rglob("*") if p.is_file() and p.stat().st_size == 0] == []


def test_the_method_counts_the_cells_whose_values_tie_per_metric():
    # Each metric's summary describes the same cells: the cells whose values tie are counted per
    # metric, not summed over the metrics as if they were cells of their own (an article run's
    # "at least that for the 55 cells whose values tie" was 2 + 44 + 9 of its 163 cells)
    import pandas as pd

    from bench_src.report import method

    def summary(metric, tied):
        return pd.DataFrame({"metric": metric, "samples": 6, "ci_coverage": 0.96875,
                             "ci_coverage_kind": ["at least"] * tied + ["exact"] * (10 - tied)})

    text = method.tests({"summary_elapsed_s": summary("elapsed_s", 1), "summary_peak_rss_mib": summary("peak_rss_mib", 7),
                         "summary_cpu_s": summary("cpu_s", 0)})
    assert "at least that where values tie: 1 of the 10 cells in workload time, 7 in peak RSS" in text, text
    assert "8 cells" not in text
    one = method.tests({"summary_elapsed_s": summary("elapsed_s", 3)})
    assert "at least that where values tie: 3 of the 10 cells in workload time)" in one, one


def test_the_method_counts_each_metrics_cells_from_its_own_table():
    # An article run's Method said "2 of the 163 cells in workload time, 67 in peak RSS" where the
    # peak-RSS table held 162 (one cell had no sample that counts for memory): each metric's count
    # is its own table's, and where they differ, or differ from the cells run, the Method says why
    import pandas as pd

    from bench_src.report import method

    def summary(metric, cells, tied):
        return pd.DataFrame({"metric": metric, "samples": 6, "ci_coverage": 0.96875,
                             "ci_coverage_kind": ["at least"] * tied + ["exact"] * (cells - tied)})

    tables = {"summary_elapsed_s": summary("elapsed_s", 163, 2), "summary_peak_rss_mib": summary("peak_rss_mib", 162, 67),
              "summary_cpu_s": summary("cpu_s", 163, 9)}
    text = method.tests(tables, run_cells=164)
    assert "2 of the 163 cells in workload time, 67 of the 162 in peak RSS, 9 of the 163 in CPU time" in text, text
    assert ("the tables hold 163 cells of workload time and CPU time and 162 of peak RSS, of the 164 cells run (1 has "
            "no valid sample: every sample failed or was excluded; 1 more, in peak RSS, has none that counts for "
            "memory: What was excluded says which)") in text, text
    # one count where every table holds every cell run
    same = method.tests({"summary_elapsed_s": summary("elapsed_s", 10, 1), "summary_cpu_s": summary("cpu_s", 10, 0)},
                        run_cells=10)
    assert "each cell had 6 valid samples." in same and "the tables hold" not in same, same


def test_the_method_names_what_the_ratio_estimates():
    import report_data
    from bench_src.analysis import compare
    from bench_src.report import method

    text = method.tests({"go_vs_rust_elapsed_s": compare.compare(report_data.frame(), "elapsed_s")})
    assert ("The reported ratio is exp of the estimate: the centre of the per-block ratios (Hodges-Lehmann; their "
            "geometric mean where Student's t alone decides), not the ratio of the two cells' medians") in text, text
    assert '"no difference" means per-block log ratios symmetric about 0, which equal medians alone do not make' in text


def test_the_method_names_what_a_cell_is_its_core_counts_and_the_power_of_its_mde(monkeypatch):
    import report_data
    from bench_src.analysis import compare, rules
    from bench_src.report import method

    df = report_data.frame()
    meta = {"plan": {"samples": 10, "warmup": 1, "workloads": ["sleep"], "seed": 1, "threads": 2,
                     "cores": {"sleep": [1, 2]}},
            "sessions": [{"machine": {"logical_cpus": 2, "ram_bytes": 2**34}, "toolchains": {}}]}
    assert "x N x threads x parameters, and the core count and A/A arm" in method.design_text(meta, df)
    assert "warm-up sample, discarded;" in method.design_text(meta, df)
    # on a cluster every host takes the warm-ups itself, and the Method says so
    clustered = {**meta, "sessions": [{**meta["sessions"][0], "engine": "cluster local:2"}]}
    assert "warm-up sample, discarded on each host (every host" in method.design_text(clustered, df)
    assert "cells with a core count (sleep at 1, 2) ran pinned to that many CPUs" in method.measurement(meta)
    # CPU time's split into user and system time is a sample on a tick-accounting kernel, and the
    # programs' environment says what was taken out of it (nothing said for a run that recorded neither)
    assert "split" not in method.measurement(meta).split("never from polling", 1)[1][:3]
    ticked = {**meta, "sessions": [{**meta["sessions"][0], "machine": {
        "logical_cpus": 2, "ram_bytes": 2**34, "cpu_accounting": "tick", "runtime_variables_removed": ["MALLOC_ARENA_MAX"]}}]}
    text = method.measurement(ticked)
    assert ("; this kernel splits CPU time into user and system time by what the timer tick finds, so that split "
            "is a sample (coarse for a run of a few ticks) while its sum is exact.") in text
    assert "of those, MALLOC_ARENA_MAX was set and taken out." in text
    monkeypatch.setattr(rules, "POWER", 0.9)
    tables = {"go_vs_rust_elapsed_s": compare.compare(df, "elapsed_s")}
    text = method.multiplicity(tables, 0.02, 0.05)
    assert "the difference it would call with 90% power at the spread measured and the farther end of its interval" in text
    # what the simulation measured averaged over the spread's uncertainty, from its one owner
    assert "the power averaged over it is lower: 59-86% at 6 to 20 pairs in the package's simulation" in text


def test_the_method_describes_the_sessions_that_sampled_not_a_re_analysis():
    """Opening a finished run again to re-analyse it records a session that takes nothing, starts no
    server and may run elsewhere: the Method still says one session, with the servers and machine
    of the session that took the samples."""
    import report_data
    from bench_src.report import method

    df = report_data.frame()
    took = {"taken": 572, "machine": {"cpu_model": "CPU A", "logical_cpus": 2, "ram_bytes": 2**34},
            "toolchains": {"go": "go1.26"},
            "context": {"mysql": {"kind": "mysql", "version": "10.11.19-MariaDB"}, "restarts": []}}
    again = {"taken": 0, "machine": {"cpu_model": "CPU B", "logical_cpus": 2, "ram_bytes": 2**34},
             "toolchains": {"go": "go1.26"}, "context": {}}
    meta = {"plan": {"samples": 10, "warmup": 1, "workloads": ["sleep", "mysql"], "seed": 1},
            "sessions": [took, again]}
    assert "sessions" not in method.design_text(meta, df)
    text = method.measurement(meta)
    # the server by the product its version names, not by the workload's name alone
    assert "on CPU A with 2" in text and ("database servers: MariaDB 10.11.19-MariaDB, the mysql workload's "
                                          "server") in text, text
    # two sessions that sampled are both counted, and the servers of each are named once
    resumed = {**meta, "sessions": [took, {**took, "taken": 3}, again]}
    assert "the run took 2 sessions" in method.design_text(resumed, df)
    assert method.measurement(resumed).count("MariaDB 10.11.19-MariaDB") == 1


def test_the_design_counts_a_cell_whose_every_sample_failed():
    """The Design's samples per cell are those of every cell run: a cell whose every sample failed
    received its samples and has none in the analysis, which the range says."""
    import report_data
    from bench_src.report import method

    df = report_data.frame(failing=(("sqlite", "rust", "pool", 100),))
    meta = {"plan": {"samples": 10, "warmup": 1, "workloads": ["sleep", "sqlite"], "seed": 1}}
    text = method.design_text(meta, df)
    assert "each cell received 10 measured samples (between 0 and 10 entered the analysis per cell; none in 1 " \
           "cell, every sample of which failed or was excluded)" in text, text
    whole = method.design_text(meta, report_data.frame())
    assert "each cell received 10 measured samples." in whole and "entered the analysis" not in whole, whole


def test_what_was_excluded_names_the_idle_samples_that_count_for_time_but_not_for_memory():
    import report_data
    from bench_src.report import method

    sleeping = {"duration_ms": "300", "linger_ms": "0", "wait": "sleep"}
    df = report_data.frame(samples=6, warmup=0, cells=[("idle_tasks", "go", "goroutine", 10000, sleeping, 2, 0.31, 30.0),
                                                       ("idle_tasks", "rust", "spawn", 10000, sleeping, 2, 0.31, 12.0)])
    assert "count for time but not for memory" not in method.excluded(df), "every idle task alive: nothing to say"
    idle = df.index[(df["workload"] == "idle_tasks") & (df["lang"] == "go") & df["valid"]]
    assert len(idle), "the synthetic run has idle_tasks samples"
    df.loc[idle[:2], "alive_at_spawn"] = df.loc[idle[:2], "n"] - 1
    text = method.excluded(df)
    n = df.loc[idle[0], "n"]
    assert "Of the samples that entered, 2 count for time but not for memory: some of their tasks" in text, text
    alive = f"{n - 1:,}"
    assert f"(idle_tasks go N = {n:,}: 2, {alive} alive)." in text, text


def test_what_was_excluded_says_why_sleep_samples_of_an_older_program_count_for_time_only():
    """A sleep sample of a program older than its count of tasks alive is trusted for memory only
    where its last spawn came before its shortest sleep could end (0 ms from N = 255 on): the Method
    says so, not that its tasks had finished, which nothing shows."""
    import report_data
    from bench_src.report import method

    cells = [("sleep", lang, variant, n, {"kernel": "xorshift", "work": "0"}, 2, 0.3, 9.0)
             for lang, variant in (("go", "waitgroup"), ("rust", "join-handles")) for n in (10, 1000)]
    recs = report_data.records(samples=6, warmup=0, cells=cells)
    for r in recs:
        r["extra"] = "{}"  # no alive_at_spawn; spawned_ns 1000 ns: below 42 ms at N = 10, not below 0 ms at 1,000
    df = report_data.mark_valid(report_data.samples_frame(recs))
    text = method.excluded(df)
    # the reason once, then each cell with its count and its figures
    assert ("Of the samples that entered, 12 count for time but not for memory: their programs did not count the "
            "tasks alive at the last spawn (programs older than the count), and their spawning lasted longer than a "
            "task's shortest wait (0 s), so no peak can be shown to hold N tasks (sleep go N = 1,000: 6, last spawn "
            "after 1.00 µs; sleep rust N = 1,000: 6, last spawn after 1.00 µs).") in text, text
    assert "N = 10:" not in text


def test_an_export_directory_that_cannot_be_written_is_one_line(tmp_path, capsys):
    # a file where export/ should be gave a NotADirectoryError traceback
    from bench_src.__main__ import main
    out = _small_run(tmp_path)
    import shutil
    shutil.rmtree(out / "export", ignore_errors=True)
    (out / "export").write_text("x")
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("error: the report cannot write ") and "Not a directory" in err, err
    assert f"make the export directory {out / 'export'}" in err and "the samples are untouched" in err


def test_the_report_of_a_directory_in_use_is_refused_and_a_stale_one_is_rewritten(tmp_path, capsys, without_figures):
    """`report` during a run wrote a report of part of it, kept afterwards: a directory a run holds
    is refused, and a page older than the samples is written again."""
    import os

    from bench_src.__main__ import main
    from bench_src.store.lock import DirLock
    out = _small_run(tmp_path)
    import shutil
    shutil.rmtree(out / "export", ignore_errors=True)
    with DirLock(out / ".lock", "the run"):
        assert main(["report", str(out)]) == 2
        err = capsys.readouterr().err
        assert "is in use by PID" in err and "a report now would be of part of its run" in err
        assert "wait for it to finish" in err and "(lock " in err, "the store's LockedError says it"
    page = out / "export" / "report.html"
    assert main(["report", str(out)]) in (0, 1) and page.exists()
    with DirLock(out / ".lock", "the run"):  # a page as new as the samples is only shown: nothing written
        assert main(["report", str(out)]) in (0, 1)
    old = page.stat().st_mtime - 100
    os.utime(page, (old, old))
    assert main(["report", str(out)]) in (0, 1)
    assert page.stat().st_mtime > old + 50, "a page older than the samples is written again"


def test_a_stale_page_that_cannot_be_rewritten_is_shown_with_a_note(tmp_path, capsys, monkeypatch, without_figures):
    # a read-only copy whose file times make the page look older than its samples was refused
    import os

    from bench_src.__main__ import main
    from bench_src.report import full
    from bench_src.report.export.base import ExportNotWritable
    out = _small_run(tmp_path)
    assert main(["report", str(out)]) in (0, 1)
    page = out / "export" / "report.html"
    old = page.stat().st_mtime - 100
    os.utime(page, (old, old))

    def read_only(*_a, **_k):
        raise ExportNotWritable("the report cannot write x (Read-only file system)")

    monkeypatch.setattr(full, "full_report", read_only)
    capsys.readouterr()
    assert main(["report", str(out)]) in (0, 1)
    assert "is older than the samples, and it is shown as it is" in capsys.readouterr().err
    assert main(["report", str(out), "--rebuild"]) == 2  # asked to rewrite it: the error


@pytest.mark.parametrize("extra, message", [
    (["--width", "-5"], "--width -5: the window's width in pixels, from 100 to 20000"),
    (["--height", "0"], "--height 0: the window's height in pixels"),
    ([], "is a directory; give the path of a PNG file to write"),
])
def test_a_screenshot_s_bad_arguments_are_one_line_before_chromium_starts(tmp_path, capsys, monkeypatch, extra, message):
    # --screenshot /etc said "screenshot: /etc" though nothing was written; --height 0 waited 120 s;
    # a missing directory was created without a word
    from bench_src.__main__ import main
    from bench_src.report.export import html
    out = _small_run(tmp_path)
    monkeypatch.setattr(html, "find_browser", lambda: pytest.fail("must not start Chromium"))
    target = str(tmp_path) if not extra else str(tmp_path / "x.png")
    assert main(["report", str(out), "--screenshot", target, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and message in err, err
    assert main(["report", str(out), "--screenshot", str(tmp_path / "no" / "such" / "x.png")]) == 2
    assert "does not exist; create it first" in capsys.readouterr().err and not (tmp_path / "no").exists()


def test_a_screenshot_without_chromium_is_one_line_before_the_report_is_written(tmp_path, capsys, monkeypatch):
    # `report DIR --screenshot x.png` on a machine without Chromium wrote (or, with --rebuild,
    # rewrote) the whole report first and only then said that no Chromium was found
    from bench_src.__main__ import main
    out = _small_run(tmp_path)

    def no_browser():
        raise html.BrowserError("no Chromium found (looked for chromium); on Debian/Ubuntu: apt-get install -y chromium")

    monkeypatch.setattr(html, "find_browser", no_browser)
    monkeypatch.setattr(full, "full_report", lambda *_a, **_k: pytest.fail("the report must not be written"))
    for extra in ([], ["--rebuild"]):
        capsys.readouterr()
        assert main(["report", str(out), "--screenshot", str(tmp_path / "x.png"), *extra]) == 2
        captured = capsys.readouterr()
        assert captured.err.strip() == "error: no Chromium found (looked for chromium); on Debian/Ubuntu: " \
                                       "apt-get install -y chromium" and captured.out == ""
    assert not html.page_path(out).exists() and not (tmp_path / "x.png").exists()


def test_the_per_task_tables_keep_the_time_of_samples_whose_tasks_were_not_all_alive(tmp_path):
    # every Go sample at N = 10,000 had ten tasks finished before the last was spawned: its time
    # counts (validity.counted), its memory does not, and the memory row says which N it went without
    d = report_data.idle_tasks_run(tmp_path / "run", (1, 1000, 10000))
    rep = full.analyse(d)
    go = {m: rep.tables[f"per_task_{m}"].query("lang == 'go'").iloc[0] for m in ("elapsed_s", "peak_rss_mib")}
    assert go["elapsed_s"]["ns"] == "1,1000,10000" and "N = 10,000" not in go["elapsed_s"]["warning"]
    assert go["peak_rss_mib"]["ns"] == "1,1000"
    assert "no sample with every task alive at N = 10,000: fitted without it" in go["peak_rss_mib"]["warning"]


def test_the_design_names_a_plan_value_no_cell_runs_with_from_the_plans_cells():
    """idle_tasks with wait=release never sleeps, so its cells run with duration_ms 0 whatever the plan
    lists: the Method says so, where the plan record alone reads as if they slept 1000 ms.  Read off
    the plan's cells, not the samples: a value whose cells are not sampled yet (an interrupted run)
    is no unused value."""
    import report_data
    from bench_src.plan import make_plan
    from bench_src.report import method

    plan = make_plan("quick", workloads=["idle_tasks", "sleep"], ns=[10, 100], samples=3, smoke=True,
                     params={"idle_tasks": {"wait": "release", "duration_ms": 1000}, "sleep": {"work": [0, 10]}})
    released = {"duration_ms": "0", "linger_ms": "0", "wait": "release"}
    # a run cut short: sleep's work=0 cells have no sample yet
    df = report_data.frame(samples=6, warmup=0, cells=[("idle_tasks", "go", "goroutine", 100, released, 2, 0.01, 3.0),
                                                       ("idle_tasks", "rust", "spawn", 100, released, 2, 0.01, 2.0),
                                                       ("sleep", "go", "goroutine", 100, {"work": "10"}, 2, 0.3, 5.0)])
    text = method.design_text({"plan": plan.to_dict()}, df)
    assert ("The plan lists parameter values no cell ran with, because the cell's other parameters make them unused "
            "(idle tasks released at once never sleep): idle_tasks duration_ms=1000 (go, rust; its cells run with 0)."
            ) in text, text
    assert "work=0" not in text
    plain = make_plan("quick", workloads=["idle_tasks"], ns=[10, 100], samples=3, smoke=True,
                      params={"idle_tasks": {"wait": "release", "duration_ms": 0}})
    assert "no cell ran with" not in method.design_text({"plan": plain.to_dict()}, df)
    assert method.unused_values({"workloads": "not a plan"}) == []


def test_every_user_error_of_the_report_is_one_line(tmp_path, capsys, monkeypatch):
    """`report` shows the errors the notebooks' calls own (api.USER_ERRORS), a screenshot that
    Chromium could not take and a timeout as one line `error: ...`, exit 2: no traceback."""
    import subprocess

    from bench_src import api
    from bench_src.__main__ import main

    out = _small_run(tmp_path)

    def one_of(cls):
        """An instance of `cls` (or of a subclass) that reads `cls`'s name, whatever its own arguments."""
        return type(cls.__name__, (cls,), {"__init__": lambda self: Exception.__init__(self, f"it was {cls.__name__}"),
                                           "__str__": lambda self: self.args[0]})()

    errors = [one_of(cls) for cls in api.USER_ERRORS] + [one_of(html.BrowserError),
                                                         subprocess.TimeoutExpired(["chromium"], 120)]
    for exc in errors:
        def fail(*_a, exc=exc, **_k):
            raise exc

        monkeypatch.setattr(full, "full_report", fail)
        capsys.readouterr()
        assert main(["report", str(out), "--rebuild"]) == 2, exc
        err = capsys.readouterr().err.strip()
        assert err == f"error: {exc}" and "\n" not in err, err


def test_the_method_counts_the_comparisons_that_could_not_be_tested_apart():
    """A comparison none of whose values count (its cell's samples failed, or for memory none had
    every task alive) has no test and no pairs: the Method's families table counts it under "not
    tested", not as inconclusive with 0 pairs, and its tests used name it (before: "0-10 pairs",
    one more inconclusive, and a test named ": 1")."""
    import report_data
    from bench_src.analysis import compare
    from bench_src.report import method

    df = report_data.frame()
    table = compare.compare(df, "elapsed_s")
    first = table.index[0]
    table.loc[first, ["ratio", "ratio_ci_low", "ratio_ci_high", "mde", "test", "pairs"]] = \
        [np.nan, np.nan, np.nan, np.nan, "", 0]
    table.loc[first, "verdict_kind"] = "inconclusive"
    assert compare.untested(table).tolist() == [True] + [False] * (len(table) - 1)
    text = method.multiplicity({"go_vs_rust_elapsed_s": table}, 0.02, 0.05)
    header = next(line for line in text.splitlines() if line.startswith("| family"))
    row = next(line for line in text.splitlines() if line.startswith("| Go vs Rust"))
    cells = dict(zip([c.strip() for c in header.strip("|").split("|")], [c.strip() for c in row.strip("|").split("|")]))
    assert cells["not tested"] == "1" and not cells["pairs each"].startswith("0"), cells
    kinds = table.drop(index=first)["verdict_kind"]
    assert cells["inconclusive"] == str(int((kinds == "inconclusive").sum())), cells
    tests = method.tests({"go_vs_rust_elapsed_s": table})
    assert "none (not tested): 1" in tests and ", : " not in tests, tests


def test_the_methods_families_table_names_each_level_as_the_tables_and_figures_do():
    """A level of exactly 97% (15 differences among 25 comparisons) read "97%" in the Method and
    "97.0%" in the table's caption, column and the ratio figure's header: one level, one text."""
    import report_data
    from bench_src.analysis import compare
    from bench_src.report import method, tables

    table = compare.compare(report_data.frame(), "elapsed_s")
    table["ci_level"] = 0.97
    text = method.multiplicity({"go_vs_rust_elapsed_s": table}, 0.02, 0.05)
    header = next(line for line in text.splitlines() if line.startswith("| family"))
    row = next(line for line in text.splitlines() if line.startswith("| Go vs Rust"))
    cells = dict(zip([c.strip() for c in header.strip("|").split("|")], [c.strip() for c in row.strip("|").split("|")]))
    assert tables.ci_name(table) == "97.0% CI"
    assert cells["intervals at"] == "97.0%", cells


def test_what_was_excluded_names_the_parameters_where_one_workload_n_ran_several():
    """Sleep ran with work=0 and work=50000 at each N: "sleep go N = 1,000: 12" read as one cell of
    12 samples where each cell had 6; each cell is named by its parameters."""
    import report_data
    from bench_src.report import method

    cells = [("sleep", lang, variant, n, {"kernel": "xorshift", "work": work}, 2, 0.3, 9.0)
             for lang, variant in (("go", "waitgroup"), ("rust", "join-handles")) for n in (10, 1000)
             for work in ("0", "50000")]
    df = report_data.frame(samples=6, warmup=0, cells=cells)
    go = df.index[(df["lang"] == "go") & (df["n"] == 1000) & df["valid"]]
    assert len(go) == 12
    df.loc[go, "alive_at_spawn"] = 990
    text = method.excluded(df)
    assert ("(sleep go N = 1,000 (kernel=xorshift, work=0): 6, 990 alive; sleep go N = 1,000 (kernel=xorshift, "
            "work=50000): 6, 990 alive).") in text, text


def test_the_measurement_keeps_the_threads_off_the_servers_and_the_time_and_load_in_a_paragraph_of_their_own():
    """The threads came after the list of servers, so a quick run read "PostgreSQL 15.18 (...), the
    postgres workload's server, with --threads 2", as if the server ran with them; and when and under
    what load the samples were taken ran on into the machine in one long paragraph."""
    from bench_src.report import method

    session = {"started_at": "2026-01-01T10:00:00+00:00", "finished_at": "2026-01-01T10:03:00+00:00",
               "duration_s": 180.0, "taken": 572,
               "machine": {"cpu_model": "CPU A", "logical_cpus": 2, "ram_bytes": 2**34, "kernel": "6.1"},
               "toolchains": {"go": "go1.26", "rustc": "rustc 1.95"},
               "context": {"postgres": {"kind": "postgres", "version": "15.18"}}}
    meta = {"plan": {"samples": 10, "warmup": 1, "workloads": ["postgres"], "seed": 1, "threads": 2},
            "sessions": [session]}
    when, machine, *_ = method.measurement(meta).split("\n\n")
    assert when.startswith("The samples were taken on 2026-01-01 from 10:00 to 10:03 UTC") and "CPU A" not in when
    assert machine.startswith("All measurements were taken on CPU A")
    assert ", with --threads 2; database servers: PostgreSQL 15.18, the postgres workload's server." \
        in machine, machine


def test_every_table_of_a_metric_or_of_the_other_models_has_a_section_of_its_own(report):
    """The robustness of each metric's verdicts, the peaks above baseline and the other models
    against tasks (OS threads against goroutines and tokio tasks) were left to "Other tables and
    figures"; each now sits in its metric's section, the models in a section of their own."""
    from bench_src.report.export import html

    page = html.render(report)
    sections = dict(re.findall(r"<section id='([\w-]+)'>(.*?)</section>", page, flags=re.S))
    for sid, names in (("time", ("robustness_elapsed_s",)), ("memory", ("robustness_peak_rss_mib",)),
                       ("cpu", ("robustness_cpu_s",)), ("models", [n for n in report.tables if n.startswith("models_")])):
        assert names and all(n in report.tables for n in names), (sid, names)
        assert all(f"id='table-{n}'" in sections.get(sid, "") for n in names), (sid, names)
    assert "other" not in sections, "no table of the synthetic run is left without a section"
    # the peaks above baseline (a run with idle tasks at N = 1) go with the memory comparisons
    import dataclasses
    above = pd.DataFrame([{"workload": "idle_tasks", "n": 1000, "go_variant": "goroutine", "rust_variant": "spawn",
                           "go_median": 12.3, "rust_median": 5.93, "go_baseline_mib": 9.7, "rust_baseline_mib": 5.47}])
    with_above = dataclasses.replace(report, tables={**report.tables, "memory_above_baseline": above})
    sections = dict(re.findall(r"<section id='([\w-]+)'>(.*?)</section>", html.render(with_above), flags=re.S))
    assert "id='table-memory_above_baseline'" in sections["memory"] and "other" not in sections


def test_the_method_says_how_a_block_ordered_its_cells():
    """A run stored before the order was a choice was shuffled, and its Method keeps saying so."""
    from bench_src.report.method import block_order_text
    from bench_src.plan import make_plan
    grouped = make_plan("quick", smoke=True).to_dict()
    shuffled = make_plan("quick", smoke=True, block_order="shuffled").to_dict()
    assert "seconds apart" in block_order_text(grouped) and "left to chance" in block_order_text(grouped)
    assert block_order_text(shuffled) == block_order_text({}) == \
        ", so that the languages were interleaved and slow drift spread over all cells"
