"""`make_plan`: the notebook's parameters, merged over a profile, validated into a `Plan`.

Every bad value raises a ValueError that names it and the allowed ones, before anything is built
or run.  Values may come as papermill strings ("false", "10", "0.5"): each parameter is read with
its type (`as_bool`, `as_int`, `as_float`), never with Python's truthiness.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable, Mapping

from .. import cpus, parameters
from ..catalogue import LANGS, WORKLOADS, workload
from ..profiles import PROFILES
from ..profiles import profile as get_profile
from ..values import as_int, colon_hint, read_none
from . import feasibility
from .dsn import validate_dsn
from .model import Plan, parse_setting

# Caps of a plan: above MAX_PLAN_SAMPLES it needs allow_large=True; the others hold always (a plan
# the harness could not even list).  Each parameter's own bounds are in bench_src/parameters.py.
MAX_VALUES = 1_000            # N values per workload, values per parameter
MAX_PLAN_SAMPLES = 100_000    # above it: allow_large=True
HARD_MAX_PLAN_SAMPLES = 2_000_000

def _as_list(name: str, value: Any) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_VALUES:
            raise ValueError(f"{name} holds {len(value)} values; at most {MAX_VALUES} are allowed")
        return list(value)
    if isinstance(value, str) and "," in value:
        # no name or value of a list holds a comma: `-p workloads sleep,cpu_loops` meant a list
        parts = [v.strip() for v in value.split(",")]
        number = f", or one number without separators: {''.join(parts)}" if all(p.isdigit() for p in parts) else ""
        raise ValueError(f"{name}: {value!r} is one string, not a list; write a list in brackets: "
                         f"'[{', '.join(parts)}]'{number}")
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [value]
    raise ValueError(f"{name} must be a value or a list of values, got {value!r}")


def languages_parameter(value: Any, name: str = "languages") -> tuple[str, ...]:
    """The languages of a plan, and of `build --languages`: a list in brackets (`[go, rust]`), or
    one name alone; None: every language.  `name` is what the error calls the value."""
    langs = _as_list(name, value) if value is not None else list(LANGS)
    if not langs:
        raise ValueError(f"{name} is empty; allowed: {', '.join(LANGS)}")
    for lang in langs:
        if lang not in LANGS:
            raise ValueError(f"{name}: unknown language {lang!r}; allowed: {', '.join(LANGS)}")
    return tuple(dict.fromkeys(langs))  # [go, go] is the plan of [go], as workloads given twice are


def _positive_int(name: str, value: Any, minimum: int = 1) -> int:
    return as_int(name, value, minimum)


def _per_workload(name: str, value: Any, workloads: Iterable[str]) -> dict:
    """Accept {workload: x} or a single x meant for every workload.  A mapping may only name
    workloads of the plan: anything else would be silently ignored."""
    workloads = list(workloads)
    if isinstance(value, str) and ":" in value:  # no value for every workload holds a colon: a mapping was meant
        raise ValueError(f"{name}: {value!r} is one string, not a mapping of workload to values; write a mapping in "
                         f"braces, e.g. '{{{workloads[0]}: ...}}'{colon_hint([value])}")
    if isinstance(value, Mapping):
        for k in value:
            if k not in WORKLOADS:
                raise ValueError(f"{name}: unknown workload {k!r}; allowed: {', '.join(WORKLOADS)}{colon_hint([k])}")
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
    alone = [v for v in ("all", "default") if v in chosen and v not in allowed]
    if alone and len(chosen) > 1:
        raise ValueError(f"variants[{w}][{lang}] = {chosen!r}: {alone[0]!r} stands alone (every variant, or the "
                         f"default one), not in a list with other names; allowed in a list: {', '.join(allowed)}")
    for v in chosen:
        if v not in allowed:
            raise ValueError(f"unknown variant {v!r} of {w} for {lang}; allowed: {', '.join(allowed)}{colon_hint([v])}")
    if not chosen:
        raise ValueError(f"variants[{w}][{lang}] is empty; allowed: {', '.join(allowed)}, 'all' or 'default'")
    return tuple(dict.fromkeys(chosen))


def _validate_params(w: str, lang: str, given: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    spec = workload(w)
    known = {p.name for p in spec.params}
    for key in given:
        if key not in known:
            allowed = ", ".join(sorted(known)) or "none"
            raise ValueError(f"unknown parameter {key!r} for workload {w}; allowed: {allowed}{colon_hint([key])}")
    grid: dict[str, tuple[str, ...]] = {}
    for p in spec.params_for(lang):
        if p.name not in given:
            grid[p.name] = (p.default_for(lang),)
            continue
        value = given[p.name]
        if isinstance(value, Mapping):  # per-language values
            bad = [k for k in value if k not in LANGS]
            if bad:
                raise ValueError(f"params[{w}][{p.name}]: unknown language {bad[0]!r}; allowed: go, rust"
                                 f"{colon_hint(bad)}")
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
                    raise ValueError(f"params[{w}][{p.name}] = {v!r} is not allowed: allowed: "
                                     + "; ".join(f"{lg} {p.allowed(lg)}" for lg in p.langs))
            values = mine or [p.default_for(lang)]
        grid[p.name] = tuple(dict.fromkeys(p.normalise(lang, v, where=f"params[{w}][{p.name}]") for v in values))
    return grid


def _validate_n_range(w: str, given: Any, ns: tuple[int, ...], grid: Mapping[str, Mapping[str, tuple[str, ...]]]
                      ) -> dict[str, tuple[int | None, int | None]]:
    """n_range of one workload: {"key=value[,key=value]": [lowest N, highest N]}, each bound a
    positive integer or null.  A setting must name parameters of the workload with values the plan
    runs (else it would restrict nothing), and leave at least one of the plan's N values."""
    name = f"n_range[{w}]"
    if not isinstance(given, Mapping):
        raise ValueError(f"{name} must be a mapping of a parameter setting (\"key=value\") to [lowest N, highest N], "
                         f"got {given!r}{colon_hint([given])}")
    spec = workload(w)
    known = {p.name for p in spec.params}
    out: dict[str, tuple[int | None, int | None]] = {}
    for setting, bounds in given.items():
        if not isinstance(setting, str) or not setting.strip():
            raise ValueError(f"{name}: {setting!r} is not a parameter setting; give \"key=value\" or "
                             "\"key=value,key=value\"")
        pairs = []
        for key, value in parse_setting(setting):
            if not key or not value:
                raise ValueError(f"{name}: {setting!r} is not a parameter setting; give \"key=value\" or "
                                 "\"key=value,key=value\"")
            if key not in known:
                raise ValueError(f"{name}: {setting!r} names parameter {key!r}, which {w} does not have; allowed: "
                                 f"{', '.join(sorted(known)) or 'none'}")
            runs = {v for per in grid.values() for v in per.get(key, ())} | \
                {fixed[key] for _, fixed in spec.article.values() if key in fixed}  # the article preset's
            if value not in runs:
                raise ValueError(f"{name}: {setting!r} sets {key}={value}, a value this plan does not run (it runs "
                                 f"{key} = {', '.join(sorted(runs))}); the setting would restrict nothing")
            pairs.append(f"{key}={value}")
        if bounds is None or isinstance(bounds, (str, bytes)) or not isinstance(bounds, (list, tuple)) \
                or len(bounds) != 2:
            flow = (" (in a mapping written in braces a comma separates entries: quote a setting of several "
                    "parameters, {\"key=a,other=b\": [1, 10]})" if bounds is None else "")
            raise ValueError(f"{name}[{setting!r}] must be [lowest N, highest N] (null: no bound), got {bounds!r}{flow}")
        low, high = (None if read_none(b) is None else as_int(f"{name}[{setting!r}]: N", b, default="no bound")
                     for b in bounds)
        if low is not None and high is not None and low > high:
            raise ValueError(f"{name}[{setting!r}]: the lowest N ({low}) is above the highest ({high})")
        if not any((low is None or n >= low) and (high is None or n <= high) for n in ns):
            raise ValueError(f"{name}[{setting!r}]: [{low}, {high}] holds none of the N values of {w} "
                             f"({', '.join(map(str, ns))}): give a range that holds one, or leave the setting out")
        out[",".join(pairs)] = (low, high)
    return out


