"""Text values and text windows (pages counted in Unicode code points)."""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate
from json.encoder import encode_basestring
from typing import Any, NamedTuple, TypeGuard

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs._jsonsafe import protocol_error, replace_surrogates

__all__ = [
    "TextWindow",
    "is_text",
    "join_text",
    "prefix_json_bytes",
    "text_window",
    "utf8_size",
]

_ONLY_STR = frozenset({str})  # exact type: parsed JSON never holds str subclasses
_CHUNK = 1 << 20  # code points measured per step: bounds the temporary copies


def is_text(value: object) -> TypeGuard[str | list[str]]:
    """True for a stored text value: a ``str`` or a list of ``str`` (nbformat's
    "multiline_string")."""
    return isinstance(value, str) or (
        isinstance(value, list) and _ONLY_STR.issuperset(map(type, value))
    )


def join_text(value: object) -> str | None:
    """A stored text value as one string: a ``str`` as is, a list of ``str`` joined.

    nbformat stores multiline strings either way ("multiline_string" in the v4 schema).
    Returns None for anything else.
    """
    if isinstance(value, str):
        return value
    return "".join(value) if is_text(value) else None


def utf8_size(text: str | list[str]) -> int:
    """UTF-8 size of a text value in bytes (a lone surrogate counts as U+FFFD, 3 bytes)."""
    if not isinstance(text, str):
        if all(map(str.isascii, text)):
            return sum(map(len, text))
        return sum(map(utf8_size, text))
    if text.isascii():
        return len(text)
    size = 0
    for start in range(0, len(text), _CHUNK):
        size += len(text[start : start + _CHUNK].encode("utf-8", "surrogatepass"))
    return size


def _measure(text: str) -> tuple[int, int]:
    """``(utf8_bytes, json_bytes)`` of a surrogate-free ``text``; json_bytes includes quotes.

    ``json_bytes`` is the size of the text as the canonical serialisation writes it
    (``_jsonsafe.dump_json``): the standard library's string escapes (``\\"``, ``\\\\``,
    ``\\n`` and the other control characters), non-ASCII kept. Every escape stands for one
    ASCII character and is ASCII itself, so it adds as many bytes as characters.

    Raises:
        UnicodeEncodeError: ``text`` holds a surrogate (it has no UTF-8 encoding).
    """
    utf8 = 0
    added = 2  # the quotes, then what each escape adds
    for start in range(0, len(text), _CHUNK):
        chunk = text[start : start + _CHUNK]
        utf8 += len(chunk) if chunk.isascii() else len(chunk.encode("utf-8"))
        added += len(encode_basestring(chunk)) - 2 - len(chunk)
    return utf8, utf8 + added


def prefix_json_bytes(text: str, characters: int) -> int:
    """Serialised size (quotes included) of the first ``characters`` code points of a
    surrogate-free ``text``."""
    return _measure(text[:characters])[1]


class TextWindow(NamedTuple):
    """One page of a text value.

    Attributes:
        fields: the protocol's window fields, in order: ``offset``, ``returned_characters``,
            ``total_characters``, ``truncated`` (the page is not the whole text: ``offset > 0``
            or text remains after it), ``next_offset`` (only when text remains), ``bytes``
            (UTF-8 size of ``data``) and ``data`` (lone surrogates as U+FFFD).
        data_json_bytes: size of ``data`` serialised as a JSON string, quotes included.
    """

    fields: dict[str, Any]
    data_json_bytes: int


def _page_of_parts(parts: list[str], start: int, end: int) -> str:
    """``"".join(parts)[start:end]``, joining only the parts that overlap the page."""
    if start >= end:
        return ""
    bounds = array("q", accumulate(map(len, parts)))  # C loops; 8 bytes per part
    first = bisect_right(bounds, start)
    last = bisect_left(bounds, end)
    base = bounds[first - 1] if first else 0
    joined = "".join(parts[first : last + 1])
    return joined[start - base : end - base]


def text_window(text: str | list[str], offset: int, limit: int | None) -> TextWindow:
    """Cut the page ``[offset, offset + limit)`` out of ``text`` (code points).

    ``text`` is a string or a list of strings (read as joined, without joining it).
    ``limit=None`` takes everything from ``offset``. ``offset == len(text)`` gives an empty
    page. The page is copied only when it is not the whole text.

    Raises:
        OutputProtocolError: ``INVALID_WINDOW`` when ``offset`` is past the end.
    """
    total = len(text) if isinstance(text, str) else sum(map(len, text))
    if offset > total:
        raise protocol_error(
            ErrorCode.INVALID_WINDOW,
            f"offset {offset} is past the end of the text ({total} characters).",
            {"offset": offset, "total_characters": total},
        )
    end = total if limit is None else min(total, offset + limit)
    page = text[offset:end] if isinstance(text, str) else _page_of_parts(text, offset, end)
    try:
        utf8, json_bytes = _measure(page)
    except UnicodeEncodeError:
        page = replace_surrogates(page)
        utf8, json_bytes = _measure(page)
    fields: dict[str, Any] = {
        "offset": offset,
        "returned_characters": end - offset,
        "total_characters": total,
        "truncated": offset > 0 or end < total,
    }
    if end < total:
        fields["next_offset"] = end
    fields["bytes"] = utf8
    fields["data"] = page
    return TextWindow(fields, json_bytes)
