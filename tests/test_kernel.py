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


QUIET_PROBE = """
import errno, json, logging, zmq
def passes(exc):
    record = logging.LogRecord("tornado.general", logging.ERROR, "zmqstream.py", 1,
                               "Uncaught exception in ZMQStream callback", None, (type(exc), exc, None))
    return bool(logging.getLogger("tornado.general").filter(record))
print(json.dumps({"closed": passes(zmq.error.ZMQError(errno.ENOTSOCK)),
                  "other_zmq": passes(zmq.error.ZMQError(errno.EAGAIN)),
                  "other": passes(OSError(errno.ENOTSOCK, "not zmq"))}))
"""


def test_the_engines_kernel_drops_only_the_log_of_a_socket_closed_at_its_shutdown(tmp_path):
    """A flush on the kernel's control thread after its main thread closed the output's sockets
    logged a ZMQError traceback (ENOTSOCK) below a failed cell's one line: the engine's kernel
    drops that record, and only that one."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(QUIET_PROBE)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "quiet.ipynb")
    seen = {}
    for engine in (kernel.NAME, None):
        out = tmp_path / f"quiet-{engine}.ipynb"
        pm.execute_notebook(str(tmp_path / "quiet.ipynb"), str(out), progress_bar=False, kernel_name="python3",
                            engine_name=engine)
        seen[engine] = json.loads("".join("".join(o.get("text", "")) for c in json.loads(out.read_text())["cells"]
                                          for o in c.get("outputs", [])))
    assert seen[kernel.NAME] == {"closed": False, "other_zmq": True, "other": True}, seen
    assert seen[None] == {"closed": True, "other_zmq": True, "other": True}, "papermill's own kernel logs all"


def test_a_kernel_directory_left_by_a_killed_engine_is_removed_by_the_next(tmp_path, monkeypatch):
    """The private directory is locked while its engine lives: one that a killed engine (kill -9)
    left behind is removed by the next engine; one without a lock, or held by a live process, stays."""
    import tempfile

    from bench_src.store import DirLock
    from locks import held_elsewhere

    shared = tmp_path / "tmp"
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    dead, alive, old_style = (shared / f"{kernel.KERNEL_DIR_PREFIX}{n}" for n in ("dead", "alive", "old"))
    for d in (dead, alive, old_style):
        d.mkdir()
        (d / "kernel-1").write_text("")
    (dead / ".lock").write_text("999999 2020-01-01\n")  # no process holds it
    with held_elsewhere(alive / ".lock"):
        info = probe(tmp_path, engine_name=kernel.NAME)
        assert Path(info["ip"]).parent.parent == shared
    assert not dead.exists() and alive.exists() and old_style.exists()
    assert sorted(p.name for p in shared.iterdir()) == sorted([alive.name, old_style.name]), "its own is removed"
    assert DirLock.held_by(alive / ".lock") is None


def test_make_run_selects_the_engine():
    # make run executes run.ipynb through `python -m bench_src notebook`, which is papermill with this engine
    import inspect

    from bench_src import __main__ as cli
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    assert "$(BIN)/python -m bench_src notebook notebooks/run.ipynb \"$$partial\" " in makefile
    assert "engine_name=kernel.NAME" in inspect.getsource(cli.notebook_command)


def test_a_failed_cell_is_its_one_line_not_papermills_traceback(tmp_path):
    """papermill's command printed its own frames before the cell's error line; `python -m bench_src
    notebook` (make run's) prints the cell's error as the cell showed it: one line for a user's error,
    with the command line's exit status for it (2), where it exited 1 as for any failed cell."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "bench_src", "notebook", "notebooks/run.ipynb",
                           str(tmp_path / "o.ipynb"), "-p", "progress", "maybe", "-p", "results_dir", str(tmp_path / "r")],
                          cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "Executing" not in proc.stderr, "papermill's bar of cells cuts into the run's progress lines"
    assert proc.stderr.rstrip().splitlines()[-1] == ("error: progress must be a boolean (true/false, yes/no, on/off, "
                                                     "1/0), got 'maybe'"), proc.stderr[-2000:]
    executed = json.loads((tmp_path / "o.ipynb").read_text())
    assert any(o.get("output_type") == "error" for c in executed["cells"] for o in c.get("outputs", []))


