"""The plan as data: its cells, the slots of its randomized interleaved schedule, and the plan
itself as stored in meta.json.  Validation of a user's parameters is in `validate`."""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import random
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from ..catalogue import LANGS, WORKLOADS
from ..parameters import BLOCK_ORDERS, WARMUP_SCOPES
from .dsn import redact_dsn

# The block order of a plan stored before the order was a choice (meta.json without the key):
# every cell anywhere.  make_plan's default is the first of parameters.BLOCK_ORDERS, "grouped".
STORED_BEFORE_BLOCK_ORDER = "shuffled"


@dataclass(frozen=True, order=True)
class Cell:
    """One combination that is sampled repeatedly: workload x language x variant x N x params."""

    workload: str
    lang: str
    variant: str
    n: int
    threads: int | None
    params: tuple[tuple[str, str], ...]
    arm: str = ""  # "A" / "B" in an A/A run: the same program and arguments measured as two arms
    # a plan with `cores`: the program runs on exactly this many CPUs (the launcher sets its
    # affinity before exec) with as many threads; 0: not pinned, `threads` only
    cores: int = 0

    @property
    def id(self) -> str:
        p = ",".join(f"{k}={v}" for k, v in self.params)
        t = "cpus" if self.threads is None else str(self.threads)
        arm = f"|arm={self.arm}" if self.arm else ""
        cores = f"|cores={self.cores}" if self.cores else ""
        return f"{self.workload}|{self.lang}|{self.variant}|n={self.n}|t={t}|{p}{arm}{cores}"

    @property
    def params_dict(self) -> dict[str, str]:
        return dict(self.params)

    def group_key(self) -> tuple:
        """What the cells that any analysis may pair share: a block of the "grouped" order runs
        such cells next to each other.  plan/comparisons.py pairs cells of the same workload, N and
        threads (arms A and B of an A/A run too, so the arm is no part of it), and analysis/cores.py
        pairs a ratio at k cores with the ratio at the fewest, so the core count (and with it the
        threads of a pinned cell) is none either: workload and N."""
        return (self.workload, self.n)

    def equivalence_key(self) -> tuple:
        """Cells with the same key must print the same checksum, whatever the language or variant."""
        w = WORKLOADS[self.workload]
        work_params = tuple((k, v) for k, v in self.params if w.param(k).checksum)
        return (self.workload, self.n, work_params)


def _normalised(cell: Cell) -> Cell:
    """One cell per distinct work: a parameter that the cell's other parameters make unused takes a
    fixed value (idle_tasks with wait=release does not sleep, so its duration_ms is 0)."""
    p = dict(cell.params)
    if cell.workload == "idle_tasks" and p.get("wait") == "release" and p.get("duration_ms") not in (None, "0"):
        p["duration_ms"] = "0"
        return dataclasses.replace(cell, params=tuple(sorted(p.items())))
    return cell


def parse_setting(setting: str) -> tuple[tuple[str, str], ...]:
    """The key=value pairs of an n_range setting, "key=value[,key=value]" (validated by
    plan/validate.py)."""
    pairs = []
    for part in setting.split(","):
        key, _, value = part.partition("=")
        pairs.append((key.strip(), value.strip()))
    return tuple(pairs)


@dataclass(frozen=True)
class Slot:
    """One scheduled sample."""

    phase: str  # "warmup" or "measured"
    block: int
    pos: int
    cell: Cell

    @property
    def sample_id(self) -> str:
        return f"{self.phase}:{self.block}:{self.cell.id}"


