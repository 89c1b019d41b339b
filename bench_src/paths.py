"""Where things live in the repository."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
BIN = DATA / "bin"
RESULTS = DATA / "results"
FIXTURES = DATA / "fixtures"
GOBENCH_SRC = ROOT / "gobench"
RUSTBENCH_SRC = ROOT / "rustbench"
LAUNCHER_SRC = ROOT / "bench_src" / "run" / "launcher" / "benchlaunch.c"


def program(lang: str) -> Path:
    """The built benchmark binary of a language."""
    return BIN / {"go": "gobench", "rust": "rustbench"}[lang]


def launcher() -> Path:
    return BIN / "benchlaunch"
