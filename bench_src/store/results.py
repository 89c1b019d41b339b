"""The results directory: `meta.json` and `samples.jsonl`, one JSON object per sample.

Every sample is appended and fsync'ed the moment it is taken, so a killed run loses at most the
sample that was running (its half-written line, the only thing a kill can leave, is dropped
silently).  Any other unreadable or incomplete line is reported with its line number; a resume
refuses to go on until `repair` moves such lines to a side file.  Opening the same plan again
resumes; opening a different plan in the same directory is refused; one process at a time may
write into a directory (a lock file names the owner).  The directory is private to its owner
(0700), and nothing written here holds a known secret.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from ..plan import Plan, plan_from_dict
from .lock import DirLock
from .secrets import Scrubber

SAMPLES = "samples.jsonl"
REJECTED = "samples.rejected.jsonl"
LOCK = ".lock"
# Samples with these statuses did not run (the cell could not run here); a resumed run takes them
# again, and the newer record replaces the older one.
RETRY_STATUSES = ("skipped",)
META = "meta.json"
# The keys without which a line is not a sample record.
REQUIRED = ("sample_id", "seq", "phase", "block", "cell_id", "workload", "lang", "variant", "n", "status")

# Columns of the tidy frame, in order (documented in the README).
COLUMNS = [
    "run_id", "sample_id", "seq", "session", "phase", "block", "pos", "cell_id", "workload", "lang", "variant",
    "n", "threads_requested", "threads", "arm", "params", "started_at", "status", "reason", "checksum",
    "expected_checksum", "tasks_ok", "elapsed_ns", "setup_ns", "wall_ns", "user_ns", "sys_ns", "maxrss_kb",
    "peak_rss_bytes", "nvcsw", "nivcsw", "minflt", "majflt", "exit_code", "signal", "t0_mono_ns",
    "spawned_ns", "start_mono_ns", "runtime", "extra", "command", "harness_s", "equiv_key", "timeline_file",
]


def now_utc() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


class NotAResultsDirectory(FileNotFoundError):
    """A directory (or path) that holds no run: no meta.json."""


class BinariesChanged(ValueError):
    """The programs differ from those that took the samples already in the directory."""


class CorruptRecords(ValueError):
    """samples.jsonl holds lines that are not complete sample records (besides a torn last line)."""


@dataclass
class BadLine:
    lineno: int
    text: str
    why: str


@dataclass
class Scan:
    """What samples.jsonl holds: the records, the lines that are not records, a torn last line."""
    records: list[dict[str, Any]] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    torn: bool = False

    def describe_bad(self, path: Path, limit: int = 10) -> str:
        shown = "; ".join(f"line {b.lineno}: {b.why}" for b in self.bad[:limit])
        more = f"; and {len(self.bad) - limit} more" if len(self.bad) > limit else ""
        return f"{path} has {len(self.bad)} unreadable or incomplete line(s): {shown}{more}"


def _why_bad(line: str) -> tuple[dict | None, str]:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg})"
    if not isinstance(rec, dict):
        return None, f"not a JSON object ({type(rec).__name__})"
    missing = [k for k in REQUIRED if rec.get(k) is None]
    if missing:
        return None, f"incomplete record (no {', '.join(missing)})"
    return rec, ""


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, atomically (temporary file, fsync, rename)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            fd = -1
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    finally:
        if fd >= 0:
            os.close(fd)
    os.replace(tmp, path)


def check_results_dir(directory: str | os.PathLike) -> Path:
    """Refuse, before anything is built, a results directory that cannot be used: a path that is a
    file, a directory (or the nearest existing parent) that is not writable, one whose lock is held."""
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise ValueError(f"results_dir {str(d)!r} is a file, not a directory")
    probe = d
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ValueError(f"results_dir {str(d)!r}: {str(probe)!r} is a file, not a directory")
    try:  # really try: access() says yes to root even where nothing can be written
        fd, name = tempfile.mkstemp(prefix=".bench-write-test-", dir=probe)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        what = "is" if probe == d else f"cannot be created: {str(probe)!r} is"
        raise ValueError(f"results_dir {str(d)!r} {what} not writable ({exc.strerror})") from None
    owner = DirLock.held_by(d / LOCK)
    if owner:
        raise ValueError(f"results_dir {str(d)!r} is in use by {owner}; wait for that run to finish or stop it")
    return d


class ResultsStore:
    def __init__(self, directory: str | os.PathLike, scrubber: Scrubber | None = None):
        self.dir = Path(directory)
        self.samples_path = self.dir / SAMPLES
        self.meta_path = self.dir / META
        self.scrubber = scrubber or Scrubber()
        self.lock = DirLock(self.dir / LOCK, f"the results directory {self.dir}")
        self.session: int | None = None  # 1-based number of the session this process opened

    @property
    def run_id(self) -> str:
        return self.dir.name

    def require_existing(self) -> None:
        """Refuse a path that holds no run, before anything is read or written."""
        if not self.meta_path.is_file():
            what = "does not exist" if not self.dir.exists() else "holds no meta.json"
            raise NotAResultsDirectory(f"{self.dir} is not a results directory: it {what} "
                                       "(a run writes meta.json and samples.jsonl there)")

    # --- meta -------------------------------------------------------------------------------
    def read_meta(self) -> dict[str, Any]:
        return json.loads(self.meta_path.read_text())

    def write_meta(self, meta: dict[str, Any]) -> None:
        meta = self.scrubber.data(meta)
        _write_private(self.meta_path, json.dumps(meta, indent=2, sort_keys=True, default=str))

    def check_plan(self, plan: Plan) -> None:
        """Refuse a directory that holds a different plan (before anything is built or written)."""
        if self.meta_path.exists():
            meta = self.read_meta()
            if meta["plan"] != plan.to_dict():
                old = plan_from_dict(meta["plan"])
                raise ValueError(
                    f"{self.dir} already holds a different plan (digest {old.digest}, this one {plan.digest}); "
                    "choose another results_dir to start a new run")

    def open(self, plan: Plan, session: dict[str, Any], repair: bool = False,
             binaries: list[str] | tuple[str, ...] = (), new_binaries: bool = False) -> dict[str, Any]:
        """Take the directory's lock, then create it for a plan or reopen it to resume the same
        plan: a torn last line is dropped; other bad lines stop the run unless `repair`.  When
        samples are already stored, the binaries named in `binaries` (keys of
        session["binaries"]) must be those of the last session that recorded them, unless
        `new_binaries`, which notes the change in the new session."""
        created = not self.dir.exists()
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if created or self.dir.stat().st_mode & 0o077:
            os.chmod(self.dir, 0o700)
        for f in (self.samples_path, self.meta_path):
            if f.exists() and f.stat().st_mode & 0o077:
                os.chmod(f, 0o600)
        self.lock.acquire()
        try:
            return self._open_locked(plan, session, repair, binaries, new_binaries)
        except BaseException:
            self.lock.release()
            raise

    def _open_locked(self, plan: Plan, session: dict[str, Any], repair: bool, binaries, new_binaries: bool
                     ) -> dict[str, Any]:
        self.check_plan(plan)
        self.repair()
        scan = self.scan()
        if scan.bad:
            if not repair:
                raise CorruptRecords(scan.describe_bad(self.samples_path) + "; nothing was taken. Look at them, "
                                     "then resume with repair=True (CLI: --repair) to move them to "
                                     f"{REJECTED} and take those samples again")
            self.repair_records(scan)
        if self.meta_path.exists():
            meta = self.read_meta()
        else:
            meta = {"run_id": self.run_id, "plan": plan.to_dict(), "plan_digest": plan.digest,
                    "created_at": now_utc(), "sessions": []}
        changed = self._changed_binaries(meta, session.get("binaries") or {}, binaries) if scan.records else {}
        if changed:
            what = "; ".join(f"{k}: {old[:12] if old else 'none'} then, {new[:12] if new else 'none'} now"
                             for k, (old, new) in changed.items())
            if not new_binaries:
                raise BinariesChanged(
                    f"{self.dir} holds samples taken with other binaries ({what}); nothing was taken. Rebuilt "
                    "programs must not mix with earlier samples: choose another results_dir, or resume with "
                    "new_binaries=True (CLI: --new-binaries) to continue in a new session whose samples carry "
                    "its number in the `session` column")
            session = {**session, "binaries_changed": {k: {"before": o, "now": n} for k, (o, n) in changed.items()}}
        for old in meta["sessions"]:
            if "finished_at" not in old and not old.get("interrupted"):
                # the process of that session was killed (kill -9, power loss): it never wrote its end
                old["interrupted"] = True
                old["ended"] = "killed: the session never recorded its end"
        meta["sessions"].append({**session, "session": len(meta["sessions"]) + 1, "pid": os.getpid(),
                                 "started_at": now_utc()})
        self.session = len(meta["sessions"])
        self.write_meta(meta)
        return meta

    @staticmethod
    def _changed_binaries(meta: dict[str, Any], now: dict[str, Any], names) -> dict[str, tuple]:
        before = next((s["binaries"] for s in reversed(meta.get("sessions", [])) if s.get("binaries")), None)
        if before is None:
            return {}
        return {k: (before.get(k), now.get(k)) for k in names if before.get(k) != now.get(k)}

    def close(self) -> None:
        self.lock.release()

    def update_meta(self, **fields: Any) -> None:
        meta = self.read_meta()
        meta.update(fields)
        self.write_meta(meta)

    def update_session(self, **fields: Any) -> None:
        meta = self.read_meta()
        meta["sessions"][-1].update(fields)
        self.write_meta(meta)

    # --- samples ----------------------------------------------------------------------------
    def repair(self) -> int:
        """Drop a half-written last line left by a kill; return the number of bytes dropped."""
        if not self.samples_path.exists():
            return 0
        data = self.samples_path.read_bytes()
        if not data or data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        with open(self.samples_path, "r+b") as f:
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
        return len(data) - keep

    def scan(self) -> Scan:
        """Read samples.jsonl line by line: records, bad lines (with their numbers), a torn end."""
        out = Scan()
        if not self.samples_path.exists():
            return out
        text = self.samples_path.read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        elif lines:
            lines.pop()  # no newline at the end: a write cut by a kill; repair() removes it
            out.torn = True
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            rec, why = _why_bad(line)
            if rec is None:
                out.bad.append(BadLine(lineno, line, why))
            else:
                out.records.append(rec)
        return out

    def repair_records(self, scan: Scan | None = None) -> int:
        """Move unreadable or incomplete lines to samples.rejected.jsonl (each with its line number
        and why) and note it in meta.json; the samples they stood for are taken again by a resume.
        Returns the number of lines moved.  Needs the directory's lock (a run holds it)."""
        with_lock = self.lock.fd is None
        if with_lock:
            self.require_existing()
            self.lock.acquire()
        try:
            self.repair()
            scan = scan or self.scan()
            if not scan.bad:
                return 0
            bad_numbers = {b.lineno for b in scan.bad}
            lines = self.samples_path.read_text(encoding="utf-8", errors="replace").split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            with open(self.dir / REJECTED, "a", encoding="utf-8", opener=_private_opener) as f:
                for b in scan.bad:
                    f.write(json.dumps({"line": b.lineno, "why": b.why, "text": self.scrubber.text(b.text),
                                        "moved_at": now_utc()}) + "\n")
                f.flush()
                os.fsync(f.fileno())
            kept = [ln for i, ln in enumerate(lines, start=1) if i not in bad_numbers]
            _write_private(self.samples_path, "".join(ln + "\n" for ln in kept))
            if self.meta_path.exists():
                meta = self.read_meta()
                meta.setdefault("repairs", []).append({
                    "at": now_utc(), "moved_to": REJECTED, "lines": sorted(bad_numbers),
                    "why": sorted({b.why for b in scan.bad})})
                self.write_meta(meta)
            return len(scan.bad)
        finally:
            if with_lock:
                self.lock.release()

    def records(self) -> list[dict[str, Any]]:
        return self.scan().records

    def done_ids(self) -> set[str]:
        return {r["sample_id"] for r in self.records() if r.get("status") not in RETRY_STATUSES}

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(self.scrubber.data(record), sort_keys=True, default=str) + "\n"
        with open(self.samples_path, "a", encoding="utf-8", opener=_private_opener) as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def latest_records(self) -> list[dict[str, Any]]:
        """One record per sample id: the last one written (a skipped sample taken again later)."""
        latest: dict[str, dict[str, Any]] = {}
        for r in self.records():
            latest[r["sample_id"]] = r
        return list(latest.values())

    def load(self) -> pd.DataFrame:
        """The tidy frame.  Unreadable or incomplete lines and samples stored twice are reported
        (a warning naming the line numbers), never dropped in silence."""
        self.require_existing()
        scan = self.scan()
        if scan.bad:
            warnings.warn(scan.describe_bad(self.samples_path) + "; they are left out of this frame "
                          "(repair with bench_src.api.repair or `python -m bench_src repair DIR`)",
                          CorruptRecordsWarning, stacklevel=2)
        counts: dict[str, int] = {}
        for r in scan.records:
            if r.get("status") not in RETRY_STATUSES:
                counts[r["sample_id"]] = counts.get(r["sample_id"], 0) + 1
        twice = sorted(k for k, v in counts.items() if v > 1)
        if twice:
            warnings.warn(f"{self.samples_path}: {len(twice)} sample(s) stored more than once (the last copy is "
                          f"used), e.g. {twice[0]}", CorruptRecordsWarning, stacklevel=2)
        latest: dict[str, dict[str, Any]] = {}
        for r in scan.records:
            latest[r["sample_id"]] = r
        df = samples_frame(latest.values())
        df.attrs["bad_lines"] = [b.lineno for b in scan.bad]
        return df

    # --- memory timelines ----------------------------------------------------------------------
    def write_timeline(self, sample_id: str, points) -> str:
        """Store one sample's RSS timeline as CSV (t_mono_ns, rss_bytes); return its relative path."""
        d = self.dir / "timelines"
        d.mkdir(mode=0o700, exist_ok=True)
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in sample_id) + ".csv"
        with open(d / name, "w", opener=_private_opener) as f:
            f.write("t_mono_ns,rss_bytes\n")
            f.writelines(f"{t},{r}\n" for t, r in points)
        return f"timelines/{name}"

    def read_timeline(self, relative: str) -> pd.DataFrame:
        return pd.read_csv(self.dir / relative)


