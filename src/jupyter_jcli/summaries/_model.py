"""The summary data model: one :class:`Summary` per cell content key, and its text bounds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypedDict, cast

from jupyter_jcli._json import json_fields

__all__ = [
    "DESCRIPTION_MAX",
    "FALLBACK_MARK",
    "OUTPUT_SUMMARY_MAX",
    "TLDR_MAX",
    "FallbackReason",
    "Summary",
    "SummaryDict",
    "SummarySource",
    "one_line",
]

TLDR_MAX = 100
"""Longest tldr, in characters (fallback mark included)."""
DESCRIPTION_MAX = 600
"""Longest description, in characters."""
OUTPUT_SUMMARY_MAX = 400
"""Longest output summary, in characters."""
FALLBACK_MARK = "* "
"""Prefix of every fallback text, so a reader can tell it was not written by a model."""

SummarySource = Literal["llm", "fallback"]
"""Who wrote a summary: the model (``"llm"``, fresh or from the cache) or the deterministic
fallback (``"fallback"``)."""

FallbackReason = Literal[
    "empty_cell",
    "disabled",
    "no_credentials",
    "sdk_unavailable",
    "request_limit",
    "timeout",
    "connection_error",
    "api_error",
    "malformed_response",
    "missing_entry",
]
"""Why a cell got a fallback summary:

- ``empty_cell``: the cell has no source and no outputs (nothing to ask a model about);
- ``disabled``: ``JUPYTER_MCP_DISABLE_SUMMARIES`` is set;
- ``no_credentials``: the ``anthropic`` SDK resolved no credentials (or refused to build a
  client from what it found);
- ``sdk_unavailable``: the ``anthropic`` package cannot be imported;
- ``request_limit``: the call's request budget (``max_requests``) was spent on earlier cells;
- ``timeout``: the request timed out;
- ``connection_error``: the API could not be reached;
- ``api_error``: the API answered with an HTTP error (status in the detail) or the SDK failed;
- ``malformed_response``: the answer was not the JSON object asked for;
- ``missing_entry``: the answer lacked a valid entry for this cell.
"""


class SummaryDict(TypedDict):
    """JSON form of a :class:`Summary` (see :meth:`Summary.to_dict`)."""

    key: str
    tldr: str
    description: str
    output_summary: str
    source: SummarySource
    model: str | None
    cached: bool
    fallback_reason: FallbackReason | None
    fallback_detail: str | None


@dataclass(frozen=True)
class Summary:
    """A summary of one cell's content (type, source and outputs).

    Attributes:
        key: the content key it describes (:func:`~jupyter_jcli.summaries.summary_key`).
        tldr: one line, at most :data:`TLDR_MAX` characters.
        description: a few sentences, at most :data:`DESCRIPTION_MAX` characters.
        output_summary: one or two sentences on what the saved outputs show, at most
            :data:`OUTPUT_SUMMARY_MAX` characters.
        source: ``"llm"`` or ``"fallback"``. Fallback texts start with :data:`FALLBACK_MARK`.
        model: the model that wrote it (``None`` for fallbacks).
        cached: read from ``cell.metadata.jupyter_mcp.summary`` rather than computed now.
        fallback_reason: why the fallback was used (``None`` for model summaries).
        fallback_detail: a short human explanation of the reason (an HTTP status, an
            exception message), or ``None``.
    """

    key: str
    tldr: str
    description: str
    output_summary: str
    source: SummarySource
    model: str | None = None
    cached: bool = False
    fallback_reason: FallbackReason | None = None
    fallback_detail: str | None = None

    def to_dict(self) -> SummaryDict:
        """JSON-ready form."""
        return cast("SummaryDict", json_fields(self))


def one_line(text: str, limit: int) -> str:
    """``text`` with whitespace runs collapsed to one space, cut to ``limit`` characters.

    A cut text ends with ``…`` (counted in ``limit``).
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: max(0, limit - 1)].rstrip() + "…"
