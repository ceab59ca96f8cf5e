"""``j-cli notebook show``: a short tour of a notebook's saved outputs, for a person.

The file is loaded once (:func:`jupyter_jcli.outputs.notebook.open_notebook`) and every output
read from it in memory (the tour is linear in the notebook's size), then
cut to a few lines with a note saying how to read the rest. A MIME bundle holding an image is
described (type, byte size, pixel size); one holding ``text/plain`` shows that text (asked for
explicitly, so a pandas table reads as its plain-text form rather than as HTML source); any
other bundle shows its automatically selected representation.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from jupyter_jcli.cli._clip import clip
from jupyter_jcli.cli._emit import echo, ok_document
from jupyter_jcli.cli._render import (
    counted,
    describe_image,
    j_cli,
    output_command,
    output_summary,
    pretty_json,
    source_label,
    strip_ansi,
)
from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.outputs import MAX_TRANSPORT_BYTES, serialize_json

if TYPE_CHECKING:
    from jupyter_jcli.outputs.notebook import NotebookOutputs
    from jupyter_jcli.workbench import SavedCellSummary

__all__ = [
    "SHOW_DEFAULT_LIMIT",
    "SHOW_MAX_CHARACTERS",
    "SHOW_MAX_DOCUMENT_BYTES",
    "SHOW_MAX_LINES",
    "SHOW_MAX_TOTAL_CHARACTERS",
    "SHOW_SOURCE_MAX_CHARACTERS",
    "SHOW_SOURCE_MAX_LINES",
    "show_document",
    "show_text",
    "source_lines",
]

SHOW_MAX_LINES = 12
"""Lines printed per output before the rest is left to ``j-cli notebook output``."""
SHOW_MAX_CHARACTERS = 2_000
"""Characters read per text output (the ``limit`` of the text window)."""
SHOW_SOURCE_MAX_LINES = 60
"""Lines of a cell's source printed before the rest is left to ``j-cli notebook read``."""
SHOW_SOURCE_MAX_CHARACTERS = 6_000
"""Characters of a cell's source printed before the rest is left to ``j-cli notebook read``."""
SHOW_MAX_TOTAL_CHARACTERS = 100_000
"""Characters one page of the text tour prints (cells past it are the next page's; a first
cell longer than this is cut, naming the command that lists its outputs)."""
SHOW_MAX_DOCUMENT_BYTES = 1_000_000
"""Bytes of cell listings one page of the ``-j`` document holds (a first cell whose listing
alone is larger keeps only the outputs that fit, with a notice)."""
_LISTING_MAX_BYTES = SHOW_MAX_DOCUMENT_BYTES - 1_000
"""Bytes of one cell's listing (room left for the ``notice`` of a cut one)."""
SHOW_DEFAULT_LIMIT = 100
"""Cells one page shows at most (``--limit``), as for ``j-cli notebook overview``."""
SHOW_LINE_WIDTH = 120
"""Longest line printed; longer lines end with ``…``."""

_RASTERS = ("image/png", "image/jpeg", "image/webp", "image/gif")
_PLAIN = "text/plain"

Reader = Callable[..., dict[str, Any]]


def _cells_to_show(
    loaded: NotebookOutputs, cells: Sequence[str]
) -> tuple[dict[int, SavedCellSummary], list[int]]:
    """The summaries and indexes of the cells to show: those asked for (names or indexes,
    each once, in the order first given), else every cell with outputs.

    Raises:
        JcliError: ``CELL_NOT_FOUND`` for a requested cell the file does not have, before
            anything is shown.
    """
    from jupyter_jcli.cli._cell_ref import resolve_cell_ref
    from jupyter_jcli.workbench import saved_cell_names, saved_cell_summary

    names = saved_cell_names(loaded)
    if cells:
        path = str(loaded.path)
        indexes = list(dict.fromkeys(resolve_cell_ref(ref, names, path=path) for ref in cells))
        return {i: saved_cell_summary(loaded, i, names) for i in indexes}, indexes
    summaries = {i: saved_cell_summary(loaded, i, names) for i in range(loaded.cell_count)}
    return summaries, [i for i, summary in summaries.items() if summary.get("output_count")]


def _page(
    loaded: NotebookOutputs, indexes: Sequence[int], start: int, limit: int
) -> tuple[list[int], list[int]]:
    """The cells of the page (from the first whose index is ``start`` or more, at most
    ``limit``) and the ones after it, both in showing order.

    Raises:
        UsageError: ``USAGE_ERROR`` when ``start`` is past the file's last cell.
    """
    from jupyter_jcli.workbench import check_start

    check_start(start, loaded.cell_count, label="--start")
    rest = [index for index in indexes if index >= start]
    return rest[:limit], rest[limit:]


