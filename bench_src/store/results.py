"""The results directory: `meta.json` and `samples.jsonl`, one JSON object per sample.

Every sample is appended and fsync'ed the moment it is taken, so a killed run loses at most the
sample that was running (its half-written line, the only thing a kill can leave, is dropped
silently).  Any other unreadable or incomplete line (or one whose required keys have the wrong
type, an N of "abc") is reported with its line number; a resume refuses to go on until `repair`
moves such lines to a side file.  Opening the same plan again resumes; opening a different plan
in the same directory is refused; one process at a time may write into a directory (a lock file
names the owner).  A directory the store creates is private
to its owner (0700); an existing one keeps its mode (a session notes when others can read it), and
one that holds something else than a run of this package is refused.  The files are 0600, and
nothing written here holds a known secret.  A full disk stops a run with one error (`DiskFull`,
see `space`); a meta.json that cannot be read, or whose plan does not rebuild or whose sessions
are not mappings, is named with the bad field and what to do (`CorruptFile`), and so is a
samples.jsonl that cannot be read at all (a directory in its place).  Samples the sessions of
meta.json recorded as taken that samples.jsonl no longer holds (`Lost`) are a warning of `load`
and stop a resume (`MissingSamples`) until `repair` records their loss in meta.json.
"""
from __future__ import annotations

import base64
import datetime as dt
import errno
import json
import os
import tempfile
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from ..parameters import MACHINE_DEFAULTS
from ..paths import SAMPLES
from ..plan import Plan, plan_from_dict, stored_plan_problem
from . import files
from .directory import WRITE_PROBE, quoted_path, refuse_foreign, refuse_too_long, require_run
from .ledger import current_attempts, latest, not_taken_again, sampling_sessions, set_aside_reasons
from .lock import LOCK_NAME, DirLock
from .meta import (CORRUPT_META, META, differing_keys, engine_cluster, is_run_record, plan_difference,
                   recovered_sessions, sessions_problem)
from .records import REJECTED, BadLine, Lost, Scan, foreign_cell, stands_for_a_sample, why_bad
from .secrets import Scrubber
from .frame import samples_frame
from .space import RESERVE, RESERVE_MARGIN, SCRATCH_WRITING, DiskFull, Reserve, ScratchFull, is_disk_full


def now_utc() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


class BinariesChanged(ValueError):
    """The programs differ from those that took the samples already in the directory."""


class CorruptRecords(ValueError):
    """samples.jsonl holds lines that are not complete sample records (besides a torn last line)."""


class CorruptFile(ValueError):
    """A file of a results directory that cannot be read as what it must be (meta.json)."""


class MissingSamples(ValueError):
    """samples.jsonl holds fewer samples than the sessions of meta.json recorded as taken."""


def _unreadable(exc: OSError) -> str:
    """Why a file of the run cannot be read, in words ("it is a directory")."""
    if isinstance(exc, IsADirectoryError):
        return "it is a directory"
    return f"reading it failed ({exc.strerror or exc})"


def _lost_records(numbers: list[int | None], rebuilt: bool) -> str:
    """Why no session records the binaries of these sessions' samples, in words."""
    known = [str(n) for n in numbers if n is not None]
    if not known:
        return "the samples carry no session number"
    which = f"session {known[0]}" if len(known) == 1 else f"sessions {', '.join(known)}"
    if rebuilt:
        return f"the record of {which} was lost with an unreadable meta.json"
    return f"meta.json records none for {which}"


