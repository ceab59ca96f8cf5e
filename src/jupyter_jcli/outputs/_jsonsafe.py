"""JSON safety: lone surrogates, compact sizes, and protocol errors with safe details.

orjson (like any strict UTF-8 encoder) refuses ``str`` values holding lone UTF-16 surrogates,
which Python's ``json`` module happily produces from ``"\\ud800"`` escapes. Every string that
leaves the protocol therefore goes through :func:`replace_surrogates` (U+FFFD, one code point
for one, so character counts are unchanged) when, and only when, serialisation fails.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from jupyter_jcli.errors import ErrorCode, OutputProtocolError

__all__ = [
    "json_size",
    "make_serialisable",
    "protocol_error",
    "replace_surrogates",
    "sanitize_json",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DEPTH = 10_000


def replace_surrogates(text: str) -> str:
    """Return ``text`` with every surrogate code point replaced by U+FFFD (same length)."""
    return _SURROGATE.sub("\ufffd", text)


def sanitize_json(value: Any, _depth: int = 0) -> Any:
    """A copy of a parsed JSON value whose strings (keys included) hold no surrogates.

    Containers are copied, never mutated: the caller's notebook stays as it was read.

    Raises:
        OutputProtocolError: ``OUTPUT_DATA_INVALID`` if nesting exceeds 10,000 levels.
    """
    if _depth > _MAX_DEPTH:
        raise protocol_error(ErrorCode.OUTPUT_DATA_INVALID, "A JSON value is nested too deeply.")
    if isinstance(value, str):
        return replace_surrogates(value)
    if isinstance(value, dict):
        return {
            (replace_surrogates(k) if isinstance(k, str) else k): sanitize_json(v, _depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [sanitize_json(v, _depth + 1) for v in value]
    return value


def make_serialisable(value: Any) -> tuple[Any, int]:
    """Return ``(value, size)`` where ``size`` is the compact orjson serialisation in bytes.

    ``value`` is returned unchanged when orjson accepts it, else a surrogate-free copy.

    Raises:
        OutputProtocolError: ``OUTPUT_DATA_INVALID`` when even the copy cannot be serialised
            (for example an integer beyond 64 bits or a non-string key).
    """
    try:
        return value, len(orjson.dumps(value))
    except TypeError:
        pass
    cleaned = sanitize_json(value)
    try:
        return cleaned, len(orjson.dumps(cleaned))
    except TypeError as exc:
        raise protocol_error(
            ErrorCode.OUTPUT_DATA_INVALID,
            f"A stored value cannot be serialised as JSON: {exc}.",
        ) from exc


def json_size(value: Any) -> int | None:
    """Compact serialised size of ``value`` in bytes, or None if it cannot be serialised."""
    try:
        return make_serialisable(value)[1]
    except OutputProtocolError:
        return None


def protocol_error(
    code: ErrorCode, message: str, details: Mapping[str, Any] | None = None
) -> OutputProtocolError:
    """Build an :class:`OutputProtocolError` whose message and details serialise safely."""
    safe_details = sanitize_json(dict(details)) if details else None
    return OutputProtocolError(code, replace_surrogates(message), safe_details)
