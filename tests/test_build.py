import os
import shutil

import pytest

from bench_src.run import build


def test_a_missing_toolchain_is_named(tmp_path, monkeypatch):
    # a PATH with the C compiler and Rust but no Go
    for tool in ("cc", "cargo", "rustc"):
        os.symlink(shutil.which(tool), tmp_path / tool)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(build.BuildError, match=r"`go` was not found on PATH; it is needed to build gobench"):
        build.build(("go", "rust"))
    build.check_tools(("rust",))  # what is there passes


def test_a_second_build_is_skipped(built):
    again = build.build(("go", "rust"), log=lambda *_: None)
    assert set(again["builds"].values()) == {"up to date"}
    assert again["toolchains"]["go"].startswith("go version")


def test_ctrl_c_during_a_build_is_one_line_and_the_next_build_starts_again(tmp_path):
    """Ctrl-C (SIGINT to the whole foreground group) while `build --force` compiles: one line, exit
    130, and no stamp left for the interrupted program, so the next build does not take it as done.
    The programs are stand-ins in tmp_path: `sleep` plays the compiler."""
    import signal
    import subprocess
    import sys
    import textwrap

    (tmp_path / "src").write_text("int main(void) { return 0; }\n")
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from bench_src.__main__ import main
        from bench_src.run import build
        d = Path({str(tmp_path)!r})
        def fake(name):
            return build.Target(name, ("cc",), d / "src", d / name)
        build.TARGETS = {{
            "launcher": (fake("launcher"), lambda: (d / "launcher").write_text("built")),
            "go": (fake("gobench"), lambda: build._run(["sleep", "60"], d, "gobench")),
        }}
        (d / "gobench").write_text("an earlier build")
        (d / "gobench.stamp").write_text("the digest of the earlier build")
        sys.exit(main(["build", "--force", "--languages", "go"]))
    """)
    # SIGINT at its default in the child: a shell without job control starts background jobs (a
    # test run launched with `&`) with SIGINT ignored, and Python then never raises KeyboardInterrupt
    proc = subprocess.Popen([sys.executable, "-u", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in proc.stdout:
        if line.startswith("building gobench"):
            break
    deadline = 50
    while deadline and "sleep" not in _child_names(proc.pid):
        deadline -= 1
        __import__("time").sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert err == "interrupted: the build stopped; the next build starts again what it had not finished\n", err
    assert (tmp_path / "launcher.stamp").exists() and not (tmp_path / "gobench.stamp").exists()


def _child_names(pid):
    """The names of the processes below `pid` (those that end while being read are left out)."""
    import psutil
    names = []
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return names
    for child in children:
        try:
            names.append(child.name())
        except psutil.NoSuchProcess:
            pass
    return names


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the go command")
def test_the_go_commands_count_nothing_in_the_users_configuration_and_keep_their_go_env(tmp_path, monkeypatch):
    """`go version` (every run records it) and `go build` would write Go's telemetry counters under
    the user's configuration directory; the harness's go commands write nothing there, and still
    read the user's `go env -w` file."""
    import subprocess

    home = tmp_path / "home"
    (home / ".config" / "go").mkdir(parents=True)
    (home / ".config" / "go" / "env").write_text("GOFLAGS=-tags=from_the_users_go_env\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GOENV", raising=False)
    config = home / ".config"
    before = sorted(p.relative_to(config) for p in config.rglob("*"))
    assert build.toolchains()["go"].startswith("go version go")
    assert sorted(p.relative_to(config) for p in config.rglob("*")) == before
    with build.go_environment() as env:
        flags = subprocess.run(["go", "env", "GOFLAGS", "GOTELEMETRY"], env=env, capture_output=True, text=True)
    assert flags.stdout.split() == ["-tags=from_the_users_go_env", "off"], flags.stderr
    assert sorted(p.relative_to(config) for p in config.rglob("*")) == before
    # without it, the same call counts into the configuration directory (the check can fail)
    subprocess.run(["go", "version"], capture_output=True, check=True)
    assert list((home / ".config" / "go").rglob("*.count")), "go version counted nothing: the test shows nothing"


def test_a_binary_changed_since_its_build_is_built_again(tmp_path, monkeypatch):
    # bytes appended to data/bin/gobench left `build` saying "up to date" (its stamp held the
    # sources' hash alone), and a run then took samples with the changed program
    (tmp_path / "src").write_text("int main(void) { return 0; }\n")
    made = []

    def make():
        made.append(1)
        (tmp_path / "launcher").write_text("built")

    monkeypatch.setattr(build, "TARGETS", {"launcher": (build.Target("launcher", ("cc",), tmp_path / "src",
                                                                     tmp_path / "launcher"), make)})
    assert build.build((), log=lambda *_: None)["builds"] == {"launcher": "built"}
    assert build.build((), log=lambda *_: None)["builds"] == {"launcher": "up to date"}
    with open(tmp_path / "launcher", "a") as f:
        f.write("X")
    assert build.build((), log=lambda *_: None)["builds"] == {"launcher": "built"} and len(made) == 2
    assert (tmp_path / "launcher").read_text() == "built"
