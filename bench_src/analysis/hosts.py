"""Results of several hosts in one analysis.

A **host** is a machine fingerprint, not a name (`fingerprint`): CPU model, logical CPUs, caches,
memory, kernel, toolchains and the programs' sha256.  Two results directories taken on machines
with the same fingerprint are blocks of one host, not two independent machines.  Pairs form only
within a block, so only within a host.

Per comparison (`combine`), the per-host log ratios (the mean of the per-block log ratios d, and
its variance var(d) / n) are combined as a random-effects model: the hosts' true log ratios vary
around a common mean with variance tau^2.  The combined log ratio is the mean of the hosts'
estimates and its interval Student's t on their spread with k - 1 degrees of freedom: each host's
estimate is one draw from the population of hosts, its own noise included, so the interval is
exact for normal host estimates of equal precision whatever tau is.  Assumption: the hosts are a
sample of the machines the claim is about.  tau^2 (Paule and Mandel's estimate) and I^2 (the share
of the spread between hosts that is not sampling noise) come from statsmodels' combine_effects.
Measured in `tests/test_simulations.py` (2, 3 and 5 hosts, with and without heterogeneity, hosts
of equal and unequal precision): this interval covers 94.4-96.2%; the inverse-variance weighted
Hartung-Knapp interval 92.6-95.3% (noisy per-host variances from 10 pairs make the weights
noisy), the plain z interval 53-88%.  With 2 hosts the interval is wide by construction (t on one
degree of freedom): two machines say little about a third.
"""
from __future__ import annotations

import hashlib
import json
import math
import warnings
from dataclasses import dataclass
from typing import Mapping

import numpy as np
from scipy import stats as sps
from statsmodels.stats.meta_analysis import combine_effects

# What makes two machines the same host: the hardware, the system, and the code that ran.
FINGERPRINT_MACHINE = ("cpu_model", "logical_cpus", "usable_cpus", "caches", "ram_bytes", "kernel", "arch")
FINGERPRINT_TOOLCHAINS = ("go", "rustc", "cargo", "tokio")


def fingerprint(session: Mapping) -> dict:
    """The fingerprint of the machine a session ran on (from meta.json's session entry)."""
    machine = session.get("machine", {}) or {}
    tools = session.get("toolchains", {}) or {}
    return {"machine": {k: machine.get(k) for k in FINGERPRINT_MACHINE if machine.get(k) is not None},
            "toolchains": {k: tools.get(k) for k in FINGERPRINT_TOOLCHAINS if tools.get(k) is not None},
            "binaries": dict(sorted((session.get("binaries") or {}).items()))}


def host_id(print_: Mapping) -> str:
    """A short stable name of a fingerprint (its digest)."""
    return hashlib.sha256(json.dumps(print_, sort_keys=True).encode()).hexdigest()[:10]


def host_label(print_: Mapping) -> str:
    """A readable name: CPU model, CPUs and the digest."""
    m = print_.get("machine", {})
    cpus = m.get("usable_cpus") or m.get("logical_cpus")
    return f"{m.get('cpu_model', 'unknown CPU')}, {cpus} CPUs [{host_id(print_)}]"


@dataclass(frozen=True)
class Combined:
    """A random-effects combination of per-host log ratios (log units)."""

    hosts: int
    estimate: float
    low: float
    high: float
    p_value: float
    tau2: float  # between-host variance of the true log ratios
    i2: float  # share of the between-host spread that is not sampling noise (0..1)

    @property
    def tau(self) -> float:
        return math.sqrt(self.tau2) if self.tau2 >= 0 else math.nan


def combine(effects, variances, level: float = 0.05) -> Combined:
    """The common log ratio of per-host estimates (their mean) with its 1 - level Student's t
    interval on k - 1 degrees of freedom and the dual p-value; tau^2 (Paule-Mandel) and I^2 from
    the per-host variances.  One host: its own estimate, no interval."""
    eff = np.asarray(effects, dtype=float)
    var = np.asarray(variances, dtype=float)
    ok = np.isfinite(eff) & np.isfinite(var)
    eff, var = eff[ok], np.maximum(var[ok], 1e-300)
    k = eff.size
    if k == 0:
        return Combined(0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    est = float(eff.mean())
    if k == 1:
        return Combined(1, est, math.nan, math.nan, math.nan, math.nan, math.nan)
    se = float(eff.std(ddof=1) / math.sqrt(k))
    crit = float(sps.t.isf(level / 2, k - 1))
    p = float(2 * sps.t.sf(abs(est) / se, k - 1)) if se > 0 else (0.0 if est else 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = combine_effects(eff, var, method_re="iterated")
    i2 = float(r.i2) if np.isfinite(r.i2) else 0.0
    return Combined(k, est, est - crit * se, est + crit * se, p, float(max(r.tau2, 0.0)), min(1.0, max(0.0, i2)))
