"""The papermill engine `bench` (make run's): the notebook's kernel on Unix sockets in a private
directory, not on TCP ports any user of the machine can connect to."""
import json
from pathlib import Path

import nbformat
import papermill as pm

from bench_src.run import kernel

PROBE = """
import json, os, stat
from ipykernel import get_connection_info
info = get_connection_info(unpack=True)
home = os.path.dirname(info["ip"])
print(json.dumps({"transport": info["transport"], "ip": info["ip"],
                  "mode": stat.S_IMODE(os.stat(home).st_mode) if info["transport"] == "ipc" else None}))
"""


def probe(tmp_path: Path, **engine) -> dict:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    source, out = tmp_path / "probe.ipynb", tmp_path / f"out-{len(engine)}.ipynb"
    nbformat.write(nb, source)
    pm.execute_notebook(str(source), str(out), progress_bar=False, kernel_name="python3", **engine)
    text = "".join("".join(o.get("text", "")) for c in json.loads(out.read_text())["cells"]
                   for o in c.get("outputs", []))
    return json.loads(text)


def test_the_bench_engine_runs_the_kernel_on_unix_sockets_in_a_private_directory(tmp_path):
    info = probe(tmp_path, engine_name=kernel.NAME)
    assert info["transport"] == "ipc" and info["mode"] == 0o700, info
    assert Path(info["ip"]).parent.name.startswith("bench-kernel-")
    assert not Path(info["ip"]).parent.exists(), "the directory and its sockets are removed afterwards"
    # what it replaces: papermill's default engine puts the kernel on TCP ports
    assert probe(tmp_path, engine_name=None)["transport"] == "tcp"


def test_make_run_selects_the_engine():
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    assert f"papermill notebooks/run.ipynb \"$$partial\" --engine {kernel.NAME} " in makefile
