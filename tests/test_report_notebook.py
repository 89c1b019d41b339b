"""What the analysis notebooks call: their parameters checked with types and clear errors, the plan
shown compactly, and tables or figures that a run does not have named instead of failing."""
import pytest

import report_data
from bench_src import api
from bench_src.report import full
from bench_src.report import notebook as nb


@pytest.fixture
def results_dir(tmp_path):
    return report_data.write_results_dir(tmp_path / "run", report_data.records(samples=2, warmup=0))


def test_analysis_parameters_are_checked(results_dir, tmp_path):
    p = nb.analysis_parameters(str(results_dir), "0.05", '["sleep", "cpu_loops"]')
    assert p.results_dir == results_dir and p.margin == 0.05 and p.distribution_workloads == ("sleep", "cpu_loops")
    with pytest.raises(ValueError, match=r"margin='x': expected a number between 0 and 0.5"):
        nb.analysis_parameters(str(results_dir), "x")
    with pytest.raises(ValueError, match=r"margin=0.7"):
        nb.analysis_parameters(str(results_dir), 0.7)
    with pytest.raises(ValueError, match=r"margin=True"):
        nb.analysis_parameters(str(results_dir), True)
    with pytest.raises(ValueError, match=r"distribution_workloads: unknown workload 'nosuch'; allowed: sleep, "):
        nb.analysis_parameters(str(results_dir), 0.02, ["sleep", "nosuch"])
    with pytest.raises(ValueError, match=r"results_dir=5: expected the path of a results directory"):
        nb.analysis_parameters(5)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        nb.analysis_parameters(str(tmp_path / "nosuch"))
    assert not (tmp_path / "nosuch").exists()


def test_reproduce_and_memory_parameters(results_dir):
    assert nb.memory_parameters(str(results_dir)) == results_dir
    assert nb.reproduce_parameters(str(results_dir), 0.02, "go_single_channel").table == "go_single_channel"
    with pytest.raises(ValueError, match="table='final': expected one of the article's tables: go_channel_per_task"):
        nb.reproduce_parameters(str(results_dir), 0.02, "final")


def test_the_plan_shows_one_row_per_series_with_its_n_values():
    plan = api.plan_from_parameters(profile="quick", workloads=["sleep", "cpu_loops"])
    shown = nb.plan(plan)
    assert len(shown.frame) == 6  # sleep: 2 languages x work 0 / 50000; cpu_loops: 2 languages
    sleep = shown.frame[shown.frame["workload"] == "sleep"]
    assert set(sleep["N"]) == {"10, 100, 1k, 10k"}
    assert shown.title == f"{len(plan.cells())} cells"


def test_missing_tables_and_figures_are_named(results_dir):
    rep = full.analyse(results_dir)
    # a table the plan did not ask for says what would make it (an A/A run, two core counts)
    assert nb.table(rep, "aa_elapsed_s").caption == ("aa_elapsed_s: not computed: the run has no A/A arms (a plan "
                                                     "with aa=True runs each program against itself)")
    assert "one core count" in nb.table(rep, "speedup_peak_rss_mib").caption
    assert nb.table(rep, "nosuch").caption == "nosuch: not computed for this run"
    section = nb.figures(rep, "verdicts_elapsed_s")
    assert section.items == ["(verdicts_elapsed_s: no figure for this run)"]  # analyse draws none
    shown = nb.table(rep, "go_vs_rust_elapsed_s")
    assert len(shown.frame) == len(rep.tables["go_vs_rust_elapsed_s"]) > 0


def test_the_analysis_notebook_takes_a_list_of_directories(results_dir, tmp_path):
    other = report_data.write_results_dir(tmp_path / "other", report_data.records(samples=2, warmup=0))
    for given in (f'["{results_dir}", "{other}"]', [str(results_dir), str(other)]):
        p = nb.analysis_parameters(given, factor="commit", hosts_dir=str(tmp_path / "h"))
        assert p.results_dirs == (results_dir, other) and p.several and p.results_dir is None
        assert p.factor == "commit" and p.hosts_dir == tmp_path / "h"
    one = nb.analysis_parameters(f'["{results_dir}"]')
    assert one.results_dir == results_dir and not one.several
    assert nb.analysis(nb.analysis_parameters([str(results_dir), str(other)])) is None
    with pytest.raises(ValueError, match=r"results_dir=\[\]: expected the path of a results directory, a non-empty list"):
        nb.analysis_parameters("[]")
    with pytest.raises(ValueError, match=r"results_dir=\[1, 2\]: expected"):
        nb.analysis_parameters("[1, 2]")
    with pytest.raises(ValueError, match=r"results_dir='\[a,': cannot read it as YAML/JSON"):
        nb.analysis_parameters("[a,")
    with pytest.raises(FileNotFoundError, match="nosuch.*does not exist"):
        nb.analysis_parameters([str(results_dir), str(tmp_path / "nosuch")])
    with pytest.raises(ValueError, match=r"factor='cpu': expected one of plan, commit or None"):
        nb.analysis_parameters([str(results_dir), str(other)], factor="cpu")
    with pytest.raises(ValueError, match=r"factor='commit' names a difference between several results directories"):
        nb.analysis_parameters(str(results_dir), factor="commit")
    for section in (nb.findings(None), nb.figures(None, "x"), nb.method(None)):
        assert section.items == [nb.SEVERAL]
    assert nb.table(None, "status").caption == nb.SEVERAL and nb.manifest(None).caption == nb.SEVERAL
    assert nb.hosts_summary(None).items == [nb.ONE] and nb.hosts_table(None, "combined", "elapsed_s").caption == nb.ONE


