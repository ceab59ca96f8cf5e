"""One summary request through the official ``anthropic`` SDK (imported lazily, here only).

Credentials are the SDK's own: an explicit client's, or what ``anthropic.Anthropic()``
resolves (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, a stored profile, workload
identity federation; see the SDK's client docstring). The base URL is the SDK's too
(``ANTHROPIC_BASE_URL``). Every SDK failure is translated here, at one boundary, into a
:class:`Failure` with a :data:`~jupyter_jcli.summaries._model.FallbackReason`; nothing raises.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jupyter_jcli.summaries._model import FallbackReason, one_line
from jupyter_jcli.summaries._prompt import SYSTEM_PROMPT, Batch, max_tokens_for, user_message
from jupyter_jcli.summaries._response import ParsedAnswer, parse_answer

if TYPE_CHECKING:
    import anthropic

__all__ = [
    "CLIENT_MAX_RETRIES",
    "DISABLE_ENV",
    "Failure",
    "make_client",
    "request_summaries",
    "summaries_disabled",
]

DISABLE_ENV = "JUPYTER_MCP_DISABLE_SUMMARIES"
"""Environment variable that turns model summaries off (``1``, ``true``, ``yes`` or ``on``)."""
CLIENT_MAX_RETRIES = 1
"""Retries of a client built here (the SDK retries 408/409/429/5xx and connection errors)."""
_DETAIL_MAX = 200


@dataclass(frozen=True)
class Failure:
    """Why a request gave no summaries.

    Attributes:
        reason: the fallback reason.
        detail: a short explanation (HTTP status, exception type and message).
        final: later requests of the same call would fail the same way (credentials missing,
            API unreachable or refusing), so they are not attempted.
    """

    reason: FallbackReason
    detail: str
    final: bool


def summaries_disabled() -> bool:
    """Whether :data:`DISABLE_ENV` is set to a true value."""
    return os.environ.get(DISABLE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _detail(text: str) -> str:
    return one_line(text, _DETAIL_MAX)


def make_client(timeout: float) -> anthropic.Anthropic | Failure:
    """A client with the SDK's own credential and base-URL resolution, or why not.

    Args:
        timeout: the request timeout, in seconds.

    Returns:
        The client, or a :class:`Failure` (``sdk_unavailable``, ``no_credentials``).
    """
    try:
        import anthropic
    except ImportError as err:
        return Failure("sdk_unavailable", _detail(f"cannot import anthropic: {err}"), True)
    try:
        client = anthropic.Anthropic(timeout=timeout, max_retries=CLIENT_MAX_RETRIES)
    except Exception as err:  # the SDK raises ValueError, CredentialsError, OSError, ...
        return Failure("no_credentials", _detail(f"{type(err).__name__}: {err}"), final=True)
    has_credential = any(
        getattr(client, attribute, None) is not None
        for attribute in ("api_key", "auth_token", "credentials")
    )
    if not has_credential:
        client.close()
        return Failure(
            "no_credentials",
            "the anthropic SDK found no credentials (set ANTHROPIC_API_KEY or log in)",
            final=True,
        )
    return client


def _failure(err: Exception) -> Failure:
    import anthropic

    text = f"{type(err).__name__}: {err}"
    if isinstance(err, anthropic.APITimeoutError):
        return Failure("timeout", _detail(text), final=True)
    if isinstance(err, anthropic.APIConnectionError):
        return Failure("connection_error", _detail(text), final=True)
    if isinstance(err, anthropic.APIStatusError):
        final = err.status_code in (401, 403, 404, 429) or err.status_code >= 500
        return Failure("api_error", _detail(f"HTTP {err.status_code}: {err}"), final=final)
    if isinstance(err, anthropic.APIResponseValidationError | json.JSONDecodeError):
        return Failure("malformed_response", _detail(text), final=False)
    credentials_error = getattr(anthropic, "CredentialsError", None)
    if (isinstance(credentials_error, type) and isinstance(err, credentials_error)) or (
        isinstance(err, TypeError) and "authentication" in str(err).lower()
    ):
        return Failure("no_credentials", _detail(text), final=True)
    return Failure("api_error", _detail(text), final=True)


def request_summaries(
    client: anthropic.Anthropic, batch: Batch, *, model: str, timeout: float
) -> ParsedAnswer | Failure:
    """Send one batch as one Messages API request and parse the answer.

    Args:
        client: the SDK client.
        batch: the cells to summarize.
        model: the model id.
        timeout: the request timeout, in seconds (per attempt).

    Returns:
        The parsed answer (possibly partial), or the failure.
    """
    try:
        message = client.messages.create(
            model=model,
            max_tokens=max_tokens_for(batch),
            system=SYSTEM_PROMPT,
            messages=[{"role": "user", "content": user_message(batch)}],
            timeout=timeout,
        )
    except Exception as err:  # translated at this one boundary; the caller falls back
        return _failure(err)
    try:
        pieces = [getattr(block, "text", None) for block in message.content]
    except (AttributeError, TypeError) as err:
        return Failure("malformed_response", _detail(f"unexpected message shape: {err}"), False)
    text = "".join(piece for piece in pieces if isinstance(piece, str))
    answered_by = getattr(message, "model", None)
    answer = parse_answer(
        text, batch.keys, answered_by if isinstance(answered_by, str) and answered_by else model
    )
    if answer.error is not None:
        stop = getattr(message, "stop_reason", None)
        suffix = " (the answer hit max_tokens)" if stop == "max_tokens" else ""
        return Failure("malformed_response", _detail(answer.error + suffix), final=False)
    return answer