def _validate_cores(given: Any, profile_cores: Mapping[str, Any], workloads: list[str]):
    """`cores` as the Plan holds it.  A mapping {workload: core counts}: those workloads run at
    their core counts, the others unpinned; not given (None): the profile's core counts per
    workload, those above this machine's usable CPUs left out (a profile runs on any machine);
    anything else is the plan-wide value the parameter table's check reads (parameters.py)."""
    usable = cpus.usable_cpus()
    if isinstance(given, Mapping):
        per = _per_workload("cores", given, workloads)
        return {w: ks for w, v in per.items() if (ks := parameters.cores_list(v, usable))}
    if given is None and profile_cores:
        return {w: ks for w in workloads if w in profile_cores
                and (ks := tuple(sorted({k for k in profile_cores[w] if k <= usable})))}
    return None  # plan-wide: the table's check


def threads_note(plan: Plan, usable: int | None = None, cluster: Any = None) -> str | None:
    """A note when `threads` is below the CPUs a program may run on and cells of Rust run unpinned:
    Rust's main thread, which spawns and collects in `block_on`, is not one of its tokio worker
    threads, where Go's main goroutine holds one of GOMAXPROCS; so unpinned, Rust may use one CPU
    more than Go (docs/workloads.md).  `cores` pins both to the same CPUs.  The CPUs compared with
    are this machine's usable ones (`usable`, default bench_src/cpus.py's rule), or with a local
    cluster (`cluster`, a ClusterSpec of kind "local") those of its largest host, each host being
    pinned to its own share of them (cpus.split)."""
    if cluster is not None and getattr(cluster, "kind", None) == "local":
        shares = [len(share) for share in cpus.split(cluster.workers)]
        usable = max(shares) if usable is None else usable
        which = "the host" if len(shares) == 1 else "each host" if len(set(shares)) == 1 else "the largest host"
        where = f"the {usable} CPUs of {which} of cluster {cluster}"
    else:
        usable = cpus.usable_cpus() if usable is None else usable
        where = f"this machine's {usable} usable CPUs"
    if plan.threads is None or plan.threads >= usable or "rust" not in plan.languages:
        return None
    unpinned = [c for c in plan.cells() if c.lang == "rust" and not c.cores]
    if not unpinned:
        return None
    return (f"threads is {plan.threads}, below {where}, and {len(unpinned)} Rust "
            f"cell{'s run' if len(unpinned) != 1 else ' runs'} unpinned: Rust's main thread, which spawns and "
            "collects, is not one of its tokio worker threads (Go's main goroutine holds one of GOMAXPROCS), so it "
            f"may use {plan.threads + 1} CPUs where Go uses {plan.threads} (docs/workloads.md); to give both only "
            f"{plan.threads}, pin them: cores [{plan.threads}]")


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
            total += per_lang * max(1, len(plan.cores_of(w)))
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
                         f"than {MAX_PLAN_SAMPLES:,}; if that is meant, set allow_large ({_allow_large_words()})")


