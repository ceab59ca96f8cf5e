"""Lists of cells that grow with the notebook stay bounded in ``jupyter-mcp``'s results, as in
``j-cli -j``: the first ones, the whole count, and a notice naming the overview tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import nbformat
import pytest
from memory_client import workbench_in_process
from workbench_client import call, module_params, ok, open_session, server_env

from jupyter_jcli.workbench._cell_lists import CELLS_LISTED

pytestmark = pytest.mark.anyio

CHAIN = 3_000
"""Cells of the chained notebook: every cell uses the one above, so editing the first stales
them all (far more than a list holds)."""
NB = "nb.ipynb"
OVERVIEW_TOOL = "notebook_overview start=0"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _notebook(folder: Path, sources: list[str]) -> Path:
    """``folder/nb.ipynb``: one never-run code cell per source."""
    folder.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nbformat.write(notebook, folder / NB)
    return folder


def _chain(folder: Path) -> Path:
    return _notebook(folder, ["x0 = 0", *(f"x{i} = x{i - 1} + 1" for i in range(1, CHAIN))])


def _assert_bounded(document: dict[str, Any], key: str, count: int) -> None:
    assert len(document[key]) == CELLS_LISTED and document[f"{key}_count"] == count
    assert f"{key} holds the first {CELLS_LISTED} of {count:,} cells" in document["notice"]
    assert OVERVIEW_TOOL in document["notice"]


def _text(result: types.CallToolResult) -> dict[str, Any]:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    view: dict[str, Any] = json.loads(block.text)
    return view


async def _first_rev(session: Any) -> str:
    overview = await ok(session, "notebook_overview", path=NB, limit=1)
    rev: str = overview["cells"][0]["rev"]
    return rev


async def test_an_edit_a_dry_run_and_an_undo_on_a_long_chain_list_the_first_cells_over_stdio(
    tmp_path: Path,
) -> None:
    root = _chain(tmp_path / "root")
    params = module_params("--root", str(root), env=server_env(tmp_path / "cache"))
    async with open_session(params, tmp_path / "err.log") as session:
        rev = await _first_rev(session)
        edited, edit = await call(
            session, "update_cell", path=NB, name="x0", expected_rev=rev, source="x0 = 1"
        )
        plan = await ok(session, "run_stale", path=NB, dry_run=True)
        undone, undo = await call(session, "undo_last", path=NB)
    assert not edited.is_error and not undone.is_error
    _assert_bounded(edit, "stale", CHAIN)
    assert edit["stale"][:2] == ["x0", "x1"]
    assert edit["changed"] == ["x0"] and edit["changed_count"] == 1
    view = _text(edited)  # what the model reads
    assert len(view["stale"]) == CELLS_LISTED and view["stale_count"] == CHAIN
    assert view["notice"] == edit["notice"] and "changed_count" not in view
    assert len(edited.content[0].text) < 5_000  # type: ignore[union-attr]
    _assert_bounded(plan, "plan", CHAIN)
    _assert_bounded(plan, "still_stale", CHAIN)
    _assert_bounded(undo, "stale", CHAIN)
    assert len(_text(undone)["stale"]) == CELLS_LISTED


async def test_reading_a_huge_notebook_lists_the_first_omitted_cells_with_their_count(
    tmp_path: Path, in_process: Path
) -> None:
    root = _chain(tmp_path / "root")
    async with workbench_in_process(root, in_process) as session:
        result, read = await call(session, "read_cells", path=NB, budget=1_000)
    assert not result.is_error
    shown = len(read["cells"])
    _assert_bounded(read, "omitted_cells", CHAIN - shown)
    assert read["omitted_cells"][0] == f"x{shown}" and read["next_call"]
    view = _text(result)  # what the model reads: the whole count, not the cut list
    assert view["omitted"] == CHAIN - shown and "omitted_cells" not in view
    assert "omitted_cells_count" not in view
    assert len(result.content[0].text) < 10_000  # type: ignore[union-attr]


async def test_a_short_list_is_whole_with_its_count_and_no_notice(
    tmp_path: Path, in_process: Path
) -> None:
    root = _notebook(tmp_path / "root", ["a = 1", "b = a", "c = 3"])
    async with workbench_in_process(root, in_process) as session:
        rev = await _first_rev(session)
        edited, edit = await call(
            session, "update_cell", path=NB, name="a", expected_rev=rev, source="a = 2"
        )
        plan = await ok(session, "run_stale", path=NB, dry_run=True)
    assert edit["stale"] == ["a", "b"] and edit["stale_count"] == 2
    assert edit["changed_count"] == 1 and "notice" not in edit
    view = _text(edited)
    assert view["stale"] == ["a", "b"] and "stale_count" not in view and "notice" not in view
    assert plan["plan"] == ["a", "b", "c"] and plan["plan_count"] == 3 and "notice" not in plan


async def test_an_execution_stopped_early_lists_the_first_skipped_cells_with_their_count(
    tmp_path: Path, in_process: Path
) -> None:
    after = CELLS_LISTED + 50
    sources = ["x = 1", "1 / 0", *(f"y{i} = x" for i in range(after))]
    root = _notebook(tmp_path / "root", sources)
    async with workbench_in_process(root, in_process) as session:
        overview = await ok(session, "notebook_overview", path=NB, limit=len(sources))
        names = [cell["name"] for cell in overview["cells"]]
        result, run = await call(session, "execute_cells", path=NB, names=names)
    assert not result.is_error
    cells = run["cells"]
    assert [cell["status"] for cell in cells[:2]] == ["ok", "error"]
    assert len(cells) == 2 + CELLS_LISTED and run["skipped_count"] == after
    assert {cell["status"] for cell in cells[2:]} == {"skipped"}
    _assert_bounded(run, "still_stale", after + 1)
    assert f"of the {after} cells skipped after the stop" in run["notice"]
    view = _text(result)
    assert view["skipped_count"] == after and len(view["cells"]) == 2 + CELLS_LISTED


async def test_the_output_schemas_declare_each_bounded_list_its_count_and_the_notice(
    tmp_path: Path, in_process: Path
) -> None:
    root = _notebook(tmp_path / "root", ["a = 1"])
    async with workbench_in_process(root, in_process) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    for name, keys in {
        "update_cell": ("stale", "changed"),
        "undo_last": ("stale", "changed", "conflicts"),
        "run_stale": ("plan", "still_stale", "written", "skipped"),
        "execute_cells": ("still_stale", "written", "skipped"),
        "restart_kernel": ("still_stale",),
        "read_cells": ("omitted_cells",),
    }.items():
        schema = tools[name].output_schema
        assert schema is not None
        properties = schema["properties"]
        for key in keys:
            assert properties[f"{key}_count"]["type"] == "integer", (name, key)
            if key != "skipped":
                assert properties[key]["maxItems"] == CELLS_LISTED, (name, key)
        assert properties["notice"]["type"] == "string", name
    assert "notice" not in tools["notebook_overview"].output_schema["properties"]  # type: ignore[index]
