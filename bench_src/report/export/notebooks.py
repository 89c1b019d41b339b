"""Executed notebooks of a results directory as HTML, only those that ran to the end.

A notebook that papermill is still executing (or that stopped on an error) is skipped with its
reason: its HTML would be a half-executed snapshot.  The analysis itself is in the self-contained
report (`html`), which the analysis notebook writes; this is for keeping the executed notebooks
(run.ipynb of `make run`) readable without Jupyter.
"""
from __future__ import annotations

import json
from pathlib import Path

from .base import export_dir, written

NOTEBOOKS = "notebooks"  # their folder in the export directory


def incomplete_reason(notebook: dict) -> str | None:
    """Why a notebook did not execute to the end, or None when it did."""
    pm = notebook.get("metadata", {}).get("papermill") or {}
    if pm.get("exception"):
        return "execution stopped on an error"
    code = [c for c in notebook.get("cells", []) if c.get("cell_type") == "code"]
    if not code:
        return "no code cells"
    for i, cell in enumerate(code, 1):
        status = (cell.get("metadata", {}).get("papermill") or {}).get("status")
        if pm and status != "completed":
            return f"code cell {i} of {len(code)} is {status or 'not executed'}"
        if not pm and cell.get("execution_count") is None:
            return f"code cell {i} of {len(code)} was not executed"
        if any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            return f"code cell {i} of {len(code)} raised an error"
    if pm and not pm.get("end_time"):
        return "papermill has not finished it"
    return None


def render(results_dir: str | Path, target: str | Path | None = None, log=print) -> list[Path]:
    """Every notebook in the results directory that executed to the end, as HTML under
    `<results_dir>/export/notebooks/`; the others are named with their reason and skipped."""
    results_dir = Path(results_dir)
    target = Path(target) if target else export_dir(results_dir) / NOTEBOOKS
    out = []
    for nb in sorted(results_dir.glob("*.ipynb")):
        try:
            reason = incomplete_reason(json.loads(nb.read_text()))
        except (json.JSONDecodeError, OSError) as exc:
            reason = f"unreadable ({exc})"
        if reason:
            log(f"not rendered: {nb.name}: {reason}")
            continue
        from nbconvert import HTMLExporter  # imported when a notebook is rendered: it takes a second or two

        body, _ = HTMLExporter().from_filename(str(nb))
        with written(target / (nb.stem + ".html")) as path:
            path.write_text(body, encoding="utf-8")
        out.append(path)
    return out


class NotebooksExporter:
    """The results directory's executed notebooks that ran to the end, as `notebooks/*.html`."""

    name = "notebooks"

    def save(self, report, directory: Path) -> list[Path]:
        return render(report.results_dir, directory / NOTEBOOKS)
