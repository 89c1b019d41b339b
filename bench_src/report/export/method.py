"""The Method section of a run as `export/method.md` (its text: bench_src/report/method.py)."""
from __future__ import annotations

from pathlib import Path


def save(text: str, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Method\n\n" + text + "\n")
    return path


class MethodExporter:
    """The report's Method text as `method.md`."""

    name = "method"

    def save(self, report, directory: Path) -> list[Path]:
        return [save(report.method, directory / "method.md")]