def check_results_dir(directory: str | os.PathLike, need: int = 4096) -> Path:
    """Refuse, before anything is built, a results directory that cannot be used: a path that is a
    file, a directory (or the nearest existing parent) that is not writable or has not `need` bytes
    free (a run's: space.start_bytes), one whose lock is held."""
    d = Path(directory)
    try:
        d.exists()
    except OSError as exc:  # a name or a path too long for the file system, a path it cannot look at
        raise ValueError(f"results_dir {quoted_path(d)} cannot be used: {exc.strerror or exc}; give a shorter path"
                         if exc.errno == errno.ENAMETOOLONG else
                         f"results_dir {quoted_path(d)} cannot be used: {exc.strerror or exc}") from None
    refuse_too_long(d)
    if d.exists() and not d.is_dir():
        raise ValueError(f"results_dir {str(d)!r} is a file, not a directory")
    if d.is_symlink() and not d.exists():  # mkdir would fail on it after the build
        raise ValueError(f"results_dir {str(d)!r} is a link to {os.readlink(d)!r}, which does not exist; give "
                         "the directory itself, or create the link's target first")
    probe = d
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ValueError(f"results_dir {str(d)!r}: {str(probe)!r} is a file, not a directory")
    refuse_foreign(d)
    try:  # really try (access() says yes to root even where nothing can be written), a block's worth
        fd, name = tempfile.mkstemp(prefix=WRITE_PROBE, dir=probe)
        try:
            files._write_all(fd, b"\0" * 4096)
            os.fsync(fd)
            if need > 4096:
                files._claim(fd, need)
        finally:
            os.close(fd)
            os.unlink(name)
    except OSError as exc:
        if is_disk_full(exc):
            store = ResultsStore(d)
            raise store.disk_full(None, created=not store.samples_path.exists()) from None
        what = "is" if probe == d else f"cannot be created: {str(probe)!r} is"
        raise ValueError(f"results_dir {str(d)!r} {what} not writable ({exc.strerror})") from None
    owner = DirLock.held_by(d / LOCK_NAME)
    if owner:
        raise ValueError(f"results_dir {str(d)!r} is in use by {owner}; wait for that run to finish or stop it")
    for name in (LOCK_NAME, SAMPLES):  # files a run opens to write: their own mode may refuse it
        if (d / name).is_file():
            try:
                os.close(os.open(d / name, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC))
            except OSError as exc:
                raise ValueError(f"results_dir {str(d)!r}: its {name} cannot be written ({exc.strerror}); give this "
                                 f"user write permission on it (chmod u+w), and nothing in the directory changes "
                                 "before then") from None
    return d


