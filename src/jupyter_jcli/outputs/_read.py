"""``read_output``: one output of a cell, one representation, bounded."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any, TypedDict

from jupyter_jcli.errors import ErrorCode, ok_document
from jupyter_jcli.outputs._directory import copy_source
from jupyter_jcli.outputs._jsonsafe import make_serialisable, protocol_error
from jupyter_jcli.outputs._limits import (
    DEFAULT_TEXT_LIMIT,
    MAX_TRANSPORT_BYTES,
    check_transport_limit,
    check_window,
    is_int,
    window_requested,
)
from jupyter_jcli.outputs._mime import (
    TEXT_ENCODING,
    encoding_for,
    normalize_supported,
    select_mime_type,
)
from jupyter_jcli.outputs._raster import decode_raster
from jupyter_jcli.outputs._structure import (
    as_output_list,
    available_mime_types,
    metadata_of,
    output_problem,
    value_problem,
)
from jupyter_jcli.outputs._text import TextWindow, prefix_json_bytes, text_window
from jupyter_jcli.outputs._transport import BigValue, fit_transport

__all__ = ["read_output"]


def _pick(outputs: object, output_index: object) -> Any:
    items = as_output_list(outputs)
    if not is_int(output_index) or not 0 <= output_index < len(items):
        raise protocol_error(
            ErrorCode.OUTPUT_NOT_FOUND,
            f"There is no output {output_index!r}; this cell has {len(items)} output(s), "
            "indexed from 0.",
            {"output_count": len(items)},
        )
    return items[output_index]


def _window_not_supported(what: str, mime_type: str | None = None) -> Exception:
    details = {"mime_type": mime_type} if mime_type is not None else None
    return protocol_error(
        ErrorCode.WINDOW_NOT_SUPPORTED,
        f"offset and limit apply to text only, not to {what}.",
        details,
    )


def _read_bundle(
    response: dict[str, Any],
    output: dict[str, Any],
    *,
    mime_type: str | None,
    supported: frozenset[str] | None,
    offset: int,
    limit: int | None,
    max_transport_bytes: int,
) -> dict[str, Any]:
    data: dict[str, Any] = output["data"]
    if output["output_type"] == "execute_result":
        response["execution_count"] = output.get("execution_count")
    chosen = select_mime_type(data, mime_type=mime_type, supported_mime_types=supported)
    value = data[chosen]
    encoding = encoding_for(chosen, value)
    selected: dict[str, Any] = {"mime_type": chosen, "encoding": encoding}
    response["selected"] = selected
    problem = value_problem(chosen, value)
    if problem is not None:
        raise protocol_error(problem.code, problem.message, {"mime_type": chosen})
    if encoding == TEXT_ENCODING:
        window = text_window(value, offset, limit)
        selected.update(window.fields)
        selected["data"] = ""
        return fit_transport(response, _text_big(("selected",), window), max_transport_bytes)
    if window_requested(offset, limit):
        what = "an image" if encoding == "base64" else "a JSON value"
        raise _window_not_supported(what, chosen)
    if encoding == "base64":
        raster = decode_raster(chosen, value)
        selected["bytes"] = raster.size
        if raster.width is not None and raster.height is not None:
            selected["width"] = raster.width
            selected["height"] = raster.height
        selected["data"] = ""
        big = BigValue(("selected",), raster.base64, len(raster.base64) + 2)
        return fit_transport(response, big, max_transport_bytes)
    value, size = make_serialisable(value)
    selected["bytes"] = size
    selected["data"] = ""
    return fit_transport(response, BigValue(("selected",), value, size), max_transport_bytes)


def _text_big(path: tuple[str, ...], window: TextWindow) -> BigValue:
    fields = window.fields
    page: str = fields["data"]
    return BigValue(
        path,
        page,
        window.data_json_bytes,
        fields["returned_characters"],
        partial(prefix_json_bytes, page),
    )


class ReadOptions(TypedDict, total=False):
    """The keyword options of :func:`read_output` (meanings and defaults there), for the
    readers that forward them unchanged (``**options: Unpack[ReadOptions]``)."""

    mime_type: str | None
    supported_mime_types: Iterable[str] | None
    offset: int
    limit: int | None
    max_transport_bytes: int


def read_output(
    outputs: object,
    output_index: int,
    *,
    source: Mapping[str, Any],
    mime_type: str | None = None,
    supported_mime_types: Iterable[str] | None = None,
    offset: int = 0,
    limit: int | None = DEFAULT_TEXT_LIMIT,
    max_transport_bytes: int = MAX_TRANSPORT_BYTES,
) -> dict[str, Any]:
    """Read one output of a cell: one representation, paged if text, bounded in size.

    Args:
        outputs: the cell's ``outputs`` value as parsed from the notebook JSON (a list).
        output_index: physical zero-based index in ``outputs``.
        source: provenance copied into the response as ``source`` (plus ``output_index``).
        mime_type: an explicit MIME type to return (bundles only).
        supported_mime_types: the only MIME types the caller accepts; it filters bundles and
            is ignored for streams and errors (adapters send their capabilities always).
        offset: first code point of the text page.
        limit: maximum code points in the text page; None for the whole text from
            ``offset`` (still bounded by ``max_transport_bytes``).
        max_transport_bytes: bound on the compact serialised response, 1 to 32 MiB.

    Returns:
        The read response; see the package documentation for its shape per output type.

    Raises:
        OutputProtocolError: ``INVALID_TRANSPORT_LIMIT``, ``INVALID_WINDOW``,
            ``OUTPUT_NOT_FOUND``, ``OUTPUT_DATA_INVALID``, ``OUTPUT_TYPE_UNSUPPORTED``,
            ``MIME_NOT_APPLICABLE``, ``MIME_NOT_FOUND``, ``MIME_NOT_SUPPORTED``,
            ``WINDOW_NOT_SUPPORTED``, ``OUTPUT_TOO_LARGE``; rules in the package documentation.
        TypeError: ``source`` is not a Mapping, ``mime_type`` not a ``str``, or
            ``supported_mime_types`` a bare string or not made of strings.
    """
    max_bytes = check_transport_limit(max_transport_bytes)
    src = copy_source(source)
    if mime_type is not None and not isinstance(mime_type, str):
        raise TypeError(f"mime_type must be a str or None, not {type(mime_type).__name__}")
    supported = normalize_supported(supported_mime_types)
    offset, limit = check_window(offset, limit)
    output = _pick(outputs, output_index)
    output_type = output.get("output_type") if isinstance(output, dict) else None
    if output_type in ("stream", "error") and mime_type is not None:
        raise protocol_error(
            ErrorCode.MIME_NOT_APPLICABLE,
            f"{_article(output_type)} {output_type} output has no MIME bundle; omit mime_type.",
            {"output_type": output_type},
        )
    problem = output_problem(output)
    if problem is not None:
        details = {"output_type": output_type} if isinstance(output_type, str) else None
        raise protocol_error(problem.code, problem.message, details)
    src["output_index"] = output_index
    response = ok_document(
        source=src,
        output_type=output_type,
        available_mime_types=available_mime_types(output),
        metadata=metadata_of(output),
    )
    if output_type == "stream":
        window = text_window(output["text"], offset, limit)
        response["stream"] = {"name": output["name"], **window.fields, "data": ""}
        return fit_transport(response, _text_big(("stream",), window), max_bytes)
    if output_type == "error":
        if window_requested(offset, limit):
            raise _window_not_supported("an error output")
        response["error"] = {
            "ename": output["ename"],
            "evalue": output["evalue"],
            "traceback": output["traceback"],
        }
        return fit_transport(response, None, max_bytes)
    return _read_bundle(
        response,
        output,
        mime_type=mime_type,
        supported=supported,
        offset=offset,
        limit=limit,
        max_transport_bytes=max_bytes,
    )


def _article(word: str) -> str:
    """``"An"`` before a vowel, else ``"A"`` (for messages naming an output type)."""
    return "An" if word[:1].lower() in "aeiou" else "A"
