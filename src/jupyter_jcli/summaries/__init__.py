"""Cell summaries: written by a model in batches, cached by content hash, with fallbacks.

- :func:`summarize_cells` returns ``{key: Summary}`` for cells: a valid cached summary as is,
  the others from the model (the official ``anthropic`` SDK, imported lazily; model
  ``claude-haiku-4-5`` unless the caller or ``JUPYTER_MCP_SUMMARY_MODEL`` names another;
  credentials and base URL resolved by the SDK), many cells per request.
- Without credentials, with ``JUPYTER_MCP_DISABLE_SUMMARIES=1`` or on any API failure, a cell
  gets a deterministic fallback computed from the cell itself, its texts starting with ``*``
  and its ``fallback_reason`` saying why. These paths never raise.
- The cache lives in the notebook: ``cell.metadata.jupyter_mcp.summary`` =
  ``{"hash", "tldr", "description", "output_summary", "model"}``, valid while ``hash`` equals
  the cell's :func:`summary_key` (sha256 of type, source and outputs, volatile fields
  ignored). :func:`cached_summary` and :func:`with_cached_summary` are pure functions on cell
  dicts; :func:`write_summary_cache` writes a notebook file through the document model.

Nothing here writes on its own: :func:`summarize_cells` reads cells and returns summaries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

if TYPE_CHECKING:
    from jupyter_jcli.summaries._cache import (
        CACHE_FIELD,
        CacheEntry,
        cache_entry,
        cached_summary,
        with_cached_summary,
    )
    from jupyter_jcli.summaries._fallback import fallback_summary
    from jupyter_jcli.summaries._file import write_summary_cache
    from jupyter_jcli.summaries._keys import SUMMARY_KEY_LENGTH, summary_key
    from jupyter_jcli.summaries._llm import DISABLE_ENV
    from jupyter_jcli.summaries._model import (
        DESCRIPTION_MAX,
        FALLBACK_MARK,
        OUTPUT_SUMMARY_MAX,
        TLDR_MAX,
        FallbackReason,
        Summary,
        SummaryDict,
        SummarySource,
    )
    from jupyter_jcli.summaries._summarize import (
        DEFAULT_MAX_REQUESTS,
        DEFAULT_MODEL,
        DEFAULT_TIMEOUT,
        MODEL_ENV,
        resolve_model,
        summarize_cells,
    )

_PUBLIC = {
    "_cache": "CACHE_FIELD CacheEntry cache_entry cached_summary with_cached_summary",
    "_fallback": "fallback_summary",
    "_file": "write_summary_cache",
    "_keys": "SUMMARY_KEY_LENGTH summary_key",
    "_llm": "DISABLE_ENV",
    "_model": (
        "DESCRIPTION_MAX FALLBACK_MARK OUTPUT_SUMMARY_MAX TLDR_MAX FallbackReason Summary "
        "SummaryDict SummarySource"
    ),
    "_summarize": (
        "DEFAULT_MAX_REQUESTS DEFAULT_MODEL DEFAULT_TIMEOUT MODEL_ENV resolve_model summarize_cells"
    ),
}
"""Per submodule, the public names it gives; each is imported on first access (PEP 562)."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