def _allow_large_words() -> str:
    """allow_large in each place a plan is given (an error naming only a call's keyword read as wrong
    syntax on the command line)."""
    option = parameters.option(next(p for p in parameters.PLAN_PARAMETERS if p.name == "allow_large"))
    return f"{option} true on the command line, -p allow_large True with papermill, allow_large=True in a call"


def plan_parameters() -> list[str]:
    """The names make_plan accepts (the keys of a --plan file, the notebook's plan parameters)."""
    return parameters.plan_names()


def make_plan(profile: Any = parameters.default("profile"), **given: Any) -> Plan:
    """Merge the given parameters over the profile and validate everything.

    The parameters, their types, defaults and meaning are declared in bench_src/parameters.py;
    any other name is refused.  Each scalar parameter is read by its `check` there; the grid
    (workloads, languages, ns, variants, params), the DSNs and the sequential rule's fields
    (max_samples, looks, smoke) are validated here, together, since each depends on the others.

    ns, variants and params may be given for all workloads at once or as {workload: ...}.
    variants per workload: {"go": [...], "rust": [...]}, "all", or "default".
    params per workload: {key: value or [values] or {"go": [...], "rust": [...]}}.
    """
    unknown = [k for k in given if k not in parameters.plan_names()]
    if unknown:
        names = ", ".join(repr(k) for k in sorted(unknown))
        raise ValueError(f"unknown plan parameter{'s' if len(unknown) > 1 else ''} {names}; "
                         f"allowed: {', '.join(plan_parameters())}{colon_hint(unknown)}")
    # the word None is None, the parameter not given (values.read_none), as in every other reading
    value = {p.name: read_none(given.get(p.name, p.default)) for p in parameters.PLAN_PARAMETERS}
    workloads, languages, ns, variants, params = (value[k] for k in ("workloads", "languages", "ns", "variants",
                                                                      "params"))
    profile = read_none(profile)
    if not isinstance(profile, str):
        raise ValueError(f"profile must be a name, got {profile!r}; allowed: {', '.join(PROFILES)}")
    prof = get_profile(profile)
    wl = _as_list("workloads", workloads) if workloads is not None else prof.workloads
    if not wl:
        raise ValueError(f"workloads is empty; allowed: {', '.join(WORKLOADS)}")
    for w in wl:
        if not isinstance(w, str):
            raise ValueError(f"workloads: {w!r} is not a workload name; allowed: {', '.join(WORKLOADS)}")
        workload(w)
    wl = list(dict.fromkeys(wl))
    langs = list(languages_parameter(languages))

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
        if variants not in ("all", "default"):
            raise ValueError(f"variants: {variants!r} is neither 'default' nor 'all', the two words that apply to "
                             "every workload; name variants per workload and language instead, e.g. "
                             f"{{{wl[0]}: {{go: [{WORKLOADS[wl[0]].variants['go'][0]}], rust: "
                             f"[{WORKLOADS[wl[0]].variants['rust'][0]}]}}}} (python -m bench_src list shows them)"
                             f"{colon_hint([variants])}")
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
            raise ValueError(f"variants[{w}]: unknown language {bad[0]!r}; allowed: go, rust{colon_hint(bad)}")
        plan_variants[w] = {lang: _validate_variants(w, lang, per.get(lang)) for lang in langs}
        for lang in per:  # given for a language the plan leaves out: checked all the same, never ignored
            if lang not in langs and w in var_given:
                _validate_variants(w, lang, per[lang])

    par_given = _per_workload("params", params, wl) if params is not None else {}
    plan_params: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {}
    for w in wl:
        grid = dict(prof.params.get(w, {}))
        extra = par_given.get(w, {})
        if not isinstance(extra, Mapping):
            raise ValueError(f"params[{w}] must be a mapping of parameter to values, got {extra!r}"
                             f"{colon_hint([extra])}")
        grid.update(extra)
        plan_params[w] = {lang: _validate_params(w, lang, grid) for lang in langs}

    range_given = _per_workload("n_range", value["n_range"], wl) if value["n_range"] is not None else {}
    plan_n_range: dict[str, dict[str, tuple[int | None, int | None]]] = {}
    for w in wl:
        mine = range_given.get(w)
        # the given settings over the profile's (a bad value goes to the check, which names it)
        settings = dict(prof.n_range.get(w, {})) if w not in range_given else \
            {**prof.n_range.get(w, {}), **mine} if isinstance(mine, Mapping) else mine
        if settings or w in range_given:
            checked_range = _validate_n_range(w, settings, plan_ns[w], plan_params[w])
            if checked_range:
                plan_n_range[w] = checked_range

    per_workload_cores = _validate_cores(value["cores"], prof.workload_cores, wl)
    if per_workload_cores is not None:
        value = {**value, "cores": None}
    checked = {p.name: p.check(value[p.name], prof) for p in parameters.PLAN_PARAMETERS if p.check}
    if per_workload_cores is not None:
        checked["cores"] = per_workload_cores
    elif checked.get("cores") and value["threads"] is not None:
        raise ValueError(f"give cores or threads, not both: with cores {list(checked['cores'])} each cell runs with "
                         f"as many threads as cores (threads was {value['threads']!r})")
    dsn_v = validate_dsn(value["dsn"], wl)

    fields = {f.name for f in dataclasses.fields(Plan)}
    plan = Plan(
        profile=prof.name,
        workloads=tuple(wl),
        languages=tuple(langs),
        ns=plan_ns,
        variants=plan_variants,
        params=plan_params,
        n_range=plan_n_range,
        dsn=dsn_v,
        **{k: v for k, v in checked.items() if k in fields and k != "time_budget_s"},
    )
    allow_large_v = checked["allow_large"]
    _check_size(plan, allow_large_v)  # the pilot alone, before anything lists every cell's comparisons
    # the stopping-rule fields, and the refusal of a plan that can never call a difference (feasibility.py)
    plan = feasibility.plan_fields(plan, max_samples=prof.max_samples if value["max_samples"] is None
                                   else value["max_samples"], looks=prof.looks if value["looks"] is None
                                   else value["looks"], smoke=value["smoke"], adaptive_target=value["adaptive_target"],
                                   late_looks=prof.late_looks if value["late_looks"] is None else value["late_looks"])
    _check_size(plan, allow_large_v)  # with the sequential budget
    budget_v = checked["time_budget_s"]
    if budget_v and not plan.max_samples:
        raise ValueError(f"time_budget_s ({budget_v:g}) limits the extra blocks of the sequential rule: "
                         "set max_samples above samples too, or time_budget_s=0")
    return dataclasses.replace(plan, time_budget_s=budget_v)
