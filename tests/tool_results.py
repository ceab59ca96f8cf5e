"""The one check of every MCP tool result the test suite receives from our two servers.

Every test client (``tests/mcp/readonly_client.py``, ``tests/mcp/workbench_client.py``, the
raw-line and host contract tests) passes each ``tools/call`` result through
:func:`checked_result`, which applies what any MCP client may apply:

- success: ``structuredContent`` is present and validates against the tool's declared
  ``outputSchema`` (JSON Schema 2020-12, ``jsonschema``), and the first content block is the
  same JSON as text. A document that drifts from its schema fails the test at once.
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

__all__ = ["checked_result", "declared_tools", "output_validator", "wire_form"]


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
        Whether it is an error, and the JSON document of its first (text) content block.
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
    assert structured == document, "the text and the structured content differ"
    assert document["schema_version"] == 1 and document["status"] == "ok", document
    return False, document
