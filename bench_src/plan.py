"""A validated plan, its cells, and the randomized interleaved schedule of samples.

`make_plan` turns the notebook's parameters (merged over a profile) into a `Plan`, raising a
ValueError that names the bad value and the allowed ones before anything is built or run.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import random
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping

import psutil

from .catalogue import LANGS, WORKLOADS, workload
from .profiles import profile as get_profile


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

    @property
    def id(self) -> str:
        p = ",".join(f"{k}={v}" for k, v in self.params)
        t = "cpus" if self.threads is None else str(self.threads)
        arm = f"|arm={self.arm}" if self.arm else ""
        return f"{self.workload}|{self.lang}|{self.variant}|n={self.n}|t={t}|{p}{arm}"

    @property
    def params_dict(self) -> dict[str, str]:
        return dict(self.params)

    def equivalence_key(self) -> tuple:
        """Cells with the same key must print the same checksum, whatever the language or variant."""
        w = WORKLOADS[self.workload]
        work_params = tuple((k, v) for k, v in self.params if w.param(k).checksum)
        return (self.workload, self.n, work_params)


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
    adaptive_target: float = 0.0  # > 0: keep sampling unsettled cells (see adaptive.py)
    max_samples: int = 0  # the sample budget per cell in adaptive mode

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self)))

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
        out = list(dict.fromkeys(out))
        if self.aa:
            out = [dataclasses.replace(c, arm=arm) for c in out for arm in ("A", "B")]
        return out

    def _article_cells(self, w: str, lang: str) -> list[Cell]:
        """The article's own choices for this workload and language, over the plan's N values and
        the grid values of every parameter the preset does not fix."""
        variant, fixed = WORKLOADS[w].article[lang]
        grid = {k: (fixed[k],) if k in fixed else v for k, v in self.params[w][lang].items()}
        keys = sorted(grid)
        return [Cell(w, lang, variant, n, self.threads, tuple(zip(keys, values)))
                for n in self.ns[w] for values in itertools.product(*(grid[k] for k in keys))]

    def extra_block(self, block: int, cells: list[Cell]) -> list[Slot]:
        """An adaptive block: the given cells in the block's seeded order."""
        order = sorted(cells)
        random.Random(f"{self.seed}:measured:{block}").shuffle(order)
        return [Slot("measured", block, pos, c) for pos, c in enumerate(order)]

    def schedule(self) -> list[Slot]:
        """Warm-up blocks, then measured blocks; every cell once per block, in a seeded random order."""
        cells = self.cells()
        slots: list[Slot] = []
        for phase, blocks in (("warmup", self.warmup), ("measured", self.samples)):
            for block in range(blocks):
                order = list(cells)
                random.Random(f"{self.seed}:{phase}:{block}").shuffle(order)
                slots.extend(Slot(phase, block, pos, c) for pos, c in enumerate(order))
        return slots


def _as_list(name: str, value: Any) -> list:
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (str, int)):
        return [value]
    raise ValueError(f"{name} must be a list, got {value!r}")


def _positive_int(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}") from None
    if number != float(value) or number < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return number


def _per_workload(name: str, value: Any, workloads: Iterable[str]) -> dict:
    """Accept {workload: x} or a single x meant for every workload."""
    workloads = list(workloads)
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in WORKLOADS]
        if unknown:
            raise ValueError(f"{name}: unknown workload {unknown[0]!r}; allowed: {', '.join(WORKLOADS)}")
        return {w: value[w] for w in workloads if w in value}
    return {w: value for w in workloads}


def _validate_ns(w: str, values: Any) -> tuple[int, ...]:
    ns = [_positive_int(f"ns[{w}]", v) for v in _as_list(f"ns[{w}]", values)]
    if not ns:
        raise ValueError(f"ns[{w}] is empty: give at least one N (a positive integer)")
    limit = WORKLOADS[w].max_n
    too_big = [n for n in ns if n > limit]
    if too_big:
        raise ValueError(f"ns[{w}]: N={too_big[0]} exceeds the limit of {limit} for {w}")
    return tuple(sorted(set(ns)))


def _validate_variants(w: str, lang: str, values: Any) -> tuple[str, ...]:
    allowed = WORKLOADS[w].variants[lang]
    if values in ("all", ["all"]):
        return allowed
    if values in (None, "default", ["default"]):
        return (allowed[0],)
    chosen = _as_list(f"variants[{w}][{lang}]", values)
    for v in chosen:
        if v not in allowed:
            raise ValueError(f"unknown variant {v!r} of {w} for {lang}; allowed: {', '.join(allowed)}")
    return tuple(dict.fromkeys(chosen))


