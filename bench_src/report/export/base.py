"""The one interface of every export format: an `Exporter` has a name and writes its files for a
report into the export directory, returning their paths.  Each format is one module of this
package with one exporter; `registry.EXPORTERS` lists them in the order they are written.  A new
format is a module with a class like the others and one line in the registry."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Protocol

import pandas as pd

from ...store import DiskFull, is_disk_full

# Where a results directory's exports go, and the folders of its tables and figures there (the
# exporters' and the notebooks' own tables and figures alike).
EXPORT = "export"
TABLES = "tables"
FIGURES = "figures"


def export_dir(results_dir: str | Path) -> Path:
    return Path(results_dir) / EXPORT


class ExportNotWritable(ValueError):
    """An export file that cannot be written for another reason than a full disk (a file where its
    directory should be, a directory without write permission): one line naming it and what to do."""


@contextmanager
def written(path: str | Path) -> Iterator[Path]:
    """Around the writing of one export file (every writer of this package uses it): its directory
    is made first; on a full disk (or quota) the part of the file already written is removed and
    DiskFull names the file, so a full disk is one line and leaves no truncated export; any other
    error of the file system is ExportNotWritable, one line as well."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield path
    except OSError as exc:
        if not is_disk_full(exc):
            where = exc.filename or path
            raise ExportNotWritable(
                f"the report cannot write {path.name} ({where}: {exc.strerror or type(exc).__name__}); make the "
                f"export directory {path.parent} a directory this user can write (remove a file standing in its "
                "place, or change its permissions), then run the report again: the samples are untouched") from None
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass
        raise DiskFull(path.parent, path.name,
                       left=f"the part of {path.name} written was removed, the samples are untouched") from None


class ReportData(Protocol):
    """What an exporter reads of a report (report/full.py's Report)."""

    results_dir: Path
    df: pd.DataFrame
    meta: dict[str, Any]
    tables: dict[str, pd.DataFrame]
    figures: dict[str, list[Path]]
    method: str

    @property
    def empty(self) -> bool: ...


class Exporter(Protocol):
    name: str  # the format, as the registry and the tests name it

    def save(self, report: ReportData, directory: Path) -> list[Path]:
        """Write this format's files for the report under `directory` (the export directory)."""
        ...
