"""One owner per rule: a name, a default or a constant that several modules need is written in one
module and read from it everywhere else.  Each test scans the harness's source (docstrings aside)
for a rule written again outside its owner."""
import ast
from pathlib import Path

from bench_src import paths

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "bench_src"


def _docstrings(tree: ast.AST) -> set[int]:
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
    docs = _docstrings(tree)
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
