"""The bodies of ``j-cli notebook outputs`` and ``j-cli notebook output``, without click
(the click commands, :mod:`jupyter_jcli.cli._notebook`, call these).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jupyter_jcli.errors import UsageError

__all__ = ["list_cell_outputs", "read_cell_output", "read_options", "split_mime_types"]


def split_mime_types(values: Sequence[str]) -> list[str] | None:
    """``--supported-mime`` values, repeated and/or comma-separated, as one list.

    Returns:
        None when the option was not given; otherwise the MIME types in order, stripped,
        duplicates dropped.

    Raises:
        UsageError: ``USAGE_ERROR`` for an empty item (``""``, ``","``, ``"a,,b"``).
    """
    if not values:
        return None
    types = [part.strip() for value in values for part in value.split(",")]
    if not all(types):
        raise UsageError(
            "--supported-mime needs MIME types (comma-separated or repeated); "
            "an empty item was given.",
            {"supported_mime": list(values)},
        )
    return list(dict.fromkeys(types))


def read_options(
    *,
    mime_type: str | None,
    supported_mime: Sequence[str],
    offset: int | None,
    limit: int | None,
) -> dict[str, Any]:
    """The keyword arguments of ``read_output`` for the options given (others default).

    Raises:
        UsageError: ``USAGE_ERROR`` from :func:`split_mime_types`.
    """
    options: dict[str, Any] = {}
    if mime_type is not None:
        options["mime_type"] = mime_type
    supported = split_mime_types(supported_mime)
    if supported is not None:
        options["supported_mime_types"] = supported
    if offset is not None:
        options["offset"] = offset
    if limit is not None:
        options["limit"] = limit
    return options


def list_cell_outputs(file: str, cell_ref: str) -> dict[str, Any]:
    """The protocol's directory of the outputs of cell ``cell_ref`` (name or index) of FILE.

    Raises:
        OutputProtocolError: the protocol's codes; ``CELL_NOT_FOUND`` for an unknown name.
    """
    from jupyter_jcli.cli._cell_ref import resolve_loaded_cell
    from jupyter_jcli.workbench import saved_outputs as open_notebook

    loaded = open_notebook(file)
    return loaded.list_outputs(resolve_loaded_cell(loaded, cell_ref))


def read_cell_output(
    file: str, cell_ref: str, output_index: int, options: dict[str, Any]
) -> dict[str, Any]:
    """The protocol's read of output ``output_index`` of cell ``cell_ref`` of FILE.

    Raises:
        OutputProtocolError: the protocol's codes; ``CELL_NOT_FOUND`` for an unknown name.
    """
    from jupyter_jcli.cli._cell_ref import resolve_loaded_cell
    from jupyter_jcli.workbench import saved_outputs as open_notebook

    loaded = open_notebook(file)
    return loaded.read_output(resolve_loaded_cell(loaded, cell_ref), output_index, **options)
