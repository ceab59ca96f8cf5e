"""The ``.ipynb`` a write starts from, read exactly, and the bytes the write produces.

A mutation or a cache write edits cells and re-serialises the file. Cells and fields it does
not own must come back exactly as stored, so the write works on values that reproduce the file
(:func:`write_base`):

- fast proof: if the read path's values (orjson) reproduce the file's bytes in some JSON style
  (``_jsonstyle.detect_style``), no number was rounded in reading, and they are used as they
  are. This holds for every file Jupyter wrote and costs nothing extra: the style is needed
  for the write anyway;
- otherwise the file is parsed again with the lossless parser (``_exact``: integers beyond 64
  bits, number literals Python would spell differently or could not hold), which also lets
  the style be detected for files whose numbers are not spelled as Python writes them.

The edited cells that came from the file are the exact cells; the document model callers see
is re-read from the written bytes with the read path's parser (see ``Document``).

An nbformat 3 file is edited on its nbformat 4 upgrade (as read) and written back as
nbformat 3 (``_v3write``): its format, notebook metadata (``name``, ``signature``) and every
untouched cell stay as stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._jsonstyle import JUPYTER_STYLE, JsonStyle, detect_style, dumps_notebook
from jupyter_jcli.notebook._layout import CellLayout, cell_layout, reproduces, splice
from jupyter_jcli.notebook._v3write import V3Original, read_v3, render_v3
from jupyter_jcli.notebook.io import parse_notebook

__all__ = ["WriteBase", "render_ipynb", "write_base"]


@dataclass(frozen=True)
class WriteBase:
    """The ``.ipynb`` as a write sees it.

    Attributes:
        notebook: the file's notebook-level fields (nbformat 4 layout: an nbformat 3 file
            upgraded), with exact values.
        cells: the cells the edit applies to, aligned with the document model's cells:
            exact values for every cell that came from the ``.ipynb`` unchanged.
        style: the file's JSON style (Jupyter's when none reproduces it).
        v3: the stored nbformat 3 document, or ``None`` for an nbformat 4 file.
        twins: for each of ``cells``, the index of the ``.ipynb`` cell it equals (``None``
            for a pair's cell rebuilt from the text file): which stored nbformat 3 cell
            to write back.
        layout: where ``cells`` lie in the file's bytes (``_layout``), when the style
            reproduces the file and is indented: a write then serialises only the cells it
            changes. ``None``: every write serialises the whole file.
        plain: ``notebook`` and ``cells`` are the read path's own values (the fast proof).
    """

    notebook: dict[str, Any]
    cells: list[dict[str, Any]]
    style: JsonStyle
    v3: V3Original | None
    twins: list[int | None]
    layout: CellLayout | None = None
    plain: bool = False


def write_base(raw: bytes, path: Path, model: dict[str, Any], *, paired: bool) -> WriteBase:
    """The base of a write of the ``.ipynb`` whose bytes are ``raw``.

    Args:
        raw: the ``.ipynb``'s bytes, as read under the write lock.
        path: that file, for error details.
        model: the document model read from those bytes (for a pair: jupytext's combination,
            whose cells equal to the ``.ipynb``'s are replaced by their exact values).
        paired: whether ``model`` is a pair's combination rather than ``raw`` itself.

    Raises:
        NotebookError: ``NOTEBOOK_READ_FAILED`` as ``io.parse_notebook``.
    """
    plain = parse_notebook(raw, path=path) if paired else model
    v3 = read_v3(raw, path) if _maybe_v3(plain) else None
    if v3 is None:
        style = detect_style(raw, plain, reproduces=reproduces)
        if style is not None:
            cells = list(model["cells"])
            layout = None if paired else cell_layout(raw, style, len(cells))
            return WriteBase(plain, cells, style, None, [], layout, plain=not paired)
    exact = parse_notebook(raw, path=path, exact=True)
    found = detect_style(raw, exact if v3 is None else v3.document, reproduces=reproduces)
    cells, twins = _align(model["cells"], plain["cells"], exact["cells"], same_objects=not paired)
    layout = None
    if found is not None and v3 is None and not paired:
        layout = cell_layout(raw, found, len(cells))
    return WriteBase(exact, cells, found or JUPYTER_STYLE, v3, twins, layout)


def render_ipynb(
    base: WriteBase, cells: list[dict[str, Any]], origins: Sequence[int | None]
) -> bytes:
    """The ``.ipynb`` bytes holding ``cells`` under the base's notebook-level fields.

    Args:
        base: from :func:`write_base`.
        cells: the cells after the edit (nbformat 4).
        origins: for each of ``cells``, the index in ``base.cells`` it came from, ``None`` for
            a new cell (used to write an nbformat 3 file's untouched cells as stored).

    Raises:
        NotebookError: ``NOTEBOOK_WRITE_FAILED`` (details ``reason``
            ``"nbformat_3_conversion"``) if nbformat cannot convert a cell back to v3.
    """
    if base.v3 is not None:
        stored = [None if origin is None else base.twins[origin] for origin in origins]
        try:
            document = render_v3(base.v3, base.notebook["cells"], cells, stored)
        except Exception as err:  # nbformat's converters raise anything from KeyError up
            raise NotebookError(
                ErrorCode.NOTEBOOK_WRITE_FAILED,
                f"nbformat could not convert the edited cells back to nbformat 3 "
                f"({type(err).__name__}: {err}).",
                {"reason": "nbformat_3_conversion"},
            ) from err
        return dumps_notebook(document, base.style)
    if base.layout is not None:
        spliced = splice(base.layout, base.style, base.cells, cells, origins)
        if spliced is not None:
            return spliced
    on_disk = dict(base.notebook)
    on_disk["cells"] = cells
    return dumps_notebook(on_disk, base.style)


def _maybe_v3(plain: dict[str, Any]) -> bool:
    """The read path marks every upgraded nbformat 3 file with ``orig_nbformat`` 3 (an
    nbformat 4 file may carry it too, from an earlier upgrade)."""
    metadata = plain.get("metadata")
    return isinstance(metadata, dict) and metadata.get("orig_nbformat") == 3


def _align(
    model: list[dict[str, Any]],
    plain: list[dict[str, Any]],
    exact: list[dict[str, Any]],
    *,
    same_objects: bool,
) -> tuple[list[dict[str, Any]], list[int | None]]:
    """``model``'s cells with exact values: a cell equal to a cell of ``plain`` is replaced by
    its exact twin; a pair's cell that jupytext rebuilt (its inputs come from the text file)
    gets the exact outputs of the ``.ipynb`` cell whose outputs it carries. Also returns,
    for each cell, the index of the ``.ipynb`` cell it equals (``None``: none)."""
    if same_objects and len(model) == len(exact):
        return list(exact), list(range(len(exact)))
    cells: dict[bytes, list[int]] = {}
    outputs: dict[bytes, list[int]] = {}
    for index, cell in enumerate(plain):
        cells.setdefault(_key(cell), []).append(index)
        if cell.get("outputs"):
            outputs.setdefault(_key(cell["outputs"]), []).append(index)
    aligned: list[dict[str, Any]] = []
    twins: list[int | None] = []
    for cell in model:
        same = cells.get(_key(cell))
        twins.append(same.pop(0) if same else None)
        if twins[-1] is not None:
            aligned.append(exact[twins[-1]])
            continue
        carried = outputs.get(_key(cell["outputs"])) if cell.get("outputs") else None
        if carried:
            twin = exact[carried.pop(0)]
            aligned.append({**cell, "outputs": twin.get("outputs", cell["outputs"])})
        else:
            aligned.append(cell)
    return aligned, twins


def _key(value: object) -> bytes:
    """A content key of a plain (orjson-read) value; ``b""`` for one orjson cannot write."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return b""
