"""Named profiles: the default grid (workloads, N values, parameters, sample counts) of a run.

Anything a profile sets can be overridden by the notebook's parameters.
"""
from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from .parameters import REQUIRED, profile_parameters


class Profile:
    """A named grid: its name, a description, and values of the plan parameters a profile may set
    (those marked `profile` in bench_src/parameters.py; any other name is refused).  A parameter
    the profile leaves out has its `profile_default`.  `workload_cores`: per workload, the core
    counts its cells run at when the plan's `cores` is not given (plan/validate.py; counts above
    the machine's usable CPUs are left out there).  `sequential_share`: what the sequential rule's
    extra blocks take, as a share of the pilot's sampling time, measured in runs of the profile or
    projected from a measured pilot of its cells (sequential.expected_samples): one share, or
    (speed factor, share) points where the share measured follows the machine's speed factor (what
    the run's warm-ups took of their default times, plan/estimate.speed_factor), read by
    `sequential_share_at`; the duration estimate adds it before a run has a pilot of its own (an
    estimate's prior, never a setting of the plan).  `sequential_share_measured`: the lowest and the highest share measured
    in runs of the profile, on every machine it ran on; the estimate states the durations they
    would give beside its own."""

    def __init__(self, name: str, description: str, workload_cores: dict[str, list[int]] | None = None,
                 sequential_share: float | tuple[tuple[float, float], ...] = 0.0,
                 sequential_share_measured: tuple[float, float] | None = None,
                 **settings: Any):
        known = {p.name: p for p in profile_parameters()}
        unknown = sorted(set(settings) - set(known))
        if unknown:
            raise ValueError(f"profile {name!r}: unknown setting{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(repr, unknown))}; allowed: {', '.join(known)}")
        missing = [n for n, p in known.items() if p.profile_default is REQUIRED and n not in settings]
        if missing:
            raise ValueError(f"profile {name!r} must set {', '.join(missing)}")
        self.name = name
        self.description = description
        self.given = settings
        self.workload_cores = dict(workload_cores or {})
        if isinstance(sequential_share, (int, float)):
            points = ((1.0, float(sequential_share)),)
        else:
            points = tuple(sorted((float(f), float(v)) for f, v in sequential_share))
            if not points or any(f <= 0 for f, _ in points) or len({f for f, _ in points}) < len(points):
                raise ValueError(f"profile {name!r}: sequential_share {sequential_share!r} must be a share or "
                                 "(speed factor, share) points with distinct positive factors")
        if any(v < 0 for _, v in points):
            raise ValueError(f"profile {name!r}: sequential_share {sequential_share!r} must not be negative")
        self.sequential_share_points = points
        if sequential_share_measured is not None:
            low, high = map(float, sequential_share_measured)
            if not all(0 <= low <= v <= high for _, v in points):
                raise ValueError(f"profile {name!r}: sequential_share_measured {sequential_share_measured!r} must "
                                 f"hold sequential_share {sequential_share!r}")
            sequential_share_measured = (low, high)
        self.sequential_share_measured = sequential_share_measured
        outside = sorted(set(self.workload_cores) - set(settings.get("ns", {})))
        if outside:
            raise ValueError(f"profile {name!r}: workload_cores names {', '.join(outside)}, which it does not run")

    @property
    def share_follows_speed(self) -> bool:
        """The prior of the extra blocks' share is read at the machine's speed factor."""
        return len(self.sequential_share_points) > 1

    def sequential_share_at(self, factor: float | None) -> float:
        """The extra blocks' share of the pilot at a machine whose warm-ups took `factor` of their
        default times: linear between the profile's points, the nearest point's share beyond them
        (nothing measured there says more).  Without a factor (no warm-up timed the machine) the
        default times stand as they are, at factor 1, the machine they were fitted on."""
        factors, shares = zip(*self.sequential_share_points)
        x = 1.0 if factor is None or not math.isfinite(factor) else float(factor)
        return float(np.interp(x, factors, shares))

    @property
    def settings(self) -> dict[str, Any]:
        """Every parameter a profile may set, with this profile's value or the default."""
        return {p.name: getattr(self, p.name) for p in profile_parameters()}

    def __getattr__(self, key: str) -> Any:
        given = self.__dict__.get("given", {})
        if key in given:
            return given[key]
        for p in profile_parameters():
            if p.name == key:
                return copy.deepcopy(p.profile_default)
        raise AttributeError(f"a profile sets no parameter {key!r}")

    def __repr__(self) -> str:
        return f"Profile({self.name!r}, {self.settings!r})"

    @property
    def workloads(self) -> list[str]:
        return list(self.ns)


