"""Figures as files: SVG (vector, text as outlines), PNG and PDF."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

FORMATS = ("svg", "png", "pdf")


def save(fig: plt.Figure, directory: str | Path, name: str, formats=FORMATS, close: bool = True) -> list[Path]:
    """Write the figure once per format as `<directory>/<name>.<format>` and return the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt in formats:
        path = directory / f"{name}.{fmt}"
        # a fixed date keeps the files of the same figure identical from run to run
        metadata = {"Date": None} if fmt == "svg" else ({"CreationDate": None} if fmt == "pdf" else None)
        fig.savefig(path, dpi=150, bbox_inches="tight", metadata=metadata)
        out.append(path)
    if close:
        plt.close(fig)
    return out