def _next_command(
    file_arg: str, cells: Sequence[str], left: Sequence[int], *, json: bool
) -> str | None:
    """The command showing the cells ``left`` (``None`` when none is): ``--start`` at the
    first of them for the default tour, the remaining ``--cell`` indexes for a chosen list."""
    if not left:
        return None
    pages = [w for index in left for w in ("--cell", index)] if cells else ["--start", left[0]]
    return j_cli(*(["-j"] if json else []), "notebook", "show", file_arg, *pages)


def show_document(
    file_arg: str, cells: Sequence[str], *, start: int = 0, limit: int = SHOW_DEFAULT_LIMIT
) -> dict[str, Any]:
    """The ``-j`` document of ``show``: the output listing of each cell of one page.

    The file is parsed once (:func:`jupyter_jcli.outputs.notebook.open_notebook`). A page
    holds the cells to show from index ``start``, at most ``limit`` of them and, after the
    first, only while their listings stay within :data:`SHOW_MAX_DOCUMENT_BYTES`; a first
    cell whose listing alone is larger (a cell holding 100,000 outputs) is the page's only
    cell and lists only the outputs that fit, with ``omitted_outputs`` and a ``notice``
    naming ``j-cli -j notebook outputs`` and ``j-cli -j notebook output`` for the rest.

    Returns:
        ``{"schema_version": 1, "status": "ok", "source": {...}, "cell_count",
        "cells": [list_outputs response (cut as above), or an error document with
        ``cell_index``, ...],
        "omitted_cells": <cells to show after this page>, "next_call": <the ``j-cli -j
        notebook show`` command of the next page, or null>}``.

    Raises:
        JcliError: the file codes of ``open_notebook``; ``CELL_NOT_FOUND`` for a requested
            cell the file does not have; ``USAGE_ERROR`` for a ``start`` past the last
            cell; ``OUTPUT_TOO_LARGE`` when the document exceeds the
            transport bound (a first cell's listing alone; the message names
            ``j-cli -j notebook output`` to read its outputs one by one).
    """
    from jupyter_jcli.workbench import saved_outputs as open_notebook
    from jupyter_jcli.workbench import saved_outputs_source

    loaded = open_notebook(file_arg)
    _, indexes = _cells_to_show(loaded, cells)
    page, left = _page(loaded, indexes, start, limit)
    listings: list[dict[str, Any]] = []
    used = 0
    for position, index in enumerate(page):
        try:
            listing = loaded.list_outputs_head(index, max_bytes=_LISTING_MAX_BYTES)
        except JcliError as err:
            listing = {**err.to_dict(), "cell_index": index}
        omitted = listing.pop("omitted_outputs", 0)
        size = len(serialize_json(listing))
        if listings and (omitted or used + size > SHOW_MAX_DOCUMENT_BYTES):
            left = [*page[position:], *left]
            break
        if omitted:  # the page's first cell, alone over the bound
            listings.append(_cut_listing(listing, omitted, file_arg, index))
            left = [*page[position + 1 :], *left]
            break
        listings.append(listing)
        used += size
    document = ok_document(
        source=saved_outputs_source(loaded),
        cell_count=loaded.cell_count,
        cells=listings,
        omitted_cells=len(left),
        next_call=_next_command(file_arg, cells, left, json=True),
    )
    size = len(serialize_json(document))
    if size > MAX_TRANSPORT_BYTES:
        raise JcliError(
            ErrorCode.OUTPUT_TOO_LARGE,
            f"The listing of cell {page[0]} would be {size} bytes, over the transport "
            f"limit of {MAX_TRANSPORT_BYTES} bytes; page its outputs with "
            "`j-cli -j notebook output FILE --cell N --output K`.",
            {"bytes": size, "max_transport_bytes": MAX_TRANSPORT_BYTES},
        )
    return document


def _cut_listing(
    listing: Mapping[str, Any], omitted: int, file_arg: str, index: int
) -> dict[str, Any]:
    """``listing`` (the first outputs of a cell too large for a page alone: a cell holding
    100,000 outputs) with ``omitted_outputs`` (how many were left out) and a ``notice``
    naming the commands that list them all and read each one."""
    kept = len(listing["outputs"])
    total = kept + omitted
    listed = j_cli("-j", "notebook", "outputs", file_arg, "--cell", index)
    one = j_cli("-j", "notebook", "output", file_arg, "--cell", index)
    notice = (
        f"outputs holds the first {kept:,} of this cell's {counted(total, 'output')} "
        f"(a page holds {SHOW_MAX_DOCUMENT_BYTES:,} bytes); all of them: {listed}; "
        f"one of them: {one} --output K"
    )
    return {**listing, "omitted_outputs": omitted, "notice": notice}


