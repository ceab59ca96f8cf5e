"""JSON config files (``.mcp.json``, ``settings.json``, ``opencode.json``): parse, and dump a
new file (2-space indent). Existing files are edited in place by :mod:`._jsonedit`, which keeps
every byte it does not have to change. JSONC (OpenCode's ``opencode.jsonc``) is read when it has no
comments; a file with comments is refused rather than rewritten without them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._model import SetupError

__all__ = ["JsonDoc", "dump_json", "load_json"]

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
        reason = "comments" if _has_comments(text) else "syntax"
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


def _has_comments(text: str) -> bool:
    """Whether ``text`` has ``//`` or ``/* */`` comments outside JSON strings."""
    in_string = False
    escaped = False
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
            return True
        i += 1
    return False
