"""The one rule for the password in a URL, in the URL itself and in free text that may quote one
(an error that repeats the user's `--plan`, a papermill string, a program's message).

A URL's user information runs from `://` to the last `@` of the URL: a password that holds `#`,
`?` or `/` unencoded (`postgres://bench:2024#Winter@db/bench`) ends urllib's network location
early (it reads `bench:2024` as a host and a port, and finds no password), so the password is
taken from the text, not from urllib's parse.  Where the two disagree the URL is not one a driver
reads as the user meant (plan/dsn.py refuses it), and the whole user information is masked.
"""
from __future__ import annotations

import re
import urllib.parse

MASK = "***"
PASSWORD_KEYS = {"password", "pass", "pwd", "passwd", "sslpassword"}

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# a URL quoted in text ends at white space or a quote (YAML and Python quote strings with them)
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"`]*")


def userinfo(url: str) -> tuple[int, int] | None:
    """Where the user information of `url` lies (start, end: the text from `://` to the last `@`),
    or None when it has none."""
    m = _SCHEME.match(url)
    if not m:
        return None
    at = url.rfind("@", m.end())
    return (m.end(), at) if at >= 0 else None


def encoding_problem(url: str) -> bool:
    """True when urllib's network location ends before the user information's `@` (a `#`, `?` or
    `/` left unencoded in the password): a driver would not read the URL as written."""
    span = userinfo(url)
    if span is None:
        return False
    try:
        netloc = urllib.parse.urlsplit(url).netloc
    except ValueError:
        return True
    return "@" not in netloc or netloc.rsplit("@", 1)[0] != url[span[0]:span[1]]


def passwords(url: str) -> list[str]:
    """The passwords a URL holds, raw and percent-decoded (either may appear in a message), and
    those of its query's password keys."""
    out: list[str] = []
    span = userinfo(url)
    if span is not None:
        info = url[span[0]:span[1]]
        raw = info.split(":", 1)[1] if ":" in info else ""
        out += [v for v in dict.fromkeys((raw, urllib.parse.unquote(raw))) if v]
    try:
        query = urllib.parse.urlsplit(url).query
    except ValueError:
        query = url.partition("?")[2]
    out += [v for k, v in urllib.parse.parse_qsl(query, keep_blank_values=True) if k.lower() in PASSWORD_KEYS and v]
    return out


def redact_url(url: str) -> str:
    """The URL with its password (in the user information, or a `password=` query key) shown as
    ***; with the whole user information masked when urllib would not read it as written."""
    span = userinfo(url)
    if span is not None:
        info = url[span[0]:span[1]]
        if encoding_problem(url):
            info = MASK
        elif ":" in info:
            info = f"{info.split(':', 1)[0]}:{MASK}"
        url = url[:span[0]] + info + url[span[1]:]
    try:
        u = urllib.parse.urlsplit(url)
        u.port  # a malformed port raises here
    except ValueError:
        return url if span is not None else ("<a DSN that is not a valid URL>" if "password" in url.lower() else url)
    if u.query:
        pairs = urllib.parse.parse_qsl(u.query, keep_blank_values=True)
        if any(k.lower() in PASSWORD_KEYS for k, _ in pairs):
            query = "&".join(f"{k}={MASK if k.lower() in PASSWORD_KEYS else v}" for k, v in pairs)
            url = urllib.parse.urlunsplit((u.scheme, u.netloc, u.path, query, u.fragment))
    return url


def redact_text(text: str) -> str:
    """`text` with every URL in it redacted (`redact_url`): for messages that quote what a user
    typed."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)
