"""The fallback output summary: output types and sizes, with a short preview of text.

Output fields follow nbformat v4
(https://nbformat.readthedocs.io/en/latest/format_description.html#code-cell-outputs):
``stream`` (``name``, ``text``), ``display_data`` / ``execute_result`` (``data``: a MIME
bundle), ``error`` (``ename``, ``evalue``). Malformed outputs are counted, never raised on.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from jupyter_jcli.notebook.io import multiline_text

__all__ = ["describe_outputs"]

_PREVIEW = 60  # characters of text previewed per output
_LISTED = 4  # outputs described one by one; the rest are counted
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml")
_RICH_TYPES = (
    "application/vnd.plotly.v1+json",
    "application/vnd.vegalite.v5+json",
    "application/vnd.vegalite.v4+json",
    "application/vnd.vega.v5+json",
    "application/vnd.jupyter.widget-view+json",
)


def _preview(text: str) -> str:
    lines = [line.strip() for line in _ANSI.sub("", text).replace("\r", "\n").splitlines()]
    first = next((line for line in lines if line), "")
    if len(first) > _PREVIEW:
        first = first[: _PREVIEW - 1].rstrip() + "…"
    return f" “{first}”" if first else ""


def _size(characters: int) -> str:
    if characters < 1024:
        return f"{characters} B"
    if characters < 1024 * 1024:
        return f"{characters / 1024:.1f} KB"
    return f"{characters / (1024 * 1024):.1f} MB"


def _png_dimensions(data: str) -> tuple[int, int] | None:
    """Width and height from a base64 PNG's IHDR chunk (bytes 16 to 24), if readable."""
    try:
        head = base64.b64decode("".join(data[:48].split())[:32] + "==", validate=False)
    except (binascii.Error, ValueError):
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _bundle(data: Mapping[str, Any]) -> str:
    for mime in _IMAGE_TYPES:
        if mime in data:
            raw = multiline_text(data[mime])
            if mime == "image/svg+xml":
                return f"an SVG image ({_size(len(raw))})"
            size = _size(len(raw) * 3 // 4)
            dims = _png_dimensions(raw) if mime == "image/png" else None
            shown = f"{dims[0]}x{dims[1]} px, {size}" if dims else size
            return f"a {mime.split('/')[1].upper()} image ({shown})"
    for mime in _RICH_TYPES:
        if mime in data:
            return f"a {mime} output"
    if "text/html" in data:
        html = multiline_text(data["text/html"])
        if "<table" in html.lower():
            rows = html.lower().count("<tr")
            return f"an HTML table ({rows} rows shown)"
        return f"HTML ({_size(len(html))})"
    if "text/latex" in data:
        return "LaTeX" + _preview(multiline_text(data["text/latex"]))
    if "text/markdown" in data:
        return "Markdown" + _preview(multiline_text(data["text/markdown"]))
    if "application/json" in data:
        return "JSON data"
    if "text/plain" in data:
        text = multiline_text(data["text/plain"])
        lines = len(text.splitlines())
        return f"text ({lines} lines)" + _preview(text) if lines > 1 else "text" + _preview(text)
    mimes = ", ".join(sorted(str(mime) for mime in data)[:3])
    return f"data of type {mimes}" if mimes else "an empty MIME bundle"


def _one(output: Any) -> str:
    if not isinstance(output, Mapping):
        return "a malformed output"
    kind = output.get("output_type")
    if kind == "stream":
        text = multiline_text(output.get("text"))
        name = str(output.get("name", "stream"))
        lines = len(text.splitlines())
        plural = "" if lines == 1 else "s"
        return f"{name}: {lines} line{plural}, {_size(len(text))}{_preview(text)}"
    if kind == "error":
        ename = str(output.get("ename", "Error"))
        evalue = str(output.get("evalue", ""))
        return f"an error {ename}" + (f": {_preview(evalue).strip(' “”')}" if evalue else "")
    if kind in ("execute_result", "display_data", "update_display_data"):
        data = output.get("data")
        role = "result" if kind == "execute_result" else "display"
        if not isinstance(data, Mapping):
            return f"a {role} without data"
        return f"{role}: {_bundle(data)}"
    return f"an output of type {kind!r}"


def describe_outputs(outputs: Any, cell_type: str) -> str:
    """One or two sentences on a cell's outputs, from their types and sizes.

    Args:
        outputs: the cell's ``outputs`` value (a list of output dicts; anything else is
            treated as no outputs).
        cell_type: the cell type; non-code cells have no outputs by nbformat's rules.

    Returns:
        The text, not yet bounded (the caller cuts it).
    """
    if cell_type != "code":
        return f"No outputs ({cell_type} cell)."
    if not isinstance(outputs, list) or not outputs:
        return "No outputs."
    described = [_one(output) for output in outputs[:_LISTED]]
    more = len(outputs) - _LISTED
    head = f"{len(outputs)} output" + ("" if len(outputs) == 1 else "s")
    tail = f"; and {more} more" if more > 0 else ""
    return f"{head}: " + "; ".join(described) + tail + "."
