"""The parameters of a plan and of a run, declared once: name, type, default, help and check.

This table feeds every place that names them:
- validation: `plan.validate.make_plan` accepts exactly PLAN_PARAMETERS and applies each `check`;
- the profiles: a `profiles.Profile` sets the parameters marked `profile` (and nothing else);
- the notebook: run.ipynb's parameters cell is `notebook_cell()` (its names, types as papermill
  reads them, defaults and help), and its first code cell refuses every other name
  (`notebook_names()`, api.refuse_unknown_parameters);
- the command line: `check` and `run` take one `--<name>` option per plan parameter
  (bench_src/__main__.py), beside the `--plan` mapping.

Adding a parameter of the plan: a `Parameter` here, a field of `plan.model.Plan` when the plan
keeps it (make_plan stores every checked value whose name is a Plan field), and its use.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable

import psutil

from . import cpus
from .cluster_spec import parse_cluster
from .values import as_bool, as_float, as_int, colon_hint, from_papermill

# Caps that hold always (a sample count or a value no run can reach).
MAX_SAMPLES_PER_CELL = 10_000
MAX_WARMUP = 100
MAX_THREADS = 1024
MAX_TIMEOUT_S = 7 * 24 * 3600.0
MIN_TIMEOUT_S = 0.001         # the launcher counts whole milliseconds
MAX_COOLDOWN_S = 3600.0
MAX_TIMELINE_MS = 60_000.0
MAX_TIME_BUDGET_S = 30 * 24 * 3600.0
WARMUP_SCOPES = ("cell", "program")  # see Plan.warmup_cells
BLOCK_ORDERS = ("grouped", "shuffled")  # see Plan.ordered
# The number of looks of the sequential rule when neither the plan nor its profile gives one (the
# sampling design, bench_src/plan/design.py, reads it)
DEFAULT_LOOKS = 3

REQUIRED = object()  # a profile must set this parameter


# Plan parameters whose default follows the machine a run is on (so two machines left to their
# defaults plan differently): what each defaults to, and the placeholder of its value in help texts.
MACHINE_DEFAULTS = {"threads": ("its usable CPUs", "N"), "mem_limit_mb": ("80% of its RAM", "M")}


def default_mem_limit_mb() -> int:
    return int(psutil.virtual_memory().total * 0.8 / 2**20)


@dataclass(frozen=True)
class Parameter:
    """One parameter.  `type` is the notebook's annotation as papermill reads it; `default` the
    notebook's (and make_plan's) value when the parameter is not given, where None means the
    profile's value or the rule `help` names; `profile`: a profile may set it, `profile_default`
    its value when the profile does not; `check(value, profile)`: the value the plan holds, from
    the given one (None when not given, the word None read as None by values.read_none; an empty
    string is a value, refused as any other this parameter does not allow), raising a ValueError
    that names it (None: the parameter is validated with the plan as a whole, in
    plan/validate.py); `notebook`: declared in run.ipynb's parameters cell (False for a retired
    name that make_plan still answers); `cli`: offered as a command-line option `--<name>` too."""

    name: str
    type: str
    default: Any
    help: str
    profile: bool = False
    profile_default: Any = None
    check: Callable[[Any, Any], Any] | None = None
    notebook: bool = True
    cli: bool = True


def _or(value: Any, fallback: Any) -> Any:
    """The given value, or the fallback when it was not given (None: values.read_none)."""
    return fallback if value is None else value


def _threads(value: Any, profile: Any) -> int:
    if value is None:
        return cpus.usable_cpus()
    # no zero: 0 is refused like any value below 1, with the way to the default named
    return as_int("threads", value, 1, MAX_THREADS, default=f"the usable CPUs ({cpus.usable_cpus()} here)")


def cores_list(value: Any, usable: int) -> tuple[int, ...]:
    """cores: None or [] (no pinning), "all", or a list of core counts and "all"; each 1..usable."""
    if value is None or value in ([], ()):
        return ()
    values = [value] if isinstance(value, (str, int)) else value
    if not isinstance(values, (list, tuple)):
        raise ValueError(f"cores must be a list of core counts (or \"all\"), got {value!r}")
    out = []
    for v in values:
        if v == "all":
            out.append(usable)
            continue
        try:  # the one reading of a whole number (a boolean is none), its bounds below
            v = as_int("cores", v, -math.inf)
        except ValueError:
            raise ValueError(f"cores: {v!r} is not a core count; allowed: integers 1..{usable} or \"all\""
                             f"{colon_hint([v])}") from None  # "sleep:1" meant {sleep: 1}
        if v > usable:
            raise ValueError(f"cores: {v} is more than the {usable} usable CPUs of this machine; allowed: 1..{usable} "
                             "or \"all\"")
        if v < 1:
            raise ValueError(f"cores: {v} is not a core count; allowed: 1..{usable} or \"all\"")
        out.append(v)
    return tuple(sorted(set(out)))


# The largest memory guard, in MiB: 64 TiB, more than any host a run is planned for has, and far
# below what the launcher's --mem-limit-kb (a C long) holds.
MAX_MEM_LIMIT_MB = 2**26


def _mem_limit(value: Any, profile: Any) -> int:
    if value is None:
        return default_mem_limit_mb()
    return as_int("mem_limit_mb", value, 1, MAX_MEM_LIMIT_MB,
                  default=f"80% of RAM ({default_mem_limit_mb()} MiB here)")


def _timeline(value: Any, profile: Any) -> float:
    value = _or(value, profile.timeline_ms)
    ms = as_float("timeline_ms", _or(value, 0), 0.0, MAX_TIMELINE_MS, " ms (0: off)")
    if 0 < ms < 1:
        raise ValueError(f"timeline_ms must be 0 (off) or at least 1 ms, got {value!r}")
    return ms


def _warmup_scope(value: Any, profile: Any) -> str:
    scope = _or(value, profile.warmup_scope)
    if scope not in WARMUP_SCOPES:
        raise ValueError(f"warmup_scope must be one of {', '.join(WARMUP_SCOPES)}, got {value!r}")
    return scope


def _block_order(value: Any, profile: Any) -> str:
    order = _or(value, BLOCK_ORDERS[0])
    if order not in BLOCK_ORDERS:
        raise ValueError(f"block_order must be one of {', '.join(BLOCK_ORDERS)}, got {value!r}")
    return order


PLAN_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("profile", "str", "quick",
              "a profile of bench_src/profiles.py (`python -m bench_src list` names them)"),
    Parameter("workloads", "Optional[list[str]]", None, 'workloads to run, e.g. ["sleep", "cpu_loops"]'),
    Parameter("languages", "Optional[list[str]]", None, '["go", "rust"] by default'),
    Parameter("ns", "Union[list[int], dict[str, list[int]], None]", None,
              "N values for every workload, or per workload", profile=True, profile_default=REQUIRED),
    Parameter("variants", "Union[str, dict[str, dict[str, list[str]]], None]", None,
              '"default", "all", or per workload and language', profile=True, profile_default={}),
    Parameter("params", "Optional[dict[str, dict]]", None,
              "per workload, a value or a list of values per parameter key", profile=True, profile_default={}),
    Parameter("n_range", "Optional[dict[str, dict[str, list]]]", None,
              "per workload and parameter setting (a params key and value, or several joined by commas), "
              "the [lowest, highest] N it runs at (null: no bound); see the README", profile=True,
              profile_default={}),
    Parameter("samples", "Optional[int]", None, "measured samples per cell", profile=True,
              profile_default=REQUIRED,
              check=lambda v, p: as_int("samples", p.samples if v is None else v, 1, MAX_SAMPLES_PER_CELL)),
    Parameter("warmup", "Optional[int]", None,
              "warm-up samples per cell (stored, flagged, excluded from statistics)", profile=True,
              profile_default=REQUIRED,
              check=lambda v, p: as_int("warmup", p.warmup if v is None else v, 0, MAX_WARMUP)),
    Parameter("seed", "int", 1, "seed of the sample order (recorded)",
              check=lambda v, p: as_int("seed", 1 if v is None else v, 0, 2**63 - 1)),
    Parameter("threads", "Optional[int]", None,
              "--threads for both programs (GOMAXPROCS or tokio workers); None: the usable CPUs", check=_threads),
    Parameter("cores", "Union[list, str, None]", None,
              'core counts, e.g. [1, 2] or "all": each sample pinned to k CPUs with k threads',
              check=lambda v, p: cores_list(v, cpus.usable_cpus())),
    Parameter("timeout_s", "Optional[float]", None, "per-sample timeout in seconds", profile=True,
              profile_default=300.0,
              check=lambda v, p: as_float("timeout_s", p.timeout_s if v is None else v, MIN_TIMEOUT_S,
                                          MAX_TIMEOUT_S, " seconds")),
    Parameter("mem_limit_mb", "Optional[int]", None, "memory guard in MiB; default 80% of RAM", check=_mem_limit),
    Parameter("cooldown_s", "float", 0.0, "pause between samples, seconds",
              check=lambda v, p: as_float("cooldown_s", _or(v, 0.0), 0.0, MAX_COOLDOWN_S, " seconds")),
    Parameter("max_samples", "Optional[int]", None,
              "above samples, the sequential rule: open cells get more blocks up to this many samples",
              profile=True, profile_default=0),
    Parameter("looks", "Optional[int]", None,
              "analyses from the pilot to the budget under the sequential rule "
              f"({DEFAULT_LOOKS} where the profile gives none)", profile=True),
    Parameter("late_looks", "Optional[int]", None,
              "looks past max_samples at the same ratio, taken only by cells whose blocks to the next one cost "
              "little (plan/design.py, LATE_STEP_S); 0: none", profile=True, profile_default=0),
    Parameter("smoke", "bool", False,
              "allow a run too small for any verdict (otherwise refused before anything runs)"),
    Parameter("time_budget_s", "Optional[float]", None,
              "wall seconds for the run under the sequential rule: no extra block starts after it",
              profile=True, profile_default=0.0,
              check=lambda v, p: as_float("time_budget_s", _or(v, p.time_budget_s), 0.0, MAX_TIME_BUDGET_S,
                                          " seconds (0: none)")),
    Parameter("warmup_scope", "Optional[str]", None,
              '"cell": every cell warms up; "program": one warm-up per program configuration at its smallest N',
              profile=True, profile_default="cell", check=_warmup_scope),
    Parameter("block_order", "Optional[str]", None,
              '"grouped" (default): the cells compared with each other (one workload and N) run '
              'next to each other, the groups and the cells in each in random order; "shuffled": every cell '
              'anywhere in the block', check=_block_order),
    Parameter("article_preset", "Optional[bool]", None, "also run the 2022 article's own choices per workload",
              profile=True, profile_default=False,
              check=lambda v, p: as_bool("article_preset", _or(v, p.article_preset))),
    Parameter("aa", "bool", False,
              "an A/A run: every cell twice, as arms A and B of the same program (expect no difference)",
              check=lambda v, p: as_bool("aa", _or(v, False))),
    Parameter("timeline_ms", "Optional[float]", None,
              "sample each program's RSS every this many ms into timelines/ (0 is off)", profile=True,
              profile_default=0.0, check=_timeline),
    # not an option: a password on a command line is visible to every local user (--plan takes it
    # in a file, or as env:NAME)
    Parameter("dsn", "Optional[dict[str, str]]", None,
              'existing servers per kind (mysql, postgres); "env:NAME" reads the URL from a variable', cli=False),
    Parameter("allow_large", "bool", False, "accept a plan of more samples than the harness allows by default",
              check=lambda v, p: as_bool("allow_large", _or(v, False))),
    Parameter("adaptive_target", "Optional[float]", None, "replaced by max_samples; only 0 or None is accepted",
              notebook=False, cli=False),
)

# The run notebook's parameters that are not the plan's: where and how the plan is run.
RUN_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("results_dir", "Optional[str]", None,
              "where samples go; None: data/results/<profile>-<commit>[-dirty]-<plan digest>"),
    Parameter("force_build", "bool", False, "rebuild even when sources are unchanged",
              check=lambda v, p: as_bool("force_build", _or(v, False))),
    Parameter("progress", "bool", True, "progress lines with ETA on stderr",
              check=lambda v, p: as_bool("progress", _or(v, True))),
    Parameter("repair", "bool", False, "move unreadable lines of samples.jsonl aside before resuming",
              check=lambda v, p: as_bool("repair", _or(v, False))),
    Parameter("new_binaries", "bool", False, "resume with rebuilt programs as a new session instead of refusing",
              check=lambda v, p: as_bool("new_binaries", _or(v, False))),
    Parameter("cluster", "Optional[str]", None,
              'None: run here, in this process; "local:N": N hosts on this machine, each on its own CPUs; '
              '"tcp://HOST:PORT": the hosts of a running Dask scheduler (docs/cluster.md)',
              check=lambda v, p: parse_cluster(v)),
)


def default(name: str) -> Any:
    """A plan parameter's default."""
    return next(p.default for p in PLAN_PARAMETERS if p.name == name)


