"""`make_plan`: the notebook's parameters, merged over a profile, validated into a `Plan`.

Every bad value raises a ValueError that names it and the allowed ones, before anything is built
or run.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import psutil

from ..analysis import feasibility
from ..catalogue import LANGS, WORKLOADS, workload
from ..profiles import profile as get_profile
from .model import Plan


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
    max_samples: Any = None,
    looks: Any = None,
    smoke: Any = False,
    adaptive_target: Any = None,
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
    adaptive_target: replaced by max_samples; only 0 or None is accepted.
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
        article_preset=bool(prof.article_preset if article_preset is None else article_preset),
        aa=bool(aa),
        timeline_ms=_timeline(prof.timeline_ms if timeline_ms in (None, "") else timeline_ms),
    )
    # Statistics hook (bench_src/analysis/feasibility.py): the stopping-rule fields, and the refusal of a plan that can never call a difference
    return feasibility.plan_fields(plan, max_samples=max_samples, looks=looks, smoke=smoke, adaptive_target=adaptive_target)


def _timeline(value: Any) -> float:
    try:
        ms = float(value or 0)
    except (TypeError, ValueError):
        raise ValueError(f"timeline_ms must be a number of milliseconds >= 0 (0: off), got {value!r}") from None
    if ms < 0:
        raise ValueError(f"timeline_ms must be a number of milliseconds >= 0 (0: off), got {value!r}")
    return ms
