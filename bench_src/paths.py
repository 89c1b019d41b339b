"""Where things live in the repository."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
BIN = DATA / "bin"
RESULTS = DATA / "results"
# The file of a results directory that holds its samples, one JSON object a line: written and read
# by the store (bench_src/store/results.py), and read by the duration estimate for the times of
# earlier runs (bench_src/plan/estimate.py, below the store).
SAMPLES = "samples.jsonl"
FIXTURES = DATA / "fixtures"
GOBENCH_SRC = ROOT / "gobench"
RUSTBENCH_SRC = ROOT / "rustbench"
LAUNCHER_SRC = ROOT / "bench_src" / "run" / "launcher" / "benchlaunch.c"


def program(lang: str) -> Path:
    """The built benchmark binary of a language."""
    return BIN / {"go": "gobench", "rust": "rustbench"}[lang]


def launcher() -> Path:
    return BIN / "benchlaunch"


# A host of a cluster whose programs are not under its data/bin names their directory here.
HOST_BIN_ENV = "BENCH_BIN_DIR"


def host_bin_dir() -> Path:
    """Where this host's own built programs are: $BENCH_BIN_DIR, else data/bin."""
    return Path(os.environ[HOST_BIN_ENV]) if os.environ.get(HOST_BIN_ENV) else BIN