def show_text(
    file_arg: str, cells: Sequence[str], *, start: int = 0, limit: int = SHOW_DEFAULT_LIMIT
) -> None:
    """Print one page of the tour: per cell, its source (whole up to
    :data:`SHOW_SOURCE_MAX_LINES` lines and :data:`SHOW_SOURCE_MAX_CHARACTERS` characters)
    and each output, cut short; the page holds the cells to show from index ``start``, at
    most ``limit``, within :data:`SHOW_MAX_TOTAL_CHARACTERS` (a first cell longer than that
    is cut, saying how to read its outputs), and ends with the next page's command.

    The file is parsed once; every listing and read works on it in memory, and only for
    the lines printed.

    Raises:
        JcliError: the file codes of ``open_notebook`` and ``CELL_NOT_FOUND`` for a requested
            cell the file does not have (``USAGE_ERROR`` for a ``start`` past the last
            cell), all before anything is printed; errors of single
            cells or outputs are printed in place and the tour goes on.
    """
    from jupyter_jcli.workbench import saved_outputs as open_notebook

    loaded = open_notebook(file_arg)
    by_index, indexes = _cells_to_show(loaded, cells)
    page, left = _page(loaded, indexes, start, limit)
    body: list[str] = []
    used = 0
    shown = 0
    for position, index in enumerate(page):
        room = SHOW_MAX_TOTAL_CHARACTERS - used
        block, whole = _bounded(_cell_lines(file_arg, loaded, index, by_index[index]), room)
        if not whole and shown:
            left = [*page[position:], *left]
            break
        body.extend(block)
        used += sum(len(line) + 1 for line in block)
        shown += 1
        if not whole:
            outputs = j_cli("notebook", "outputs", file_arg, "--cell", index)
            body.append(
                f"   … cell {index} cut at the page's {SHOW_MAX_TOTAL_CHARACTERS:,} "
                f"characters; its outputs: {outputs}"
            )
            left = [*page[position + 1 :], *left]
            break
    what = "with outputs" if not cells else "asked for"
    count = str(shown) if shown == len(indexes) else f"{shown} of {len(indexes)}"
    echo(
        f"{loaded.path}: {counted(loaded.cell_count, 'cell')}, showing {count} {what} "
        f"(at most {SHOW_MAX_LINES} lines per output)"
    )
    from jupyter_jcli.cli._document_render import pair_lines
    from jupyter_jcli.workbench import saved_outputs_source

    for line in pair_lines(saved_outputs_source(loaded).get("pair_out_of_sync")):
        echo(line)
    for line in body:
        echo(line)
    following = _next_command(file_arg, cells, left, json=False)
    if following is not None:
        echo("")
        echo(
            f"… {counted(len(left), 'more cell', 'more cells')} {what} not shown (a page holds "
            f"at most {limit} cells and {SHOW_MAX_TOTAL_CHARACTERS:,} characters); "
            f"the next page: {following}"
        )
    quoted = shlex.quote(file_arg)
    echo("")
    echo(f"every cell:         j-cli notebook cells {quoted}")
    echo(f"one cell's outputs: j-cli notebook outputs {quoted} --cell CELL")
    echo(f"save an image:      j-cli notebook output {quoted} --cell CELL --output K --save F.png")
    echo(f"JSON for agents:    j-cli -j notebook output {quoted} --cell CELL --output K")
    echo("(CELL: a name or an index)")


def _bounded(lines: Iterator[str], room: int) -> tuple[list[str], bool]:
    """The lines of ``lines`` that fit in ``room`` characters (each with its line break),
    and whether that is all of them (the rest is never generated)."""
    taken: list[str] = []
    used = 0
    for line in lines:
        used += len(line) + 1
        if used > room:
            return taken, False
        taken.append(line)
    return taken, True


