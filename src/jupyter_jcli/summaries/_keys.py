"""The content key of a cell: what a summary describes, hashed.

The key is the first :data:`SUMMARY_KEY_LENGTH` hex digits of a sha256 over the cell's type,
its joined source and a canonical serialisation of its outputs. In each output only the
fields that carry what it shows are kept (``output_type``, ``name``, ``text``, ``data``,
``ename``, ``evalue``, ``traceback``; nbformat v4 output fields, see
https://nbformat.readthedocs.io/en/latest/format_description.html#code-cell-outputs);
``execution_count``, output ``metadata`` and ``transient`` are ignored, and multiline strings
(lists of lines) are joined, so re-running a cell that prints the same thing, or re-saving the
notebook in another JSON layout, keeps the key. Python's ``hash()`` is never used.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from jupyter_jcli.notebook.io import cell_source as joined_source

__all__ = ["SUMMARY_KEY_LENGTH", "canonical_outputs", "joined_source", "summary_key"]

SUMMARY_KEY_LENGTH = 16
"""Hex digits in a summary key (64 bits)."""

_KEPT_FIELDS = ("output_type", "name", "text", "data", "ename", "evalue", "traceback")


def _multiline(value: Any) -> Any:
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    return value


def _canonical_output(output: Any) -> Any:
    if not isinstance(output, Mapping):
        return output
    kept: dict[str, Any] = {}
    for field in _KEPT_FIELDS:
        if field not in output:
            continue
        value = output[field]
        if field == "data" and isinstance(value, Mapping):
            value = {str(mime): _multiline(item) for mime, item in value.items()}
        elif field == "traceback" and isinstance(value, list):
            value = [str(line) for line in value]
        else:
            value = _multiline(value)
        kept[field] = value
    return kept


def canonical_outputs(cell: Mapping[str, Any]) -> str:
    """The canonical JSON text of a cell's outputs (``"[]"`` without outputs).

    Keys sorted, no whitespace, non-ASCII kept; volatile fields dropped (see the module doc).
    """
    outputs = cell.get("outputs")
    if not isinstance(outputs, list):
        return "[]"
    canonical = [_canonical_output(output) for output in outputs]
    return json.dumps(
        canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr
    )


def summary_key(cell: Mapping[str, Any]) -> str:
    """The content key of a cell (type, source and outputs).

    Args:
        cell: an nbformat cell dict.

    Returns:
        :data:`SUMMARY_KEY_LENGTH` lowercase hex digits.
    """
    digest = hashlib.sha256(b"summary-key\0")
    digest.update(str(cell.get("cell_type", "")).encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(joined_source(cell).encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(canonical_outputs(cell).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:SUMMARY_KEY_LENGTH]
