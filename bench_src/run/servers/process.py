"""The processes of the private servers: a free port, a pid file acted on only after checking what
runs there, a server started in its own session that dies with the harness, its log's last lines,
the one line of a tool's output that says what went wrong."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import textwrap
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child is dead for our purposes
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return True


def process_state(pid: int) -> str | None:
    """The kernel's one-letter state of a process (R, S, D, T for stopped by a signal, Z, ...), None
    when it cannot be read."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def is_server_process(pid: int, exe_name: str, datadir: Path) -> bool:
    """Whether `pid` runs the server binary `exe_name` on `datadir` (its executable and its command
    line), so that a PID reused by an unrelated process is never signalled."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if Path(exe.removesuffix(" (deleted)")).name != exe_name:
        return False
    want = str(datadir).encode()
    return any(a == want or a.endswith(b"=" + want) for a in args)


def read_pidfile(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def stop_verified(pidfile: Path, exe_name: str, datadir: Path, sig: int = signal.SIGTERM,
                  wait_s: float = 30, log=None) -> bool:
    """Stop a server left behind by a harness that was killed, named by its pid file, after checking
    that the PID is that server.  Returns True when a server was signalled."""
    pid = read_pidfile(pidfile)
    if pid is None or pid == os.getpid() or not pid_alive(pid):
        return False
    if not is_server_process(pid, exe_name, datadir):
        if log:
            log(f"{pidfile} names PID {pid}, which is not {exe_name} on {datadir}: left alone")
        return False
    os.kill(pid, sig)
    deadline = time.time() + wait_s
    while pid_alive(pid) and time.time() < deadline:
        time.sleep(0.1)
    if pid_alive(pid) and is_server_process(pid, exe_name, datadir):
        os.kill(pid, signal.SIGKILL)
    return True


def die_with_parent() -> None:
    """Runs in the child before exec: a server outlives no harness, even one killed with -9."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


# What a server process inherits of the harness's environment: the search path and the locale,
# nothing else (the environment may hold the DSN of a user's server, and a server's account can read
# its own processes' environment).
SERVER_ENV_KEEP = ("PATH", "LANG", "LANGUAGE", "TZ")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def server_environment() -> dict[str, str]:
    """The environment of a server and its set-up tools (initdb, mariadb-install-db): PATH, the
    locale and the time zone of the harness's own, nothing else."""
    env = {k: v for k, v in os.environ.items() if k in SERVER_ENV_KEEP or k.startswith("LC_")}
    env.setdefault("PATH", DEFAULT_PATH)
    return env


def popen_logged(cmd: list[str], log: Path) -> subprocess.Popen:
    """Start a server with its output appended to `log` (made 0600 if new; a symbolic link there is
    refused, not followed) and the environment of `server_environment`."""
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        # cwd "/": a server running as its own user may not be allowed into the caller's directory
        return subprocess.Popen(cmd, stdout=fd, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=die_with_parent, cwd="/",
                                env=server_environment())
    finally:
        os.close(fd)


def log_tail(path: Path, lines: int = 5) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""


# a line of a server's or set-up tool's output that says what went wrong (MariaDB's "[ERROR] ...",
# PostgreSQL's "FATAL: ...", "initdb: error: ...", "... failed"), rather than its advice around it
_ERROR_LINE = re.compile(r"\b(error|fatal|panic|failed|could not|cannot|can't|unable|denied)\b", re.IGNORECASE)


def first_error(text: str, width: int = 300) -> str:
    """The first line of `text` that names an error (else its last line), whitespace collapsed and
    shortened at a word to at most `width` characters: one line for a message that quotes a tool."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "no output"
    line = " ".join(next((ln for ln in lines if _ERROR_LINE.search(ln)), lines[-1]).split())
    short = textwrap.shorten(line, width, placeholder=" ...")
    return short if short != "..." else line[:width - 4] + " ..."  # one word longer than `width`
