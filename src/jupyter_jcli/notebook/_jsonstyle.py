"""Serialising a notebook dict back to bytes in the style its file already has.

Jupyter (nbformat) writes ``json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False)``
plus a trailing newline, with multi-line strings stored as lists of lines
(``nbformat.v4.rwbase.split_lines``). :func:`detect_style` finds the ``json.dumps`` options
that reproduce a file byte for byte (indent 1, 2 or 4 or compact; sorted or stored key order;
escaped or literal non-ASCII; final newline or not; ``\\n`` or ``\\r\\n`` line ends), so that
saving an unchanged notebook gives back the identical bytes and a one-cell edit changes only
that cell's lines. A file that no such style reproduces (hand-formatted JSON, a different key
order inside some objects) is written in Jupyter's style: the first mutation then reformats it
once, and it is stable from then on.

Lone surrogates: JSON may escape a lone UTF-16 surrogate (``"\\udcff"``) and such a notebook
reads into a Python string holding that lone code point, which has no UTF-8 encoding. The
serialiser writes every lone surrogate as its JSON ``\\uXXXX`` escape (lowercase hex, as
``json.dumps`` writes escapes), whatever the style, and encodes strictly: it never emits invalid
UTF-8, and a notebook read with such escapes is written back with the same escapes (byte for
byte when nothing else changed). New sources holding lone surrogates are refused before this
point (``INVALID_SOURCE``, see ``_edits``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyter_jcli.notebook._exact import dumps_exact

__all__ = ["JUPYTER_STYLE", "JsonStyle", "detect_style", "dumps_nested", "dumps_notebook"]


@dataclass(frozen=True)
class JsonStyle:
    """``json.dumps`` options plus line-end conventions of one notebook file."""

    indent: int | None = 1
    sort_keys: bool = True
    ensure_ascii: bool = False
    compact_separators: bool = False
    trailing_newline: bool = True
    crlf: bool = False


JUPYTER_STYLE = JsonStyle()
"""How Jupyter writes notebooks (nbformat ``writes``)."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps_notebook(notebook: dict[str, Any], style: JsonStyle = JUPYTER_STYLE) -> bytes:
    """Serialise ``notebook`` as UTF-8 bytes in ``style``.

    Always valid UTF-8: lone surrogates in strings are written as JSON ``\\uXXXX`` escapes
    (see the module docstring). Numbers kept as written by the write path's parser
    (``_exact.JsonNumber``) are written as they were read.
    """
    return _dumps(notebook, style, depth=0, trailing=style.trailing_newline)


def dumps_nested(value: dict[str, Any], style: JsonStyle, depth: int) -> bytes:
    """``value`` as :func:`dumps_notebook` writes it nested ``depth`` levels deep in an
    indented style (a cell of the ``cells`` list: depth 2), from its opening brace to its
    closing one: the bytes a whole-notebook serialisation holds for it.

    Every line break of an indented JSON text is structural (strings escape ``\\n``), so
    nesting only adds ``depth`` indents after each one.
    """
    return _dumps(value, style, depth=depth, trailing=False)


def _dumps(value: dict[str, Any], style: JsonStyle, *, depth: int, trailing: bool) -> bytes:
    separators = (",", ":") if style.compact_separators else None
    if style.indent is not None:
        separators = (",", ": ")
    text = dumps_exact(
        value,
        indent=style.indent,
        sort_keys=style.sort_keys,
        ensure_ascii=style.ensure_ascii,
        separators=separators,
    )
    if depth and style.indent is not None:
        text = text.replace("\n", "\n" + " " * (style.indent * depth))
    if not style.ensure_ascii and _LONE_SURROGATE.search(text) is not None:
        # json.dumps leaves them raw inside string literals; only strings can hold them, so
        # the escape is always inside a literal and reads back as the same code point.
        text = _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    if trailing:
        text += "\n"
    if style.crlf:
        text = text.replace("\n", "\r\n")
    return text.encode("utf-8")


def detect_style(
    raw: bytes,
    notebook: dict[str, Any],
    *,
    reproduces: Callable[[bytes, dict[str, Any], JsonStyle], bool] | None = None,
) -> JsonStyle | None:
    """The style that reproduces ``raw`` exactly from ``notebook``, or ``None``.

    Args:
        raw: the file's bytes.
        notebook: the dict parsed from ``raw`` (key order as stored).
        reproduces: whether ``dumps_notebook(notebook, style) == raw``, computed another
            way (``_layout.reproduces``: cell by cell, without the whole serialisation in
            memory); default that comparison.

    Returns:
        A :class:`JsonStyle` with ``dumps_notebook(notebook, style) == raw``, or ``None``
        when no supported style does (see the module docstring).
    """
    crlf = b"\r\n" in raw
    newline = b"\r\n" if crlf else b"\n"  # no copy of the file is made to look at it
    trailing_newline = raw.endswith(b"\n")
    ensure_ascii = raw.isascii() and b"\\u" in raw
    indents: list[tuple[int | None, bool]]
    if raw.startswith(b"{" + newline):
        start = 1 + len(newline)
        end = raw.find(b"\n", start)
        second = raw[start : end if end >= 0 else len(raw)].rstrip(b"\r")
        indents = [(len(second) - len(second.lstrip(b" ")), False)]
    else:
        indents = [(None, False), (None, True)]
    for indent, compact in indents:
        for sort_keys in (True, False):
            style = JsonStyle(
                indent=indent,
                sort_keys=sort_keys,
                ensure_ascii=ensure_ascii,
                compact_separators=compact,
                trailing_newline=trailing_newline,
                crlf=crlf,
            )
            if reproduces is not None:
                if reproduces(raw, notebook, style):
                    return style
            elif dumps_notebook(notebook, style) == raw:
                return style
    return None
