"""Secrets never reach a file the harness writes: DSNs are redacted (plan/dsn.py), and known passwords are
replaced by `***` in anything stored or printed (a program's error message, say, could repeat its
connection string)."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from ..redact import MASK, passwords


def dsn_secrets(dsn: str) -> list[str]:
    """The passwords a DSN holds, raw and percent-decoded (either may appear in a message)."""
    return passwords(dsn)


class Scrubber:
    """Replaces every known secret by *** in text, and in the strings of nested data."""

    def __init__(self, secrets: Iterable[str] = ()):
        self._secrets: set[str] = set()
        self.add(*secrets)

    def add(self, *secrets: str) -> None:
        for s in secrets:
            if s and len(s) >= 4:  # a very short string would mask ordinary text
                self._secrets.add(s)

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def text(self, value: str) -> str:
        for s in sorted(self._secrets, key=len, reverse=True):
            if s in value:
                value = value.replace(s, MASK)
        return value

    def data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.data(v) for v in value)
        return value

    def wrap(self, log: Callable[[str], None]) -> Callable[[str], None]:
        return lambda message: log(self.text(str(message)))
