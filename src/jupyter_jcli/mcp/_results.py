"""Tool results for the MCP servers: JSON documents, images and errors as ``CallToolResult``.

One shape for every tool of every jupyter-jcli MCP server (MCP tool results:
https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-result):

- success: ``structuredContent`` is the JSON document (the complete record) and the first
  content block is a ``TextContent`` holding, as compact JSON, what the model reads: for the
  workbench tools the view of :func:`jupyter_jcli.mcp._model_text.model_view` (the fields the
  model acts on, nothing that is null, false, zero or empty; hosts show the model the text,
  not the structured content), for the saved-output protocol the document itself; images
  follow as ``ImageContent`` blocks.
- a raster read of the saved-output protocol (``selected.encoding == "base64"``): the image
  bytes go in one ``ImageContent``; the JSON (text and structured) keeps the provenance and
  the image facts (``mime_type``, ``bytes``, ``width``, ``height``) with ``data`` removed and
  ``"delivered_as": "image_content"`` added, so the base64 is never sent twice.
- failure: ``isError`` true, no ``structuredContent``, and one ``TextContent``: the error JSON
  of :meth:`jupyter_jcli.errors.JcliError.to_dict` (``schema_version``, ``status: "error"``,
  ``code``, ``message``, ``details``). A tool's ``outputSchema`` describes its success
  documents only, and clients validate any ``structuredContent`` they get against it (the
  TypeScript SDK's ``Client.callTool`` does so even on an error result, and rejects a mismatch
  with ``-32602``), so an error document there would hide the error from the model; without
  it, every client accepts the result and shows the text, which is what hosts give the model.
  Never a traceback: an unexpected exception becomes ``INTERNAL_ERROR`` and its traceback goes
  to the server's log (stderr).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import orjson

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.outputs import RASTER_MIME_TYPES, serialize_json

__all__ = [
    "IMAGE_DELIVERY",
    "ImagePart",
    "error_result",
    "exception_result",
    "json_result",
    "json_text",
    "protocol_result",
]

_log = logging.getLogger(__name__)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

IMAGE_DELIVERY = "image_content"
"""Value of ``selected.delivered_as`` when a raster's bytes travel as ``ImageContent``."""


@dataclass(frozen=True)
class ImagePart:
    """An image to send as MCP ``ImageContent``.

    Attributes:
        mime_type: ``image/png``, ``image/jpeg``, ``image/webp`` or ``image/gif``.
        data: the image bytes as canonical base64 (RFC 4648, no line breaks).
    """

    mime_type: str
    data: str


def json_text(document: Mapping[str, Any]) -> str:
    """Serialize a JSON document compactly (orjson; UTF-8 text, non-ASCII kept).

    Values orjson cannot serialize natively are written with ``str`` (a safety net for error
    details; protocol documents are JSON-ready). Lone surrogates (from undecodable file names,
    which orjson and MCP transports refuse) become U+FFFD.
    """
    try:
        return orjson.dumps(document, default=str).decode("utf-8")
    except TypeError:
        import json

        text = json.dumps(document, default=str, ensure_ascii=False, separators=(",", ":"))
        return _LONE_SURROGATE.sub("\ufffd", text)


def json_result(
    document: Mapping[str, Any],
    *,
    images: Sequence[ImagePart] = (),
    view: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
    canonical: bool = False,
) -> types.CallToolResult:
    """A successful tool result: the document as structured content, a view of it as text.

    Args:
        document: a JSON object (the tool's result document).
        images: images to append as ``ImageContent`` after the text, in order.
        view: makes the text's JSON from the document (as it went through JSON); None: the
            text is the document itself.
        canonical: write the text with the saved-output protocol's serialiser
            (``outputs.serialize_json``, the bytes its transport bound measured and the
            command line prints) instead of :func:`json_text`.

    Returns:
        ``CallToolResult`` with ``content = [TextContent(json), *ImageContent]`` and
        ``structuredContent`` the document.
    """
    full = serialize_json(document).decode("utf-8") if canonical else json_text(document)
    structured = orjson.loads(full)
    text = full if view is None else json_text(view(structured))
    content: list[types.ContentBlock] = [types.TextContent(text=text)]
    content.extend(
        types.ImageContent(data=image.data, mime_type=image.mime_type) for image in images
    )
    return types.CallToolResult(content=content, structured_content=structured)


def protocol_result(document: Mapping[str, Any]) -> types.CallToolResult:
    """A tool result for a saved-output protocol response (directory or read).

    A read whose ``selected`` is a raster (``encoding == "base64"`` and a raster MIME type)
    is split: the base64 ``data`` moves into an ``ImageContent`` block, and the JSON keeps the
    rest of ``selected`` plus ``"delivered_as": "image_content"``. Any other response is
    passed to :func:`json_result` unchanged.

    Args:
        document: a response of ``list_notebook_outputs`` or ``read_notebook_output``.

    Returns:
        The ``CallToolResult``.
    """
    selected = document.get("selected")
    if (
        isinstance(selected, Mapping)
        and selected.get("encoding") == "base64"
        and selected.get("mime_type") in RASTER_MIME_TYPES
        and isinstance(selected.get("data"), str)
    ):
        facts = {key: value for key, value in selected.items() if key != "data"}
        facts["delivered_as"] = IMAGE_DELIVERY
        image = ImagePart(mime_type=str(selected["mime_type"]), data=str(selected["data"]))
        return json_result({**document, "selected": facts}, images=[image], canonical=True)
    return json_result(document, canonical=True)


def error_result(error: JcliError) -> types.CallToolResult:
    """A tool error result (``isError``) carrying the error JSON with its code.

    Args:
        error: the domain failure.

    Returns:
        ``CallToolResult`` with ``isError`` true, the error JSON as its only (text) content and
        no structured content (the output schema describes success; see the module docstring).
    """
    text = json_text(error.to_dict())
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def exception_result(exc: Exception) -> types.CallToolResult:
    """A tool error result for any exception raised by a tool.

    A :class:`JcliError` keeps its code (see :func:`error_result`); anything else is a bug
    and becomes ``INTERNAL_ERROR`` naming the exception type, its traceback logged at ERROR
    level (the servers log to stderr), never sent to the client.

    Args:
        exc: the exception caught around the tool's work.

    Returns:
        The ``isError`` ``CallToolResult``.
    """
    if isinstance(exc, JcliError):
        return error_result(exc)
    _log.error("unexpected %s in a tool call", type(exc).__name__, exc_info=exc)
    return error_result(
        JcliError(
            ErrorCode.INTERNAL_ERROR,
            f"Unexpected {type(exc).__name__}: {exc}",
            {"exception": type(exc).__name__},
        )
    )
