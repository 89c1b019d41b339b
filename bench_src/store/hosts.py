"""Several results directories, one frame: the samples of each machine tagged with its host.

A **host** is a machine fingerprint (`fingerprint`): what tells the machine from others (its
hostname and a digest of its machine ID, `IDENTITY`), CPU model, logical and usable CPUs, caches,
memory, kernel, architecture, toolchain versions and the programs' sha256, read from the session
entries of meta.json.  Two directories taken on one machine are blocks of one host (repeat runs on
one machine are not independent machines); two machines of the same hardware are two hosts; a
directory whose sessions ran on different machines (a results directory carried to another
machine and resumed there) gives each session's samples its own host.  A host recorded without
the machine's identity (by an older harness, which left it out, or on a machine without a
readable machine ID) is the host of the same hardware and hostname recorded with it (`same_hosts`),
and is refused when several such hosts differ in their machine ID.

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
from .meta import plan_difference
from ..plan.model import plan_from_dict
from .results import ResultsStore

# What tells a machine from another of the same hardware: its hostname (containers of one machine
# ID differ in it) and the digest of its machine ID (machines named alike differ in it).
IDENTITY = ("hostname", "machine_id_digest")
# What makes two machines the same host: the machine itself, the hardware, the system, and the code that ran.
FINGERPRINT_MACHINE = (*IDENTITY, "cpu_model", "logical_cpus", "usable_cpus", "caches", "ram_bytes", "kernel", "arch")
FINGERPRINT_TOOLCHAINS = ("go", "rustc", "cargo", "tokio")
# Differences between directories that may be named as a factor, and each directory's value of it.
FACTORS = {"plan": lambda meta: str(meta.get("plan_digest")),
           "commit": lambda meta: ",".join(sorted(source_commit(meta))) or "unknown"}


def factor_words(name: str) -> str:
    """How a factor is named, in each place one can be: the `hosts` command's option, analysis.ipynb's
    parameter and a call's keyword (an error naming only one read as wrong syntax in the others)."""
    return f"--factor {name} on the command line, -p factor {name} in analysis.ipynb, factor=\"{name}\" in a call"


def fingerprint(session: Mapping) -> dict:
    """The fingerprint of the machine a session ran on (from meta.json's session entry, or a
    cluster host's description): with the machine's `IDENTITY`, so that two machines of the same
    hardware stay apart, and with `cpu_set` when the host is a share of a machine (a local
    cluster's host pinned to its own CPUs), so that two such hosts stay apart too.  On one machine
    a run pinned with taskset, a local cluster's host and a pinned worker on the same CPUs have
    the same fingerprint."""
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


def with_hostname(print_: Mapping, hostname: str | None) -> dict:
    """A fingerprint recorded before fingerprints held the hostname (a cluster host's, stored in
    meta.json), given the hostname its description recorded: as it would be recorded now, but
    for the machine ID's digest, which was not recorded."""
    machine = dict(print_.get("machine") or {})
    if "hostname" in machine or hostname is None:
        return dict(print_)
    return {**print_, "machine": {"hostname": hostname, **machine}}


def same_hosts(recorded: Mapping[str, Mapping[str, tuple[Mapping, str | None]]]
               ) -> tuple[dict[tuple[str, str], str], dict[str, Mapping], list[tuple[list[str], list[str]]]]:
    """Which recorded hosts are one host.  `recorded`: per directory, each host id its samples
    carry (a cluster host's, as meta.json stored it; an in-process session's, its fingerprint's)
    with that fingerprint and the hostname its session or description recorded.  Hosts of the same
    hardware and hostname are one machine's: one whose fingerprint holds no digest of the machine ID
    (an older harness left it out, or the machine has none: `identified_machine`) is the host of
    the one such fingerprint that holds it; with none, such hosts are one host, under the id they
    recorded (or, where an older harness recorded one id for two machines that their hostnames
    tell apart, the id of the fingerprint with its hostname: `with_hostname`).  Returns ({(directory,
    recorded id): the id of its host}, {id: its fingerprint}, [([directories], [ids]) of hosts
    without the digest that could be any of several with it])."""
    def hardware(print_: Mapping) -> str:
        machine = {k: v for k, v in (print_.get("machine") or {}).items() if k not in IDENTITY}
        return json.dumps({**print_, "machine": machine}, sort_keys=True)

    groups: dict[tuple, list[tuple[str, str]]] = {}
    for d, hosts in recorded.items():
        for rid, (print_, hostname) in hosts.items():
            groups.setdefault((hardware(print_), hostname), []).append((d, rid))
    keys_of: dict[str, set] = {}  # a recorded id's groups: more than one when it stood for two machines
    for key, members in groups.items():
        for _, rid in members:
            keys_of.setdefault(rid, set()).add(key)
    same, prints, ambiguous = {}, {}, []
    for key, members in groups.items():
        identified = sorted({rid for d, rid in members if identified_machine(recorded[d][rid][0])})
        bare = [(d, rid) for d, rid in members if rid not in identified]
        for d, rid in members:
            if rid in identified:
                same[(d, rid)], prints[rid] = rid, recorded[d][rid][0]
        if len(identified) > 1 and bare:
            ambiguous.append((sorted({d for d, _ in bare}), identified))
            continue
        own = {}  # each bare host's id: the recorded one, unless it stood for two machines
        for d, rid in bare:
            print_ = recorded[d][rid][0]
            if len(keys_of[rid]) > 1:
                print_ = with_hostname(print_, key[1])
            own[host_id(print_) if len(keys_of[rid]) > 1 else rid] = print_
        target = identified[0] if identified else min(own, default=None)
        if target is not None and target not in prints:
            prints[target] = own[target]
        for d, rid in bare:
            same[(d, rid)] = target
    return same, prints, ambiguous


