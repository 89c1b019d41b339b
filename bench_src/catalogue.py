"""The catalogue of workloads: names, variants, parameters and limits.

docs/workloads.md specifies every workload and variant in words; this is its machine-readable
side.  Tests compare it with what each program says of itself (`gobench list`, `rustbench list`)
and with the specification, so the four cannot drift apart.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from .values import as_int

LANGS = ("go", "rust")


# The largest value of an integer knob: both programs read every one into a 64-bit integer and
# use some as counts of OS resources (a pool's connections, a channel's slots), so the plan refuses,
# before anything is built, a value one of them would reject or overflow on.
INT_PARAM_MAX = 2**31 - 1


@dataclass(frozen=True)
class Param:
    """A `--param KEY=VALUE` knob.

    kind is "int" (with an inclusive minimum and maximum) or "choice" (with allowed values).  `langs` names the
    languages that accept the key; a per-language choice (a driver, say) lists its values per
    language in `choices_by_lang`.  `checksum` says whether the value changes the work done (and so
    the checksum); keys that only choose *how* the same work is done (a driver, a pool size) do not
    take part in the Go/Rust equivalence check.  `switch` marks an on/off piece of optional work
    (one the 2022 programs skipped): the variants table sets a cell with it off against the
    default of otherwise the same work, so that the table shows what the piece costs.  `unequal`:
    values under which the two languages' programs do not do the same work although their source
    does (a loop whose result is never used, which one compiler removes and the other runs), which
    no checksum can prove: a Go cell and a Rust cell with such a value are compared only in the
    article family, as the article's own programs, never in the like-for-like table.
    """

    name: str
    default: str | dict[str, str]
    kind: str = "int"
    minimum: int = 0
    maximum: int = INT_PARAM_MAX
    choices: tuple[str, ...] = ()
    choices_by_lang: dict[str, tuple[str, ...]] = field(default_factory=dict)
    minimum_by_lang: dict[str, int] = field(default_factory=dict)
    langs: tuple[str, ...] = LANGS
    checksum: bool = True
    switch: bool = False
    unequal: tuple[str, ...] = ()
    doc: str = ""

    def default_for(self, lang: str) -> str:
        if isinstance(self.default, dict):
            return self.default[lang]
        return self.default

    def minimum_for(self, lang: str) -> int:
        return self.minimum_by_lang.get(lang, self.minimum)

    def allowed(self, lang: str) -> str:
        if self.kind == "int":
            return f"an integer >= {self.minimum_for(lang)} and <= {self.maximum}"
        return ", ".join(self.choices_for(lang))

    def choices_for(self, lang: str) -> tuple[str, ...]:
        return self.choices_by_lang.get(lang, self.choices)

    def normalise(self, lang: str, value: object, where: str | None = None) -> str:
        """Return the value as the string passed to the program, or raise ValueError naming the value
        as the caller knows it: `where` (a plan's "params[sleep][work]"), else "--param work"."""
        given = f"{where} = {value!r}" if where else f"--param {self.name}={value!r}"
        if self.kind == "int":
            try:  # the one reading of a whole number (values.as_int: "6", 6.0, "1e3"; no boolean), bounds below
                number = as_int(self.name, value, -math.inf)
            except ValueError:
                raise ValueError(f"{given}: expected {self.allowed(lang)}") from None
            if number < self.minimum_for(lang) or number > self.maximum:
                why = f" for {lang}" if lang in self.minimum_by_lang else ""
                note = f" ({self.doc})" if why and self.doc else ""
                raise ValueError(f"{given}{why}: expected {self.allowed(lang)}{note}")
            return str(number)
        if isinstance(value, bool) and set(self.choices_for(lang)) == {"on", "off"}:
            value = "on" if value else "off"  # YAML reads a bare on/off as a boolean
        text = str(value)
        if text not in self.choices_for(lang):
            for_lang = f" for {lang}" if lang in self.choices_by_lang else ""
            raise ValueError(f"{given} is not allowed{for_lang}: allowed: {self.allowed(lang)}")
        return text


# What runs the concurrent work of a variant.  A Go-vs-Rust headline compares like with like: only
# variants of the same model are paired (goroutines with tokio tasks); other models (OS threads,
# unspawned futures, a single-threaded runtime) appear beside them in tables of their own.
TASK = "task"                    # goroutines / tokio tasks on a multi-thread runtime
TASK_ONE_THREAD = "task, 1 thread"  # tokio tasks on a current-thread runtime
FUTURE = "future"                # futures polled together by one task (join_all), nothing spawned
THREAD = "thread"                # one OS thread per task
MODELS = (TASK, TASK_ONE_THREAD, FUTURE, THREAD)


@dataclass(frozen=True)
class Workload:
    """One workload of the specification.

    variants: per language, the first is the default: the code the language's own documentation
    recommends for the task (docs/workloads.md cites the source of every default).
    max_n: the largest N the harness accepts (the article's grid ends at 1,000,000).
    fixture: the files the harness must prepare before a sample (None, "files", "sqlite").
    server: the kind of database server its samples need (None, or a kind of bench_src/run/servers/:
    "mysql", "postgres"), which is also the key of the plan's `dsn` for it.
    n_meaning: what --n counts, for tables and axis labels.
    section: the section of docs/workloads.md that specifies it (3: the 2022 article's workloads,
    4: the related posts' experiments).
    """

    name: str
    section: str
    variants: dict[str, tuple[str, ...]]
    params: tuple[Param, ...] = ()
    max_n: int = 10_000_000
    fixture: str | None = None
    server: str | None = None
    n_meaning: str = "concurrent tasks"
    summary: str = ""
    # The 2022 article's own settings (its collection, drivers, kernel, journal, pool, retained
    # contents): per language a variant and the parameter values it fixed (the others take the
    # plan's values).  docs/workloads.md, section 5, lists them.
    article: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    # lang -> variant -> model (see MODELS) for variants that are not TASK; `model_by_name` gives
    # every variant a model of its own name (cpu_loops: plain is only comparable with plain).
    models: dict[str, dict[str, str]] = field(default_factory=dict)
    model_by_name: bool = False

    def default_variant(self, lang: str) -> str:
        return self.variants[lang][0]

    def model(self, lang: str, variant: str) -> str:
        """What runs the variant's concurrent work; Go and Rust cells are like for like when equal."""
        if self.model_by_name:
            return variant
        return self.models.get(lang, {}).get(variant, TASK)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def params_for(self, lang: str) -> tuple[Param, ...]:
        return tuple(p for p in self.params if lang in p.langs)

    def default_params(self, lang: str) -> dict[str, str]:
        return {p.name: p.default_for(lang) for p in self.params_for(lang)}

    @property
    def shared_params(self) -> tuple[str, ...]:
        """The parameters both languages take with the same meaning: a Go cell and a Rust cell are
        comparable when these agree.  Per-language knobs (a driver) act like variants."""
        return tuple(p.name for p in self.params if set(p.langs) >= set(LANGS) and not p.choices_by_lang)

    @property
    def switch_params(self) -> tuple[str, ...]:
        """The on/off switches of optional work (`Param.switch`)."""
        return tuple(p.name for p in self.params if p.switch)


_RETAIN = Param("retain", "digest", kind="choice", choices=("digest", "content"), checksum=False,
                doc="keep only each file's digest, or (as the article did) every file's content until the end")
# The pieces of work the 2022 file programs skipped, each with a switch so its cost can be measured
# (docs/workloads.md, "What the original skipped").  files_read's checksum sums the digests, so
# there digest=off changes it (it then proves only the sizes read); files_rw's checksum never holds
# a digest.
_DIGEST_DOC = "FNV-1a over every file read (on), or only its size (off: the article computed nothing from it)"
_DIGEST_READ = Param("digest", "on", kind="choice", choices=("on", "off"), switch=True, doc=_DIGEST_DOC)
_DIGEST_RW = Param("digest", "on", kind="choice", choices=("on", "off"), checksum=False, switch=True, doc=_DIGEST_DOC)
# Go's os.File is unbuffered (a Write has reached the file when it returns): nothing to flush.
_FLUSH = Param("flush", "on", kind="choice", choices=("on", "off"), langs=("rust",), checksum=False, switch=True,
               doc="wait until each append reached the file and check its close (on), or drop the file "
                   "after write_all (off: the article's Rust; tokio writes and closes it later)")

_SLEEP_PARAMS = (
    Param("kernel", "xorshift", kind="choice", choices=("xorshift", "article"), unequal=("article",),
          doc="CPU kernel before the sleep: xorshift (real work) or article (the 2022 dead float loop)"),
    Param("work", "50000", minimum=0, doc="iterations of the kernel"),
)

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "sleep", "3",
            {"go": ("waitgroup", "chan-per-task", "chan-shared", "chan-shared-buffered"),
             "rust": ("join-handles", "joinset", "join-all", "current-thread")},
            _SLEEP_PARAMS,
            max_n=1_000_000,
            summary="kernel, then sleep lcg(42)[i] % 300 ms",
            # the article's final code: a channel per goroutine, handles awaited in order, and its
            # float loop (dead code) as the kernel
            article={"go": ("chan-per-task", {"kernel": "article", "work": "50000"}),
                     "rust": ("join-handles", {"kernel": "article", "work": "50000"})},
            models={"rust": {"current-thread": TASK_ONE_THREAD}},
        ),
        Workload(
            "cpu_loops", "4",
            {"go": ("plain", "local", "unrolled", "parallel"),
             "rust": ("plain", "local", "unrolled", "parallel")},
            (
                Param("u", "10", minimum=1, doc="divisor of the inner loop's j % u"),
                Param("inner", "100000", minimum=0, doc="inner loop length"),
            ),
            max_n=1_000_000,
            n_meaning="array length (outer loop)",
            summary="a[i] += j % u over an N x inner loop; no tasks",
            model_by_name=True,
        ),
        Workload(
            "files_read", "3",
            {"go": ("readfile", "chan-per-task"),
             "rust": ("spawn-blocking", "spawn-blocking-digest", "tokio-fs", "blocking-in-task")},
            (_RETAIN, _DIGEST_READ),
            max_n=1_000_000,
            fixture="files",
            summary="read file lcg(42)[i] % 20 whole, FNV-1a digest",
            article={"go": ("chan-per-task", {"retain": "content"}), "rust": ("tokio-fs", {"retain": "content"})},
        ),
        Workload(
            "files_rw", "3",
            {"go": ("readfile", "chan-per-task"),
             "rust": ("spawn-blocking", "spawn-blocking-digest", "tokio-fs", "blocking-in-task")},
            (_RETAIN, _DIGEST_RW, _FLUSH),
            max_n=1_000_000,
            fixture="files",
            summary="append to even-numbered files, then read; files restored before every sample",
            article={"go": ("chan-per-task", {"retain": "content"}), "rust": ("tokio-fs", {"retain": "content"})},
        ),
        Workload(
            "sqlite", "3",
            {"go": ("pool", "chan-per-task", "serialized-writes"), "rust": ("pool", "serialized-writes")},
            (
                Param("driver", {"go": "mattn", "rust": "sqlx"}, kind="choice",
                      choices_by_lang={"go": ("mattn", "modernc"), "rust": ("sqlx", "rusqlite")}, checksum=False,
                      doc="SQLite driver"),
                Param("journal", "wal", kind="choice", choices=("wal", "delete"), checksum=False,
                      doc="journal mode, the same in both languages"),
                Param("pool", "8", minimum=0, checksum=False, doc="connection pool size; 0 = unlimited"),
            ),
            max_n=100_000,
            fixture="sqlite",
            summary="update or select users rows; database copied fresh before every sample",
            # the article's settings: Go with the rollback journal and an unlimited pool, Rust with
            # sqlx's defaults (WAL, a pool of 10)
            article={"go": ("chan-per-task", {"driver": "mattn", "journal": "delete", "pool": "0"}),
                     "rust": ("pool", {"driver": "sqlx", "journal": "wal", "pool": "10"})},
        ),
        Workload(
            "mysql", "3",
            {"go": ("pool", "chan-per-task"), "rust": ("pool",)},
            (
                Param("driver", {"go": "go-sql-driver", "rust": "sqlx"}, kind="choice",
                      choices_by_lang={"go": ("go-sql-driver",), "rust": ("sqlx", "mysql_async")}, checksum=False,
                      doc="MySQL driver"),
                Param("pool", "64", minimum=1, checksum=False, doc="connection pool size"),
            ),
            max_n=1_000_000,
            server="mysql",
            summary="the sqlite queries on a private MariaDB server; users table restored before every sample",
            # the article: 151 connections on both sides (the server's default max_connections)
            article={"go": ("chan-per-task", {"pool": "151"}), "rust": ("pool", {"driver": "sqlx", "pool": "151"})},
        ),
        Workload(
            "postgres", "3",
            {"go": ("pool", "chan-per-task"), "rust": ("pool",)},
            (
                Param("driver", {"go": "pgx", "rust": "sqlx"}, kind="choice",
                      choices_by_lang={"go": ("pgx",), "rust": ("sqlx", "tokio-postgres")}, checksum=False,
                      doc="PostgreSQL driver"),
                Param("pool", "64", minimum=1, checksum=False, doc="connection pool size"),
            ),
            max_n=1_000_000,
            server="postgres",
            summary="the sqlite queries on a private PostgreSQL server; users table restored before every sample",
        ),
        Workload(
            "idle_tasks", "4",
            {"go": ("goroutine",), "rust": ("spawn", "current-thread", "join-all", "threads")},
            (
                Param("wait", "sleep", kind="choice", choices=("sleep", "release"), checksum=False,
                      doc="sleep: each task sleeps duration_ms (the posts' setup); release: each task waits "
                          "until the main task releases all of them right after the last spawn (all N alive "
                          "at once by construction; duration_ms is not used)"),
                Param("duration_ms", "1000", minimum=0, doc="how long each task sleeps (wait=sleep)"),
                Param("linger_ms", "0", minimum=0, checksum=False,
                      doc="keep the process alive this long after the tasks ended (memory timeline)"),
            ),
            max_n=10_000_000,
            summary="N tasks sleep (or wait for a release) and finish; peak memory / N = bytes per task",
            models={"rust": {"current-thread": TASK_ONE_THREAD, "join-all": FUTURE, "threads": THREAD}},
        ),
        Workload(
            "threads_vs_tasks", "4",
            {"go": ("goroutine",), "rust": ("tokio", "thread", "thread-pinned")},
            (Param("iterations", "100", minimum=0, doc="10 ms sleeps per worker"),),
            max_n=100_000,
            n_meaning="workers",
            summary="N workers: a staggered first sleep, then iterations x 10 ms sleeps",
            models={"rust": {"thread": THREAD, "thread-pinned": THREAD}},
        ),
        Workload(
            "ping_pong", "4",
            {"go": ("channels",), "rust": ("multi-thread", "current-thread")},
            (
                # at most 2^26 slots: a Go channel allocates its whole capacity when it is made
                # (gobench's maxPingPongBuffer)
                Param("buffer", "1", minimum=0, minimum_by_lang={"rust": 1}, maximum=2**26, checksum=False,
                      doc="channel capacity; 0 = unbuffered (Go only: tokio::sync::mpsc has no rendezvous channel)"),
                Param("mode", "lockstep", kind="choice", choices=("lockstep", "pipelined"), checksum=False,
                      doc="lockstep: wait for each reply; pipelined: stream all requests"),
            ),
            max_n=100_000_000,
            n_meaning="messages",
            summary="two tasks exchange N messages over two channels",
            models={"rust": {"current-thread": TASK_ONE_THREAD}},
        ),
    )
}


def workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ValueError(f"unknown workload {name!r}; allowed: {', '.join(WORKLOADS)}") from None


# --- the inputs both programs draw, and the least time a waiting workload can take ---------------

def lcg(seed: int, count: int) -> list[int]:
    """MINSTD: x[0] = seed, x[k+1] = 48271 x[k] mod (2^31 - 1) (docs/workloads.md, section 2)."""
    x, out = seed, []
    for _ in range(count):
        out.append(x)
        x = 48271 * x % 2147483647
    return out


SLEEP_MS_MOD = 300  # sleep: task i sleeps lcg(42)[i] mod 300 ms
TVT_FIRST_US_MOD = 200_000  # threads_vs_tasks: worker i first sleeps (i * 2654435761 mod 2^32) mod 200000 µs
TVT_TICK_MS = 10  # then `iterations` times 10 ms


@lru_cache(maxsize=64)
def _longest_sleep_ms(n: int) -> int:
    """The longest of the sleep workload's n sleeps, max over i < n of lcg(42)[i] mod 300 (the walk
    stops at 299, which no later draw can pass)."""
    x, best = 42, 0
    for _ in range(n):
        best = max(best, x % SLEEP_MS_MOD)
        if best == SLEEP_MS_MOD - 1:
            break
        x = 48271 * x % 2147483647
    return best