@pytest.mark.parametrize("what", ["missing", "empty", "file", "no run under data/results"])
def test_a_path_that_holds_no_run_is_an_error_a_user_can_fix(tmp_path, monkeypatch, what):
    # one of api.USER_ERRORS, so that the notebooks show it as one line, as the command line does
    from bench_src.store import directory as results
    given = {"missing": tmp_path / "nosuch", "empty": tmp_path, "file": tmp_path / "f.txt",
             "no run under data/results": None}[what]
    (tmp_path / "f.txt").write_text("x") if what == "file" else None
    monkeypatch.setattr(results.paths, "RESULTS", tmp_path / "nothing")
    for check in (nb.analysis_parameters, nb.memory_parameters, nb.reproduce_parameters):
        with pytest.raises(api.USER_ERRORS) as err:
            check(None if given is None else str(given))
        assert isinstance(err.value, FileNotFoundError)


def test_a_bad_value_is_named_before_the_results_directory_is_looked_for(tmp_path, monkeypatch):
    # with no run under data/results, a bad margin read "no results under ...; run notebooks/run.ipynb
    # first", which sent a user to run a benchmark to fix a typo
    from bench_src.store import directory as results
    monkeypatch.setattr(results.paths, "RESULTS", tmp_path / "nothing")
    for check, given in ((nb.analysis_parameters, {"margin": "abc"}), (nb.analysis_parameters, {"margin": 0.6}),
                         (nb.analysis_parameters, {"distribution_workloads": "[nope]"}),
                         (nb.analysis_parameters, {"hosts_dir": ""}), (nb.reproduce_parameters, {"margin": "abc"})):
        with pytest.raises(ValueError) as err:
            check(None, **given)
        name = next(iter(given))
        assert name in str(err.value) and "no results under" not in str(err.value), (given, str(err.value))
    with pytest.raises(api.USER_ERRORS, match="no results under"):  # a good value: the directory's own error
        nb.analysis_parameters(None, margin=0.02)


def test_an_empty_string_for_the_results_directory_is_named_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where "." would be a directory without a run
    for check in (nb.analysis_parameters, nb.memory_parameters, nb.reproduce_parameters):
        with pytest.raises(api.USER_ERRORS, match=r"^the results directory given is an empty string ''; "):
            check("")


def test_a_run_of_one_language_says_so_in_the_findings_of_the_notebook_and_the_report(tmp_path):
    go_cells = [c for c in report_data.CELLS if c[1] == "go"]
    d = report_data.write_results_dir(tmp_path / "go-only", report_data.records(samples=6, cells=go_cells),
                                      report_data.meta(samples=6, cells=go_cells))
    rep = nb.analysis(nb.analysis_parameters(str(d)))
    said = "No Go-vs-Rust comparison could be made in this run: only Go was run (languages: go)"
    assert str(nb.findings(rep).items[0]).startswith(said)
    assert said in (d / "export" / "report.html").read_text()


def test_a_cells_stderr_is_shown_live_then_kept_and_cleared_only_when_the_cell_succeeds(monkeypatch, capsys):
    import sys

    import IPython.display
    from bench_src.report import notebook as nb_module

    cleared = []
    monkeypatch.setattr(IPython.display, "clear_output", lambda *a, **k: cleared.append(True))
    before = sys.stderr
    with nb_module.live_stderr() as lines:
        print("estimate: 2 min", file=sys.stderr)
    assert sys.stderr is before and cleared == [True]
    assert "estimate: 2 min" in capsys.readouterr().err, "shown as it came"
    lines.show()
    assert capsys.readouterr().out == "estimate: 2 min\n", "kept for later"
    # a cell that fails keeps its lines beside the error
    import pytest
    with pytest.raises(RuntimeError):
        with nb_module.live_stderr():
            print("progress 3/10", file=sys.stderr)
            raise RuntimeError("server gone")
    assert sys.stderr is before and cleared == [True]


def test_the_method_renders_its_subsections_as_headings_and_paragraphs(results_dir):
    """The Method text holds '### heading' blocks: the notebook shows each as a heading and each
    paragraph on its own, never the raw Markdown run together in one paragraph."""
    rep = full.describe_method(full.analyse(results_dir))
    section = nb.method(rep)
    html = section._repr_html_()
    assert "###" not in html and "<h3>Design</h3>" in html, html[:300]
    blocks = [b for b in rep.method.split("\n\n") if b.strip() and not b.startswith("###")]
    assert html.count("<p>") == len([b for b in blocks if not b.startswith("|")])
    # the Multiplicity's table of families is a table
    assert any(b.startswith("|") for b in blocks) and "<table" in html and "| family" not in html
    assert repr(section).startswith("### Design")
