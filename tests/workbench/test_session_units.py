"""Kernel-less parts of the session: stored output form, the run log, writing results."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from wb_helpers import make_notebook

from jupyter_jcli.notebook.document import CellOutputs, Document, OutputUpdate
from jupyter_jcli.workbench import add_cell, undo_last, update_cell
from jupyter_jcli.workbench._execute import file_outputs
from jupyter_jcli.workbench._execution_log import ExecutionLog, record_keys, statuses
from jupyter_jcli.workbench._load import load


def test_outputs_are_stored_as_jupyter_splits_them() -> None:
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": "a\nb\n"},
        {
            "output_type": "execute_result",
            "execution_count": 3,
            "metadata": {},
            "data": {"text/plain": "x\ny", "image/png": "iVBO\nRw==", "application/json": {}},
        },
    ]
    stored = file_outputs(outputs)
    assert stored[0]["text"] == ["a\n", "b\n"]
    assert stored[1]["data"] == {
        "text/plain": ["x\n", "y"],
        "image/png": "iVBO\nRw==",
        "application/json": {},
    }
    assert outputs[0]["text"] == "a\nb\n"  # the input is not changed


def test_the_run_log_keeps_the_latest_run_per_cell_on_the_newest_epoch() -> None:
    log = ExecutionLog()
    log.record("a", "r1", "e1", 1, [], ok=True)
    log.record("a", "r2", "e1", 2, [], ok=False)
    log.record("b", "r3", "e1", 3, ["a"], ok=True)
    assert [(r.key, r.rev, r.ok) for r in log.records()] == [("a", "r2", False), ("b", "r3", True)]
    log.record("b", "r3", "e2", 4, ["a"], ok=True)
    assert [(r.key, r.epoch) for r in log.records()] == [("b", "e2")]


def test_runs_follow_the_cell_id_and_runs_recorded_by_name_still_count(work: Path) -> None:
    path = make_notebook(work, ["a = 1", "b = a + 1", "c = 3"])
    loaded = load(path)
    a, b, c = loaded.cells
    assert record_keys(loaded.cells) == {"a": "#cell-0", "b": "#cell-1", "c": "#cell-2"}
    log = ExecutionLog()
    log.record("#cell-0", a.rev, "e1", 1, [], ok=True)
    log.record("#cell-1", b.rev, "e1", 2, ["#cell-0"], ok=True)
    log.record("c", c.rev, "e1", 3, [], ok=True)  # a log written before runs were keyed by id
    log.record("#gone", c.rev, "e1", 4, [], ok=True)  # a cell removed since: counts for none
    assert statuses(loaded, log, "e1") == {"a": "fresh", "b": "fresh", "c": "fresh"}
    update_cell(path, "a", expected_rev=a.rev, new_name="base")
    assert statuses(load(path), log, "e1") == {"base": "fresh", "b": "fresh", "c": "fresh"}


def test_a_renamed_cell_without_an_id_keeps_its_runs_and_its_old_name_is_free(
    work: Path,
) -> None:
    path = make_notebook(work, ["a = 1", "b = a + 1"])
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        del cell["id"]
    notebook["nbformat_minor"] = 4
    path.write_text(json.dumps(notebook), encoding="utf-8")
    a, b = load(path).cells
    log = ExecutionLog()
    log.record("a", a.rev, "e1", 1, [], ok=True)
    log.record("b", b.rev, "e1", 2, ["a"], ok=True)
    update_cell(path, "a", expected_rev=a.rev, new_name="base")
    update_cell(path, "base", expected_rev=a.rev, new_name="start")  # still first named a
    assert statuses(load(path), log, "e1") == {"start": "fresh", "b": "fresh"}
    add_cell(path, "z = 0", name="a", position="start")  # the old name, on a new cell
    loaded = load(path)
    assert record_keys(loaded.cells) == {"a": "=a", "start": "a", "b": "b"}
    assert statuses(loaded, log, "e1") == {"a": "never_run", "start": "fresh", "b": "fresh"}
    undo_last(path)
    undo_last(path)
    undo_last(path)
    assert statuses(load(path), log, "e1") == {"a": "fresh", "b": "fresh"}


def test_write_outputs_skips_edited_cells_applies_display_updates_and_keeps_undo(
    work: Path,
) -> None:
    path = make_notebook(work, ["a = 1", "b = 2", "c = 3"])
    document = Document.load(path)
    a, b, c = document.cells
    edit = update_cell(path, c.name, expected_rev=c.rev, source="c = 4")
    display = {"output_type": "display_data", "data": {"text/plain": ["old"]}, "metadata": {}}
    written = document.write_outputs(
        {
            a.name: CellOutputs(a.rev, [display], 1),
            b.name: CellOutputs(
                b.rev, [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}], 2
            ),
            c.name: CellOutputs(c.rev, [], 3),  # c was edited after it ran: not written
        },
        [
            OutputUpdate(a.name, 0, {"text/plain": ["new"]}, {}),
            OutputUpdate(b.name, 0, {"text/plain": ["x"]}, {}),
        ],
    )
    assert written == (a.name, b.name)
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    assert saved.cells[0].outputs[0]["data"]["text/plain"] == "new"
    assert saved.cells[0].execution_count == 1
    assert saved.cells[1].outputs[0]["output_type"] == "stream"  # not a display: no update
    assert saved.cells[2].source == "c = 4" and saved.cells[2].execution_count is None
    undone = undo_last(path)
    assert undone.operation == edit.operation
    after = json.loads(path.read_text(encoding="utf-8"))
    assert "".join(after["cells"][2]["source"]) == "c = 3"