@lru_cache(maxsize=64)
def _shortest_sleep_ms(n: int) -> int:
    """The shortest of the sleep workload's n sleeps, min over i < n of lcg(42)[i] mod 300 (the walk
    stops at 0, which no later draw can pass: task 254 is the first to sleep 0 ms)."""
    x, best = 42, SLEEP_MS_MOD
    for _ in range(n):
        best = min(best, x % SLEEP_MS_MOD)
        if best == 0:
            break
        x = 48271 * x % 2147483647
    return best


@lru_cache(maxsize=64)
def _longest_first_sleep_us(n: int) -> int:
    """threads_vs_tasks: the longest first sleep over its n workers."""
    best = 0
    for i in range(n):
        best = max(best, (i * 2654435761 % 2**32) % TVT_FIRST_US_MOD)
        if best == TVT_FIRST_US_MOD - 1:
            break
    return best


# The workloads whose programs count the tasks alive when the last one has been spawned
# (`alive_at_spawn` in their result line's extra keys): their peak memory measures N tasks only where
# every one was alive at once (bench_src/analysis/validity.py)
ALIVE_COUNTED = ("idle_tasks", "sleep")


def shortest_wait_ns(workload_name: str, n: int, params: dict[str, str]) -> int | None:
    """The least time any one task of an ALIVE_COUNTED workload lives from the timer's start: each
    task starts waiting after the timer started and waits at least what it asks for, so a sample
    whose last spawn came before this (`spawned_ns` below it) had every task alive at once.  None
    where the work sets no such floor (idle_tasks with wait=release: its tasks wait for a release
    that comes after the last spawn, which the program's own count shows)."""
    if n < 1 or workload_name not in WORKLOADS:
        return None
    if workload_name == "sleep":
        return _shortest_sleep_ms(n) * 1_000_000
    return _idle_sleep_ns(workload_name, params)


