"""Whether the outputs of a run that has no notebook are answered inline.

Rule (the seed's, as the reference jupyter-jcli 0.9.7 applies it in
``jupyter_jcli/outputs/store.py``): short text-only results stay in the response and create
nothing; rich output, more than :data:`INLINE_TEXT_LIMIT` characters of text or more than
:data:`INLINE_ITEM_LIMIT` items is saved as a saved run (:mod:`jupyter_jcli.runs._store`).

- Text is a stream's ``text``, an error's ``ename``, ``evalue`` and traceback, and the
  ``text/plain`` value of a MIME bundle, counted as stored (ANSI codes included).
- Rich is a ``display_data`` or ``execute_result`` whose bundle holds any MIME type but
  ``text/plain``: ``text/html`` and ``text/markdown`` alone are rich, as are JSON and every
  image; so is an output of an unknown type or shape.
- Items are the outputs plus the lines of every error's traceback (the reference's summary
  holds at most 20).

Pure: kept apart from the saving, so a command whose result stays inline loads none of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["INLINE_ITEM_LIMIT", "INLINE_TEXT_LIMIT", "stays_inline", "text_size"]

INLINE_TEXT_LIMIT = 4_000
"""The most characters of text a result may have and still be answered inline."""
INLINE_ITEM_LIMIT = 20
"""The most items (outputs, plus the lines of each error's traceback) a result may have and
still be answered inline."""

PLAIN_TEXT = "text/plain"
"""The one MIME type of a bundle that is text, not rich output."""


def _text(value: object) -> int | None:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return sum(map(len, value))
    return None


def _sizes(output: object) -> tuple[int, int] | None:
    """(characters of text, items) of one output, or None when it is not text only."""
    if not isinstance(output, Mapping):
        return None
    kind = output.get("output_type")
    if kind == "stream":
        size = _text(output.get("text"))
        return None if size is None else (size, 1)
    if kind == "error":
        traceback = output.get("traceback")
        sizes = [_text(output.get("ename")), _text(output.get("evalue")), _text(traceback)]
        if None in sizes or not isinstance(traceback, list):
            return None
        return sum(s for s in sizes if s is not None), 1 + len(traceback)
    if kind in ("display_data", "execute_result"):
        data = output.get("data")
        if not isinstance(data, Mapping) or any(mime != PLAIN_TEXT for mime in data):
            return None
        size = _text(data.get(PLAIN_TEXT, ""))
        return None if size is None else (size, 1)
    return None


def text_size(outputs: Sequence[Mapping[str, Any]]) -> int | None:
    """Characters of text in ``outputs``, or None when one holds anything but text (rich
    output, an unknown or malformed output: see the module docstring)."""
    total = 0
    for output in outputs:
        sizes = _sizes(output)
        if sizes is None:
            return None
        total += sizes[0]
    return total


def stays_inline(outputs: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the result is answered inline: text only, at most :data:`INLINE_TEXT_LIMIT`
    characters and at most :data:`INLINE_ITEM_LIMIT` items."""
    text = items = 0
    for output in outputs:
        sizes = _sizes(output)
        if sizes is None:
            return False
        text, items = text + sizes[0], items + sizes[1]
        if text > INLINE_TEXT_LIMIT or items > INLINE_ITEM_LIMIT:
            return False
    return True
