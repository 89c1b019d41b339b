"""Several results directories, one frame: the samples of each machine tagged with its host.

A **host** is a machine fingerprint, not a name (`fingerprint`): CPU model, logical and usable
CPUs, caches, memory, kernel, architecture, toolchain versions and the programs' sha256, read
from the session entries of meta.json.  Two directories taken on machines with the same
fingerprint are blocks of one host (repeat runs on one machine are not independent machines);
a directory whose sessions ran on different machines (a results directory carried to another
machine and resumed there) gives each session's samples its own host.

`load_hosts` refuses what cannot be analysed together: directories of different plans (their
plan digests differ) and directories whose programs were built from different source code (the
git commits of the sessions differ, or the sha256 of a program's source tree, which sessions
record: two `-dirty` trees of one commit, a copy without git), each error naming both directories
and the difference, unless the difference is named as a factor (`factor="plan"` or `factor="commit"`): then each
sample carries it in a column of that name (the plan digest, the commit), and the analysis keeps
its values apart (analysis/hosts.py).
Pairs stay within a block: each sample's `run_id` becomes its directory, and the analysis pairs on
(run_id, block), so no pair spans two runs, let alone two hosts.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Iterable, Mapping

import pandas as pd

from .directory import refuse_in_use
from .equivalence import mark_valid
from ..parameters import MACHINE_DEFAULTS
from ..plan.model import plan_from_dict
from .results import ResultsStore

# What makes two machines the same host: the hardware, the system, and the code that ran.
FINGERPRINT_MACHINE = ("cpu_model", "logical_cpus", "usable_cpus", "caches", "ram_bytes", "kernel", "arch")
FINGERPRINT_TOOLCHAINS = ("go", "rustc", "cargo", "tokio")
# Differences between directories that may be named as a factor, and each directory's value of it.
FACTORS = {"plan": lambda meta: str(meta.get("plan_digest")),
           "commit": lambda meta: ",".join(sorted(source_commit(meta))) or "unknown"}


def fingerprint(session: Mapping) -> dict:
    """The fingerprint of the machine a session ran on (from meta.json's session entry, or a
    cluster host's description): with `cpu_set` when the host is a share of a machine (a local
    cluster's host pinned to its own CPUs), so that two such hosts stay apart."""
    machine = session.get("machine", {}) or {}
    tools = session.get("toolchains", {}) or {}
    out = {"machine": {k: machine.get(k) for k in FINGERPRINT_MACHINE if machine.get(k) is not None},
           "toolchains": {k: tools.get(k) for k in FINGERPRINT_TOOLCHAINS if tools.get(k) is not None},
           "binaries": dict(sorted((session.get("binaries") or {}).items()))}
    if session.get("cpu_set"):
        out["cpu_set"] = session["cpu_set"]
    return out


def machine_id(print_: Mapping) -> str:
    """The machine behind a host: the fingerprint without the CPU share and the CPUs it may use
    (hosts of one local cluster, runs pinned to CPUs of their own and a run on the whole machine
    are one machine)."""
    machine = {k: v for k, v in (print_.get("machine") or {}).items() if k != "usable_cpus"}
    return host_id({**{k: v for k, v in print_.items() if k != "cpu_set"}, "machine": machine})


def host_id(print_: Mapping) -> str:
    """A short stable name of a fingerprint (its digest)."""
    return hashlib.sha256(json.dumps(print_, sort_keys=True).encode()).hexdigest()[:10]


def host_label(print_: Mapping) -> str:
    """A readable name: CPU model, CPUs and the digest."""
    m = print_.get("machine", {})
    cpus = m.get("usable_cpus") or m.get("logical_cpus")
    share = f" (CPU {print_['cpu_set']})" if print_.get("cpu_set") else ""
    return f"{m.get('cpu_model', 'unknown CPU')}, {cpus} CPUs{share} [{host_id(print_)}]"


def plan_difference(a: Mapping | None, b: Mapping | None) -> str:
    """What differs between two stored plans, for an error: the keys and both values (at most
    five), and where only parameters that default to the machine differ, how to give them."""
    a, b = a or {}, b or {}
    keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    if not keys:
        return "their plan entries are equal"
    shown = "; ".join(f"{k}: {json.dumps(a.get(k))[:60]} vs {json.dumps(b.get(k))[:60]}" for k in keys[:5])
    text = f"they differ in {shown}" + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    if set(keys) <= set(MACHINE_DEFAULTS):
        sets = " and ".join(f"{k} to {MACHINE_DEFAULTS[k][0]}" for k in keys)
        how = "; ".join(f"--{k.replace('_', '-')} {v}, make run {k.upper()}={v}"
                        for k, v in ((k, MACHINE_DEFAULTS[k][1]) for k in keys))
        text += f"; unless given, each machine sets {sets}: give the same on every machine ({how})"
    return text


def source_commit(meta: Mapping) -> set[str]:
    """The git commits of the source the sessions' programs were built from (empty when unknown)."""
    return {s.get("machine", {}).get("git_commit") for s in meta.get("sessions", [])
            if s.get("machine", {}).get("git_commit")}


def program_sources(meta: Mapping) -> dict[str, set[str]]:
    """Per program, the sha256 of the source trees the sessions' programs were built from (sessions
    before this was recorded have none)."""
    out: dict[str, set[str]] = {}
    for s in meta.get("sessions", []):
        for name, digest in (s.get("sources") or {}).items():
            out.setdefault(name, set()).add(digest)
    return out


def _other_sources(a: Mapping, b: Mapping) -> list[str]:
    """The programs whose source differs between two directories' sessions (where both recorded it)."""
    sa, sb = program_sources(a), program_sources(b)
    return sorted(name for name in set(sa) & set(sb) if sa[name] != sb[name])


def run_origin(meta: dict) -> tuple | None:
    """What makes a run one run, whatever its directory is called: when it was created, and the
    process and machine of its first session.  A copy of a results directory keeps all three; two
    runs never share them, not even two machines' runs of one plan in directories of one name
    (`make run` names them after the profile, the commit and the plan)."""
    sessions = meta.get("sessions") or [{}]
    first = sessions[0] if isinstance(sessions[0], dict) else {}
    if not meta.get("created_at"):
        return None
    return (meta["created_at"], first.get("pid"), (first.get("machine") or {}).get("hostname"))


def load_hosts(results_dirs: Iterable[str | os.PathLike], factor: str | None = None) -> pd.DataFrame:
    """The tidy frame of several results directories of one plan, with `host` (the fingerprint's
    digest), `host_label` and `results_dir` columns, and `valid`.  `df.attrs["hosts"]` maps each
    host to its label, fingerprint and directories; `df.attrs["meta"]` is the first directory's
    meta.json and `df.attrs["plan"]` its Plan (the plan they share).  Refused (ValueError, naming the directories): fewer than one
    directory, a directory given twice (by its path, or as a copy: the same `run_origin`), different plans,
    programs built from different source; and (a LockedError) a directory a run still writes
    (`directory.refuse_in_use`, as `report` refuses it); the
    difference named by `factor` ("plan" or "commit") is accepted and becomes a column."""
    if factor is not None and factor not in FACTORS:
        raise ValueError(f"factor={factor!r}: allowed: {', '.join(FACTORS)} (or None)")
    dirs = [os.fspath(d) for d in results_dirs]
    if not dirs:
        raise ValueError("load_hosts needs at least one results directory")
    if len({os.path.realpath(d) for d in dirs}) < len(dirs):
        raise ValueError(f"a results directory is given twice: {dirs}")
    frames, hosts, first, runs = [], {}, None, {}
    for d in dirs:
        refuse_in_use(d)  # a run still writes it: its analysis now would be of part of the run
        store = ResultsStore(d)
        meta = store.read_meta(reading=True)
        origin = run_origin(meta)
        if origin is not None and origin in runs:  # a copy of a directory: its samples would count twice
            raise ValueError(f"{d} holds the same run as {runs[origin]} (created {origin[0]} by process {origin[1]} "
                             f"on {origin[2]}): a copy of one results directory, whose samples would count twice; "
                             "give each run's directory once")
        runs[origin] = d
        if first is None:
            first = (d, meta)
        else:
            d0, meta0 = first
            if meta.get("plan_digest") != meta0.get("plan_digest") and factor != "plan":
                raise ValueError(f"{d} holds another plan than {d0} (plan digest {meta.get('plan_digest')} vs "
                                 f"{meta0.get('plan_digest')}; {plan_difference(meta0.get('plan'), meta.get('plan'))}"
                                 "): only runs of the same plan combine; run the same plan on every machine, or name "
                                 "the difference as a factor (factor=\"plan\")")
            a, b = source_commit(meta0), source_commit(meta)
            if a and b and a != b and factor != "commit":
                raise ValueError(f"{d} was built from other source code than {d0} (git commit "
                                 f"{', '.join(sorted(b))} vs {', '.join(sorted(a))}): the programs differ, so their "
                                 "samples do not measure the same work; run the same commit on every machine, or "
                                 "name it as a factor (factor=\"commit\")")
            other = _other_sources(meta0, meta)
            if other and factor != "commit":
                raise ValueError(f"{d} was built from other source code than {d0} (the source of "
                                 f"{', '.join(other)} differs, under git commit {', '.join(sorted(b)) or 'unknown'} "
                                 f"and {', '.join(sorted(a)) or 'unknown'}): the programs differ, so their samples do "
                                 "not measure the same work; run the same source on every machine, or name it as a "
                                 "factor (factor=\"commit\")")
        df = store.load()
        by_session = {}
        for s in meta.get("sessions", []):
            # a cluster session's samples carry their host; its hosts' fingerprints are in "hosts"
            prints = [h["fingerprint"] for h in (s.get("hosts") or {}).values()] or [fingerprint(s)]
            for fp in prints:
                hid = host_id(fp)
                by_session.setdefault(s.get("session"), hid)
                entry = hosts.setdefault(hid, {"label": host_label(fp), "fingerprint": fp, "machine": machine_id(fp),
                                               "results_dirs": []})
                if d not in entry["results_dirs"]:
                    entry["results_dirs"].append(d)
        if df.empty:
            continue
        fallback = next(iter(by_session.values()), "unknown")
        session = df["session"] if "session" in df.columns else pd.Series([None] * len(df), index=df.index)
        own = df["host"] if "host" in df.columns else pd.Series([None] * len(df), index=df.index)
        # run_id becomes the directory: two runs named alike on two machines must not share blocks
        df = df.assign(host=[h if isinstance(h, str) and h else by_session.get(s, fallback)
                             for h, s in zip(own, session)], results_dir=d, run_id=d,
                       **({factor: FACTORS[factor](meta)} if factor else {}))
        for hid in sorted(set(df["host"]) - set(hosts)):  # a host that joined a cluster run and was not described
            hosts[hid] = {"label": f"a host not described in meta.json [{hid}]", "fingerprint": {}, "machine": hid,
                          "results_dirs": [d]}
        frames.append(df)
    out = mark_valid(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame()
    if not out.empty:
        out["host_label"] = out["host"].map({h: e["label"] for h, e in hosts.items()})
    out.attrs["hosts"] = hosts
    out.attrs["factor"] = factor
    out.attrs["meta"] = first[1]
    out.attrs["plan"] = plan_from_dict(first[1]["plan"])
    return out
