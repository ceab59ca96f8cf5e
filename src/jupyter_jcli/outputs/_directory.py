"""``list_outputs``: the directory of a cell's outputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jupyter_jcli.errors import ErrorCode, OutputProtocolError, ok_document
from jupyter_jcli.outputs._jsonsafe import json_size, make_serialisable, protocol_error
from jupyter_jcli.outputs._limits import MAX_TRANSPORT_BYTES, check_transport_limit
from jupyter_jcli.outputs._structure import (
    as_output_list,
    available_mime_types,
    metadata_of,
    mime_problems,
    output_problem,
    output_type_of,
)
from jupyter_jcli.outputs._text import is_text, utf8_size
from jupyter_jcli.outputs._transport import fit_transport

__all__ = ["copy_source", "list_outputs", "list_outputs_head"]


def copy_source(source: object) -> dict[str, Any]:
    """A shallow copy of the caller's provenance mapping.

    Raises:
        TypeError: ``source`` is not a Mapping (a programming error).
    """
    if not isinstance(source, Mapping):
        raise TypeError(f"source must be a Mapping, not {type(source).__name__}")
    return dict(source)


def _value_bytes(value: object) -> int | None:
    """Stored size of one bundle value: UTF-8 size of text, compact size of JSON."""
    return utf8_size(value) if is_text(value) else json_size(value)


def _entry(index: int, output: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "output_index": index,
        "output_type": output_type_of(output),
        "available_mime_types": available_mime_types(output),
        "metadata": metadata_of(output),
    }
    problem = output_problem(output)
    if problem is not None:
        entry["problem"] = problem.as_dict()
        return entry
    output_type = output["output_type"]
    if output_type == "stream":
        entry["name"] = output["name"]
        text = output["text"]
        entry["total_characters"] = len(text) if isinstance(text, str) else sum(map(len, text))
    elif output_type == "error":
        entry["ename"] = output["ename"]
        entry["evalue"] = output["evalue"]
        entry["traceback_lines"] = len(output["traceback"])
    else:
        if output_type == "execute_result":
            entry["execution_count"] = output.get("execution_count")
        problems = mime_problems(output)
        entry["mime_bytes"] = {
            mime: None if mime in problems else _value_bytes(value)
            for mime, value in output["data"].items()
        }
        if problems:
            entry["mime_problems"] = {mime: p.as_dict() for mime, p in problems.items()}
    return entry


def list_outputs(
    outputs: object,
    *,
    source: Mapping[str, Any],
    max_transport_bytes: int = MAX_TRANSPORT_BYTES,
) -> dict[str, Any]:
    """List every output of one cell, so a caller can choose what to read.

    Args:
        outputs: the cell's ``outputs`` value as parsed from the notebook JSON (a list).
        source: provenance copied into the response as ``source``.
        max_transport_bytes: bound on the compact serialised response, 1 to 32 MiB.

    Returns:
        ``{"schema_version": 1, "status": "ok", "source", "output_count", "outputs"}``;
        see the package documentation for the entries.

    Raises:
        OutputProtocolError: ``INVALID_TRANSPORT_LIMIT``; ``OUTPUT_DATA_INVALID`` when
            ``outputs`` is not a list; ``OUTPUT_TOO_LARGE`` when the directory does not fit.
        TypeError: ``source`` is not a Mapping.
    """
    limit = check_transport_limit(max_transport_bytes)
    response, items = _head(outputs, source)
    response["outputs"] = [_entry(index, output) for index, output in enumerate(items)]
    try:
        return fit_transport(response, None, limit)
    except OutputProtocolError as err:
        if err.code != ErrorCode.OUTPUT_TOO_LARGE:
            raise
        # The directory has no pages; each output stays readable by its index.
        raise protocol_error(
            err.code,
            f"{err.message} The directory of {len(items)} outputs cannot be paged; read the "
            f"outputs one at a time by index (output_index 0 to {len(items) - 1}) with "
            "read_output (`j-cli notebook output FILE --cell N --output K`).",
            {**err.details, "output_count": len(items), "read_by_index": True},
        ) from err


def _head(outputs: object, source: Mapping[str, Any]) -> tuple[dict[str, Any], Sequence[Any]]:
    """A directory response's fields before its entries, and the outputs as a list (the
    source is checked first, then the outputs)."""
    copied = copy_source(source)
    items = as_output_list(outputs)
    response = ok_document(source=copied, output_count=len(items))
    return response, items


def list_outputs_head(
    outputs: object, *, source: Mapping[str, Any], max_bytes: int
) -> dict[str, Any]:
    """The :func:`list_outputs` response cut to the first outputs whose entries keep its
    compact serialised size within ``max_bytes``, for a front end showing a bounded page.

    Entries are built one at a time and none past the cut is built, so a cell holding
    300,000 outputs costs what the page holds, whatever the size of the whole directory.

    Returns:
        The :func:`list_outputs` response (``outputs`` holding the entries that fit, made
        serialisable) and ``omitted_outputs``: how many outputs were left out (0 when all
        fit).

    Raises:
        OutputProtocolError: ``OUTPUT_DATA_INVALID`` when ``outputs`` is not a list or an
            entry cannot be serialised.
        TypeError: ``source`` is not a Mapping.
    """
    head, items = _head(outputs, source)
    response: dict[str, Any]
    response, room = make_serialisable({**head, "omitted_outputs": len(items), "outputs": []})
    room = max_bytes - room
    entries: list[Any] = response["outputs"]
    for index, output in enumerate(items):
        entry, size = make_serialisable(_entry(index, output))
        room -= size + 1  # its comma
        if room < 0:
            break
        entries.append(entry)
    response["omitted_outputs"] = len(items) - len(entries)
    return response
