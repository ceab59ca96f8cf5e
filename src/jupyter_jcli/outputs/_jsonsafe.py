"""JSON safety: shape and depth checks, lone surrogates, the canonical serialisation, sizes.

The protocol's bytes are the standard library's compact JSON: ``json.dumps(value,
separators=(",", ":"), ensure_ascii=False)`` encoded as UTF-8 (the reference jupyter-jcli
0.9.7 measures responses and JSON values the same way). One serialiser, so every process
that serves a request (the click commands, both MCP servers)
writes and measures the same bytes: a size decides paging and truncation, and serialisers
differ (orjson writes ``0.00001`` where Python writes ``1e-05``). The ``json`` module is also
what a fresh process has cheapest: importing orjson costs more than serialising a response.

Every JSON value that leaves the protocol is first inspected by one iterative walk
(:func:`inspect_json`, never recursive on user data) that checks it is a JSON value nested at
most a bounded number of levels, and notes what would make the serialisation fail:

- lone UTF-16 surrogates in strings (Python's ``json`` module produces them from
  ``"\\ud800"`` escapes; they have no UTF-8 encoding): replaced by U+FFFD, one code point
  for one, so character counts are unchanged;
- non-finite floats (NaN, Infinity, which are not JSON): serialised as ``null``, replaced by
  ``None`` in the returned value so that any serialiser gives the same document.

Integers of any size are written exactly. Containers are copied, never mutated, when a value
must be cleaned: the caller's notebook stays as it was read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from jupyter_jcli.errors import ErrorCode, OutputProtocolError

__all__ = [
    "MAX_JSON_DEPTH",
    "RESPONSE_MAX_DEPTH",
    "JsonScan",
    "clean_json",
    "dump_json",
    "inspect_json",
    "json_problem",
    "json_size",
    "make_serialisable",
    "protocol_error",
    "replace_surrogates",
    "sanitize_json",
    "serialize_json",
]

MAX_JSON_DEPTH = 128
"""Deepest nesting of a stored JSON value (an output's MIME value or its ``metadata``).

Depth counts containers: a scalar is 0, ``[]`` is 1, ``[[1]]`` is 2. The bound keeps every
response far inside the recursion limits of the serialisers (the standard library's, about
1,000 levels; orjson's 254, for front ends that use it) once the value is wrapped in a
response, and keeps any later recursion over the value shallow."""

RESPONSE_MAX_DEPTH = MAX_JSON_DEPTH + 8
"""Deepest nesting of a whole response (a stored value plus the response's own levels)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_ENCODE = json.JSONEncoder(
    ensure_ascii=False, check_circular=False, allow_nan=False, separators=(",", ":")
).encode
"""The canonical text (C accelerated; a cycle ends in ``RecursionError``, a NaN in
``ValueError``, a non-JSON type in ``TypeError``)."""
_FAILURES = (TypeError, ValueError, RecursionError)  # UnicodeEncodeError is a ValueError


def replace_surrogates(text: str) -> str:
    """Return ``text`` with every surrogate code point replaced by U+FFFD (same length)."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


class JsonScan(NamedTuple):
    """What one walk over a value found.

    Attributes:
        problem: why the value is not a serialisable JSON value, or None.
        needs_cleaning: it holds lone surrogates or non-finite floats.
    """

    problem: str | None = None
    needs_cleaning: bool = False


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def inspect_json(value: object, *, max_depth: int = MAX_JSON_DEPTH) -> JsonScan:
    """Walk ``value`` iteratively (no recursion) and report its JSON problems.

    Accepted: ``dict`` with ``str`` keys, ``list``/``tuple``, ``str``, ``int``, ``float``,
    ``bool`` and ``None``, nested at most ``max_depth`` containers deep.
    """
    cleaning = False
    stack: list[tuple[Any, int]] = []
    pending: list[Any] = [value]
    depth = 0
    while True:
        for item in pending:
            if isinstance(item, str):
                cleaning = cleaning or _has_surrogate(item)
            elif isinstance(item, int) or item is None:  # bool is an int
                pass
            elif isinstance(item, float):
                cleaning = cleaning or not math.isfinite(item)
            elif isinstance(item, dict | list | tuple):
                if depth + 1 > max_depth:
                    return JsonScan(f"it is nested more than {max_depth} levels deep")
                stack.append((item, depth + 1))
            else:
                return JsonScan(f"it holds a {type(item).__name__}, which is not a JSON value")
        if not stack:
            return JsonScan(None, cleaning)
        node, depth = stack.pop()
        if isinstance(node, dict):
            for key in node:
                if not isinstance(key, str):
                    return JsonScan(f"it has a non-string key ({type(key).__name__})")
                cleaning = cleaning or _has_surrogate(key)
            pending = list(node.values())
        else:
            pending = list(node)


def json_problem(value: object, *, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """Why ``value`` is not a JSON value nested at most ``max_depth`` deep, or None."""
    return inspect_json(value, max_depth=max_depth).problem


def clean_json(value: Any) -> Any:
    """A copy without lone surrogates (U+FFFD) and non-finite floats (None).

    Recursive, so call it only on a value :func:`inspect_json` accepted (bounded depth).
    """
    if isinstance(value, str):
        return replace_surrogates(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {replace_surrogates(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value


def dump_json(value: Any) -> bytes:
    """The canonical bytes of a clean value (see :func:`clean_json`): the standard library's
    compact JSON (``separators=(",", ":")``, non-ASCII kept, integers exact) as UTF-8.

    Raises:
        TypeError, ValueError, RecursionError: ``value`` is not a clean JSON value.
    """
    return _ENCODE(value).encode("utf-8")


def _checked(value: Any, max_depth: int) -> Any:
    scan = inspect_json(value, max_depth=max_depth)
    if scan.problem is not None:
        raise protocol_error(
            ErrorCode.OUTPUT_DATA_INVALID,
            f"A stored value cannot be serialised as JSON: {scan.problem}.",
        )
    return clean_json(value) if scan.needs_cleaning else value


def make_serialisable(value: Any, *, max_depth: int = RESPONSE_MAX_DEPTH) -> tuple[Any, int]:
    """Return ``(value, size)``: the value made safe and its canonical size in bytes.

    ``value`` comes back unchanged when it is already clean, else as a cleaned copy (lone
    surrogates as U+FFFD, NaN and infinities as None). ``size`` counts the bytes of
    :func:`dump_json`, which :func:`serialize_json` writes.

    Raises:
        OutputProtocolError: ``OUTPUT_DATA_INVALID`` when ``value`` is not a JSON value or is
            nested deeper than ``max_depth``.
    """
    cleaned = _checked(value, max_depth)
    return cleaned, len(dump_json(cleaned))


def serialize_json(value: Any, *, max_depth: int = RESPONSE_MAX_DEPTH) -> bytes:
    """The canonical bytes of ``value`` (:func:`dump_json`), made safe as
    :func:`make_serialisable` does.

    This is the serialisation the transport bound measures; front ends writing protocol
    responses use it so that what they write is what was measured.

    Raises:
        OutputProtocolError: ``OUTPUT_DATA_INVALID`` as :func:`make_serialisable`.
    """
    try:
        return dump_json(value)  # the common case: nothing to clean
    except _FAILURES:
        pass
    return dump_json(_checked(value, max_depth))


def json_size(value: Any) -> int | None:
    """Compact serialised size of ``value`` in bytes, or None if it cannot be serialised."""
    try:
        return make_serialisable(value, max_depth=MAX_JSON_DEPTH)[1]
    except OutputProtocolError:
        return None


def sanitize_json(value: Any) -> Any:
    """A copy of a JSON value whose strings (keys included) hold no surrogates.

    Raises:
        OutputProtocolError: ``OUTPUT_DATA_INVALID`` if it is not a JSON value nested at
            most :data:`RESPONSE_MAX_DEPTH` levels.
    """
    return _checked(value, RESPONSE_MAX_DEPTH)


def protocol_error(
    code: ErrorCode, message: str, details: Mapping[str, Any] | None = None
) -> OutputProtocolError:
    """Build an :class:`OutputProtocolError` whose message and details serialise safely."""
    safe_details = clean_json(dict(details)) if details else None
    return OutputProtocolError(code, replace_surrogates(message), safe_details)
