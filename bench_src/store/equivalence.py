"""Proof that the two programs do the same work: their checksums must agree.

Within a cell every sample must print the same checksum, and across languages and variants every
cell with the same equivalence key (workload, N and the parameters that change the work) must too.
The runner checks each sample as it arrives against the first checksum seen for its key; `check`
re-examines a whole frame afterwards and `mark_valid` excludes every sample of a key that
disagrees (one cannot tell which side is right).
"""
from __future__ import annotations

import json

import pandas as pd

from ..plan import Cell
from ..statuses import CHECKSUM_MISMATCH, OK


def key_string(cell: Cell) -> str:
    w, n, params = cell.equivalence_key()
    return json.dumps([w, n, list(map(list, params))])


class ChecksumBook:
    """The expected checksum of each equivalence key, learnt from the first good sample."""

    def __init__(self, records=()):
        self.expected: dict[str, tuple[str, str]] = {}
        for r in records:
            if r.get("status") == OK and r.get("checksum"):
                self.expected.setdefault(r["equiv_key"], (r["checksum"], r["cell_id"]))

    def verdict(self, equiv_key: str, checksum: str, cell_id: str) -> tuple[str | None, str]:
        """Return (expected checksum, '' or a reason when this checksum disagrees)."""
        if equiv_key not in self.expected:
            self.expected[equiv_key] = (checksum, cell_id)
            return checksum, ""
        want, first = self.expected[equiv_key]
        if checksum == want:
            return want, ""
        return want, f"checksum {checksum} differs from {want} printed by {first}"


def identity_params(equiv_key: str) -> str:
    """The parameters that change the work, as the key holds them ("digest=on"; "" where none
    does): the same for every cell of the key, unlike each cell's own parameters (a pool size, a
    driver), which one row of several cells cannot stand for."""
    try:
        _, _, params = json.loads(equiv_key)
        return ",".join(f"{k}={v}" for k, v in params)
    except (TypeError, ValueError):
        return ""


def check(df: pd.DataFrame) -> pd.DataFrame:
    """One row per equivalence key: the checksums seen, by whom, and whether they agree; `params`
    the key's work-identity parameters (`identity_params`)."""
    ok = df[df["status"].isin([OK, CHECKSUM_MISMATCH])]
    if ok.empty:
        return pd.DataFrame(columns=["equiv_key", "workload", "n", "params", "checksums", "langs", "cells",
                                     "samples", "agree"])
    rows = []
    for key, g in ok.groupby("equiv_key", sort=False):
        sums = sorted(g["checksum"].dropna().unique())
        rows.append({
            "equiv_key": key,
            "workload": g["workload"].iloc[0],
            "n": int(g["n"].iloc[0]),
            "params": identity_params(key),
            "checksums": ", ".join(sums),
            "langs": ", ".join(sorted(g["lang"].unique())),
            "cells": g["cell_id"].nunique(),
            "samples": len(g),
            "agree": len(sums) == 1,
        })
    return pd.DataFrame(rows).sort_values(["workload", "n"]).reset_index(drop=True)


def mark_valid(df: pd.DataFrame) -> pd.DataFrame:
    """Add `valid`: a measured, successful sample whose key shows one checksum only."""
    out = df.copy()
    table = check(out)
    bad = set(table.loc[~table["agree"], "equiv_key"]) if not table.empty else set()
    out["valid"] = (out["status"] == OK) & (out["phase"] == "measured") & ~out["equiv_key"].isin(bad)
    return out
