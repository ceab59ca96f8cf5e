"""Mutations through the workbench: rev guards, undo to the same bytes, outside edits kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from wb_helpers import copy_fixture, make_notebook

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.workbench import (
    MutationOutcome,
    _mutations,
    add_cell,
    move_cell,
    notebook_overview,
    remove_cell,
    undo_last,
    update_cell,
)

SORTING = "02.08-Sorting.ipynb"
STALE_REV = "000000000000"


def _rev(path: Path, name: str) -> str:
    return next(c.rev for c in notebook_overview(path).cells if c.name == name)


Mutation = Callable[[Path, str], MutationOutcome]

NEW_NUMPY = "import numpy as np\nrng = None"
MUTATIONS: dict[str, tuple[str, Mutation]] = {
    "add": (
        "import-numpy",
        lambda p, rev: add_cell(p, "y = np.ones(3)", after="import-numpy", expected_rev=rev),
    ),
    "update": (
        "import-numpy",
        lambda p, rev: update_cell(p, "import-numpy", expected_rev=rev, source=NEW_NUMPY),
    ),
    "remove": ("x-sort", lambda p, rev: remove_cell(p, "x-sort", expected_rev=rev)),
    "move": ("x-sort", lambda p, rev: move_cell(p, "x-sort", expected_rev=rev, position="start")),
}


@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_a_mutation_with_the_right_rev_applies_and_undo_restores_the_bytes(
    work: Path, kind: str
) -> None:
    path = copy_fixture(SORTING, work)
    original = path.read_bytes()
    target, mutate = MUTATIONS[kind]
    outcome = mutate(path, _rev(path, target))
    assert outcome.written == (path,)
    assert outcome.structure_rev == notebook_overview(path).structure_rev
    assert outcome.structure_rev != outcome.previous_structure_rev
    assert path.read_bytes() != original
    assert outcome.to_dict()["stale"] == list(outcome.stale)
    undone = undo_last(path)
    assert undone.operation == f"{kind}_cell"
    assert path.read_bytes() == original
    assert undone.remaining == 0
    with pytest.raises(JcliError) as err:
        undo_last(path)
    assert err.value.code == ErrorCode.UNDO_EMPTY


@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_a_mutation_with_a_wrong_rev_is_refused_and_changes_nothing(work: Path, kind: str) -> None:
    path = copy_fixture(SORTING, work)
    original = path.read_bytes()
    target, mutate = MUTATIONS[kind]
    with pytest.raises(JcliError) as err:
        mutate(path, STALE_REV)
    assert err.value.code == ErrorCode.REV_MISMATCH
    assert err.value.details["rev"] == _rev(path, target)
    assert err.value.details["name"] == target
    assert path.read_bytes() == original
    with pytest.raises(JcliError) as undo_err:
        undo_last(path)
    assert undo_err.value.code == ErrorCode.UNDO_EMPTY


def test_update_results_carry_the_new_rev_and_what_went_stale(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    old = _rev(path, "import-numpy")
    outcome = update_cell(
        path, "import-numpy", expected_rev=old, source="import numpy as np\nx = [3, 1, 2]"
    )
    assert outcome.cell is not None and outcome.previous_cell is not None
    assert outcome.previous_cell.rev == old
    assert outcome.cell.rev == _rev(path, "import-numpy") != old
    assert outcome.stale[0] == "import-numpy"
    children = next(c for c in notebook_overview(path).cells if c.name == "import-numpy").children
    assert set(children) <= set(outcome.stale)
    again = update_cell(path, "import-numpy", expected_rev=outcome.cell.rev, new_name="setup")
    assert again.cell is not None and again.cell.name == "setup"
    assert again.stale == ()
    with pytest.raises(JcliError) as err:
        update_cell(path, "import-numpy", expected_rev=outcome.cell.rev, source="x")
    assert err.value.code == ErrorCode.CELL_NOT_FOUND


def test_names_are_validated_and_unique(work: Path) -> None:
    path = make_notebook(work, ["a = 1", "b = a"])
    with pytest.raises(JcliError) as err:
        add_cell(path, "c = 1", name="a")
    assert err.value.code == ErrorCode.NAME_CONFLICT
    with pytest.raises(JcliError) as err:
        add_cell(path, "c = 1", name="Not Kebab")
    assert err.value.code == ErrorCode.INVALID_NAME
    with pytest.raises(JcliError) as err:
        add_cell(path, "c = 1", after="a")
    assert err.value.code == ErrorCode.USAGE_ERROR
    with pytest.raises(JcliError) as err:
        add_cell(path, "c = 1", position="start", expected_rev=STALE_REV)
    assert err.value.code == ErrorCode.REV_MISMATCH
    structure = notebook_overview(path).structure_rev
    outcome = add_cell(path, "c = b", position="end", expected_rev=structure)
    assert outcome.cell is not None and outcome.cell.name == "c"
    assert outcome.stale == ("c",)


def test_an_outside_edit_between_reading_and_editing_is_kept(work: Path) -> None:
    path = make_notebook(work, ["a = 1", "b = a + 1", "c = 3"])
    rev_b = _rev(path, "b")  # the agent reads the overview ...
    document = json.loads(path.read_text())  # ... then someone edits another cell in Jupyter
    document["cells"][2]["source"] = "c = 300  # edited in JupyterLab"
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    outcome = update_cell(path, "b", expected_rev=rev_b, source="b = a + 2")
    assert outcome.stale == ("b",)
    sources = [c["source"] for c in json.loads(path.read_text())["cells"]]
    assert sources == ["a = 1", "b = a + 2", "c = 300  # edited in JupyterLab"]


def test_an_outside_edit_landing_during_the_mutation_is_kept_and_counted_stale(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_notebook(work, ["a = 1", "b = a + 1", "c = 3", "d = c"])
    rev_b = _rev(path, "b")
    real_load = Document.load

    def load_then_edit(target: Any, **kwargs: Any) -> Document:
        loaded = real_load(target, **kwargs)
        document = json.loads(path.read_text())
        document["cells"][2]["source"] = "c = 30"
        path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        return loaded

    monkeypatch.setattr(_mutations.Document, "load", load_then_edit)
    outcome = update_cell(path, "b", expected_rev=rev_b, source="b = a + 2")
    assert outcome.reloaded
    assert outcome.stale == ("b", "c", "d")
    sources = [c["source"] for c in json.loads(path.read_text())["cells"]]
    assert sources == ["a = 1", "b = a + 2", "c = 30", "d = c"]


def test_an_outside_edit_of_the_target_is_refused(work: Path) -> None:
    path = make_notebook(work, ["a = 1", "b = a + 1"])
    rev_b = _rev(path, "b")
    document = json.loads(path.read_text())
    document["cells"][1]["source"] = "b = 99"
    path.write_text(json.dumps(document), encoding="utf-8")
    raw = path.read_bytes()
    with pytest.raises(JcliError) as err:
        remove_cell(path, "b", expected_rev=rev_b)
    assert err.value.code == ErrorCode.REV_MISMATCH
    assert path.read_bytes() == raw


def test_undo_keeps_an_outside_change_of_another_cell_and_says_what_is_stale(
    work: Path,
) -> None:
    path = make_notebook(work, ["a = 1", "b = a"])
    remove_cell(path, "b", expected_rev=_rev(path, "b"))
    path.write_text(path.read_text().replace("a = 1", "a = 2"), encoding="utf-8")
    undone = undo_last(path)
    assert undone.merged and not undone.forced
    assert undone.changed == ("b",) and undone.stale == ("b",)
    assert [view.source for view in Document.load(path).cells] == ["a = 2", "b = a"]
    assert undone.to_dict()["changed"] == ["b"]


def test_undo_refuses_to_overwrite_an_outside_change_of_the_undone_cell_unless_forced(
    work: Path,
) -> None:
    path = make_notebook(work, ["a = 1", "b = a"])
    update_cell(path, "b", expected_rev=_rev(path, "b"), source="b = a * 2")
    path.write_text(path.read_text().replace("b = a * 2", "b = a * 3"), encoding="utf-8")
    with pytest.raises(JcliError) as err:
        undo_last(path)
    assert err.value.code == ErrorCode.UNDO_CONFLICT
    assert err.value.details["conflicts"] == [
        {"cell": "b", "reason": "edited_since", "fields": ["source"]}
    ]
    forced = undo_last(path, force=True)
    assert forced.forced and forced.cell_count == 2
    assert forced.conflicts == ({"cell": "b", "reason": "edited_since", "fields": ["source"]},)
    assert [view.source for view in Document.load(path).cells] == ["a = 1", "b = a"]


def test_undo_steps_back_through_several_mutations(work: Path) -> None:
    path = make_notebook(work, ["a = 1"])
    states = [path.read_bytes()]
    add_cell(path, "b = a")
    states.append(path.read_bytes())
    update_cell(path, "b", expected_rev=_rev(path, "b"), source="b = a * 2")
    states.append(path.read_bytes())
    move_cell(path, "b", expected_rev=_rev(path, "b"), position="start")
    for expected in reversed(states):
        undo_last(path)
        assert path.read_bytes() == expected


def test_mutations_through_a_paired_py_file_write_both_and_undo_both(work: Path) -> None:
    import jupytext

    ipynb = copy_fixture(SORTING, work)
    notebook = jupytext.read(ipynb)
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    jupytext.write(notebook, ipynb)
    py = work / "02.08-Sorting.py"
    jupytext.write(notebook, py, fmt="py:percent")
    before = (ipynb.read_bytes(), py.read_bytes())
    outcome = update_cell(
        py, "import-numpy", expected_rev=_rev(py, "import-numpy"), source="import numpy as np"
    )
    assert set(outcome.written) == {ipynb, py}
    assert "import-numpy" in outcome.stale
    undo_last(py)
    assert (ipynb.read_bytes(), py.read_bytes()) == before


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


def test_undoing_a_rename_stales_nothing(work: Path) -> None:
    path = make_notebook(work, ["import time\nbase = 1", "y = base + 1"])
    renamed = update_cell(path, "import-time", expected_rev=_rev(path, "import-time"),
                          new_name="load-base")  # fmt: skip
    assert renamed.stale == ()
    undone = undo_last(path)
    assert _names(path) == ["import-time", "y"]
    assert undone.stale == ()


def test_undoing_a_rename_onto_a_removed_cells_name_stales_nothing(
    work: Path,
) -> None:
    path = make_notebook(work, ["a = 1", "b = a + 1", "c = 5"])
    remove_cell(path, "a", expected_rev=_rev(path, "a"))
    update_cell(path, "c", expected_rev=_rev(path, "c"), new_name="a")
    undone = undo_last(path)  # the rename goes back: the cell of id cell-2 is c again
    assert _names(path) == ["b", "c"]
    assert undone.stale == ()


def test_cells_are_matched_by_id_and_a_name_taken_by_a_renamed_cell_gets_a_key_of_its_own(
    work: Path,
) -> None:
    path = make_notebook(work, ["a = 1", "b = 2"])
    before = Document.load(path).cells
    cells = json.loads(path.read_text(encoding="utf-8"))
    cells["cells"] = [cells["cells"][1]]
    cells["cells"][0]["metadata"] = {"jupyter_mcp": {"name": "a"}}
    path.write_text(json.dumps(cells), encoding="utf-8")
    after = Document.load(path).cells  # cell-0 gone, cell-1 (was b) now named a
    renames = _mutations._renames(before, after)
    assert renames["b"] == "a"
    assert renames["a"] not in {view.name for view in after}


def test_undoing_a_rename_in_a_notebook_without_cell_ids_stales_nothing(work: Path) -> None:
    path = make_notebook(work, ["import time\nbase = 1", "y = base + 1"])
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        del cell["id"]
    notebook["nbformat_minor"] = 4
    path.write_text(json.dumps(notebook), encoding="utf-8")
    renamed = update_cell(path, "import-time", expected_rev=_rev(path, "import-time"),
                          new_name="load-base")  # fmt: skip
    assert renamed.stale == ()
    undone = undo_last(path)
    assert _names(path) == ["import-time", "y"]
    assert undone.stale == ()
