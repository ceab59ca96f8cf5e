"""The ``read_notebook_output`` tool's definition: description, input and output schemas.

The output schema describes the saved-output protocol's success documents (see
:mod:`jupyter_jcli.outputs`): a directory (``output_count``, ``outputs``) or a read
(``output_type``, then ``stream``, ``error`` or ``selected``, the reference jupyter-jcli
0.9.7's shapes). It is exact where the protocol's
shape is fixed and permissive where values vary (output metadata, JSON MIME values, the
extra fields a malformed output's entry carries), so that every response validates: MCP
clients check ``structuredContent`` against it (JSON Schema 2020-12).
"""

from __future__ import annotations

from typing import Any

from jupyter_jcli.outputs import DEFAULT_TEXT_LIMIT

__all__ = ["INPUT_SCHEMA", "OUTPUT_SCHEMA", "TOOL_DESCRIPTION", "TOOL_NAME", "TOOL_TITLE"]

TOOL_NAME = "read_notebook_output"
TOOL_TITLE = "Read saved notebook outputs"

TOOL_DESCRIPTION = f"""\
Read the outputs saved in a notebook cell (.ipynb, or a .py paired with one), exactly as \
stored, without running anything. Without output_index: the cell's output directory \
(output_type, MIME types and stored bytes of each); start there. With output_index: one \
output; text comes in pages of `limit` characters (default {DEFAULT_TEXT_LIMIT:,}) from \
`offset` (go on with next_offset), rasters as an image, JSON whole, errors with their \
traceback. MIME type: automatic, or pick one with mime_type, or restrict with \
supported_mime_types. Indexes are zero-based."""

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "minLength": 1},
        "cell_index": {"type": "integer"},
        "output_index": {"type": "integer", "description": "Omit: list the outputs."},
        "mime_type": {"type": "string"},
        "supported_mime_types": {"type": "array", "items": {"type": "string"}},
        "offset": {"type": "integer", "default": 0, "description": "In characters."},
        "limit": {
            "type": ["integer", "null"],
            "default": DEFAULT_TEXT_LIMIT,
            "description": "Characters; null: all (bounded: OUTPUT_TOO_LARGE).",
        },
    },
    "required": ["file_path", "cell_index"],
    "additionalProperties": False,
}

_INT = {"type": "integer", "minimum": 0}
_LINE = {"type": "integer", "minimum": 1}
_STRINGS = {"type": "array", "items": {"type": "string"}}

# Text-window fields: inside ``selected`` for a bundle, inside ``stream`` for a stream.
_WINDOW: dict[str, Any] = {
    "offset": _INT,
    "returned_characters": _INT,
    "total_characters": _INT,
    "truncated": {"type": "boolean"},
    "next_offset": _INT,
    "bytes": _INT,
}

_SOURCE: dict[str, Any] = {
    "type": "object",
    "required": [
        "kind",
        "path",
        "cell_index",
        "requested_path",
        "requested_cell_index",
        "mapping",
        "cell_type",
    ],
    "properties": {
        "kind": {"const": "notebook"},
        "path": {"type": "string"},
        "cell_index": _INT,
        "requested_path": {"type": "string"},
        "requested_cell_index": _INT,
        "mapping": {"enum": ["direct", "id", "content"]},
        "cell_id": {"type": "string"},
        "execution_count": {"type": "integer"},
        "source_start_line": _LINE,
        "source_end_line": _LINE,
        "cell_type": {"type": ["string", "null"]},
        "cell_name": {"type": "string"},
        "output_index": _INT,
    },
}

_DIRECTORY_ENTRY: dict[str, Any] = {
    "type": "object",
    "required": ["output_index", "output_type"],
    "properties": {
        "output_index": _INT,
        "output_type": {"type": ["string", "null"]},
        "available_mime_types": _STRINGS,
        "metadata": {"type": "object"},
        "name": {"type": "string"},
        "total_characters": _INT,
        "ename": {"type": "string"},
        "evalue": {"type": "string"},
        "traceback_lines": _INT,
        "execution_count": {"type": ["integer", "null"]},
        "mime_bytes": {"type": "object", "additionalProperties": {"type": ["integer", "null"]}},
        "problem": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        },
    },
}

_STREAM: dict[str, Any] = {
    "type": "object",
    "required": ["name", "offset", "returned_characters", "total_characters", "truncated"],
    "properties": {"name": {"type": "string"}, **_WINDOW, "data": {"type": "string"}},
    "additionalProperties": False,
}

_ERROR: dict[str, Any] = {
    "type": "object",
    "required": ["ename", "evalue", "traceback"],
    "properties": {
        "ename": {"type": "string"},
        "evalue": {"type": "string"},
        "traceback": _STRINGS,
    },
    "additionalProperties": False,
}

_SELECTED: dict[str, Any] = {
    "type": "object",
    "required": ["mime_type", "encoding"],
    "properties": {
        "mime_type": {"type": "string"},
        "encoding": {"enum": ["base64", "json", "utf-8"]},
        "width": _INT,
        "height": _INT,
        "delivered_as": {"const": "image_content"},
        **_WINDOW,
        # utf-8: the page (a string); json: any JSON value; base64: moved to ImageContent.
        "data": {},
    },
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema_version", "status", "source"],
    "properties": {
        "schema_version": {"const": 1},
        "status": {"const": "ok"},
        "source": _SOURCE,
        # A directory (no output_index in the call).
        "output_count": _INT,
        "outputs": {"type": "array", "items": _DIRECTORY_ENTRY},
        # A read (output_index in the call): ``stream``, ``error`` or ``selected``.
        "output_type": {"type": "string"},
        "available_mime_types": _STRINGS,
        "metadata": {"type": "object"},
        "execution_count": {"type": ["integer", "null"]},
        "stream": _STREAM,
        "error": _ERROR,
        "selected": _SELECTED,
    },
    "additionalProperties": False,
    "oneOf": [
        {"required": ["output_count", "outputs"]},
        {
            "required": ["output_type", "available_mime_types", "metadata"],
            "oneOf": [
                {"required": ["stream"]},
                {"required": ["error"]},
                {"required": ["selected"]},
            ],
        },
    ],
}
