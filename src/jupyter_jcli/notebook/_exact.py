"""Lossless JSON for the write path: every number comes back as it was written.

The read path parses with orjson, which reads an integer outside the 64-bit range as the
nearest float (see ``notebook.io``). A write that re-serialises such a value would replace the
file's exact integer by a rounded float in cells the write does not own. The write path
therefore works on values that reproduce every number of the file:

- integers are Python ``int`` (exact at any size; ``json.dumps`` writes them back exactly);
- a float literal that Python writes back with the same text (``1.0``, ``0.1``, ``-0.0``,
  ``1e-07``: the shortest round-trip ``repr``) is a Python ``float``;
- any other number literal is kept as its text in a :class:`JsonNumber`, written back
  verbatim: more digits than a double holds (``3.14159265358979323846``), a spelling Python
  would change (``1.50``, ``1E5``, ``1e-7``, ``-0``), or a value out of the double range
  (``1e400``, which ``json`` would read as ``inf`` and write as ``Infinity``, not JSON).

``NaN`` and ``Infinity`` (not JSON, but read and written by Python's ``json``) stay as read.
JSON itself (RFC 8259, section 6) allows numbers of any size and precision and leaves the
range to implementations; keeping the literal is the only way to keep the value whatever
reads the file next.

A :class:`JsonNumber` lives only in the write path's working copy: the document model callers
see is always re-read with the read path's parser after a write.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

__all__ = ["JsonNumber", "dumps_exact", "loads_exact", "plain_numbers"]


class JsonNumber:
    """A JSON number literal kept as written (see the module docstring).

    Attributes:
        literal: the number's text in the file, e.g. ``"1e400"``.
    """

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsonNumber) and other.literal == self.literal

    def __hash__(self) -> int:
        return hash(self.literal)

    def __repr__(self) -> str:
        return f"JsonNumber({self.literal!r})"


def _float(text: str) -> float | JsonNumber:
    value = float(text)
    return value if repr(value) == text else JsonNumber(text)


def _int(text: str) -> int | JsonNumber:
    value = int(text)
    return value if str(value) == text else JsonNumber(text)


def loads_exact(text: str) -> Any:
    """Parse JSON text keeping every number exactly (see the module docstring).

    Raises:
        json.JSONDecodeError: the text is not JSON.
        RecursionError: nested too deeply for the standard library's parser.
    """
    return json.loads(text, parse_float=_float, parse_int=_int)


def dumps_exact(value: Any, **options: Any) -> str:
    """``json.dumps(value, **options)``, writing each :class:`JsonNumber` as its literal.

    Each literal is first written as a placeholder string holding a random token and then
    substituted; a token that happens to occur elsewhere in the text is replaced by another.
    """
    while True:
        text = _Placeholders().dumps(value, options)
        if text is not None:
            return text


class _Placeholders:
    """One attempt of :func:`dumps_exact` with one random token."""

    def __init__(self) -> None:
        self.token = f"\x00jcli-number-{uuid.uuid4().hex}-"
        self.literals: list[str] = []

    def _placeholder(self, item: object) -> str:
        if not isinstance(item, JsonNumber):
            raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
        self.literals.append(item.literal)
        return f"{self.token}{len(self.literals) - 1}"

    def _literal(self, match: re.Match[str]) -> str:
        return self.literals[int(match.group(1))]

    def dumps(self, value: Any, options: dict[str, Any]) -> str | None:
        """The text, or ``None`` if the token occurs in the data itself."""
        text = json.dumps(value, default=self._placeholder, **options)
        if not self.literals:
            return text
        quoted = json.dumps(self.token, ensure_ascii=bool(options.get("ensure_ascii", True)))
        if text.count(quoted[1:-1]) != len(self.literals):
            return None
        pattern = re.compile(f'"{re.escape(quoted[1:-1])}([0-9]+)"')
        return pattern.sub(self._literal, text)


def plain_numbers(value: Any) -> Any:
    """``value`` with each :class:`JsonNumber` as the nearest float (for writers that only
    take plain JSON values, such as jupytext for a pair's text file); ``value`` itself when
    it holds none."""
    if isinstance(value, JsonNumber):
        return float(value.literal)
    if isinstance(value, dict):
        items = {key: plain_numbers(item) for key, item in value.items()}
        return value if all(items[key] is value[key] for key in value) else items
    if isinstance(value, list):
        converted = [plain_numbers(item) for item in value]
        same = all(new is old for new, old in zip(converted, value, strict=True))
        return value if same else converted
    return value
