"""The ``jupyter-mcp`` document tools: descriptions, input schemas, annotations, operations.

Each tool is a :class:`ToolSpec`: its definition and its operation (``run``);
:func:`ToolSpec.tool` builds the MCP ``Tool`` (MCP tool definitions and annotations:
https://modelcontextprotocol.io/specification/2025-11-25/server/tools) and
:func:`ToolSpec.registered` the registry entry bound to a server's workbench.
The kernel tools live in :mod:`jupyter_jcli.mcp._kernel_tools`, the shared
``read_notebook_output`` in :mod:`jupyter_jcli.mcp._output_tool`. Input schemas use only the
JSON Schema subset that :func:`jupyter_jcli.mcp._arguments.check_arguments` enforces.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import mcp_types as types

from jupyter_jcli.errors import CELL_TYPES
from jupyter_jcli.mcp._arguments import check_arguments
from jupyter_jcli.mcp._registry import RegisteredTool
from jupyter_jcli.mcp._workbench_calls import (
    CHANGED_BY_OTHERS,
    RESEND_IMAGES,
    RESEND_IMAGES_SCHEMA,
    ToolHandler,
    on_session,
    threaded,
)
from jupyter_jcli.workbench import (
    CELL_LISTS,
    CELLS_LISTED,
    DEFAULT_OVERVIEW_LIMIT,
    DEFAULT_READ_BUDGET,
    DEFAULT_READ_MAX_IMAGES,
    SEARCH_FIELDS,
    SKIPPED_RUNS,
    Workbench,
    add_cell,
    clear_outputs,
    create_notebook,
    edit_cell_source,
    move_cell,
    remove_cell,
    search_cells,
    summarize_cells,
    undo_last,
    update_cell,
)

__all__ = [
    "CELL_TYPES",
    "DOCUMENT_TOOLS",
    "PATH",
    "Effect",
    "ToolSpec",
    "boolean",
    "envelope_schema",
    "integer",
    "string_list",
]

Effect = Literal["read", "create", "edit", "start", "destructive", "execute"]
"""How a tool touches the world (``start``: starts a process that keeps running, a kernel);
sets its annotations (see :meth:`ToolSpec.annotations`)."""

PATH: dict[str, Any] = {"type": "string", "minLength": 1}
"""The notebook argument: what it may name is said once, in notebook_overview."""
_NAME = {"type": "string", "minLength": 1}
_REV = {"type": "string", "minLength": 1}
_ANCHOR = {"type": "string", "minLength": 1}
_POSITION = {"type": "string", "enum": ["start", "end"]}


def string_list(description: str, *, min_items: int = 0) -> dict[str, Any]:
    """An array-of-names schema."""
    schema: dict[str, Any] = {
        "type": "array",
        "items": {"type": "string", "minLength": 1},
        "description": description,
    }
    if min_items:
        schema["minItems"] = min_items
    return schema


def integer(
    description: str, *, minimum: int | None = None, default: int | None = None
) -> dict[str, Any]:
    """An integer argument's schema (``minimum`` and ``default`` when given)."""
    schema: dict[str, Any] = {"type": "integer"}
    if minimum is not None:
        schema["minimum"] = minimum
    if default is not None:
        schema["default"] = default
    return {**schema, "description": description}


def boolean(description: str, *, default: bool) -> dict[str, Any]:
    """A boolean argument's schema."""
    return {"type": "boolean", "default": default, "description": description}


def envelope_schema(operation: str | None) -> dict[str, Any]:
    """The output schema every success document of a tool meets (its envelope, and its
    bounded lists of cells: :mod:`jupyter_jcli.workbench._cell_lists`).

    Args:
        operation: the ``operation`` field's value, or None when the document has none.
    """
    properties: dict[str, Any] = {
        "schema_version": {"const": 1},
        "status": {"const": "ok"},
        "path": {"type": "string"},
        CHANGED_BY_OTHERS: {
            "type": "string",
            "description": "The cells someone else changed since your last call on the notebook.",
        },
    }
    required = ["schema_version", "status"]
    if operation is not None:
        properties["operation"] = {"const": operation}
        required.append("operation")
        properties.update(_cell_lists_schema(operation))
    return {"type": "object", "required": required, "properties": properties}


def _cell_lists_schema(operation: str) -> dict[str, Any]:
    """The properties of ``operation``'s bounded lists: each list, its ``<key>_count`` and
    the ``notice`` that says what was left out (``skipped_count`` for an execution)."""
    keys = CELL_LISTS.get(operation, ())
    if not keys:
        return {}
    count = {"type": "integer", "minimum": 0}
    properties: dict[str, Any] = {}
    for key in keys:
        properties[key] = {"type": "array", "maxItems": CELLS_LISTED}
        properties[f"{key}_count"] = {
            **count,
            "description": f"How many cells `{key}` names in all (it lists the first "
            f"{CELLS_LISTED}).",
        }
    if operation in SKIPPED_RUNS:
        for key, what in (("ran_count", "Cells run"), ("skipped_count", "Cells skipped")):
            properties[key] = {
                **count,
                "description": f"{what} in all (`cells` lists the first {CELLS_LISTED}).",
            }
    properties["notice"] = {
        "type": "string",
        "description": "What a list left out, and the notebook_overview call that pages it.",
    }
    return properties