def plan_names() -> list[str]:
    """The names make_plan accepts (the keys of a --plan file, the notebook's plan parameters)."""
    return [p.name for p in PLAN_PARAMETERS]


def profile_parameters() -> list[Parameter]:
    return [p for p in PLAN_PARAMETERS if p.profile]


def notebook_parameters() -> list[Parameter]:
    """run.ipynb's parameters, in the order of its parameters cell."""
    return [p for p in PLAN_PARAMETERS if p.notebook] + list(RUN_PARAMETERS)


def notebook_names() -> list[str]:
    return [p.name for p in notebook_parameters()]


def cli_parameters() -> list[Parameter]:
    """The plan parameters the command line's `check` and `run` take as `--<name>` options."""
    return [p for p in PLAN_PARAMETERS if p.cli]


def option(p: Parameter) -> str:
    return "--" + p.name.replace("_", "-")


def _scalar(p: Parameter) -> str | None:
    """"str", "int", "float" or "bool" for a scalar parameter (Optional or not); None for a list or a mapping."""
    inner = p.type.removeprefix("Optional[").removesuffix("]") if p.type.startswith("Optional[") else p.type
    return inner if inner in ("str", "int", "float", "bool") else None


def metavar(p: Parameter) -> str:
    """INT, FLOAT, BOOL or STR for a scalar; YAML for a list or a mapping (JSON is YAML)."""
    return (_scalar(p) or "YAML").upper()


