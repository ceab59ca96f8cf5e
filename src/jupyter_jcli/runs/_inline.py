"""Whether the outputs of a run that has no notebook are answered inline.

Rule (issue 11): results that are text only (streams, errors, ``text/*`` representations)
and at most :data:`INLINE_TEXT_LIMIT` characters in all stay in the response and create
nothing; anything else is saved as a run folder (:mod:`jupyter_jcli.runs._store`). Pure: kept
apart from the saving, so a command whose result stays inline loads none of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["INLINE_TEXT_LIMIT", "stays_inline", "text_size"]

INLINE_TEXT_LIMIT = 4_000
"""The most characters of text a result may have and still be answered inline."""


def _text(value: object) -> int | None:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return sum(map(len, value))
    return None


def text_size(outputs: Sequence[Mapping[str, Any]]) -> int | None:
    """Characters of text in ``outputs``, or None when one holds anything but text.

    Text is a stream's ``text``, an error's ``ename``, ``evalue`` and traceback, and the
    ``text/*`` values of a MIME bundle; any other MIME type (an image, JSON, HTML widgets'
    ``application/*``) or a malformed output is not text.
    """
    total = 0
    for output in outputs:
        if not isinstance(output, Mapping):
            return None
        kind = output.get("output_type")
        if kind == "stream":
            size = _text(output.get("text"))
        elif kind == "error":
            parts = [output.get("ename"), output.get("evalue"), output.get("traceback")]
            sizes = [_text(part) for part in parts]
            size = None if None in sizes else sum(s for s in sizes if s is not None)
        elif kind in ("display_data", "execute_result"):
            data = output.get("data")
            if not isinstance(data, dict) or not all(m.startswith("text/") for m in data):
                return None
            sizes = [_text(value) for value in data.values()]
            size = None if None in sizes else sum(s for s in sizes if s is not None)
        else:
            return None
        if size is None:
            return None
        total += size
    return total


def stays_inline(outputs: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the result is answered inline (text only, at most :data:`INLINE_TEXT_LIMIT`)."""
    size = text_size(outputs)
    return size is not None and size <= INLINE_TEXT_LIMIT
