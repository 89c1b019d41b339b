"""The plan's `dsn` parameter: existing database servers named by URL, or by `env:NAME` (the URL
in an environment variable, so the password stays out of notebooks, command lines and the plan).
A DSN appears anywhere the harness writes or prints only redacted (`redact_dsn`)."""
from __future__ import annotations

import os
import re
import urllib.parse
from typing import Any, Iterable, Mapping

from ..catalogue import WORKLOADS
from ..redact import redact_text, redact_url, userinfo_problem
from ..values import colon_hint


def redact_dsn(dsn: str) -> str:
    """The DSN with its password shown as *** (redact.redact_url, the one rule)."""
    return redact_url(dsn)


DSN_SCHEMES = {"mysql": ("mysql",), "postgres": ("postgres", "postgresql")}
_ENV_REF = re.compile(r"env:([A-Za-z_][A-Za-z0-9_]*)")


def resolve_dsn(kind: str, value: str) -> str:
    """The URL of a `dsn` entry: the value itself, or for `env:NAME` the environment variable NAME
    (which keeps the password out of notebooks, command lines and the plan)."""
    m = _ENV_REF.fullmatch(value.strip())
    if not m:
        return value
    url = os.environ.get(m.group(1))
    if not url:
        raise ValueError(f"dsn[{kind}] = {value!r}: the environment variable {m.group(1)} is not set or empty")
    return url


def check_dsn_url(kind: str, url: str, shown: str) -> None:
    schemes = DSN_SCHEMES[kind]
    example = f"{schemes[0]}://user:password@host:port/database"
    # first what the drivers would read otherwise than the harness (Go's pgx and Rust's
    # tokio-postgres end the user information at its first @, urllib its network location at the
    # first # ? or /): percent-encoded, every driver reads the same password and host
    problem = userinfo_problem(url)  # (# ? / are among its characters: where urllib would end early too)
    if problem:
        raise ValueError(f"dsn[{kind}] = {shown!r}: its user name or password holds {problem}, which the "
                         "database drivers would read as another user, password, host or port; percent-encode it "
                         f"(@ as %40, # as %23, ? as %3F, / as %2F, a space as %20, % as %25; like {example})")
    try:
        u = urllib.parse.urlsplit(url)
        u.port  # raises on a port that is not a number
    except ValueError:
        raise ValueError(f"dsn[{kind}] = {shown!r} is not a URL like {example}") from None
    if u.scheme not in schemes:
        raise ValueError(f"dsn[{kind}] = {shown!r}: the scheme must be {' or '.join(schemes)} (like {example})")
    if not u.hostname or not u.path.strip("/"):
        raise ValueError(f"dsn[{kind}] = {shown!r} needs a host and a database (like {example})")


def validate_dsn(dsn: Any, workloads: Iterable[str]) -> dict[str, str]:
    if dsn is None or dsn == {}:
        return {}
    if not isinstance(dsn, Mapping):
        raise ValueError(f"dsn must be a mapping of server to URL, like "
                         f"{{'mysql': 'mysql://user:password@host:3306/db'}}, got {redact_text(repr(dsn))}")
    servers_used = {WORKLOADS[w].server for w in workloads if WORKLOADS[w].server}
    out = {}
    for kind, value in dsn.items():
        if kind not in DSN_SCHEMES:
            raise ValueError(f"dsn: unknown server {redact_text(repr(kind))}; allowed: mysql, postgres"
                             f"{colon_hint([kind])}")
        if kind not in servers_used:
            raise ValueError(f"dsn names the {kind} server, but the plan has no {kind} workload "
                             f"(workloads: {', '.join(workloads)})")
        if not isinstance(value, str):
            raise ValueError(f"dsn[{kind}] must be a URL string or env:NAME, got {type(value).__name__}")
        url = resolve_dsn(kind, value)
        check_dsn_url(kind, url, redact_dsn(value if url is value else url))
        out[kind] = value.strip()
    return out
