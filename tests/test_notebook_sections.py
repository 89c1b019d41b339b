"""The analysis notebooks open with the answer: after the parameters and the run (or the setup), the
first section shown is the Findings; the several-hosts section comes after the analysis of one
directory and, with one directory, is one line."""
import json

import pytest

from bench_src import api, paths
from bench_src.report import notebook as nb


def _cells(name):
    return json.loads((paths.ROOT / "notebooks" / name).read_text())["cells"]


def _source(cell):
    return "".join(cell["source"])


def _headings(name):
    return [line for c in _cells(name) if c["cell_type"] == "markdown"
            for line in _source(c).splitlines() if line.startswith("## ")]


def first_section_after(cells, last_setup: str):
    """The first cell after the one whose source holds `last_setup` that shows anything but stderr
    (the run's progress lines), and the heading above it."""
    start = next(i for i, c in enumerate(cells) if last_setup in _source(c))
    heading = None
    for c in cells[start + 1:]:
        if c["cell_type"] == "markdown":
            heading = next((line for line in _source(c).splitlines() if line.startswith("## ")), heading)
            continue
        shown = [o for o in c.get("outputs", []) if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]
        if shown:
            return heading, _source(c), shown
    raise AssertionError("nothing shown after the setup")


@pytest.mark.parametrize("name", ["run.ipynb", "analysis.ipynb"])
def test_the_first_section_after_the_parameters_and_the_setup_is_the_findings(name):
    # run.ipynb showed the plan, the build and the run's lines before its findings (cell 11), and
    # analysis.ipynb six cells of the several-hosts section, each one line with one directory; the
    # notebooks as executed are checked in test_notebook.py (first_section_after)
    cells = _cells(name)
    code = [_source(c) for c in cells if c["cell_type"] == "code"]
    findings = code.index("nb.findings(rep)")
    headings = _headings(name)
    if name == "run.ipynb":
        # the setup checks; one cell builds and runs, one analyses, their output kept for later
        assert findings == 4 and headings[:2] == ["## Build and run", "## Findings: what this run says, Go vs Rust"]
        # the run's cell: its progress lines live, then out of the cell (nb.live_stderr), its output kept
        assert code[2].startswith("with nb.live_stderr() as run_lines, capture_output(stderr=False, display=False) as ")
        assert code[3].startswith("with capture_output(stderr=False, display=False) as ")
        assert "build_programs" in code[2] and "run_plan" in code[2] and "nb.report(out_dir)" in code[3]
        details = headings.index("## The run: its plan, its build, what it said and where the exports are")
        assert details == 2 and code[5:8] == ["nb.plan(plan)", "run_log.show()\nrun_lines.show()", "analysis_log.show()"]
    else:
        assert findings == 2 and headings[0] == "## Findings: what this run says, Go vs Rust"
    assert not any("nb.plan(" in c or "nb.hosts" in c for c in code[1:findings])


def test_the_several_hosts_section_comes_after_the_analysis_of_one_directory():
    headings = _headings("analysis.ipynb")
    hosts = next(i for i, h in enumerate(headings) if h.startswith("## Several machines"))
    assert hosts == len(headings) - 1, headings
    code = [_source(c) for c in _cells("analysis.ipynb") if c["cell_type"] == "code"]
    assert [c for c in code if "hosts" in c and "nb." in c and "analysis_hosts" not in c] == ["nb.hosts_section(hosts)"]


def test_with_one_directory_the_several_hosts_section_is_one_line():
    assert nb.hosts_section(None).items == [nb.ONE]
    assert "at the end" in nb.SEVERAL and "above" not in nb.SEVERAL


def test_with_several_directories_the_several_hosts_section_holds_every_table_and_the_forest_plots(tmp_path):
    from test_hosts import take

    a = take(tmp_path / "a", 1.0, 2.0, seed=18)
    b = take(tmp_path / "b", 1.0, 1.98, seed=19, cpu_model="Other CPU")
    hosts = api.analysis_hosts(nb.analysis_parameters([str(a), str(b)], hosts_dir=str(tmp_path / "h")))
    section = nb.hosts_section(hosts)
    assert section.items[:-len(section.readables()) - len(section.files())] == nb.hosts_summary(hosts).items[:-1]
    titles = [r.title for r in section.readables()]
    assert titles[0] == "The hosts" and len(titles) == 5, titles
    assert [p.name for p in section.files()] == ["forest_elapsed_s.png", "forest_peak_rss_mib.png"]
