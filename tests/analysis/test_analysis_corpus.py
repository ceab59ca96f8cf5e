"""The analysis over every code cell of the real notebooks in tests/fixtures/notebooks/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_jcli.analysis import CellInput, NotebookGraph, build_graph, to_dot, to_mermaid

NOTEBOOKS = sorted((Path(__file__).parent.parent / "fixtures" / "notebooks").glob("*.ipynb"))


def fixture_cells(path: Path, prefix: str = "cell") -> list[CellInput]:
    """The cells of a fixture notebook (v3 worksheets too), keyed ``{prefix}-{index}``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    raw = nb.get("cells") or [c for ws in nb.get("worksheets", []) for c in ws["cells"]]
    cells = []
    for i, c in enumerate(raw):
        src = c.get("source", c.get("input", ""))
        src = "".join(src) if isinstance(src, list) else src
        kind = c["cell_type"] if c["cell_type"] in ("code", "markdown", "raw") else "markdown"
        cells.append(CellInput(key=f"{prefix}-{i}", cell_type=kind, source=src))
    return cells


def _graph(name: str) -> NotebookGraph:
    return build_graph(fixture_cells(next(p for p in NOTEBOOKS if p.name == name)))


def test_the_fixture_folder_holds_real_notebooks() -> None:
    assert len(NOTEBOOKS) >= 4


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_is_analysed_with_consistent_edges(path: Path) -> None:
    cells = fixture_cells(path)
    graph = build_graph(cells)
    assert [n.key for n in graph.cells] == [c.key for c in cells]
    for parent, child in graph.edges:
        assert parent < child
        names = graph.edge_names[(parent, child)]
        assert names
        p = graph.cells[parent]
        if not p.effects.is_wildcard:
            # each name flows from the nearest writer above: no cell in between writes it
            assert names <= p.writes
            for between in graph.cells[parent + 1 : child]:
                assert not names & between.writes, (parent, child, between.index)
        assert names <= graph.cells[child].reads
    doc = graph.to_dict()
    assert json.loads(json.dumps(doc)) == doc
    assert to_mermaid(graph).count("-->") == len(graph.edges)
    assert to_dot(graph).count(" -> ") == len(graph.edges)


@pytest.mark.parametrize("module", ["np", "pd", "plt"])
def test_an_import_cell_is_the_parent_of_the_cells_that_use_its_module(module: str) -> None:
    checked = 0
    for path in NOTEBOOKS:
        graph = build_graph(fixture_cells(path))
        importer = None
        for node in graph.cells:
            if module in node.reads and importer is not None:
                assert importer in node.parents, (path.name, node.index)
                checked += 1
            if module in node.writes:
                importer = node.index if module in node.effects.imports else None
    assert checked >= 10


def test_sorting_notebook_edges() -> None:
    graph = _graph("02.08-Sorting.ipynb")
    imports = [n.index for n in graph.cells if "np" in n.effects.imports]
    assert imports
    users = [n.index for n in graph.cells if "np" in n.reads]
    assert len(users) >= 10
    # np.sort(x) returns a copy: calling a method on the numpy module never mutates it
    assert not any("np" in n.writes for n in graph.cells if n.index not in imports)


def test_timing_notebook_magics() -> None:
    cells = fixture_cells(
        next(p for p in NOTEBOOKS if p.name == "01.07-Timing-and-Profiling.ipynb")
    )
    graph = build_graph(cells)
    by_source = {c.source: graph.cells[i] for i, c in enumerate(cells)}
    file_cell = next(n for s, n in by_source.items() if s.startswith("%%file"))
    assert file_cell.effects.opaque_magics == ("file",)
    assert not file_cell.effects.defines
    timeit_cell = next(n for s, n in by_source.items() if s.startswith("%%timeit"))
    assert timeit_cell.effects.defines == frozenset()
    time_cell = next(n for s, n in by_source.items() if s.startswith("%%time\n"))
    assert time_cell.effects.defines == {"total", "i", "j"}
    sorter = next(n for s, n in by_source.items() if "%timeit L.sort()" in s)
    assert sorter.effects.defines == {"L", "random"}
    resorter = next(n for s, n in by_source.items() if s.startswith('print("sorting an already'))
    assert "L" in resorter.effects.mutates
    assert not [f for f in graph.findings if f.kind == "syntax_error"]


def test_r_magic_notebook_cells_are_opaque_not_errors() -> None:
    graph = _graph("Notebook_with_R_magic.ipynb")
    opaque = [n for n in graph.cells if n.effects.is_opaque]
    assert len(opaque) == 3
    assert all(n.effects.opaque_magics == ("R",) for n in opaque)
    assert not [f for f in graph.findings if f.kind == "syntax_error"]


def test_a_real_syntax_error_is_reported_and_the_rest_analysed() -> None:
    graph = _graph("03.05-Hierarchical-Indexing.ipynb")
    bad = [f for f in graph.findings if f.kind == "syntax_error"]
    assert len(bad) == 1
    assert graph.cells[bad[0].index].effects.syntax_error is not None
    assert len(graph.edges) > 20
    assert any(n.index > bad[0].index and n.parents for n in graph.cells)
