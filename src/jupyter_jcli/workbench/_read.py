"""``read_cells``: sources and condensed outputs of chosen cells, within one character budget.

How the budget (characters of source text plus condensed output text, over all cells) is
spent:

1. at most ``budget // MIN_CELL_SHARE`` cells are shown (at least one); the others are listed
   in ``omitted_cells`` with the call that reads them;
2. sources get up to half the budget (all of it they need when they fit), split max-min
   fair: short sources are whole, long ones share the rest and are cut head-first with a
   marker giving the omitted size and the ``read_cells`` call that shows the whole cell;
3. the outputs of code cells share the rest, max-min fair, through
   :func:`jupyter_jcli.condense.condense_outputs` (whose cuts name the exact
   ``read_notebook_output cell_index=C output_index=K offset=N limit=L`` call, cell indexes
   being those of ``path``); what the outputs leave unused goes back to cut sources;
4. rasters come back as downscaled images (at most ``max_images`` over the whole call); they
   are not counted in the character budget.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from jupyter_jcli._json import json_fields
from jupyter_jcli.errors import UsageError
from jupyter_jcli.notebook import address_fields
from jupyter_jcli.notebook.document import CellView
from jupyter_jcli.workbench._envelope import condensed_dict, result_document
from jupyter_jcli.workbench._load import Loaded, load, outputs_of

if TYPE_CHECKING:
    from jupyter_jcli.condense import CondensedOutputs

__all__ = [
    "DEFAULT_READ_BUDGET",
    "DEFAULT_READ_MAX_IMAGES",
    "MAX_NEXT_NAMES",
    "MIN_CELL_SHARE",
    "ReadCell",
    "ReadCellsResult",
    "read_cells",
    "read_loaded",
]

DEFAULT_READ_BUDGET = 20_000
"""Default characters of source and condensed output text per call (about 5,000 tokens)."""
DEFAULT_READ_MAX_IMAGES = 8
"""Default number of images returned per call; later rasters are described in the text."""
MIN_CELL_SHARE = 200
"""Characters each shown cell can count on; fewer cells are shown when the budget is small."""
MAX_NEXT_NAMES = 20
"""Names a ``next_call`` lists at most (a call by names; a slice's continues as a range)."""


@dataclass(frozen=True)
class ReadCell:
    """One cell as :func:`read_cells` shows it.

    Attributes:
        index: physical zero-based position (the ``cell`` of ``read_notebook_output``).
        name: the cell's name.
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
        rev: the cell's rev.
        source: the source, whole or cut (then it ends with a marker line naming the
            ``read_cells`` call that reads it whole, or is ``…`` when its share of the budget
            cannot hold that marker).
        source_omitted_characters: characters of source left out (0 when whole).
        output_count: saved outputs in the file.
        outputs: the condensed outputs, or ``None`` (no outputs, or no budget left for them:
            see ``output_count``).
    """

    index: int
    name: str
    cell_type: str
    rev: str
    source: str
    source_omitted_characters: int
    output_count: int
    outputs: CondensedOutputs | None

    JSON_KEYS: ClassVar[str] = (
        "index name cell_type rev source source_omitted_characters output_count truncated outputs"
    )
    """The keys of :meth:`to_dict`, in order."""

    @property
    def truncated(self) -> bool:
        """Whether anything of this cell was cut or left out."""
        if self.source_omitted_characters:
            return True
        if self.outputs is None:
            return self.output_count > 0
        return self.outputs.truncated

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; images as base64 with MIME type, byte and pixel sizes."""
        return json_fields(self, self.JSON_KEYS, outputs=condensed_dict(self.outputs))


@dataclass(frozen=True)
class ReadCellsResult:
    """What :func:`read_cells` returns.

    Attributes:
        path: the file read (absolute); output hints use its cell indexes.
        structure_rev: the notebook's structure rev when read.
        budget: the character budget the call was fitted to.
        characters: characters of source and output text returned (<= ``budget``).
        cells: the cells shown, in the order asked for.
        omitted_cells: names of the selected cells left out for lack of budget, in order.
        next_call: the ``read_cells`` call that goes on with the omitted cells (an index
            range ``start=I stop=J`` when the cells were chosen by a slice or all, else at
            most :data:`MAX_NEXT_NAMES` names), or ``None``.
        pair_out_of_sync: as :class:`~jupyter_jcli.workbench.Overview` has it.
    """

    path: Path
    structure_rev: str
    budget: int
    characters: int
    cells: tuple[ReadCell, ...]
    omitted_cells: tuple[str, ...]
    next_call: str | None
    pair_out_of_sync: Mapping[str, Any] | None = field(default=None, kw_only=True)

    JSON_KEYS: ClassVar[str] = (
        "pair_out_of_sync? structure_rev budget characters truncated image_count cells"
        " omitted_cells next_call"
    )
    """The keys of :meth:`to_dict`, in order."""

    @property
    def truncated(self) -> bool:
        """Whether anything selected was cut or left out."""
        return bool(self.omitted_cells) or any(cell.truncated for cell in self.cells)

    @property
    def image_count(self) -> int:
        """Images returned over all cells."""
        return sum(len(c.outputs.images) for c in self.cells if c.outputs is not None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document."""
        return result_document("read_cells", self, self.JSON_KEYS)


def read_cells(
    path: str | os.PathLike[str],
    *,
    names: Sequence[str] | None = None,
    start: int | None = None,
    stop: int | None = None,
    budget: int = DEFAULT_READ_BUDGET,
    include_images: bool = True,
    max_images: int = DEFAULT_READ_MAX_IMAGES,
    cache_dir: Path | None = None,
) -> ReadCellsResult:
    """Sources and condensed outputs of cells chosen by name or by an index slice. Reads only.

    Args:
        path: an ``.ipynb``, or a py:percent ``.py`` paired with one (outputs from the
            ``.ipynb``).
        names: the cells to show, in this order (duplicates shown once). Excludes
            ``start``/``stop``.
        start: first index of a Python-style slice of cells (negative counts from the end).
        stop: end (exclusive) of that slice. Neither names nor slice: every cell.
        budget: characters of source and output text over all cells (>= 1); see the module
            docstring for how it is spent.
        include_images: return rasters as images (else they are described in the text).
        max_images: the most images returned over all cells (>= 0).
        cache_dir: snapshot cache base folder (unused by reads; accepted for symmetry).

    Returns:
        The :class:`ReadCellsResult`.

    Raises:
        UsageError: ``USAGE_ERROR`` for names together with a slice, a budget below 1 or a
            negative ``max_images``.
        NotebookError: ``CELL_NOT_FOUND`` for an unknown name, and the read codes of
            :meth:`Document.load`.
    """
    check_read_arguments(names, start, stop, budget, max_images)
    return read_loaded(
        load(path, cache_dir=cache_dir),
        names=names,
        start=start,
        stop=stop,
        budget=budget,
        include_images=include_images,
        max_images=max_images,
    )


def check_read_arguments(
    names: Sequence[str] | None, start: int | None, stop: int | None, budget: int, max_images: int
) -> None:
    """Refuse the arguments :func:`read_cells` refuses, before anything is read.

    Raises:
        UsageError: as :func:`read_cells`.
    """
    if names is not None and (start is not None or stop is not None):
        raise UsageError("Give cell names or an index slice (start/stop), not both.")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise UsageError(f"budget must be a positive integer, got {budget!r}.", {"budget": budget})
    if isinstance(max_images, bool) or not isinstance(max_images, int) or max_images < 0:
        raise UsageError(f"max_images must be >= 0, got {max_images!r}.")


def read_loaded(
    loaded: Loaded,
    *,
    names: Sequence[str] | None = None,
    start: int | None = None,
    stop: int | None = None,
    budget: int = DEFAULT_READ_BUDGET,
    include_images: bool = True,
    max_images: int = DEFAULT_READ_MAX_IMAGES,
) -> ReadCellsResult:
    """:func:`read_cells` of an already loaded notebook (pure: reads ``loaded`` only).

    Raises:
        UsageError: as :func:`read_cells`.
        NotebookError: ``CELL_NOT_FOUND`` for an unknown name.
    """
    from jupyter_jcli.condense import allocate  # condensing: only on a read

    check_read_arguments(names, start, stop, budget, max_images)
    document = loaded.document
    if names is not None:
        selected = [document.cell(name) for name in dict.fromkeys(names)]
    else:
        selected = list(document.cells[start:stop])
    room_cells = max(1, budget // MIN_CELL_SHARE)
    shown, omitted = selected[:room_cells], selected[room_cells:]
    cell_dicts = document.cell_dicts()
    outputs = {view.index: outputs_of(cell_dicts[view.index]) for view in shown}

    sources_total = sum(len(view.source) for view in shown)
    source_room = sources_total if sources_total <= budget // 2 else budget // 2
    source_shares = allocate([len(view.source) for view in shown], source_room)
    with_outputs = [i for i, view in enumerate(shown) if _has_outputs(view, outputs)]
    output_room = budget - sum(
        min(len(v.source), s) for v, s in zip(shown, source_shares, strict=True)
    )
    condensed = _condense_all(
        [outputs[shown[i].index] for i in with_outputs],
        [shown[i].index for i in with_outputs],
        output_room,
        include_images=include_images,
        max_images=max_images,
    )
    used_by_outputs = sum(len(c.text) for c in condensed if c is not None)
    if sources_total > source_room:  # give what the outputs left to the cut sources
        source_shares = allocate([len(v.source) for v in shown], budget - used_by_outputs)
    by_position = dict(zip(with_outputs, condensed, strict=True))
    cells = []
    for position, (view, share) in enumerate(zip(shown, source_shares, strict=True)):
        text, cut = _cut_source(view, share, budget)
        cells.append(
            ReadCell(
                **address_fields(view),
                source=text,
                source_omitted_characters=cut,
                output_count=len(outputs[view.index]),
                outputs=by_position.get(position),
            )
        )
    characters = sum(
        len(c.source) + (len(c.outputs.text) if c.outputs is not None else 0) for c in cells
    )
    next_call = _next_call(omitted, by_name=names is not None, budget=budget) if omitted else None
    return ReadCellsResult(
        path=document.path,
        structure_rev=document.structure_rev,
        budget=budget,
        characters=characters,
        cells=tuple(cells),
        omitted_cells=tuple(view.name for view in omitted),
        next_call=next_call,
        pair_out_of_sync=document.pair_out_of_sync,
    )


def _next_call(omitted: Sequence[CellView], *, by_name: bool, budget: int) -> str:
    """The ``read_cells`` call that goes on with the omitted cells, bounded in size: an index
    range for a slice (the omitted cells of a slice are its last ones), else the first
    :data:`MAX_NEXT_NAMES` omitted names (``omitted_cells`` lists them all)."""
    same_budget = "" if budget == DEFAULT_READ_BUDGET else f" budget={budget}"
    if not by_name:
        return f"read_cells start={omitted[0].index} stop={omitted[-1].index + 1}{same_budget}"
    listed = ",".join(view.name for view in omitted[:MAX_NEXT_NAMES])
    rest = len(omitted) - MAX_NEXT_NAMES
    more = f" (then the other {rest} names of omitted_cells)" if rest > 0 else ""
    return f"read_cells names={listed}{same_budget}{more}"


def _has_outputs(view: CellView, outputs: Mapping[int, Sequence[Any]]) -> bool:
    return view.cell_type == "code" and bool(outputs[view.index])


def _condense_all(
    outputs: Sequence[Sequence[Any]],
    indexes: Sequence[int],
    room: int,
    *,
    include_images: bool,
    max_images: int,
) -> list[CondensedOutputs | None]:
    """Condense each cell's outputs with a max-min fair share of ``room`` (two passes)."""
    from jupyter_jcli.condense import UNBOUNDED, allocate, condense_outputs

    shares = allocate([UNBOUNDED] * len(outputs), room)
    results: list[CondensedOutputs | None] = []
    allowances: list[int] = []
    images_left = max_images
    for cell_outputs_, index, share in zip(outputs, indexes, shares, strict=True):
        if share < 1:
            results.append(None)
            allowances.append(0)
            continue
        first = condense_outputs(
            cell_outputs_,
            budget=share,
            cell_index=index,
            include_images=include_images,
            max_images=images_left,
        )
        results.append(first)
        allowances.append(images_left)
        images_left -= len(first.images)
    demands = [UNBOUNDED if r is None or r.truncated else len(r.text) for r in results]
    second = allocate(demands, room)
    for position, (result, share) in enumerate(zip(results, second, strict=True)):
        if demands[position] != UNBOUNDED or share <= shares[position] or share < 1:
            continue
        got = len(result.images) if result is not None else allowances[position]
        results[position] = condense_outputs(
            outputs[position],
            budget=share,
            cell_index=indexes[position],
            include_images=include_images,
            max_images=got,
        )
    return results


def _cut_source(view: CellView, share: int, budget: int) -> tuple[str, int]:
    """The source within ``share`` characters, and how many were left out.

    A cut source ends with a marker line naming the ``read_cells`` call that reads it whole;
    when ``share`` cannot hold that marker, the source is shown as ``…`` (cut, all of it
    omitted: ``source_omitted_characters`` says how much) and the front end says how to
    read it.
    """
    source = view.source
    if len(source) <= share:
        return source, 0
    marker = (
        f"\n[… {{omitted}} characters of source omitted; read the whole cell: "
        f"read_cells names={view.name} budget={max(budget, 2 * len(source) + MIN_CELL_SHARE)}]"
    )
    room = share - len(marker.format(omitted=len(source)))
    if room < 0:  # no room for the marker: an ellipsis says the source was cut
        return ("…" if share >= 1 else ""), len(source)
    cut = source[:room]
    newline = cut.rfind("\n")
    if newline > room // 2:
        cut = cut[:newline]
    omitted = len(source) - len(cut)
    text = cut + marker.format(omitted=omitted)
    return (text if cut else text.lstrip("\n")), omitted