# What the sequential rule's extra blocks take, as a share of the pilot's sampling time (the start
# estimate's prior, a Profile's sequential_share), the pilot timed by the default per-workload times
# scaled to the machine by the run's warm-ups (plan/estimate.speed_factor).  The share measured
# follows the machine's speed factor, because slower machines run slower database samples with
# noisier pairs, and the database comparisons take most of the extra blocks:
# - 0.46 up to a factor of 0.82: the mean of the twenty-one runs at factors 0.76-0.83, fifteen on a
#   2-core EPYC with AVX-512 (runs A-K, Q-S and U, shares 0.34-0.70; the mean of A-I, 0.50, was this
#   point until run BB) and six on a 2-core Intel Xeon with AVX-512 (runs AW-BB, shares 0.25-0.74);
# - 1.00 at 0.91: the mean of the ten runs at factors 0.86-0.97, seven on an EPYC without AVX-512
#   (AN, AO, AQ to AU, shares 0.59-1.37; AN's and AO's mean, 0.83 at 0.89, was this point until
#   run BK) and three on an EPYC with AVX-512, family 25 (BI, BJ, BK, shares 0.83-1.11);
# - 1.27 from 0.99 on: the mean of the thirteen grouped-order runs at factors 0.98-1.14 on an Intel
#   Xeon (Y, Z) and an EPYC without AVX-512 (AA, AC to AL; shares 0.99-1.66);
# linear between (Profile.sequential_share_at).  The runs that set a point are no test of it; what
# the estimates of the runs made since came to, and why the points stand, is in docs/statistics.md
# ("Duration"), run by run in docs/article-runs.md.  Within a
# machine the share moves with the run's noise by up to 1.10 (one EPYC's runs BI to BX there), which
# no measurement made before the pilot was found to predict, nor the estimate made after the pilot's
# look from the run's own pilot.
# article-full: projected by sequential.expected_samples from a measured pilot of its cells on the
# machine the defaults were fitted on, with their seconds per sample, under an earlier rule
ARTICLE_SEQUENTIAL_SHARE = ((0.82, 0.46), (0.91, 1.00), (0.99, 1.27))
# The lowest and highest share the article profile's extra blocks took on the 2-core machines it ran
# on: 0.140 on an Intel Xeon with AVX-512 (docs/article-runs.md, run BG, 2026-12-04: 0.141, rounded
# down so that the lower end printed holds its duration; AW to BF there 0.237 to 0.74, the AVX-512
# EPYC 0.34 to 0.70 in runs A-I), 2.09 on an AMD EPYC without AVX-512 (run DD, 2026-12-07: 2.085,
# rounded up so that the upper end printed holds its duration; run DC there 1.983 an hour before it,
# its database samples 76% of the extra blocks; 1.96 before them, run V on the Intel Xeon of runs V
# to Z, 2026-11-30).  The start estimate states what the two would give: where a run falls is not
# known before its pilot.
ARTICLE_SEQUENTIAL_SHARE_MEASURED = (0.140, 2.09)
ARTICLE_FULL_SEQUENTIAL_SHARE = 1.10

