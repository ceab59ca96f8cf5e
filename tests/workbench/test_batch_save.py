"""How a running batch saves its finished cells (``workbench._batch_save``, issue 27 item 2),
without a kernel: results as a kernel returns them, a clock the test moves, a real notebook
file. Quick cells are written together once the save interval has passed, never one write
per cell; a run is recorded in the run log only once its write was attempted; a display
update to a cell already written is written again; a failed write does not stop the batch
and is raised at its end only if the last attempt fails too."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.kernels import DisplayUpdate, ExecutionResult
from jupyter_jcli.notebook.document import CellOutputs, OutputUpdate
from jupyter_jcli.workbench import create_notebook
from jupyter_jcli.workbench._batch_save import SAVE_INTERVAL, BatchSaver
from jupyter_jcli.workbench._execution_log import ExecutionLog, named_records
from jupyter_jcli.workbench._load import Loaded, load

EPOCH = "epoch-1"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _notebook(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "nb.ipynb"
    create_notebook(path, cells=[{"source": f"x{i} = {i}", "name": f"c{i}"} for i in range(count)])
    return path


def _result(text: str, count: int, updates: list[DisplayUpdate] | None = None) -> ExecutionResult:
    output: dict[str, Any] = {"output_type": "stream", "name": "stdout", "text": text}
    return ExecutionResult(
        status="ok",
        outputs=[output],
        execution_count=count,
        epoch=EPOCH,
        kernel_restarted=False,
        duration_s=0.01,
        display_updates=updates or [],
    )


def _saved(path: Path) -> list[list[Any]]:
    return [cell["outputs"] for cell in json.loads(path.read_bytes())["cells"]]


def _saver(path: Path, clock: Clock) -> tuple[BatchSaver, ExecutionLog, Loaded]:
    loaded = load(path)
    log = ExecutionLog()
    return BatchSaver(loaded.document, loaded.graph, log, clock=clock), log, loaded


def _ran(log: ExecutionLog, loaded: Loaded) -> list[str]:
    """The names of the cells the log recorded (records are keyed by run key: the cell id)."""
    return [r.key for r in named_records(log.records(), loaded.document.cells)]


def test_quick_cells_wait_for_the_interval_then_are_written_together(tmp_path: Path) -> None:
    path = _notebook(tmp_path, 3)
    clock = Clock()
    saver, log, loaded = _saver(path, clock)
    writes: list[tuple[str, ...]] = []
    write = loaded.document.write_outputs

    def counted(
        results: Mapping[str, CellOutputs], updates: Sequence[OutputUpdate] = ()
    ) -> tuple[str, ...]:
        writes.append(tuple(results))
        return write(results, updates)

    loaded.document.write_outputs = counted  # type: ignore[method-assign,assignment]
    for i, view in enumerate(loaded.document.cells):
        clock.now += 0.1
        saver.add(view, _result(f"{i}\n", i + 1), seq=i + 1)
        assert not saver.due
    assert _saved(path) == [[], [], []] and log.records() == []
    clock.now += SAVE_INTERVAL
    assert saver.due
    anyio.run(saver.save)
    assert writes == [("c0", "c1", "c2")]  # one write for the three cells
    assert [o[0]["text"] for o in _saved(path)] == [["0\n"], ["1\n"], ["2\n"]]
    assert _ran(log, loaded) == ["c0", "c1", "c2"]
    assert anyio.run(saver.finish) == ("c0", "c1", "c2") and writes == [("c0", "c1", "c2")]


def test_a_run_is_recorded_only_once_its_write_was_attempted(tmp_path: Path) -> None:
    path = _notebook(tmp_path, 2)
    saver, log, loaded = _saver(path, Clock())
    first, second = loaded.document.cells
    saver.add(first, _result("a\n", 1), seq=1)
    anyio.run(saver.save)
    saver.add(second, _result("b\n", 2), seq=2)
    assert _ran(log, loaded) == ["c0"]  # c1's outputs are not on disk yet
    assert _saved(path)[1] == []
    assert anyio.run(saver.finish) == ("c0", "c1")
    assert _ran(log, loaded) == ["c0", "c1"]


def test_a_display_update_to_a_cell_already_written_is_written_again(tmp_path: Path) -> None:
    path = _notebook(tmp_path, 2)
    saver, _log, loaded = _saver(path, Clock())
    first, second = loaded.document.cells
    shown = ExecutionResult(
        status="ok",
        outputs=[{"output_type": "display_data", "data": {"text/plain": "0%"}, "metadata": {}}],
        execution_count=1,
        epoch=EPOCH,
        kernel_restarted=False,
        duration_s=0.01,
    )
    saver.add(first, shown, seq=1)
    anyio.run(saver.save)
    update = DisplayUpdate("c0", 0, {"text/plain": "100%"}, {})
    saver.add(second, _result("done\n", 2, [update]), seq=2)
    anyio.run(saver.finish)
    assert _saved(path)[0][0]["data"] == {"text/plain": ["100%"]}
    assert _saved(path)[1][0]["text"] == ["done\n"]


@pytest.mark.skipif(os.name != "posix", reason="a read-only file by its mode bits")
def test_a_failed_write_is_retried_and_raised_only_when_the_last_one_fails(
    tmp_path: Path,
) -> None:
    path = _notebook(tmp_path, 2)
    saver, log, loaded = _saver(path, Clock())
    first, second = loaded.document.cells
    path.chmod(0o444)
    saver.add(first, _result("a\n", 1), seq=1)
    anyio.run(saver.save)  # fails, kept for later: the run goes on
    assert _ran(log, loaded) == ["c0"]  # it ran: the kernel holds its state
    path.chmod(0o644)
    saver.add(second, _result("b\n", 2), seq=2)
    assert anyio.run(saver.finish) == ("c0", "c1")
    assert [o[0]["text"] for o in _saved(path)] == [["a\n"], ["b\n"]]

    again, _log, loaded = _saver(path, Clock())
    path.chmod(0o444)
    again.add(loaded.document.cells[0], _result("c\n", 3), seq=3)
    with pytest.raises(NotebookError) as raised:
        anyio.run(again.finish)
    assert raised.value.code == ErrorCode.NOTEBOOK_WRITE_FAILED
