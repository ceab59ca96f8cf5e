"""Incremental analysis: a graph built from an earlier one equals a build from scratch.

Seeded random edits (change a source, change a cell type, insert, delete, move) are applied to
the real notebooks in tests/fixtures/notebooks/; after each step the graph built from the
previous step's graph (``previous=``, or the process-wide memo) must equal the full pass:
nodes (effects, uses, reads, writes, inputs, parents, children), edges and their names, lint
findings and staleness. The memos are bounded and never answer for a different source.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_analysis_corpus import NOTEBOOKS, fixture_cells

from jupyter_jcli.analysis import (
    CellInput,
    NotebookGraph,
    _build,
    _cell,
    analyze_cell,
    build_graph,
    stale_after_edit,
)

# Sources that exercise every rule an edit can flip for the cells below: rebinding, module
# aliases, builtin containers, call-time reads and ``global`` writes, wildcard writers,
# deletes, builtins rebound, syntax errors, opaque and importing magics, output history.
_RULES = [
    "import numpy as np",
    "np = 3",
    "np.sort(a)",
    "np.append(y, 1)",
    "x = 1",
    "x += 1",
    "x = f(x)",
    "del x",
    "seen = set()",
    "seen.add(x)",
    "seen = frozenset()",
    "def f():\n    return x + total",
    "def f():\n    global total\n    total = 0",
    "def tick():\n    global steps\n    steps += 1",
    "tick()",
    "f = lambda: y",
    "class C(B):\n    z = x",
    "total = 0\navg = f()",
    "avg = f()\ntotal = 0",
    "from os import *",
    "exec('q = 1')",
    "%run helper.py",
    "%pylab inline",
    "%%bash\necho $x",
    "list = [1, 2]",
    "print(len(list))",
    "df.add(2)",
    "def (",
    "print(_)",
    "items.append(v)",
    "y = undefined_name",
]


def _cells(path: Path) -> list[CellInput]:
    return fixture_cells(path, prefix=path.stem)


def _pool() -> list[str]:
    real = [c.source for p in NOTEBOOKS for c in _cells(p) if c.cell_type == "code"]
    return real + _RULES


def _scratch(cells: list[CellInput]) -> NotebookGraph:
    _build.forget_graphs()
    return build_graph(cells)


def _new_source(rng: random.Random, pool: list[str], old: str) -> str:
    kind = rng.randrange(3)
    if kind == 0:
        return rng.choice(pool)
    if kind == 1:
        return f"{old}\n{rng.choice(_RULES)}"
    lines = old.splitlines()
    return "\n".join(lines[: rng.randrange(len(lines) + 1)])


def _edit(rng: random.Random, pool: list[str], cells: list[CellInput], serial: int) -> None:
    """One random edit in place; mostly in-place edits (the incremental case)."""
    i = rng.randrange(len(cells))
    old = cells[i]
    roll = rng.random()
    if roll < 0.6:
        cells[i] = CellInput(old.key, old.cell_type, _new_source(rng, pool, old.source))
    elif roll < 0.75:
        kinds = [k for k in ("code", "markdown", "raw") if k != old.cell_type]
        cells[i] = CellInput(old.key, rng.choice(kinds), old.source)
    elif roll < 0.85:
        cells.insert(i, CellInput(f"new-{serial}", "code", rng.choice(pool)))
    elif roll < 0.93 and len(cells) > 1:
        del cells[i]
    else:
        cells.insert(rng.randrange(len(cells)), cells.pop(i))


def _assert_same(got: NotebookGraph, want: NotebookGraph) -> None:
    assert got.to_dict() == want.to_dict()
    assert got.cells == want.cells  # effects, uses, reads, writes, inputs, parents, children
    assert got.edges == want.edges
    assert dict(got.edge_names) == dict(want.edge_names)
    assert got.findings == want.findings
    for node in want.cells[:: max(1, len(want.cells) // 5)]:
        assert stale_after_edit(got, [node.key]) == stale_after_edit(want, [node.key])


def _walk(cells: list[CellInput], seed: int, steps: int) -> int:
    """Apply ``steps`` random edit batches; return how many graphs were built incrementally."""
    rng = random.Random(seed)
    pool = _pool()
    graph = _scratch(cells)
    incremental = 0
    for step in range(steps):
        for serial in range(rng.choice((1, 1, 1, 2, 3))):
            _edit(rng, pool, cells, step * 10 + serial)
        same_keys = [c.key for c in cells] == [n.key for n in graph.cells]
        got = build_graph(cells, previous=graph)
        incremental += same_keys and got is not graph
        _assert_same(got, _scratch(cells))
        graph = got
    return incremental


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_random_edits_of_a_real_notebook_give_the_graph_of_a_full_build(path: Path) -> None:
    cells = _cells(path)
    if not cells:
        pytest.skip("no cells")
    _walk(cells, seed=13, steps=40)


def test_random_edits_of_a_long_notebook_give_the_graph_of_a_full_build() -> None:
    cells = [c for p in NOTEBOOKS for c in _cells(p)]
    assert len(cells) > 500
    assert _walk(cells, seed=2026, steps=80) > 40  # most steps took the incremental path


@pytest.mark.parametrize("seed", range(6))
def test_random_edits_of_a_notebook_of_rule_cells_give_the_graph_of_a_full_build(
    seed: int,
) -> None:
    rng = random.Random(seed)
    cells = [CellInput(f"rule-{i}", "code", rng.choice(_RULES)) for i in range(40)]
    _walk(cells, seed=seed, steps=60)


# (cells before, position edited, its new source or cell type): one rule an edit flips each.
_FLIPS = {
    "a function body now reads another name": (
        ["x = 1", "y = 2", "def f():\n    return x", "z = f()"],
        2,
        "def f():\n    return y",
    ),
    "a module alias becomes a plain object": (
        ["import numpy as np", "a = [1]", "np.sort(a)"],
        0,
        "np = Holder()",
    ),
    "an attribute store does not rebind the alias": (
        ["import numpy as np", "np.x = 1", "a = [1]", "np.sort(a)"],
        0,
        "np = Holder()",
    ),
    "a builtin container becomes another object": (
        ["seen = set()", "seen.add(1)"],
        0,
        "seen = make()",
    ),
    "a builtin is rebound": (["x = [1]", "y = len(x)"], 0, "len = my_len"),
    "a builtin is no longer rebound": (["len = my_len", "y = len(x)"], 0, "x = [1]"),
    "a cell becomes a wildcard writer": (["a = 1", "print(b)"], 0, "from os import *"),
    "a cell stops being a wildcard writer": (["from os import *", "print(b)"], 0, "a = 1"),
    "a delete is removed": (["x = 1", "del x", "print(x)"], 1, "pass"),
    "a global write moves to another name": (
        ["def f():\n    global t\n    t = 1", "f()", "print(t)", "t"],
        0,
        "def f():\n    global u\n    u = 1",
    ),
    "a definer becomes markdown": (["x = 1", "y = x", "print(y)"], 0, "markdown"),
    "markdown becomes a definer": (["y = 1", "x = 1", "print(x, y)"], 1, "markdown"),
    "a name is now bound only below": (["print(late)", "late = 1"], 1, "early = 1"),
    "a cell stops parsing": (["x = 1", "y = x", "z = y"], 1, "def ("),
}


@pytest.mark.parametrize("case", sorted(_FLIPS), ids=str)
def test_an_edit_that_flips_a_rule_gives_the_graph_of_a_full_build(case: str) -> None:
    sources, at, new = _FLIPS[case]
    cells = [CellInput(f"flip-{i}", "code", src) for i, src in enumerate(sources)]
    for forward in (True, False):  # the edit, then its undo
        _build.forget_graphs()
        before = build_graph(cells)
        old = cells[at]
        if new in ("markdown", "code"):
            cells[at] = CellInput(old.key, "code" if old.cell_type != "code" else new, old.source)
        else:
            cells[at] = CellInput(old.key, old.cell_type, new if forward else sources[at])
        got = build_graph(cells, previous=before)
        assert got is not before
        _assert_same(got, _scratch(cells))


def test_the_process_memo_builds_the_next_version_like_a_full_build() -> None:
    cells = [c for p in NOTEBOOKS[:6] for c in _cells(p)]
    _build.forget_graphs()
    first = build_graph(cells)
    assert build_graph(list(cells)) is first  # the same cells: the remembered graph
    rng = random.Random(7)
    pool = _pool()
    for _ in range(30):
        i = rng.randrange(len(cells))
        cells[i] = CellInput(cells[i].key, "code", rng.choice(pool))
        got = build_graph(cells)  # from the memo, no ``previous=``
        _assert_same(got, _scratch(cells))


def test_a_remembered_graph_never_answers_for_a_different_source() -> None:
    _build.forget_graphs()
    before = build_graph([CellInput("a", "code", "x = 1"), CellInput("b", "code", "y = x")])
    after = build_graph([CellInput("a", "code", "z = 1"), CellInput("b", "code", "y = x")])
    assert after is not before
    assert after.node("a").effects.defines == {"z"}
    assert after.node("b").parents == ()
    retyped = build_graph([CellInput("a", "markdown", "z = 1"), CellInput("b", "code", "y = x")])
    assert retyped.node("a").effects.defines == frozenset()
    assert analyze_cell("x = 1").defines == {"x"}
    assert analyze_cell("x = 2 ").defines == {"x"}
    assert analyze_cell("w = 2").defines == {"w"}


def test_the_graph_memo_is_bounded_in_graphs_and_cells() -> None:
    _build.forget_graphs()
    for n in range(_build.GRAPH_MEMO_SIZE + 5):
        build_graph([CellInput(f"memo-{n}-{i}", "code", f"v{i} = {n}") for i in range(3)])
        assert len(_build._memo) <= _build.GRAPH_MEMO_SIZE
    huge = [CellInput(f"huge-{i}", "markdown", "") for i in range(_build.GRAPH_MEMO_CELLS + 1)]
    graph = build_graph(huge)
    assert all(g is not graph for g in _build._memo.values())  # too large to keep
    assert sum(len(g) for g in _build._memo.values()) <= _build.GRAPH_MEMO_CELLS


def test_the_cell_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cell, "_CACHE_SIZE", 8)
    for i in range(30):
        analyze_cell(f"bounded_{i} = {i}")
        assert len(_cell._cache) <= 8


def test_an_explicit_previous_graph_with_other_keys_gives_a_full_build() -> None:
    old = build_graph([CellInput("p", "code", "x = 1"), CellInput("q", "code", "x")])
    cells = [CellInput("q", "code", "x"), CellInput("p", "code", "x = 1")]
    got = build_graph(cells, previous=old)
    assert got.node("q").unresolved == {"x"}
    _assert_same(got, _scratch(cells))
