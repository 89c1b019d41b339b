"""Which cells are compared, in which families: one enumeration used by the comparison tables,
by the check that a plan can reach verdicts and by the sequential stopping rule, so the three
always agree.  It is fixed by the plan before any data (analysis/families.py finds the same cells
in a samples frame).

A cell is identified by workload, language, variant, N, threads, A/A arm and its parameters.
Families (each corrected for multiplicity on its own, per metric):
- "go_vs_rust": a Go cell against a Rust cell of the same work (workload, N, threads, arm and
  shared parameters, `Workload.shared_params`) whose variants have the same model
  (`Workload.model`): like for like, so goroutines never meet OS threads in this family;
- "models": for work where several models ran, every cell of another model (OS threads,
  futures, a one-thread runtime) against every task cell (goroutines, tokio tasks) of the same
  work, in either language;
- "variants": within one language, every cell against the baseline of the same work: the
  default variant with the default values of the language's own parameters; a switch of optional
  work (`Param.switch`, such as digest=off) is left out of "the same work" here, so a cell with it
  off meets the baseline with it on and the table shows what the piece costs;
- "article": where the plan holds the article's settings (`Plan.article_preset`), the Go cell
  with the article's settings against the Rust cell with the article's settings of the same
  workload, N, threads and arm: the comparison the reproduction table makes
  (published.side_by_side), here so the stopping rule follows it too.  The two sides may differ
  in variant and in shared parameters (the article's SQLite: Go with the rollback journal, Rust
  with WAL), so no other family pairs them;
- "aa": arm A against arm B of the same cell in an A/A run.
"""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from typing import Iterable, NamedTuple

from ..catalogue import TASK, WORKLOADS
from .model import Plan

FAMILIES = ("go_vs_rust", "models", "variants", "article", "aa")
FAMILY_TITLES = {
    "go_vs_rust": "Go vs Rust, like for like",
    "models": "other models vs tasks",
    "variants": "variants vs the default",
    "article": "the article's settings, Go vs Rust",
    "aa": "A/A arms",
}
class CellRef(NamedTuple):
    workload: str
    lang: str
    variant: str
    n: int
    threads: int | None
    arm: str
    params: tuple[tuple[str, str], ...]

    @property
    def params_dict(self) -> dict[str, str]:
        return dict(self.params)

    @property
    def params_text(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.params)

    @property
    def model(self) -> str:
        w = WORKLOADS.get(self.workload)
        return w.model(self.lang, self.variant) if w else TASK

    def shared(self) -> tuple[tuple[str, str], ...]:
        return _shared(self.workload, self.params)

    def is_default(self) -> bool:
        """The language's default variant with the default values of its own parameters."""
        w = WORKLOADS.get(self.workload)
        if w is None or self.variant != w.default_variant(self.lang):
            return False
        defaults = {k: str(v) for k, v in w.default_params(self.lang).items()}
        return all(defaults.get(k) == v for k, v in self.params if _own(w, k))

    def work(self) -> tuple:
        """What two cells must share to be compared: the same work, measured alike."""
        return (self.workload, self.n, self.threads, self.arm, self.shared())

    def work_but_switches(self) -> tuple:
        """`work` without the switches of optional work: what a cell shares with its baseline in
        the variants family."""
        switches = WORKLOADS[self.workload].switch_params if self.workload in WORKLOADS else ()
        return (self.workload, self.n, self.threads, self.arm, tuple(kv for kv in self.shared() if kv[0] not in switches))


def _own(w, key: str) -> bool:
    """A parameter a cell's default status depends on: the language's own ones and the switches
    (their default is the whole work of the specification)."""
    return key not in w.shared_params or key in w.switch_params


