"""The notebooks' parameters as papermill reads them: every one typed, no parse warning, the first
code cell refusing undeclared parameters, and the notebooks committed without outputs."""
import ast
import json
import logging

import pytest
from papermill.inspection import _infer_parameters
from papermill.iorw import load_notebook_node

from bench_src import paths

NOTEBOOKS = ["run.ipynb", "analysis.ipynb", "memory.ipynb", "reproduce_article.ipynb"]


def _load(name):
    """As papermill opens a notebook (it gives every cell a tags list)."""
    return load_notebook_node(str(paths.ROOT / "notebooks" / name))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_parameter_has_a_type_and_parses_without_warning(name, caplog):
    with caplog.at_level(logging.WARNING, logger="papermill"):
        params = _infer_parameters(_load(name))
    assert [r.getMessage() for r in caplog.records] == []
    assert params
    untyped = [p.name for p in params if p.inferred_type_name in ("None", "")]
    assert untyped == []
    assert all(p.help for p in params), [p.name for p in params if not p.help]
    nb = _load(name)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assigned = [n.targets[0].id if isinstance(n, ast.Assign) else n.target.id
                for n in ast.parse(cell.source).body if isinstance(n, (ast.Assign, ast.AnnAssign))]
    assert [p.name for p in params] == assigned  # papermill sees every parameter the cell declares


def test_run_notebook_declares_every_plan_parameter_with_its_type():
    from bench_src.plan.validate import plan_parameters
    params = {p.name: p for p in _infer_parameters(_load("run.ipynb"))}
    retired = {"adaptive_target"}  # refused by make_plan with a message naming what replaced it
    assert set(plan_parameters()) - retired <= set(params), set(plan_parameters()) - retired - set(params)
    assert params["max_samples"].inferred_type_name == "Optional[int]"
    assert params["smoke"].inferred_type_name == "bool"
    assert params["profile"].inferred_type_name == "str" and params["profile"].default == '"quick"'
    assert params["ns"].inferred_type_name.startswith("Union[")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_first_code_cell_refuses_undeclared_parameters(name):
    nb = _load(name)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    declared = [p.name for p in _infer_parameters(nb)]
    calls = [n for n in ast.walk(ast.parse(code[1].source)) if isinstance(n, ast.Call)
             and getattr(n.func, "attr", "") == "refuse_unknown_parameters"]
    assert len(calls) == 1
    # before anything that can fail: errors a user can fix read as one line, as on the command line
    first = [n for n in ast.walk(ast.parse(code[1].source)) if isinstance(n, ast.Call)
             and getattr(n.func, "attr", "") in ("errors_in_one_line", "refuse_unknown_parameters")]
    assert [c.func.attr for c in sorted(first, key=lambda c: (c.lineno, c.col_offset))] == [
        "errors_in_one_line", "refuse_unknown_parameters"]
    known = calls[0].args[1]
    if isinstance(known, ast.Call):  # run.ipynb: the names of bench_src/parameters.py
        assert ast.unparse(known) == "api.run_notebook_parameters()"
        from bench_src import api
        assert api.run_notebook_parameters() == declared
    else:
        assert [e.value for e in known.elts] == declared


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebooks_are_committed_without_outputs(name):
    nb = json.loads((paths.ROOT / "notebooks" / name).read_text())
    for c in nb["cells"]:
        if c["cell_type"] == "code":
            assert c["outputs"] == [] and c["execution_count"] is None


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_heading_claims_a_coverage_the_median_intervals_do_not_have(name):
    # the distribution-free interval of a median covers 93.5% at 10 samples (96.9% at 9): the tables'
    # captions and the figures' titles state it; a heading saying "95%" would contradict them
    nb = _load(name)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "distribution-free" in cell.source:
            heading = [line for line in cell.source.splitlines() if "distribution-free" in line][0]
            assert "95%" not in heading.replace("a nominal 95%", ""), heading


@pytest.mark.parametrize("name, default", [("progress", True), ("repair", False), ("new_binaries", False),
                                           ("force_build", False)])
def test_a_run_parameter_given_as_none_is_its_default_where_it_is_used_as_in_the_first_cells_check(name, default):
    """`-p progress None` passed run.ipynb's first cell (its check reads None as the default) and was
    refused after the build, where the run read it ("progress must be a boolean ..., got None")."""
    from bench_src import api

    api.check_run_parameters({name: None})
    assert api.parse_bool(name, None) is default and api.parse_bool(name, "None") is default
    # the words run.ipynb's first cell shows for each (test_notebook runs the notebook with two of them)
    with pytest.raises(ValueError) as err:
        api.check_run_parameters({name: "maybe"})
    assert str(err.value) == f"{name} must be a boolean (true/false, yes/no, on/off, 1/0), got 'maybe'"
    for refused in ("", "null"):  # values like any other, in the first cell's check and where it is used alike
        with pytest.raises(ValueError, match=f"{name} must be a boolean .*, got {refused!r}"):
            api.check_run_parameters({name: refused})
        with pytest.raises(ValueError, match=f"{name} must be a boolean .*, got {refused!r}"):
            api.parse_bool(name, refused)
    assert api.parse_bool(name, "no") is False and api.parse_bool(name, "yes") is True
    with pytest.raises(ValueError, match=f"{name} must be a boolean"):
        api.parse_bool(name, "maybe")
