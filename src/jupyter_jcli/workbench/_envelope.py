"""The opening fields of every successful workbench result's JSON document, and the JSON
form of the condensed outputs results carry."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_jcli.errors import SCHEMA_VERSION

if TYPE_CHECKING:
    from jupyter_jcli.condense import CondensedOutputs

__all__ = ["condensed_dict", "ok_fields", "pair_field"]


def ok_fields(operation: str, path: Path) -> dict[str, Any]:
    """``schema_version``, ``status: "ok"``, ``operation`` and ``path`` (as a string), in
    that order: the start of a result's ``to_dict``."""
    return {
        "schema_version": SCHEMA_VERSION,
        "status": "ok",
        "operation": operation,
        "path": str(path),
    }


def pair_field(facts: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{"pair_out_of_sync": facts}`` for a read of a pair whose sides hold different
    inputs (``Document.pair_out_of_sync``: which side is shown, which is newer, what a write
    does), else ``{}``: every read result says it, on every read."""
    return {} if facts is None else {"pair_out_of_sync": dict(facts)}


def condensed_dict(condensed: CondensedOutputs | None) -> dict[str, Any] | None:
    """The JSON form of condensed outputs, as ``read_cells`` gives it (images as base64)."""
    if condensed is None:
        return None
    return {
        "text": condensed.text,
        "budget": condensed.budget,
        "truncated": condensed.truncated,
        "omitted_outputs": list(condensed.omitted_outputs),
        "parts": [
            {k: v for k, v in part.to_dict().items() if k != "text"} for part in condensed.parts
        ],
        "images": [image.to_dict() for image in condensed.images],
    }