@dataclass(frozen=True)
class ToolSpec:
    """One tool's definition.

    Attributes:
        name: the tool name, also the ``operation`` value of its success documents.
        title: a short human title.
        description: when to use it, what it returns, what it costs.
        properties: the input schema's properties (``path`` first; the others are the
            operation's keyword arguments).
        run: the operation (see :mod:`jupyter_jcli.mcp._workbench_calls`).
        required: required argument names.
        effect: what the tool does to files and kernels.
        idempotent: calling it twice with the same arguments has no further effect.
        open_world: whether it reaches outside the notebook and kernel (user code, an API).
    """

    name: str
    title: str
    description: str
    properties: dict[str, Any]
    run: ToolHandler
    required: tuple[str, ...] = ("path",)
    effect: Effect = "read"
    idempotent: bool = False
    open_world: bool = False

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (an object, no unknown properties)."""
        return {
            "type": "object",
            "properties": self.properties,
            "required": list(self.required),
            "additionalProperties": False,
        }

    def annotations(self) -> types.ToolAnnotations:
        """MCP tool annotations: read-only for reads; destructive for edits that replace or
        delete content, undo, execution (outputs are replaced) and kernel restarts."""
        read_only = self.effect == "read"
        return types.ToolAnnotations(
            title=self.title,
            read_only_hint=read_only,
            destructive_hint=self.effect in ("destructive", "execute"),
            idempotent_hint=self.idempotent or read_only,
            open_world_hint=self.open_world,
        )

    def tool(self) -> types.Tool:
        """The MCP ``Tool``."""
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=envelope_schema(self.name),
            annotations=self.annotations(),
        )

    def registered(self, workbench: Workbench) -> RegisteredTool:
        """The registry entry, its operation bound to ``workbench``; the arguments are checked
        against :attr:`input_schema` (defaults filled in). The ``create`` tool's file must
        not exist yet."""
        return RegisteredTool(
            definition=self.tool(),
            operation=partial(self.run, workbench),
            check=partial(check_arguments, self.name, self.input_schema),
            must_exist=self.effect != "create",
        )


_EDIT_NOTE = "See notebook_overview."

DOCUMENT_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="create_notebook",
        title="Create a notebook",
        description="Create a new .ipynb with optional initial cells and its "
        "kernelspec recorded. Never overwrites (FILE_EXISTS). No kernel.",
        properties={
            "path": PATH,
            "cells": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "source": {"type": "string"},
                        "cell_type": {"type": "string", "enum": CELL_TYPES, "default": "code"},
                        "name": {"type": "string", "minLength": 1},
                    },
                    "required": ["source"],
                    "additionalProperties": False,
                },
                "default": [],
            },
            "kernelspec_name": {"type": "string", "minLength": 1, "default": "python3"},
        },
        effect="create",
        run=threaded(create_notebook),
    ),
    ToolSpec(
        name="notebook_overview",
        title="Notebook overview",
        description="Start here. One line per cell: name (the address other tools take), "
        "rev, type (when not code), first line, names defined/used, parents/children, lint, "
        "status (fresh, stale, error, interrupted, never_run), tldr; and the kernel. Paged "
        "(`next_call`).\n"
        "Every tool's path: a .ipynb or its paired .py, under the server's root.\n"
        "Edits (add_cell, update_cell, edit_cell_source, remove_cell, move_cell, "
        "clear_outputs) take the rev you read as expected_rev (stale: REV_MISMATCH), run "
        "nothing, write atomically keeping others' edits, are undone by undo_last, and return "
        "the new rev and `stale`: what run_stale re-runs.",
        properties={
            "path": PATH,
            "start": integer("First cell index.", minimum=0, default=0),
            "limit": integer("Most cells.", minimum=1, default=DEFAULT_OVERVIEW_LIMIT),
        },
        run=on_session(Workbench.notebook_overview),
    ),
    ToolSpec(
        name="read_cells",
        title="Read cells",
        description="Sources and condensed outputs of cells by name, or an index slice "
        "start/stop (neither: all), fitted into `budget` characters; a cut names the "
        "read_notebook_output call for the rest and `next_call` continues. Charts come as "
        f"images (at most {DEFAULT_READ_MAX_IMAGES}, outside the budget).",
        properties={
            "path": PATH,
            "names": string_list("Cells, in this order."),
            "start": {"type": "integer", "description": "Negative: from the end."},
            "stop": {"type": "integer"},
            "budget": integer("Characters in all.", minimum=1, default=DEFAULT_READ_BUDGET),
            "include_images": boolean("False: describe charts in text.", default=True),
            RESEND_IMAGES: RESEND_IMAGES_SCHEMA,
        },
        run=on_session(Workbench.read_cells),
    ),
    ToolSpec(
        name="add_cell",
        title="Add a cell",
        description="Insert a cell before/after an anchor cell (expected_rev: the anchor's "
        "rev) or at position start/end (default end; expected_rev optional: the "
        "structure_rev). " + _EDIT_NOTE,
        properties={
            "path": PATH,
            "source": {"type": "string"},
            "cell_type": {"type": "string", "enum": CELL_TYPES, "default": "code"},
            "name": {"type": "string", "minLength": 1, "description": "Default: from source."},
            "before": _ANCHOR,
            "after": _ANCHOR,
            "position": _POSITION,
            "expected_rev": {"type": "string", "minLength": 1},
        },
        required=("path", "source"),
        effect="edit",
        run=threaded(add_cell),
    ),
    ToolSpec(
        name="update_cell",
        title="Update a cell",
        description="Replace a cell's source, change its type and/or rename it (omitted "
        "parts stay). " + _EDIT_NOTE,
        properties={
            "path": PATH,
            "name": _NAME,
            "expected_rev": _REV,
            "source": {"type": "string"},
            "cell_type": {"type": "string", "enum": CELL_TYPES},
            "new_name": {"type": "string", "minLength": 1},
        },
        required=("path", "name", "expected_rev"),
        effect="destructive",
        run=threaded(update_cell),
    ),
    ToolSpec(
        name="edit_cell_source",
        title="Edit a cell's source",
        description="Replace old_string by new_string in a cell's source. old_string must "
        "occur exactly once (all occurrences with replace_all), else OLD_STRING_COUNT "
        "(details.count) and nothing changes. Result as update_cell's. " + _EDIT_NOTE,
        properties={
            "path": PATH,
            "name": _NAME,
            "expected_rev": _REV,
            "old_string": {"type": "string", "minLength": 1},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean", "default": False},
        },
        required=("path", "name", "expected_rev", "old_string", "new_string"),
        effect="destructive",
        run=threaded(edit_cell_source),
    ),
    ToolSpec(
        name="remove_cell",
        title="Remove a cell",
        description="Delete a cell and its outputs (undo_last restores it); cells reading from it "
        "become stale. " + _EDIT_NOTE,
        properties={"path": PATH, "name": _NAME, "expected_rev": _REV},
        required=("path", "name", "expected_rev"),
        effect="destructive",
        run=threaded(remove_cell),
    ),
    ToolSpec(
        name="move_cell",
        title="Move a cell",
        description="Move a cell before/after an anchor cell, or to position start/end "
        "(default end). " + _EDIT_NOTE,
        properties={
            "path": PATH,
            "name": _NAME,
            "expected_rev": _REV,
            "before": _ANCHOR,
            "after": _ANCHOR,
            "position": _POSITION,
        },
        required=("path", "name", "expected_rev"),
        effect="edit",
        run=threaded(move_cell),
    ),
    ToolSpec(
        name="clear_outputs",
        title="Clear outputs",
        description="Empty the saved outputs and execution counts of the named code cells "
        "(the kernel keeps its variables). A markdown/raw cell is USAGE_ERROR, an unknown "
        "name CELL_NOT_FOUND; then nothing changes. " + _EDIT_NOTE,
        properties={"path": PATH, "names": string_list("Code cells.", min_items=1)},
        required=("path", "names"),
        effect="destructive",
        idempotent=True,
        run=threaded(clear_outputs),
    ),
    ToolSpec(
        name="undo_last",
        title="Undo the last change",
        description="Revert the last change a tool made to the notebook, one step per call; "
        "what was written since (outputs, other edits) stays. UNDO_CONFLICT names what it "
        "would overwrite (force overwrites it); UNDO_EMPTY: nothing to undo.",
        properties={"path": PATH, "force": {"type": "boolean", "default": False}},
        effect="destructive",
        run=threaded(undo_last),
    ),
    ToolSpec(
        name="search_cells",
        title="Search cells",
        description="Find cells whose source, name, summary or output text matches a query "
        "(substring, any case, or a regex): a snippet per match.",
        properties={
            "path": PATH,
            "query": {"type": "string", "minLength": 1},
            "regex": {"type": "boolean", "default": False},
            "fields": {
                "type": "array",
                "items": {"type": "string", "enum": list(SEARCH_FIELDS)},
                "minItems": 1,
                "description": "Default: all.",
            },
            "max_results": integer("Default 50, at most 1,000.", minimum=1),
            "context_chars": integer("Default 80, at most 1,000.", minimum=0),
        },
        required=("path", "query"),
        run=threaded(search_cells),
    ),
    ToolSpec(
        name="summarize_cells",
        title="Summarize cells",
        description="Summaries of cells (tldr, description, what the outputs show) by a small "
        "model in one request, cached in the cell's metadata by content hash; without "
        "credentials, deterministic ones marked *.",
        properties={
            "path": PATH,
            "names": string_list("Default: all."),
            "model": {"type": "string", "minLength": 1},
        },
        effect="edit",
        idempotent=True,
        open_world=True,
        run=threaded(summarize_cells),
    ),
)
