"""`make_plan`: the notebook's parameters, merged over a profile, validated into a `Plan`.

Every bad value raises a ValueError that names it and the allowed ones, before anything is built
or run.  Values may come as papermill strings ("false", "10", "0.5"): each parameter is read with
its type (`as_bool`, `as_int`, `as_float`), never with Python's truthiness.
"""
from __future__ import annotations

import dataclasses
import inspect
import math
from typing import Any, Iterable, Mapping

import psutil

from .. import cpus
from ..catalogue import LANGS, WORKLOADS, workload
from ..profiles import profile as get_profile
from ..values import as_bool, as_float, as_int
from . import feasibility
from .dsn import validate_dsn
from .model import Plan

# Caps: a plan above MAX_PLAN_SAMPLES needs allow_large=True; the others hold always (a plan the
# harness could not even list, or a sample count no run can reach).
MAX_SAMPLES_PER_CELL = 10_000
MAX_WARMUP = 100
MAX_VALUES = 1_000            # N values per workload, values per parameter
MAX_PLAN_SAMPLES = 100_000    # above it: allow_large=True
HARD_MAX_PLAN_SAMPLES = 2_000_000
MAX_THREADS = 1024
MAX_TIMEOUT_S = 7 * 24 * 3600.0
MIN_TIMEOUT_S = 0.001         # the launcher counts whole milliseconds
MAX_COOLDOWN_S = 3600.0
MAX_TIMELINE_MS = 60_000.0
MAX_TIME_BUDGET_S = 30 * 24 * 3600.0

def _as_list(name: str, value: Any) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_VALUES:
            raise ValueError(f"{name} holds {len(value)} values; at most {MAX_VALUES} are allowed")
        return list(value)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [value]
    raise ValueError(f"{name} must be a list, got {value!r}")


def _positive_int(name: str, value: Any, minimum: int = 1) -> int:
    return as_int(name, value, minimum)


def _per_workload(name: str, value: Any, workloads: Iterable[str]) -> dict:
    """Accept {workload: x} or a single x meant for every workload.  A mapping may only name
    workloads of the plan: anything else would be silently ignored."""
    workloads = list(workloads)
    if isinstance(value, Mapping):
        for k in value:
            if k not in WORKLOADS:
                raise ValueError(f"{name}: unknown workload {k!r}; allowed: {', '.join(WORKLOADS)}")
            if k not in workloads:
                raise ValueError(f"{name} names workload {k!r}, which is not in this plan (workloads: "
                                 f"{', '.join(workloads)}); add it to workloads or remove it from {name}")
        return {w: value[w] for w in workloads if w in value}
    return {w: value for w in workloads}


def _validate_ns(w: str, values: Any) -> tuple[int, ...]:
    ns = [as_int(f"ns[{w}]: N", v) for v in _as_list(f"ns[{w}]", values)]
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
    if not chosen:
        raise ValueError(f"variants[{w}][{lang}] is empty; allowed: {', '.join(allowed)}, 'all' or 'default'")
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
        if not values:
            raise ValueError(f"params[{w}][{p.name}] is empty; give a value ({p.allowed(lang)})")
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


WARMUP_SCOPES = ("cell", "program")  # see Plan.warmup_cells


def cell_bound(plan: Plan) -> int:
    """An upper bound of len(plan.cells()), computed without listing them."""
    total = 0
    for w in plan.workloads:
        for lang in plan.languages:
            grid = plan.params[w][lang]
            combos = math.prod(len(v) for v in grid.values())
            per_lang = len(plan.variants[w][lang]) * len(plan.ns[w]) * combos
            if plan.article_preset and lang in WORKLOADS[w].article:
                fixed = WORKLOADS[w].article[lang][1]
                per_lang += len(plan.ns[w]) * math.prod(1 if k in fixed else len(v) for k, v in grid.items())
            total += per_lang
    return total * (2 if plan.aa else 1)


def _check_size(plan: Plan, allow_large: bool) -> None:
    per_cell = plan.warmup + max(plan.samples, plan.max_samples or 0)
    bound = cell_bound(plan) * per_cell
    if bound > HARD_MAX_PLAN_SAMPLES:
        raise ValueError(f"the plan would take up to {bound:,} samples ({cell_bound(plan):,} cells x {per_cell}); "
                         f"at most {HARD_MAX_PLAN_SAMPLES:,} are possible: fewer N, parameter values or samples")
    total = len(plan.cells()) * per_cell
    if total > MAX_PLAN_SAMPLES and not allow_large:
        raise ValueError(f"the plan would take {total:,} samples ({len(plan.cells()):,} cells x {per_cell}), more "
                         f"than {MAX_PLAN_SAMPLES:,}; pass allow_large=True if that is meant")


