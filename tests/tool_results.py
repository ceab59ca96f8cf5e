"""The one check of every MCP tool result the test suite receives from our two servers.

Every test client (``tests/mcp/readonly_client.py``, ``tests/mcp/workbench_client.py``, the
raw-line and host contract tests) passes each ``tools/call`` result through
:func:`checked_result`, which applies what any MCP client may apply:

- success: ``structuredContent`` is present and validates against the tool's declared
  ``outputSchema`` (JSON Schema 2020-12, ``jsonschema``), and the first content block is the
  JSON the model reads: the structured content itself for ``read_notebook_output`` (the
  saved-output protocol), its compact view (``jupyter_jcli.mcp._model_text.model_view``) for
  every other tool, with no field that is null, false, zero or empty. A document that drifts
  from its schema fails the test at once.
- error (``isError``): no ``structuredContent`` (the output schema describes success, and the
  TypeScript SDK validates any structured content, even on an error result), and the only
  content block is the error JSON (``schema_version``, ``status: "error"``, ``code``,
  ``message``, ``details``), which is what hosts show the model.

Results are checked in their wire form (camelCase JSON); a ``CallToolResult`` from the Python
SDK's client is dumped to it first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

import mcp_types as types
from jsonschema import Draft202012Validator

from jupyter_jcli.mcp import readonly, workbench
from jupyter_jcli.mcp._model_text import model_view

__all__ = ["checked_result", "declared_tools", "empty_fields", "output_validator", "wire_form"]

PROTOCOL_TOOL = "read_notebook_output"
"""The one tool whose text is its structured content (the saved-output protocol document)."""
ZERO_KEEPERS = frozenset(
    {"index", "output_index", "image", "start", "stop", "cell_index", "offset"}
    | {"cell_count", "length", "remaining"}
)
"""Fields whose 0 means something (a position, an empty notebook)."""


@cache
def declared_tools() -> dict[str, types.Tool]:
    """Every tool of both servers by name (``read_notebook_output`` is the same in both)."""
    tools = {tool.name: tool for tool in workbench.tools()}
    assert readonly.tool() == tools[readonly.tool().name]
    return tools


@cache
def output_validator(tool: str) -> Draft202012Validator:
    """The validator of a tool's declared output schema (itself checked to be a schema)."""
    schema = declared_tools()[tool].output_schema
    assert schema is not None, f"{tool} declares no output schema"
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def wire_form(result: types.CallToolResult | Mapping[str, Any]) -> dict[str, Any]:
    """A tool result as JSON-RPC carries it (``structuredContent``, ``isError``, ...)."""
    if isinstance(result, types.CallToolResult):
        dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped
    return dict(result)


def checked_result(
    tool: str, result: types.CallToolResult | Mapping[str, Any]
) -> tuple[bool, dict[str, Any]]:
    """Check one result of ``tool`` as described above.

    Args:
        tool: the tool that was called.
        result: its result (an SDK object, or the JSON-RPC ``result`` member).

    Returns:
        Whether it is an error, and the result's JSON document: the error JSON of its text
        for an error, its structured content (the complete record) for a success.
    """
    wire = wire_form(result)
    content = wire.get("content")
    assert isinstance(content, list) and content, f"a tool result always has content: {wire}"
    first = content[0]
    assert first.get("type") == "text", f"the first content block is the JSON text: {first}"
    document = json.loads(first["text"])
    assert isinstance(document, dict), document
    is_error = wire.get("isError") is True
    if is_error:
        assert "structuredContent" not in wire, f"an error result has no structured content: {wire}"
        assert len(content) == 1, f"an error result is its JSON text only: {content}"
        assert document["schema_version"] == 1, document
        assert document["status"] == "error", document
        assert isinstance(document["code"], str) and document["code"], document
        assert isinstance(document["message"], str), document
        assert isinstance(document.get("details", {}), dict), document
        assert "Traceback" not in first["text"], document
        return True, document
    assert "structuredContent" in wire, f"{tool} succeeded without structured content: {wire}"
    structured = wire["structuredContent"]
    errors = sorted(output_validator(tool).iter_errors(structured), key=str)
    assert not errors, f"{tool} result does not match its output schema: {errors[0]}"
    assert structured["schema_version"] == 1 and structured["status"] == "ok", structured
    if tool == PROTOCOL_TOOL:
        assert structured == document, "the text and the structured content differ"
    else:
        assert document == model_view(structured), "the text is not the model's view"
        assert not empty_fields(document), f"{tool}: empty fields in the text: {document}"
        assert document["status"] == "ok", document
    return False, structured


def empty_fields(value: Any, where: str = "") -> list[str]:
    """Where ``value`` holds a field whose value carries nothing (null, false, "", [], {},
    a 0 that is no position or count)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{where}.{key}"
            nothing = item is None or item in ("", [], {}) or (item is False and key != "ok")
            if nothing or (item == 0 and item is not False and key not in ZERO_KEEPERS):
                found.append(here)
            found.extend(empty_fields(item, here))
    elif isinstance(value, list):
        for number, item in enumerate(value):
            found.extend(empty_fields(item, f"{where}[{number}]"))
    return found
