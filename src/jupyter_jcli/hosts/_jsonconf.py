"""JSON config files (``.mcp.json``, ``settings.json``, ``opencode.json``): parse, and dump a
new file (2-space indent). Existing files are edited in place by :mod:`._jsonedit`, which keeps
every byte it does not have to change. JSONC (OpenCode reads comments and trailing commas in
``opencode.json`` and ``opencode.jsonc``) is read by :func:`load_jsonc`; setup never rewrites such
a file without its comments (see :func:`._entries.plan_json_file`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._model import SetupError

__all__ = ["JsonDoc", "dump_json", "is_plain_json", "load_json", "load_jsonc"]

JsonDoc = dict[str, Any]
"""A parsed JSON config: always an object at the top level."""

_INDENT = re.compile(r"^\{[ \t]*\r?\n([ \t]+)\S", re.MULTILINE)


def load_json(path: Path, text: str | None) -> JsonDoc:
    """Parse a config's text; ``{}`` for a missing file.

    Args:
        path: the file (for error details).
        text: its text, None when it does not exist.

    Raises:
        SetupError: ``CONFIG_INVALID`` (details ``path``, ``line``, ``column`` or ``reason``)
            when the text is not a JSON object, or has JSONC comments that a rewrite would lose.
    """
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        reason = "comments" if has_comments(text) else "syntax"
        message = (
            f"{path} has comments, which j-cli setup cannot keep; edit it by hand or remove the "
            "comments. It was left untouched."
            if reason == "comments"
            else f"{path} is not valid JSON (line {err.lineno}, column {err.colno}): {err.msg}. "
            "It was left untouched."
        )
        raise SetupError(
            ErrorCode.CONFIG_INVALID,
            message,
            {"path": str(path), "line": err.lineno, "column": err.colno, "reason": reason},
        ) from err
    if not isinstance(doc, dict):
        raise SetupError(
            ErrorCode.CONFIG_INVALID,
            f"{path} must hold a JSON object at the top level; it was left untouched.",
            {"path": str(path), "reason": "not an object"},
        )
    return cast(JsonDoc, doc)


def load_jsonc(path: Path, text: str | None) -> JsonDoc:
    """Parse a JSONC config (``//`` and ``/* */`` comments, trailing commas) as OpenCode does.

    Raises:
        SetupError: ``CONFIG_INVALID`` as :func:`load_json` when, without its comments and
            trailing commas, the text is not a JSON object.
    """
    try:
        return load_json(path, text)
    except SetupError:
        assert text is not None  # a missing file parses
        return load_json(path, _plain_json(text))


def dump_json(doc: JsonDoc, original: str | None) -> str:
    """Serialise ``doc`` in the style of ``original`` (indent width, final newline)."""
    indent: int | str = 2
    final_newline = True
    if original is not None and original.strip():
        match = _INDENT.search(original)
        if match:
            unit = match.group(1)
            indent = "\t" if unit.startswith("\t") else len(unit)
        final_newline = original.endswith("\n")
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    return text + "\n" if final_newline else text


def is_plain_json(text: str | None) -> bool:
    """Whether ``text`` is plain JSON (no JSONC comments or trailing commas), or missing."""
    if text is None or not text.strip():
        return True
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def has_comments(text: str) -> bool:
    """Whether ``text`` has ``//`` or ``/* */`` comments outside JSON strings."""
    return bool(_scan(text)[1])


_CLOSER = re.compile(r"[ \t\r\n]*[}\]]")


def _scan(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, int]]]:
    """Each character of ``text`` outside JSON strings and comments, with its index, and
    each comment's ``(start, end)`` span (a ``//`` comment ends before its newline; an
    unclosed ``/*`` at the end of ``text``)."""
    found: list[tuple[int, str]] = []
    comments: list[tuple[int, int]] = []
    in_string = escaped = False
    i = 0
    while i < len(text):
        char = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "/" and text[i + 1 : i + 2] in ("/", "*"):
            line = text[i + 1] == "/"
            end = text.find("\n" if line else "*/", i + 2)
            end = len(text) if end < 0 else end + (0 if line else 2)
            comments.append((i, end))
            i = end
            continue
        else:
            found.append((i, char))
        i += 1
    return found, comments


def _plain_json(text: str) -> str:
    """``text`` with its comments blanked (their line breaks kept) and its trailing commas
    dropped (outside strings)."""
    outside, comments = _scan(text)
    chars = list(text)
    for start, end in comments:
        for j in range(start, end):
            chars[j] = text[j] if text[j] in "\r\n" else " "
    blanked = "".join(chars)
    for i, char in outside:
        if char == "," and _CLOSER.match(blanked, i + 1):
            chars[i] = " "
    return "".join(chars)
