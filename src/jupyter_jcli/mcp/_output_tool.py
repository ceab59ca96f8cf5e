"""The ``read_notebook_output`` tool, shared by both MCP servers: :data:`OUTPUT_TOOL`.

``jcli-notebook-output`` (:mod:`jupyter_jcli.mcp.readonly`) serves it alone;
``jupyter-mcp`` (:mod:`jupyter_jcli.mcp.workbench`) serves it beside the workbench tools.
The registry entry checks the arguments with :func:`parse_output_arguments`; the dispatcher
resolves ``file_path`` inside the roots; the document is rendered with
:func:`jupyter_jcli.mcp._results.protocol_result`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread
import mcp_types as types

from jupyter_jcli.errors import UsageError
from jupyter_jcli.mcp._arguments import check_arguments
from jupyter_jcli.mcp._readonly_schema import (
    INPUT_SCHEMA,
    OUTPUT_SCHEMA,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    TOOL_TITLE,
)
from jupyter_jcli.mcp._registry import Call, RegisteredTool, Reply

__all__ = [
    "OUTPUT_TOOL",
    "OUTPUT_TOOL_NAME",
    "OutputRequest",
    "output_tool",
    "parse_output_arguments",
]

OUTPUT_TOOL_NAME = TOOL_NAME
_READ_OPTIONS = ("mime_type", "supported_mime_types", "offset", "limit")


def output_tool() -> types.Tool:
    """The ``read_notebook_output`` tool definition (schemas, description, annotations).

    Annotated read-only, idempotent, not destructive, closed world (MCP tool annotations,
    https://modelcontextprotocol.io/specification/2025-11-25/server/tools).
    """
    return types.Tool(
        name=TOOL_NAME,
        title=TOOL_TITLE,
        description=TOOL_DESCRIPTION,
        input_schema=INPUT_SCHEMA,
        output_schema=OUTPUT_SCHEMA,
        annotations=types.ToolAnnotations(
            title=TOOL_TITLE,
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


@dataclass(frozen=True)
class OutputRequest:
    """One checked ``read_notebook_output`` call.

    Attributes:
        file_path: the path as the client sent it (resolved later against the roots).
        cell_index: the cell position (its range is checked by the protocol).
        output_index: the output position, or None to list the cell's outputs.
        read_options: ``mime_type``, ``supported_mime_types``, ``offset``, ``limit`` given
            (``limit`` may be None: the whole text, bounded by the transport limit).
    """

    file_path: str
    cell_index: int
    output_index: int | None
    read_options: dict[str, Any]


def parse_output_arguments(arguments: Mapping[str, Any] | None) -> OutputRequest:
    """Check the arguments against the tool's declared input schema (names, JSON types,
    ``minLength``; :func:`jupyter_jcli.mcp._arguments.check_arguments`), so a call the schema
    forbids never reaches the protocol.

    A null argument counts as absent, except ``limit: null`` in a read, which is passed on as
    ``limit=None`` (the whole text, as in the Python API). Read options with a value need
    ``output_index``.

    Raises:
        UsageError: ``USAGE_ERROR`` listing every schema violation (details ``tool``,
            ``problems``), or read options given without ``output_index``.
    """
    given = dict(arguments or {})
    args = {key: value for key, value in given.items() if value is not None}
    check_arguments(TOOL_NAME, INPUT_SCHEMA, args)  # defaults are the protocol's to apply
    output_index = args.get("output_index")
    read_options = {key: args[key] for key in _READ_OPTIONS if key in args}
    if output_index is None and read_options:
        raise UsageError(
            f"The read options {', '.join(sorted(read_options))} need output_index: they apply "
            "to reading one output.",
            {"parameters": sorted(read_options)},
        )
    if output_index is not None and "limit" in given and given["limit"] is None:
        read_options["limit"] = None
    return OutputRequest(str(args["file_path"]), args["cell_index"], output_index, read_options)


def _check(arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    return asdict(parse_output_arguments(arguments))


def _read(
    path: Path, *, cell_index: int, output_index: int | None, read_options: dict[str, Any]
) -> dict[str, Any]:
    """One saved-output protocol call on the resolved notebook. Blocking."""
    from jupyter_jcli.workbench import saved_outputs  # the active store's (--store)

    loaded = saved_outputs(path)
    if output_index is None:
        return loaded.list_outputs(cell_index)
    return loaded.read_output(cell_index, output_index, **read_options)


async def _operation(call: Call) -> Reply:
    return Reply(await anyio.to_thread.run_sync(partial(_read, call.notebook, **call.arguments)))


OUTPUT_TOOL = RegisteredTool(
    definition=output_tool(),
    operation=_operation,
    check=_check,
    path_argument="file_path",
    protocol=True,
)
"""``read_notebook_output`` in the registry: a directory without ``output_index``, else a read
(errors: the protocol's codes, see :mod:`jupyter_jcli.outputs`)."""
