"""``j-cli cell add`` keeps what it does not own: exact big integers, the nbformat 3 format
and ``metadata.name`` (issue 9, items 9 and 15), end to end through the command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
from jcli_helpers import NOTEBOOKS, run_cli

BIG = 2**70 + 123


def test_cell_add_keeps_big_integers_of_other_cells_and_metadata(tmp_path: Path) -> None:
    path = tmp_path / "sorting.ipynb"
    shutil.copyfile(NOTEBOOKS / "02.08-Sorting.ipynb", path)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["metadata"]["ids"] = [BIG]
    code = next(cell for cell in notebook["cells"] if cell["cell_type"] == "code")
    code["outputs"] = [
        {"output_type": "display_data", "metadata": {}, "data": {"application/json": [BIG]}}
    ]
    text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    run = run_cli("-j", "cell", "add", path, "--source", "x = 1")
    assert run.exit_code == 0, run.stdout
    written = path.read_text(encoding="utf-8")
    assert written.count(str(BIG)) == 2
    assert "e+21" not in written


def test_cell_add_on_an_nbformat_3_notebook_keeps_it_nbformat_3_with_its_name(
    tmp_path: Path,
) -> None:
    notebook = nbformat.read(str(NOTEBOOKS / "02.08-Sorting.ipynb"), as_version=4)
    notebook.metadata["name"] = "Sorting"
    path = tmp_path / "sorting.v3.ipynb"
    path.write_text(nbformat.writes(notebook, version=3), encoding="utf-8")
    run = run_cli("-j", "cell", "add", path, "--source", "x = 1")
    assert run.exit_code == 0, run.stdout
    written = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    nbformat.validate(written)
    assert (written.nbformat, written.metadata.name) == (3, "Sorting")
    assert written.worksheets[0].cells[-1].input == "x = 1"  # nbformat joins the lines
