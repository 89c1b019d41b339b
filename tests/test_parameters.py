"""One table of plan parameters (bench_src/parameters.py) feeds the command line, the run notebook's
parameters and papermill's check of them, the profiles and the validation of a plan."""
import json
import re

import pytest
from papermill.inspection import _infer_parameters
from papermill.iorw import load_notebook_node

from bench_src import __main__ as cli, api, parameters, paths
from bench_src.plan import make_plan
from bench_src.plan.validate import plan_parameters
from bench_src.profiles import PROFILES, Profile
from bench_src.values import as_int


def _parameters_cell(name="run.ipynb") -> str:
    nb = json.loads((paths.ROOT / "notebooks" / name).read_text())
    return "".join(next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))["source"])


def _inferred(cell_source: str) -> dict:
    """The parameters papermill finds in run.ipynb with this parameters cell."""
    nb = load_notebook_node(str(paths.ROOT / "notebooks" / "run.ipynb"))
    next(c for c in nb.cells if "parameters" in c.metadata.get("tags", [])).source = cell_source
    return {p.name: p for p in _infer_parameters(nb)}


def test_the_run_notebooks_parameters_cell_is_the_tables():
    assert _parameters_cell() == parameters.notebook_cell(), \
        "paste bench_src.parameters.notebook_cell() into run.ipynb's parameters cell"


def test_every_profile_sets_only_parameters_of_the_table():
    names = {p.name for p in parameters.profile_parameters()}
    for prof in PROFILES.values():
        assert set(prof.given) <= names and set(prof.settings) == names
    with pytest.raises(ValueError, match="unknown setting 'sample'; allowed: ns, "):
        Profile("typo", "a misspelt setting", ns={"sleep": [10]}, samples=6, warmup=0, sample=3)
    with pytest.raises(ValueError, match="must set samples"):
        Profile("short", "no samples", ns={"sleep": [10]}, warmup=0)


def test_a_profiles_share_of_extra_blocks_is_read_at_the_machines_speed():
    """The start estimate's prior: linear between a profile's (speed factor, share) points, the
    nearest point's share beyond them, factor 1 (the default times' own machine) when no warm-up
    timed the machine; one share stands at every speed."""
    prof = Profile("paced", "a share that follows speed", ns={"sleep": [10]}, samples=6, warmup=0,
                   sequential_share=((1.0, 1.2), (0.8, 0.4)), sequential_share_measured=(0.3, 2.0))
    assert prof.share_follows_speed and prof.sequential_share_points == ((0.8, 0.4), (1.0, 1.2))
    assert prof.sequential_share_at(0.8) == pytest.approx(0.4)
    assert prof.sequential_share_at(0.9) == pytest.approx(0.8)
    assert prof.sequential_share_at(0.5) == pytest.approx(0.4), "below the points: the lowest point's share"
    assert prof.sequential_share_at(1.3) == pytest.approx(1.2), "above the points: the highest point's share"
    assert prof.sequential_share_at(None) == pytest.approx(1.2), "no warm-up: factor 1"
    flat = Profile("flat", "one share", ns={"sleep": [10]}, samples=6, warmup=0, sequential_share=1.1)
    assert not flat.share_follows_speed and {flat.sequential_share_at(f) for f in (0.5, None, 2.0)} == {1.1}
    with pytest.raises(ValueError, match="must hold sequential_share"):
        Profile("outside", "d", ns={"sleep": [10]}, samples=6, warmup=0,
                sequential_share=((0.8, 0.4), (1.0, 1.2)), sequential_share_measured=(0.5, 2.0))
    with pytest.raises(ValueError, match="distinct positive factors"):
        Profile("twice", "d", ns={"sleep": [10]}, samples=6, warmup=0, sequential_share=((1.0, 0.4), (1.0, 1.2)))
    with pytest.raises(ValueError, match="must not be negative"):
        Profile("negative", "d", ns={"sleep": [10]}, samples=6, warmup=0, sequential_share=-0.1)
    article = PROFILES["article"]
    low, high = article.sequential_share_measured
    assert article.share_follows_speed
    assert all(low <= v <= high for _, v in article.sequential_share_points)


