"""Named profiles: the default grid (workloads, N values, parameters, sample counts) of a run.

Anything a profile sets can be overridden by the notebook's parameters.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    ns: dict[str, list[int]]
    samples: int
    warmup: int
    timeout_s: float = 300.0
    params: dict[str, dict[str, list]] = field(default_factory=dict)
    variants: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    @property
    def workloads(self) -> list[str]:
        return list(self.ns)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "quick",
            "Small N of every workload, default variants: a smoke run in a few minutes on 2 cores.",
            ns={"sleep": [10, 100, 1000, 10000], "cpu_loops": [1000, 3000]},
            samples=10,
            warmup=1,
            timeout_s=120,
        ),
        Profile(
            "article",
            "The 2022 article's grid with enough samples for intervals (at least 20 per cell).",
            ns={"sleep": [10, 100, 1000, 10000, 100000, 1000000], "cpu_loops": [10000]},
            samples=20,
            warmup=2,
            timeout_s=900,
            variants={"sleep": {"go": ["waitgroup", "chan-per-task", "chan-shared"],
                                "rust": ["join-handles", "join-all"]}},
        ),
        Profile(
            "kernel-article",
            "Sleep with the 2022 dead float loop at growing work: Rust's time stays flat, Go's grows.",
            ns={"sleep": [1000]},
            samples=10,
            warmup=1,
            timeout_s=300,
            params={"sleep": {"kernel": ["article", "xorshift"], "work": [0, 50000, 500000, 5000000]}},
        ),
    )
}


def profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; allowed: {', '.join(PROFILES)}") from None
