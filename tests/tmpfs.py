"""A small tmpfs mounted for a test: a real full disk (mounting needs root; otherwise the test is
skipped, with `why` saying what covers the case instead)."""
import os
import subprocess
from contextlib import contextmanager

import pytest


@contextmanager
def mounted(directory, size: str, why: str):
    """`directory` (created) with a tmpfs of `size` ("2m", "48k") mounted on it until the block ends."""
    if os.geteuid() != 0:
        pytest.skip(f"mounting a tmpfs needs root; {why}")
    directory.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], capture_output=True)
