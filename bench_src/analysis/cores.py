"""How an answer moves with the number of cores (a plan with `cores`: every cell run pinned to k
CPUs with k threads, the core counts interleaved in the same blocks).

- `ratio_vs_cores`: each Go-vs-Rust comparison at every core count (the Go-vs-Rust table's own
  rows, decided in the family of the whole run, unpinned workloads included, so its intervals and
  verdicts), and the **change** of the ratio from the fewest cores to
  k cores: per block, log(Go_k / Rust_k) - log(Go_1 / Rust_1), tested like any comparison
  (compare.pair_test on the per-block ratios), the changes of a metric forming one family
  (Benjamini-Hochberg, every interval at the level its verdict is read from).  A change whose
  interval excludes 1 says the Go/Rust ratio at k cores differs from the ratio at the fewest.
- `speedup`: per cell, time at the fewest cores over time at k cores (the same program, variant,
  N and parameters), per block, one family per metric: above 1 the program gains from the cores.

Assumption (as in compare): blocks are exchangeable and a block's disturbances hit its cells
alike, so per-block ratios cancel them.  The tests use the fixed design (one look): in a
sequential run the later blocks hold only the cells still open, so these tables use the blocks
where both core counts of a comparison were measured, and their p-values do not spend alpha over
the looks (the rows say so in `warning`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import rules
from .compare import CellValues, cell_name, compare, decide_family, go_vs_rust_row, pair_test
from ..plan.comparisons import CellRef, comparisons

KEY = ["workload", "n", "arm", "shared_params", "go_variant", "rust_variant", "go_params", "rust_params"]


def pinned(df: pd.DataFrame) -> pd.DataFrame:
    """The samples of cells run at a core count (a plan whose `cores` names some workloads runs the
    others unpinned: they have no core count to compare across)."""
    out = df[df["cores"].notna()] if "cores" in df.columns else df.iloc[0:0]
    out.attrs = dict(df.attrs)
    return out


def _sequential(df: pd.DataFrame) -> bool:
    design = df.attrs.get("design") or {}
    return len(design.get("looks", ())) > 1 if isinstance(design, dict) else False


def ratio_vs_cores(df: pd.DataFrame, metric: str = "elapsed_s", margin: float = rules.MARGIN,
                   alpha: float = rules.ALPHA) -> pd.DataFrame:
    """One row per Go-vs-Rust comparison and core count: the ratio with its interval and verdict
    from the Go-vs-Rust table, and the change of the ratio against the fewest cores
    (`change`, `change_ci_low`, `change_ci_high` at the level `change_ci_level` of the changes'
    family, `change_p_adjusted`, `change_kind`; empty at the fewest cores)."""
    every = df
    df = pinned(df)
    if df.empty:
        return pd.DataFrame()
    cv = CellValues(df, metric)
    by_key: dict[tuple, dict[int, tuple[CellRef, CellRef]]] = {}
    for a, b in comparisons(cv.refs(), "go_vs_rust"):
        if a.threads is None:
            continue
        row = go_vs_rust_row(a, b)
        by_key.setdefault(tuple(str(row[k]) for k in KEY), {})[a.threads] = (a, b)
    # the rows of the Go-vs-Rust table of the whole run (its family holds the unpinned workloads
    # too), so each core count's interval and verdict are the ones that table shows
    table = compare(every, metric, margin=margin, alpha=alpha)
    if table.empty:
        return pd.DataFrame()
    table = table.rename(columns={"threads_requested": "cores"})
    mine = [tuple(str(r[k]) for k in KEY) for _, r in table.iterrows()]
    table = table[[k in by_key and c in by_key[k] for k, c in zip(mine, table["cores"])]].reset_index(drop=True)
    if table.empty:
        return pd.DataFrame()
    changes, tests = [], []
    for key, at in by_key.items():
        cores = sorted(at)
        if len(cores) < 2:
            continue
        base = at[cores[0]]
        r0 = cv.per_block(base[0]) / cv.per_block(base[1])
        for k in cores[1:]:
            rk = cv.per_block(at[k][0]) / cv.per_block(at[k][1])
            r0k, rkk = r0.dropna(), rk.dropna()
            tests.append(pair_test(rkk.index.to_numpy(), rkk.to_numpy(), r0k.index.to_numpy(), r0k.to_numpy(),
                                   True, level_min=alpha / max(1, sum(len(v) - 1 for v in by_key.values()))))
            changes.append((key, k, cores[0]))
    decided = decide_family(tests, alpha, margin) if tests else []
    table["change"] = np.nan
    for col in ("change_ci_low", "change_ci_high", "change_ci_level", "change_p_adjusted"):
        table[col] = np.nan
    table["change_kind"] = ""
    table["change_pairs"] = 0
    table["change_from_cores"] = np.nan
    note = "the change is tested as a fixed design (a sequential run's looks are not spent)" if _sequential(df) else ""
    keys = table[KEY].astype(str).apply(tuple, axis=1)
    for (key, k, k0), t, d in zip(changes, tests, decided):
        hit = (keys == key) & (table["cores"] == k)
        table.loc[hit, ["change", "change_ci_low", "change_ci_high", "change_ci_level", "change_p_adjusted"]] = (
            d["ratio"], d["ratio_ci_low"], d["ratio_ci_high"], d["ci_level"], d["p_adjusted"])
        table.loc[hit, "change_kind"] = {"a": "lower", "b": "higher"}.get(d["verdict_kind"], d["verdict_kind"])
        table.loc[hit, "change_pairs"] = t.stats["pairs"]
        table.loc[hit, "change_from_cores"] = k0
        if note:
            table.loc[hit, "warning"] = [f"{w}; {note}" if w else note for w in table.loc[hit, "warning"]]
    return table.sort_values([*KEY, "cores"]).reset_index(drop=True)


def _cores(k: int) -> str:
    return f"{k} core{'' if k == 1 else 's'}"


def speedup(df: pd.DataFrame, metric: str = "elapsed_s", alpha: float = rules.ALPHA) -> pd.DataFrame:
    """One row per cell and core count above the fewest: value at the fewest cores / value at k
    cores, per block, with its interval at the family's level (one family per metric); a memory
    cell whose values are dispersed at either core count is named in the row's `warning`
    (compare.CellValues.dispersed)."""
    cv = CellValues(pinned(df), metric)
    cells: dict[CellRef, dict[int, CellRef]] = {}
    for ref in cv.refs():
        if ref.threads is not None:
            cells.setdefault(ref._replace(threads=None), {})[ref.threads] = ref
    rows, tests, spread = [], [], []
    m = sum(max(len(v) - 1, 0) for v in cells.values())
    for base, at in sorted(cells.items(), key=lambda kv: repr(kv[0])):
        cores = sorted(at)
        for k in cores[1:]:
            one, many = at[cores[0]], at[k]
            tests.append(pair_test(*cv.cells[one], *cv.cells[many], True, level_min=alpha / max(m, 1),
                                   resolution=rules.resolution(metric)))
            # a memory cell whose values are dispersed at either core count (quality.dispersion_warning)
            spread.append(cv.dispersed((one, many), lambda ref: f"{cell_name(ref)} at {_cores(ref.threads)}"))
            rows.append({"workload": base.workload, "lang": base.lang, "variant": base.variant, "n": base.n,
                         "arm": base.arm, "params": ",".join(f"{p}={v}" for p, v in base.params),
                         "cores": k, "from_cores": cores[0], "metric": metric})
    cols = ["workload", "lang", "variant", "n", "arm", "params", "cores", "from_cores", "metric", "pairs", "speedup",
            "speedup_ci_low", "speedup_ci_high", "ci_level", "p_adjusted", "verdict_kind", "warning"]
    if not rows:
        return pd.DataFrame(columns=cols)
    note = "the speed-up is tested as a fixed design (a sequential run's looks are not spent)" if _sequential(df) else ""
    for r, t, d, dispersed in zip(rows, tests, decide_family(tests, alpha, rules.MARGIN, m), spread):
        r.update({"pairs": t.stats["pairs"], "speedup": d["ratio"], "speedup_ci_low": d["ratio_ci_low"],
                  "speedup_ci_high": d["ratio_ci_high"], "ci_level": d["ci_level"], "p_adjusted": d["p_adjusted"],
                  # in the metric's own terms: the program needs more or less of it (time, CPU, memory)
                  "verdict_kind": {"a": "more with more cores", "b": "less with more cores"}.get(
                      d["verdict_kind"], d["verdict_kind"]),
                  "warning": "; ".join(w for w in (t.stats["warning"], *dispersed, note) if w)})
    return pd.DataFrame(rows, columns=cols)
