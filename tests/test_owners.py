"""One owner per rule: a name, a default or a constant that several modules need is written in one
module and read from it everywhere else.  Each test scans the harness's source (docstrings aside)
for a rule written again outside its owner."""
import ast
from pathlib import Path

from bench_src import paths

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "bench_src"


def docstring_nodes(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module, its functions and classes."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def path_constants(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string constant of a module that reads as a path (no whitespace, so
    not a message or a help text), docstrings aside; f-strings' literal parts included."""
    tree = ast.parse(source)
    docs = docstring_nodes(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
            and node.value and not any(c.isspace() for c in node.value)]


def named_outside(name: str, owners: set[str]) -> list[str]:
    """Where a module other than `owners` writes `name` as a part of a path ("x/name", "*/name")."""
    found = []
    for path in sorted(HARNESS.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel in owners:
            continue
        for line, text in path_constants(path.read_text()):
            if name in (part.lstrip("*") for part in text.split("/")):
                found.append(f"{rel}:{line} {text!r}")
    return found


def test_the_check_sees_a_file_name_in_a_glob_and_not_in_a_message():
    source = 'def f(root):\n    """Reads samples.jsonl."""\n    print("no samples.jsonl here")\n' \
             '    return root.glob("*/samples.jsonl"), root / "samples.jsonl"\n'
    assert path_constants(source) == [(4, "*/samples.jsonl"), (4, "samples.jsonl")]


def test_the_samples_file_is_named_once():
    assert paths.SAMPLES == "samples.jsonl"
    assert named_outside(paths.SAMPLES, {"bench_src/paths.py"}) == []


# The statistical constants' owner: the rules (MARGIN, ALPHA, CONFIDENCE, and the engine check's own,
# narrower ENGINES_MARGIN).
STATISTICAL_OWNERS = {"bench_src/analysis/rules.py"}
STATISTICAL_NAMES = ("margin", "alpha", "level", "confidence")


def number_defaults(source: str) -> list[tuple[int, str, float]]:
    """(line, parameter, value) of every parameter named like a margin, an alpha, a level or a
    confidence whose default is a number written out (0, meaning none, aside)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            positional = a.posonlyargs + a.args
            pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
            pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            out += [(d.lineno, arg.arg, d.value) for arg, d in pairs
                    if any(name in arg.arg for name in STATISTICAL_NAMES) and isinstance(d, ast.Constant)
                    and isinstance(d.value, (int, float)) and not isinstance(d.value, bool) and d.value != 0]
    return out


def test_the_check_sees_a_margin_written_out():
    source = "def f(x, margin: float = 0.02, *, alpha=0.05, band=0.0, level=rules.ALPHA, none=0.0):\n    pass\n"
    assert number_defaults(source) == [(1, "margin", 0.02), (1, "alpha", 0.05)]


def test_margins_and_alphas_are_read_from_their_owners():
    """A default margin, alpha or level is rules.MARGIN, rules.ALPHA... (or the engine check's
    rules.ENGINES_MARGIN), never the number again: a change of the rule reaches every table and call."""
    written = [f"{path.relative_to(ROOT)}:{line} {name}={value}"
               for path in sorted(HARNESS.rglob("*.py")) if str(path.relative_to(ROOT)) not in STATISTICAL_OWNERS
               for line, name, value in number_defaults(path.read_text())]
    assert written == []



def module_constants(source: str) -> list[tuple[int, str, object]]:
    """(line, name, value) of every module-level name bound to a value written out (a number, a
    string, or a tuple, list or set of them)."""
    out = []
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if not targets or node.value is None:
            continue
        try:
            value = ast.literal_eval(node.value)
        except ValueError:
            continue
        out += [(node.lineno, t.id, value) for t in targets if isinstance(t, ast.Name)]
    return out


def test_the_check_sees_a_constant_written_again_and_not_one_read():
    source = "from . import rules\nCONFIDENCE = 0.95\nLEVEL = rules.CONFIDENCE\nKINDS = ('a', 'b')\n"
    assert module_constants(source) == [(2, "CONFIDENCE", 0.95), (4, "KINDS", ("a", "b"))]


def test_the_rules_constants_are_not_written_again_at_module_level():
    """A module that needs CONFIDENCE, ALPHA, MARGIN... imports it from the rules: a copy of its own
    would keep the old value when the rule changes (the Method would state one level, the intervals
    use another)."""
    rules = HARNESS / "analysis" / "rules.py"
    owned = {name for _, name, value in module_constants(rules.read_text())
             if isinstance(value, (int, float)) and not isinstance(value, bool)}
    assert {"ALPHA", "MARGIN", "CONFIDENCE", "POWER", "PRECISION_TARGET"} <= owned
    copies = [f"{path.relative_to(ROOT)}:{line} {name} = {value!r}"
              for path in sorted(HARNESS.rglob("*.py")) if str(path.relative_to(ROOT)) not in STATISTICAL_OWNERS
              for line, name, value in module_constants(path.read_text()) if name in owned]
    assert copies == []


def test_a_list_of_names_is_written_in_one_module():
    """The same list of metrics, columns or verdict kinds written out in two modules is one rule with
    two owners: each module reads it from the one that owns it."""
    where: dict[tuple, list[str]] = {}
    for path in sorted(HARNESS.rglob("*.py")):
        for line, name, value in module_constants(path.read_text()):
            if isinstance(value, (tuple, list, set, frozenset)) and len(value) >= 2 \
                    and all(isinstance(v, str) for v in value):
                key = tuple(sorted(value)) if isinstance(value, (set, frozenset)) else tuple(value)
                where.setdefault(key, []).append(f"{path.relative_to(ROOT)}:{line} {name}")
    twice = {k: v for k, v in where.items() if len({w.split(":")[0] for w in v}) > 1}
    assert twice == {}

def _string_lists(tree: ast.AST):
    """(line, key) of every tuple, list or set written out of three or more strings, at any depth."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) >= 3 and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            values = [e.value for e in node.elts]
            yield node.lineno, tuple(sorted(values)) if isinstance(node, ast.Set) else tuple(values)


def test_a_named_list_is_never_written_out_again_even_inside_a_function():
    """A list a module names at its top (verdict kinds, a timeline's cell) written out again in
    another module, inside a function too: the copy would not follow a change of the owner's."""
    named: dict[tuple, str] = {}
    for path in sorted(HARNESS.rglob("*.py")):
        for line, name, value in module_constants(path.read_text()):
            if isinstance(value, (tuple, list, set, frozenset)) and len(value) >= 3 \
                    and all(isinstance(v, str) for v in value):
                key = tuple(sorted(value)) if isinstance(value, (set, frozenset)) else tuple(value)
                named.setdefault(key, f"{path.relative_to(ROOT)}:{line} {name}")
    copies = [f"{path.relative_to(ROOT)}:{line} writes out {named[key]}"
              for path in sorted(HARNESS.rglob("*.py")) for line, key in _string_lists(ast.parse(path.read_text()))
              if key in named and not named[key].startswith(f"{path.relative_to(ROOT)}:")]
    assert copies == []


def test_the_hosts_factors_are_the_stores(monkeypatch, capsys):
    """`hosts --factor` takes the store's factors, read from it: a factor added there is taken."""
    import pytest

    from bench_src.__main__ import parse_args
    from bench_src.store import hosts

    monkeypatch.setitem(hosts.FACTORS, "machine", lambda meta: "")
    for factor in hosts.FACTORS:
        assert parse_args(["hosts", "d", "--factor", factor]).factor == factor
    with pytest.raises(SystemExit):
        parse_args(["hosts", "d", "--factor", "nosuch"])


# A results directory's files and its export's layout: each name has one owner, which every
# other module reads (the store's files, the export directory and its folders, the report page).
RESULT_FILES = {
    "meta.json": {"bench_src/store/meta.py"},
    "samples.rejected.jsonl": {"bench_src/store/records.py"},
    "export": {"bench_src/report/export/base.py"},
    "report.html": {"bench_src/report/export/html.py"},
}
# the export's folders, as the report's modules name them (api.standard_figures keeps its figures
# in a folder of its own, outside the export)
EXPORT_FOLDERS = {"tables": {"bench_src/report/export/base.py"}, "figures": {"bench_src/report/export/base.py"}}


def test_a_results_directorys_files_are_named_by_their_owners():
    assert {name: named_outside(name, owners) for name, owners in RESULT_FILES.items()} == \
        {name: [] for name in RESULT_FILES}
    report_modules = [w for name, owners in EXPORT_FOLDERS.items() for w in named_outside(name, owners)
                      if w.startswith("bench_src/report/")]
    assert report_modules == []


def test_the_command_lines_defaults_are_the_plan_parameters_and_the_catalogues_languages(monkeypatch):
    """`results-dir` defaults to the plan parameters' profile and seed, `build` to the catalogue's
    languages: read where they are declared when the options are made, never written again."""
    import inspect

    from bench_src import catalogue, parameters
    from bench_src.__main__ import parse_args
    from bench_src.plan.validate import languages_parameter  # imported before LANGS is patched below
    from bench_src.run import build

    monkeypatch.setattr(parameters, "default", lambda name: {"profile": "memory", "seed": 7}[name])
    monkeypatch.setattr(catalogue, "LANGS", ("rust",))
    args = parse_args(["results-dir"])
    assert (args.profile, args.seed) == ("memory", 7)
    # build's default is the plan's: no languages given (None) is every language of the catalogue
    assert parse_args(["build"]).languages is None
    monkeypatch.undo()
    assert languages_parameter(None) == catalogue.LANGS
    for function in (build.build, build.check_tools):
        assert inspect.signature(function).parameters["languages"].default is catalogue.LANGS


def test_per_block_values_are_taken_by_one_rule(monkeypatch):
    """The cores' change and the hosts' log ratios divide per-block values of two cells: both take
    them from CellValues.per_block (the median where a block holds a cell twice), not from copies."""
    import numpy as np
    import pandas as pd

    from bench_src.analysis import compare, cores, hosts
    from bench_src.catalogue import WORKLOADS

    rng = np.random.default_rng(1)
    rows = [{"host": host, "workload": "sleep", "lang": lang, "variant": WORKLOADS["sleep"].default_variant(lang),
             "n": 10, "threads_requested": k, "cores": k, "arm": "", "block": block, "valid": True,
             "cell_id": f"sleep|{lang}|{k}", "p_kernel": "xorshift", "p_work": "0",
             "elapsed_s": time / k * float(np.exp(rng.normal(0, 0.01)))}
            for host in ("h1", "h2") for k in (1, 2) for lang, time in (("go", 1.0), ("rust", 1.2))
            for block in range(8)]
    df = pd.DataFrame(rows)
    taken = []
    rule = compare.CellValues.per_block
    monkeypatch.setattr(compare.CellValues, "per_block", lambda self, ref: taken.append(ref) or rule(self, ref))
    assert len(hosts.host_log_ratios(df)) == 4 and len(taken) == 8, "2 hosts x 2 core counts, Go and Rust"
    taken.clear()
    assert cores.ratio_vs_cores(df[df["host"] == "h1"])["change"].notna().sum() == 1 and len(taken) == 4


def test_the_samples_a_run_has_taken_per_cell_are_counted_by_the_store():
    """A resumed run and its estimate count what is taken by one rule, the store's taken_per_cell."""
    from bench_src.run import session_estimate
    from bench_src.store import ledger as results

    assert session_estimate.taken_per_cell is results.taken_per_cell


def test_the_notebooks_margin_is_the_rules():
    """A papermill parameters cell holds literals, so the analysis notebooks write the margin out:
    it must be the rules' MARGIN that every call defaults to."""
    import pytest
    from papermill.inspection import _infer_parameters
    from papermill.iorw import load_notebook_node

    from bench_src.analysis import rules

    for name in ("analysis.ipynb", "reproduce_article.ipynb"):
        notebook = load_notebook_node(str(paths.ROOT / "notebooks" / name))
        params = {p.name: p.default for p in _infer_parameters(notebook)}
        assert float(params["margin"]) == pytest.approx(rules.MARGIN), name


def test_a_plans_comparisons_are_listed_by_one_rule(monkeypatch):
    """The feasibility check, the detectable differences and the sequential rule take a plan's
    comparisons from plan/comparisons.py's plan_comparisons, not from copies of its loop."""
    import pandas as pd

    from bench_src.analysis import feasibility as detectable, sequential
    from bench_src.plan import comparisons, feasibility, make_plan

    plan = make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=6, warmup=1)
    rule = comparisons.plan_comparisons
    asked = []

    def spy(p, *args):
        asked.append(p)
        return rule(p, *args)

    for module in (comparisons, feasibility, detectable):
        monkeypatch.setattr(module, "plan_comparisons", spy)
    sizes = feasibility.family_sizes(plan)
    assert sizes == {f: len(pairs) for f, pairs in rule(plan).items()} and sum(sizes.values()) > 0
    assert len(detectable.plan_mde(plan, pd.DataFrame())) == sum(sizes.values())
    assert len(sequential.plan_comparisons(plan)) == sum(sizes.values())
    assert asked == [plan, plan, plan]


