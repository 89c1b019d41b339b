"""The layout of the harness as docs/code-map.md draws it: every module on a floor, no import that
runs back up a floor (function-local imports included), and every path the map names present."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE_MAP = ROOT / "docs" / "code-map.md"


def floors() -> dict[str, int]:
    """Module path prefix -> floor, from the map's table (`| floor | paths | owns |`)."""
    out = {}
    for line in CODE_MAP.read_text().splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|(.*?)\|", line)
        if m:
            for path in re.findall(r"`([^`]+)`", m.group(2)):
                out[path.removesuffix(".py").removesuffix("/").replace("/", ".")] = int(m.group(1))
    return out


def floor_of(module: str, table: dict[str, int]) -> int | None:
    best = max((p for p in table if module == p or module.startswith(p + ".")), key=len, default=None)
    return table[best] if best else None


def module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def imports(source: str, module: str) -> list[tuple[int, str]]:
    """(line, name) of every bench_src import in a module's source, at any depth (inside functions
    too); a name is module.attribute for `from module import attribute`."""
    package = module.removesuffix(".__init__") if module.endswith(".__init__") else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            elif (node.module or "").startswith("bench_src"):
                target = node.module
            else:
                continue
            out += [(node.lineno, f"{target}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("bench_src")]
    return out


def test_the_map_places_every_module_of_the_harness():
    table = floors()
    assert len(table) >= 8, table
    modules = [module_of(p) for p in (ROOT / "bench_src").rglob("*.py")]
    unplaced = [m for m in modules if m != "bench_src.__init__" and floor_of(m, table) is None]
    assert unplaced == [], f"docs/code-map.md places no floor for {unplaced}"


def test_no_import_runs_back_up_a_floor():
    table = floors()
    upward = []
    for path in sorted((ROOT / "bench_src").rglob("*.py")):
        own = floor_of(module_of(path), table)
        for line, target in imports(path.read_text(), module_of(path)):
            theirs = floor_of(target, table)
            if own is not None and theirs is not None and theirs > own:
                upward.append(f"{path.relative_to(ROOT)}:{line} (floor {own}) imports {target} (floor {theirs})")
    assert upward == []


def test_the_check_sees_an_upward_import_inside_a_function():
    """The check itself: function-local imports of higher floors are found, relative or absolute."""
    source = "def f():\n    from ..analysis import rules\n    from .. import api\n    import bench_src.run.build\n"
    found = [t for _, t in imports(source, "bench_src.plan.probe")]
    table = floors()
    assert found == ["bench_src.analysis.rules", "bench_src.api", "bench_src.run.build"]
    assert [floor_of(t, table) for t in found] == [5, 7, 6] and floor_of("bench_src.plan.probe", table) == 3


def test_every_path_the_map_names_exists():
    """The map stays true: a path it names that is moved or removed fails here."""
    text = CODE_MAP.read_text()
    named = sorted({p for p in re.findall(r"`([^`\s]+)`", text)
                    if "/" in p or p.endswith((".py", ".md", ".json", ".rs", ".go", ".ipynb"))})
    paths = [p for p in named if "/" in p]
    assert len(paths) >= 30, paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert missing == [], f"docs/code-map.md names paths that do not exist: {missing}"
    bare = [p for p in named if "/" not in p]  # a file named without its folder must be one of the folders named
    folders = [ROOT / p for p in paths if (ROOT / p).is_dir()] + [(ROOT / p).parent for p in paths]
    unknown = [b for b in bare if not any((f / b).exists() for f in folders)]
    assert unknown == [], f"docs/code-map.md names files found in none of its folders: {unknown}"


# What reads or writes files: Python's open, pathlib's and pandas' readers and writers, a
# directory's listing, and the store's own readers of a results directory.
FILE_CALLS = {"open", "read_text", "write_text", "read_bytes", "write_bytes", "read_csv", "to_csv", "read_parquet",
              "to_parquet", "read_json", "to_json", "read_table", "read_excel", "read_pickle", "to_pickle",
              "loadtxt", "genfromtxt", "fromfile", "savetxt", "save", "savez", "glob", "rglob", "iterdir",
              "listdir", "scandir", "walk", "ResultsStore", "load", "read_timeline"}
# published.py reads the published figures tracked in data/reference/ (article_table, other_posts)
READS_REFERENCE = {"bench_src/analysis/published.py": {"read_csv"}}


def file_calls(source: str) -> list[tuple[int, str]]:
    """(line, name) of every call in a module to one of FILE_CALLS, as a function or a method."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in FILE_CALLS:
                out.append((node.lineno, name))
    return out


def test_the_check_sees_a_file_read_in_a_function_or_a_method():
    source = "def f(d):\n    s = ResultsStore(d)\n    return s.read_timeline('x'), open(d), d.glob('*'), len(d)\n"
    assert sorted(file_calls(source)) == [(2, "ResultsStore"), (3, "glob"), (3, "open"), (3, "read_timeline")]
    others = "def f(p):\n    return pd.read_json(p), os.listdir(p), np.loadtxt(p), os.scandir(p), os.walk(p)\n"
    assert sorted(n for _, n in file_calls(others)) == ["listdir", "loadtxt", "read_json", "scandir", "walk"]


def test_the_analysis_reads_no_file():
    """The statistics take frames and return frames: what is read from a results directory is read
    by the store (bench_src/store/), and the analysis is given it."""
    reads = [f"{path.relative_to(ROOT)}:{line} {name}"
             for path in sorted((ROOT / "bench_src" / "analysis").rglob("*.py"))
             for line, name in file_calls(path.read_text())
             if name not in READS_REFERENCE.get(str(path.relative_to(ROOT)), ())]
    assert reads == []


# The modules that import by a name given at run time: importing them at all is what the check
# looks for, so that an alias (`from importlib import import_module as load`) cannot hide a call
LOADERS = {"importlib", "pkgutil", "runpy", "imp", "zipimport"}


def dynamic_imports(source: str) -> list[int]:
    """Lines of a module that import by name at run time (__import__, or any import of a module of
    LOADERS, under whatever name), which the check of the floors above cannot read."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in ("import_module", "__import__"):
                out.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] in LOADERS for a in node.names):
            out.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in LOADERS:
            out.append(node.lineno)
    return sorted(set(out))


