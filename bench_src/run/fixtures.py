"""Deterministic inputs of the I/O and database workloads (docs/workloads.md).

- files: `0.txt` .. `19.txt`; file k has 3 * (k + 1) lines, line j is 63 copies of the letter
  'a' + (k + j) % 26 and a newline (192 * (k + 1) bytes).
- sqlite: `users.db` with `users(id INT PRIMARY KEY NOT NULL, salary INT NOT NULL, age INT NOT NULL,
  address CHAR(50))` and 10,000 rows, row k = (k, lcg(7)[k] % 201, lcg(9)[k] % 100, 'Somewhere').
- the same rows as SQL for the server-side template table `users_template`.

Templates are made once per results directory; `restore_*` puts a fresh copy in the work
directory before every sample of a mutating workload, outside the timed region.
"""
from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

from ..catalogue import lcg

N_FILES = 20
N_USERS = 10_000
USERS_COLUMNS = "id INT PRIMARY KEY NOT NULL, salary INT NOT NULL, age INT NOT NULL, address CHAR(50)"


def file_content(k: int) -> bytes:
    return b"".join(bytes([ord("a") + (k + j) % 26]) * 63 + b"\n" for j in range(3 * (k + 1)))


def users_rows() -> list[tuple[int, int, int, str]]:
    salaries, ages = lcg(7, N_USERS), lcg(9, N_USERS)
    return [(k, salaries[k] % 201, ages[k] % 100, "Somewhere") for k in range(N_USERS)]


# A template is made beside its place and moved into it whole (os.replace), so that a run stopped
# while making one (a full disk, a kill) leaves no half-made template for the next to take as made:
# a users.db with no rows made every later SQLite sample fail "affected 0 rows" for good.
PARTIAL = ".partial"


def make_files(directory: Path) -> Path:
    partial = directory.with_name(directory.name + PARTIAL)
    _clear(partial)
    for k in range(N_FILES):
        (partial / f"{k}.txt").write_bytes(file_content(k))
    if directory.exists():
        shutil.rmtree(directory)
    os.replace(partial, directory)
    return directory


def make_sqlite(directory: Path) -> Path:
    """users.db in `directory`, made whole or not at all.  SQLite's own "database or disk is full"
    is raised as the OSError of a full disk (ENOSPC), which a run reports in one line."""
    directory.mkdir(parents=True, exist_ok=True)
    path, partial = directory / "users.db", directory / ("users.db" + PARTIAL)
    partial.unlink(missing_ok=True)
    try:
        con = sqlite3.connect(partial)
        try:
            con.execute(f"CREATE TABLE users ({USERS_COLUMNS})")
            con.executemany("INSERT INTO users VALUES (?, ?, ?, ?)", users_rows())
            con.commit()
        finally:
            con.close()
    except sqlite3.OperationalError as exc:
        partial.unlink(missing_ok=True)
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(exc):
            raise OSError(errno.ENOSPC, f"no space left making the SQLite template ({exc})", str(partial)) from exc
        raise
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, path)
    return path


def users_insert_sql(table: str = "users_template", batch: int = 1000) -> str:
    """INSERT statements for the server-side template table (plain literals: all values are ints or
    a constant string)."""
    rows = users_rows()
    parts = []
    for start in range(0, len(rows), batch):
        values = ",".join(f"({i},{s},{a},'{addr}')" for i, s, a, addr in rows[start:start + batch])
        parts.append(f"INSERT INTO {table} VALUES {values};")
    return "\n".join(parts)


def _clear(directory: Path) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)


def restore_files(template: Path, work: Path) -> Path:
    """A fresh copy of the 20 files (and nothing else) in `work`."""
    _clear(work)
    for k in range(N_FILES):
        shutil.copyfile(template / f"{k}.txt", work / f"{k}.txt")
    return work


def restore_sqlite(template: Path, work: Path) -> Path:
    """A fresh copy of users.db (no journal, WAL or shared-memory files left) in `work`."""
    _clear(work)
    shutil.copyfile(template / "users.db", work / "users.db")
    return work


class Fixtures:
    """The fixtures of one results directory: templates made once, work copies per sample."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.templates = self.root / "templates"
        self.work = self.root / "work"

    def files_template(self) -> Path:
        d = self.templates / "files"
        if not all((d / f"{k}.txt").exists() for k in range(N_FILES)):
            make_files(d)
        return d

    def sqlite_template(self) -> Path:
        d = self.templates / "sqlite"
        if not (d / "users.db").exists():
            make_sqlite(d)
        return d

    def for_sample(self, workload: str) -> Path:
        """The --data-dir for one sample: a fresh copy for mutating workloads, the template for reads."""
        if workload == "files_read":
            return self.files_template()
        if workload == "files_rw":
            return restore_files(self.files_template(), self.work / "files_rw")
        if workload == "sqlite":
            return restore_sqlite(self.sqlite_template(), self.work / "sqlite")
        raise ValueError(f"{workload} has no file fixture")