def test_the_makefile_writes_no_default_of_a_plan_parameter():
    """`make run` passes a parameter only when it is given (PROFILE=, SEED=, ...): a default written
    in the Makefile (SEED ?= 1) would outlive a change of the plan's own, unseen by the checks above."""
    import re

    from bench_src import parameters

    names = {p.name for p in parameters.notebook_parameters()} | {"run_dir"}
    written = {m.group(1): m.group(2).strip()
               for m in re.finditer(r"^([A-Z_]+)\s*\?=(.*)$", (ROOT / "Makefile").read_text(), re.M)}
    assert {"PROFILE", "SEED", "THREADS"} <= set(written)
    assert {k: v for k, v in written.items() if k.lower() in names and v} == {}


def test_the_default_number_of_looks_is_written_once_and_its_help_reads_it():
    """The help said "(default 3)" beside DEFAULT_LOOKS = 3 of the design: a change of one left the
    other.  The plan parameters own it; the design and the help read it."""
    from bench_src import parameters
    from bench_src.plan import design

    assert design.DEFAULT_LOOKS is parameters.DEFAULT_LOOKS
    bound = [f"{path.relative_to(ROOT)}:{line}" for path in sorted(HARNESS.rglob("*.py"))
             for line, name, _ in module_constants(path.read_text()) if name == "DEFAULT_LOOKS"]
    assert bound == ["bench_src/parameters.py:" + str(next(
        line for line, name, _ in module_constants((HARNESS / "parameters.py").read_text()) if name == "DEFAULT_LOOKS"))]
    looks = next(p for p in parameters.PLAN_PARAMETERS if p.name == "looks")
    assert f"({parameters.DEFAULT_LOOKS} where the profile gives none)" in looks.help


