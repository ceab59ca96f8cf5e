"""Writing model summaries into a notebook file's cell metadata, through the document model."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jupyter_jcli.summaries._cache import CACHE_FIELD, cache_entry, cached_summary
from jupyter_jcli.summaries._keys import summary_key
from jupyter_jcli.summaries._model import Summary

__all__ = ["write_summary_cache"]


def write_summary_cache(
    path: str | os.PathLike[str],
    summaries: Mapping[str, Summary],
    *,
    cache_dir: Path | None = None,
) -> tuple[str, ...]:
    """Cache model summaries in a notebook's cell metadata (``metadata.jupyter_mcp.summary``).

    Loads the notebook with :class:`jupyter_jcli.notebook.document.Document` and, for every
    cell whose current content key has a model summary in ``summaries`` and no valid cached
    one yet, stores the entry with :meth:`Document.set_cell_metadata`: under the notebook's
    write lock, after checking for outside edits, atomically, without an undo snapshot.
    A cell edited by someone else in between is skipped (its rev changed). Fallback summaries
    are never written. Nothing is written when there is nothing new to cache.

    A notebook paired with a py:percent file (``path`` either file of the pair) is not
    written: every write to a pair updates both files, and jupytext would put each cached
    summary on the ``# %%`` line of its cell in the text file, the file people read and diff.
    Its summaries are recomputed (or kept by the caller) instead.

    Args:
        path: the ``.ipynb`` (or a py:percent file paired with one).
        summaries: ``{key: Summary}``, as returned by :func:`summarize_cells`.
        cache_dir: the document's snapshot cache base folder (where its write lock lives);
            default ``jupyter_jcli.notebook.snapshots.cache_dir()``.

    Returns:
        The names of the cells whose metadata was written, in document order (empty for a
        paired notebook).

    Raises:
        NotebookError: ``FILE_NOT_FOUND``, ``FILE_TYPE_UNSUPPORTED``, ``NOTEBOOK_READ_FAILED``,
            ``NOTEBOOK_PAIR_NOT_FOUND``, ``NOTEBOOK_WRITE_FAILED`` (see ``Document``).
    """
    from jupyter_jcli.notebook.store import open_notebook

    document = open_notebook(path, cache_dir=cache_dir)  # in the active store (--store)
    if document.paired_py is not None:
        return ()
    cells: list[dict[str, Any]] = document.notebook_dict()["cells"]
    values: dict[str, tuple[str, Any]] = {}
    for view, cell in zip(document.cells, cells, strict=True):
        key = summary_key(cell)
        summary = summaries.get(key)
        entry = cache_entry(summary) if summary is not None else None
        if entry is None or cached_summary(cell, key) is not None:
            continue
        values[view.name] = (view.rev, dict(entry))
    if not values:
        return ()
    return document.set_cell_metadata(CACHE_FIELD, values)
