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

__all__ = [
    "CACHE_FIELD",
    "DEFAULT_MAX_REQUESTS",
    "DEFAULT_MODEL",
    "DEFAULT_TIMEOUT",
    "DESCRIPTION_MAX",
    "DISABLE_ENV",
    "FALLBACK_MARK",
    "MODEL_ENV",
    "OUTPUT_SUMMARY_MAX",
    "SUMMARY_KEY_LENGTH",
    "TLDR_MAX",
    "CacheEntry",
    "FallbackReason",
    "Summary",
    "SummaryDict",
    "SummarySource",
    "cache_entry",
    "cached_summary",
    "fallback_summary",
    "resolve_model",
    "summarize_cells",
    "summary_key",
    "with_cached_summary",
    "write_summary_cache",
]