def plan_parameters() -> list[str]:
    """The names make_plan accepts (the keys of a --plan file, the notebook's plan parameters)."""
    return [name for name, p in inspect.signature(make_plan).parameters.items() if p.kind is p.KEYWORD_ONLY
            or p.kind is p.POSITIONAL_OR_KEYWORD]


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
    max_samples: Any = None,
    looks: Any = None,
    smoke: Any = False,
    time_budget_s: Any = None,
    warmup_scope: Any = None,
    adaptive_target: Any = None,
    allow_large: Any = False,
    **unknown: Any,
) -> Plan:
    """Merge the given parameters over the profile and validate everything.

    ns, variants and params may be given for all workloads at once or as {workload: ...}.
    variants per workload: {"go": [...], "rust": [...]}, "all", or "default".
    params per workload: {key: value or [values] or {"go": [...], "rust": [...]}}.
    article_preset: also run the 2022 article's own choices per workload (catalogue `article`).
    aa: an A/A run: every cell twice, as arms A and B of the very same program and arguments.
    timeline_ms: sample every program's RSS at this interval (0: off; 10 is a good value).
    max_samples: > samples turns on the sequential rule (bench_src/analysis/sequential.py): after
        the `samples` pilot blocks, cells whose comparisons are undecided get more blocks, up to
        this many samples per cell; looks: the analyses from the pilot to the budget (default 3).
    smoke: a run too small for any verdict, on purpose (otherwise such a plan is refused).
    time_budget_s: wall seconds for the whole run under the sequential rule: after the pilot, no
        extra block starts once it is spent (0 or None: no budget).
    warmup_scope: "cell" (every cell gets `warmup` samples) or "program" (one cell per program
        configuration, at its smallest N: Plan.warmup_cells).
    adaptive_target: replaced by max_samples; only 0 or None is accepted.
    threads: --threads for both programs; None means the usable CPUs of this machine
        (bench_src/cpus.py), resolved here so that every cell and command carries it.
    mem_limit_mb: the memory guard in MiB; None means 80% of RAM.  threads, mem_limit_mb and looks
        have no zero (refused, like any value below their minimum): 0 means "none" only where
        none is a value (max_samples, time_budget_s, timeline_ms, cooldown_s).
    dsn: {"mysql": URL, "postgres": URL}; a value "env:NAME" reads the URL from the environment
        variable NAME when the run starts (the plan stores "env:NAME", never the password).
    allow_large: accept a plan of more than MAX_PLAN_SAMPLES samples.
    """
    if unknown:
        names = ", ".join(repr(k) for k in sorted(unknown))
        raise ValueError(f"unknown plan parameter{'s' if len(unknown) > 1 else ''} {names}; "
                         f"allowed: {', '.join(plan_parameters())}")
    if not isinstance(profile, str):
        raise ValueError(f"profile must be a name, got {profile!r}")
    prof = get_profile(profile)
    wl = _as_list("workloads", workloads) if workloads is not None else prof.workloads
    if not wl:
        raise ValueError(f"workloads is empty; allowed: {', '.join(WORKLOADS)}")
    for w in wl:
        if not isinstance(w, str):
            raise ValueError(f"workloads: {w!r} is not a workload name; allowed: {', '.join(WORKLOADS)}")
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

    n_samples = as_int("samples", samples if samples is not None else prof.samples, 1, MAX_SAMPLES_PER_CELL)
    n_warmup = as_int("warmup", warmup if warmup is not None else prof.warmup, 0, MAX_WARMUP)
    seed_v = as_int("seed", seed if seed is not None else 1, 0, 2**63 - 1)
    if threads in (None, ""):
        threads_v = cpus.usable_cpus()
    else:  # no zero: 0 is refused like any value below 1, with the way to the default named
        threads_v = as_int("threads", threads, 1, MAX_THREADS,
                           default=f"the usable CPUs ({cpus.usable_cpus()} here)")
    timeout_v = as_float("timeout_s", timeout_s if timeout_s is not None else prof.timeout_s,
                         MIN_TIMEOUT_S, MAX_TIMEOUT_S, " seconds")
    mem_v = (default_mem_limit_mb() if mem_limit_mb in (None, "")
             else as_int("mem_limit_mb", mem_limit_mb, 1, default=f"80% of RAM ({default_mem_limit_mb()} MiB here)"))
    cooldown_v = as_float("cooldown_s", 0.0 if cooldown_s in (None, "") else cooldown_s, 0.0, MAX_COOLDOWN_S,
                          " seconds")
    dsn_v = validate_dsn(dsn, wl)
    preset_v = prof.article_preset if article_preset in (None, "") else as_bool("article_preset", article_preset)
    aa_v = as_bool("aa", False if aa in (None, "") else aa)
    allow_large_v = as_bool("allow_large", False if allow_large in (None, "") else allow_large)
    scope_v = prof.warmup_scope if warmup_scope in (None, "") else warmup_scope
    if scope_v not in WARMUP_SCOPES:
        raise ValueError(f"warmup_scope must be one of {', '.join(WARMUP_SCOPES)}, got {warmup_scope!r}")

    plan = Plan(
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
        article_preset=preset_v,
        aa=aa_v,
        timeline_ms=_timeline(prof.timeline_ms if timeline_ms in (None, "") else timeline_ms),
        warmup_scope=scope_v,
    )
    _check_size(plan, allow_large_v)  # the pilot alone, before anything lists every cell's comparisons
    # the stopping-rule fields, and the refusal of a plan that can never call a difference (feasibility.py)
    plan = feasibility.plan_fields(plan, max_samples=prof.max_samples if max_samples is None else max_samples,
                                   looks=prof.looks if looks is None else looks, smoke=smoke,
                                   adaptive_target=adaptive_target)
    _check_size(plan, allow_large_v)  # with the sequential budget
    budget_v = as_float("time_budget_s", prof.time_budget_s if time_budget_s in (None, "") else time_budget_s,
                        0.0, MAX_TIME_BUDGET_S, " seconds (0: none)")
    if budget_v and not plan.max_samples:
        raise ValueError(f"time_budget_s ({budget_v:g}) limits the extra blocks of the sequential rule: "
                         "set max_samples above samples too, or time_budget_s=0")
    return dataclasses.replace(plan, time_budget_s=budget_v)


def _timeline(value: Any) -> float:
    ms = as_float("timeline_ms", 0 if value in (None, "") else value, 0.0, MAX_TIMELINE_MS, " ms (0: off)")
    if 0 < ms < 1:
        raise ValueError(f"timeline_ms must be 0 (off) or at least 1 ms, got {value!r}")
    return ms
