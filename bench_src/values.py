"""Reading a user's value with its type: a YAML/JSON document (`read_yaml`, a key given twice
refused), papermill's strings (`from_papermill`; its word None, the parameter not given: `read_none`),
booleans, whole and real numbers within bounds.  Each raises a ValueError naming the parameter, the
value and what is allowed; never Python's truthiness."""
from __future__ import annotations

import math
import re
from typing import Any

import yaml

from .redact import redact_text

TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, except that a key given twice in one mapping is an error (YAML and JSON
    parsers otherwise keep the last value in silence)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    again = key in seen
                    seen.add(key)
                except TypeError:  # an unhashable key: the base class says what is wrong with it
                    continue
                if again:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} is given twice", key_node.start_mark, "give it once")
        return super().construct_mapping(node, deep)


def read_yaml(text: str, what: str) -> Any:
    """A YAML/JSON document given by the user (`--plan`, a plan file, a papermill string); a
    ValueError names `what` and the problem (a syntax error, a key given twice)."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        problem, mark, note = (getattr(exc, k, None) for k in ("problem", "problem_mark", "note"))
        if problem and mark is not None:
            detail = f"{problem} (line {mark.line + 1}, column {mark.column + 1})" + (f"; {note}" if note else "")
        else:
            detail = " ".join(str(exc).split())
        # `what` quotes the user's text, which may hold a database URL with its password
        raise ValueError(redact_text(f"{what}: cannot read it as YAML/JSON: {detail}")) from None


def colon_hint(keys) -> str:
    """A note for names (or strings where a mapping was meant) that hold a colon without a space after
    it: YAML reads `{samples:10}` as the key "samples:10", and `sleep:work: 0` as the key "sleep:work"."""
    return ("; YAML needs a space after each colon: '{samples: 10}', not '{samples:10}'"
            if any(re.search(r":(?!\s)", str(k)) for k in keys) else "")


# papermill's `-p NAME None` gives the parameter None: not given (its default, the profile's value,
# or the rule its help names).  The same word as a string (`--NAME None` on the command line, a value
# papermill passes as it is) is read by `read_none`, for every parameter alike.  Only this word:
# "null" or "none" stay strings, as papermill's -p leaves them, and so does an empty string
# (`--NAME ""`, `-p NAME ""`, `NAME: ''` in --plan): a value like any other, which no parameter
# allows, so that its reader refuses it naming what is allowed (a variable left empty in a script
# does not silently become the default).
NONE_WORD = "None"


def read_none(value: Any) -> Any:
    """The value as the user gave it, or None for papermill's word None (the parameter not given)."""
    return None if isinstance(value, str) and value.strip() == NONE_WORD else value


def from_papermill(name: str, value: Any) -> Any:
    """papermill's `-p` passes lists and mappings as strings: read such a string as YAML (JSON is
    YAML); the word None is None (`read_none`); anything else is returned as it is."""
    value = read_none(value)
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        return read_yaml(value, f"{name}={value!r}")
    return value


def as_bool(name: str, value: Any) -> bool:
    """True/False, 1/0, or a word: true/yes/on/1 and false/no/off/0 in any case."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, float) and value in (0.0, 1.0):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    raise ValueError(f"{name} must be a boolean (true/false, yes/no, on/off, 1/0), got {value!r}")


def as_int(name: str, value: Any, minimum: int = 1, maximum: int | None = None, default: str = "") -> int:
    """A whole number: an int, an integral finite float, or a string holding one.  `default`: what
    leaving the parameter out (None) gives, named in the error."""
    allowed = f"an integer >= {minimum}" + (f" and <= {maximum}" if maximum is not None else "")
    if default:
        allowed += f", or None for {default}"
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float):
        number = int(value) if math.isfinite(value) and value.is_integer() else None
    elif isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"[+-]?\d+", text):
            number = int(text)
        elif re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text):  # "6.0", "1e3": as papermill reads them
            real = float(text)
            number = int(real) if math.isfinite(real) and real.is_integer() else None
    if number is None or number < minimum or (maximum is not None and number > maximum):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return number


def as_float(name: str, value: Any, minimum: float, maximum: float, unit: str = "") -> float:
    """A finite number in [minimum, maximum]: an int, a float, or a string holding one."""
    allowed = f"a finite number >= {minimum:g} and <= {maximum:g}{unit}"
    number: float | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or not minimum <= number <= maximum:
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return number
