"""``jupyter-mcp``'s reads of a jupytext pair whose sides disagree say so on every read, and
its runs and edits are refused (``PAIR_OUT_OF_SYNC``) before anything runs or is written
(issue 27 items 3 and 7)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from memory_client import workbench_in_process
from workbench_client import error_code, ok

from jupyter_jcli.errors import ErrorCode

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _out_of_sync_pair(root: Path) -> tuple[Path, Path]:
    """``p.ipynb`` paired with ``p.py`` by jupytext, then the notebook's first cell edited
    by a tool that ignores the pairing (the notebook is newer)."""
    import jupytext
    import nbformat

    root.mkdir(parents=True)
    ipynb, py = root / "p.ipynb", root / "p.py"
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("y = x + 1")]
    )
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    jupytext.write(notebook, ipynb)
    jupytext.write(notebook, py, fmt="py:percent")
    saved = json.loads(ipynb.read_text("utf-8"))
    saved["cells"][0]["source"] = "x = 10"
    ipynb.write_text(json.dumps(saved, indent=1), "utf-8")
    later = os.stat(py).st_mtime_ns + 1_000_000_000
    os.utime(ipynb, ns=(later, later))
    return ipynb, py


async def test_every_read_says_the_pair_is_out_of_sync_and_runs_are_refused(
    tmp_path: Path, in_process: Path
) -> None:
    ipynb, py = _out_of_sync_pair(tmp_path / "root")
    before = (ipynb.read_bytes(), py.read_bytes())
    async with workbench_in_process(tmp_path / "root", in_process) as session:
        for path in ("p.ipynb", "p.py"):
            for tool, arguments in (
                ("notebook_overview", {}),
                ("read_cells", {}),
                ("search_cells", {"query": "x"}),
                ("summarize_cells", {}),
            ):
                facts = (await ok(session, tool, path=path, **arguments))["pair_out_of_sync"]
                assert (facts["shown"], facts["newer"], facts["writes"]) == (
                    "text",
                    "notebook",
                    "refused",
                )
        code = await error_code(session, "run_stale", path="p.py")
        assert code == ErrorCode.PAIR_OUT_OF_SYNC
        code = await error_code(session, "execute_cells", path="p.ipynb", names=["x"])
        assert code == ErrorCode.PAIR_OUT_OF_SYNC
        overview = await ok(session, "notebook_overview", path="p.ipynb")
        assert overview["kernel"]["state"] == "not_started"  # no cell ran, no kernel started
    assert (ipynb.read_bytes(), py.read_bytes()) == before
