"""Deterministic fallback summaries, computed from the cell alone (no model, no network).

- tldr: for code, the leading comment, else the first statement line; for Markdown, the first
  heading, else the first line with text; for raw cells, the first non-blank line.
- description: for code, what :mod:`ast` finds (imports, definitions, assigned names, calls,
  IPython magics; magic and shell lines are blanked first so the rest still parses); for
  Markdown, words, headings, links, images, code blocks and math; for raw, lines and format.
- output summary: the output types and sizes, with a short preview of text and errors
  (:mod:`~jupyter_jcli.summaries._outputs`).

Every text starts with :data:`~jupyter_jcli.summaries._model.FALLBACK_MARK` and respects the
model's bounds; the same cell always gives the same summary.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from typing import Any

from jupyter_jcli.notebook.names import dotted_name
from jupyter_jcli.summaries._keys import joined_source, summary_key
from jupyter_jcli.summaries._model import (
    DESCRIPTION_MAX,
    FALLBACK_MARK,
    OUTPUT_SUMMARY_MAX,
    TLDR_MAX,
    FallbackReason,
    Summary,
    one_line,
)
from jupyter_jcli.summaries._outputs import describe_outputs

__all__ = ["fallback_summary"]

_LISTED = 6  # names listed per category before "and N more"
_MAX_PARSED = 200_000  # characters of code parsed at most
_SKIPPED_COMMENT = re.compile(r"#\s*(?:!|%%|-\*-|noqa|type:|pylint|fmt:|ruff:|mypy:|pragma|In\[)")
_MAGIC_LINE = re.compile(r"^(\s*)(?:%|!|\w+\s*=\s*[%!])")
_HELP_LINE = re.compile(r"^\s*[\w.]+\?{1,2}\s*$")
_ATX_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_HTML_TAG = re.compile(r"<[^>]*>")
_MD_LINK = re.compile(r"(?<!!)\[[^\]]*\]\([^)]*\)")
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)|<img\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?:](?=\s+[A-Z(])")
_MD_DECORATION = re.compile(r"^[\s>*+\-#|]+|[*_`]+")


def fallback_summary(
    cell: Mapping[str, Any],
    *,
    reason: FallbackReason,
    detail: str | None = None,
    key: str | None = None,
) -> Summary:
    """The deterministic summary of one cell.

    Args:
        cell: an nbformat cell dict (malformed fields are tolerated).
        reason: why no model summary is given.
        detail: a short explanation of the reason, kept as is in the result.
        key: the cell's summary key, if already computed.

    Returns:
        A :class:`Summary` with ``source="fallback"`` whose three texts start with
        :data:`FALLBACK_MARK`.
    """
    cell_type = str(cell.get("cell_type", "")) or "unknown"
    source = joined_source(cell)
    if cell_type == "code":
        tldr, description = _code_tldr(source), _code_description(source)
    elif cell_type == "markdown":
        tldr, description = _markdown_tldr(source), _markdown_description(source)
    else:
        tldr = _first_text_line(source) or f"empty {cell_type} cell"
        description = _raw_description(cell, source, cell_type)
    return Summary(
        key=key if key is not None else summary_key(cell),
        tldr=one_line(FALLBACK_MARK + tldr, TLDR_MAX),
        description=one_line(FALLBACK_MARK + description, DESCRIPTION_MAX),
        output_summary=one_line(
            FALLBACK_MARK + describe_outputs(cell.get("outputs"), cell_type), OUTPUT_SUMMARY_MAX
        ),
        source="fallback",
        fallback_reason=reason,
        fallback_detail=detail,
    )


# ---------------------------------------------------------------------- shared


def _listing(label: str, items: Iterable[str]) -> str | None:
    unique = list(dict.fromkeys(item for item in items if item))
    if not unique:
        return None
    shown = ", ".join(unique[:_LISTED])
    more = len(unique) - _LISTED
    return f"{label} {shown}" + (f" and {more} more" if more > 0 else "") + "."


def _first_text_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


# ---------------------------------------------------------------------- code


def _code_tldr(source: str) -> str:
    stripped = source.lstrip()
    if stripped.startswith("%%"):
        magic, _, body = stripped.partition("\n")
        rest = _code_tldr(body) if body.strip() else ""
        return f"{magic.split()[0]}: {rest}" if rest else magic.strip()
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped or _SKIPPED_COMMENT.match(stripped):
            continue
        if stripped.startswith("#"):
            text = stripped.lstrip("#").strip()
            if text:
                return text
            continue
        return stripped
    return "empty code cell"


def _python_text(source: str) -> tuple[str, list[str]]:
    """The source with IPython-only lines blanked (kept as ``pass``), and the magics seen."""
    magics: list[str] = []
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        magics.append(lines[0].split()[0])
        lines = ["pass", *lines[1:]]
    kept: list[str] = []
    for line in lines:
        match = _MAGIC_LINE.match(line)
        if match or _HELP_LINE.match(line):
            word = line.strip().split()[0] if line.strip() else ""
            if word.startswith(("%", "!")):
                magics.append(word if word.startswith("%") else "!" + word.lstrip("!")[:20])
            kept.append((match.group(1) if match else "") + "pass")
        else:
            kept.append(line)
    return "\n".join(kept), magics


def _targets(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List):
        return [name for element in node.elts for name in _targets(element)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    dotted = dotted_name(node, calls=True) if isinstance(node, ast.Attribute) else None
    if dotted:
        return [dotted]
    if isinstance(node, ast.Subscript):
        base = dotted_name(node.value, calls=True)
        return [f"{base}[…]"] if base else []
    return []


def _code_description(source: str) -> str:
    if not source.strip():
        return "Empty code cell."
    lines = source.count("\n") + (0 if source.endswith("\n") else 1)
    text, magics = _python_text(source[:_MAX_PARSED])
    parts = [f"Code cell, {_count(lines, 'line')}."]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        parts.append("Not parseable as Python (another language or a syntax error).")
        parts.append(_listing("Magics", magics) or "")
        return " ".join(part for part in parts if part)
    imports: list[str] = []
    defines: list[str] = []
    assigns: list[str] = []
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            imports.extend(alias.name for alias in statement.names)
        elif isinstance(statement, ast.ImportFrom):
            module = "." * statement.level + (statement.module or "")
            imports.extend(f"{module}.{alias.name}" for alias in statement.names)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            defines.append(f"{statement.name}()")
        elif isinstance(statement, ast.ClassDef):
            defines.append(f"class {statement.name}")
        elif isinstance(statement, ast.Assign):
            assigns.extend(name for target in statement.targets for name in _targets(target))
        elif isinstance(statement, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
            assigns.extend(_targets(statement.target))
    calls = sorted(
        (node for node in ast.walk(tree) if isinstance(node, ast.Call)),
        key=lambda node: (node.lineno, node.col_offset),
    )
    called = [
        name for node in calls if (name := dotted_name(node.func, calls=True)) and "()" not in name
    ]
    for label, items in (
        ("Imports", imports),
        ("Defines", defines),
        ("Assigns", assigns),
        ("Calls", called),
        ("Magics", magics),
    ):
        parts.append(_listing(label, items) or "")
    if len([part for part in parts if part]) == 1:
        parts.append("Evaluates an expression." if _is_expression(tree) else "")
    return " ".join(part for part in parts if part)


def _is_expression(tree: ast.Module) -> bool:
    return bool(tree.body) and isinstance(tree.body[-1], ast.Expr)


# ---------------------------------------------------------------------- markdown


def _clean_markdown(line: str) -> str:
    text = _HTML_TAG.sub(" ", line)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return " ".join(_MD_DECORATION.sub("", text).split())


def _headings(source: str) -> list[str]:
    found: list[str] = []
    in_fence = False
    for line in source.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        match = None if in_fence else _ATX_HEADING.match(line)
        if match:
            heading = _clean_markdown(match.group(1))
            if heading:
                found.append(heading)
    return found


def _markdown_tldr(source: str) -> str:
    headings = _headings(source)
    if headings:
        return headings[0]
    for line in source.splitlines():
        text = _clean_markdown(line)
        if text:
            sentence = _SENTENCE_END.search(text)
            return text[: sentence.start() + 1] if sentence else text
    return "empty markdown cell"


def _markdown_description(source: str) -> str:
    if not source.strip():
        return "Empty Markdown cell."
    words = len(_HTML_TAG.sub(" ", source).split())
    parts = [f"Markdown text, {_count(words, 'word')}."]
    parts.append(_listing("Headings:", _headings(source)) or "")
    extras = []
    links = len(_MD_LINK.findall(source)) + len(re.findall(r"<a\s", source, re.IGNORECASE))
    images = len(_MD_IMAGE.findall(source))
    fences = sum(1 for line in source.splitlines() if line.lstrip().startswith(("```", "~~~")))
    if links:
        extras.append(_count(links, "link"))
    if images:
        extras.append(_count(images, "image"))
    if fences // 2:
        extras.append(_count(fences // 2, "code block"))
    if "$" in source:
        extras.append("math")
    if "|" in source and re.search(r"^\s*\|?\s*:?-{3,}", source, re.MULTILINE):
        extras.append("a table")
    if extras:
        parts.append("Contains " + ", ".join(extras) + ".")
    return " ".join(part for part in parts if part)


# ---------------------------------------------------------------------- raw


def _raw_description(cell: Mapping[str, Any], source: str, cell_type: str) -> str:
    if cell_type != "raw":
        return f"Cell of unknown type {cell_type!r}, {_count(len(source), 'character')}."
    lines = len(source.splitlines())
    text = f"Raw cell, {_count(lines, 'line')}, {_count(len(source), 'character')}."
    metadata = cell.get("metadata")
    if isinstance(metadata, Mapping):
        fmt = metadata.get("format") or metadata.get("raw_mimetype")
        if isinstance(fmt, str) and fmt:
            text += f" Format {fmt}."
    return text