@dataclass(frozen=True)
class Plan:
    profile: str
    workloads: tuple[str, ...]
    languages: tuple[str, ...]
    ns: dict[str, tuple[int, ...]]
    variants: dict[str, dict[str, tuple[str, ...]]]
    params: dict[str, dict[str, dict[str, tuple[str, ...]]]]  # workload -> lang -> key -> values
    samples: int
    warmup: int
    seed: int
    threads: int | None
    timeout_s: float
    mem_limit_mb: int
    cooldown_s: float
    dsn: dict[str, str] = field(default_factory=dict)
    article_preset: bool = False
    aa: bool = False
    timeline_ms: float = 0.0
    # The sequential stopping rule (bench_src/analysis/sequential.py): max_samples > samples turns it
    # on (the sample budget per cell); looks: analyses from the pilot to the budget.  smoke: a run
    # too small for verdicts, allowed on purpose (bench_src/plan/feasibility.py).
    max_samples: int = 0
    looks: int = 1
    # looks past max_samples for the cells whose blocks cost little (plan/design.py, late_counts)
    late_looks: int = 0
    smoke: bool = False
    # seconds of wall time for the whole run (0: none): the sequential rule starts no extra block
    # after it (the pilot always runs whole)
    time_budget_s: float = 0.0
    # which cells get the `warmup` samples: every cell ("cell"), or one cell per program
    # configuration, the one with the smallest N ("program", see warmup_cells)
    warmup_scope: str = "cell"
    # core counts to run every cell at (each sample pinned to that many CPUs, with as many
    # threads), or {workload: core counts} for some workloads (the others run unpinned with
    # `threads`); empty: one unpinned thread count, `threads`
    cores: tuple[int, ...] | dict[str, tuple[int, ...]] = ()
    # per workload, the N values a parameter setting runs at: {setting: (lowest N, highest N)},
    # a setting being "key=value[,key=value]" (None: no bound); a cell whose parameters hold every
    # key=value of a setting runs only at N within its bounds (see `in_range`)
    n_range: dict[str, dict[str, tuple[int | None, int | None]]] = field(default_factory=dict)
    # the order of the cells in a block (`ordered`): "grouped", the cells compared with each other
    # next to each other; "shuffled", every cell anywhere (STORED_BEFORE_BLOCK_ORDER)
    block_order: str = STORED_BEFORE_BLOCK_ORDER

    def cores_of(self, workload: str) -> tuple[int, ...]:
        """The core counts a workload's cells run at (empty: unpinned, `threads`)."""
        return tuple(self.cores.get(workload, ())) if isinstance(self.cores, Mapping) else tuple(self.cores)

    def to_dict(self) -> dict[str, Any]:
        """The plan as stored in meta.json (and digested): a DSN given as a URL appears with its
        password redacted, so the password is neither stored nor part of the plan's identity."""
        d = json.loads(json.dumps(asdict(self)))
        d["dsn"] = {k: redact_dsn(v) for k, v in d.get("dsn", {}).items()}
        if not d.get("cores"):  # a plan without cores keeps the digest it had before cores existed
            d.pop("cores", None)
        if not d.get("n_range"):  # likewise a plan without N ranges
            d.pop("n_range", None)
        if not d.get("late_looks"):  # and a plan without late looks
            d.pop("late_looks", None)
        if d.get("block_order") == STORED_BEFORE_BLOCK_ORDER:  # and a plan in the order every block had before
            d.pop("block_order", None)
        return d

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:10]

    def cells(self) -> list[Cell]:
        out: list[Cell] = []
        for w in self.workloads:
            for lang in self.languages:
                grid = self.params[w][lang]
                keys = sorted(grid)
                for variant in self.variants[w][lang]:
                    for n in self.ns[w]:
                        for values in itertools.product(*(grid[k] for k in keys)):
                            out.append(Cell(w, lang, variant, n, self.threads, tuple(zip(keys, values))))
                if self.article_preset and lang in WORKLOADS[w].article:
                    out.extend(self._article_cells(w, lang))
        out = [c for c in dict.fromkeys(_normalised(c) for c in out) if self.in_range(c)]
        if self.cores:
            every = sorted({k for w in self.workloads for k in self.cores_of(w)})
            pinned = [dataclasses.replace(c, threads=k, cores=k) for k in every for c in out
                      if k in self.cores_of(c.workload)]
            out = pinned + [c for c in out if not self.cores_of(c.workload)]
        if self.aa:
            out = [dataclasses.replace(c, arm=arm) for c in out for arm in ("A", "B")]
        return out

    def in_range(self, cell: Cell) -> bool:
        """Whether the cell's N lies within the N range of every setting (n_range) its parameters hold."""
        params = cell.params_dict
        for setting, (low, high) in self.n_range.get(cell.workload, {}).items():
            if all(params.get(k) == v for k, v in parse_setting(setting)):
                if (low is not None and cell.n < low) or (high is not None and cell.n > high):
                    return False
        return True

    def _article_cells(self, w: str, lang: str) -> list[Cell]:
        """The article's own choices for this workload and language, over the plan's N values and
        the grid values of every parameter the preset does not fix."""
        variant, fixed = WORKLOADS[w].article[lang]
        grid = {k: (fixed[k],) if k in fixed else v for k, v in self.params[w][lang].items()}
        keys = sorted(grid)
        return [Cell(w, lang, variant, n, self.threads, tuple(zip(keys, values)))
                for n in self.ns[w] for values in itertools.product(*(grid[k] for k in keys))]

    def ordered(self, cells: list[Cell], phase: str, block: int) -> list[Cell]:
        """The cells of a block in its seeded random order, `(seed, phase, block)`.  "shuffled":
        every cell anywhere.  "grouped": the groups of cells that are compared with each other
        (`Cell.group_key`) in random order, and the cells of each group in random order, so that
        the two samples of a pair are seconds apart rather than a minute (why, with the measured
        figures: docs/statistics.md, "A pair's two samples seconds apart").  Both orders leave every
        cell's position, and which of a pair runs first, to chance."""
        rng = random.Random(f"{self.seed}:{phase}:{block}")
        order = list(cells)
        if self.block_order == STORED_BEFORE_BLOCK_ORDER:
            rng.shuffle(order)
            return order
        groups: dict[tuple, list[Cell]] = {}
        for c in order:
            groups.setdefault(c.group_key(), []).append(c)
        keys = sorted(groups, key=repr)
        rng.shuffle(keys)
        out: list[Cell] = []
        for key in keys:
            rng.shuffle(groups[key])
            out.extend(groups[key])
        return out

    def extra_block(self, block: int, cells: list[Cell]) -> list[Slot]:
        """A block of the sequential rule: the given cells in the block's seeded order."""
        return [Slot("measured", block, pos, c) for pos, c in enumerate(self.ordered(sorted(cells), "measured", block))]

    def warmup_cells(self) -> list[Cell]:
        """The cells that get warm-up samples.  Every sample is a fresh process, so a warm-up warms
        only what outlives a process: the binary and its libraries in the page cache, fixture files,
        a database server's buffers, the CPU's clock.  With warmup_scope "program" one warm-up per
        program configuration (workload, language, variant, parameters, arm) at its smallest N
        warms all of that for the configuration's other N, and spares the largest cells their
        full-length warm-up; with "cell" (the default) every cell gets its own."""
        cells = self.cells()
        if self.warmup_scope == "cell":
            return cells
        smallest: dict[tuple, Cell] = {}
        for c in cells:
            key = (c.workload, c.lang, c.variant, c.threads, c.params, c.arm)
            if key not in smallest or c.n < smallest[key].n:
                smallest[key] = c
        return [c for c in cells if smallest[(c.workload, c.lang, c.variant, c.threads, c.params, c.arm)] == c]

    def warmups(self) -> dict[str, int]:
        """Warm-up samples per cell id (0 for a cell that warmup_cells leaves out)."""
        warm = {c.id for c in self.warmup_cells()}
        return {c.id: self.warmup if c.id in warm else 0 for c in self.cells()}

    def schedule(self) -> list[Slot]:
        """Warm-up blocks (of warmup_cells), then measured blocks; every cell once per block, in a
        seeded random order (`ordered`)."""
        slots: list[Slot] = []
        for phase, blocks in (("warmup", self.warmup), ("measured", self.samples)):
            cells = self.warmup_cells() if phase == "warmup" else self.cells()
            for block in range(blocks):
                slots.extend(Slot(phase, block, pos, c) for pos, c in enumerate(self.ordered(cells, phase, block)))
        return slots


