"""A function defined and called in the same cell: its call-time effects on globals count as
the cell's (through nested and recursive calls, ``global`` stores, increments and deletes),
and deletes of names a cell bound itself leave no trace (in-process, a table of cells)."""

from __future__ import annotations

import pytest

from jupyter_jcli.analysis import analyze_cell

CASES = [
    ("a-call-through-a-helper-reads-what-the-helper-reads",
     "def g():\n    return x\ndef f():\n    return g()\nf()\n", {"f", "g"}, {"x"}, set()),
    ("a-recursive-function-reads-its-globals-once",
     "def f():\n    return f() + y\nf()\n", {"f"}, {"y"}, set()),
    ("a-global-increment-reads-and-mutates-the-name",
     "def f():\n    global n\n    n = n + 1\nf()\n", {"f"}, {"n"}, {"n"}),
    ("a-global-store-binds-the-name",
     "def f():\n    global m\n    m = 1\nf()\n", {"f", "m"}, set(), set()),
    ("a-global-delete-reads-and-mutates-the-name",
     "def f():\n    global d\n    del d\nf()\n", {"f"}, {"d"}, {"d"}),
    ("a-global-store-in-a-nested-function-binds-the-name",
     "def outer():\n    def inner():\n        global q\n        q = 2\n    inner()\nouter()\n",
     {"outer", "q"}, set(), set()),
    ("a-delete-in-a-class-body-touches-no-global",
     "class A:\n    t = 1\n    del t\n", {"A"}, set(), set()),
    ("deleting-a-name-the-cell-bound-leaves-no-effect", "z = 1\ndel z\n", set(), set(), set()),
]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "defines", "uses", "mutates"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_call_time_effects_of_same_cell_functions_count_as_the_cells(
    source: str, defines: set[str], uses: set[str], mutates: set[str]
) -> None:
    effects = analyze_cell(source)
    assert (set(effects.defines), set(effects.uses), set(effects.mutates)) == (
        defines,
        uses,
        mutates,
    )


def test_deleting_a_name_bound_elsewhere_reads_it_and_records_the_delete() -> None:
    effects = analyze_cell("del w\n")
    assert set(effects.uses) == {"w"} and set(effects.deletes) == {"w"}
