"""``jupyter-mcp`` through the MCP SDK's client, in-process on fake kernels: tool list, document
tools, errors, images (the stdio transport: ``test_workbench_process.py``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp.client.session import ClientSession
from memory_client import workbench_in_process
from workbench_client import (
    ERRORS_NB,
    PLOTS_NB,
    TEXT_NB,
    call,
    error_code,
    images,
    ok,
    populate_root,
)

from jupyter_jcli.outputs.notebook import list_notebook_outputs, read_notebook_output

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("in_process")]

# tool: (readOnlyHint, destructiveHint, idempotentHint, openWorldHint)
ANNOTATIONS = {
    "create_notebook": (False, False, False, False),
    "notebook_overview": (True, False, True, False),
    "read_cells": (True, False, True, False),
    "add_cell": (False, False, False, False),
    "update_cell": (False, True, False, False),
    "edit_cell_source": (False, True, False, False),
    "clear_outputs": (False, True, True, False),
    "execute_code": (False, True, False, True),
    "list_variables": (True, False, True, False),
    "remove_cell": (False, True, False, False),
    "move_cell": (False, False, False, False),
    "execute_cells": (False, True, False, True),
    "run_stale": (False, True, False, True),
    "run_status": (True, False, True, False),
    "restart_kernel": (False, True, False, False),
    "interrupt_kernel": (False, True, True, False),
    "list_kernels": (True, False, True, False),
    "start_kernel": (False, False, True, False),
    "stop_kernel": (False, True, True, False),
    "inspect_variable": (True, False, True, False),
    "undo_last": (False, True, False, False),
    "summarize_cells": (False, False, True, True),
    "search_cells": (True, False, True, False),
    "read_notebook_output": (True, False, True, False),
}
NO_NOTEBOOK_NEEDED = {"list_kernels": False, "stop_kernel": True}
"""The tools a call may make without naming a notebook, and whether they take one."""
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return populate_root(tmp_path / "root")


async def _session_tools(session: ClientSession) -> dict[str, types.Tool]:
    listed = await session.list_tools()
    return {tool.name: tool for tool in listed.tools}


async def test_every_tool_has_a_description_typed_schemas_and_honest_annotations(
    root: Path, tmp_path: Path
) -> None:
    async with workbench_in_process(root, tmp_path / "cache") as session:
        tools = await _session_tools(session)
    assert set(tools) == set(ANNOTATIONS)
    for name, tool in tools.items():
        assert tool.description is not None and len(tool.description) > 80, name
        schema = tool.input_schema
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        # the saved-output tool keeps the Python API's (and jupyter-jcli 0.9.7's) file_path
        path = "file_path" if name == "read_notebook_output" else "path"
        if name in NO_NOTEBOOK_NEEDED:
            assert path not in schema["required"], name
            assert (path in schema["properties"]) is NO_NOTEBOOK_NEEDED[name], name
        else:
            assert path in schema["required"], name
        for prop, prop_schema in schema["properties"].items():
            assert "type" in prop_schema, (name, prop)
        assert tool.output_schema is not None
        Draft202012Validator.check_schema(tool.output_schema)
        annotations = tool.annotations
        assert annotations is not None
        hints = (
            annotations.read_only_hint,
            annotations.destructive_hint,
            annotations.idempotent_hint,
            annotations.open_world_hint,
        )
        assert hints == ANNOTATIONS[name], name
    assert set(tools["update_cell"].input_schema["required"]) == {"path", "name", "expected_rev"}
    assert tools["execute_cells"].input_schema["properties"]["names"]["minItems"] == 1


async def test_overview_and_read_cells_on_a_real_notebook_by_relative_path(
    root: Path, tmp_path: Path
) -> None:
    async with workbench_in_process(root, tmp_path / "cache") as session:
        overview = await ok(session, "notebook_overview", path=PLOTS_NB)
        names = [cell["name"] for cell in overview["cells"]]
        plot_cells = [c["name"] for c in overview["cells"] if c["output_count"]]
        result, read = await call(session, "read_cells", path=PLOTS_NB, names=plot_cells)
    assert overview["path"] == str(root / PLOTS_NB)
    assert len(names) == 13
    assert len(set(names)) == 13
    assert len(plot_cells) == 3
    assert not result.is_error
    assert [cell["name"] for cell in read["cells"]] == plot_cells
    blocks = images(result)
    assert len(blocks) == read["image_count"] == 3
    entries = [image for cell in read["cells"] for image in cell["outputs"]["images"]]
    assert [entry["image"] for entry in entries] == [0, 1, 2]
    for entry, block in zip(entries, blocks, strict=True):
        assert entry["delivered_as"] == "image_content"
        assert "data" not in entry
        raw = base64.b64decode(block.data, validate=True)
        assert block.mime_type == entry["mime_type"]
        assert len(raw) == entry["bytes"]
        if block.mime_type == "image/png":
            assert raw.startswith(PNG_MAGIC)
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert blocks[0].data not in text.text  # the base64 travels once, as image content


async def test_a_chart_sent_before_is_referred_to_until_resend_images_asks_for_it(
    root: Path, tmp_path: Path
) -> None:
    async with workbench_in_process(root, tmp_path / "cache") as session:
        first, _ = await call(session, "read_cells", path=PLOTS_NB, start=4, stop=7)
        again, read = await call(session, "read_cells", path=PLOTS_NB, start=4, stop=7)
        forced, _ = await call(
            session, "read_cells", path=PLOTS_NB, start=4, stop=7, resend_images=True
        )
    assert len(images(first)) == 2 and images(again) == [] and len(images(forced)) == 2
    entries = [i for cell in read["cells"] if cell["outputs"] for i in cell["outputs"]["images"]]
    assert [entry["delivered_as"] for entry in entries] == ["sent_before", "sent_before"]
    text = again.content[0]
    assert isinstance(text, types.TextContent)
    assert text.text.count("sent before in this session (resend_images=true") == 2


async def test_the_overview_tool_pages_with_start_and_limit(root: Path, tmp_path: Path) -> None:
    async with workbench_in_process(root, tmp_path / "cache") as session:
        page = await ok(session, "notebook_overview", path=PLOTS_NB, start=10, limit=2)
        whole = await ok(session, "notebook_overview", path=PLOTS_NB)
    assert [cell["index"] for cell in page["cells"]] == [10, 11]
    assert page["cell_count"] == whole["cell_count"] == len(whole["cells"]) == 13
    assert page["start"] == 10 and whole["next_call"] is None
    assert page["next_call"] == "notebook_overview start=12 limit=2 (cells 12-12 of 13)"
    assert page["status_summary"] == whole["status_summary"]  # counts every page


async def test_read_cells_without_images_describes_them_in_text(root: Path, tmp_path: Path) -> None:
    async with workbench_in_process(root, tmp_path / "cache") as session:
        result, read = await call(
            session, "read_cells", path=PLOTS_NB, start=4, stop=7, include_images=False
        )
    assert not result.is_error
    assert images(result) == []
    assert read["image_count"] == 0
    assert [cell["index"] for cell in read["cells"]] == [4, 5, 6]


async def test_edit_cycle_with_revs_stale_sets_and_undo(root: Path, tmp_path: Path) -> None:
    path = str(root / ERRORS_NB)
    async with workbench_in_process(root, tmp_path / "cache") as session:
        before = await ok(session, "notebook_overview", path=path)
        added = await ok(
            session,
            "add_cell",
            path=path,
            source="answer = 42\nprint(answer)",
            name="the-answer",
            position="end",
        )
        cell = added["cell"]
        assert cell["name"] == "the-answer"
        assert added["stale"] == ["the-answer"]
        assert await error_code(
            session, "update_cell", path=path, name="the-answer", expected_rev="0000", source="x"
        ) == ("REV_MISMATCH")
        updated = await ok(
            session,
            "update_cell",
            path=path,
            name="the-answer",
            expected_rev=cell["rev"],
            source="answer = 43",
        )
        assert updated["cell"]["rev"] != cell["rev"]
        first = before["cells"][0]
        moved = await ok(
            session,
            "move_cell",
            path=path,
            name="the-answer",
            expected_rev=updated["cell"]["rev"],
            before=first["name"],
        )
        assert moved["cell"]["index"] == 0
        removed = await ok(
            session,
            "remove_cell",
            path=path,
            name="the-answer",
            expected_rev=moved["cell"]["rev"],
        )
        assert removed["removed"]["name"] == "the-answer"
        after_remove = await ok(session, "notebook_overview", path=path)
        assert after_remove["cell_count"] == before["cell_count"]
        undone = await ok(session, "undo_last", path=path)
        assert undone["undone"] == "remove_cell"
        restored = await ok(session, "notebook_overview", path=path)
    assert restored["cell_count"] == before["cell_count"] + 1
    assert restored["cells"][0]["name"] == "the-answer"
    stored = json.loads((root / ERRORS_NB).read_text(encoding="utf-8"))
    assert "".join(stored["cells"][0]["source"]) == "answer = 43"


async def test_domain_failures_are_error_results_with_codes(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.ipynb"
    outside.write_bytes((root / PLOTS_NB).read_bytes())
    async with workbench_in_process(root, tmp_path / "cache") as session:
        codes = {
            "unknown cell": await error_code(
                session, "read_cells", path=PLOTS_NB, names=["no-such-cell"]
            ),
            "update unknown": await error_code(
                session, "update_cell", path=PLOTS_NB, name="nope", expected_rev="ab", source=""
            ),
            "absolute outside": await error_code(session, "notebook_overview", path=str(outside)),
            "relative escape": await error_code(
                session, "notebook_overview", path="../outside.ipynb"
            ),
            "missing file": await error_code(session, "notebook_overview", path="none.ipynb"),
            "undo nothing": await error_code(session, "undo_last", path=PLOTS_NB),
            "unknown argument": await error_code(
                session, "notebook_overview", path=PLOTS_NB, verbose=True
            ),
            "wrong type": await error_code(session, "read_cells", path=PLOTS_NB, budget="many"),
            "missing required": await error_code(session, "remove_cell", path=PLOTS_NB),
            "unknown tool": await error_code(session, "no_such_tool", path=PLOTS_NB),
            "nul in path": await error_code(session, "notebook_overview", path="nb\0.ipynb"),
            "nul in new path": await error_code(session, "create_notebook", path="new\0.ipynb"),
            "name too long": await error_code(session, "notebook_overview", path="a" * 5000),
            "negative output cell": await error_code(
                session, "read_notebook_output", file_path=PLOTS_NB, cell_index=-1
            ),
        }
    assert codes == {
        "unknown cell": "CELL_NOT_FOUND",
        "update unknown": "CELL_NOT_FOUND",
        "absolute outside": "PATH_NOT_ALLOWED",
        "relative escape": "PATH_NOT_ALLOWED",
        "missing file": "FILE_NOT_FOUND",
        "undo nothing": "UNDO_EMPTY",
        "unknown argument": "USAGE_ERROR",
        "wrong type": "USAGE_ERROR",
        "missing required": "USAGE_ERROR",
        "unknown tool": "USAGE_ERROR",
        "nul in path": "USAGE_ERROR",
        "nul in new path": "USAGE_ERROR",
        "name too long": "FILE_NOT_FOUND",
        "negative output cell": "CELL_NOT_FOUND",
    }
    assert (root.parent / "outside.ipynb").read_bytes() == (root / PLOTS_NB).read_bytes()


async def test_usage_errors_list_every_problem(root: Path, tmp_path: Path) -> None:
    async with workbench_in_process(root, tmp_path / "cache") as session:
        result, document = await call(
            session, "add_cell", path=PLOTS_NB, cell_type="python", extra=1
        )
    assert result.is_error
    assert document["code"] == "USAGE_ERROR"
    problems = document["details"]["problems"]
    assert len(problems) == 3  # source missing, cell_type not allowed, extra unknown
    assert {problem.split(":")[0] for problem in problems} == {"source", "cell_type", "extra"}


async def test_read_notebook_output_is_the_exact_protocol_read(root: Path, tmp_path: Path) -> None:
    async with workbench_in_process(root, tmp_path / "cache") as session:
        _, directory = await call(session, "read_notebook_output", file_path=TEXT_NB, cell_index=9)
        result, read = await call(
            session, "read_notebook_output", file_path=TEXT_NB, cell_index=9, output_index=1
        )
        outside = await error_code(
            session, "read_notebook_output", file_path="/etc/passwd", cell_index=0
        )
    assert directory == list_notebook_outputs(root / TEXT_NB, 9)
    expected = read_notebook_output(root / TEXT_NB, 9, 1)
    assert read["selected"]["delivered_as"] == "image_content"
    [block] = images(result)
    assert block.data == expected["selected"]["data"]
    assert read["source"] == expected["source"]
    assert outside == "PATH_NOT_ALLOWED"