def test_no_module_imports_by_name_at_run_time():
    """Every import of the harness is a statement the floor check reads: none is made from a string."""
    assert dynamic_imports("import importlib\ndef f(x):\n    return importlib.import_module(x), __import__(x)\n") == [1, 3]
    # an alias, pkgutil's resolve_name and runpy, inside a function too
    assert dynamic_imports("def f(x):\n    from importlib import import_module as load\n    return load(x)\n") == [2]
    assert dynamic_imports("def f(x):\n    import pkgutil\n    return pkgutil.resolve_name(x)\n") == [2]
    assert dynamic_imports("import runpy as r\n") == [1]
    assert dynamic_imports("from . import importlib_notes\nimport json\n") == []
    found = [f"{path.relative_to(ROOT)}:{line}" for path in sorted((ROOT / "bench_src").rglob("*.py"))
             for line in dynamic_imports(path.read_text())]
    assert found == []


def listed_files() -> set[str]:
    """The files the map's last section lists: each bullet a folder of bench_src and the names of
    its files."""
    text = CODE_MAP.read_text().split("## Every file of the harness", 1)[1]
    out = set()
    for bullet in re.split(r"\n- ", "\n" + text.strip()):
        tokens = re.findall(r"`([^`]+)`", bullet)
        if tokens and tokens[0].startswith("bench_src/") and tokens[0].endswith("/"):
            out |= {tokens[0] + t for t in tokens[1:] if "." in t and " " not in t and "/" not in t}
    return out


def test_the_map_lists_every_file_of_the_harness():
    files = {str(p.relative_to(ROOT)) for p in (ROOT / "bench_src").rglob("*")
             if p.is_file() and "__pycache__" not in p.parts}
    listed = listed_files()
    assert sorted(files - listed) == [], "files docs/code-map.md does not list"
    assert sorted(listed - files) == [], "files docs/code-map.md lists that do not exist"


def test_the_profiles_sit_above_the_parameters_they_set():
    """profiles.py reads the parameters' table (which parameters a profile may set): it is a floor
    above parameters.py, so that the parameters never read the profiles (not even for a help text)."""
    table = floors()
    assert floor_of("bench_src.profiles", table) > floor_of("bench_src.parameters", table)
    assert floor_of("bench_src.plan", table) > floor_of("bench_src.profiles", table), "validation reads the profiles"


def test_the_command_lines_check_and_help_load_no_statistics_figures_or_runner(tmp_path):
    """`check` (validate a plan, print its directory), `--help` and a refused parameter import neither
    scipy, statsmodels, matplotlib nor the runner: api imports them in the calls that use them, and
    the `engines` help reads its margin from the rules.  A fresh interpreter, as a user's command."""
    import subprocess
    import sys

    heavy = ("scipy", "statsmodels", "matplotlib", "seaborn", "distributed", "bench_src.run.runner",
             "bench_src.analysis.compare", "bench_src.report.figures")
    probe = ("import sys\nfrom bench_src.__main__ import main\n"
             "for argv in ({check}, ['check', '--samples', 'many'], ['--help']):\n"
             "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy_roots} or m in {heavy}))\n")
    check = ["check", "--workloads", "[sleep]", "--ns", "[10]", "--results-dir", str(tmp_path / "r")]
    roots = {m for m in heavy if "." not in m}
    done = subprocess.run([sys.executable, "-c", probe.format(check=check, heavy_roots=roots, heavy=set(heavy))],
                          capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0] == str(tmp_path / "r") and "error: samples" in done.stderr, (done.stdout, done.stderr)
    assert "within ±1%" in done.stdout, done.stdout
    assert lines[-1] == "[]", lines[-1]


def test_every_constant_the_owners_table_names_is_defined_by_a_module_of_its_row():
    """A constant the "Who owns what" table names (`MARGIN`, `LOCK_NAME`, ...) is assigned in one of
    the Python files its row names: a constant moved to another module leaves no row pointing at a
    name its module no longer has."""
    owners = CODE_MAP.read_text().split("## Who owns what")[1].split("## Where a change goes")[0]
    missing = []
    for row in (line for line in owners.splitlines() if line.startswith("| ") and not line.startswith("| rule")):
        named = re.findall(r"`([^`]+)`", row)
        files = [ROOT / f for f in named if f.endswith(".py")]
        sources = [f.read_text() for f in files if f.is_file()]
        for name in (n for n in named if re.fullmatch(r"[A-Z][A-Z0-9_]+", n)):
            if not any(re.search(rf"^\s*{name}\s*(:[^=\n]*)?=", s, re.M) for s in sources):
                missing.append((name, [str(f.relative_to(ROOT)) for f in files]))
    assert missing == [], missing


# The kinds of change a contributor makes, each of which "Where a change goes" must place.
CHANGES = ("A workload", "A variant", "A plan parameter", "A profile", "A metric", "A statistic or a comparison",
           "A table", "A figure", "An export format", "A database server kind", "A notebook call")


def test_the_map_says_where_each_kind_of_change_goes():
    section = CODE_MAP.read_text().split("## Where a change goes")[1].split("\n## ")[0]
    placed = re.findall(r"^- \*\*([^*]+)\*\*", section, re.M)
    assert [c for c in CHANGES if c not in placed] == [], placed
