"""``jupyter-mcp`` over stdio with the MCP SDK's client: a change another writer made to the
notebook between two calls is said in the second result's text (``changed_by_others``, valid
against the tool's output schema), once; the session's own edit is not."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from workbench_client import module_params, ok, open_session, server_env

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_file_edit_between_two_calls_is_said_in_the_second_results_text(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in ("a = 1", "b = a + 1")]
    path = root / "nb.ipynb"
    nbformat.write(notebook, path)
    params = module_params("--root", str(root), env=server_env(tmp_path / "cache"))
    async with open_session(params, tmp_path / "server.log") as session:
        first = await ok(session, "notebook_overview", path=path.name)
        assert "changed_by_others" not in first
        a, b = first["cells"]
        edited = await ok(
            session, "update_cell", path=path.name, name=a["name"], expected_rev=a["rev"],
            source="a = 2",
        )  # fmt: skip
        assert "changed_by_others" not in edited

        on_disk = nbformat.read(path, as_version=4)  # the person edits the file meanwhile
        on_disk.cells[1].source = "b = a + 10"
        on_disk.cells.append(nbformat.v4.new_code_cell("# plot it\nprint(b)"))
        nbformat.write(on_disk, path)

        second = await ok(session, "read_cells", path=path.name, names=[b["name"]])
        assert second["changed_by_others"] == (
            f"since your last call: edited {b['name']}; added plot-it"
        )
        third = await ok(session, "notebook_overview", path=path.name)
        assert "changed_by_others" not in third
