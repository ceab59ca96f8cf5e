"""What an undo reports in ``changed``: the cells it changed, moved, put back or removed,
whether the files went back byte for byte or the undo merged with edits made since."""

from __future__ import annotations

from pathlib import Path

from wb_helpers import copy_fixture

from jupyter_jcli.workbench import (
    add_cell,
    move_cell,
    notebook_overview,
    remove_cell,
    undo_last,
    update_cell,
)

SORTING = "02.08-Sorting.ipynb"


def _rev(path: Path, name: str) -> str:
    return next(c.rev for c in notebook_overview(path).cells if c.name == name)


def _names(path: Path) -> list[str]:
    return [c.name for c in notebook_overview(path).cells]


def test_undoing_an_update_names_the_cell_whose_source_went_back(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    original = path.read_bytes()
    update_cell(path, "x-sort", expected_rev=_rev(path, "x-sort"), source="y = x + 5")
    undone = undo_last(path)
    assert path.read_bytes() == original and not undone.merged
    assert undone.changed == ("x-sort",)
    assert undone.to_dict()["changed"] == ["x-sort"]


def test_undoing_an_add_at_the_end_names_the_cell_it_took_out(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    added = add_cell(path, "y = 42", position="end")
    undone = undo_last(path)
    assert not undone.merged
    assert undone.changed == added.changed
    assert added.changed[0] not in _names(path)


def test_undoing_a_remove_names_the_cell_it_put_back(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    remove_cell(path, "x-sort", expected_rev=_rev(path, "x-sort"))
    undone = undo_last(path)
    assert not undone.merged
    assert undone.changed == ("x-sort",)
    assert "x-sort" in _names(path)


def test_undoing_a_move_names_the_cell_it_moved_back(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    order = _names(path)
    move_cell(path, "x-sort", expected_rev=_rev(path, "x-sort"), position="start")
    undone = undo_last(path)
    assert not undone.merged
    assert undone.changed == ("x-sort",)
    assert _names(path) == order