class ResultsStore:
    def __init__(self, directory: str | os.PathLike, scrubber: Scrubber | None = None):
        self.dir = Path(directory)
        self.samples_path = self.dir / SAMPLES
        self.meta_path = self.dir / META
        self.scrubber = scrubber or Scrubber()
        self.lock = DirLock(self.dir / LOCK_NAME, f"the results directory {self.dir}")
        self.reserve = Reserve(self.dir / RESERVE)
        self.session: int | None = None  # 1-based number of the session this process opened
        self._run_id: str | None = None  # meta.json's, once read (run_id)
        self.access_note = ""  # set by open() when other users can read the directory
        self.sources_note = ""  # set by open() when a program's source changed and its binary did not
        self._reserving = False  # a session is open: meta.json's space reserve is kept

    @property
    def run_id(self) -> str:
        """The run's name: the directory's name when the run was created, kept in meta.json (a
        directory renamed between sessions keeps its run's name, so that the samples of every
        session pair on (run_id, block)); the directory's name before meta.json exists."""
        if self._run_id is None and self.meta_path.is_file():
            try:
                self._run_id = str(self.read_meta().get("run_id") or "") or None
            except CorruptFile:
                pass
        return self._run_id or self.dir.name

    def require_existing(self) -> None:
        """Refuse a path that holds no run, before anything is read or written (directory.require_run)."""
        require_run(self.dir)

    # --- meta -------------------------------------------------------------------------------
    def read_meta(self, reading: bool = False) -> dict[str, Any]:
        """meta.json; a CorruptFile names it, says what is wrong and how to recover (`reading`: for
        an analysis, which needs a run's directory, where a run may also be given a new one)."""
        text = ""
        try:
            text = self.meta_path.read_text(encoding="utf-8")
            meta = json.loads(text)
        except OSError as exc:
            why = _unreadable(exc)
        except UnicodeDecodeError:
            why = "it is not UTF-8 text"
        except json.JSONDecodeError as exc:
            # meta.json is always written whole, an object from "{" to "}": one that begins as an
            # object and stops before its end was cut short; anything else is simply not JSON
            begun, ended = text.lstrip().startswith("{"), text.rstrip().endswith("}")
            cut = ("; it ends before the JSON does: the file was cut short"
                   if begun and not ended and exc.msg != "Extra data" else "")
            why = f"it is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}){cut}"
        else:
            if not is_run_record(meta):
                why = "it is JSON but not a run's record (no plan or no sessions)"
            else:
                why = stored_plan_problem(meta["plan"]) or sessions_problem(meta["sessions"])
                if why is None:
                    return meta
        raise CorruptFile(self._corrupt_meta(why, reading))

    def read_plan(self) -> Plan:
        """The plan stored in meta.json, as a Plan (the one place a stored plan dict becomes one)."""
        return plan_from_dict(self.read_meta()["plan"])

    def _corrupt_meta(self, why: str, reading: bool = False) -> str:
        if not self.samples_path.exists():
            instead = "the results directory of a run" if reading else "the directory of a run, or a new or empty one"
            return (f"{self.meta_path} cannot be read: {why}, and no {SAMPLES} is beside it: {self.dir} is not a "
                    f"results directory of this package, or one of a run that stored no sample; give {instead}")
        try:
            lines = self.samples_path.read_bytes().count(b"\n")
        except OSError:
            lines = 0
        return (f"{self.meta_path} cannot be read: {why}. The samples are intact ({lines} lines in "
                f"{self.samples_path}). To recover, put back a copy of meta.json, or run the same plan again with "
                f"repair=True (CLI: --repair): it rebuilds meta.json from the plan, keeps the samples and moves "
                f"this file to {CORRUPT_META}")

    def write_meta(self, meta: dict[str, Any]) -> None:
        """Write meta.json atomically.  While a session is open the space reserve stays as large
        as a copy of it plus a margin.  On a full disk the reserve is given back and the write is
        tried once more in its space; while a session is open, DiskFull then stops the run (written
        or not: no reserve is left)."""
        text = json.dumps(self.scrubber.data(meta), indent=2, sort_keys=True, default=str)
        try:
            files._write_private(self.meta_path, text)
        except OSError as exc:
            if not is_disk_full(exc):
                raise
            self.reserve.release()
            try:
                files._write_private(self.meta_path, text)
            except OSError as again:
                if is_disk_full(again):
                    raise self.disk_full(again, writing=META) from None
                raise
            if self._reserving:
                raise self.disk_full(exc, writing=META) from None
            return
        if self._reserving:
            self._keep_reserve(len(text))

    def _keep_reserve(self, meta_size: int) -> None:
        try:
            self.reserve.ensure(meta_size + RESERVE_MARGIN)
        except OSError as exc:
            self.reserve.release()
            raise self.disk_full(exc) from None

    def check_plan(self, plan: Plan, repair: bool = False) -> None:
        """Refuse a directory that holds a different plan, or a samples.jsonl that cannot be read
        (before anything is built or written).  With `repair` an unreadable meta.json is left for
        open() to rebuild from this plan."""
        if self.samples_path.exists():
            self._read_samples(1)
        if self.meta_path.exists():
            try:
                meta = self.read_meta()
            except CorruptFile:
                if repair:
                    return
                raise
            if meta["plan"] != plan.to_dict():
                raise ValueError(self.other_plan(meta, plan))
            scan = self.scan()
            if not repair and not scan.bad:  # unreadable lines: open() refuses them first, naming them
                self.refuse_lost(meta, scan)

    def other_plan(self, meta: dict[str, Any], plan: Plan) -> str:
        """Why this directory's plan is not `plan`: what differs (store.meta.plan_difference); and
        where only values that a local cluster or the machine sets differ (threads) in a directory
        whose samples were all taken on one cluster, that it resumes as it was started, on that
        cluster (a local cluster's hosts run as many threads as each has CPUs)."""
        digests = f"digest {plan_from_dict(meta['plan']).digest}, this one {plan.digest}"
        clusters = {engine_cluster(s.get("engine")) for s in sampling_sessions(meta)}
        cluster = next(iter(clusters)) if len(clusters) == 1 else None
        if cluster is not None and set(differing_keys(meta["plan"], plan.to_dict())) <= set(MACHINE_DEFAULTS):
            return (f"{self.dir} holds a run of another plan ({digests}; "
                    f"{plan_difference(meta['plan'], plan.to_dict(), advice=False)}), taken on the cluster {cluster}: "
                    f"resume it as it was started (--cluster {cluster}; make run CLUSTER={cluster}; "
                    f"cluster=\"{cluster}\" in run.ipynb), or choose another results_dir to start a new run")
        return (f"{self.dir} already holds a different plan ({digests}; "
                f"{plan_difference(meta['plan'], plan.to_dict())}); choose another results_dir to start a new run")

    def open(self, plan: Plan, session: dict[str, Any], repair: bool = False,
             binaries: list[str] | tuple[str, ...] = (), new_binaries: bool = False) -> dict[str, Any]:
        """Take the directory's lock, then create it for a plan or reopen it to resume the same
        plan: a torn last line is dropped; other bad lines stop the run unless `repair`.  When
        samples are already stored, the binaries named in `binaries` (keys of
        session["binaries"]) must be those of the last session that recorded them, unless
        `new_binaries`, which notes the change in the new session.

        A directory created here is made 0700; an existing one keeps its mode (when others can
        read it, `access_note` and the session say so), and one that holds something else than a
        run of this package is refused.  On a full disk DiskFull is raised; a directory created
        by this call is then removed again, so nothing is left behind."""
        created = self._make_dir()
        if not created:
            refuse_foreign(self.dir)
        marked = self.reserve.released()  # a session before this one was stopped by a full disk
        for f in (self.samples_path, self.meta_path):
            if f.exists() and f.stat().st_mode & 0o077:
                os.chmod(f, 0o600)
        mode = self.dir.stat().st_mode
        if mode & 0o077:
            self.access_note = (f"{self.dir} is mode {mode & 0o7777:o}, not private: other users can see the "
                                "names of its files (samples.jsonl and meta.json stay 0600; exports follow your umask)")
            session = {**session, "results_dir_access": self.access_note}
        try:
            try:
                self.lock.acquire()
            except OSError as exc:
                if is_disk_full(exc):
                    raise self.disk_full(exc, writing=LOCK_NAME, created=bool(created)) from None
                raise
            try:
                return self._open_locked(plan, session, repair, binaries, new_binaries)
            except DiskFull as exc:
                if created:
                    exc.stored, exc.left_nothing = None, True
                elif self.session is None and not marked:  # no session recorded: no reserve left either
                    self.reserve.remove()
                elif self.session is not None:  # the session is recorded: so is its end
                    try:
                        self.end_session(finished_at=now_utc(), taken=0, interrupted=True,
                                         ended=f"error: {exc.what}", duration_s=0.0)
                    except DiskFull:
                        exc.end_recorded = False
                raise
        except BaseException:
            if created:
                self._remove_created(created)
            self.lock.release()
            self.session = None
            raise

    def _make_dir(self) -> list[Path]:
        """Create the directory (0700) and its missing parents; return those created, deepest first."""
        missing = []
        for d in (self.dir, *self.dir.parents):
            if d.exists():
                break
            missing.append(d)
        try:
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            if missing:
                os.chmod(self.dir, 0o700)
        except OSError as exc:
            if is_disk_full(exc):
                self._remove_created(missing)
                raise self.disk_full(exc, created=True) from None
            raise
        return missing

    def _remove_created(self, created: list[Path]) -> None:
        """Undo a failed first open: the files a run makes before its first sample, then the
        directories this process created (only when empty)."""
        for name in (LOCK_NAME, RESERVE, META, META + ".tmp", SAMPLES):
            try:
                (self.dir / name).unlink(missing_ok=True)
            except OSError:
                pass
        for d in created:
            try:
                d.rmdir()
            except OSError:
                break

    def disk_full(self, exc: OSError | None = None, writing: str = "", created: bool = False) -> DiskFull:
        """The DiskFull error of this directory: where, what was being written, how many samples are
        safely stored (none and nothing left behind when the directory was created by this run).  A
        full scratch directory (ScratchFull) is named as such, with its host on a cluster and what to
        do about it."""
        if isinstance(exc, ScratchFull):
            stored = None if created else len(self.scan().records)
            return DiskFull(exc.filename, SCRATCH_WRITING, stored, self.samples_path, left_nothing=created,
                            advice=exc.advice, host=exc.host)
        where = self.dir
        filename = getattr(exc, "filename", None)
        if filename and not writing:
            f = Path(filename)
            try:
                writing = str(f.relative_to(self.dir))
            except ValueError:
                where, writing = f.parent, f.name
        stored = None if created else len(self.scan().records)
        return DiskFull(where, writing, stored, self.samples_path, left_nothing=created)

    def _open_locked(self, plan: Plan, session: dict[str, Any], repair: bool, binaries, new_binaries: bool
                     ) -> dict[str, Any]:
        self.check_plan(plan, repair=repair)
        dropped = self.repair()
        scan = self.scan()
        if scan.bad:
            if not repair:
                raise CorruptRecords(scan.describe_bad(self.samples_path) + "; nothing was taken. Look at them, "
                                     "then resume with repair=True (CLI: --repair) to move them to "
                                     f"{REJECTED} and take those samples again")
            self.repair_records(scan)
        rebuilt = False
        if self.meta_path.exists():
            try:
                meta = self.read_meta()
            except CorruptFile as exc:
                if not repair:
                    raise
                meta, rebuilt = self._rebuilt_meta(plan, scan, str(exc)), True
            lost = self.lost(meta, scan, dropped)
            if lost.unexplained and not repair:
                self.refuse_lost(meta, scan)
            if lost.unrecorded:  # noted, so that the next resume counts them as known
                why = ("samples recorded as taken were missing from the file" if lost.unexplained
                       else "a torn last line of a sample recorded as taken was dropped")
                meta.setdefault("repairs", []).append({
                    "at": now_utc(), "lost_samples": lost.unrecorded, "taken_recorded": lost.taken,
                    "found": lost.found, "unreadable": lost.damaged, "not_samples": lost.not_samples,
                    "file": SAMPLES, "why": why + "; this session takes them again"})
        else:
            meta = {"run_id": self.run_id, "plan": plan.to_dict(), "plan_digest": plan.digest,
                    "created_at": now_utc(), "sessions": []}
        now_binaries = session.get("binaries") or {}
        unknown = (self._unrecorded_binaries(meta, scan.records)
                   if scan.records and any(now_binaries.get(k) for k in binaries) else [])
        if unknown:  # samples whose binaries no session records: nothing to compare the programs with
            if not new_binaries:
                raise BinariesChanged(
                    f"{self.dir} holds samples whose binaries are unknown: no session records the binaries that "
                    f"took them ({_lost_records(unknown, 'rebuilt' in meta)}), so whether the programs now are "
                    "those cannot be told; nothing was taken. Programs that may differ must not mix with earlier "
                    "samples: choose another results_dir, or resume with new_binaries=True (CLI: --new-binaries) "
                    "to continue in a new session whose samples carry its number in the `session` column "
                    "(meta.json records the binaries before it as unknown)")
            changed = {k: ("unknown", now_binaries.get(k)) for k in binaries}
        else:
            changed = self._changed(meta, "binaries", now_binaries, binaries) if scan.records else {}
            if changed and not new_binaries:
                what = "; ".join(f"{k}: {old[:12] if old else 'none'} then, {new[:12] if new else 'none'} now"
                                 for k, (old, new) in changed.items())
                raise BinariesChanged(
                    f"{self.dir} holds samples taken with other binaries ({what}); nothing was taken. Rebuilt "
                    "programs must not mix with earlier samples: choose another results_dir, or resume with "
                    "new_binaries=True (CLI: --new-binaries) to continue in a new session whose samples carry "
                    "its number in the `session` column")
        if changed:
            session = {**session, "binaries_changed": {k: {"before": o, "now": n} for k, (o, n) in changed.items()}}
        edited = self._changed(meta, "sources", session.get("sources") or {}, binaries) if scan.records else {}
        edited = {k: v for k, v in edited.items() if k not in changed and v[0] is not None}
        if edited:  # the same binaries took every sample: recorded and said, not refused
            session = {**session, "sources_changed": {k: {"before": o, "now": n} for k, (o, n) in edited.items()}}
            self.sources_note = (f"the source of {', '.join(edited)} changed since the last session and its binary "
                                 "did not (the same sha256: a comment, a file the build leaves out), so the samples "
                                 "continue; this session's sources_changed in meta.json records it")
        for old in meta["sessions"]:
            if "finished_at" not in old and not old.get("interrupted"):
                old["interrupted"] = True
                if old is meta["sessions"][-1] and self.reserve.released():
                    # it gave its space reserve back on a full disk, then could not write its end either
                    old["ended"] = "error: the disk was full; the session could not record its end"
                else:  # the process of that session was killed (kill -9, power loss)
                    old["ended"] = "killed: the session never recorded its end"
        meta["sessions"].append({**session, "session": len(meta["sessions"]) + 1, "pid": os.getpid(),
                                 "started_at": now_utc()})
        text_size = len(json.dumps(meta, indent=2, sort_keys=True, default=str))
        self._keep_reserve(text_size)  # before the session is written: a full disk changes nothing
        if rebuilt:  # moved aside only now: a refusal above leaves the directory as it was
            os.replace(self.meta_path, self.dir / CORRUPT_META)
        self.write_meta(meta)
        self.session = len(meta["sessions"])
        self._run_id = str(meta.get("run_id") or "") or None
        self._reserving = True
        self._keep_reserve(text_size)  # again: the write may have taken the reserve's space
        return meta

    def _rebuilt_meta(self, plan: Plan, scan: Scan, why: str) -> dict[str, Any]:
        """A new meta.json for the samples of an unreadable one, from the plan being resumed: the
        samples must all belong to it.  The unreadable file is kept as meta.json.corrupt (moved by
        the caller once the session opens); the sessions it recorded whole are kept, the others
        lost (their numbers stay reserved, the samples keep theirs)."""
        cells = {c.id for c in plan.cells()}
        strangers = [r["sample_id"] for r in scan.records if r["cell_id"] not in cells]
        if strangers:
            raise CorruptFile(f"{self.meta_path} cannot be read, and meta.json cannot be rebuilt from this plan: "
                              f"{self.samples_path} holds {len(strangers)} samples of other cells (e.g. "
                              f"{strangers[0]}); resume with the plan of that run, or put back a copy of meta.json")
        lost = max((int(r.get("session") or 0) for r in scan.records), default=0)
        try:
            recovered = recovered_sessions(self.meta_path.read_bytes().decode("utf-8", errors="replace"))
        except OSError:  # a directory in its place
            recovered = {}
        at = now_utc()
        names = Counter(str(r["run_id"]) for r in scan.records if r.get("run_id"))  # the run's own name
        run_id = names.most_common(1)[0][0] if names else self.dir.name
        sessions = []
        for k in range(1, lost + 1):
            found = recovered.get(k, {})
            if "session" in found:  # its whole record
                sessions.append(found)
            else:  # lost, but for the binaries and sources it recorded where those could be read
                sessions.append({**found, "session": k, "finished_at": None, "interrupted": None,
                                 "ended": "unknown: its record was lost with an unreadable meta.json"})
        rebuilt = {"at": at, "from_plan": True, "unreadable_copy": CORRUPT_META, "why": why}
        whole = [k for k in range(1, lost + 1) if "session" in recovered.get(k, {})]
        digests = [k for k in range(1, lost + 1) if k in recovered and k not in whole]
        if whole:
            rebuilt["recovered_sessions"] = whole
        if digests:  # of a session whose record is otherwise unusable
            rebuilt["recovered_digests_of_sessions"] = digests
        return {"run_id": run_id, "plan": plan.to_dict(), "plan_digest": plan.digest, "created_at": at,
                "rebuilt": rebuilt, "sessions": sessions}

    def end_session(self, **fields: Any) -> None:
        """Record the end of this process's session.  The space reserve is given back first (this
        write may need its space) and removed once the end is written; when even this write fails
        on a full disk, the empty reserve stays as the mark the next open reads."""
        self._reserving = False
        self.reserve.release()
        self.update_session(**fields)
        self.reserve.remove()

    @staticmethod
    def _unrecorded_binaries(meta: dict[str, Any], records: list[dict[str, Any]]) -> list[int | None]:
        """The sessions holding stored samples whose binaries no session records: every one after the
        last session that recorded its binaries (a record lost with an unreadable meta.json: samples
        carry their session's number, not its binaries); [None] for samples when no session records
        any and they carry no session number."""
        sessions = meta.get("sessions", [])
        last = max((s.get("session") or i + 1 for i, s in enumerate(sessions) if s.get("binaries")), default=0)
        holders = {r.get("session") for r in records}
        unknown: list[int | None] = sorted(h for h in holders if isinstance(h, int) and h > last)
        if not last and not unknown and holders:
            unknown = [None]
        return unknown

    @staticmethod
    def _changed(meta: dict[str, Any], field: str, now: dict[str, Any], names) -> dict[str, tuple]:
        """The digests (`field`: "binaries" or "sources") among `names` that differ from those of the
        last session that recorded any: {name: (then, now)}."""
        before = next((s[field] for s in reversed(meta.get("sessions", [])) if s.get(field)), None)
        if before is None:
            return {}
        return {k: (before.get(k), now.get(k)) for k in names if before.get(k) != now.get(k)}

    def close(self) -> None:
        if self._reserving:  # a session that ends without recording it: it reads as killed
            self._reserving = False
            self.reserve.remove()
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
    def _read_samples(self, size: int = -1) -> bytes:
        """samples.jsonl's bytes (its first `size`); a CorruptFile when it cannot be read (a
        directory in its place)."""
        try:
            with open(self.samples_path, "rb") as f:
                return f.read(size)
        except OSError as exc:
            raise CorruptFile(f"{self.samples_path} cannot be read: {_unreadable(exc)}; it must be the file of the "
                              "run's samples (one JSON object per line): put back a copy of it") from None

    def repair(self) -> int:
        """Drop a half-written last line left by a kill; return the number of bytes dropped."""
        if not self.samples_path.exists():
            return 0
        data = self._read_samples()
        if not data or data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        with open(self.samples_path, "r+b") as f:
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
        return len(data) - keep

    def scan(self) -> Scan:
        """Read samples.jsonl line by line: records, bad lines (with their numbers), a torn end.  A
        line is bad when it is not UTF-8 (never decoded with replacement characters, which would
        store a status or a name no run wrote), not a complete record, or a record of a cell the
        run's plan does not hold (another plan's file, a name no program has: `foreign_cell`)."""
        out = Scan()
        if not self.samples_path.exists():
            return out
        lines = self._read_samples().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        elif lines:
            lines.pop()  # no newline at the end: a write cut by a kill; repair() removes it
            out.torn = True
        cells = self._plan_cells()
        for lineno, raw in enumerate(lines, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.bad.append(BadLine(lineno, raw.decode("utf-8", errors="replace"),
                                       f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})", raw))
                continue
            if not line.strip():
                continue
            rec, why = why_bad(line)
            if rec is not None and cells is not None:
                why = foreign_cell(rec, cells)
                rec = None if why else rec
            if rec is None:
                out.bad.append(BadLine(lineno, line, why))
            else:
                out.records.append(rec)
        return out

    def _plan_cells(self) -> dict[str, tuple] | None:
        """The cells of the plan meta.json holds, by id: (workload, lang, variant, N); None where it
        holds none that can be read (meta.json missing or corrupt: its own errors say so)."""
        try:
            return {c.id: (c.workload, c.lang, c.variant, c.n) for c in plan_from_dict(self.read_meta()["plan"]).cells()}
        except (CorruptFile, KeyError, TypeError, ValueError):
            return None

    def lost(self, meta: dict[str, Any], scan: Scan, dropped: int = 0) -> Lost:
        """What meta.json's sessions recorded as taken that samples.jsonl no longer holds (`Lost`);
        `dropped`: the bytes of a torn last line repair() has just removed."""
        counted = {s.get("session") for s in meta["sessions"] if isinstance(s.get("taken"), int)}
        # a session's records: the samples it took, and those it stored as lost with their hosts
        out = Lost(taken=sum(s["taken"] + (s.get("samples_lost") or 0) for s in meta["sessions"]
                             if isinstance(s.get("taken"), int)))
        # a record without a session number cannot be told apart: it counts as found
        out.found = sum(r.get("session") in counted or r.get("session") is None for r in scan.records)
        try:
            rejected = (self.dir / REJECTED).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            rejected = []
        moved = []
        for line in rejected:  # (a repair that fails moves nothing: no line is listed twice)
            try:
                moved.append(str(json.loads(line)["text"]))
            except (ValueError, TypeError, KeyError):
                moved.append("")  # not a line a repair wrote: it stands for no sample
        # unreadable lines, there or moved aside: a damaged sample where one can be told, else no sample
        for text in [b.text for b in scan.bad] + moved:
            rec = stands_for_a_sample(text)
            if rec is None:
                out.not_samples += 1
            else:
                session = rec.get("session")  # of a damaged line: any value, a list included
                known = isinstance(session, int) and not isinstance(session, bool)
                out.damaged += session in counted if known else True
        out.torn = int(bool(scan.torn or dropped))
        out.recorded = sum(r.get("lost_samples", 0) for r in meta.get("repairs", [])
                           if isinstance(r, dict) and isinstance(r.get("lost_samples"), int))
        return out

    def refuse_lost(self, meta: dict[str, Any], scan: Scan) -> None:
        """Refuse to resume over samples that are missing and whose loss no repair recorded."""
        lost = self.lost(meta, scan)
        if lost.unexplained:
            raise MissingSamples(lost.describe(self.samples_path) + f"; nothing was taken. Put back a copy of "
                                 f"{SAMPLES}, or resume with repair=True (CLI: --repair) to record the loss in "
                                 "meta.json and take those samples again")

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
            lines = self._read_samples().split(b"\n")  # bytes: a line that is not UTF-8 is moved whole
            if lines and lines[-1] == b"":
                lines.pop()
            rejected = self.dir / REJECTED
            before = rejected.stat().st_size if rejected.exists() else None
            try:
                with open(rejected, "a", encoding="utf-8", opener=files._private_opener) as f:
                    for b in scan.bad:
                        moved = {"line": b.lineno, "why": b.why, "text": self.scrubber.text(b.text), "moved_at": now_utc()}
                        if b.raw is not None:  # the bytes as they were, so the line can be put back whole
                            moved["base64"] = base64.b64encode(b.raw).decode("ascii")
                        f.write(json.dumps(moved) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                kept = [ln for i, ln in enumerate(lines, start=1) if i not in bad_numbers]
                files._write_private(self.samples_path, b"".join(ln + b"\n" for ln in kept))
            except OSError as exc:
                # nothing moved: samples.jsonl is as it was, and samples.rejected.jsonl too (a repair
                # tried again must not list the same lines twice)
                if before is None:
                    rejected.unlink(missing_ok=True)
                else:
                    os.truncate(rejected, before)
                if is_disk_full(exc):
                    raise self.disk_full(exc) from None
                raise
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
        """The samples not to take again: those of each block's kept attempt (`latest_records`)
        whose status is final.  A sample of an abandoned attempt is not done: its block was taken
        again whole, and that attempt's sample stands (skipped, say, where the abandoned one was ok)."""
        return {r["sample_id"] for r in not_taken_again(self.latest_records())}

    def append(self, record: dict[str, Any]) -> None:
        """Append one sample and fsync it.  On a full disk the file is cut back to its last whole
        line, so every stored sample stays whole, and DiskFull says how many are stored."""
        data = (json.dumps(self.scrubber.data(record), sort_keys=True, default=str) + "\n").encode("utf-8")
        try:
            fd = os.open(self.samples_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            if is_disk_full(exc):
                self.reserve.release()
                raise self.disk_full(exc, writing=SAMPLES) from None
            raise
        try:
            size = os.fstat(fd).st_size
            try:
                files._write_all(fd, data)
                os.fsync(fd)
            except OSError as exc:
                if not is_disk_full(exc):
                    raise
                os.ftruncate(fd, size)
                self.reserve.release()
                raise self.disk_full(exc, writing=SAMPLES) from None
        finally:
            os.close(fd)

    def latest_records(self) -> list[dict[str, Any]]:
        """One record per sample id: the last one written (a skipped sample taken again later) of
        the block's kept attempt (`current_attempts`)."""
        return latest(current_attempts(self.records())[0])

    def load(self) -> pd.DataFrame:
        """The tidy frame.  Unreadable or incomplete lines and samples stored twice are reported
        (a warning naming the line numbers), never dropped in silence."""
        self.require_existing()
        scan = self.scan()
        if scan.bad:
            warnings.warn(scan.describe_bad(self.samples_path) + "; they are left out of this frame "
                          "(repair with bench_src.api.repair or `python -m bench_src repair DIR`)",
                          CorruptRecordsWarning, stacklevel=2)
        sessions: list = []
        try:
            meta = self.read_meta()
            lost, sessions = self.lost(meta, scan), meta.get("sessions") or []
        except CorruptFile:  # read_meta's error is the report's; the samples can still be looked at
            lost = Lost()
        if lost.unexplained:
            warnings.warn(lost.describe(self.samples_path) + "; what follows is read from the samples that are there (put "
                          f"back a copy of {SAMPLES}, or resume the run with --repair to record the loss and take "
                          "them again)", MissingSamplesWarning, stacklevel=2)
        elif lost.missing > lost.torn:
            warnings.warn(f"{lost.missing} samples recorded as taken by an earlier session are missing from "
                          f"{self.samples_path}; their loss is recorded in meta.json (repairs), and a resume takes "
                          "them again", MissingSamplesWarning, stacklevel=2)
        records, abandoned = current_attempts(scan.records)
        counts: dict[str, int] = {}
        for r in not_taken_again(records):
            counts[r["sample_id"]] = counts.get(r["sample_id"], 0) + 1
        twice = sorted(k for k, v in counts.items() if v > 1)
        if twice:
            warnings.warn(f"{self.samples_path}: {len(twice)} sample(s) stored more than once (the last copy is "
                          f"used), e.g. {twice[0]}", CorruptRecordsWarning, stacklevel=2)
        df = samples_frame(latest(records))
        df.attrs["bad_lines"] = [b.lineno for b in scan.bad]
        df.attrs["missing_samples"] = lost.missing
        # samples of a block whose host was lost mid-block (the block ran again whole): kept on disk,
        # out of the frame, and why (the loss meta.json records for their attempt)
        df.attrs["abandoned_samples"] = len(abandoned)
        df.attrs["abandoned_reasons"] = dict(set_aside_reasons(abandoned, sessions))
        return df


class CorruptRecordsWarning(UserWarning):
    pass


class MissingSamplesWarning(CorruptRecordsWarning):
    """Samples recorded as taken are missing from samples.jsonl."""
