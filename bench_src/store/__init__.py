"""Store: a results directory (`meta.json`, `samples.jsonl`, timelines), the checksum book that
proves equal work, and what a full disk does to a run (`space`).  `load` gives the tidy samples
frame with its `valid` column."""
from __future__ import annotations

import os

import pandas as pd

from .equivalence import ChecksumBook, check, key_string, mark_valid
from .frame import COLUMNS, samples_frame
from .ledger import current_attempts
from .lock import DirLock, LockedError
from .directory import NotAResultsDirectory, latest_results_dir
from .results import (CorruptFile, CorruptRecords, CorruptRecordsWarning, MissingSamples, MissingSamplesWarning,
                      ResultsStore, check_results_dir, now_utc)
from .secrets import Scrubber
from .space import DiskFull, is_disk_full


def load(results_dir: str | os.PathLike) -> pd.DataFrame:
    """The tidy frame of a results directory (one row per sample), with the `valid` column."""
    return mark_valid(ResultsStore(results_dir).load())


def repair(results_dir: str | os.PathLike) -> int:
    """Move the unreadable or incomplete lines of samples.jsonl to samples.rejected.jsonl (noted in
    meta.json); a resume then takes those samples again.  Returns the number of lines moved."""
    return ResultsStore(results_dir).repair_records()


__all__ = ["COLUMNS", "ChecksumBook", "CorruptFile", "current_attempts", "CorruptRecords", "CorruptRecordsWarning", "DirLock",
           "DiskFull", "LockedError", "MissingSamples", "MissingSamplesWarning", "NotAResultsDirectory", "ResultsStore", "Scrubber", "check", "check_results_dir",
           "is_disk_full", "key_string", "latest_results_dir", "load", "mark_valid", "now_utc", "repair", "samples_frame"]