def identified_machine(print_: Mapping) -> bool:
    """Whether a fingerprint holds the digest of its machine's ID (see `same_hosts`)."""
    return bool((print_.get("machine") or {}).get("machine_id_digest"))


def host_id(print_: Mapping) -> str:
    """A short stable name of a fingerprint (its digest)."""
    return hashlib.sha256(json.dumps(print_, sort_keys=True).encode()).hexdigest()[:10]


def host_label(print_: Mapping) -> str:
    """A readable name: CPU model, CPUs and the digest."""
    m = print_.get("machine", {})
    cpus = m.get("usable_cpus") or m.get("logical_cpus")
    share = f" (CPU {print_['cpu_set']})" if print_.get("cpu_set") else ""
    return f"{m.get('cpu_model', 'unknown CPU')}, {cpus} CPUs{share} [{host_id(print_)}]"


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
    # per directory, each recorded host id's fingerprint and the hostname its session or description recorded
    prints_of: dict[str, dict[str, tuple[dict, str | None]]] = {}
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
                                 "the difference as a factor (" + factor_words("plan") + ")")
            a, b = source_commit(meta0), source_commit(meta)
            if a and b and a != b and factor != "commit":
                raise ValueError(f"{d} was built from other source code than {d0} (git commit "
                                 f"{', '.join(sorted(b))} vs {', '.join(sorted(a))}): the programs differ, so their "
                                 "samples do not measure the same work; run the same commit on every machine, or "
                                 "name it as a factor (" + factor_words("commit") + ")")
            other = _other_sources(meta0, meta)
            if other and factor != "commit":
                raise ValueError(f"{d} was built from other source code than {d0} (the source of "
                                 f"{', '.join(other)} differs, under git commit {', '.join(sorted(b)) or 'unknown'} "
                                 f"and {', '.join(sorted(a)) or 'unknown'}): the programs differ, so their samples do "
                                 "not measure the same work; run the same source on every machine, or name it as a "
                                 "factor (" + factor_words("commit") + ")")
        df = store.load()
        by_session, recorded = {}, prints_of.setdefault(d, {})
        for s in meta.get("sessions", []):
            # a cluster session's samples carry their host: the id of the fingerprint its "hosts" entry
            # recorded; an in-process session's samples, the fingerprint of the session
            described = [(host_id(h["fingerprint"]), h["fingerprint"], (h.get("machine") or {}).get("hostname"))
                         for h in (s.get("hosts") or {}).values()]
            for rid, fp, hostname in described or [(None, fingerprint(s), (s.get("machine") or {}).get("hostname"))]:
                rid = rid or host_id(fp)
                by_session.setdefault(s.get("session"), rid)
                recorded[rid] = (fp, hostname)
        if df.empty:
            continue
        fallback = next(iter(by_session.values()), "unknown")
        session = df["session"] if "session" in df.columns else pd.Series([None] * len(df), index=df.index)
        own = df["host"] if "host" in df.columns else pd.Series([None] * len(df), index=df.index)
        # run_id becomes the directory: two runs named alike on two machines must not share blocks
        df = df.assign(host=[h if isinstance(h, str) and h else by_session.get(s, fallback)
                             for h, s in zip(own, session)], results_dir=d, run_id=d,
                       **({factor: FACTORS[factor](meta)} if factor else {}))
        frames.append((d, df))
    same, prints, ambiguous = same_hosts(prints_of)
    if ambiguous:
        where, could_be = ambiguous[0]
        theirs = sorted({d for (d, rid), hid in same.items() if hid in could_be})
        hostname = (prints[could_be[0]].get("machine") or {}).get("hostname")
        raise ValueError(f"{', '.join(where)} recorded a host without its machine's identity (an older harness left "
                         f"it out, or the machine has no machine ID), and {len(could_be)} hosts of "
                         f"{', '.join(theirs)} ({', '.join(could_be)}) have its hardware and hostname ({hostname}) "
                         "with machine IDs that differ: which of them it is cannot be told; analyse it apart from "
                         "them")
    for (d, rid), hid in same.items():
        # the machine of a host recorded without its hostname is read with it (as of a host recorded now)
        machine = machine_id(with_hostname(prints[hid], prints_of[d][rid][1]))
        entry = hosts.setdefault(hid, {"label": host_label(prints[hid]), "fingerprint": prints[hid],
                                       "machine": machine, "results_dirs": []})
        if d not in entry["results_dirs"]:
            entry["results_dirs"].append(d)
    for i, (d, df) in enumerate(frames):
        alias = {rid: same[(d, rid)] for rid in prints_of[d]}
        df = df.assign(host=df["host"].map(lambda h: alias.get(h, h)))
        frames[i] = (d, df)
        for hid in sorted(set(df["host"]) - set(hosts)):  # a host that joined a cluster run and was not described
            hosts[hid] = {"label": f"a host not described in meta.json [{hid}]", "fingerprint": {}, "machine": hid,
                          "results_dirs": [d]}
    frames = [df for _, df in frames]
    out = mark_valid(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame()
    if not out.empty:
        out["host_label"] = out["host"].map({h: e["label"] for h, e in hosts.items()})
    out.attrs["hosts"] = hosts
    out.attrs["factor"] = factor
    out.attrs["meta"] = first[1]
    out.attrs["plan"] = plan_from_dict(first[1]["plan"])
    return out