# The article profile's grid, shared by "article" (one hour on 2 cores) and "article-full".
ARTICLE: dict[str, Any] = dict(
    # MySQL stops at 1,000 (the article went to 100,000): at 10,000 the two languages' times differ
    # by less than the noise between blocks (the standard deviation of the per-block log ratio
    # 0.13-0.17 on 2 cores), so showing a 5% difference would take some 200-300 pairs at 8 s a
    # sample, more than the hour for those cells alone; article-full measures it.  At 100,000,
    # one block of its cells costs about 5 minutes
    ns={"sleep": [10, 100, 1000, 10000, 100000, 1000000], "cpu_loops": [10000],
        "files_read": [10, 100, 1000, 10000, 100000, 1000000],
        "files_rw": [10, 100, 1000, 10000, 100000],
        "sqlite": [10, 100, 1000], "mysql": [10, 100, 1000],
        "postgres": [10, 100, 1000, 10000],
        "idle_tasks": [1, 10000, 100000, 1000000], "threads_vs_tasks": [10000], "ping_pong": [1000000]},
    samples=6,
    warmup=1,
    # a block of the cells takes about 4 min on 2 cores (article-full's, 8 min): warming every cell
    # would cost a block; a sample is a fresh process, so one warm-up per program at its smallest N
    # warms what outlives a process
    warmup_scope="program",
    timeout_s=600,
    # sleep: timers and scheduling alone (work=0) beside the default compute kernel; the preset adds
    # the article's dead loop. idle_tasks: released after the last spawn (every task alive by
    # construction) and, as in the posts, sleeping, 3 s: spawning 1M goroutines takes about 3 s on 2
    # cores and 8 s on 1 while the first ones sleep (with 3 s, 977,856 of 1M were alive at once on 2
    # cores; with 5 s, 983,693, and 868,620 on 1 core), so at 1M the sleeping variant measures most but
    # not all tasks alive, and samples where not all were alive are left out of bytes per task.
    # threads vs tasks: 50 iterations of 10 ms (the specification's default is 100): 10,000 OS threads
    # on one core took 14-15 s at 100
    params={"sleep": {"work": [0, 50000]},
            "idle_tasks": {"wait": ["release", "sleep"], "duration_ms": [3000]},
            "threads_vs_tasks": {"iterations": [50]},
            "ping_pong": {"buffer": {"go": [0, 1, 4096], "rust": [1, 4096]},
                          "mode": ["lockstep", "pipelined"]}},
    # the compute kernel (50,000 xorshift steps a task) up to N = 100,000: at 1,000,000 it is 5e10
    # steps, 54-109 s a sample at 2 and 1 cores, a compute benchmark that cpu_loops already makes;
    # sleep at 1,000,000 keeps work=0 and the article's kernel.  Sleeping idle tasks from N = 10,000
    # (N = 1, the baseline, is the released variant's)
    n_range={"sleep": {"kernel=xorshift,work=50000": [None, 100000]},
             "idle_tasks": {"wait=sleep": [10000, None]}},
    variants={"cpu_loops": "all",
              "idle_tasks": {"go": ["goroutine"], "rust": ["spawn", "current-thread", "join-all"]},
              "threads_vs_tasks": "all", "ping_pong": "all"},
    article_preset=True,
    # the sequential rule: looks at 6, 9, 14, 21, 32, 49, 74, 112, 171, 260, 395 and 600 pairs (half
    # of alpha at the pilot, which decides most comparisons).  The open ones go on, cheapest
    # narrowing first: the budget of 600 samples is for the cells of milliseconds (idle tasks at
    # N = 1, the databases at N = 10 and 100), whose noise needs hundreds of pairs to show a
    # difference of 5% or exclude one, and cost little; a long cell rarely needs it.  (The plan's
    # size check allows at most 100,000 samples: 600 for each of the 164 cells).  Past 600, five late
    # looks (912 to 4,867 pairs) for the cells whose blocks to the next one cost at most a minute
    # (plan/design.py): the comparison of one idle task released, Rust's current-thread runtime
    # against Go's goroutine, stayed open at 600 pairs in runs S, BC and BG and needs about 3,500
    # (docs/statistics.md, "Per-cell budgets from cost", gives why and what the late looks cost)
    max_samples=600,
    looks=12,
    late_looks=5,
    # 1 h for the whole run, the pilot included (the pilot always runs whole)
    time_budget_s=3600,
)

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "quick",
            "Small N of every workload, default variants (threads vs tasks: all of its models): a smoke run in a few minutes on 2 cores. Sleep "
            "runs with and without its compute kernel (work=0: timers and scheduling only); idle tasks "
            "wait for a release, so all N are alive at once, and N=1 gives each program's baseline memory; "
            "threads vs tasks shows OS threads beside goroutines and tokio tasks.",
            ns={"sleep": [10, 100, 1000, 10000], "cpu_loops": [1000, 3000],
                "files_read": [10, 1000], "files_rw": [10, 1000], "sqlite": [10, 100],
                "mysql": [10, 100], "postgres": [10, 100],
                "idle_tasks": [1, 1000, 10000], "threads_vs_tasks": [1000], "ping_pong": [100000]},
            samples=10,
            warmup=1,
            timeout_s=120,
            params={"sleep": {"work": [0, 50000]}, "idle_tasks": {"wait": ["release"]},
                    "threads_vs_tasks": {"iterations": [10]}},
            variants={"threads_vs_tasks": "all"},
        ),
        Profile(
            "article",
            "The 2022 article's grid and the related posts' experiments, to a verdict within an hour on 2 "
            "cores: each language's defaults beside the article's own settings (its dead sleep loop, its "
            "SQLite journal and pools, 151 MySQL connections, retained file contents); sleep with and "
            "without the compute kernel (up to N = 100,000); MySQL up to N = 1,000; every workload with the "
            "machine's usable CPUs; one warm-up per program at its smallest N, a 6-block pilot that decides "
            "most comparisons, then the sequential rule up to 600 samples per cell (up to 4,867 for cells "
            "whose blocks cost little), cheapest narrowing first, within a 1-hour budget.  article-full adds the task workloads at 1 and 2 cores and "
            "MySQL at 10,000.",
            sequential_share=ARTICLE_SEQUENTIAL_SHARE,
            sequential_share_measured=ARTICLE_SEQUENTIAL_SHARE_MEASURED,
            **ARTICLE,
        ),
        Profile(
            "article-full",
            "The article profile with the task workloads (sleep, idle tasks, threads vs tasks, ping-pong) "
            "pinned to 1 and to 2 cores in the same blocks (does a claim hold with one core as with two?) "
            "and MySQL at N = 10,000 as well, up to 400 samples per cell within a 3-hour budget.",
            # the file and database workloads run unpinned with the usable CPUs' threads
            workload_cores={w: [1, 2] for w in ("sleep", "idle_tasks", "threads_vs_tasks", "ping_pong")},
            sequential_share=ARTICLE_FULL_SEQUENTIAL_SHARE,
            **{**ARTICLE, "ns": {**ARTICLE["ns"], "mysql": [10, 100, 1000, 10000]}, "time_budget_s": 3 * 3600,
               # its 248 cells: 400 samples each within the plan's size check, in 11 looks
               "max_samples": 400, "looks": 11},
        ),
        Profile(
            "memory",
            "The related posts' experiments at moderate size, idle tasks with a 10 ms RSS timeline and a "
            "3 s linger after the tasks end.",
            ns={"idle_tasks": [1000, 10000, 100000, 1000000], "threads_vs_tasks": [10000], "ping_pong": [1000000]},
            # 10, like quick: the decision rule decides from 6 pairs (rules.MIN_PAIRS); 10 leave room for
            # failed samples and narrow the intervals of the per-task memory
            samples=10,
            warmup=1,
            timeout_s=600,
            # 10 s (as in the posts) keeps all N tasks alive at once even when spawning 1M takes seconds
            params={"idle_tasks": {"duration_ms": [10000], "linger_ms": [3000]},
                    "threads_vs_tasks": {"iterations": [20]},
                    "ping_pong": {"buffer": {"go": [0, 1, 4096], "rust": [1, 4096]},
                                  "mode": ["lockstep", "pipelined"]}},
            variants={"idle_tasks": "all", "threads_vs_tasks": "all", "ping_pong": "all"},
            timeline_ms=10,
        ),
        Profile(
            "kernel-article",
            "Sleep with the 2022 dead float loop at growing work: Rust's time stays flat, Go's grows.",
            ns={"sleep": [1000]},
            samples=10,
            warmup=1,
            timeout_s=300,
            params={"sleep": {"kernel": ["article"], "work": [0, 50000, 500000, 5000000]}},
        ),
    )
}


def profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; allowed: {', '.join(PROFILES)}") from None
