"""The opening fields of every successful workbench result's JSON document, the JSON
form of the condensed outputs results carry, and the one rule that drops empty fields
(:func:`compact`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from jupyter_jcli._json import json_fields
from jupyter_jcli.errors import ok_document

if TYPE_CHECKING:
    from jupyter_jcli.condense import CondensedOutputs

__all__ = ["POSITIONS", "compact", "condensed_dict", "is_empty", "ok_fields", "result_document"]

POSITIONS = frozenset(
    {"index", "output_index", "image", "start", "stop", "cell_index", "offset"}
    | {"cell_count", "length", "remaining"}
)
"""Fields whose 0 is a position or a count a reader needs (cell 0, output 0, no cells)."""
_KEEP_FALSE = frozenset({"ok"})
"""Fields whose ``false`` is the answer (the run failed)."""


def is_empty(key: str | None, value: Any) -> bool:
    """Whether ``value`` under ``key`` carries nothing: ``null``, ``""``, ``[]``, ``{}``,
    ``false`` (except ``ok``) or ``0`` (except the :data:`POSITIONS`)."""
    if value is None or value in ("", [], {}):
        return True
    if value is False:
        return key not in _KEEP_FALSE
    if value == 0 and not isinstance(value, bool):
        return key not in POSITIONS
    return False


def compact(value: Any, key: str | None = None) -> Any:
    """``value`` with every field that :func:`is_empty` says carries nothing left out, at
    every depth (list items are kept, their fields pruned): the rule of ``jupyter-mcp``'s
    model text (:mod:`jupyter_jcli.mcp._model_text`) and of ``j-cli -j exec``/``run``
    answers. A new value; ``value`` is not modified."""
    if isinstance(value, Mapping):
        pruned = {k: compact(v, str(k)) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if not is_empty(k, v)}
    if isinstance(value, list):
        return [compact(item) for item in value]
    return value


def ok_fields(operation: str, path: Path) -> dict[str, Any]:
    """``schema_version``, ``status: "ok"``, ``operation`` and ``path`` (as a string), in
    that order: the start of a result's ``to_dict``."""
    return ok_document(operation=operation, path=str(path))


class _Result(Protocol):
    """A result dataclass: its ``path`` opens its document."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def path(self) -> Path:
        """The file the call named."""
        ...


def result_document(
    operation: str, result: _Result, keys: str = "", /, **values: Any
) -> dict[str, Any]:
    """A result's JSON document: :func:`ok_fields`, then
    :func:`~jupyter_jcli._json.json_fields` of ``result`` (``keys`` and ``values`` as
    there; ``operation`` and ``path``, when they are fields, keep their first places)."""
    return {**ok_fields(operation, result.path), **json_fields(result, keys, **values)}


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