@pytest.fixture
def probe(monkeypatch):
    """A parameter added to the table, and nowhere else."""
    seen = []

    def check(value, profile):
        seen.append((value, profile.probe))
        return as_int("probe", profile.probe if value is None else value, 0, 9)

    p = parameters.Parameter("probe", "Optional[int]", None, "a parameter added in one place", profile=True,
                             profile_default=4, check=check)
    monkeypatch.setattr(parameters, "PLAN_PARAMETERS", parameters.PLAN_PARAMETERS + (p,))
    return seen


def test_a_parameter_added_to_the_table_reaches_the_command_line(probe):
    args = cli.parse_args(["check", "--probe", "7", "--plan", "{samples: 6}"])
    assert cli.cli_plan_parameters(args) == {"samples": 6, "probe": "7", "profile": "quick"}
    with pytest.raises(ValueError, match="--probe 7 contradicts probe: 2 in --plan"):
        cli.cli_plan_parameters(cli.parse_args(["check", "--probe", "7", "--plan", "{probe: 2}"]))


def test_a_parameter_added_to_the_table_reaches_the_notebook_and_papermills_check(probe):
    cell = parameters.notebook_cell()
    assert "probe: \"Optional[int]\" = None  # a parameter added in one place" in cell.splitlines()
    inferred = _inferred(cell)
    assert inferred["probe"].inferred_type_name == "Optional[int]" and inferred["probe"].help
    assert "probe" in api.run_notebook_parameters()
    namespace = {name: p.default for name, p in ((p.name, p) for p in parameters.notebook_parameters())}
    api.refuse_unknown_parameters({**namespace, "probe": 3}, api.run_notebook_parameters())
    with pytest.raises(ValueError, match="unknown parameter 'prob'"):
        api.refuse_unknown_parameters({**namespace, "prob": 3}, api.run_notebook_parameters())


def test_a_parameter_added_to_the_table_reaches_the_profiles(probe):
    assert "probe" in {p.name for p in parameters.profile_parameters()}
    own = Profile("probing", "sets the new parameter", ns={"sleep": [10]}, samples=6, warmup=0, probe=2)
    assert own.probe == 2 and own.settings["probe"] == 2
    assert PROFILES["quick"].probe == 4, "a profile that leaves it out has its profile default"


def test_a_parameter_added_to_the_table_reaches_the_validation(probe):
    assert "probe" in plan_parameters()
    make_plan("quick", workloads=["sleep"], ns=[10], probe="5")
    make_plan("quick", workloads=["sleep"], ns=[10])
    assert probe == [("5", 4), (None, 4)], "make_plan reads it with the table's check, over the profile's value"
    with pytest.raises(ValueError, match=r"probe must be an integer >= 0 and <= 9, got '12'"):
        make_plan("quick", workloads=["sleep"], ns=[10], probe="12")
    plan = api.plan_from_notebook({p.name: p.default for p in parameters.notebook_parameters()} | {"probe": 1,
                                  "workloads": ["sleep"], "ns": [10]})
    assert plan.workloads == ("sleep",) and probe[-1] == (1, 4)


def test_without_the_new_parameter_it_is_refused_everywhere():
    assert "probe" not in plan_parameters()
    with pytest.raises(ValueError, match="unknown plan parameter 'probe'"):
        make_plan("quick", probe=1)
    with pytest.raises(SystemExit):
        cli.parse_args(["check", "--probe", "1"])
    with pytest.raises(ValueError, match="unknown setting 'probe'"):
        Profile("p", "d", ns={"sleep": [10]}, samples=6, warmup=0, probe=1)


def test_the_readmes_table_names_every_notebook_parameter_and_no_other():
    text = (paths.ROOT / "README.md").read_text()
    start = text.index("Parameters of `run.ipynb`")
    table = text[start:text.index("\n\n", text.index("| parameter | meaning |", start))]
    named = {n for line in table.splitlines() if line.startswith("| `")
             for n in re.findall(r"`([a-z_]+)`", line.split("|")[1])}
    assert named == set(parameters.notebook_names())


def test_a_language_given_twice_is_the_plan_of_it_given_once():
    # workloads, ns and params given twice were merged; [go, go] was stored as it came, a plan of
    # another digest for the same samples, which a resume called "a different plan"
    from bench_src.plan import make_plan
    twice = make_plan("quick", workloads=["sleep"], ns=[10], languages=["go", "go"])
    once = make_plan("quick", workloads=["sleep"], ns=[10], languages=["go"])
    assert twice.languages == ("go",) and twice.digest == once.digest


