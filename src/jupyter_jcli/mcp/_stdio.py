"""Serving an MCP server over stdio so that every line the host sends gets an answer.

The SDK's stdio transport (``mcp.server.stdio.stdio_server``) parses each stdin line with
``jsonrpc_message_adapter.validate_json`` and, when that fails, hands the exception to the
dispatcher, which only logs it at debug level: a host that sends a line that is not JSON, or a
request whose JSON holds a lone-surrogate escape such as ``"\\ud800"`` (valid JSON text that
the SDK's strict parser refuses), never gets a reply and waits until its own timeout.

:class:`AnsweringReadStream` sits between the transport and the server and handles those
exception items at our boundary:

- a line that is valid JSON (Python's ``json``, which accepts lone-surrogate escapes, as
  RFC 8259 section 8.2 allows) is repaired: every lone surrogate in its strings and keys
  becomes U+FFFD, and the message is parsed again and served as usual;
- a line that is not JSON gets a JSON-RPC "Parse error" (-32700) with ``"id": null``;
- valid JSON that is not a JSON-RPC message gets "Invalid Request" (-32600), carrying the
  request's ``id`` when it has a usable one, else ``null``
  (JSON-RPC 2.0 specification, section 5.1).

Each such event is also logged on stderr (stdout carries only JSON-RPC).
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

from anyio.abc import AsyncResource

if TYPE_CHECKING:
    import contextvars

    from mcp.server.lowlevel import Server
    from mcp.shared._stream_protocols import ReadStream, WriteStream
    from mcp.shared.message import SessionMessage

__all__ = [
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "AnsweringReadStream",
    "answer_or_repair",
    "scrub_surrogates",
    "serve_stdio",
]

PARSE_ERROR = -32700
"""JSON-RPC 2.0 "Parse error": the line is not JSON."""
INVALID_REQUEST = -32600
"""JSON-RPC 2.0 "Invalid Request": JSON, but not a JSON-RPC message."""

_MAX_ECHO = 200
"""Characters of the offending line quoted in the error data and the log."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_log = logging.getLogger(__name__)


def scrub_surrogates(value: Any) -> Any:
    """``value`` (parsed JSON) with every lone surrogate code point replaced by U+FFFD.

    Args:
        value: a JSON value as ``json.loads`` returns it (dict, list, str, number, bool, None).

    Returns:
        The same shape; its strings and object keys are valid Unicode (encodable as UTF-8).
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [scrub_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {scrub_surrogates(key): scrub_surrogates(item) for key, item in value.items()}
    return value


def _failed_line(error: Exception) -> str | None:
    """The raw stdin line behind a transport JSON failure, when the error carries it."""
    from pydantic import ValidationError

    if not isinstance(error, ValidationError):
        return None
    for detail in error.errors():
        if detail.get("type") in ("json_invalid", "string_unicode") and isinstance(
            detail.get("input"), str
        ):
            return str(detail["input"])
    return None


def _invalid_message(error: Exception) -> dict[str, Any] | None:
    """The JSON object behind a transport failure that parsed but is no JSON-RPC message."""
    from pydantic import ValidationError

    if not isinstance(error, ValidationError):
        return None
    for detail in error.errors():
        found = detail.get("input")
        if len(detail.get("loc", ())) <= 2 and isinstance(found, dict):
            return found
    return None


def _request_id(value: Any) -> str | int | None:
    """The ``id`` of a JSON object when it is one JSON-RPC allows (string or integer)."""
    if isinstance(value, dict):
        found = value.get("id")
        if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
            return found
    return None


def _error_message(
    code: int, message: str, request_id: str | int | None, line: str
) -> SessionMessage:
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError

    error = ErrorData(code=code, message=message)
    if line:
        error.data = {"line_head": _SURROGATE.sub("\ufffd", line[:_MAX_ECHO])}
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def answer_or_repair(error: Exception) -> SessionMessage:
    """What to do with a transport item that failed to parse: a repaired message or an error.

    Args:
        error: the exception the stdio transport put on the read stream.

    Returns:
        Either the request itself (``SessionMessage`` holding a JSON-RPC request or
        notification) after lone surrogates were replaced by U+FFFD, or a ``SessionMessage``
        holding the JSON-RPC error response to write back (-32700 with id null, or -32600).
    """
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    line = _failed_line(error)
    if line is None:
        from pydantic import ValidationError

        if isinstance(error, ValidationError):  # JSON, but not a JSON-RPC message
            value = _invalid_message(error)
            text = json.dumps(scrub_surrogates(value), ensure_ascii=False) if value else ""
            reason = "Invalid Request: not a JSON-RPC 2.0 message"
            return _error_message(INVALID_REQUEST, reason, _request_id(value), text)
        return _error_message(PARSE_ERROR, f"Parse error: {type(error).__name__}", None, "")
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as err:
        return _error_message(PARSE_ERROR, f"Parse error: {err}", None, line)
    try:
        cleaned = json.dumps(scrub_surrogates(value), ensure_ascii=False)
        message = jsonrpc_message_adapter.validate_json(cleaned, by_name=False)
    except (ValueError, RecursionError) as err:
        reason = f"Invalid Request: not a JSON-RPC 2.0 message ({type(err).__name__})"
        return _error_message(INVALID_REQUEST, reason, _request_id(value), line)
    return SessionMessage(message)


class AnsweringReadStream(AsyncResource):
    """A read stream that never lets a bad stdin line go unanswered.

    Wraps the transport's read stream (``SessionMessage | Exception`` items): messages pass
    through; an exception item is turned by :func:`answer_or_repair` into the repaired
    message, or into an error response written to ``write_stream`` (and skipped).

    Args:
        inner: the transport's read stream.
        write_stream: the transport's write stream (the server writes to it too; sends on an
            anyio memory stream are safe from several tasks).
    """

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        write_stream: WriteStream[SessionMessage],
    ) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last item (the SDK's context streams expose it)."""
        found: contextvars.Context | None = getattr(self._inner, "last_context", None)
        return found

    async def receive(self) -> SessionMessage | Exception:
        """The next message; bad lines are answered (or repaired) on the way.

        Raises:
            anyio.EndOfStream: the transport's stream ended (stdin closed).
        """
        from mcp_types import JSONRPCError

        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            outcome = answer_or_repair(item)
            if not isinstance(outcome.message, JSONRPCError):
                _log.warning("stdin line held lone surrogates: replaced by U+FFFD")
                return outcome
            _log.warning(
                "unparseable stdin line answered with JSON-RPC error %d: %s",
                outcome.message.error.code,
                outcome.message.error.message,
            )
            await self._write.send(outcome)

    async def aclose(self) -> None:
        """Close the transport's read stream."""
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


async def serve_stdio(server: Server[Any]) -> None:
    """Run ``server`` over this process's stdin/stdout until stdin closes.

    The SDK's ``stdio_server`` owns fd 0/1 (diverting them while serving); the read side is
    wrapped in :class:`AnsweringReadStream` so every line gets an answer.

    Args:
        server: a low-level ``mcp.server.lowlevel.Server``.
    """
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        answering = AnsweringReadStream(read_stream, write_stream)
        await server.run(answering, write_stream, server.create_initialization_options())
