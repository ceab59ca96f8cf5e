"""Edit JSON text in place: only the members and items that changed are rewritten.

:func:`patch_json_text` takes a config's text, the document it parses to and the edited
document, and splices the difference into the text: a changed member's value is replaced where
it stands, a new member is appended to its object after the last one, a removed member is cut
out with exactly the separator and line break that joined it. Everything else (key order,
indentation, compact one-line entries, spacing around ``:`` and ``,``, the final newline) keeps
its bytes, and an insert followed by the matching removal gives back the original text.

New text follows the surroundings: a member added to an object whose members stand on their own
lines gets its own line at their indentation, its value indented by the file's unit (detected
from the first indented line; 2 spaces otherwise); a member added to a one-line object is added
on that line with the object's own separators.

The scanner is iterative and linear (no recursion on nesting depth); it expects text that
``json.loads`` accepted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["patch_json_text", "same_json"]

_WS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR = re.compile(r"[^ \t\r\n,\]}]+")
_BRACKETS = re.compile(r'["{}\[\]]')
_FIRST_COLON = re.compile(r'\{[ \t]*"[^"\\]*"([ \t]*:[ \t]*)')
_INDENT = re.compile(r"^\{[ \t]*\r?\n([ \t]+)\S", re.MULTILINE)


@dataclass(frozen=True)
class _Slot:
    """One member (or item) of a container: where its key (or item) starts and its value."""

    key: str | None
    start: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class _Style:
    unit: str  # one indentation step
    multiline: bool  # whether empty containers open onto their own lines
    newline: str
    separators: tuple[str, str]  # item and key separators of one-line text


def same_json(a: object, b: object) -> bool:
    """Deep equality that tells ``1``, ``1.0`` and ``True`` apart and ignores key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def patch_json_text(text: str, old: Any, new: Any) -> str:
    """``text`` (which parses to ``old``) rewritten to parse to ``new``, changing only the
    differences.

    Args:
        text: the original JSON text (accepted by ``json.loads``).
        old: what it parses to.
        new: the edited document.

    Returns:
        The new text; ``text`` itself when ``new`` equals ``old``.
    """
    match = _INDENT.search(text)
    unit = match.group(1) if match else "  "
    has_members = bool(old) if isinstance(old, (dict, list)) else False
    style = _Style(
        unit="\t" if unit.startswith("\t") else unit,
        multiline=bool(match) or not has_members,
        newline="\r\n" if "\r\n" in text else "\n",
        separators=(", ", ": "),
    )
    start = _skip(text, 0)
    colon = _FIRST_COLON.match(text, start)
    if colon is not None and colon.group(1) == ":":
        style = _Style(style.unit, style.multiline, style.newline, (",", ":"))
    patcher = _Patcher(text, style)
    patcher.patch(start, _value_end(text, start), old, new)
    for begin, end, replacement in sorted(patcher.edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:begin] + replacement + text[end:]
    return text


class _Patcher:
    """Collects the text edits (start, end, replacement) that turn one document into another."""

    def __init__(self, text: str, style: _Style) -> None:
        self.text = text
        self.style = style
        self.edits: list[tuple[int, int, str]] = []

    def patch(self, start: int, end: int, old: Any, new: Any) -> None:
        """Edit the value at ``text[start:end]`` (parsed: ``old``) into ``new``."""
        if same_json(old, new):
            return
        same_kind = isinstance(old, dict) and isinstance(new, dict)
        if same_kind or (
            isinstance(old, list) and isinstance(new, list) and _is_append_or_delete(old, new)
        ):
            self.container(start, old, new)
            return
        was_compact = "\n" not in self.text[start:end] and isinstance(old, (dict, list)) and old
        pretty = self.style.multiline and not was_compact
        indent = _line_indent(self.text, start)
        self.edits.append((start, end, _render(new, indent, self.style, pretty=pretty)))

    def container(
        self, start: int, old: dict[str, Any] | list[Any], new: dict[str, Any] | list[Any]
    ) -> None:
        """Edit an object or array member by member: keep, patch, cut, append."""
        slots, close = _slots(self.text, start)
        kept: list[int] = []
        removed: set[int] = set()
        added: list[tuple[str | None, Any]] = []
        if isinstance(old, dict):
            assert isinstance(new, dict)
            last = {slot.key: index for index, slot in enumerate(slots)}
            for index, slot in enumerate(slots):
                if slot.key not in new or last[slot.key] != index:
                    removed.add(index)  # gone, or an earlier duplicate (json.loads kept the last)
                else:
                    kept.append(index)
                    self.patch(slot.value_start, slot.value_end, old[slot.key], new[slot.key])
            added = [(key, value) for key, value in new.items() if key not in old]
        else:
            assert isinstance(new, list)
            if len(new) >= len(old) and all(
                same_json(a, b) for a, b in zip(old, new[: len(old)], strict=True)
            ):
                kept = list(range(len(slots)))
                added = [(None, value) for value in new[len(old) :]]
            elif len(new) == len(old):
                kept = list(range(len(slots)))
                for slot, a, b in zip(slots, old, new, strict=True):
                    self.patch(slot.value_start, slot.value_end, a, b)
            else:
                position = 0
                for index, item in enumerate(old):
                    if position < len(new) and same_json(item, new[position]):
                        kept.append(index)
                        position += 1
                    else:
                        removed.add(index)
        if not kept:
            if slots or added:
                self.edits.append((start + 1, close, self.fresh_members(start, added)))
            return
        _cut(slots, removed, self.edits)
        if added:
            end = slots[-1].value_end
            self.edits.append((end, end, self.more_members(slots, slots[kept[-1]], added)))

    def more_members(
        self, slots: list[_Slot], anchor: _Slot, added: list[tuple[str | None, Any]]
    ) -> str:
        """New members after the last one, in the style of the existing ones."""
        text, style = self.text, self.style
        first = slots[0]
        before_first = text[_prefix_start(text, first.start) : first.start]
        pretty = "\n" in before_first
        if pretty:
            indent = before_first.rsplit("\n", 1)[1]
            joiner = "," + style.newline + indent
        else:
            indent = _line_indent(text, first.start)
            joiner = _separator(text, slots, style)
        colon = _colon(text, anchor, style)
        return "".join(
            joiner + _member(key, value, colon, indent, style, pretty=pretty)
            for key, value in added
        )

    def fresh_members(self, start: int, added: list[tuple[str | None, Any]]) -> str:
        """The whole inside of a container that has no member left (between its brackets)."""
        style = self.style
        if not added:
            return ""
        if not style.multiline:
            item, colon = style.separators
            return item.join(
                _member(key, value, colon, "", style, pretty=False) for key, value in added
            )
        outer = _line_indent(self.text, start)
        indent = outer + style.unit
        body = ("," + style.newline + indent).join(
            _member(key, value, ": ", indent, style, pretty=True) for key, value in added
        )
        return style.newline + indent + body + style.newline + outer