def test_a_plan_file_that_is_not_utf_8_is_named(tmp_path):
    from bench_src.__main__ import plan_parameters
    bad = tmp_path / "plan.yaml"
    bad.write_bytes(b"\xffns: [10]\n")
    with pytest.raises(ValueError, match=rf"--plan file '{re.escape(str(bad))}' is not UTF-8 text \(byte 0xff at "
                                         r"position 0\); give a YAML or JSON mapping"):
        plan_parameters(str(bad))


@pytest.mark.parametrize("given, error", [
    ("java", "--languages: unknown language 'java'; allowed: go, rust"),
    ("[go, java]", "--languages: unknown language 'java'; allowed: go, rust"),
    ("[]", "--languages is empty; allowed: go, rust"),
    ("go,rust", "--languages: 'go,rust' is one string, not a list; write a list in brackets: '[go, rust]'"),
])
def test_build_refuses_a_language_the_plan_refuses_in_one_line_before_building(given, error, capsys, monkeypatch):
    # `build --languages java` was a KeyError traceback, and `--languages '[go]'` one too, though a
    # plan writes its languages so
    from bench_src.run import build
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    assert cli.main(["build", "--languages", given]) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: {error}"]
    with pytest.raises(ValueError, match=re.escape(error.replace("--languages", "languages", 1))):
        api.plan_from_parameters(profile="quick", workloads="sleep", ns="[10]", languages=given)  # the same rule


@pytest.mark.parametrize("given, languages", [
    (None, ("go", "rust")), ("go", ("go",)), ("[go]", ("go",)), ("[rust, go]", ("rust", "go")),
    ('["go", "go"]', ("go",)),
])
def test_build_takes_its_languages_written_as_a_plans(given, languages, capsys, monkeypatch):
    from bench_src.run import build
    built = []
    monkeypatch.setattr(build, "build", lambda langs, force=False: built.append(tuple(langs)) or {"builds": {}})
    assert cli.main(["build"] + (["--languages", given] if given else [])) == 0
    assert built == [languages]


def test_the_notebook_command_names_a_missing_notebook_or_output_directory_in_one_line(tmp_path):
    import subprocess
    import sys

    missing = tmp_path / "nonexist.ipynb"
    done = subprocess.run([sys.executable, "-m", "bench_src", "notebook", str(missing), str(tmp_path / "o.ipynb")],
                          capture_output=True, text=True, timeout=120, cwd=str(paths.ROOT))
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"error: notebook {str(missing)!r} does not exist; give the path of a notebook (.ipynb), "
        "e.g. notebooks/run.ipynb"]
    out = tmp_path / "x" / "o.ipynb"
    assert cli.notebook_paths_problem(str(paths.ROOT / "notebooks" / "run.ipynb"), str(out)) == (
        f"output {str(out)!r}: its directory {str(out.parent)!r} does not exist; create it or give another path")
    assert cli.notebook_paths_problem(str(tmp_path), str(tmp_path / "o.ipynb")).endswith(
        "is a directory; give the path of a notebook (.ipynb), e.g. notebooks/run.ipynb")
    assert cli.notebook_paths_problem(str(paths.ROOT / "notebooks" / "run.ipynb"), "o.ipynb") is None


@pytest.mark.parametrize("name", ["analysis.ipynb", "reproduce_article.ipynb"])
def test_the_readme_has_a_table_of_every_analysis_notebooks_parameters(name):
    # margin, distribution_workloads, factor, hosts_dir and table were accepted and documented nowhere
    from papermill.inspection import _infer_parameters

    text = (paths.ROOT / "README.md").read_text()
    start = text.index(f"Parameters of `{name}`")
    table = text[start:text.index("\n\n", text.index("| parameter | meaning |", start))]
    named = [n for line in table.splitlines() if line.startswith("| `")
             for n in re.findall(r"`([a-z_]+)`", line.split("|")[1])]
    declared = [p.name for p in _infer_parameters(load_notebook_node(str(paths.ROOT / "notebooks" / name)))]
    assert named == declared