def test_papermills_own_command_with_the_engine_shows_a_bad_parameter_in_one_line(tmp_path):
    """`papermill notebooks/run.ipynb out.ipynb --engine bench -p profile nosuch` printed papermill's
    frames (click, execute_notebook, raise_for_execution_errors) and papermill's banner of the cell
    above the first cell's one line; the engine has the process show the cell's error alone, and
    the command still fails."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "papermill", "notebooks/run.ipynb", str(tmp_path / "o.ipynb"),
                           "--engine", kernel.NAME, "--no-progress-bar", "-p", "profile", "nosuch",
                           "-p", "results_dir", str(tmp_path / "r")],
                          cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "Exception encountered" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.rstrip().splitlines()[-1] == ("error: unknown profile 'nosuch'; allowed: quick, article, "
                                                     "article-full, memory, kernel-article"), proc.stderr[-2000:]
    assert not (tmp_path / "r").exists()


def test_a_failed_cell_ends_the_process_as_the_cell_showed_it_and_any_other_error_as_before(monkeypatch, capsys):
    import sys

    from papermill.exceptions import PapermillExecutionError

    seen = []
    monkeypatch.setattr(sys, "excepthook", lambda *exc: seen.append(exc[0]))
    kernel.show_failed_cells()
    kernel.show_failed_cells()  # once per process: the hook is not wrapped twice
    one_line = PapermillExecutionError(0, 3, "plan = ...", "ValueError", "bad", ["error: bad"])
    frames = PapermillExecutionError(0, 3, "x", "TypeError", "no", ["Traceback", "  File ...", "TypeError: no"])
    for error in (one_line, frames, KeyError("k")):
        sys.excepthook(type(error), error, None)
    assert capsys.readouterr().err == "error: bad\nTraceback\n  File ...\nTypeError: no\n"
    assert seen == [KeyError], "any other error goes to the hook that was there"


def test_a_failed_cells_exit_status_is_the_command_lines_for_its_error():
    from types import SimpleNamespace

    from bench_src import api

    def status(error: BaseException, traceback=None) -> int:
        return api.failed_cell_status(type(error).__name__, str(error),
                                      [api.error_line(error)] if traceback is None else traceback)

    assert status(ValueError("profile must be a name")) == 2  # as `check` and `run` exit for it
    assert status(api.RunInterrupted(SimpleNamespace(ended="SIGINT"), "d")) == 130
    assert status(api.RunInterrupted(SimpleNamespace(ended="SIGTERM"), "d")) == 143
    assert api.RunInterrupted(SimpleNamespace(ended="SIGTERM"), "d").status == 143
    assert status(TypeError("a bug"), ["Traceback", "TypeError: a bug"]) == 1  # its frames shown: not a user's


def test_ctrl_c_and_sigterm_are_passed_on_to_the_kernel_and_the_third_is_papermills_own(tmp_path):
    """The kernel runs in a session of its own: a terminal's Ctrl-C or a SIGTERM to make's process
    group reaches papermill alone.  The engine sends each on to the kernel's process (where the run
    ends cleanly and says how to resume) instead of dying of it; a third is papermill's own again."""
    import signal
    import subprocess
    import sys

    import pytest

    # a stand-in kernel: reports each signal it receives, then exits on SIGTERM.  It takes them
    # with sigwait, not in a handler: CPython checks for signals inside a buffered write, after
    # each raw write, so a SIGTERM arriving as the SIGINT handler's print finished ran the SIGTERM
    # handler inside that print, whose sys.exit unwound through it: the child could end with status
    # 0 and without "15" reaching the pipe (once in a clean-clone run; at will with the first
    # print's write held on a full pipe)
    script = ("import signal\n"
              "wanted = {signal.SIGINT, signal.SIGTERM}\n"
              "signal.pthread_sigmask(signal.SIG_BLOCK, wanted)\n"
              "print('ready', flush=True)\n"
              "while True:\n"
              "    s = signal.sigwait(wanted)\n"
              "    print(int(s), flush=True)\n"
              "    if s == signal.SIGTERM: break\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert child.stdout.readline().strip() == "ready"

    class Provisioner:
        pid = child.pid

    class Manager:
        provisioner = Provisioner()

    # papermill's handlers as a terminal's process has them (whatever the test process had before)
    outer = signal.signal(signal.SIGINT, signal.default_int_handler), signal.getsignal(signal.SIGTERM)
    try:
        before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        with kernel._Forward([Manager()]) as forward:
            signal.raise_signal(signal.SIGINT)  # papermill is not interrupted: the kernel is
            assert child.stdout.readline().strip() == str(int(signal.SIGINT))
            signal.raise_signal(signal.SIGTERM)
            assert child.stdout.readline().strip() == str(int(signal.SIGTERM))
            child.wait(timeout=10)
            assert forward.count == 2
            with pytest.raises(KeyboardInterrupt):  # the third: the handler papermill had (here Python's)
                signal.raise_signal(signal.SIGINT)
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    finally:
        signal.signal(signal.SIGINT, outer[0])


def test_the_engines_kernel_is_not_interrupted_at_its_shutdown_unless_the_user_forced_the_end(tmp_path):
    # jupyter_client sends SIGINT before every shutdown; a kernel still leaving a failed cell's
    # request took it there and wrote "KeyboardInterrupt caught in kernel." above the cell's one line
    import asyncio
    import signal

    sent = []

    class Provisioner:  # what the manager signals through (jupyter_client's LocalProvisioner)
        has_process = True

        async def send_signal(self, signum):
            sent.append(signum)

    forward = kernel._Forward([])
    kernels: list = []
    km = kernel.manager_class(str(tmp_path), kernels, forward)(kernel_name="python3")
    assert kernels == [km] and km.transport == "ipc" and km.ip == str(tmp_path / "kernel")
    km.provisioner = Provisioner()
    asyncio.run(km._async_interrupt_kernel())
    assert sent == [signal.SIGINT], "an interrupt asked for while the kernel runs is sent"
    km.shutting_down = True
    asyncio.run(km._async_interrupt_kernel())
    assert sent == [signal.SIGINT], "none at the shutdown after the notebook"
    forward.count = kernel.FORWARD_AT_MOST + 1  # the third Ctrl-C: papermill's own, a cell may still run
    asyncio.run(km._async_interrupt_kernel())
    assert sent == [signal.SIGINT, signal.SIGINT]