class CorruptRecordsWarning(UserWarning):
    pass


def _private_opener(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_CLOEXEC, 0o600)


def samples_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The tidy frame: one row per sample, COLUMNS plus one `p_<key>` column per parameter and
    derived columns in convenient units (seconds, MiB)."""
    df = pd.DataFrame(list(records))
    for c in COLUMNS:
        if c not in df.columns:
            df[c] = pd.NA
    df = df[COLUMNS + [c for c in df.columns if c not in COLUMNS]].copy()
    if df.empty:
        return df
    params = df["params"].map(lambda s: json.loads(s) if isinstance(s, str) else (s or {}))
    keys = sorted({k for p in params for k in p})
    for k in keys:
        df[f"p_{k}"] = params.map(lambda p, k=k: p.get(k))
    df["params"] = params.map(lambda p: ",".join(f"{k}={v}" for k, v in sorted(p.items())))
    for c in ("elapsed_ns", "wall_ns", "setup_ns", "user_ns", "sys_ns"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    df["elapsed_s"] = df["elapsed_ns"] / 1e9
    df["wall_s"] = df["wall_ns"] / 1e9
    df["cpu_s"] = (df["user_ns"] + df["sys_ns"]) / 1e9
    df["user_s"] = df["user_ns"] / 1e9
    df["sys_s"] = df["sys_ns"] / 1e9
    df["context_switches"] = pd.to_numeric(df["nvcsw"], errors="coerce") + pd.to_numeric(df["nivcsw"], errors="coerce")
    df["per_s"] = pd.to_numeric(df["n"], errors="coerce") / df["elapsed_s"]
    df["peak_rss_mib"] = pd.to_numeric(df["peak_rss_bytes"], errors="coerce") / 2**20
    # idle_tasks: how many tasks were still alive when the last one had been spawned
    extra = df["extra"].map(lambda s: json.loads(s) if isinstance(s, str) else {})
    df["alive_at_spawn"] = pd.to_numeric(extra.map(lambda e: e.get("alive_at_spawn")), errors="coerce")
    df["ok"] = df["status"] == "ok"
    return df.sort_values("seq", kind="stable").reset_index(drop=True)
