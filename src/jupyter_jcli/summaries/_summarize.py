"""``summarize_cells``: cached summaries, then batched model requests, then fallbacks."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jupyter_jcli.errors import UsageError
from jupyter_jcli.summaries._cache import cached_summary
from jupyter_jcli.summaries._fallback import fallback_summary
from jupyter_jcli.summaries._keys import canonical_outputs, joined_source, summary_key
from jupyter_jcli.summaries._llm import (
    Failure,
    make_client,
    request_summaries,
    summaries_disabled,
)
from jupyter_jcli.summaries._model import Summary
from jupyter_jcli.summaries._prompt import build_batches

if TYPE_CHECKING:
    import anthropic

__all__ = [
    "DEFAULT_MAX_REQUESTS",
    "DEFAULT_MODEL",
    "DEFAULT_TIMEOUT",
    "MODEL_ENV",
    "resolve_model",
    "summarize_cells",
]

DEFAULT_MODEL = "claude-haiku-4-5"
"""The model asked for summaries unless the caller or :data:`MODEL_ENV` names another."""
MODEL_ENV = "JUPYTER_MCP_SUMMARY_MODEL"
"""Environment variable overriding :data:`DEFAULT_MODEL`."""
DEFAULT_TIMEOUT = 60.0
"""Seconds one request may take (per attempt; a client built here retries once)."""
DEFAULT_MAX_REQUESTS = 8
"""Requests one call may send; cells beyond get fallbacks (``request_limit``)."""


def resolve_model(model: str | None = None) -> str:
    """The model to use: ``model``, else :data:`MODEL_ENV`, else :data:`DEFAULT_MODEL`."""
    if model:
        return model
    return os.environ.get(MODEL_ENV, "").strip() or DEFAULT_MODEL


def _is_empty(cell: Mapping[str, Any]) -> bool:
    return not joined_source(cell).strip() and canonical_outputs(cell) == "[]"


def summarize_cells(
    cells: Sequence[Mapping[str, Any]],
    *,
    model: str | None = None,
    client: anthropic.Anthropic | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_requests: int = DEFAULT_MAX_REQUESTS,
) -> dict[str, Summary]:
    """Summaries of cells: cached when still valid, else from the model in batches.

    For each distinct content key (:func:`summary_key`): a valid cached summary
    (``cell.metadata.jupyter_mcp.summary``) is returned as is (``cached=True``); every other
    cell is summarized by the model, many cells per request (batches bounded by characters and
    cells, see ``_prompt``), at most ``max_requests`` requests. Empty cells, and every cell
    when summaries are disabled (``JUPYTER_MCP_DISABLE_SUMMARIES=1``), when the SDK finds no
    credentials or on any API failure (HTTP error, timeout, malformed answer), get a
    deterministic fallback marked with ``*`` whose ``fallback_reason`` says why. A failure
    that would repeat (credentials, unreachable or refusing API) stops the later requests of
    the call. Nothing is written: cache the model summaries with
    :func:`~jupyter_jcli.summaries.with_cached_summary` or
    :func:`~jupyter_jcli.summaries.write_summary_cache`.

    Args:
        cells: nbformat cell dicts.
        model: the model id; default :data:`MODEL_ENV` or :data:`DEFAULT_MODEL`.
        client: an ``anthropic.Anthropic`` client to use (kept open); default one built with
            the SDK's own credential and base-URL resolution, closed after the call.
        timeout: seconds per request attempt (> 0).
        max_requests: most requests sent (>= 1).

    Returns:
        ``{key: Summary}`` for every distinct key of ``cells``, in document order.

    Raises:
        UsageError: ``USAGE_ERROR`` for a non-positive ``timeout`` or ``max_requests``.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise UsageError(f"timeout must be a positive number of seconds, got {timeout!r}.")
    if isinstance(max_requests, bool) or not isinstance(max_requests, int) or max_requests < 1:
        raise UsageError(f"max_requests must be a positive integer, got {max_requests!r}.")
    chosen = resolve_model(model)
    results: dict[str, Summary] = {}
    order: list[str] = []
    pending: dict[str, Mapping[str, Any]] = {}
    for cell in cells:
        key = summary_key(cell)
        if key in pending or key in results:
            continue
        order.append(key)
        cached = cached_summary(cell, key)
        if cached is not None:
            results[key] = cached
        elif _is_empty(cell):
            results[key] = fallback_summary(cell, reason="empty_cell", key=key)
        else:
            pending[key] = cell
    if pending:
        results.update(_summarize_pending(pending, chosen, client, float(timeout), max_requests))
    return {key: results[key] for key in order}


def _summarize_pending(
    pending: dict[str, Mapping[str, Any]],
    model: str,
    client: anthropic.Anthropic | None,
    timeout: float,
    max_requests: int,
) -> dict[str, Summary]:
    def fall_back(keys: Sequence[str], failure: Failure) -> None:
        for key in keys:
            out[key] = fallback_summary(
                pending[key], reason=failure.reason, detail=failure.detail, key=key
            )

    out: dict[str, Summary] = {}
    if summaries_disabled():
        fall_back(list(pending), Failure("disabled", "JUPYTER_MCP_DISABLE_SUMMARIES is set", True))
        return out
    made = make_client(timeout) if client is None else client
    if isinstance(made, Failure):
        fall_back(list(pending), made)
        return out
    try:
        stop: Failure | None = None
        for number, batch in enumerate(build_batches(list(pending.items()))):
            if stop is None and number >= max_requests:
                stop = Failure(
                    "request_limit", f"max_requests={max_requests} requests already sent", True
                )
            if stop is not None:
                fall_back(batch.keys, stop)
                continue
            answer = request_summaries(made, batch, model=model, timeout=timeout)
            if isinstance(answer, Failure):
                fall_back(batch.keys, answer)
                stop = answer if answer.final else None
                continue
            out.update(answer.summaries)
            missing = [key for key in batch.keys if key not in answer.summaries]
            fall_back(missing, Failure("missing_entry", "no valid entry in the answer", False))
    finally:
        if client is None:
            made.close()
    return out