def _cell_lines(
    file_arg: str, loaded: NotebookOutputs, index: int, cell: SavedCellSummary
) -> Iterator[str]:
    """One cell of the tour: its header, source and outputs, line by line."""
    yield ""
    label = f"── cell {index} {cell.get('name')} ({cell.get('cell_type', '?')})"
    yield click.style(label, bold=True)
    for line in source_lines(file_arg, str(cell.get("name")), loaded.cells[index]):
        yield f"   {line}"
    try:
        listing = loaded.list_outputs_head(index, max_bytes=_LISTING_MAX_BYTES)
    except JcliError as err:
        yield f"   error {err.code}: {err.message}"
        return
    if listing["source"].get("mapping") not in (None, "direct"):
        yield f"   ({source_label(listing['source'])})"
    if not listing["outputs"]:
        yield "   (no outputs)"
    for entry in listing["outputs"]:
        for line in _output_lines(file_arg, index, entry, loaded.read_output):
            yield f"   {line}"
    if listing["omitted_outputs"]:
        outputs = j_cli("notebook", "outputs", file_arg, "--cell", index)
        more = counted(listing["omitted_outputs"], "more output", "more outputs")
        yield f"   … {more} not listed; its outputs: {outputs}"


def source_lines(file_arg: str, name: str, cell: Mapping[str, Any]) -> list[str]:
    """A cell's whole source as lines (control sequences stripped), or, past
    :data:`SHOW_SOURCE_MAX_LINES` lines or :data:`SHOW_SOURCE_MAX_CHARACTERS` characters,
    its beginning and a last line saying what was cut and the command that reads it all."""
    from jupyter_jcli.notebook.io import cell_source

    text = strip_ansi(cell_source(dict(cell)))
    lines = text.splitlines()
    shown: list[str] = []
    used = 0
    for line in lines[:SHOW_SOURCE_MAX_LINES]:
        room = SHOW_SOURCE_MAX_CHARACTERS - used
        if len(line) > room:
            shown.append(line[:room] + "…")
            used += room
            break
        shown.append(line)
        used += len(line) + 1
    else:
        if len(lines) <= SHOW_SOURCE_MAX_LINES:
            return shown
    from jupyter_jcli.cli._document_render import read_command

    command = read_command(file_arg, name, whole=len(text))
    shown.append(
        f"… source cut: showing {len(shown)} of {len(lines)} lines "
        f"({min(used, len(text)):,} of {len(text):,} characters); read it all: {command}"
    )
    return shown


def _output_lines(file_arg: str, cell: int, entry: Mapping[str, Any], read: Reader) -> list[str]:
    index = int(entry["output_index"])
    output_type = entry.get("output_type")
    head = f"[{index}] {output_type}"
    if "problem" in entry:
        return [f"{head}: {output_summary(entry)}"]
    try:
        if output_type == "stream":
            stream = read(cell, index, limit=SHOW_MAX_CHARACTERS)["stream"]
            return [f"{head} {stream.get('name')}:", *_text_block(stream, file_arg, cell, index)]
        if output_type == "error":
            error = read(cell, index)["error"]
            return [f"{head}:", *_traceback_block(error, file_arg, cell, index)]
        types = list(entry.get("available_mime_types") or [])
        if output_type == "execute_result" and entry.get("execution_count") is not None:
            head += f" Out[{entry['execution_count']}]"
        if any(mime in types for mime in _RASTERS):
            result = read(cell, index)
            extra = _also(types, result["selected"]["mime_type"])
            return [f"{head}: {describe_image(result['selected'])}{extra}"]
        if _PLAIN in types:
            result = read(cell, index, mime_type=_PLAIN, limit=SHOW_MAX_CHARACTERS)
            mime_args = ("--mime", _PLAIN)
        else:
            result = read(cell, index)
            mime_args = ("--mime", str(result["selected"]["mime_type"]))
    except JcliError as err:
        return [f"{head}: error {err.code}: {err.message}"]
    selected = result["selected"]
    head += f" {selected['mime_type']}{_also(types, selected['mime_type'])}:"
    if selected.get("encoding") == "json":
        text = pretty_json(selected.get("data"))
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
    cut_characters = total if "next_offset" in window else None
    return _cut(strip_ansi(str(window.get("data", ""))), cut_characters, command)


def _traceback_block(error: Mapping[str, Any], file_arg: str, cell: int, index: int) -> list[str]:
    lines = [f"{error.get('ename')}: {error.get('evalue')}"]
    traceback = "\n".join(strip_ansi(str(line)) for line in error.get("traceback") or [])
    tail = traceback.splitlines()[-(SHOW_MAX_LINES - 1) :]
    lines.extend(clip(line, SHOW_LINE_WIDTH) for line in tail)
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
    shown = [clip(line, SHOW_LINE_WIDTH) for line in lines[:SHOW_MAX_LINES]]
    if isinstance(total_characters, int):
        shown.append(
            f"… showing {counted(len(shown), 'line')} of {total_characters:,} characters; "
            f"read it all: {command}"
        )
    elif len(lines) > SHOW_MAX_LINES:
        shown.append(f"… {len(lines) - SHOW_MAX_LINES} more lines; read it all: {command}")
    return shown
