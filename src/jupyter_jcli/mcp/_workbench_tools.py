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
    WorkbenchRun,
    on_session,
    threaded,
)
from jupyter_jcli.workbench import (
    DEFAULT_OVERVIEW_LIMIT,
    DEFAULT_READ_BUDGET,
    DEFAULT_READ_MAX_IMAGES,
    SEARCH_FIELDS,
    Workbench,
    add_cell,
    create_notebook,
    move_cell,
    remove_cell,
    search_cells,
    summarize_cells,
    undo_last,
    update_cell,
)
from jupyter_jcli.workbench._cell_lists import CELL_LISTS, CELLS_LISTED, SKIPPED_RUNS

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

Effect = Literal["read", "create", "edit", "destructive", "execute"]
"""How a tool touches the world; sets its annotations (see :meth:`ToolSpec.annotations`)."""

PATH: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "description": "The notebook (.ipynb), or a py:percent .py paired with one: relative to "
    "the server's root (its working directory or --root), or absolute inside it.",
}
_NAME = {"type": "string", "minLength": 1, "description": "The cell's name (from the overview)."}
_REV = {
    "type": "string",
    "minLength": 1,
    "description": "The cell's rev as you last read it (overview or read_cells). A stale rev "
    "is refused with REV_MISMATCH and the current state.",
}
_ANCHOR_BEFORE = {"type": "string", "minLength": 1, "description": "Name of the anchor cell."}
_POSITION = {"type": "string", "enum": ["start", "end"], "description": "Start or end."}


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
    run: WorkbenchRun
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


_EDIT_NOTE = (
    "Writes the .ipynb atomically (and its paired .py), refuses a stale expected_rev with "
    "REV_MISMATCH (details: the cell's current state), keeps edits other programs made in "
    "between, and takes a snapshot for undo_last. The result gives the new rev and `stale`: "
    f"the code cells that must re-run (run_stale does that; at most {CELLS_LISTED} names, "
    "`stale_count` counts them all). Cheap: no kernel involved."
)