def test_the_command_line_reads_a_whole_number_and_none_as_papermill_does(capsys):
    """papermill's `-p samples 6.0` (a float) and `-p threads None` ran; the same values on the
    command line were refused, and the CLI's own error offered None for threads."""
    from bench_src.__main__ import main
    from bench_src.values import as_int

    assert as_int("samples", "6.0") == 6 and as_int("samples", "1e3", 1, 10000) == 1000 and as_int("s", 6.0) == 6
    for bad in ("6.5", "nan", "1e400", "abc"):
        with pytest.raises(ValueError, match="must be an integer"):
            as_int("samples", bad)
    base = ["check", "--workloads", "[sleep]", "--ns", "[10]"]
    assert main(base) == 0
    omitted = capsys.readouterr().out.strip()
    assert main(base + ["--threads", "None"]) == 0 and capsys.readouterr().out.strip() == omitted
    assert main(base + ["--samples", "10.0"]) == 0 and capsys.readouterr().out.strip() == omitted  # quick's 10
    assert main(base + ["--results-dir", "None"]) == 0 and capsys.readouterr().out.strip() == omitted
    # as papermill: only "None" is None ("null" stays a string), and it never overrides --plan's value
    assert main(base + ["--threads", "null"]) == 2 and "got 'null'" in capsys.readouterr().err
    assert main(["check", "--plan", "{workloads: [sleep], ns: [10], threads: 1}", "--threads", "None"]) == 2
    assert "contradicts threads: 1 in --plan; give it once" in capsys.readouterr().err


def _check_command(tmp_path, *args):
    """`python -m bench_src check --results-dir <tmp_path>/r ARGS...` in a process of its own: its
    result and the results directory it names."""
    import subprocess
    import sys

    out = tmp_path / "r"
    done = subprocess.run([sys.executable, "-m", "bench_src", "check", "--results-dir", str(out), *args],
                          capture_output=True, text=True, timeout=300, cwd=str(paths.ROOT))
    return done, out


