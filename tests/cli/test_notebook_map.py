"""``j-cli notebook map FILE.py``: each cell of a paired script, the notebook cell it maps to
and the rule that mapped it, or why not; the same mapping every ``.py`` read uses."""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
import pytest
from jcli_helpers import run_cli

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.pairing import map_py_cell


@pytest.fixture
def pair(tmp_path: Path) -> Path:
    """``s.py`` and ``s.ipynb``: a markdown cell, a named cell edited in the script since,
    the same code twice in the script, a cell only in the script, one only in the notebook."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell("x = 1", metadata={"jupyter_mcp": {"name": "setup"}}),
        nbformat.v4.new_code_cell("y = x + 1"),
        nbformat.v4.new_code_cell("w = 9"),
    ]
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    nbformat.write(notebook, tmp_path / "s.ipynb")
    script = nbformat.v4.new_notebook()
    script.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    script.cells = [
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell("x = 2", metadata={"jupyter_mcp": {"name": "setup"}}),
        nbformat.v4.new_code_cell("y = x + 1"),
        nbformat.v4.new_code_cell("y = x + 1"),
        nbformat.v4.new_code_cell("z = 3"),
    ]
    path = tmp_path / "s.py"
    path.write_text(jupytext.writes(script, fmt="py:percent"), encoding="utf-8")
    return path


def test_each_script_cell_says_its_notebook_cell_and_rule_or_why_not(pair: Path) -> None:
    done = run_cli("-j", "notebook", "map", pair)
    assert done.exit_code == 0, done.stdout + done.stderr
    document = done.json()
    assert document["python_path"] == str(pair)
    assert document["notebook_path"] == str(pair.with_suffix(".ipynb"))
    assert (document["cell_count"], document["notebook_cell_count"], document["mapped"]) == (
        5,
        4,
        2,
    )
    rows = [
        (row["python_index"], row["notebook_index"], row["alignment"], row["change"],
         row.get("reason"))
        for row in document["cells"]
    ]  # fmt: skip
    assert rows == [
        (0, 0, "content", "equal", None),
        (1, 1, "id", "edited", None),  # its name maps it; its source changed in the script
        (2, None, None, None, "duplicated_in_py"),
        (3, None, None, None, "duplicated_in_py"),
        (4, None, None, None, "no_match"),
        (None, 2, None, None, "not_mapped"),
        (None, 3, None, None, "not_mapped"),
    ]
    named = document["cells"][1]
    assert named["name"] == "setup" and named["type"] == "code"
    assert named["source_start_line"] == named["source_end_line"]
    assert pair.read_text(encoding="utf-8").splitlines()[named["source_start_line"] - 1] == "x = 2"
    refused = document["cells"][2]["problem"]
    assert refused["code"] == ErrorCode.CELL_MAPPING_UNRELIABLE
    assert document["cells"][2]["candidates"] == [2]


def test_the_map_is_the_mapping_every_script_read_uses(pair: Path) -> None:
    document = run_cli("-j", "notebook", "map", pair).json()
    for row in document["cells"]:
        if row["python_index"] is None:
            continue
        if row["notebook_index"] is None:
            with pytest.raises(NotebookError) as refused:
                map_py_cell(pair, row["python_index"])
            assert refused.value.code == ErrorCode.CELL_MAPPING_UNRELIABLE
            assert refused.value.details["reason"] == row["reason"]
            continue
        mapping = map_py_cell(pair, row["python_index"])
        assert (mapping.notebook_cell_index, mapping.mapping) == (
            row["notebook_index"],
            row["alignment"],
        )


def test_the_text_map_has_a_line_per_row(pair: Path) -> None:
    done = run_cli("notebook", "map", pair)
    assert done.exit_code == 0
    lines = done.stdout.splitlines()
    assert lines[0] == f"python={pair}"
    assert lines[1] == f"notebook={pair.with_suffix('.ipynb')}"
    assert len(lines) == 3 + 7
    assert "py=1 ipynb=1 name=setup" in lines[4] and "alignment=id change=edited" in lines[4]
    assert lines[-1].startswith("py=- ipynb=3") and lines[-1].endswith("reason=not_mapped")


def test_a_script_without_a_paired_notebook_is_refused(tmp_path: Path) -> None:
    lone = tmp_path / "lone.py"
    lone.write_text("# %%\nx = 1\n", encoding="utf-8")
    done = run_cli("-j", "notebook", "map", lone)
    assert done.exit_code == 1
    assert done.json()["code"] == ErrorCode.NOTEBOOK_PAIR_NOT_FOUND


def test_a_notebook_is_not_a_script_to_map(pair: Path) -> None:
    done = run_cli("-j", "notebook", "map", pair.with_suffix(".ipynb"))
    assert done.exit_code == 1
    assert done.json()["code"] == ErrorCode.FILE_TYPE_UNSUPPORTED


def test_a_missing_script_is_file_not_found(tmp_path: Path) -> None:
    done = run_cli("-j", "notebook", "map", tmp_path / "absent.py")
    assert done.exit_code == 1
    assert done.json()["code"] == ErrorCode.FILE_NOT_FOUND
