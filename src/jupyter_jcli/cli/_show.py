"""``j-cli notebook show``: a short tour of a notebook's saved outputs, for a person.

Every output is read through :func:`jupyter_jcli.outputs.notebook.read_notebook_output`, then
cut to a few lines with a note saying how to read the rest. A MIME bundle holding an image is
described (type, byte size, pixel size); one holding ``text/plain`` shows that text (asked for
explicitly, so a pandas table reads as its plain-text form rather than as HTML source); any
other bundle shows its automatically selected representation.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click
import orjson

from jupyter_jcli.cli._render import (
    describe_image,
    output_command,
    output_summary,
    source_label,
    strip_ansi,
)
from jupyter_jcli.errors import SCHEMA_VERSION, JcliError

__all__ = ["SHOW_MAX_CHARACTERS", "SHOW_MAX_LINES", "show_document", "show_text"]

SHOW_MAX_LINES = 12
"""Lines printed per output before the rest is left to ``j-cli notebook output``."""
SHOW_MAX_CHARACTERS = 2_000
"""Characters read per text output (the ``limit`` of the text window)."""
SHOW_LINE_WIDTH = 120
"""Longest line printed; longer lines end with ``…``."""

_RASTERS = ("image/png", "image/jpeg", "image/webp", "image/gif")
_PLAIN = "text/plain"

Reader = Callable[..., dict[str, Any]]


def _cells_to_show(file_arg: str, cells: Sequence[int]) -> tuple[dict[str, Any], list[int]]:
    from jupyter_jcli.cli._cells import summarize_cells

    summary = summarize_cells(file_arg)
    if cells:
        return summary, list(dict.fromkeys(cells))
    return summary, [c["cell_index"] for c in summary["cells"] if c.get("output_count")]


def show_document(file_arg: str, cells: Sequence[int]) -> dict[str, Any]:
    """The ``-j`` document of ``show``: the output listing of every cell shown.

    Returns:
        ``{"schema_version": 1, "status": "ok", "source": {...}, "cell_count",
        "cells": [list_notebook_outputs response, or an error document, ...]}``.

    Raises:
        JcliError: the codes of ``summarize_cells`` when the file cannot be read at all.
    """
    from jupyter_jcli.outputs.notebook import list_notebook_outputs

    summary, indexes = _cells_to_show(file_arg, cells)
    listings: list[dict[str, Any]] = []
    for index in indexes:
        try:
            listings.append(list_notebook_outputs(file_arg, index))
        except JcliError as err:
            listings.append({**err.to_dict(), "cell_index": index})
    return {
        "schema_version": SCHEMA_VERSION,
        "status": "ok",
        "source": summary["source"],
        "cell_count": summary["cell_count"],
        "cells": listings,
    }


def show_text(file_arg: str, cells: Sequence[int]) -> None:
    """Print the tour: per cell, its first source line and each output, cut short.

    Raises:
        JcliError: the codes of ``summarize_cells`` when the file cannot be read at all;
            errors of single cells or outputs are printed in place and the tour goes on.
    """
    from jupyter_jcli.outputs.notebook import list_notebook_outputs, read_notebook_output

    summary, indexes = _cells_to_show(file_arg, cells)
    by_index = {c["cell_index"]: c for c in summary["cells"]}
    click.echo(
        f"{file_arg}: {summary['cell_count']} cells, showing {len(indexes)} with outputs "
        f"(at most {SHOW_MAX_LINES} lines per output)"
    )
    for index in indexes:
        cell = by_index.get(index, {})
        click.echo("")
        click.echo(click.style(f"── cell {index} ({cell.get('cell_type', '?')})", bold=True))
        if cell.get("first_line"):
            click.echo(f"   {cell['first_line']}")
        try:
            listing = list_notebook_outputs(file_arg, index)
        except JcliError as err:
            click.echo(f"   error {err.code}: {err.message}")
            continue
        if listing["source"].get("mapping") not in (None, "direct"):
            click.echo(f"   ({source_label(listing['source'])})")
        if not listing["outputs"]:
            click.echo("   (no outputs)")
        for entry in listing["outputs"]:
            for line in _output_lines(file_arg, index, entry, read_notebook_output):
                click.echo(f"   {line}")
    quoted = shlex.quote(file_arg)
    click.echo("")
    click.echo(f"every cell:         j-cli notebook cells {quoted}")
    click.echo(f"one cell's outputs: j-cli notebook outputs {quoted} --cell N")
    click.echo(
        f"save an image:      j-cli notebook output {quoted} --cell N --output K --save F.png"
    )
    click.echo(f"JSON for agents:    j-cli -j notebook output {quoted} --cell N --output K")


def _output_lines(file_arg: str, cell: int, entry: Mapping[str, Any], read: Reader) -> list[str]:
    index = int(entry["output_index"])
    output_type = entry.get("output_type")
    head = f"[{index}] {output_type}"
    if "problem" in entry:
        return [f"{head}: {output_summary(entry)}"]
    try:
        if output_type == "stream":
            result = read(file_arg, cell, index, limit=SHOW_MAX_CHARACTERS)
            return [f"{head} {result.get('name')}:", *_text_block(result, file_arg, cell, index)]
        if output_type == "error":
            result = read(file_arg, cell, index)
            return [f"{head}:", *_traceback_block(result, file_arg, cell, index)]
        types = list(entry.get("available_mime_types") or [])
        if output_type == "execute_result" and entry.get("execution_count") is not None:
            head += f" Out[{entry['execution_count']}]"
        if any(mime in types for mime in _RASTERS):
            result = read(file_arg, cell, index)
            extra = _also(types, result["selected"]["mime_type"])
            return [f"{head}: {describe_image(result['selected'])}{extra}"]
        if _PLAIN in types:
            result = read(file_arg, cell, index, mime_type=_PLAIN, limit=SHOW_MAX_CHARACTERS)
            mime_args = ("--mime", _PLAIN)
        else:
            result = read(file_arg, cell, index)
            mime_args = ("--mime", str(result["selected"]["mime_type"]))
    except JcliError as err:
        return [f"{head}: error {err.code}: {err.message}"]
    selected = result["selected"]
    head += f" {selected['mime_type']}{_also(types, selected['mime_type'])}:"
    if selected.get("encoding") == "json":
        text = orjson.dumps(selected.get("data"), option=orjson.OPT_INDENT_2).decode()
        return [head, *_cut(text, None, output_command(file_arg, cell, index, *mime_args))]
    return [head, *_text_block(selected, file_arg, cell, index, mime_args)]


def _also(types: Sequence[str], chosen: str) -> str:
    others = [mime for mime in types if mime != chosen]
    return f" (also {', '.join(others)})" if others else ""


def _text_block(
    window: Mapping[str, Any],
    file_arg: str,
    cell: int,
    index: int,
    mime_args: tuple[str, ...] = (),
) -> list[str]:
    command = output_command(file_arg, cell, index, *mime_args)
    total = window.get("total_characters")
    cut_characters = total if window.get("truncated") else None
    return _cut(strip_ansi(str(window.get("data", ""))), cut_characters, command)


def _traceback_block(result: Mapping[str, Any], file_arg: str, cell: int, index: int) -> list[str]:
    lines = [f"{result.get('ename')}: {result.get('evalue')}"]
    traceback = "\n".join(strip_ansi(str(line)) for line in result.get("traceback") or [])
    tail = traceback.splitlines()[-(SHOW_MAX_LINES - 1) :]
    lines.extend(_clip(line) for line in tail)
    if len(traceback.splitlines()) > len(tail):
        lines.append(
            f"… (last lines of the traceback; all: {output_command(file_arg, cell, index)})"
        )
    return lines


def _cut(text: str, total_characters: object, command: str) -> list[str]:
    """At most ``SHOW_MAX_LINES`` lines of ``text``, then a note naming what was left out.

    ``total_characters`` is set when ``text`` is only the first page of a longer text.
    """
    lines = text.splitlines() or [""]
    shown = [_clip(line) for line in lines[:SHOW_MAX_LINES]]
    if isinstance(total_characters, int):
        shown.append(
            f"… showing {len(shown)} lines of {total_characters:,} characters; "
            f"read it all: {command}"
        )
    elif len(lines) > SHOW_MAX_LINES:
        shown.append(f"… {len(lines) - SHOW_MAX_LINES} more lines; read it all: {command}")
    return shown


def _clip(line: str) -> str:
    return line if len(line) <= SHOW_LINE_WIDTH else line[: SHOW_LINE_WIDTH - 1] + "…"