@lru_cache(maxsize=4096)
def _shared(workload: str, params: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    names = WORKLOADS[workload].shared_params if workload in WORKLOADS else ()
    return tuple(kv for kv in params if kv[0] in names)


def cell_of(plan_cell) -> CellRef:
    """The reference of a plan's Cell."""
    return CellRef(plan_cell.workload, plan_cell.lang, plan_cell.variant, int(plan_cell.n), plan_cell.threads,
                   plan_cell.arm or "", tuple(sorted((k, str(v)) for k, v in plan_cell.params)))


def article_setting(workload: str, lang: str) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """The article's variant and parameter values for one language (its fixed choices over the
    language's defaults, `Workload.article`), or None where the article has no such program."""
    w = WORKLOADS.get(workload)
    if w is None or lang not in w.article:
        return None
    variant, fixed = w.article[lang]
    return variant, tuple(sorted((k, str(v)) for k, v in {**w.default_params(lang), **fixed}.items()))


def is_article(c: CellRef) -> bool:
    """The cell runs the article's variant with every one of its parameter values."""
    setting = article_setting(c.workload, c.lang)
    if setting is None or c.variant != setting[0]:
        return False
    own = c.params_dict
    return all(own.get(k) == v for k, v in setting[1])


def _at_defaults(cells: list[CellRef], workload: str, lang: str, variant: str) -> CellRef | None:
    """The cell of `variant` whose own parameters and switches all have the language's default
    values, or None."""
    w = WORKLOADS[workload]
    defaults = {k: str(v) for k, v in w.default_params(lang).items()}
    for c in sorted(cells):
        if c.variant == variant and all(defaults.get(k) == v for k, v in c.params if _own(w, k)):
            return c
    return None


def _baseline(cells: list[CellRef], workload: str, lang: str, variant: str | None) -> CellRef | None:
    w = WORKLOADS[workload]
    base_variant = variant or w.default_variant(lang)
    candidates = sorted(c for c in cells if c.variant == base_variant)
    if not candidates:
        return None
    defaults = {k: str(v) for k, v in w.default_params(lang).items()}
    for c in candidates:
        own = {k: v for k, v in c.params if _own(w, k)}
        if all(defaults.get(k) == v for k, v in own.items()):
            return c
    return candidates[0]


def unequal_work(c: CellRef) -> str:
    """The parameter setting under which the cell's program does not do the same work as the
    other language's (`Param.unequal`: `kernel=article`, a dead loop Rust's compiler removes), or
    ''.  Such a cell is no like-for-like Go-vs-Rust comparison; the article family compares it."""
    w = WORKLOADS.get(c.workload)
    if w is None:
        return ""
    values = c.params_dict
    return next((f"{p.name}={values[p.name]}" for p in w.params if p.unequal and values.get(p.name) in p.unequal), "")


def comparisons(cells: Iterable[CellRef], family: str, baseline: str | None = None) -> list[tuple[CellRef, CellRef]]:
    """The (a, b) pairs of cells compared in a family; a is the side the verdict "a" names: Go,
    the other model, the variant, arm A."""
    if family not in FAMILIES:
        raise ValueError(f"unknown comparison family {family!r}; allowed: {', '.join(FAMILIES)}")
    cells = sorted(set(cells))
    out: list[tuple[CellRef, CellRef]] = []
    if family == "aa":
        by_cell: dict[tuple, dict[str, CellRef]] = defaultdict(dict)
        for c in cells:
            if c.arm:
                by_cell[c._replace(arm="")][c.arm] = c
        for arms in by_cell.values():
            if "A" in arms and "B" in arms:
                out.append((arms["A"], arms["B"]))
        return out
    if family == "article":
        by_work: dict[tuple, dict[str, list[CellRef]]] = defaultdict(lambda: defaultdict(list))
        for c in cells:
            if is_article(c):
                by_work[(c.workload, c.n, c.threads, c.arm)][c.lang].append(c)
        for key in sorted(by_work, key=repr):
            out += [(g, r) for g in by_work[key]["go"] for r in by_work[key]["rust"]]
        return out
    groups: dict[tuple, list[CellRef]] = defaultdict(list)
    for c in cells:
        if c.workload in WORKLOADS and not (family == "go_vs_rust" and unequal_work(c)):
            groups[c.work_but_switches() if family == "variants" else c.work()].append(c)
    for key, members in sorted(groups.items(), key=lambda kv: repr(kv[0])):
        if family == "go_vs_rust":
            go = [c for c in members if c.lang == "go"]
            rust = [c for c in members if c.lang == "rust"]
            out += [(g, r) for g in go for r in rust if g.model == r.model]
        elif family == "models":
            tasks = [c for c in members if c.model == TASK]
            others = [c for c in members if c.model != TASK]
            out += [(o, t) for o in others for t in tasks]
        else:  # variants
            for lang in sorted({c.lang for c in members}):
                mine = [c for c in members if c.lang == lang]
                base = _baseline(mine, key[0], lang, baseline)
                for c in mine:
                    if c == base:
                        continue
                    # A switch turned off in another variant than the baseline's costs what it costs
                    # in that variant: it is set against the same variant doing the whole work, when
                    # the plan has that cell (also where it has no baseline at all).
                    own = None if base is not None and c.variant == base.variant else \
                        _at_defaults(mine, key[0], lang, c.variant)
                    if own is not None and own != c:
                        out.append((c, own))
                    elif base is not None:
                        out.append((c, base))
    return out


def plan_comparisons(plan: Plan, families: Iterable[str] = FAMILIES) -> dict[str, list[tuple[CellRef, CellRef]]]:
    """Every comparison a plan's cells will take part in, per family."""
    refs = [cell_of(c) for c in plan.cells()]
    return {f: comparisons(refs, f) for f in families}