def _refused_in_one_line(done, out) -> str:
    """The one `error: ...` line of a refused command that wrote nothing."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert not out.exists() and done.stdout == ""
    return lines[0]


@pytest.mark.parametrize("option", ["ns", "cores", "seed", "cooldown_s", "smoke", "aa", "allow_large", "variants",
                                    "samples"])
def test_every_option_given_as_none_is_not_given_as_papermills_none(option):
    """`--ns None`, `--cores None` and `--seed None` were the string "None" (an error about 'None'),
    where papermill's `-p NAME None` is the parameter not given; only options of an Optional type
    read the word.  The command line, papermill's None and the word None as a string (a value
    papermill passes as it is) now make one plan, the plan of the option left out."""
    omitted = ["check", "--workloads", "[sleep]"]
    plan = cli.cli_plan_parameters(cli.parse_args(omitted + ["--" + option.replace("_", "-"), "None"]))
    assert plan[option] is None
    digest = api.plan_from_parameters(**cli.cli_plan_parameters(cli.parse_args(omitted))).digest
    assert api.plan_from_parameters(**plan).digest == digest
    assert api.plan_from_parameters(profile="quick", workloads="[sleep]", **{option: "None"}).digest == digest
    assert api.plan_from_parameters(profile="quick", workloads="[sleep]", **{option: None}).digest == digest


def test_the_word_none_on_the_command_line_is_read_as_papermills_none(tmp_path):
    done, out = _check_command(tmp_path, "--workloads", "[sleep]", "--ns", "[10]", "--seed", "None", "--cores", "None")
    assert done.returncode == 0 and done.stdout.strip() == str(out) and not out.exists(), done.stderr
    # the profile has no "not given" but its default's name: refused as papermill's None is, in one line
    done, out = _check_command(tmp_path, "--workloads", "[sleep]", "--ns", "[10]", "--profile", "None")
    assert _refused_in_one_line(done, out).startswith("error: profile must be a name, got None; allowed: quick")
    # None given as an option never overrides --plan's value
    done, out = _check_command(tmp_path, "--plan", "{workloads: [sleep], ns: [10], seed: 2}", "--seed", "None")
    assert "--seed None contradicts seed: 2 in --plan" in _refused_in_one_line(done, out)
    assert cli.main(["results-dir", "--seed", "None"]) == 0 and cli.main(["results-dir", "--seed", "x"]) == 2


def test_the_run_parameters_read_the_word_none_as_papermills_none(tmp_path):
    """A run parameter papermill passes as the string "None" (`python -m bench_src notebook -p
    progress None`) was refused by the first cell's check, and `results_dir` "None" was a directory
    of that name."""
    namespace = {"progress": "None", "repair": "None", "force_build": "None", "new_binaries": "None",
                 "cluster": "None"}
    api.check_run_parameters(namespace)
    assert api.parse_bool("progress", "None") is True and api.parse_bool("repair", "None") is False
    plan = make_plan("quick", workloads=["sleep"], ns=[10])
    assert api.results_dir_for(plan, "None") == api.results_dir_for(plan, None) != paths.ROOT / "None"


@pytest.mark.parametrize("name", [p.name for p in parameters.PLAN_PARAMETERS])
def test_an_empty_string_is_a_value_that_no_plan_parameter_allows(name, capsys):
    """`-p threads ''`, `--cores ""` or `mem_limit_mb: ''` in --plan were the parameter left out, while
    `-p samples ''` or `--seed ""` were refused: one rule now, values.read_none's, for every
    parameter and every way of giving it: the word None is not given, an empty string is a value
    like any other, refused in one line that names it and what is allowed."""
    given = {"profile": "quick", "workloads": "[sleep]", "ns": "[10]", name: ""}
    with pytest.raises(ValueError) as err:
        api.plan_from_parameters(**given)
    assert "''" in str(err.value) and "\n" not in str(err.value), str(err.value)
    plan = "{" + ", ".join(f"{k}: {v}" for k, v in {**given, name: "''"}.items()) + "}"
    assert cli.main(["check", "--plan", plan]) == 2
    assert capsys.readouterr().err == f"error: {err.value}\n"
    options = {p.name: parameters.option(p) for p in parameters.cli_parameters()}
    if name in options:  # dsn and the retired adaptive_target are no options
        base = [a for k, v in given.items() if k != name for a in (options[k], v)]
        assert cli.main(["check", *base, options[name], ""]) == 2
        assert capsys.readouterr().err == f"error: {err.value}\n"


@pytest.mark.parametrize("name", [p.name for p in parameters.RUN_PARAMETERS])
def test_an_empty_string_is_a_value_that_no_run_parameter_allows(name, tmp_path, capsys):
    """`-p progress ''`, `-p cluster ''` and `-p results_dir ''` (run.ipynb's parameters that are not
    the plan's) were the parameter left out; refused now, as the plan's are, before anything is
    built (the first cell's checks), and on the command line in one line."""
    with pytest.raises(ValueError) as err:
        if name == "results_dir":  # checked in the first cell by results_dir_for, the others by their check
            api.results_dir_for(make_plan("quick", workloads=["sleep"], ns=[10]), "")
        else:
            api.check_run_parameters({name: ""})
    assert "''" in str(err.value), str(err.value)
    if name in ("results_dir", "cluster"):  # the run parameters that are options of check and run
        assert cli.main(["check", "--workloads", "[sleep]", "--ns", "[10]", "--" + name.replace("_", "-"), ""]) == 2
        assert capsys.readouterr().err == f"error: {err.value}\n"
    assert not (tmp_path / "r").exists()


def test_the_analysis_notebooks_read_none_and_an_empty_string_as_the_run_notebook_does(tmp_path, monkeypatch):
    """margin, table, factor and hosts_dir given the word None (`python -m bench_src notebook ... -p
    margin None` passes it as a string) were refused or a directory named "None", and `hosts_dir`
    '' was no directory; each reads None as its default now, and refuses an empty string."""
    import report_data
    from bench_src.analysis import rules
    from bench_src.report import notebook as nb

    d = report_data.write_results_dir(tmp_path / "run", report_data.records(samples=2, warmup=0))
    given = nb.analysis_parameters(str(d), margin="None", factor="None", hosts_dir="None")
    assert (given.margin, given.factor, given.hosts_dir) == (rules.MARGIN, None, None)
    reproduce = nb.reproduce_parameters(str(d), margin="None", table="None")
    assert (reproduce.margin, reproduce.table) == (rules.MARGIN, nb.ARTICLE_TABLES[0])
    monkeypatch.setattr(paths, "RESULTS", tmp_path)  # the latest results directory: d
    assert nb.memory_parameters("None") == nb.memory_parameters(None) == d
    for refused, words in ((lambda: nb.analysis_parameters(str(d), margin=""), "margin=''"),
                           (lambda: nb.analysis_parameters(str(d), factor=""), "factor=''"),
                           (lambda: nb.analysis_parameters(str(d), hosts_dir=""), "hosts_dir=''"),
                           (lambda: nb.reproduce_parameters(str(d), table=""), "table=''"),
                           (lambda: nb.memory_parameters(""), "empty string ''")):
        with pytest.raises(api.USER_ERRORS, match=re.escape(words)):
            refused()


@pytest.mark.parametrize("option, value, planned", [
    ("ns", "[10, 100]", "[10,100]"), ("ns", "[10,100]", "[10, 100]"), ("ns", "10", "10"), ("seed", "1", "1"),
    ("seed", "1.0", "1"), ("samples", "6.0", "6"), ("smoke", "yes", "true"), ("timeout_s", "30", "30.0"),
    ("workloads", "sleep", "sleep"), ("workloads", "[sleep]", "[sleep]"),
    ("cores", "[1]", "[1]"), ("variants", "{sleep: {go: [waitgroup]}}", "{sleep: {go: [waitgroup]}}"),
    ("threads", "None", "null"), ("profile", "quick", "quick"),
])
def test_a_value_given_both_as_an_option_and_in_the_plan_is_one_value(option, value, planned):
    """`--ns '[10, 100]'` with `ns: [10,100]` in --plan, or `--seed 1` with `seed: 1`, was refused as a
    contradiction: the option's string was compared with str() of the plan's value.  Each is read
    as the plan reads it; the plan is the plan of the value given once."""
    given = {"workloads": "[sleep]", "ns": "[10]", option: planned}
    plan = "{" + ", ".join(f"{k}: {v}" for k, v in given.items()) + "}"
    both = cli.cli_plan_parameters(cli.parse_args(["check", "--" + option.replace("_", "-"), value, "--plan", plan]))
    once = cli.cli_plan_parameters(cli.parse_args(["check", "--plan", plan]))
    assert api.plan_from_parameters(**both).digest == api.plan_from_parameters(**once).digest


@pytest.mark.parametrize("option, value, planned", [
    ("seed", "2", "1"), ("ns", "[10, 100]", "[10]"), ("samples", "6.5", "6"), ("smoke", "no", "true"),
    ("ns", "[1]", "[true]"), ("max_samples", "0", "false"), ("threads", "None", "1"), ("profile", "quick", "article"),
])
def test_different_values_in_an_option_and_the_plan_still_contradict(option, value, planned):
    given = {"workloads": "[sleep]", option: planned}
    plan = "{" + ", ".join(f"{k}: {v}" for k, v in given.items()) + "}"
    with pytest.raises(ValueError, match=re.escape(f"--{option.replace('_', '-')} {value} contradicts {option}: ")):
        cli.cli_plan_parameters(cli.parse_args(["check", "--" + option.replace("_", "-"), value, "--plan", plan]))


def test_the_same_value_twice_passes_the_check_and_a_different_one_is_one_line(tmp_path):
    done, out = _check_command(tmp_path, "--workloads", "[sleep]", "--ns", "[10,100]", "--seed", "1", "--plan",
                               "{workloads: [sleep], ns: [10, 100], seed: 1}")
    assert done.returncode == 0 and done.stdout.strip() == str(out) and not out.exists(), done.stderr
    done, out = _check_command(tmp_path, "--seed", "2", "--plan", "{workloads: [sleep], ns: [10], seed: 1}")
    assert _refused_in_one_line(done, out) == "error: --seed 2 contradicts seed: 1 in --plan; give it once"


def test_every_option_of_the_command_line_says_what_it_does(monkeypatch):
    """`python -m bench_src COMMAND --help` explains every option: `--results-dir` of check and run
    (where the samples go, and its default name), `build --force`, `results-dir --profile/--seed`,
    `report --width/--height` had none."""
    import argparse

    from bench_src.__main__ import parse_args

    made = []

    def keep(self, args=None, namespace=None):
        made.append(self)
        raise SystemExit(0)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", keep)
    with pytest.raises(SystemExit):
        parse_args([])
    commands = next(a for a in made[0]._actions if isinstance(a, argparse._SubParsersAction)).choices
    silent = [(name, action.option_strings[-1]) for name, sub in commands.items() for action in sub._actions
              if action.option_strings and not action.help]
    assert silent == []
    results_dir = next(a for a in commands["check"]._actions if "--results-dir" in a.option_strings)
    assert "data/results/<profile>-<commit>[-dirty]-<plan digest>" in results_dir.help
