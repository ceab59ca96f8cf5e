"""Checking tool arguments against the tools' own input schemas, before any work is done.

The workbench tools' input schemas (see :mod:`jupyter_jcli.mcp._workbench_tools`) use a
small subset of JSON Schema 2020-12 (https://json-schema.org/draft/2020-12): ``type``
(``string``, ``integer``, ``number``, ``boolean``, ``array``, ``object``), ``enum``,
``minimum``, ``exclusiveMinimum``, ``maximum``, ``minLength``, ``minItems``, ``items``,
``properties``, ``required`` and ``additionalProperties: false``. :func:`check_arguments`
enforces exactly that subset and reports every violation in one ``USAGE_ERROR``, so a model
can fix the whole call at once; defaults from the schema are filled in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jupyter_jcli.errors import UsageError

__all__ = ["check_arguments"]

_MAX_PROBLEMS = 20


def _type_ok(value: Any, expected: str) -> bool:
    if expected == "string":
        return isinstance(value, str)
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "array":
        return isinstance(value, list)
    if expected == "object":
        return isinstance(value, dict)
    return expected == "null" and value is None


def _check(value: Any, schema: Mapping[str, Any], where: str, problems: list[str]) -> None:
    expected = schema.get("type")
    if expected is not None:
        allowed = [expected] if isinstance(expected, str) else list(expected)
        if not any(_type_ok(value, kind) for kind in allowed):
            problems.append(f"{where}: expected {' or '.join(allowed)}")
            return
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(repr(choice) for choice in schema["enum"])
        problems.append(f"{where}: must be one of {choices}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{where}: must be >= {schema['minimum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            problems.append(f"{where}: must be > {schema['exclusiveMinimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{where}: must be <= {schema['maximum']}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        problems.append(f"{where}: must have at least {schema['minLength']} character(s)")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            problems.append(f"{where}: must have at least {schema['minItems']} item(s)")
        items = schema.get("items")
        if isinstance(items, Mapping):
            for position, item in enumerate(value):
                _check(item, items, f"{where}[{position}]", problems)
    if isinstance(value, dict) and "properties" in schema:
        _check_object(value, schema, where, problems)


def _check_object(
    value: Mapping[str, Any], schema: Mapping[str, Any], where: str, problems: list[str]
) -> None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    prefix = f"{where}." if where else ""
    for name in schema.get("required", ()):
        if name not in value:
            problems.append(f"{prefix}{name}: required")
    if schema.get("additionalProperties") is False:
        for name in sorted(set(value) - set(properties)):
            problems.append(f"{prefix}{name}: unknown argument")
    for name, item in value.items():
        if name in properties:
            _check(item, properties[name], f"{prefix}{name}", problems)


def check_arguments(
    tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Check a call's arguments against the tool's input schema and fill in defaults.

    Args:
        tool: the tool name (for the error's details).
        schema: the tool's input schema (an ``object`` schema in the subset described above).
        arguments: the call's arguments (``None``: none given).

    Returns:
        A new dict: the arguments given, plus each absent property's ``default``.

    Raises:
        UsageError: ``USAGE_ERROR`` listing every problem (details ``tool``, ``problems``:
            strings ``"<argument>: <what is wrong>"``, at most 20).
    """
    given = dict(arguments or {})
    problems: list[str] = []
    _check_object(given, schema, "", problems)
    if problems:
        shown = problems[:_MAX_PROBLEMS]
        raise UsageError(
            f"Invalid arguments for {tool}: {'; '.join(shown)}.",
            {"tool": tool, "problems": shown},
        )
    for name, item in schema.get("properties", {}).items():
        if name not in given and "default" in item:
            given[name] = item["default"]
    return given
