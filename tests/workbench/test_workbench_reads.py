"""The read operations on real notebooks: overview, graph, read_cells. They never write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wb_helpers import copy_fixture, make_notebook, tree_state

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.workbench import (
    DEFAULT_OVERVIEW_LIMIT,
    MIN_CELL_SHARE,
    notebook_graph,
    notebook_overview,
    read_cells,
)
from jupyter_jcli.workbench._read import MAX_NEXT_NAMES

SORTING = "02.08-Sorting.ipynb"
GROUPING = "03.08-Aggregation-and-Grouping.ipynb"
KMEANS = "05.11-K-Means.ipynb"
ERRORBARS = "04.03-Errorbars.ipynb"


def test_overview_makes_the_numpy_import_a_parent_of_every_cell_using_np(work: Path) -> None:
    overview = notebook_overview(copy_fixture(SORTING, work))
    numpy_cell = next(c for c in overview.cells if c.first_line == "import numpy as np")
    assert "np" in numpy_cell.defines
    assert [c.name for c in overview.cells if "np" in c.defines] == [numpy_cell.name]
    users = [c for c in overview.cells if "np" in c.uses]
    assert len(users) > 5
    for cell in users:
        assert numpy_cell.name in cell.parents
        assert cell.name in numpy_cell.children
    assert len(overview.cells) == 46
    assert overview.lint_summary == {}
    assert all(len(c.rev) == 12 for c in overview.cells)


def test_overview_reports_lint_and_its_summary(work: Path) -> None:
    path = make_notebook(work, ["y = x + 1", "x = 1", "def f(:\n    pass", "%%bash\necho hi"])
    overview = notebook_overview(path)
    kinds = {f.kind for f in overview.findings}
    assert {"defined_below", "syntax_error", "opaque_cell"} <= kinds
    assert sum(overview.lint_summary.values()) == len(overview.findings)
    assert overview.cells[0].findings[0].kind == "defined_below"
    doc = overview.to_dict()
    assert doc["cell_count"] == 4
    assert doc["cells"][0]["findings"][0]["names"] == ["x"]


def test_overview_of_an_unnamed_notebook_computes_names_without_storing_them(work: Path) -> None:
    path = make_notebook(work, ["import numpy as np", "x = np.arange(3)", "x.sort()"])
    overview = notebook_overview(path)
    assert [c.name for c in overview.cells] == ["import-numpy", "x", "x-sort"]
    assert not any(c.name_stored for c in overview.cells)
    assert overview.cells[2].mutates == ("x",)
    assert overview.cells[2].parents == ("x",)


def test_graph_renders_mermaid_dot_and_json(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    mermaid = notebook_graph(path)
    assert mermaid.text is not None and mermaid.text.startswith("flowchart TD")
    dot = notebook_graph(path, format="dot")
    assert dot.text is not None and dot.text.startswith("digraph")
    data = notebook_graph(path, format="json")
    assert data.text is None
    names = [e["names"] for e in data.graph["edges"] if e["parent"] == "import-numpy"]
    assert sum("np" in n for n in names) > 5
    assert "text" not in data.to_dict()
    with pytest.raises(JcliError) as err:
        notebook_graph(path, format="svg")  # type: ignore[arg-type]
    assert err.value.code == ErrorCode.USAGE_ERROR


def test_read_cells_condenses_a_pandas_table_to_csv(work: Path) -> None:
    path = copy_fixture(GROUPING, work)
    overview = notebook_overview(path)
    table_cell = next(
        c for c in overview.cells if c.output_count and c.first_line.startswith("df = pd.DataFrame")
    )
    result = read_cells(path, names=[table_cell.name])
    (cell,) = result.cells
    assert cell.outputs is not None
    table = next(p for p in cell.outputs.parts if p.kind == "table")
    assert "CSV" in cell.outputs.text
    assert table.mime_type == "text/html"
    assert "<table" not in cell.outputs.text
    assert cell.source.startswith("df = pd.DataFrame")


@pytest.mark.parametrize("budget", [300, 2_000, 20_000])
def test_read_cells_stays_within_its_budget(work: Path, budget: int) -> None:
    path = copy_fixture(GROUPING, work)
    result = read_cells(path, budget=budget)
    assert result.characters <= budget
    shown = sum(
        len(c.source) + (len(c.outputs.text) if c.outputs is not None else 0) for c in result.cells
    )
    assert shown == result.characters
    assert len(result.cells) <= max(1, budget // MIN_CELL_SHARE)
    assert len(result.cells) + len(result.omitted_cells) == len(notebook_overview(path).cells)
    assert result.truncated


def test_a_cut_says_how_to_read_the_rest_exactly(work: Path) -> None:
    long_source = "\n".join(f"value_{i} = {i}" for i in range(400))
    path = make_notebook(work, [long_source])
    result = read_cells(path, budget=500)
    (cell,) = result.cells
    assert cell.source_omitted_characters > 0
    hint = cell.source.rsplit("read_cells ", 1)[1]
    budget = int(hint.split("budget=")[1].rstrip("]"))
    again = read_cells(path, names=["value-0"], budget=budget)
    assert again.cells[0].source == long_source
    assert not again.truncated


def test_a_cut_output_names_the_read_notebook_output_call(work: Path) -> None:
    # distinct lines: identical ones fold into one line and a count, with nothing cut
    text = "".join(f"line {i}\n" for i in range(5_000))
    stream = {"output_type": "stream", "name": "stdout", "text": text}
    path = make_notebook(work, ["for i in range(5000): print('line', i)"])
    document = json.loads(path.read_text())
    document["cells"][0]["outputs"] = [stream]
    path.write_text(json.dumps(document), encoding="utf-8")
    result = read_cells(path, budget=1_000)
    text = result.cells[0].outputs.text if result.cells[0].outputs else ""
    assert "read_notebook_output cell_index=0 output_index=0 offset=" in text
    assert result.characters <= 1_000


def test_read_cells_returns_images_within_the_caps(work: Path) -> None:
    path = copy_fixture(KMEANS, work)
    result = read_cells(path, max_images=3)
    assert result.image_count == 3
    for cell in result.cells:
        for image in cell.outputs.images if cell.outputs else []:
            assert image.mime_type in ("image/png", "image/jpeg")
            assert max(image.width, image.height) <= 1024
    no_images = read_cells(path, include_images=False)
    assert no_images.image_count == 0
    assert "image/png" in "".join(c.outputs.text for c in no_images.cells if c.outputs)
    doc = result.to_dict()
    image = next(i for c in doc["cells"] if c["outputs"] for i in c["outputs"]["images"])
    assert set(image) >= {"mime_type", "data", "bytes", "width", "height"}


def test_read_cells_by_slice_and_bad_selections(work: Path) -> None:
    path = copy_fixture(ERRORBARS, work)
    result = read_cells(path, start=-2)
    assert [c.index for c in result.cells] == [11, 12]
    with pytest.raises(JcliError) as err:
        read_cells(path, names=["nope"])
    assert err.value.code == ErrorCode.CELL_NOT_FOUND
    with pytest.raises(JcliError) as err:
        read_cells(path, names=["x"], start=1)
    assert err.value.code == ErrorCode.USAGE_ERROR
    with pytest.raises(JcliError) as err:
        read_cells(path, budget=0)
    assert err.value.code == ErrorCode.USAGE_ERROR


@pytest.mark.parametrize("fixture", [SORTING, GROUPING, KMEANS, ERRORBARS])
def test_reads_never_write_anything(tmp_path: Path, work: Path, fixture: str) -> None:
    path = copy_fixture(fixture, work)
    before = tree_state(tmp_path)
    raw = path.read_bytes()
    notebook_overview(path)
    for fmt in ("mermaid", "dot", "json"):
        notebook_graph(path, format=fmt)  # type: ignore[arg-type]
    read_cells(path)
    read_cells(path, budget=100)
    assert path.read_bytes() == raw
    assert tree_state(tmp_path) == before
    assert not (tmp_path / "cache").exists()


def test_reads_through_a_paired_py_file(work: Path) -> None:
    import jupytext

    ipynb = copy_fixture(SORTING, work)
    notebook = jupytext.read(ipynb)
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    jupytext.write(notebook, ipynb)
    py = work / "02.08-Sorting.py"
    jupytext.write(notebook, py, fmt="py:percent")
    overview = notebook_overview(py)
    assert overview.notebook_path == ipynb
    assert [c.rev for c in overview.cells] == [c.rev for c in notebook_overview(ipynb).cells]
    with_outputs = read_cells(py, budget=5_000)
    assert any(c.outputs is not None for c in with_outputs.cells)


@pytest.mark.timeout(120)  # a bound on the work, not a timing assertion
def test_a_huge_cell_is_not_analysed_and_its_source_is_clipped(work: Path) -> None:
    from jupyter_jcli.analysis import MAX_ANALYZED_SOURCE

    huge = "# huge\n" + "\n".join(f"x{i % 1000} = {i}" for i in range(200_000))
    assert len(huge) > MAX_ANALYZED_SOURCE
    path = make_notebook(work, ["a = 1", huge, "print(x5, a)"], "huge")
    overview = notebook_overview(path)
    _setup, big, after = (cell.name for cell in overview.cells)
    assert overview.lint_summary.get("too_large") == 1
    assert [f.kind for f in overview.findings if f.cell == big] == ["wildcard_writer", "too_large"]
    assert big in next(c for c in overview.cells if c.name == after).parents
    result = read_cells(path, budget=1000)
    cut = next(cell for cell in result.cells if cell.name == big)
    assert result.characters <= 1000
    assert cut.source.startswith("# huge\nx0 = 0\n")
    assert cut.source_omitted_characters > len(huge) - 1000


def test_the_overview_is_paged_with_the_total_and_the_next_page(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    whole = notebook_overview(path, limit=None)
    page = notebook_overview(path, start=40, limit=4)
    last = notebook_overview(path, start=44, limit=4)
    assert [c.index for c in page.cells] == [40, 41, 42, 43]
    assert page.cells == whole.cells[40:44]  # the analysis covers every page
    assert page.cell_count == last.cell_count == 46
    assert page.next_call == "notebook_overview start=44 limit=4 (cells 44-45 of 46)"
    assert [c.index for c in last.cells] == [44, 45] and last.next_call is None
    assert page.lint_summary == whole.lint_summary
    assert page.to_dict()["cell_count"] == 46 and page.to_dict()["start"] == 40


def test_the_overview_shows_a_bounded_page_by_default(work: Path) -> None:
    path = make_notebook(work, [f"x{i} = {i}" for i in range(130)])
    overview = notebook_overview(path)
    assert len(overview.cells) == DEFAULT_OVERVIEW_LIMIT == 100
    assert overview.cell_count == 130
    assert overview.next_call == "notebook_overview start=100 (cells 100-129 of 130)"
    with pytest.raises(JcliError) as bad:
        notebook_overview(path, start=-1)
    assert bad.value.code == ErrorCode.USAGE_ERROR


def test_a_read_cut_short_by_its_budget_goes_on_with_an_index_range(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    result = read_cells(path, budget=1000)
    shown = len(result.cells)
    assert result.next_call == f"read_cells start={shown} stop=46 budget=1000"
    by_names = read_cells(path, names=[c.name for c in notebook_overview(path).cells], budget=400)
    assert by_names.next_call is not None
    assert by_names.next_call.count(",") == MAX_NEXT_NAMES - 1  # bounded, not 44 names
    assert "omitted_cells" in by_names.next_call
    assert len(by_names.omitted_cells) == 46 - len(by_names.cells)


def test_the_saved_cells_listing_pages_the_cells_under_the_names_the_overview_gives(
    work: Path,
) -> None:
    from jupyter_jcli.workbench import list_saved_cells

    path = copy_fixture(SORTING, work)
    before = tree_state(work)
    names = [cell.name for cell in notebook_overview(path).cells]

    first = list_saved_cells(path, start=0, limit=10)
    rest = list_saved_cells(path, start=first["next_start"], limit=100)

    assert first["cell_count"] == rest["cell_count"] == len(names)
    assert [c["name"] for c in first["cells"] + rest["cells"]] == names
    assert [c["cell_index"] for c in first["cells"]] == list(range(10))
    assert "next_start" not in rest
    assert first["source"] == {"kind": "ipynb", "path": str(path)}
    with pytest.raises(JcliError) as caught:
        list_saved_cells(path, start=len(names) + 1)
    assert caught.value.code == ErrorCode.USAGE_ERROR
    assert tree_state(work) == before