DOCUMENT_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="create_notebook",
        title="Create a notebook",
        description="Create a new .ipynb (nbformat 4.5) with optional initial cells and the "
        "kernelspec recorded. Refuses to overwrite anything (FILE_EXISTS). Use it to start a "
        "notebook; then notebook_overview/execute_cells work on it. Cheap, no kernel.",
        properties={
            "path": {**PATH, "description": "The new .ipynb, inside the server's root."},
            "cells": {
                "type": "array",
                "description": "Initial cells, in order.",
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
            "kernelspec_name": {
                "type": "string",
                "minLength": 1,
                "default": "python3",
                "description": "An installed kernelspec (KERNELSPEC_NOT_FOUND lists them).",
            },
        },
        effect="create",
        run=threaded(create_notebook),
    ),
    ToolSpec(
        name="notebook_overview",
        title="Notebook overview",
        description="Start here. One line per cell: name (the address every other tool "
        "takes), type (given when not code), rev (pass as expected_rev to edit), first line, "
        "what it defines and uses, parents/children in the dependency graph, lint findings, "
        "run status (fresh, stale, error, interrupted, never_run), tldr, and the kernel's "
        "state and epoch. "
        f"Paged: `limit` cells from `start` (default {DEFAULT_OVERVIEW_LIMIT}); `cell_count` "
        "is the notebook's total and `next_call` the next page. Costs about 100-200 "
        "characters per cell; no outputs, never runs anything.",
        properties={
            "path": PATH,
            "start": integer("Index of the first cell shown.", minimum=0, default=0),
            "limit": integer("The most cells shown.", minimum=1, default=DEFAULT_OVERVIEW_LIMIT),
        },
        run=on_session(Workbench.notebook_overview),
    ),
    ToolSpec(
        name="read_cells",
        title="Read cells",
        description="Sources and condensed outputs of cells chosen by name (or an index "
        "slice start/stop; neither: all cells), fitted into `budget` characters: long "
        "text is cut with a marker naming the exact read_notebook_output call that shows "
        "the rest, tables come as CSV, progress bars collapsed, repeated lines counted, ANSI "
        "removed; cell_type is given when not code; `next_call` goes on with cells left out "
        f"(`omitted_cells` names the first {CELLS_LISTED}, `omitted_cells_count` all). "
        "Charts come back as downscaled images (image content, not counted in the budget; one "
        "already sent in this session for the same cell rev is referred to). Cost: at "
        f"most `budget` characters (default {DEFAULT_READ_BUDGET:,}) plus the images. Reads "
        "only.",
        properties={
            "path": PATH,
            "names": string_list("The cells to show, in this order."),
            "start": {"type": "integer", "description": "Slice start (negative from the end)."},
            "stop": {"type": "integer", "description": "Slice end, exclusive."},
            "budget": integer(
                "Characters of source and output text over all cells.",
                minimum=1,
                default=DEFAULT_READ_BUDGET,
            ),
            "include_images": boolean(
                f"Return charts as images (at most {DEFAULT_READ_MAX_IMAGES} per call); false "
                "describes them in text instead.",
                default=True,
            ),
            RESEND_IMAGES: RESEND_IMAGES_SCHEMA,
        },
        run=on_session(Workbench.read_cells),
    ),
    ToolSpec(
        name="add_cell",
        title="Add a cell",
        description="Insert a new cell before/after a named anchor cell (expected_rev = the "
        "anchor's rev, required) or at position start/end (default: end; expected_rev "
        "optional = the notebook's structure_rev). Does not run it. " + _EDIT_NOTE,
        properties={
            "path": PATH,
            "source": {"type": "string", "description": "The new cell's source."},
            "cell_type": {"type": "string", "enum": CELL_TYPES, "default": "code"},
            "name": {
                "type": "string",
                "minLength": 1,
                "description": "Its name (kebab-case, unique); default derived from the source.",
            },
            "before": _ANCHOR_BEFORE,
            "after": _ANCHOR_BEFORE,
            "position": _POSITION,
            "expected_rev": {
                "type": "string",
                "minLength": 1,
                "description": "The anchor's rev, or the structure_rev for start/end.",
            },
        },
        required=("path", "source"),
        effect="edit",
        run=threaded(add_cell),
    ),
    ToolSpec(
        name="update_cell",
        title="Update a cell",
        description="Replace a cell's source, change its type and/or rename it (omitted "
        "parts stay). Does not run it. " + _EDIT_NOTE,
        properties={
            "path": PATH,
            "name": _NAME,
            "expected_rev": _REV,
            "source": {"type": "string", "description": "The new source."},
            "cell_type": {"type": "string", "enum": CELL_TYPES},
            "new_name": {
                "type": "string",
                "minLength": 1,
                "description": "A new name (kebab-case, unused); the cell keeps its rev and "
                "its run status (a rename stales nothing).",
            },
        },
        required=("path", "name", "expected_rev"),
        effect="destructive",
        run=threaded(update_cell),
    ),
    ToolSpec(
        name="remove_cell",
        title="Remove a cell",
        description="Delete a cell (with its outputs). undo_last restores it. " + _EDIT_NOTE,
        properties={"path": PATH, "name": _NAME, "expected_rev": _REV},
        required=("path", "name", "expected_rev"),
        effect="destructive",
        run=threaded(remove_cell),
    ),
    ToolSpec(
        name="move_cell",
        title="Move a cell",
        description="Move a cell before/after a named anchor, or to start/end (default "
        "end). Cells whose inputs now come from elsewhere become stale. " + _EDIT_NOTE,
        properties={
            "path": PATH,
            "name": _NAME,
            "expected_rev": _REV,
            "before": _ANCHOR_BEFORE,
            "after": _ANCHOR_BEFORE,
            "position": _POSITION,
        },
        required=("path", "name", "expected_rev"),
        effect="edit",
        run=threaded(move_cell),
    ),
    ToolSpec(
        name="undo_last",
        title="Undo the last change",
        description="Revert the last change a jupyter-jcli tool made to the notebook (and its "
        "paired .py): add, update, remove, move. Only what that change did goes back; outputs, "
        "execution counts and edits made since are kept. The result lists the cells `changed` "
        "and the cells now `stale`. Refuses with UNDO_CONFLICT (details name each cell and "
        "field changed since that it would overwrite) unless force; UNDO_EMPTY when there is "
        "nothing to undo. Each call undoes one more step. Cheap.",
        properties={
            "path": PATH,
            "force": boolean("Overwrite the changes made since that conflict.", default=False),
        },
        effect="destructive",
        run=threaded(undo_last),
    ),
    ToolSpec(
        name="search_cells",
        title="Search cells",
        description="Find cells whose source, name, cached summary or condensed output "
        "text matches a query (substring, case-insensitive; or a Python regex). Returns "
        "each match with its cell name, field and a snippet of the line. Use it instead of "
        "reading a big notebook whole. Cheap; reads only.",
        properties={
            "path": PATH,
            "query": {"type": "string", "minLength": 1, "description": "Text or regex."},
            "regex": {"type": "boolean", "default": False, "description": "query is a regex."},
            "fields": {
                "type": "array",
                "items": {"type": "string", "enum": list(SEARCH_FIELDS)},
                "minItems": 1,
                "description": "Where to search (default: all of them).",
            },
            "max_results": integer("Most matches returned (default 50, at most 1,000).", minimum=1),
            "context_chars": integer(
                "Characters of the line shown each side of a match (default 80, at most 1,000).",
                minimum=0,
            ),
        },
        required=("path", "query"),
        run=threaded(search_cells),
    ),
    ToolSpec(
        name="summarize_cells",
        title="Summarize cells",
        description="Detailed summaries of cells (tldr, description, what the outputs "
        "show), made by a small model in one batched request and cached in the cell's "
        "metadata by content hash, so an unchanged cell is never summarized twice. Without "
        "credentials or on failure: deterministic summaries from the cell itself, marked "
        "with *. Cost: one API call for the cells not yet cached; writes the cache only.",
        properties={
            "path": PATH,
            "names": string_list("The cells to summarize (default: all)."),
            "model": {"type": "string", "minLength": 1, "description": "Override the model."},
        },
        effect="edit",
        idempotent=True,
        open_world=True,
        run=threaded(summarize_cells),
    ),
)
