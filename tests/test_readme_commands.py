"""The README's example commands still pass the checks a run makes first: a later rule (such as the
fewest pairs a plan may decide from) must not leave an example behind that fails."""
import re
import shlex
import subprocess
import sys

import pytest
import yaml

from bench_src import api, paths

README = (paths.ROOT / "README.md").read_text()


def _notebook_markdown(name: str = "run.ipynb") -> str:
    import json
    cells = json.loads((paths.ROOT / "notebooks" / name).read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


# the README's examples and those run.ipynb shows its users
EXAMPLES = README + "\n" + _notebook_markdown()


def example_lines(prefix: str) -> list[str]:
    return [line.split("   #")[0].strip() for line in EXAMPLES.splitlines() if line.startswith(prefix)]


def test_the_papermill_examples_make_valid_plans():
    lines = example_lines(".venv/bin/papermill notebooks/run.ipynb ")
    assert len(lines) >= 3, lines
    for line in lines:
        args, given = shlex.split(line)[3:], {}
        for i, flag in enumerate(args):
            if flag in ("-p", "-r"):  # a parameter as papermill passes it: a string
                given[args[i + 1]] = args[i + 2]
            elif flag == "-y":
                given.update(yaml.safe_load(args[i + 1]))
        api.plan_from_parameters(**given)  # raises on anything a run would refuse


def test_the_command_line_examples_with_an_inline_plan_pass_the_check(tmp_path):
    lines = [x for x in example_lines(".venv/bin/python -m bench_src run ") if re.search(r"--plan '", x)]
    assert lines, "the README shows a run with an inline plan"
    for line in lines:
        args = shlex.split(line)[3:]
        args[0] = "check"
        done = subprocess.run([sys.executable, "-m", "bench_src", *args, "--results-dir", str(tmp_path / "r")],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (line, done.stderr)


DOCS = {name: (paths.ROOT / name).read_text() for name in ("README.md", "docs/cluster.md", "docs/report.md")}


def command_lines(text: str) -> list[str]:
    """The lines of the fenced code blocks that are not Python code, and the commands quoted inline."""
    lines, fenced, python = [], False, False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced, python = not fenced, line.strip() == "```python"
        elif fenced and not python:
            lines.append(line.strip())
    return lines + re.findall(r"`((?:\.venv/bin/)?(?:papermill|python|dask) [^`]*)`", text)


@pytest.mark.parametrize("name", sorted(DOCS) + ["run.ipynb", "analysis.ipynb", "reproduce_article.ipynb"])
def test_every_command_runs_in_a_fresh_clone_as_written(name):
    # `papermill ...` and `python -m bench_src ...` as written: "papermill: command not found", and the
    # system's python without the pinned dependencies (ModuleNotFoundError: psutil)
    text = DOCS[name] if name in DOCS else _notebook_markdown(name)
    commands = [c for c in command_lines(text) if re.match(r"(\.venv/bin/)?(papermill|python|dask) ", c)]
    assert commands, name
    bare = [c for c in commands if not c.startswith(".venv/bin/")]
    assert bare == [], "write the virtual environment's programs: .venv/bin/..."
    # papermill's own kernel listens on TCP (docs/security.md); a run shows its progress only with --stderr-file -
    runs = [c for c in commands if c.startswith(".venv/bin/papermill notebooks/")]
    assert all("--engine bench" in c for c in runs), [c for c in runs if "--engine bench" not in c]
    assert all("--stderr-file -" in c for c in runs if "notebooks/run.ipynb" in c)