def _is_append_or_delete(old: list[Any], new: list[Any]) -> bool:
    """Whether ``new`` is ``old`` item by item (same length), ``old`` plus items at the end, or
    ``old`` with some items taken out (anything else is replaced whole)."""
    if len(new) == len(old):
        return True
    if len(new) > len(old):
        return all(same_json(a, b) for a, b in zip(old, new[: len(old)], strict=True))
    position = 0
    for item in old:
        if position < len(new) and same_json(item, new[position]):
            position += 1
    return position == len(new)


def _cut(slots: list[_Slot], removed: set[int], edits: list[tuple[int, int, str]]) -> None:
    """Cut out each run of removed slots with the separator that joined it (some slot is kept)."""
    index = 0
    while index < len(slots):
        if index not in removed:
            index += 1
            continue
        run_end = index
        while run_end + 1 < len(slots) and run_end + 1 in removed:
            run_end += 1
        if run_end + 1 < len(slots):  # a kept slot follows: cut up to its start
            edits.append((slots[index].start, slots[run_end + 1].start, ""))
        else:  # a trailing run: cut from the end of the kept slot before it
            edits.append((slots[index - 1].value_end, slots[run_end].value_end, ""))
        index = run_end + 1


def _member(
    key: str | None, value: Any, colon: str, indent: str, style: _Style, *, pretty: bool
) -> str:
    rendered = _render(value, indent, style, pretty=pretty)
    if key is None:
        return rendered
    return json.dumps(key, ensure_ascii=False) + colon + rendered


def _render(value: Any, indent: str, style: _Style, *, pretty: bool) -> str:
    """``value`` as JSON: indented by the file's unit and continued at ``indent`` when
    ``pretty``, else on one line."""
    if not pretty:
        return json.dumps(value, ensure_ascii=False, separators=style.separators)
    dumped = json.dumps(value, indent=style.unit, ensure_ascii=False)
    return dumped.replace("\n", style.newline + indent)


def _colon(text: str, slot: _Slot, style: _Style) -> str:
    if slot.key is None:
        return style.separators[1]
    key_end = _STRING.match(text, slot.start).end()  # type: ignore[union-attr]
    between = text[key_end : slot.value_start]
    return between if "\n" not in between else style.separators[1]


def _separator(text: str, slots: list[_Slot], style: _Style) -> str:
    if len(slots) > 1:
        between = text[slots[0].value_end : slots[1].start]
        if "\n" not in between:
            return between
    return style.separators[0]


def _prefix_start(text: str, position: int) -> int:
    """Where the whitespace run ending at ``position`` begins."""
    index = position
    while index > 0 and text[index - 1] in " \t\r\n":
        index -= 1
    return index


def _line_indent(text: str, position: int) -> str:
    line_start = text.rfind("\n", 0, position) + 1
    line = text[line_start:position]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _slots(text: str, start: int) -> tuple[list[_Slot], int]:
    """The members of the object (or items of the array) opening at ``start``, and the index of
    its closing bracket."""
    is_object = text[start] == "{"
    slots: list[_Slot] = []
    position = _skip(text, start + 1)
    if text[position] in "}]":
        return slots, position
    while True:
        slot_start = position
        key: str | None = None
        if is_object:
            key_match = _STRING.match(text, position)
            assert key_match is not None
            key = json.loads(key_match.group())
            position = _skip(text, key_match.end())
            assert text[position] == ":"
            position = _skip(text, position + 1)
        value_end = _value_end(text, position)
        slots.append(_Slot(key, slot_start, position, value_end))
        position = _skip(text, value_end)
        if text[position] == ",":
            position = _skip(text, position + 1)
            continue
        return slots, position


def _skip(text: str, position: int) -> int:
    return _WS.match(text, position).end()  # type: ignore[union-attr]  # always matches


def _value_end(text: str, start: int) -> int:
    """The end of the JSON value starting at ``start`` (iterative, linear)."""
    char = text[start]
    if char == '"':
        return _STRING.match(text, start).end()  # type: ignore[union-attr]
    if char not in "{[":
        return _SCALAR.match(text, start).end()  # type: ignore[union-attr]
    depth = 0
    position = start
    while True:
        found = _BRACKETS.search(text, position)
        assert found is not None
        mark = found.group()
        if mark == '"':
            position = _STRING.match(text, found.start()).end()  # type: ignore[union-attr]
            continue
        depth += 1 if mark in "{[" else -1
        position = found.end()
        if depth == 0:
            return position
