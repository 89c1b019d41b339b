"""environment.yml, pyproject.toml and requirements.lock pin the same versions."""
import re
import tomllib

import yaml

from bench_src import paths


def pins(lines):
    out = {}
    for line in lines:
        m = re.match(r"^\s*([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_environment_yml_mirrors_pyproject():
    project = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"]
    declared = pins(project["dependencies"])
    env = yaml.safe_load((paths.ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert pins(pip_section) == declared
    py = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert project["requires-python"] == ">=" + py.split("=", 1)[1]


def test_lock_file_holds_every_direct_pin():
    project = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"]
    locked = pins((paths.ROOT / "requirements.lock").read_text().splitlines())
    for name, version in pins(project["dependencies"]).items():
        assert locked.get(name) == version, name
