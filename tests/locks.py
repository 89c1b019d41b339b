"""A lock held by another, live process: what a directory in use by a running harness looks like."""
import subprocess
import sys
from contextlib import contextmanager

HOLD = ("import sys, time; from bench_src.store import DirLock; "
        "DirLock(sys.argv[1], 'x').acquire(); print('held', flush=True); time.sleep(60)")


@contextmanager
def held_elsewhere(path):
    """The DirLock at `path` held by a live child process until the block ends (then it dies)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()
