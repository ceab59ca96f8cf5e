"""Which cells a mutation stales, table-driven on small hand-made notebooks.

Each case builds a notebook of unnamed code cells (names derived from the sources), applies
one workbench mutation through the real file path, and compares ``stale`` with the expected
names in document order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from wb_helpers import make_notebook

from jupyter_jcli.workbench import (
    MutationOutcome,
    add_cell,
    move_cell,
    notebook_overview,
    remove_cell,
    update_cell,
)


def _rev(path: Path, name: str) -> str:
    return next(c.rev for c in notebook_overview(path).cells if c.name == name)


def _update(name: str, **changes: Any) -> Callable[[Path], MutationOutcome]:
    return lambda path: update_cell(path, name, expected_rev=_rev(path, name), **changes)


def _add(source: str, **where: Any) -> Callable[[Path], MutationOutcome]:
    def run(path: Path) -> MutationOutcome:
        anchor = where.get("before") or where.get("after")
        rev = _rev(path, anchor) if anchor else None
        return add_cell(path, source, expected_rev=rev, **where)

    return run


def _remove(name: str) -> Callable[[Path], MutationOutcome]:
    return lambda path: remove_cell(path, name, expected_rev=_rev(path, name))


def _move(name: str, **where: Any) -> Callable[[Path], MutationOutcome]:
    return lambda path: move_cell(path, name, expected_rev=_rev(path, name), **where)


@dataclass(frozen=True)
class Case:
    """One notebook, one mutation, the stale set expected after it."""

    id: str
    cells: list[str | tuple[str, str]]
    mutate: Callable[[Path], MutationOutcome]
    stale: list[str]
    note: str = field(default="")


CASES = [
    Case(
        "chain: an edit stales the cell and its transitive dependents",
        ["a = 1", "b = a + 1", "c = b + 1", "d = 4"],
        _update("a", source="a = 10"),
        ["a", "b", "c"],
    ),
    Case(
        "chain: an edit at the end stales only that cell",
        ["a = 1", "b = a + 1", "c = b + 1"],
        _update("c", source="c = b + 2"),
        ["c"],
    ),
    Case(
        "self-increment: editing x += 1 replays its writer x = 0 and that writer's dependents",
        ["x = 0", "x += 1", "y = x * 2", "z = 5"],
        _update("x-2", source="x += 2"),
        ["x", "x-2", "y"],
    ),
    Case(
        "append: editing a dependent of a mutated list replays the list's writers",
        ["items = []", "items.append(1)", "n = len(items)"],
        _update("items-append", source="items.append(2)"),
        ["items", "items-append", "n"],
    ),
    Case(
        "an edit that stops defining a name stales its former dependents",
        ["a = 1", "b = a", "c = 3"],
        _update("a", source="other = 1"),
        ["a", "b"],
    ),
    Case(
        "a rename alone stales nothing",
        ["a = 1", "b = a"],
        _update("a", new_name="setup"),
        [],
    ),
    Case(
        "a code cell turned markdown stales its former dependents only",
        ["a = 1", "b = a + 1", "c = b"],
        _update("a", cell_type="markdown"),
        ["b", "c"],
    ),
    Case(
        "editing a markdown cell stales nothing",
        [("markdown", "# Title"), "a = 1"],
        _update("title", source="# New title"),
        [],
    ),
    Case(
        "add: the new cell and its dependents",
        ["a = 1", "b = a + 1", "c = b"],
        _add("a = 2", after="a"),
        ["a-2", "b", "c"],
    ),
    Case(
        "add at the end: only the new cell",
        ["a = 1", "b = a + 1"],
        _add("print(b)", position="end"),
        ["print-b"],
    ),
    Case(
        "add markdown: nothing",
        ["a = 1"],
        _add("# Notes", position="start", cell_type="markdown"),
        [],
    ),
    Case(
        "add a mutation above a mutating cell: the dependent replays from the list's writer",
        ["items = []", "items.append(5)"],
        _add("items.append(4)", after="items", name="append-four"),
        ["items", "append-four", "items-append"],
    ),
    Case(
        "remove a parent: its former dependents and theirs",
        ["a = 1", "b = a + 1", "c = b", "d = 4"],
        _remove("b"),
        ["c"],
    ),
    Case(
        "remove a shadowing writer: the reader now reads the writer above",
        ["x = 1", "x = 2", "print(x)"],
        _remove("x-2"),
        ["print-x"],
    ),
    Case(
        "remove a leaf: nothing",
        ["a = 1", "b = a"],
        _remove("b"),
        [],
    ),
    Case(
        "move a cell above its parent: it loses the parent",
        ["a = 1", "b = a + 1", "c = b"],
        _move("b", position="start"),
        ["b", "c"],
    ),
    Case(
        "move a writer below its reader: the reader loses it",
        ["a = 1", "x = 5", "y = a"],
        _move("a", position="end"),
        ["y"],
    ),
    Case(
        "move an independent cell: nothing",
        ["a = 1", "b = a", "z = 0"],
        _move("z", position="start"),
        [],
    ),
    Case(
        "move a shadowing writer above the first one: readers rewire",
        ["x = 1", "x = 2", "print(x)"],
        _move("x-2", before="x"),
        ["print-x"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_stale_after_mutation(work: Path, case: Case) -> None:
    path = make_notebook(work, case.cells)
    outcome = case.mutate(path)
    assert list(outcome.stale) == case.stale
    assert outcome.written
