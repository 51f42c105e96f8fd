"""Validation helpers for reading a report dict back: errors name the path of the bad value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ReportFormatError(ValueError):
    """A report dict that does not match the schema; the message names the path."""


def require(data: Any, key: str, kind: type | tuple[type, ...], where: str, optional: bool = False) -> Any:
    if not isinstance(data, Mapping):
        raise ReportFormatError(f"{where}: expected an object, got {type(data).__name__}")
    if key not in data:
        raise ReportFormatError(f"{where}.{key}: missing")
    value = data[key]
    if value is None and optional:
        return None
    # bool is an int subclass; a count of True is a bug upstream, not a count.
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        raise ReportFormatError(f"{where}.{key}: expected {_kind_name(kind)}, got {value!r}")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in _as_tuple(kind))


def require_choice(data: Mapping, key: str, choices: tuple[str, ...], where: str) -> str:
    value = require(data, key, str, where)
    if value not in choices:
        raise ReportFormatError(f"{where}.{key}: {value!r} is not one of {', '.join(choices)}")
    return value
