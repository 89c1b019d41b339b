"""How a session takes its samples: the engine meta.json records (in-process, a cluster, the
engines' A/A check: named by store/meta.py), a resume refused on another engine, and the A/A
check's paired blocks (arm A here, arm B on the cluster's host)."""
from __future__ import annotations

import random
import time
from typing import Callable

from ..analysis import sequential
from ..cluster_spec import ClusterSpec
from ..plan import Plan, Slot
from ..store import CorruptFile, ResultsStore
from ..store.meta import engine_name


def engines_take_blocks(plan: Plan, take_here: Callable, take_there: Callable, done: set[str],
                        skipped: set[str] | frozenset[str] = frozenset()) -> Callable[[list, float | None], bool]:
    """take_blocks of the engines' A/A check: each block's arm A samples taken here (take_here(seq,
    slot)), its arm B samples as one block on the cluster's host (take_there([part], None)), the
    two parts one after the other in an order drawn from the plan's seed per block, so that a
    drift of the machine falls on both engines alike.  A host lost mid-part runs its part again
    whole (one attempt per block, as the store expects); a measured block an earlier session left
    incomplete in either part is taken again whole in both, so that its pairs come from one session."""
    def take_blocks(blocks: list[list[tuple[int, Slot]]], deadline: float | None) -> bool:
        for block in blocks:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            here = [(q, s) for q, s in block if s.cell.arm != "B"]
            there = [(q, s) for q, s in block if s.cell.arm == "B"]
            phase, number = block[0][1].phase, block[0][1].block
            first_here = random.Random(f"{plan.seed}:engines:{phase}:{number}").random() < 0.5
            slots, whole = sequential.block_to_take(here, done, skipped)
            there_missing = bool(there) and any(s.sample_id not in done for _, s in there)
            if there_missing and phase == "measured":  # the block is taken again: both its parts,
                slots, whole = list(here), True      # so that its pairs come from one session
            if whole and slots and phase == "measured":
                there_missing = bool(there)
            for part in ((here, there) if first_here else (there, here)):
                if part is here:  # a part left incomplete by an earlier session: again whole
                    for q, s in slots:
                        take_here(q, s) if whole else take_here(q, s, alone=True)
                elif there_missing:
                    take_there([there], None)
        return True

    return take_blocks


def refuse_other_engine(store: ResultsStore, cluster: ClusterSpec | None, engines: bool = False) -> None:
    """A directory whose samples were taken in-process is resumed in-process, one of a cluster on
    a cluster: a cluster's blocks run whole on one host and every host takes its own warm-ups, an
    in-process resume would split a block between this machine and a host."""
    if not store.meta_path.exists():
        return
    try:
        sessions = store.read_meta().get("sessions", [])
    except CorruptFile:
        return  # the run's own checks say what to do with it
    kinds = {str(s.get("engine", "in-process")).split(" ")[0] for s in sessions if s.get("taken")}
    mine = engine_name(cluster, engines).split(" ")[0]
    if kinds and mine not in kinds:
        earlier = ", ".join(sorted({s.get("engine", "in-process") for s in sessions if s.get("taken")}))
        how = ("as the engines' A/A check (python -m bench_src engines --paired)" if "engines-aa:" in kinds
               else "with --cluster" if "cluster" in kinds else "without a cluster")
        raise ValueError(f"{store.dir} holds samples taken {earlier.replace('cluster', 'on the cluster')}; resume "
                         f"it the same way ({how}), or give another results_dir")
