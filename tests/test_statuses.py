"""The statuses a sample record can carry have one owner, bench_src/statuses.py: the README lists
the same names with the same meanings, every other module of the harness reads its constants, and
the programs' result line carries no status (the harness gives each sample its own)."""
import ast
import re
from pathlib import Path

from bench_src import statuses
from bench_src.run.measure import LAUNCHER_KEYS, RESULT_KEYS
from bench_src.store.ledger import RETRY_STATUSES

from test_owners import docstring_nodes

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "bench_src"
OWNER = "bench_src/statuses.py"

# A literal that reads as a status but is another thing, where it is another thing.
# A status's word that means something else: written once, as a named constant of its own
NOT_A_STATUS = {
    ("bench_src/analysis/published.py", "failed"): "CLAIM_FAILED, the outcome of a published claim whose cells failed",
    ("bench_src/run/measure.py", "timeout"): "KILLED_BY_TIMEOUT, the launcher's killed_by word (benchlaunch.c)",
    ("bench_src/run/measure.py", "memory_limit"): "KILLED_BY_MEMORY_GUARD, the launcher's killed_by word",
}


def readme_statuses() -> dict[str, str]:
    """The README's row of the `status` column: each name and the meaning in brackets after it."""
    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| `status` |"))
    cell = row.split("|")[2]
    return dict(re.findall(r"`(\w+)` \(([^()]*)\)", cell))


def status_literals(source: str) -> list[tuple[int, str]]:
    """(line, name) of every string constant that is a status's name, docstrings and subscript keys
    (a column or a dict's key of that name, such as the frame's `ok` column) aside."""
    tree = ast.parse(source)
    skip = docstring_nodes(tree) | {id(node.slice) for node in ast.walk(tree) if isinstance(node, ast.Subscript)}
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and node.value in statuses.MEANINGS and id(node) not in skip)


def test_the_readme_lists_every_status_with_its_meaning():
    listed = readme_statuses()
    assert list(listed) == list(statuses.MEANINGS)
    assert listed == statuses.MEANINGS


def test_each_constant_is_a_status_of_the_table():
    constants = {name: value for name, value in vars(statuses).items() if name.isupper() and isinstance(value, str)}
    assert sorted(constants.values()) == sorted(statuses.MEANINGS)
    assert all(name == value.upper() for name, value in constants.items())


def test_the_check_sees_a_status_written_out_and_not_a_column_or_a_docstring():
    source = ('def f(df):\n    """Rows with status ok."""\n    df["ok"] = df["status"] == "ok"\n'
              '    return {"status": "skipped"}, OK\n')
    assert status_literals(source) == [(3, "ok"), (4, "skipped")]


def test_no_status_is_written_out_of_its_owner():
    found = []
    for path in sorted(HARNESS.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel == OWNER:
            continue
        literals = status_literals(path.read_text())
        found += [f"{rel}:{line} {name!r}" for line, name in literals if (rel, name) not in NOT_A_STATUS]
        for (file, word), why in NOT_A_STATUS.items():  # the other meaning's one constant, no more
            if file == rel:
                count = sum(name == word for _, name in literals)
                assert count == 1, f"{rel}: {word!r} written {count} times; {why}"
    assert found == []


def test_a_resume_takes_again_the_statuses_of_samples_that_did_not_run():
    assert set(RETRY_STATUSES) == {statuses.SKIPPED, statuses.HOST_LOST}


def test_the_programs_and_the_launcher_report_no_status():
    assert "status" not in {k["key"] for k in RESULT_KEYS}
    assert "status" not in LAUNCHER_KEYS
