"""The Method section of a run as `export/method.md` (its text: bench_src/report/method.py)."""
from __future__ import annotations

from pathlib import Path

from .base import written


def save(text: str, path: str | Path) -> Path:
    """`text` (subsections under '### ', as the report nests them below its '## Method') as a file of
    its own: '# Method' with its subsections one level below it ('## '), an outline without a gap."""
    body = "\n".join(line[1:] if line.startswith("### ") else line for line in text.splitlines())
    with written(path) as path:
        path.write_text("# Method\n\n" + body + "\n")
    return path


class MethodExporter:
    """The report's Method text as `method.md`."""

    name = "method"

    def save(self, report, directory: Path) -> list[Path]:
        return [save(report.method, directory / "method.md")]