def _validate_params(w: str, lang: str, given: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    spec = workload(w)
    known = {p.name for p in spec.params}
    for key in given:
        if key not in known:
            allowed = ", ".join(sorted(known)) or "none"
            raise ValueError(f"unknown parameter {key!r} for workload {w}; allowed: {allowed}")
    grid: dict[str, tuple[str, ...]] = {}
    for p in spec.params_for(lang):
        if p.name not in given:
            grid[p.name] = (p.default_for(lang),)
            continue
        value = given[p.name]
        if isinstance(value, Mapping):  # per-language values
            bad = [k for k in value if k not in LANGS]
            if bad:
                raise ValueError(f"params[{w}][{p.name}]: unknown language {bad[0]!r}; allowed: go, rust")
            if lang not in value:
                grid[p.name] = (p.default_for(lang),)
                continue
            value = value[lang]
        values = _as_list(f"params[{w}][{p.name}]", value)
        if p.choices_by_lang:  # a list of per-language choices: keep the ones this language has
            mine = [v for v in values if str(v) in p.choices_for(lang)]
            for v in values:
                if not any(str(v) in p.choices_for(lg) for lg in p.langs):
                    p.normalise(lang, v)  # raises with the allowed values
            values = mine or [p.default_for(lang)]
        grid[p.name] = tuple(dict.fromkeys(p.normalise(lang, v) for v in values))
    return grid


def default_mem_limit_mb() -> int:
    return int(psutil.virtual_memory().total * 0.8 / 2**20)


def make_plan(
    profile: str = "quick",
    workloads: Any = None,
    languages: Any = None,
    ns: Any = None,
    variants: Any = None,
    params: Any = None,
    samples: Any = None,
    warmup: Any = None,
    seed: Any = 1,
    threads: Any = None,
    timeout_s: Any = None,
    mem_limit_mb: Any = None,
    cooldown_s: Any = 0.0,
    dsn: Any = None,
    article_preset: Any = None,
    aa: Any = False,
    timeline_ms: Any = None,
    adaptive_target: Any = 0,
    max_samples: Any = None,
) -> Plan:
    """Merge the given parameters over the profile and validate everything.

    ns, variants and params may be given for all workloads at once or as {workload: ...}.
    variants per workload: {"go": [...], "rust": [...]}, "all", or "default".
    params per workload: {key: value or [values] or {"go": [...], "rust": [...]}}.
    article_preset: also run the 2022 article's own choices per workload (catalogue `article`).
    aa: an A/A run: every cell twice, as arms A and B of the very same program and arguments.
    timeline_ms: sample every program's RSS at this interval (0: off; 10 is a good value).
    adaptive_target: > 0 turns on adaptive mode: after `samples` blocks, keep adding blocks of the
        cells whose ratio CI is wider than this relative half-width (0.02 = ±2%), up to
        `max_samples` per cell (default 4 x samples).
    """
    prof = get_profile(profile)
    wl = _as_list("workloads", workloads) if workloads is not None else prof.workloads
    if not wl:
        raise ValueError(f"workloads is empty; allowed: {', '.join(WORKLOADS)}")
    for w in wl:
        workload(w)
    wl = list(dict.fromkeys(wl))
    langs = _as_list("languages", languages) if languages is not None else list(LANGS)
    if not langs:
        raise ValueError("languages is empty; allowed: go, rust")
    for lang in langs:
        if lang not in LANGS:
            raise ValueError(f"unknown language {lang!r}; allowed: {', '.join(LANGS)}")

    ns_given = _per_workload("ns", ns, wl) if ns is not None else {}
    plan_ns: dict[str, tuple[int, ...]] = {}
    for w in wl:
        if w in ns_given:
            plan_ns[w] = _validate_ns(w, ns_given[w])
        elif w in prof.ns:
            plan_ns[w] = _validate_ns(w, prof.ns[w])
        else:
            raise ValueError(f"ns: profile {prof.name!r} has no N values for {w}; pass ns explicitly")

    if isinstance(variants, str):
        variants = {w: variants for w in wl}
    var_given = _per_workload("variants", variants, wl) if variants is not None else {}
    plan_variants: dict[str, dict[str, tuple[str, ...]]] = {}
    for w in wl:
        per = var_given.get(w, prof.variants.get(w, {}))
        if isinstance(per, (str, list, tuple)):
            per = {lang: per for lang in langs}
        if not isinstance(per, Mapping):
            raise ValueError(f"variants[{w}] must be a mapping of language to variants, got {per!r}")
        bad = [k for k in per if k not in LANGS]
        if bad:
            raise ValueError(f"variants[{w}]: unknown language {bad[0]!r}; allowed: go, rust")
        plan_variants[w] = {lang: _validate_variants(w, lang, per.get(lang)) for lang in langs}

    par_given = _per_workload("params", params, wl) if params is not None else {}
    plan_params: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {}
    for w in wl:
        given = dict(prof.params.get(w, {}))
        extra = par_given.get(w, {})
        if not isinstance(extra, Mapping):
            raise ValueError(f"params[{w}] must be a mapping of parameter to values, got {extra!r}")
        given.update(extra)
        plan_params[w] = {lang: _validate_params(w, lang, given) for lang in langs}

    n_samples = _positive_int("samples", samples if samples is not None else prof.samples)
    n_warmup = _positive_int("warmup", warmup if warmup is not None else prof.warmup, minimum=0)
    seed_v = _positive_int("seed", seed, minimum=0)
    threads_v = None if threads in (None, "", 0) else _positive_int("threads", threads)
    timeout_v = float(timeout_s if timeout_s is not None else prof.timeout_s)
    if not timeout_v > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
    mem_v = default_mem_limit_mb() if mem_limit_mb in (None, 0) else _positive_int("mem_limit_mb", mem_limit_mb)
    cooldown_v = float(cooldown_s or 0.0)
    if cooldown_v < 0:
        raise ValueError(f"cooldown_s must be >= 0 seconds, got {cooldown_s!r}")
    dsn_v = dict(dsn or {})
    for k in dsn_v:
        if k not in ("mysql", "postgres"):
            raise ValueError(f"dsn: unknown server {k!r}; allowed: mysql, postgres")

    return Plan(
        profile=prof.name,
        workloads=tuple(wl),
        languages=tuple(langs),
        ns=plan_ns,
        variants=plan_variants,
        params=plan_params,
        samples=n_samples,
        warmup=n_warmup,
        seed=seed_v,
        threads=threads_v,
        timeout_s=timeout_v,
        mem_limit_mb=mem_v,
        cooldown_s=cooldown_v,
        dsn=dsn_v,
        article_preset=bool(prof.article_preset if article_preset is None else article_preset),
        aa=bool(aa),
        timeline_ms=_timeline(prof.timeline_ms if timeline_ms in (None, "") else timeline_ms),
        **_adaptive(adaptive_target, max_samples, n_samples),
    )


def plan_from_dict(d: Mapping[str, Any]) -> Plan:
    """Rebuild a Plan stored in meta.json."""
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
        adaptive_target=d.get("adaptive_target", 0.0),
        max_samples=d.get("max_samples", 0),
    )


def _adaptive(target: Any, max_samples: Any, samples: int) -> dict[str, Any]:
    try:
        t = float(target or 0)
    except (TypeError, ValueError):
        raise ValueError(f"adaptive_target must be a relative half-width such as 0.02 (0: off), got {target!r}") from None
    if not 0 <= t < 1:
        raise ValueError(f"adaptive_target must be >= 0 and < 1 (0: off), got {target!r}")
    if t == 0:
        if max_samples not in (None, 0):
            raise ValueError("max_samples only applies in adaptive mode: set adaptive_target too")
        return {"adaptive_target": 0.0, "max_samples": 0}
    budget = 4 * samples if max_samples in (None, 0) else _positive_int("max_samples", max_samples)
    if budget < samples:
        raise ValueError(f"max_samples ({budget}) must be >= samples ({samples})")
    return {"adaptive_target": t, "max_samples": budget}


def _timeline(value: Any) -> float:
    try:
        ms = float(value or 0)
    except (TypeError, ValueError):
        raise ValueError(f"timeline_ms must be a number of milliseconds >= 0 (0: off), got {value!r}") from None
    if ms < 0:
        raise ValueError(f"timeline_ms must be a number of milliseconds >= 0 (0: off), got {value!r}")
    return ms
