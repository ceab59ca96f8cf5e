"""``jupyter-mcp``'s ``execute_code``, ``edit_cell_source``, ``clear_outputs`` and
``list_variables`` over stdio through the MCP SDK's own client, on a real kernel: success and
error paths (every result is checked against the tool's output schema by ``call``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from workbench_client import call, error_code, images, module_params, ok, open_session, server_env

from jupyter_jcli.errors import ErrorCode

pytestmark = [pytest.mark.anyio, pytest.mark.kernel]

NB = "work.ipynb"
CELLS = [
    {"source": "# Title", "cell_type": "markdown", "name": "title"},
    {"source": "x = 1\nx = x + 1\nprint(x)", "name": "data"},
    {"source": "y = x * 10\nprint(y)", "name": "use"},
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder.resolve()


def _params(root: Path, tmp_path: Path) -> Any:
    return module_params("--root", str(root), env=server_env(tmp_path / "cache"))


def _cells(root: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads((root / NB).read_text(encoding="utf-8"))["cells"]
    return cells


def _text(result: Any) -> dict[str, Any]:
    """What the model reads: the result's text content (the model view)."""
    document: dict[str, Any] = json.loads(result.content[0].text)
    return document


async def _rev(session: ClientSession, name: str) -> str:
    overview = await ok(session, "notebook_overview", path=NB)
    return str(next(cell["rev"] for cell in overview["cells"] if cell["name"] == name))


async def test_execute_code_runs_on_the_notebooks_kernel_condensed_and_marks_overwritten_cells(
    root: Path, tmp_path: Path
) -> None:
    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        assert await error_code(session, "execute_code", path="missing.ipynb", code="1") == (
            ErrorCode.FILE_NOT_FOUND
        )
        await ok(session, "create_notebook", path=NB, cells=CELLS)
        await ok(session, "execute_cells", path=NB, names=["data", "use"])
        before = (root / NB).read_bytes()
        result, answer = await call(
            session,
            "execute_code",
            path=NB,
            code="print(x + y)\n%matplotlib inline\nimport matplotlib.pyplot as plt\n"
            "plt.plot([1, 2])\nplt.show()\nx = 5",
        )
        assert not result.is_error, answer
        structured = result.structured_content
        assert structured is not None and structured["operation"] == "execute_code"
        assert "22" in _text(result)["outputs"]  # the model reads the condensed text
        assert len(images(result)) == 1  # the chart as an image, as execute_cells gives it
        assert "output_manifest" not in structured  # nothing saved under .j-cli
        assert not (root / ".j-cli").exists()
        assert (root / NB).read_bytes() == before  # no cell added, the file untouched
        overview = await ok(session, "notebook_overview", path=NB)
        status = {cell["name"]: cell.get("status") for cell in overview["cells"]}
        assert status["data"] == "stale"  # it overwrote x

        failed, _ = await call(session, "execute_code", path=NB, code="1 / 0")
        assert _text(failed)["ok"] is False
        assert "ZeroDivisionError" in _text(failed)["outputs"]
        assert await error_code(session, "execute_code", path=NB, code="1", timeout=0) == (
            ErrorCode.USAGE_ERROR
        )


async def test_edit_cell_source_replaces_one_occurrence_and_refuses_zero_or_several(
    root: Path, tmp_path: Path
) -> None:
    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        await ok(session, "create_notebook", path=NB, cells=CELLS)
        await ok(session, "execute_cells", path=NB, names=["data", "use"])
        rev = await _rev(session, "data")
        before = (root / NB).read_bytes()
        for old, count in (("x", 4), ("nothing here", 0)):
            result, document = await call(
                session,
                "edit_cell_source",
                path=NB,
                name="data",
                expected_rev=rev,
                old_string=old,
                new_string="z",
            )
            assert result.is_error
            assert document["code"] == ErrorCode.OLD_STRING_COUNT
            assert document["details"]["count"] == count
        assert (root / NB).read_bytes() == before  # nothing changed
        assert (
            await error_code(
                session,
                "edit_cell_source",
                path=NB,
                name="data",
                expected_rev="000000000000",
                old_string="x = 1",
                new_string="x = 3",
            )
            == ErrorCode.REV_MISMATCH
        )
        edited = await ok(
            session,
            "edit_cell_source",
            path=NB,
            name="data",
            expected_rev=rev,
            old_string="x = 1",
            new_string="x = 3",
        )
        assert edited["cell"]["rev"] != rev
        assert edited["stale"] == ["data", "use"]  # update_cell's staleness
        assert "".join(_cells(root)[1]["source"]) == "x = 3\nx = x + 1\nprint(x)"
        everywhere = await ok(
            session,
            "edit_cell_source",
            path=NB,
            name="data",
            expected_rev=edited["cell"]["rev"],
            old_string="x",
            new_string="v",
            replace_all=True,
        )
        assert "".join(_cells(root)[1]["source"]) == "v = 3\nv = v + 1\nprint(v)"
        assert everywhere["cell"]["name"] == "data"
        await ok(session, "undo_last", path=NB)  # a snapshot like every edit
        assert "".join(_cells(root)[1]["source"]) == "x = 3\nx = x + 1\nprint(x)"