# The rules' constants as a reader sees them ("95%", "5%", "2%", "80%"), written out in the text
# a reader gets.  The one allowed: the notation of a margin given by hand, explained by an example.
READER_TEXT = ("bench_src/report", "bench_src/api.py", "bench_src/__main__.py")
PERCENT_EXAMPLES = {("bench_src/report/notebook.py", "0.02 means ±2%")}


def percent_literals(source: str, percents: set[str]) -> list[tuple[int, str]]:
    """(line, text) of every string (f-strings' literal parts included, docstrings aside) that
    writes one of `percents` ("95", "5") as a percentage: "95%", "95.0%", not "0.95%" or "195%"."""
    import re

    pattern = re.compile(r"(?<![\d.])(?:" + "|".join(re.escape(p) for p in sorted(percents)) + r")(?:\.0+)?%")
    tree = ast.parse(source)
    docs = docstring_nodes(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
            and pattern.search(node.value)]


def test_the_check_sees_a_level_written_into_a_header():
    source = ('def f(t, alpha):\n    """At 95%."""\n    t["per N [95% CI]"] = 1\n'
              '    return f"x {alpha} / m (false discovery rate 5%)", "0.95% and 195% are not"\n')
    assert percent_literals(source, {"95", "5"}) == [(3, "per N [95% CI]"), (4, " / m (false discovery rate 5%)")]