def _param_value(workload_name: str, params: dict[str, str], key: str) -> str:
    """A parameter of a work as given, else its default."""
    return params.get(key, WORKLOADS[workload_name].param(key).default_for(LANGS[0]))


def _idle_sleep_ns(workload_name: str, params: dict[str, str]) -> int | None:
    """How long each idle task sleeps (wait=sleep), the same for every task; None for other work."""
    if workload_name == "idle_tasks" and _param_value(workload_name, params, "wait") == "sleep":
        return int(_param_value(workload_name, params, "duration_ms")) * 1_000_000
    return None


def least_elapsed_ns(workload_name: str, n: int, params: dict[str, str]) -> int | None:
    """The least workload time the waits of a work allow: every task is timed from before the first
    spawn to after the last result, and each wait lasts at least what it asks for (Go's time.Sleep,
    tokio's sleep, std::thread::sleep), so a sample below it did not wait as the work says, whatever
    its checksum (which counts the waits asked for, not the waits done).  None for work without
    waits, or whose waits the timer does not span."""
    if n < 1 or workload_name not in WORKLOADS:
        return None
    if workload_name == "sleep":
        return _longest_sleep_ms(n) * 1_000_000
    if workload_name == "threads_vs_tasks":
        iterations = int(_param_value(workload_name, params, "iterations"))
        return _longest_first_sleep_us(n) * 1_000 + iterations * TVT_TICK_MS * 1_000_000
    return _idle_sleep_ns(workload_name, params)