async def test_clear_outputs_empties_outputs_and_counts_and_undo_puts_them_back(
    root: Path, tmp_path: Path
) -> None:
    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        await ok(session, "create_notebook", path=NB, cells=CELLS)
        await ok(session, "execute_cells", path=NB, names=["data", "use"])
        ran = _cells(root)
        assert ran[1]["outputs"] and ran[1]["execution_count"] is not None
        before = (root / NB).read_bytes()
        for names, code in (
            (["data", "title"], ErrorCode.USAGE_ERROR),
            (["data", "no-such-cell"], ErrorCode.CELL_NOT_FOUND),
        ):
            assert await error_code(session, "clear_outputs", path=NB, names=names) == code
        assert (root / NB).read_bytes() == before  # a refusal changes nothing

        cleared = await ok(session, "clear_outputs", path=NB, names=["data", "use"])
        assert cleared["changed"] == ["data", "use"]
        for cell in _cells(root)[1:]:
            assert cell["outputs"] == [] and cell["execution_count"] is None
        overview = await ok(session, "notebook_overview", path=NB)
        assert {cell["name"]: cell.get("status") for cell in overview["cells"]}["use"] == "fresh"

        undone = await ok(session, "undo_last", path=NB)
        assert undone["undone"] == "clear_outputs"
        restored = _cells(root)
        assert restored[1]["outputs"] == ran[1]["outputs"]
        assert restored[2]["execution_count"] == ran[2]["execution_count"]


async def test_list_variables_lists_user_variables_silently_and_needs_a_kernel(
    root: Path, tmp_path: Path
) -> None:
    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        await ok(session, "create_notebook", path=NB, cells=CELLS)
        assert await error_code(session, "list_variables", path=NB) == ErrorCode.KERNEL_NOT_RUNNING
        await ok(session, "execute_cells", path=NB, names=["data", "use"])
        await ok(
            session,
            "execute_code",
            path=NB,
            code="import os\n_hidden = 1\nwords = ['a', 'b', 'c']\nname = 'jupyter'\n"
            "class Shaped:\n    shape = (3, 4)\ngrid = Shaped()",
        )
        listed = await ok(session, "list_variables", path=NB)
        by_name = {entry["name"]: entry for entry in listed["variables"]}
        assert set(by_name) == {"x", "y", "words", "name", "Shaped", "grid"}
        assert by_name["x"] == {"name": "x", "type": "int", "repr": "2"}
        assert by_name["words"]["length"] == 3
        assert by_name["grid"]["shape"] == [3, 4]
        assert by_name["name"]["repr"] == "'jupyter'"
        again, _ = await call(
            session,
            "execute_code",
            path=NB,
            code="print([k for k in ('_variables', 'NS', 'MAX_VARS') if k in dir()])",
        )
        assert "[]" in _text(again)["outputs"]  # the probe left nothing in the namespace

        many = "\n".join(f"v{i} = 'x' * 50" for i in range(300))
        await ok(session, "execute_code", path=NB, code=many)
        bounded = await ok(session, "list_variables", path=NB)
        assert bounded["omitted"] > 0 and bounded["notice"]
        assert len(bounded["variables"]) + bounded["omitted"] == bounded["variable_count"]
        assert len(json.dumps(bounded["variables"])) <= 9_000
