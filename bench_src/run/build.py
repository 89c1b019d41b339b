"""Build the launcher and both benchmark programs (release, locked dependencies).

A build is skipped when the sources and the toolchain are unchanged since the last one and the
binary is the one that build made: a stamp file beside each binary holds the hash of the first two
and the binary's sha256 (a binary changed since, by hand or on disk, is built again).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .. import paths
from ..catalogue import LANGS

INSTALL_HINTS = {
    "go": "install Go 1.26 or newer (https://go.dev/dl/) and put `go` on PATH",
    "cargo": "install Rust with rustup (https://rustup.rs) and put `cargo` on PATH",
    "rustc": "install Rust with rustup (https://rustup.rs) and put `rustc` on PATH",
    "cc": "install a C compiler (Debian: apt-get install gcc)",
}


class BuildError(RuntimeError):
    pass


@dataclass(frozen=True)
class Target:
    name: str
    tools: tuple[str, ...]
    sources: Path
    output: Path


def require_tool(tool: str, purpose: str) -> str:
    found = shutil.which(tool)
    if not found:
        raise BuildError(f"`{tool}` was not found on PATH; it is needed to build {purpose}: {INSTALL_HINTS[tool]}")
    return found


def _user_config_dir() -> Path | None:
    """The directory Go takes as the user's configuration directory (Go's os.UserConfigDir)."""
    if os.environ.get("XDG_CONFIG_HOME"):
        return Path(os.environ["XDG_CONFIG_HOME"])
    return Path(os.environ["HOME"]) / ".config" if os.environ.get("HOME") else None


@contextmanager
def go_environment() -> Iterator[dict[str, str]]:
    """The environment of every go command the harness runs: the user's, with Go's telemetry off.

    `go version` and `go build` count their own use in files under the user's configuration
    directory (`~/.config/go/telemetry`) unless its mode file says off, and no variable or flag turns
    that off for one call (GOTELEMETRY is read-only). Of that directory the go command reads two
    things only: the telemetry mode and the default location of GOENV, the file of `go env -w`. So
    each call gets a private configuration directory whose telemetry mode is off, removed after it,
    and the user's own GOENV is pinned, so that their `go env -w` settings still apply."""
    config = _user_config_dir()
    if config is None:  # no configuration directory: Go has nowhere to count into either
        yield dict(os.environ)
        return
    goenv = os.environ.get("GOENV") or str(config / "go" / "env")
    with tempfile.TemporaryDirectory(prefix="bench-go-config-") as private:
        mode = Path(private) / "go" / "telemetry" / "mode"
        mode.parent.mkdir(parents=True)
        mode.write_text("off\n")
        yield dict(os.environ, XDG_CONFIG_HOME=private, GOENV=goenv)


def tool_version(tool: str, *args: str, env: dict[str, str] | None = None) -> str:
    if not shutil.which(tool):
        return "missing"
    out = subprocess.run([tool, *args], capture_output=True, text=True, env=env)
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0] if text else "unknown"


def _go_version() -> str:
    with go_environment() as env:
        return tool_version("go", "version", env=env)


def toolchains() -> dict[str, str]:
    return {
        "go": _go_version(),
        "rustc": tool_version("rustc", "--version"),
        "cargo": tool_version("cargo", "--version"),
        "cc": tool_version("cc", "--version"),
    }


