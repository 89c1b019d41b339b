"""Figures as files: SVG (vector, text as outlines), PNG and PDF."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from .base import written

FORMATS = ("svg", "png", "pdf")


def save(fig: plt.Figure, directory: str | Path, name: str, formats=FORMATS, close: bool = True) -> list[Path]:
    """Write the figure once per format as `<directory>/<name>.<format>` and return the paths (a
    full disk: DiskFull, no part of the file left; the figure is closed all the same)."""
    directory = Path(directory)
    out = []
    try:
        for fmt in formats:
            # a fixed date keeps the files of the same figure identical from run to run
            metadata = {"Date": None} if fmt == "svg" else ({"CreationDate": None} if fmt == "pdf" else None)
            with written(directory / f"{name}.{fmt}") as path:
                fig.savefig(path, dpi=150, bbox_inches="tight", metadata=metadata)
            out.append(path)
    finally:
        if close:
            plt.close(fig)
    return out
