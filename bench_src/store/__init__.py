"""Store: a results directory (`meta.json`, `samples.jsonl`, timelines) and the checksum book that
proves equal work.  `load` gives the tidy samples frame with its `valid` column."""
from __future__ import annotations

import os

import pandas as pd

from .equivalence import ChecksumBook, check, key_string, mark_valid
from .results import COLUMNS, ResultsStore, now_utc, samples_frame


def load(results_dir: str | os.PathLike) -> pd.DataFrame:
    """The tidy frame of a results directory (one row per sample), with the `valid` column."""
    return mark_valid(ResultsStore(results_dir).load())


__all__ = ["COLUMNS", "ChecksumBook", "ResultsStore", "check", "key_string", "load", "mark_valid", "now_utc",
           "samples_frame"]