# How a scalar of each type is read, its bounds aside (the check applies them)
_READERS: dict[str, Callable[[str, Any], Any]] = {
    "int": lambda name, v: as_int(name, v, -math.inf),
    "float": lambda name, v: as_float(name, v, -math.inf, math.inf),
    "bool": as_bool,
}


def same_value(p: Parameter, one: Any, other: Any) -> bool:
    """Whether two givings of a parameter are one value (an option of the command line and the same
    key in --plan: only different values contradict).  Each is read as the plan reads it: papermill's
    strings (a list or a mapping in YAML, the word None: values.from_papermill), and a number or a
    boolean with its type (`1`, "1" and "1.0" are one seed; "yes" and true one boolean).  Otherwise
    equal values are one, a boolean never equal to a number; and a string given as an option is the
    plan's scalar written out ("10" and 10, "all" and all)."""
    one, other = from_papermill(p.name, one), from_papermill(p.name, other)
    if one is None or other is None:
        return one is other
    read = _READERS.get(_scalar(p) or "")
    if read is not None:
        try:
            return read(p.name, one) == read(p.name, other)
        except ValueError:  # not of its type: the check names it, unless another value contradicts it
            pass
    return _equal(one, other) or (isinstance(one, str) and not isinstance(other, (list, tuple, dict))
                                  and one.strip() == str(other))


def _equal(one: Any, other: Any) -> bool:
    """Python's == over YAML's values, except that a boolean is never a number (True == 1 in Python)."""
    if isinstance(one, dict) and isinstance(other, dict):
        return one.keys() == other.keys() and all(_equal(one[k], other[k]) for k in one)
    if isinstance(one, (list, tuple)) and isinstance(other, (list, tuple)):
        return len(one) == len(other) and all(_equal(a, b) for a, b in zip(one, other))
    return isinstance(one, bool) == isinstance(other, bool) and one == other


def cli_help(p: Parameter) -> str:
    if p.default is not None:
        return f"{p.help}; default: {_literal(p.default)}"
    return f"{p.help}; default: the profile's" if p.profile else p.help


def notebook_cell() -> str:
    """The source of run.ipynb's parameters cell."""
    lines = ["# Parameters (papermill). None means the profile's value."]
    for p in notebook_parameters():
        kind = p.type if p.type in ("str", "int", "float", "bool") else json.dumps(p.type)
        lines.append(f"{p.name}: {kind} = {_literal(p.default)}  # {p.help}")
    return "\n".join(lines)


def _literal(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)
