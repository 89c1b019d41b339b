"""Whether a directory may be a results directory, before the store opens it: what a run of this
package may leave there before its meta.json exists, a directory that holds something else refused
(nothing is written into it), a path too long for its file system refused before it is created, a
directory a run still writes refused to an analysis (`refuse_in_use`), and the latest results
directory under the results root."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .. import paths
from ..paths import SAMPLES
from .lock import LOCK_NAME, DirLock, LockedError
from .meta import META, is_run_record
from .space import RESERVE

# What a run of this package may leave in a directory before its meta.json exists: the lock, the
# space reserve, a meta.json being written, and the notebook `make run` writes first (named by the
# make process's PID, so that a second `make run` into the same directory, refused by the lock,
# writes its failed notebook beside the first one's instead of over it).  A directory without
# meta.json that holds anything else is someone else's, and is never written into.
OWN_BEFORE_META = (LOCK_NAME, RESERVE, META + ".tmp", "run.partial.ipynb", "run.ipynb")
PARTIAL_NOTEBOOK = re.compile(r"run\.partial\.\d+\.ipynb")
WRITE_PROBE = ".bench-write-test-"  # results.check_results_dir's probe, there for an instant (as a lock's temporary)


class NotAResultsDirectory(FileNotFoundError):
    """A directory (or path) that holds no run: no meta.json."""


# what to do about a path that holds no run, wherever one is refused for an analysis
RUN_FIRST = "run notebooks/run.ipynb or `python -m bench_src run` first, or pass the directory of a run"


def require_run(results_dir: str | os.PathLike) -> Path:
    """The directory of a run as a Path, or a NotAResultsDirectory (a FileNotFoundError, one of the
    errors a user can fix: one line on the command line and in the notebooks) saying what is wrong
    with it and what to do: the one rule of every reader of a run (the report, the notebooks,
    api.load of one directory or several, repair)."""
    d = Path(results_dir)
    if isinstance(results_dir, str) and not results_dir.strip():  # Path("") would read as "."
        raise NotAResultsDirectory(f"the results directory given is an empty string {results_dir!r}; {RUN_FIRST}")
    if not d.exists():
        raise NotAResultsDirectory(f"results directory {str(d)!r} does not exist; {RUN_FIRST}")
    if not d.is_dir():
        raise NotAResultsDirectory(f"results directory {str(d)!r} is a file, not a directory; {RUN_FIRST}")
    if not (d / META).is_file():
        what = ("is empty" if not any(d.iterdir()) else
                "has a directory named meta.json, not the run's record" if (d / META).is_dir() else "has no meta.json")
        raise NotAResultsDirectory(f"{str(d)!r} is not a results directory: it {what}; {RUN_FIRST}")
    return d


def _holds_run_record(directory: Path) -> bool:
    try:
        return is_run_record(json.loads((directory / META).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False


def foreign_entries(directory: Path) -> list[str]:
    """The names in a directory that no run of this package leaves there, when it is not a run's:
    empty for a directory that does not exist, holds the record of a run (meta.json), or holds
    samples beside an unreadable meta.json (a run's, to repair).  An unreadable meta.json with no
    samples.jsonl beside it is no run's record: it counts as foreign, so that neither a run nor a
    repair writes there or moves the file."""
    if not directory.is_dir():
        return []
    if (directory / META).exists() and (_holds_run_record(directory) or (directory / SAMPLES).exists()):
        return []
    return sorted(p.name for p in directory.iterdir()
                  if p.name not in OWN_BEFORE_META and not PARTIAL_NOTEBOOK.fullmatch(p.name)
                  and not p.name.startswith((WRITE_PROBE, LOCK_NAME + ".")))


def refuse_foreign(directory: Path) -> None:
    """Refuse a directory that holds something else than a run of this package: a run writes only
    into a new or empty directory, or into one of its own (with meta.json)."""
    foreign = foreign_entries(directory)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        record = ("holds a meta.json that is not the record of a run and no samples"
                  if META in foreign else "holds no meta.json")
        notebooks = all(name.endswith(".ipynb") for name in foreign) and META not in foreign
        hint = ("; if it is papermill's output notebook of this run, write that outside results_dir or name it "
                "run.partial.ipynb (make run names it run.partial.<PID>.ipynb)") if notebooks else ""
        raise ValueError(f"results_dir {str(directory)!r} is not empty ({shown}) and {record}: it is "
                         "not a results directory of this package, and nothing is written into it; give a new or "
                         f"empty directory, or the directory of an earlier run{hint}")


def refuse_in_use(directory: str | os.PathLike) -> None:
    """A LockedError, naming the run's process, when a run holds the results directory's lock: its
    samples still change, so an analysis now would be of part of the run.  The one rule of every
    analysis that reads a run from the outside (`report`, `hosts`, analysis.ipynb); the run's own
    report at its end is written under its lock, and does not ask."""
    d = Path(directory)
    owner = DirLock.held_by(d / LOCK_NAME)
    if owner:
        raise LockedError(f"results directory {str(d)!r} (a report now would be of part of its run)", d / LOCK_NAME,
                          owner)


def refuse_too_long(d: Path) -> None:
    """A ValueError when a name of `d` still to be created is longer than its file system allows, or
    the whole path is (stat says "no such file" before it says "too long" under a missing parent)."""
    existing = d.absolute()
    missing: list[str] = []
    while not existing.exists() and existing.parent != existing:
        missing.append(existing.name)
        existing = existing.parent
    try:
        name_max, path_max = os.pathconf(existing, "PC_NAME_MAX"), os.pathconf(existing, "PC_PATH_MAX")
    except (OSError, ValueError):
        return
    long = [n for n in missing if len(os.fsencode(n)) > name_max]
    if long:
        raise ValueError(f"results_dir {quoted_path(d)} cannot be created: its name {quoted_path(Path(long[0]), 40)} has "
                         f"{len(os.fsencode(long[0]))} bytes, more than the {name_max} its file system allows; give "
                         "a shorter one")
    if len(os.fsencode(str(d.absolute()))) >= path_max:
        raise ValueError(f"results_dir {quoted_path(d)} cannot be used: the path has {len(os.fsencode(str(d.absolute())))} "
                         f"bytes, more than the {path_max - 1} allowed; give a shorter path")


def quoted_path(path: Path, most: int = 120) -> str:
    """A path as an error quotes it: whole up to `most` characters, else its start and end."""
    text = str(path)
    return repr(text) if len(text) <= most else repr(text[:60] + " … " + text[-40:]) + f" ({len(text)} characters)"


def latest_results_dir(root: str | os.PathLike | None = None) -> Path:
    """The results directory under `root` (default data/results/) whose meta.json was written last."""
    base = Path(root) if root is not None else paths.RESULTS
    runs = [p for p in base.glob("*") if (p / META).exists()]
    if not runs:
        raise NotAResultsDirectory(f"no results under {base}; run notebooks/run.ipynb first")
    return max(runs, key=lambda p: (p / META).stat().st_mtime)
