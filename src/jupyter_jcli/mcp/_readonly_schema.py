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
Read the outputs saved in a Jupyter notebook cell, exactly as stored on disk, without \
running anything. Use it to see what a cell printed, returned, raised or drew (tables, \
HTML, plots) when you have a .ipynb file, or a .py file paired with one through jupytext.

Two steps, both cheap:
1. Without output_index: the cell's output directory, one entry per saved output with its \
output_type, available MIME types and the stored size in bytes of each (a few hundred bytes \
in all). Start here.
2. With output_index: one output. Text (streams, text/plain, text/html, text/markdown, SVG) \
comes in pages of `limit` characters (default {DEFAULT_TEXT_LIMIT:,}) from `offset`; when \
the page has next_offset, call again with offset = next_offset. Rasters (PNG, JPEG, WebP, GIF) \
come back as an image (cost: the image itself). JSON values come whole. Errors give \
ename, evalue and the traceback.

MIME choice: automatic (images first, then HTML, Markdown, plain text, JSON, SVG); pass \
mime_type to pick one (e.g. text/plain instead of a long text/html table), or \
supported_mime_types to restrict what may be returned. Size the read from the directory's \
byte counts before asking for a large output.

cell_index and output_index are zero-based physical positions (for a .py file, among its \
cells as jupytext reads them). Paths are absolute or relative to the server's trusted \
roots. Errors come back as JSON with a code (e.g. CELL_NOT_FOUND, OUTPUT_NOT_FOUND, \
MIME_NOT_FOUND, INVALID_WINDOW, PATH_NOT_ALLOWED) and details to correct the call. \
Read-only: never executes, never writes, caches nothing."""

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {
            "type": "string",
            "minLength": 1,
            "description": "The notebook (.ipynb) or its paired .py file: absolute, or "
            "relative to the trusted roots.",
        },
        "cell_index": {
            "type": "integer",
            "description": "Zero-based physical cell index in that file (ranges are checked by "
            "the protocol: CELL_NOT_FOUND, OUTPUT_NOT_FOUND, INVALID_WINDOW).",
        },
        "output_index": {
            "type": "integer",
            "description": "Zero-based index of one saved output of the cell. Omit it to "
            "list the cell's outputs.",
        },
        "mime_type": {
            "type": "string",
            "description": "Read this MIME type of a display_data/execute_result output "
            "instead of the automatic choice.",
        },
        "supported_mime_types": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Only these MIME types may be returned (automatic and explicit "
            "choice alike).",
        },
        "offset": {
            "type": "integer",
            "default": 0,
            "description": "First character of the text page (Unicode code points).",
        },
        "limit": {
            "type": ["integer", "null"],
            "default": DEFAULT_TEXT_LIMIT,
            "description": "Maximum characters in the text page; null: the whole text from "
            "offset (still bounded by the transport limit: OUTPUT_TOO_LARGE).",
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
