"""meta.json, the record of a run: its name, what makes its sessions usable, and the sessions an
unreadable one still holds."""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping

from ..parameters import MACHINE_DEFAULTS
from .records import is_count, non_negative

META = "meta.json"
CORRUPT_META = "meta.json.corrupt"

# The fields of a session that a resume or the report reads, with what each must be (absent or null
# is always allowed: older sessions, and the placeholders of a rebuilt meta.json, lack some).
_SESSION_FIELDS: tuple[tuple[tuple[str, ...], Callable[[Any], bool], str], ...] = (
    (("taken", "samples_lost"), is_count, "a count of samples"),
    (("session",), is_count, "a session number"),
    (("pid",), is_count, "a process number"),
    (("binaries", "sources", "machine", "toolchains", "context", "hosts"), lambda v: isinstance(v, dict), "a mapping"),
    (("duration_s",), non_negative, "a number of seconds"),
    (("engine", "results_dir_access"), lambda v: isinstance(v, str), "text"),
    (("hosts_lost",), lambda v: isinstance(v, list), "a list"),
)


IN_PROCESS = "in-process"


def engine_name(cluster: Any = None, engines: bool = False) -> str:
    """How a session took its samples, as meta.json records it (its `engine`): in this process, on
    the cluster `cluster` names ("cluster local:2"), or the engines' A/A check."""
    if engines:
        return f"engines-aa: arm A in-process, arm B on cluster {cluster}"
    return IN_PROCESS if cluster is None else f"cluster {cluster}"


def engine_cluster(engine: Any) -> str | None:
    """The cluster a session's `engine` names ("cluster local:2": "local:2"); None for a session
    taken in this process and for the engines' A/A check."""
    text = str(engine or IN_PROCESS)
    return text.split(" ", 1)[1] if text.startswith("cluster ") else None


def differing_keys(a: Mapping | None, b: Mapping | None) -> list[str]:
    """The keys of two stored plans whose values differ."""
    a, b = a or {}, b or {}
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def plan_difference(a: Mapping | None, b: Mapping | None, advice: bool = True) -> str:
    """What differs between two stored plans, for an error: the keys and both values (at most
    five), and (`advice`) where only parameters that default to the machine differ, how to give them."""
    a, b = a or {}, b or {}
    keys = differing_keys(a, b)
    if not keys:
        return "their plan entries are equal"
    shown = "; ".join(f"{k}: {json.dumps(a.get(k))[:60]} vs {json.dumps(b.get(k))[:60]}" for k in keys[:5])
    text = f"they differ in {shown}" + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    if advice and set(keys) <= set(MACHINE_DEFAULTS):
        sets = " and ".join(f"{k} to {MACHINE_DEFAULTS[k][0]}" for k in keys)
        how = "; ".join(f"--{k.replace('_', '-')} {v}, make run {k.upper()}={v}"
                        for k, v in ((k, MACHINE_DEFAULTS[k][1]) for k in keys))
        text += f"; unless given, each machine sets {sets}: give the same on every machine ({how})"
    return text


def sessions_problem(sessions: list[Any]) -> str | None:
    """What makes meta.json's sessions unusable, naming the entry and its field, or None."""
    for i, s in enumerate(sessions):
        if not isinstance(s, dict):
            return f"sessions[{i}] is {s!r}, not a mapping"
        for fields, fits, what in _SESSION_FIELDS:
            for field in fields:
                value = s.get(field)
                if value is not None and not fits(value):
                    return f"sessions[{i}].{field} is {value!r}, not {what}"
        for field in ("binaries", "sources"):  # {program: sha256, or null where it was not built}
            for name, digest in (s.get(field) or {}).items():
                if digest is not None and not isinstance(digest, str):
                    return f"sessions[{i}].{field}.{name} is {digest!r}, not a sha256 digest"
        for name, host in (s.get("hosts") or {}).items():
            if not isinstance(host, dict):
                return f"sessions[{i}].hosts.{name} is {host!r}, not a mapping"
    return None


def recovered_sessions(text: str) -> dict[int, dict[str, Any]]:
    """The session records an unreadable meta.json still holds, by number: each element of its
    `sessions` array read whole before the damage (a file cut short keeps the sessions before the
    cut; one with a bad field elsewhere keeps them all).  A session with a bad field keeps only its
    `binaries` and `sources` where those are sound."""
    found: dict[int, dict[str, Any]] = {}
    decoder = json.JSONDecoder()
    for start in re.finditer(r'"sessions"\s*:\s*\[', text):
        pos = start.end()
        while True:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            try:
                entry, pos = decoder.raw_decode(text, pos)
            except ValueError:
                break
            if not isinstance(entry, dict) or not is_count(entry.get("session")) or entry["session"] in found:
                continue
            if sessions_problem([entry]) is None:
                found[entry["session"]] = entry
                continue
            sound = {k: entry[k] for k in ("binaries", "sources")
                     if isinstance(entry.get(k), dict) and sessions_problem([{k: entry[k]}]) is None}
            if sound:
                found[entry["session"]] = sound
    return found


def is_run_record(meta: Any) -> bool:
    """Whether parsed meta.json content is the record of a run (the one test of it)."""
    return isinstance(meta, dict) and isinstance(meta.get("plan"), dict) and isinstance(meta.get("sessions"), list)
