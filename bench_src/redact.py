"""The one rule for the password in a URL, in the URL itself and in free text that may quote one
(an error that repeats the user's `--plan`, a papermill string, a program's message).

A URL's user information runs from `://` to the last `@` of the URL, and it holds a password when
a `:` comes before any `/` (`https://proxy.golang.org/x/@v/v1.mod` has a path, not a user): a
password that holds `#`, `?` or `/` unencoded (`postgres://bench:2024#Winter@db/bench`) ends
urllib's network location early (it reads `bench:2024` as a host and a port, and finds no
password), so the password is taken from the text, not from urllib's parse.  Where the two
disagree, the whole user information is masked.  In free text a URL runs to the end of its line
(a password may hold a space or a quote), so a URL followed by more text on its line may be masked
beyond its end: more is masked, never less.

What a DSN's user information may hold so that the harness and every driver read it alike is
plan/dsn.py's (`userinfo_problem` below gives the characters).
"""
from __future__ import annotations

import re
import urllib.parse

MASK = "***"
PASSWORD_KEYS = ("password", "pass", "pwd", "passwd", "sslpassword")

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_QUERY_PASSWORD = re.compile(r"([?&;](?:" + "|".join(PASSWORD_KEYS) + r")=)[^&#\s]*", re.IGNORECASE)
# RFC 3986's user information, as Go's net/url checks it: unreserved, sub-delims, ":" and "%XX"
_USERINFO_CHARS = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:%]*")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _userinfo_at(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The user information of the URL whose `scheme://` ends at `start`, looked for up to `end`:
    (start, the last `@` before `end`) when what lies between has a `:` before any `/`."""
    at = text.rfind("@", start, end)
    if at < 0:
        return None
    info = text[start:at]
    colon, slash = info.find(":"), info.find("/")
    return (start, at) if colon >= 0 and (slash < 0 or colon < slash) else None


def userinfo(url: str) -> tuple[int, int] | None:
    """Where the user information of `url` that holds a password lies (start, end), or None."""
    m = _SCHEME.match(url)
    return _userinfo_at(url, m.end(), len(url)) if m else None


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


def userinfo_problem(url: str) -> str | None:
    """What in the user information of `url` a driver may read otherwise than the harness: a
    character outside RFC 3986's user information (an unencoded `@`, a space, a quote, a letter
    outside ASCII), or a `%` not followed by two hex digits; None when there is none."""
    m = _SCHEME.match(url)
    if not m:
        return None
    at = url.rfind("@", m.end())
    if at < 0:
        return None
    info = url[m.end():at]
    if "/" in info.split(":", 1)[0]:
        return None  # a path, not a user
    if not _USERINFO_CHARS.fullmatch(info):
        return "a character a URL must percent-encode (such as @ # ? / a space, a quote or a letter outside ASCII)"
    if _BAD_PERCENT.search(info):
        return "a % that does not start a percent-encoded byte (%XX)"
    return None


def passwords(url: str) -> list[str]:
    """The passwords a URL holds, raw and percent-decoded (either may appear in a message), and
    those of its query's password keys."""
    out: list[str] = []
    span = userinfo(url)
    if span is not None:
        raw = url[span[0]:span[1]].split(":", 1)[1]
        out += [v for v in dict.fromkeys((raw, urllib.parse.unquote(raw))) if v]
    query = url.partition("?")[2]
    out += [v for k, v in urllib.parse.parse_qsl(query, keep_blank_values=True) if k.lower() in PASSWORD_KEYS and v]
    return out


def _masked(text: str, start: int, end: int, whole: bool) -> str:
    info = text[start:end]
    return text[:start] + (MASK if whole else f"{info.split(':', 1)[0]}:{MASK}") + text[end:]


def redact_url(url: str) -> str:
    """The URL with its password (in the user information, or a `password=` query key) shown as
    ***; with the whole user information masked when urllib would not read it as written."""
    span = userinfo(url)
    if span is not None:
        url = _masked(url, *span, whole=encoding_problem(url))
    return _QUERY_PASSWORD.sub(lambda m: m.group(1) + MASK, url)


def redact_text(text: str) -> str:
    """`text` with the password of every URL in it masked (`redact_url`'s rule, each URL taken to
    the end of its line): for messages that quote what a user typed."""
    out, pos = [], 0
    for m in _SCHEME.finditer(text):
        if m.start() < pos:
            continue
        eol = text.find("\n", m.end())
        eol = len(text) if eol < 0 else eol
        span = _userinfo_at(text, m.end(), eol)
        if span is not None:
            out.append(text[pos:span[0]] + text[span[0]:span[1]].split(":", 1)[0] + ":" + MASK)
            pos = span[1]
    out.append(text[pos:])
    return _QUERY_PASSWORD.sub(lambda m: m.group(1) + MASK, "".join(out))
