"""Earlier runs under the results root, as the duration estimate reads them: per cell, the median
seconds a sample took (`history`), and the pilot of an earlier run of the same cells
(`earlier_pilot`), which is the best guess of what the sequential rule will decide before a run
has a pilot of its own.

Each directory's records are read as its own analysis reads them: the kept attempt of every block
(`ledger.current_attempts`) and, of a sample taken again, the last record (`ledger.latest`).  A
block an interrupted session left incomplete and the next session took again whole is one block
here, not two: its abandoned samples would pair with the retaken ones and give the estimate's
sequential rule pairs the run never had."""
from __future__ import annotations

import statistics
from pathlib import Path
from typing import Iterator

from .. import paths
from ..plan import Plan
from ..plan.estimate import ok_times
from .ledger import current_attempts, latest
from .records import why_bad


def earlier_runs(results_root: str | Path | None = None, exclude: str | Path | None = None
                 ) -> Iterator[tuple[Path, list[dict]]]:
    """Every results directory under `results_root` (default data/results/) but `exclude`, with
    the records its analysis would keep, in the order written.  A directory whose samples file
    cannot be read is passed over; a line that is no sample record (`records.why_bad`: torn, a key
    missing or of the wrong type) is left out: an estimate is no place to report a damaged file
    (`load` does), and one such line in another directory stopped every later run."""
    root = Path(results_root) if results_root is not None else paths.RESULTS
    excluded = Path(exclude).resolve() if exclude is not None else None
    for samples in sorted(root.glob(f"*/{paths.SAMPLES}")):
        if excluded is not None and samples.parent.resolve() == excluded:
            continue
        try:
            lines = samples.read_text(errors="replace").splitlines()
        except OSError:
            continue
        records = [rec for rec, _ in map(why_bad, lines) if rec is not None]
        yield samples.parent, latest(current_attempts(records)[0])


def history(results_root: str | Path | None = None, exclude: str | Path | None = None
            ) -> tuple[dict[str, float], dict[str, set[str]]]:
    """Median seconds per sample of every cell id found in the results directories under
    `results_root` (samples with status ok only), and per cell id the directories it came from."""
    times: dict[str, list[float]] = {}
    sources: dict[str, set[str]] = {}
    for directory, records in earlier_runs(results_root, exclude):
        for cid in ok_times(records, times):
            sources.setdefault(cid, set()).add(str(directory))
    return {k: statistics.median(v) for k, v in times.items()}, sources


def earlier_pilot(plan: Plan, results_root: str | Path | None = None, exclude: str | Path | None = None
                  ) -> tuple[list[dict], str | None]:
    """The measured samples (of its first `samples` blocks) of an earlier results directory whose
    pilot holds every cell of the plan, and that directory.  A directory missing some of the plan's
    cells is no guide: the rule would count each comparison it cannot see at the budget (a run of
    a smaller profile shares cells with a larger one, and made the larger one's estimate many times
    too long).  Of several, the one with most samples."""
    wanted = {c.id for c in plan.cells()}
    best: tuple[int, list[dict], str | None] = (0, [], None)
    for directory, records in earlier_runs(results_root, exclude):
        kept = [rec for rec in records
                if (rec.get("cell_id") in wanted and rec.get("phase") == "measured"
                    and isinstance(rec.get("block"), int) and rec["block"] < plan.samples)]
        if {r["cell_id"] for r in kept} == wanted and len(kept) > best[0]:
            best = (len(kept), kept, str(directory))
    return best[1], best[2]

