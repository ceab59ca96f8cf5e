"""The refined mutation rule on real notebooks: the false edges of the old heuristic are gone,
the true in-place changes remain.

Notebooks: tests/fixtures/notebooks (PDSH, MIT) and tests/fixtures/analysis/notebooks
(``03.03-Operations-in-Pandas``, PDSH, MIT: pandas arithmetic displayed as ``A.add(B, ...)``).
Each row names a cell by its source and states what the graph must say about it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from jupyter_jcli.analysis import CellInput, NotebookGraph, build_graph, stale_after_edit

FIXTURES = Path(__file__).parent.parent / "fixtures"
FOLDERS = (FIXTURES / "notebooks", FIXTURES / "analysis" / "notebooks")


def _graph(name: str) -> tuple[NotebookGraph, list[CellInput]]:
    path = next(folder / name for folder in FOLDERS if (folder / name).exists())
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = [
        CellInput(
            key=f"cell-{i}",
            cell_type=c["cell_type"],
            source="".join(c["source"]) if isinstance(c["source"], list) else c["source"],
        )
        for i, c in enumerate(nb["cells"])
    ]
    return build_graph(cells), cells


@dataclass(frozen=True)
class Row:
    """In ``notebook``, the code cell whose source starts with ``source`` changes exactly
    ``changes`` in place (graph writes beyond its own bindings). An edit of it stales the
    nearest writer above of each changed name (re-run first, so the change is not applied
    twice) and, when it changes nothing, only the cell itself and its dependents."""

    id: str
    notebook: str
    source: str
    changes: frozenset[str]


PANDAS = "03.03-Operations-in-Pandas.ipynb"
SORTING = "02.08-Sorting.ipynb"
FEATURES = "05.04-Feature-Engineering.ipynb"
SERIES_AB = "A = pd.Series([2, 4, 6], index=[0, 1, 2])\nB = pd.Series([1, 3, 5], index=[1, 2, 3])"

ROWS = [
    # false edges gone: a displayed pandas ``add`` is arithmetic, not an in-place change
    # (before: the cell changed A, and an edit of it staled the cell that built A and B)
    Row("pandas_series_add_displayed", PANDAS, "A.add(B, fill_value=0)", frozenset()),
    Row("pandas_frame_add_displayed", PANDAS, "A.add(B, fill_value=A.values.mean())", frozenset()),
    Row(
        "numpy_sort_displayed", SORTING, "# sort each column of X\nnp.sort(X, axis=0)", frozenset()
    ),
    # true edges remain
    Row("list_sort_in_place", SORTING, "L.sort()", frozenset({"L"})),
    Row("array_sort_in_place", SORTING, "x.sort()", frozenset({"x"})),
    Row(
        "estimator_fit", FEATURES, "model.fit(X, y)  # X with missing values", frozenset({"model"})
    ),
    Row(
        "item_assignment",
        "03.02-Data-Indexing-and-Selection.ipynb",
        "data['e'] = 1.25",
        frozenset({"data"}),
    ),
    Row(
        "column_assignment",
        "03.09-Pivot-Tables.ipynb",
        "births['decade'] = ",
        frozenset({"births"}),
    ),
]


def _by_source(cells: list[CellInput], start: str) -> int:
    return next(
        i for i, c in enumerate(cells) if c.cell_type == "code" and c.source.startswith(start)
    )


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_a_real_cell_changes_and_stales_what_the_refined_rule_says(row: Row) -> None:
    graph, cells = _graph(row.notebook)
    node = graph.cells[_by_source(cells, row.source)]
    assert node.writes - node.effects.defines == row.changes
    stale = {graph.index(k) for k in stale_after_edit(graph, [node.key])}
    builders = {node.inputs[name] for name in row.changes}
    if row.changes:
        assert builders <= stale
    else:
        # Nothing above it re-runs, unless a cell below rebound a name it reads: then that
        # name's writer is replayed first (the kernel holds the later value).
        rebound = {
            node.inputs[name]
            for name in node.reads
            if name in node.inputs and any(name in c.writes for c in graph.cells[node.index + 1 :])
        }
        above = {i for i in stale if i < node.index}
        assert rebound <= above
        if not rebound:
            assert not above


def test_the_displayed_pandas_add_cells_write_nothing_and_read_from_the_builder() -> None:
    graph, cells = _graph(PANDAS)
    displayed_add = [n for n in graph.cells if n.effects.display_mutates]
    assert len(displayed_add) == 2
    assert all(not (n.effects.display_mutates & n.writes) for n in displayed_add)
    # candidates of the container rule, but A is a Series: no write, one parent
    builder = _by_source(cells, SERIES_AB)
    reader = _by_source(cells, "A.add(B, fill_value=0)")
    assert graph.cells[reader].parents == (builder,)
