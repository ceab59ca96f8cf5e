"""``jupyter-mcp``'s whole-notebook tools through the MCP SDK's client, in-process on fake
kernels: create_notebook, search_cells, summarize_cells."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_client import workbench_in_process
from workbench_client import (
    ERRORS_NB,
    PLOTS_NB,
    error_code,
    ok,
    populate_root,
)

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("in_process")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return populate_root(tmp_path / "root")


async def test_create_notebook_by_relative_path_then_never_overwrite(
    root: Path, tmp_path: Path
) -> None:
    (root / "sub").mkdir()
    cells = [
        {"source": "# Title", "cell_type": "markdown"},
        {"source": "x = 1", "name": "set-x"},
        {"source": "print(x)"},
    ]
    async with workbench_in_process(root, tmp_path / "cache") as session:
        created = await ok(session, "create_notebook", path="sub/new.ipynb", cells=cells)
        overview = await ok(session, "notebook_overview", path="sub/new.ipynb")
        codes = [
            await error_code(session, "create_notebook", path="sub/new.ipynb"),
            await error_code(session, "create_notebook", path=str(tmp_path / "out.ipynb")),
            await error_code(session, "create_notebook", path="../escape.ipynb"),
            await error_code(
                session, "create_notebook", path="other.ipynb", kernelspec_name="no-such-kernel"
            ),
            await error_code(session, "create_notebook", path="bad.ipynb", cells=[{"x": 1}]),
        ]
    target = root / "sub" / "new.ipynb"
    assert created["path"] == str(target)
    assert [cell["cell_type"] for cell in created["cells"]] == ["markdown", "code", "code"]
    assert created["cells"][1]["name"] == "set-x"
    assert created["kernelspec"]["name"] == "python3"
    assert [cell["name"] for cell in overview["cells"]] == [c["name"] for c in created["cells"]]
    assert json.loads(target.read_text(encoding="utf-8"))["nbformat_minor"] == 5
    assert codes == [
        "FILE_EXISTS",
        "PATH_NOT_ALLOWED",
        "PATH_NOT_ALLOWED",
        "KERNELSPEC_NOT_FOUND",
        "USAGE_ERROR",
    ]
    assert not (tmp_path / "out.ipynb").exists()
    assert not (root / "other.ipynb").exists()


async def test_search_cells_finds_sources_and_outputs(root: Path, tmp_path: Path) -> None:
    async with workbench_in_process(root, tmp_path / "cache") as session:
        found = await ok(session, "search_cells", path=PLOTS_NB, query="errorbar")
        regex = await ok(
            session,
            "search_cells",
            path=PLOTS_NB,
            query=r"plt\.(errorbar|fill_between)\(",
            regex=True,
            fields=["sources"],
            max_results=2,
        )
        bad_regex = await error_code(session, "search_cells", path=PLOTS_NB, query="(", regex=True)
        bad_field = await error_code(
            session, "search_cells", path=PLOTS_NB, query="x", fields=["everything"]
        )
    assert found["match_count"] > 0
    assert {match["field"] for match in found["matches"]} >= {"sources"}
    assert regex["match_count"] == 2
    assert regex["truncated"] is True
    assert all(match["field"] == "sources" for match in regex["matches"])
    assert bad_regex == "USAGE_ERROR"
    assert bad_field == "USAGE_ERROR"


async def test_summarize_cells_without_credentials_gives_marked_fallbacks(
    root: Path, tmp_path: Path
) -> None:
    async with workbench_in_process(root, tmp_path / "cache") as session:
        overview = await ok(session, "notebook_overview", path=ERRORS_NB)
        names = [cell["name"] for cell in overview["cells"][:3]]
        summary = await ok(session, "summarize_cells", path=ERRORS_NB, names=names)
        missing = await error_code(session, "summarize_cells", path=ERRORS_NB, names=["nope"])
    assert [cell["name"] for cell in summary["cells"]] == names
    assert summary["counts"]["fallback"] == len(names)
    assert summary["counts"]["llm"] == 0
    assert missing == "CELL_NOT_FOUND"
