"""``jcli-notebook-output`` through the MCP SDK's client: the tool, reads and errors, in-process
(the failures also over stdio, to see that no traceback reaches stderr)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from memory_client import readonly_in_process
from readonly_client import (
    ERRORS_NB,
    PLOTLY_NB,
    TEXT_NB,
    TOOL,
    call,
    error_code,
    module_params,
    open_session,
    populate_root,
)

from tool_results import checked_result

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return populate_root(tmp_path / "root")


def _stored(root: Path, name: str, cell: int, output: int) -> dict[str, Any]:
    notebook = json.loads((root / name).read_text(encoding="utf-8"))
    stored: dict[str, Any] = notebook["cells"][cell]["outputs"][output]
    return stored


def _joined(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


async def test_lists_one_read_only_tool_with_its_schemas(root: Path, tmp_path: Path) -> None:
    async with readonly_in_process(root) as session:
        listed = await session.list_tools()
    assert [tool.name for tool in listed.tools] == [TOOL]
    tool = listed.tools[0]
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is True
    assert tool.annotations.idempotent_hint is True
    assert tool.annotations.destructive_hint is False
    assert tool.annotations.open_world_hint is False
    assert tool.input_schema["type"] == "object"
    assert tool.input_schema["required"] == ["file_path", "cell_index"]
    assert set(tool.input_schema["properties"]) == {
        "file_path",
        "cell_index",
        "output_index",
        "mime_type",
        "supported_mime_types",
        "offset",
        "limit",
    }
    assert tool.output_schema is not None
    assert tool.output_schema["type"] == "object"
    Draft202012Validator.check_schema(tool.output_schema)
    assert tool.description is not None
    assert "output_index" in tool.description
    assert "next_offset" in tool.description


async def test_lists_a_cells_saved_outputs(root: Path, tmp_path: Path) -> None:
    async with readonly_in_process(root) as session:
        result, doc = await call(session, file_path=str(root / TEXT_NB), cell_index=9)
        schema = (await session.list_tools()).tools[0].output_schema
    assert not result.is_error
    assert len(result.content) == 1
    assert doc["status"] == "ok"
    assert doc["source"]["path"] == str(root / TEXT_NB)
    assert doc["source"]["cell_index"] == 9
    assert doc["output_count"] == 2
    assert [entry["available_mime_types"] for entry in doc["outputs"]] == [
        ["image/png", "text/plain"],
        ["image/png", "text/plain"],
    ]
    assert schema is not None
    assert not list(Draft202012Validator(schema).iter_errors(doc))


async def test_reads_a_text_page_then_the_next(root: Path, tmp_path: Path) -> None:
    stored = _joined(_stored(root, TEXT_NB, 5, 0)["data"]["text/html"])
    async with readonly_in_process(root) as session:
        _, first = await call(session, file_path=TEXT_NB, cell_index=5, output_index=0, limit=100)
        page = first["selected"]
        assert page["mime_type"] == "text/html"
        assert page["truncated"] is True
        assert page["total_characters"] == len(stored)
        _, rest = await call(
            session,
            file_path=TEXT_NB,
            cell_index=5,
            output_index=0,
            offset=page["next_offset"],
            limit=len(stored),
        )
    assert rest["selected"]["truncated"] is True  # a page from an offset is not the whole text
    assert "next_offset" not in rest["selected"]
    assert page["data"] + rest["selected"]["data"] == stored


async def test_mime_type_picks_a_representation(root: Path, tmp_path: Path) -> None:
    stored = _joined(_stored(root, TEXT_NB, 5, 0)["data"]["text/plain"])
    async with readonly_in_process(root) as session:
        _, explicit = await call(
            session, file_path=TEXT_NB, cell_index=5, output_index=0, mime_type="text/plain"
        )
        _, restricted = await call(
            session,
            file_path=TEXT_NB,
            cell_index=9,
            output_index=0,
            supported_mime_types=["text/plain"],
        )
    assert explicit["selected"]["mime_type"] == "text/plain"
    assert explicit["selected"]["data"] == stored
    assert restricted["selected"]["mime_type"] == "text/plain"


async def test_reads_a_png_as_image_content_without_repeating_the_base64(
    root: Path, tmp_path: Path
) -> None:
    stored = _joined(_stored(root, TEXT_NB, 9, 0)["data"]["image/png"]).replace("\n", "")
    async with readonly_in_process(root) as session:
        result, doc = await call(session, file_path=TEXT_NB, cell_index=9, output_index=0)
        schema = (await session.list_tools()).tools[0].output_schema
    assert not result.is_error
    assert [block.type for block in result.content] == ["text", "image"]
    image = result.content[1]
    assert isinstance(image, types.ImageContent)
    assert image.mime_type == "image/png"
    png = base64.b64decode(image.data, validate=True)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert png == base64.b64decode(stored)
    selected = doc["selected"]
    assert "data" not in selected
    assert selected["delivered_as"] == "image_content"
    assert selected["bytes"] == len(png)
    assert selected["width"] > 0
    assert selected["height"] > 0
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert image.data[:64] not in text.text
    assert image.data[:64] not in json.dumps(result.structured_content)
    assert doc["source"]["output_index"] == 0
    assert schema is not None
    assert not list(Draft202012Validator(schema).iter_errors(doc))


async def test_reads_a_json_mime_value_whole(root: Path, tmp_path: Path) -> None:
    mime = "application/vnd.plotly.v1+json"
    stored = _stored(root, PLOTLY_NB, 4, 0)["data"][mime]
    async with readonly_in_process(root) as session:
        result, doc = await call(
            session, file_path=PLOTLY_NB, cell_index=4, output_index=0, mime_type=mime
        )
    assert len(result.content) == 1
    assert doc["selected"]["encoding"] == "json"
    assert doc["selected"]["data"] == stored


async def test_reads_streams_and_errors(root: Path, tmp_path: Path) -> None:
    stream = _stored(root, ERRORS_NB, 6, 0)
    error = _stored(root, TEXT_NB, 11, 0)
    async with readonly_in_process(root) as session:
        _, streamed = await call(session, file_path=ERRORS_NB, cell_index=6, output_index=0)
        _, raised = await call(session, file_path=TEXT_NB, cell_index=11, output_index=0)
    assert streamed["output_type"] == "stream"
    assert streamed["stream"]["name"] == "stdout"
    assert streamed["stream"]["data"] == _joined(stream["text"])
    assert raised["output_type"] == "error"
    assert raised["error"]["ename"] == error["ename"]
    assert raised["error"]["traceback"] == error["traceback"]


ERROR_CASES: list[tuple[str, dict[str, Any]]] = [
    ("OUTPUT_NOT_FOUND", {"file_path": TEXT_NB, "cell_index": 9, "output_index": 2}),
    ("CELL_NOT_FOUND", {"file_path": TEXT_NB, "cell_index": 999}),
    (
        "MIME_NOT_FOUND",
        {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0, "mime_type": "image/svg+xml"},
    ),
    (
        "MIME_NOT_SUPPORTED",
        {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0, "supported_mime_types": ["x/y"]},
    ),
    (
        "MIME_NOT_APPLICABLE",
        {"file_path": ERRORS_NB, "cell_index": 6, "output_index": 0, "mime_type": "text/plain"},
    ),
    ("INVALID_WINDOW", {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0, "offset": 10**6}),
    (
        "WINDOW_NOT_SUPPORTED",
        {"file_path": TEXT_NB, "cell_index": 9, "output_index": 0, "offset": 1},
    ),
    ("OUTPUT_DATA_INVALID", {"file_path": "malformed.ipynb", "cell_index": 0, "output_index": 0}),
    ("FILE_NOT_FOUND", {"file_path": "missing.ipynb", "cell_index": 0}),
    ("FILE_TYPE_UNSUPPORTED", {"file_path": "notes.txt", "cell_index": 0}),
    ("NOTEBOOK_READ_FAILED", {"file_path": "truncated.ipynb", "cell_index": 0}),
    ("USAGE_ERROR", {"file_path": TEXT_NB, "cell_index": 5, "colour": "blue"}),
    ("USAGE_ERROR", {"file_path": TEXT_NB}),
    ("USAGE_ERROR", {"file_path": 3, "cell_index": 5}),
    ("USAGE_ERROR", {"file_path": TEXT_NB, "cell_index": 5, "mime_type": "text/plain"}),
    ("USAGE_ERROR", {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0, "mime_type": 1}),
    # types are checked against the declared schema; ranges are the protocol's, as in the CLI
    ("USAGE_ERROR", {"file_path": TEXT_NB, "cell_index": "first"}),
    ("CELL_NOT_FOUND", {"file_path": TEXT_NB, "cell_index": -1}),
    ("OUTPUT_NOT_FOUND", {"file_path": TEXT_NB, "cell_index": 9, "output_index": -1}),
    ("INVALID_WINDOW", {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0, "limit": 0}),
    ("INVALID_WINDOW", {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0, "offset": -1}),
    ("USAGE_ERROR", {"file_path": "nb\u0000.ipynb", "cell_index": 0}),
]


async def test_every_failure_is_an_error_result_with_its_code(root: Path, tmp_path: Path) -> None:
    errlog = tmp_path / "err.log"
    async with open_session(module_params("--root", str(root)), errlog) as session:
        for expected, arguments in ERROR_CASES:
            result, doc = await call(session, **arguments)
            assert error_code(result, doc) == expected, arguments
            assert len(result.content) == 1
        unknown = await session.call_tool("no_such_tool", {})
    is_error, document = checked_result("no_such_tool", unknown)
    assert is_error and document["code"] == "USAGE_ERROR"
    assert "Traceback" not in errlog.read_text(encoding="utf-8")


async def test_schema_violations_are_listed_together(root: Path, tmp_path: Path) -> None:
    async with readonly_in_process(root) as session:
        result, doc = await call(
            session, file_path=TEXT_NB, cell_index="a", output_index=1.5, offset="x", limit=[0]
        )
    assert error_code(result, doc) == "USAGE_ERROR"
    problems = doc["details"]["problems"]
    assert sorted(problem.split(":")[0] for problem in problems) == [
        "cell_index",
        "limit",
        "offset",
        "output_index",
    ]


async def test_error_details_let_the_caller_recover(root: Path, tmp_path: Path) -> None:
    async with readonly_in_process(root) as session:
        _, missing_output = await call(session, file_path=TEXT_NB, cell_index=9, output_index=5)
        _, missing_mime = await call(
            session, file_path=TEXT_NB, cell_index=5, output_index=0, mime_type="image/png"
        )
    assert missing_output["details"]["output_count"] == 2
    assert missing_mime["details"]["available_mime_types"] == ["text/html", "text/plain"]
