"""A cell printing 50 MB and a tqdm-style bar with 10,000 updates, on a real kernel: the file
gets the whole output, the model a bounded, exact view of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from wb_helpers import make_notebook

from jupyter_jcli.notebook.document import Document
from jupyter_jcli.outputs.notebook import read_notebook_output
from jupyter_jcli.workbench import Workbench

pytestmark = [pytest.mark.kernel, pytest.mark.anyio]

WAIT = 120.0
LINE = "0123456789" * 9 + "abcdefghi\n"  # 100 characters
FIFTY_MB = 50 * 1000 * 1000


@pytest.fixture(scope="module")
async def wb(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Workbench]:
    async with Workbench(cache_dir=tmp_path_factory.mktemp("cache")) as workbench:
        yield workbench


async def test_a_cell_printing_50_mb_is_saved_whole_and_condensed_with_an_exact_read_hint(
    wb: Workbench, tmp_path: Path
) -> None:
    code = (
        "import sys\n"
        f"line = {LINE!r}\n"
        f"for _ in range({FIFTY_MB // len(LINE) // 1000}):\n"
        "    sys.stdout.write(line * 1000)\n"
    )
    path = make_notebook(tmp_path, [code], "big")
    name = Document.load(path).cells[0].name

    with anyio.fail_after(WAIT):
        outcome = await wb.execute_cells(path, [name])

    cell = outcome.cells[0]
    assert cell.status == "ok"
    assert cell.outputs is not None
    shown = cell.outputs.text
    assert len(shown) <= cell.outputs.budget < FIFTY_MB // 1000
    assert "read_notebook_output" in shown
    page = read_notebook_output(path, 0, 0, offset=FIFTY_MB - 1000, limit=1000)["stream"]
    assert page["total_characters"] == FIFTY_MB
    assert page["data"] == (LINE * 10)
    assert "next_offset" not in page


async def test_a_progress_bar_with_10000_updates_ends_as_its_final_line(
    wb: Workbench, tmp_path: Path
) -> None:
    code = "for i in range(10001):\n    print(f'\\rprogress {i}/10000', end='')\nprint()\n"
    path = make_notebook(tmp_path, [code], "bar")
    name = Document.load(path).cells[0].name

    with anyio.fail_after(WAIT):
        outcome = await wb.execute_cells(path, [name])

    cell = outcome.cells[0]
    assert cell.status == "ok" and cell.outputs is not None
    assert "progress 10000/10000" in cell.outputs.text
    assert "progress 9999/10000" not in cell.outputs.text
    saved = read_notebook_output(path, 0, 0)
    assert saved["stream"]["data"].strip() == "progress 10000/10000"
