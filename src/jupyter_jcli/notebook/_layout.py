"""Writes in proportion to the change: where each cell lies in the file's bytes.

A file whose JSON style was detected (``_jsonstyle.detect_style``: the whole file equals the
serialisation of its model) and is indented has a fixed layout: the ``cells`` list is the
line ``<indent>"cells": [`` followed by one object per cell, each opening with the line
``<indent x2>{`` and closing with the first line that is exactly ``<indent x2>}`` after it
(the cell's own lines are indented deeper, and every line break is structural: strings
escape ``\\n``), cells separated by ``,``. :func:`cell_layout` finds those spans with a few
byte searches and checks the separators between them.

With the layout, an edit re-serialises only the cells it changed (``dumps_nested`` at
depth 2) and copies every other cell's bytes (:func:`splice`), which gives exactly the bytes
a whole-notebook serialisation would. After the write, :func:`spliced_cells` reads the new
file's cells back from its bytes: a cell whose bytes equal an old cell's takes that cell's
parsed value (equal JSON text parses to equal values), only the others are parsed. The
layout remembers the bytes :func:`splice` last made from it (:class:`Spliced`: where each
cell lies and which old cell it was copied from), so reading them back after the write
finds and compares nothing.

The same spans let a large file be parsed one cell at a time (:func:`parse_apart`): orjson
copies its whole input into a parse buffer of its own, so a whole-file parse holds the
bytes, that buffer and the parsed values at once (3x the file at peak); cell by cell the
buffer is one cell's size.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._jsonstyle import JsonStyle, dumps_nested, dumps_notebook

__all__ = [
    "CellLayout",
    "Spliced",
    "cell_layout",
    "parse_apart",
    "reproduces",
    "splice",
    "spliced_cells",
]

_CELLS_LETTER_ESCAPE = re.compile(rb"\\u00(?:6[35cC]|73)")
"""A ``\\uXXXX`` escape of a letter of ``cells`` (a key may be spelled with them)."""


@dataclass(frozen=True)
class Spliced:
    """Bytes :func:`splice` made, with how it made them.

    Attributes:
        data: the bytes.
        spans: ``(start, end)`` of each cell's JSON object in ``data``, in order.
        copied: for each cell, the index of the old cell whose bytes were copied, or
            ``None`` for a cell serialised anew.
    """

    data: bytes
    spans: tuple[tuple[int, int], ...]
    copied: tuple[int | None, ...]


@dataclass(frozen=True)
class CellLayout:
    """The byte spans of a file's cells.

    Attributes:
        raw: the file's bytes.
        spans: ``(start, end)`` of each cell's JSON object, in order (``raw[start:end]``
            runs from its ``{`` to its ``}``).
        separator: the bytes between two cells (``,``, a line break, two indents).
        made: the last bytes :func:`splice` made from this layout (at most one: a
            :class:`Spliced`), so reading them back finds and compares nothing. Kept
            beside the bytes, never in them: a bytes subclass would copy the whole file.
    """

    raw: bytes
    spans: tuple[tuple[int, int], ...]
    separator: bytes
    made: list[Spliced] = field(default_factory=list, compare=False, repr=False)

    def chunk(self, index: int) -> memoryview:
        """The bytes of cell ``index`` (a view: nothing is copied)."""
        start, end = self.spans[index]
        return memoryview(self.raw)[start:end]


def cell_layout(raw: bytes, style: JsonStyle, count: int | None = None) -> CellLayout | None:
    """The layout of ``raw`` (reproduced by ``style``), or ``None`` when the style is not
    indented, there are no cells, the bytes do not have the layout (module docstring) or
    it does not hold ``count`` cells (when given)."""
    if style.indent is None or count == 0:
        return None
    newline = b"\r\n" if style.crlf else b"\n"
    one, two = b" " * style.indent, b" " * (2 * style.indent)
    opening = newline + one + b'"cells": [' + newline + two
    found = raw.find(opening)
    if found < 0:
        return None
    start = found + len(opening)
    closing = newline + two + b"}"
    separator = b"," + newline + two
    end_of_list = newline + one + b"]"
    spans: list[tuple[int, int]] = []
    while True:
        if raw[start : start + 1] != b"{":
            return None
        end = raw.find(closing, start)
        if end < 0:
            return None
        end += len(closing)
        spans.append((start, end))
        if raw.startswith(separator, end):
            start = end + len(separator)
        elif raw.startswith(end_of_list, end):
            break
        else:
            return None
    if count is not None and len(spans) != count:
        return None
    return CellLayout(raw, tuple(spans), separator)


def parse_apart(raw: bytes) -> dict[str, Any] | None:
    """The JSON document ``raw`` parsed one cell at a time, equal to ``orjson.loads(raw)``,
    or ``None`` when the cells cannot be parsed apart (the caller parses the whole file).

    The indent is read from the file's second line (``{`` then an indented key, as an
    indented ``json.dumps`` writes) and the cells found as :func:`cell_layout` finds them.
    The result is exact however the spans were found: the file without its cells
    (``"cells": []``) must parse, with one ``"cells"`` key in it, and each span must parse
    alone as one object; then the whole file is that document with those objects as its
    cells (a value in the place of the empty list). Anything else, and a cell orjson refuses
    (a lone surrogate escape), gives ``None``.
    """
    crlf = raw.startswith(b"{\r\n")
    if not (crlf or raw.startswith(b"{\n")):
        return None
    line = raw[(3 if crlf else 2) : 66]
    indent = len(line) - len(line.lstrip(b" "))
    if indent == 0:
        return None
    layout = cell_layout(raw, JsonStyle(indent=indent, crlf=crlf))
    if layout is None:
        return None
    view = memoryview(raw)
    outline = b"".join((view[: layout.spans[0][0]], view[layout.spans[-1][1] :]))
    if outline.count(b'"cells"') != 1 or _CELLS_LETTER_ESCAPE.search(outline) is not None:
        return None  # no second "cells" key, even spelled with escapes
    try:
        document = orjson.loads(outline)
        if not isinstance(document, dict) or document.get("cells") != []:
            return None
        cells = [orjson.loads(view[start:end]) for start, end in layout.spans]
    except orjson.JSONDecodeError:
        return None
    if not all(isinstance(cell, dict) for cell in cells):
        return None
    document["cells"] = cells
    return document


def reproduces(raw: bytes, notebook: dict[str, Any], style: JsonStyle) -> bool:
    """Whether ``dumps_notebook(notebook, style) == raw``, compared one cell at a time when
    ``raw`` has the style's layout (so the whole serialisation is never held: a cell's
    bytes are ``dumps_nested`` at depth 2, the rest is the notebook without cells)."""
    cells, indent = notebook.get("cells"), style.indent
    layout = None
    if isinstance(cells, list) and cells and indent is not None:
        layout = cell_layout(raw, style, len(cells))
    if layout is None or indent is None or not isinstance(cells, list):
        return dumps_notebook(notebook, style) == raw
    newline = b"\r\n" if style.crlf else b"\n"
    one, two = b" " * indent, b" " * (2 * indent)
    empty = dumps_notebook({**notebook, "cells": []}, style)
    marker = newline + one + b'"cells": []'
    at = empty.find(marker)
    if at < 0 or empty.find(marker, at + 1) >= 0:
        return dumps_notebook(notebook, style) == raw
    key = at + len(marker) - 2
    head, tail = layout.spans[0][0], layout.spans[-1][1]
    if raw[:head] != empty[:key] + b"[" + newline + two:
        return False
    if raw[tail:] != newline + one + b"]" + empty[key + 2 :]:
        return False
    return all(
        dumps_nested(cell, style, 2) == layout.chunk(index) for index, cell in enumerate(cells)
    )


def splice(
    layout: CellLayout,
    style: JsonStyle,
    old: Sequence[dict[str, Any]],
    cells: Sequence[dict[str, Any]],
    origins: Sequence[int | None],
) -> bytes | None:
    """The file holding ``cells``: the bytes of every cell that is still the object at its
    origin in ``old`` (the cells ``layout`` describes) are copied, the others serialised
    (``None`` for an empty list: the whole file is serialised instead)."""
    if not cells:
        return None
    raw, separator = layout.raw, layout.separator
    # one join of the whole file: runs of cells copied in their old order are one slice
    # of the old bytes (the separators between them are the layout's own)
    pieces: list[bytes | tuple[int, int]] = [(0, layout.spans[0][0])]
    spans: list[tuple[int, int]] = []
    copied: list[int | None] = []
    position = layout.spans[0][0]
    for index, (cell, origin) in enumerate(zip(cells, origins, strict=True)):
        if index:
            position += len(separator)
        if origin is not None and old[origin] is cell:
            start, end = layout.spans[origin]
            last = pieces[-1]
            if index and copied[-1] == origin - 1 and isinstance(last, tuple):
                pieces[-1] = (last[0], end)
            else:
                if index:
                    pieces.append(separator)
                pieces.append((start, end))
            copied.append(origin)
        else:
            chunk = dumps_nested(cell, style, 2)
            start, end = 0, len(chunk)
            pieces.extend((separator, chunk) if index else (chunk,))
            copied.append(None)
        spans.append((position, position + end - start))
        position += end - start
    pieces.append((layout.spans[-1][1], len(raw)))
    view = memoryview(raw)
    data = b"".join(piece if isinstance(piece, bytes) else view[slice(*piece)] for piece in pieces)
    layout.made[:] = [Spliced(data, tuple(spans), tuple(copied))]
    return data


def spliced_cells(
    old: CellLayout, model: Sequence[dict[str, Any]], raw: bytes, style: JsonStyle, path: Path
) -> tuple[list[dict[str, Any]], CellLayout] | None:
    """The cells of the new file ``raw`` as the read path parses them, and its layout:
    a cell whose bytes equal those of an old cell at the matching position (walking both
    lists, with one cell of look-ahead either way for an added or removed cell) takes that
    cell of ``model`` (the old cells as parsed), the others are parsed. ``None`` when the
    new bytes have no layout (the caller parses the whole file). The bytes :func:`splice`
    last made from ``old`` (the same object) take the copied cells as they are and parse
    the others only."""
    spliced = next((made for made in old.made if made.data is raw), None)
    if spliced is not None:
        layout = CellLayout(raw, spliced.spans, old.separator)
        return [
            model[origin] if origin is not None else _parse_cell(bytes(layout.chunk(index)), path)
            for index, origin in enumerate(spliced.copied)
        ], layout
    new = cell_layout(raw, style)
    if new is None:
        return None
    cells: list[dict[str, Any]] = []
    j = 0
    for i in range(len(new.spans)):
        chunk = new.chunk(i)
        if j < len(old.spans) and chunk == old.chunk(j):
            cells.append(model[j])
            j += 1
        elif j + 1 < len(old.spans) and chunk == old.chunk(j + 1):
            cells.append(model[j + 1])  # old cell j was removed
            j += 2
        else:
            cells.append(_parse_cell(bytes(chunk), path))
            if i + 1 < len(new.spans) and j < len(old.spans) and new.chunk(i + 1) == old.chunk(j):
                continue  # cell i was added before old cell j
            j += 1
    return cells, new


def _parse_cell(chunk: bytes, path: Path) -> dict[str, Any]:
    """One cell's JSON as ``io.parse_notebook`` reads it (orjson; the standard library for
    escaped lone surrogates, which orjson refuses)."""
    try:
        value: Any = orjson.loads(chunk)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(chunk.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise NotebookError(
                ErrorCode.NOTEBOOK_READ_FAILED,
                f"{path}: a cell jupyter-jcli just wrote does not read back ({err}).",
                {"path": str(path)},
            ) from err
    if not isinstance(value, dict):
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"{path}: a cell jupyter-jcli just wrote is not an object.",
            {"path": str(path)},
        )
    return value
