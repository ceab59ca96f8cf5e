"""The summary cache in cell metadata: pure reads and writes on cell dicts.

A model summary is stored at ``cell.metadata.jupyter_mcp.summary`` as
``{"hash": key, "tldr": str, "description": str, "output_summary": str, "model": str}``,
``hash`` being the cell's :func:`~jupyter_jcli.summaries.summary_key` when the summary was
written. It is valid only while the cell's current key equals ``hash``: any change to the
type, source or outputs invalidates it, and nothing else does. Fallback summaries are never
cached (they are cheap, and caching them would block a model summary later).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, TypedDict

from jupyter_jcli.notebook.names import METADATA_KEY
from jupyter_jcli.summaries._keys import summary_key
from jupyter_jcli.summaries._model import (
    DESCRIPTION_MAX,
    OUTPUT_SUMMARY_MAX,
    TLDR_MAX,
    Summary,
    one_line,
)

__all__ = ["CACHE_FIELD", "CacheEntry", "cache_entry", "cached_summary", "with_cached_summary"]

CACHE_FIELD = "summary"
"""The entry under ``cell.metadata.jupyter_mcp`` that holds the cached summary."""


class CacheEntry(TypedDict):
    """The stored form of a cached summary (``cell.metadata.jupyter_mcp.summary``)."""

    hash: str
    tldr: str
    description: str
    output_summary: str
    model: str


def _section(cell: Mapping[str, Any]) -> Mapping[str, Any] | None:
    metadata = cell.get("metadata")
    if not isinstance(metadata, Mapping):
        return None
    section = metadata.get(METADATA_KEY)
    return section if isinstance(section, Mapping) else None


def cached_summary(cell: Mapping[str, Any], key: str | None = None) -> Summary | None:
    """The cell's cached model summary, if it still describes the cell's content.

    Args:
        cell: an nbformat cell dict.
        key: the cell's :func:`summary_key`, if already computed (else computed here).

    Returns:
        A :class:`Summary` with ``source="llm"`` and ``cached=True`` (texts re-bounded to the
        model's limits), or ``None`` when there is no entry, it is malformed, or its ``hash``
        is not the cell's current key.
    """
    section = _section(cell)
    entry = section.get(CACHE_FIELD) if section is not None else None
    if not isinstance(entry, Mapping):
        return None
    current = key if key is not None else summary_key(cell)
    if entry.get("hash") != current:
        return None
    texts = [entry.get(field) for field in ("tldr", "description", "output_summary")]
    tldr, description, output_summary = (text if isinstance(text, str) else None for text in texts)
    if tldr is None or description is None or output_summary is None or not tldr.strip():
        return None
    model = entry.get("model")
    return Summary(
        key=current,
        tldr=one_line(tldr, TLDR_MAX),
        description=one_line(description, DESCRIPTION_MAX),
        output_summary=one_line(output_summary, OUTPUT_SUMMARY_MAX),
        source="llm",
        model=model if isinstance(model, str) else None,
        cached=True,
    )


def cache_entry(summary: Summary) -> CacheEntry | None:
    """The metadata entry that caches ``summary``, or ``None`` for a fallback (never cached)."""
    if summary.source != "llm":
        return None
    return {
        "hash": summary.key,
        "tldr": summary.tldr,
        "description": summary.description,
        "output_summary": summary.output_summary,
        "model": summary.model or "",
    }


def with_cached_summary(cell: Mapping[str, Any], summary: Summary) -> dict[str, Any]:
    """A copy of ``cell`` whose ``metadata.jupyter_mcp.summary`` caches ``summary``.

    The input is not modified; every other metadata key is kept. A fallback summary, or one
    whose key is not the cell's current key, leaves the copy's metadata as it was.

    Args:
        cell: an nbformat cell dict.
        summary: the summary to cache.

    Returns:
        The new cell dict (metadata copied, other fields shared with ``cell``).
    """
    result = dict(cell)
    entry = cache_entry(summary)
    if entry is None or summary.key != summary_key(cell):
        return result
    metadata = cell.get("metadata")
    new_metadata = copy.deepcopy(dict(metadata)) if isinstance(metadata, Mapping) else {}
    section = new_metadata.get(METADATA_KEY)
    new_section = dict(section) if isinstance(section, Mapping) else {}
    new_section[CACHE_FIELD] = dict(entry)
    new_metadata[METADATA_KEY] = new_section
    result["metadata"] = new_metadata
    return result
