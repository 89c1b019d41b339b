"""What happened to every sample: samples per cell and status, failures by reason (raw, from the
samples frame, and for reading), and the checksums per work identity."""
from __future__ import annotations


import pandas as pd

from ...catalogue import WORKLOADS
from ...statuses import OK
from ...store.equivalence import identity_params
from .. import units
from .formatting import column_of, finish, n_text, params_dict, params_text, threads_text
from .markup import Readable


def checksums(table: pd.DataFrame) -> Readable:
    t = table.reset_index(drop=True)
    if "agree" in t:
        t = t.sort_values("agree", kind="stable")  # disagreements first
    out = pd.DataFrame(index=t.index)
    out["workload"] = column_of(t, "workload", "")
    out["N"] = n_text(t)
    # the parameters that make the work (the key's), not those of one of its cells (a driver or a pool)
    out["parameters"] = column_of(t, "equiv_key", "").map(lambda k: identity_params(k).replace(",", ", "))
    out["languages"] = column_of(t, "langs", "")
    out["cells"] = column_of(t, "cells").map(units.count)
    out["samples"] = column_of(t, "samples").map(units.count)
    out["checksums"] = column_of(t, "checksums", "")
    out["agree"] = column_of(t, "agree").map(lambda v: "yes" if v is True or v == 1 else "NO")
    return finish(out, "Checksums per work identity", keep=("agree",))


CELL = ["workload", "lang", "variant", "n", "threads_requested", "params"]


def status_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Raw: samples per cell, phase and status (warm-ups included), so that no failure goes unseen."""
    cols = [*CELL, "phase", "status", "samples"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    t = df.groupby([*CELL, "phase", "status"], dropna=False, sort=False).size().rename("samples").reset_index()
    return _sort_cells(t)[cols]


def _sort_cells(t: pd.DataFrame) -> pd.DataFrame:
    """Catalogue order of workloads, then language, variant, N and parameters."""
    order = {w: i for i, w in enumerate(WORKLOADS)}
    key = t["workload"].map(lambda w: order.get(w, len(order)))
    return (t.assign(_w=key, _n=pd.to_numeric(t["n"], errors="coerce"), _p=t["params"].map(str))
            .sort_values(["_w", "lang", "variant", "_n", "_p"], kind="stable").drop(columns=["_w", "_n", "_p"]))


def failure_groups(df: pd.DataFrame) -> pd.DataFrame:
    """Raw: every sample that is not ok, grouped by cell, status and reason, with the phases and count."""
    cols = [*CELL, "status", "reason", "samples", "phases", "first_sample"]
    bad = df[df["status"] != OK] if not df.empty else df
    if bad.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for keys, g in bad.groupby([*CELL, "status", "reason"], dropna=False, sort=False):
        rows.append({**dict(zip([*CELL, "status", "reason"], keys)), "samples": len(g),
                     "phases": ", ".join(f"{p} {k}" for p, k in g["phase"].value_counts().items()),
                     "first_sample": g["sample_id"].iloc[0]})
    return _sort_cells(pd.DataFrame(rows, columns=cols)).reset_index(drop=True)


def status(counts: pd.DataFrame) -> Readable:
    """One row per cell, one column per status: measured samples, and '+k w' for warm-ups."""
    if counts.empty:
        return Readable(pd.DataFrame(), "no samples", "Samples by status")
    c = counts.copy()
    c["_cell"] = c[CELL].map(str).agg("|".join, axis=1)
    statuses = list(dict.fromkeys([OK, *sorted(set(c["status"]) - {OK})]))
    cells = c.drop_duplicates("_cell")
    out = pd.DataFrame({"workload": cells["workload"].values, "lang": cells["lang"].values,
                        "variant": cells["variant"].values, "N": cells["n"].map(units.count).values,
                        "threads": cells["threads_requested"].map(threads_text).values,
                        "parameters": cells["params"].map(lambda s: params_text(params_dict(s))).values})
    for s in statuses:
        texts = []
        for cell in cells["_cell"]:
            g = c[(c["_cell"] == cell) & (c["status"] == s)]
            measured = int(g.loc[g["phase"] == "measured", "samples"].sum())
            warm = int(g.loc[g["phase"] != "measured", "samples"].sum())
            texts.append((str(measured) if measured or not warm else "") + (f" +{warm} w" if warm else "")
                         if measured or warm else "")
        out[s] = [t.strip() for t in texts]
    bad = [s for s in statuses if s != OK]
    if bad:  # cells with a problem first
        order = out[bad].ne("").any(axis=1)
        out = pd.concat([out[order], out[~order]])
    total = int(counts["samples"].sum())
    not_ok = int(counts.loc[counts["status"] != OK, "samples"].sum())
    note = (f"{total:,} samples, {not_ok:,} not ok. Counts of measured samples; '+k w': k warm-up samples.")
    return finish(out, "Samples by status", note, keep=(OK,))


def failures(groups: pd.DataFrame) -> Readable:
    if groups.empty:
        return Readable(pd.DataFrame(), "every sample is ok", "Failures")
    out = pd.DataFrame(index=groups.index)
    for c in ("workload", "lang", "variant"):
        out[c] = groups[c]
    out["N"] = groups["n"].map(units.count)
    out["threads"] = groups["threads_requested"].map(threads_text)
    out["parameters"] = groups["params"].map(lambda s: params_text(params_dict(s)))
    out["status"] = groups["status"]
    out["samples"] = groups["samples"].map(units.count) + " (" + groups["phases"] + ")"
    out["reason"] = groups["reason"].fillna("")
    return finish(out, "Failures", f"{int(groups['samples'].sum()):,} samples not ok, by cell and reason.",
                   keep=("status", "reason"))