def test_the_rules_levels_are_not_written_into_report_text():
    """A header "[95% CI]" or a note "false discovery rate 5%" beside intervals computed at
    rules.CONFIDENCE and rules.ALPHA keeps the old words when a rule changes: the text formats them."""
    from bench_src.analysis import rules

    percents = {f"{value * 100:g}" for value in (rules.CONFIDENCE, rules.ALPHA, rules.MARGIN, rules.POWER,
                                                  rules.PRECISION_TARGET)}
    files = [p for where in READER_TEXT for p in sorted((ROOT / where).rglob("*.py") if (ROOT / where).is_dir()
                                                         else [ROOT / where])]
    written = [f"{path.relative_to(ROOT)}:{line} {text!r}" for path in files
               for line, text in percent_literals(path.read_text(), percents)
               if not any(str(path.relative_to(ROOT)) == f and example in text for f, example in PERCENT_EXAMPLES)]
    assert written == []


def test_the_reports_interval_texts_follow_the_rules(monkeypatch):
    """The lone intervals' headers and captions and the comparison tables' note read CONFIDENCE and
    ALPHA when they are written: set to 90% and 10%, every one says so."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from bench_src.analysis import rules, scaling
    from bench_src.report import tables
    from bench_src.report.figures import scaling as scaling_figure
    from bench_src.report.tables import formatting
    from tests import report_data

    monkeypatch.setattr(rules, "CONFIDENCE", 0.9)
    monkeypatch.setattr(rules, "ALPHA", 0.1)
    df = report_data.frame()
    costs = scaling.per_task_cost(df, "elapsed_s", confidence=0.9)
    columns = list(tables.per_task(costs).frame.columns)
    assert "per N [90% CI]" in columns and "exponent [90% CI]" in columns
    modes = pd.DataFrame([{"lang": "go", "variant": "goroutine", "n": 10, "threads_requested": 1, "ratio": 1.0,
                           "ratio_ci_low": 0.9, "ratio_ci_high": 1.1}])
    assert "sleep/release [90% CI]" in tables.idle_wait_modes(modes).frame.columns
    assert scaling_figure._interval_caption(costs).startswith("90% CI from the blocks that hold every N")
    plt.close("all")
    note = formatting.level_note(pd.DataFrame({"ci_level": [0.95, 0.95], "verdict_kind": ["a", "equivalent"],
                                               "family_size": [2, 2]}))
    assert "x 10% / m" in note and "(false discovery rate 10%)" in note and "5%" not in note


def test_every_metric_named_for_readers_is_a_column_of_the_samples_frame():
    """A metric's derived column is computed once, in store/frame.py: the units, the rules' kinds of
    metric and the published figures' map name columns the samples frame has, never one another
    module computes (or nothing does)."""
    from bench_src.analysis import published, rules
    from bench_src.report import units
    from bench_src.store import samples_frame
    from tests import report_data

    columns = set(samples_frame(report_data.records(samples=2)).columns)
    named = {"units.METRIC_UNITS": set(units.METRIC_UNITS), "units.METRIC_NAMES": set(units.METRIC_NAMES),
             "rules.TIME_METRICS": set(rules.TIME_METRICS), "rules.CPU_METRICS": set(rules.CPU_METRICS),
             "rules.MEMORY_METRICS": set(rules.MEMORY_METRICS), "rules.RESOLUTION": set(rules.RESOLUTION),
             "published.METRIC_MAP": {column for column, _ in published.METRIC_MAP.values()}}
    assert {where: sorted(names - columns) for where, names in named.items()} == {where: [] for where in named}


def test_the_engines_help_states_the_engines_margin(monkeypatch, capsys):
    """`engines`'s help says the margin the check uses, read from analysis/rules.py's ENGINES_MARGIN
    (the check's own default: analysis/engines.py and api read it there)."""
    import inspect

    import pytest

    from bench_src import api
    from bench_src.__main__ import parse_args
    from bench_src.analysis import engines, rules

    for call in (engines.engine_check, engines.paired_check, api.engine_check, api.engine_check_paired):
        assert inspect.signature(call).parameters["margin"].default == rules.ENGINES_MARGIN == 0.01, call
    for margin, said in ((rules.ENGINES_MARGIN, f"±{rules.ENGINES_MARGIN * 100:g}%?"), (0.03, "±3%?")):
        monkeypatch.setattr(rules, "ENGINES_MARGIN", margin)
        with pytest.raises(SystemExit):
            parse_args(["--help"])
        assert f"equivalent within {said}" in " ".join(capsys.readouterr().out.split())


def test_the_profile_options_help_names_the_profiles_of_the_owner(monkeypatch, capsys):
    """The names of the profiles are profiles.PROFILES's: the parameters' help writes none of them,
    the command line's lists them as they are."""
    import pytest

    from bench_src import parameters, profiles
    from bench_src.__main__ import parse_args

    monkeypatch.setitem(profiles.PROFILES, "newgrid", profiles.PROFILES["quick"])
    profile = next(p for p in parameters.PLAN_PARAMETERS if p.name == "profile")
    assert not [name for name in profiles.PROFILES if name in profile.help.replace("profiles.py", "")]
    with pytest.raises(SystemExit):
        parse_args(["run", "--help"])
    assert f"one of {', '.join(profiles.PROFILES)}" in " ".join(capsys.readouterr().out.split())


def word_constants(source: str, word: str) -> list[int]:
    """The lines of a module's string constants, docstrings aside, that are `word` or start with it
    (f-strings' literal parts included)."""
    tree = ast.parse(source)
    docs = docstring_nodes(tree)
    return sorted(node.lineno for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                  and (node.value == word or node.value.startswith(word + " ")))


def test_the_check_sees_a_word_written_again_and_not_one_in_a_sentence_or_a_docstring():
    source = 'def f():\n    """not tested: a docstring"""\n    return "not tested"\nX = "it was not tested"\nY = f"not tested ({1})"\n'
    assert word_constants(source, "not tested") == [3, 5]


def test_an_untested_comparisons_word_is_written_once():
    """Every table, figure, sentence and the reproduction table read an untested comparison
    (compare.untested) in compare.NOT_TESTED's word: a copy would drift from it, and the Method's
    counts, the findings and the tables would name one state twice."""
    owner = "bench_src/analysis/compare.py"
    assert word_constants((ROOT / owner).read_text(), "not tested"), "the owner writes the word"
    copies = [f"{path.relative_to(ROOT)}:{line}" for path in sorted(HARNESS.rglob("*.py"))
              if str(path.relative_to(ROOT)) != owner
              for line in word_constants(path.read_text(), "not tested")]
    assert copies == []
