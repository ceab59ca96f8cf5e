"""``read_script``: one jupytext parse of a ``.py`` gives its cells and each cell's lines."""

from __future__ import annotations

import warnings
from pathlib import Path

import jupytext
import orjson
import pytest

from jupyter_jcli.notebook._py_lines import read_script

NOTEBOOKS = sorted(
    path
    for path in (Path(__file__).parents[1] / "fixtures" / "notebooks").glob("*.ipynb")
    if not path.name.endswith(".v3.ipynb")  # jupytext reads nbformat 4 only
)
FORMATS = ["py:percent", "py:light", "py:hydrogen", "py:nomarker"]


def _script(path: Path, fmt: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text: str = jupytext.writes(jupytext.read(path), fmt=fmt)
    return text


def _without_ids(node: object) -> bytes:
    plain = orjson.loads(orjson.dumps(node))
    for cell in plain["cells"]:
        cell.pop("id", None)  # jupytext mints a random one per read
    return orjson.dumps(plain)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_notebook_read_is_the_one_jupytext_reads_gives(path: Path, fmt: str) -> None:
    text = _script(path, fmt)
    notebook, spans = read_script(text)
    expected = jupytext.reads(text, fmt={"extension": ".py"})
    assert _without_ids(notebook) == _without_ids(expected)
    assert spans is not None and len(spans) == len(notebook.cells)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_each_percent_cell_span_starts_and_ends_on_its_own_source_lines(path: Path) -> None:
    text = _script(path, "py:percent")
    lines = text.splitlines()
    notebook, spans = read_script(text)
    assert spans is not None
    for index, (cell, span) in enumerate(zip(notebook.cells, spans, strict=True)):
        filled = [line.strip() for line in cell.source.splitlines() if line.strip()]
        if not filled:
            continue  # an empty cell, or a markdown cell of bare "#" lines
        if span is None:  # only the raw cell jupytext makes from root-level header metadata
            assert (index, cell.cell_type) == (0, "raw")
            continue
        first, last = lines[span[0] - 1].strip(), lines[span[1] - 1].strip()
        # jupytext comments out magics and markdown lines, and moves a cell magic (%%R) into
        # the cell's marker line
        if not filled[0].startswith("%%"):
            assert first in {filled[0], f"# {filled[0]}"}
        assert last in {filled[-1], f"# {filled[-1]}"}
        assert lines[span[0] - 2].startswith("# %%") or not lines[span[0] - 2].strip()


def test_spans_skip_markers_and_blank_lines_and_an_empty_cell_has_none() -> None:
    text = "# %%\nx = 1\n\n\n# %% [markdown]\n# Title\n#\n# text\n\n# %%\n\n"
    notebook, spans = read_script(text)
    assert [cell.cell_type for cell in notebook.cells] == ["code", "markdown", "code"]
    assert spans == [(2, 2), (6, 8), None]


def test_light_cells_end_before_their_end_marker() -> None:
    text = "import os\n\n# +\nx = 1\ny = 2\n# -\n\nprint(x)\n"
    notebook, spans = read_script(text)
    assert [cell.source for cell in notebook.cells] == ["import os", "x = 1\ny = 2", "print(x)"]
    assert spans == [(1, 1), (4, 5), (8, 8)]


def test_a_sphinx_script_is_read_but_its_spans_are_unknown() -> None:
    text = _script(NOTEBOOKS[0], "py:sphinx")
    notebook, spans = read_script(text)
    assert notebook.cells
    assert spans is None