# The plan's fields as meta.json stores them: the type each must have (checked by `stored_plan_problem`).
_STORED_TYPES: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(("profile", "warmup_scope", "block_order"), (str,)),
    **dict.fromkeys(("samples", "warmup", "seed", "mem_limit_mb", "max_samples", "looks", "late_looks"), (int,)),
    "threads": (int, type(None)),
    **dict.fromkeys(("timeout_s", "cooldown_s", "timeline_ms", "time_budget_s"), (int, float)),
    **dict.fromkeys(("article_preset", "aa", "smoke"), (bool,)),
    **dict.fromkeys(("workloads", "languages"), (list,)),
    **dict.fromkeys(("ns", "variants", "params", "dsn", "n_range"), (dict,)),
    "cores": (list, dict),
}
_TYPE_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
               dict: "a mapping", type(None): "null"}


def stored_plan_problem(d: Any) -> str | None:
    """What makes a plan stored in meta.json unusable, naming its field ("plan.ns is 'x', not a
    mapping"), or None when it rebuilds into a Plan whose cells can be listed."""
    if not isinstance(d, Mapping):
        return f"plan is {d!r}, not a mapping"
    for key, types in _STORED_TYPES.items():
        if key not in d:
            continue
        value = d[key]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            words = "a number" if float in types else " or ".join(_TYPE_WORDS[t] for t in types)
            return f"plan.{key} is {value!r}, not {words}"
    for key, known, words in (("workloads", WORKLOADS, "a workload of the catalogue"),
                              ("languages", LANGS, " or ".join(LANGS))):
        for item in d.get(key, ()):
            if not isinstance(item, str) or item not in known:
                return f"plan.{key} holds {item!r}, not {words}"
    for key, allowed in (("warmup_scope", WARMUP_SCOPES), ("block_order", BLOCK_ORDERS)):
        if key in d and d[key] not in allowed:
            return f"plan.{key} is {d[key]!r}, not one of {', '.join(allowed)}"
    values = _stored_values_problem(d)
    if values:
        return values
    try:
        plan_from_dict(d).cells()
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"plan does not rebuild into a plan ({type(exc).__name__}: {exc})"
    return None


