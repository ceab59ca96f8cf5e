"""``summarize_cells``: detailed cell summaries (tldr, description, output summary), cached.

The work is :mod:`jupyter_jcli.summaries`: a valid summary cached in the cell's metadata is
used as is; the other cells are summarized by the model in batched requests (the official
``anthropic`` SDK, its own credential resolution) or, without credentials, with
``JUPYTER_MCP_DISABLE_SUMMARIES=1`` or on any API failure, get deterministic fallbacks whose
texts start with ``*``. New model summaries are then written into the notebook's cell
metadata (``metadata.jupyter_mcp.summary``, keyed by the cell's content hash) through
:func:`~jupyter_jcli.summaries.write_summary_cache`: atomically, after the outside-edit check,
without an undo snapshot (a cache is not a user edit). Fallbacks are never written, so a
later call with credentials still asks the model.
"""

from __future__ import annotations

import copy
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_jcli._json import json_fields
from jupyter_jcli.notebook.document import CellView
from jupyter_jcli.summaries import Summary, SummarySource
from jupyter_jcli.workbench._envelope import result_document
from jupyter_jcli.workbench._load import open_document

__all__ = ["CellSummary", "SummarizeOutcome", "summarize_cells"]

_DEFAULT_TYPES = ("code", "markdown")


@dataclass(frozen=True)
class CellSummary:
    """The summary of one cell.

    Attributes:
        index, name, cell_type: the cell's address, as in
            :class:`~jupyter_jcli.workbench._mutations.CellRef`.
        rev: the cell's rev when summarized.
        summary: the summary (tldr, description, output summary, source, model, cached,
            fallback reason).
    """

    index: int
    name: str
    cell_type: str
    rev: str
    summary: Summary

    @property
    def source(self) -> SummarySource:
        """``"llm"`` (the model wrote it, now or earlier) or ``"fallback"`` (texts start ``*``)."""
        return self.summary.source

    @property
    def cached(self) -> bool:
        """Whether the summary came from the cell's metadata cache (no request made for it)."""
        return self.summary.cached

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return json_fields(self, "index name cell_type rev source cached summary")


@dataclass(frozen=True)
class SummarizeOutcome:
    """What :func:`summarize_cells` returns.

    Attributes:
        path: the file addressed (absolute).
        model: the model asked (for cells not cached and not fallen back before asking).
        cells: one :class:`CellSummary` per selected cell, in selection order.
        written: names of the cells whose summary cache was written to the file, in
            document order (empty when nothing new came from the model, and for a
            py:percent ``path``, see :func:`~jupyter_jcli.summaries.write_summary_cache`).
        pair_out_of_sync: as :class:`~jupyter_jcli.workbench.Overview` has it.
    """

    path: Path
    model: str
    cells: tuple[CellSummary, ...]
    written: tuple[str, ...]
    pair_out_of_sync: Mapping[str, Any] | None = field(default=None, kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (``counts``: cells by ``llm``, ``fallback`` and ``cached``)."""
        counts = Counter(cell.source for cell in self.cells)
        return result_document(
            "summarize_cells",
            self,
            "model counts written pair_out_of_sync? cells",
            counts={
                "llm": counts.get("llm", 0),
                "fallback": counts.get("fallback", 0),
                "cached": sum(1 for cell in self.cells if cell.cached),
            },
        )


def summarize_cells(
    path: str | os.PathLike[str],
    *,
    names: Sequence[str] | None = None,
    model: str | None = None,
) -> SummarizeOutcome:
    """Summarize cells (tldr, description, output summary) and cache the model's summaries.

    Args:
        path: an ``.ipynb``, or a py:percent ``.py`` paired with one (then nothing is
            cached: the summaries would land in the text file).
        names: the cells to summarize, in this order (duplicates once); ``None``: every
            code and Markdown cell (raw cells only when named).
        model: the model id; default ``$JUPYTER_MCP_SUMMARY_MODEL`` or
            ``claude-haiku-4-5`` (:func:`jupyter_jcli.summaries.resolve_model`).

    Returns:
        The :class:`SummarizeOutcome`. Never fails for want of credentials or on an API
        failure: those cells get fallbacks (``source="fallback"``, ``fallback_reason``).

    Raises:
        NotebookError: ``CELL_NOT_FOUND`` (a name), ``NOTEBOOK_WRITE_FAILED`` (writing the
            cache) and the read codes of :meth:`Document.load
            <jupyter_jcli.notebook.document.Document.load>`.
    """
    from jupyter_jcli import summaries

    document = open_document(path)
    if names is None:
        selected = [view for view in document.cells if view.cell_type in _DEFAULT_TYPES]
    else:
        selected = [document.cell(name) for name in dict.fromkeys(names)]
    cells = document.cell_dicts()
    # copies of the chosen cells only (the model is shared with the warm cache)
    chosen_cells: list[dict[str, Any]] = [copy.deepcopy(dict(cells[v.index])) for v in selected]
    chosen_model = summaries.resolve_model(model)
    found = summaries.summarize_cells(chosen_cells, model=chosen_model) if selected else {}
    keys = [summaries.summary_key(cell) for cell in chosen_cells]
    fresh = {key: summary for key, summary in found.items() if _to_cache(summary)}
    written = summaries.write_summary_cache(document.path, fresh) if fresh else ()
    return SummarizeOutcome(
        path=document.path,
        model=chosen_model,
        cells=tuple(_cell(view, found[key]) for view, key in zip(selected, keys, strict=True)),
        written=written,
        pair_out_of_sync=document.pair_out_of_sync,
    )


def _to_cache(summary: Summary) -> bool:
    return summary.source == "llm" and not summary.cached


def _cell(view: CellView, summary: Summary) -> CellSummary:
    return CellSummary(view.index, view.name, view.cell_type, view.rev, summary)