def source_hash(root: Path, toolchain: str) -> str:
    h = hashlib.sha256(toolchain.encode())
    files = [root] if root.is_file() else sorted(
        p for p in root.rglob("*")
        if p.is_file() and "target" not in p.relative_to(root).parts
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    for p in files:
        h.update(str(p.relative_to(root.parent)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _run(cmd: list[str], cwd: Path, what: str, env: dict | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-30:])
        raise BuildError(f"building {what} failed ({' '.join(cmd)}, exit {proc.returncode}):\n{tail}")


def _build_launcher() -> None:
    _run(["cc", "-O2", "-Wall", "-o", str(paths.launcher()), str(paths.LAUNCHER_SRC)], paths.ROOT, "the launcher")


def _build_go() -> None:
    with go_environment() as env:
        env.setdefault("CGO_ENABLED", "1")
        _run(["go", "build", "-trimpath", "-mod=readonly", "-o", str(paths.program("go")), "."],
             paths.GOBENCH_SRC, "gobench", env)


def _build_rust() -> None:
    _run(["cargo", "build", "--release", "--locked", "--quiet"], paths.RUSTBENCH_SRC, "rustbench")
    target = Path(os.environ.get("CARGO_TARGET_DIR", paths.RUSTBENCH_SRC / "target"))
    shutil.copy2(target / "release" / "rustbench", paths.program("rust"))


TARGETS = {
    "launcher": (Target("launcher", ("cc",), paths.LAUNCHER_SRC, paths.launcher()), _build_launcher),
    "go": (Target("gobench", ("go",), paths.GOBENCH_SRC, paths.program("go")), _build_go),
    "rust": (Target("rustbench", ("cargo", "rustc"), paths.RUSTBENCH_SRC, paths.program("rust")), _build_rust),
}


def source_digests() -> dict[str, str]:
    """The sha256 of each program's source tree (no toolchain in it), named as `binary_digests` names
    the binaries: each session records them, so that runs of two machines built from the same
    commit string (a `-dirty` tree, a copy without git) are known to share their source, or not."""
    return {target.output.name: source_hash(target.sources, "") for target, _ in TARGETS.values()}


def harness_digest() -> str:
    """The sha256 of the harness's own code (bench_src: its Python files and the result keys): the
    hosts of a cluster run must run the client's, as their programs must be the client's."""
    root = paths.ROOT / "bench_src"
    h = hashlib.sha256()
    for p in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".json", ".c")
                    and "__pycache__" not in p.parts):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def file_sha256(path: Path) -> str | None:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


def binary_digests(bin_dir: Path | None = None) -> dict[str, str | None]:
    """The sha256 of the launcher and both programs as they are now (None: not built), in data/bin
    or `bin_dir` (a cluster host's): each session records them, so that every sample is tied to
    the binaries that took it."""
    found = [paths.launcher(), paths.program("go"), paths.program("rust")]
    return {p.name: file_sha256(p if bin_dir is None else Path(bin_dir) / p.name) for p in found}


def file_identity(path: Path) -> tuple[int, int, int, int] | None:
    """What tells one file at a path from another put there (device, inode, size, modification
    time): a rebuild or a copy changes it; None when the file is not there."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class BinaryWatch:
    """The launcher and the programs as a session found them (their digests are the session's):
    `changed()` names those that were replaced since, so that no sample is taken by a program other
    than the one its session records."""

    def __init__(self, paths_: list[Path]):
        self.seen = {Path(p): file_identity(Path(p)) for p in paths_}

    def changed(self) -> list[Path]:
        return [p for p, identity in self.seen.items() if file_identity(p) != identity]


def evict_from_page_cache(paths_: list[Path]) -> list[str]:
    """Drop the binaries' pages from the page cache (posix_fadvise DONTNEED), so that every run
    starts from the same state: a binary's resident size depends on how its file sits in the page
    cache (a freshly linked Go binary, cached in large folios, measured 1.5 MiB more peak RSS than
    the same bytes read back from disk).  Returns the files it could not evict, with why."""
    failed = []
    for p in paths_:
        try:
            fd = os.open(p, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
        except (OSError, AttributeError) as exc:
            failed.append(f"{p}: {exc}")
    return failed


def check_tools(languages: tuple[str, ...] | list[str] = LANGS) -> None:
    """Fail early, naming the missing tool, before anything is built."""
    for key in ("launcher", *languages):
        target, _ = TARGETS[key]
        for tool in target.tools:
            require_tool(tool, target.name)


def build(languages: tuple[str, ...] | list[str] = LANGS, force: bool = False, log=print) -> dict:
    """Build what the languages need; return the toolchain versions and what was (re)built."""
    check_tools(languages)
    paths.BIN.mkdir(parents=True, exist_ok=True)
    versions = toolchains()
    built = {}
    for key in ("launcher", *languages):
        target, do_build = TARGETS[key]
        stamp = target.output.with_name(target.output.name + ".stamp")
        digest = source_hash(target.sources, " ".join(versions[t] for t in target.tools))
        if not force and target.output.exists() and stamp.exists() \
                and stamp.read_text() == f"{digest} {file_sha256(target.output)}":
            built[target.name] = "up to date"
            continue
        log(f"building {target.name} ...")
        stamp.unlink(missing_ok=True)  # an interrupted build leaves no stamp: the next one starts again
        do_build()
        stamp.write_text(f"{digest} {file_sha256(target.output)}")
        built[target.name] = "built"
    return {"toolchains": versions, "builds": built}