def _stored_values_problem(d: Mapping[str, Any]) -> str | None:
    """A value of the stored ns or params that no plan can hold (N "ten", -5 or 10.5; a work of
    "abc"), naming it: a plan rebuilt with one lists its cells, and it failed later, in the report's
    int() or as "a different plan" to a resume."""
    for w, ns in (d.get("ns") or {}).items():
        if w not in WORKLOADS:
            return f"plan.ns names {w!r}, not a workload of the catalogue"
        if not isinstance(ns, list):
            return f"plan.ns.{w} is {ns!r}, not a list"
        for n in ns:
            if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= WORKLOADS[w].max_n:
                return f"plan.ns.{w} holds {n!r}, not an N of 1 to {WORKLOADS[w].max_n:,}"
    for w, by_lang in (d.get("params") or {}).items():
        if w not in WORKLOADS or not isinstance(by_lang, Mapping):
            return f"plan.params.{w} is not the parameters of a workload of the catalogue"
        specs = {p.name: p for p in WORKLOADS[w].params}
        for lang, grid in by_lang.items():
            if lang not in LANGS or not isinstance(grid, Mapping):
                return f"plan.params.{w}.{lang} is not a language's parameters"
            for name, values in grid.items():
                where = f"plan.params.{w}.{lang}.{name}"
                if name not in specs or not isinstance(values, list):
                    return f"{where} is not a parameter of {w} with a list of values"
                for v in values:
                    try:
                        if specs[name].normalise(lang, v, where=where) != v:
                            return f"{where} holds {v!r}, not a value as a plan stores it"
                    except ValueError as exc:
                        return str(exc)
    return None


def plan_from_dict(d: Mapping[str, Any]) -> Plan:
    """Rebuild a Plan stored in meta.json (`stored_plan_problem` says first whether it can)."""
    return Plan(
        profile=d["profile"],
        workloads=tuple(d["workloads"]),
        languages=tuple(d["languages"]),
        ns={w: tuple(v) for w, v in d["ns"].items()},
        variants={w: {lg: tuple(v) for lg, v in per.items()} for w, per in d["variants"].items()},
        params={w: {lg: {k: tuple(v) for k, v in g.items()} for lg, g in per.items()}
                for w, per in d["params"].items()},
        samples=d["samples"],
        warmup=d["warmup"],
        seed=d["seed"],
        threads=d["threads"],
        timeout_s=d["timeout_s"],
        mem_limit_mb=d["mem_limit_mb"],
        cooldown_s=d["cooldown_s"],
        dsn=d.get("dsn", {}),
        article_preset=d.get("article_preset", False),
        aa=d.get("aa", False),
        timeline_ms=d.get("timeline_ms", 0.0),
        max_samples=d.get("max_samples", 0),
        looks=d.get("looks", 1),
        late_looks=d.get("late_looks", 0),
        smoke=d.get("smoke", False),
        time_budget_s=d.get("time_budget_s", 0.0),
        warmup_scope=d.get("warmup_scope", "cell"),
        block_order=d.get("block_order", STORED_BEFORE_BLOCK_ORDER),
        cores=({w: tuple(v) for w, v in d["cores"].items()} if isinstance(d.get("cores"), Mapping)
               else tuple(d.get("cores", ()))),
        n_range={w: {s: tuple(r) for s, r in per.items()} for w, per in d.get("n_range", {}).items()},
    )
