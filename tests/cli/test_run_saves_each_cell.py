"""A multi-cell ``j-cli run`` saves each cell's outputs as it finishes (issue 27 item 2), so a
run ended by SIGHUP (a closed terminal, treated as SIGTERM) or SIGKILL while its third cell
runs keeps the two cells that finished, in a whole notebook. Each test waits (bounded) until
the file holds the second cell's outputs while the third still runs: that wait is itself
the check that outputs are written before the run ends. Every command is a real process on
a real ipykernel kernel: one started for the command, and the live kernel of ``j-cli kernel
start``."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jcli_helpers import never_run_notebook as notebook
from live_helpers import CLICK, TIMEOUT, finish, spawn, start, stop

pytestmark = pytest.mark.kernel


def _cells(tmp_path: Path) -> Path:
    """Two quick cells, then one that marks its start and sleeps far longer than any wait."""
    mark = tmp_path / "third-running"
    sleeper = f"open({str(mark)!r}, 'w').close()\nimport time\ntime.sleep(120)"
    return notebook(tmp_path, ["print('one')", "print('two')", sleeper])


def _saved_outputs(path: Path) -> list[list[Any]] | None:
    """Each cell's saved outputs, or None while the file does not parse (it never should)."""
    try:
        return [cell.get("outputs", []) for cell in json.loads(path.read_bytes())["cells"]]
    except (OSError, ValueError, KeyError):
        return None


def _wait_for_two_saved(path: Path, child: Any) -> None:
    """Until the file holds the outputs of the first two cells, while ``child`` runs."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and child.poll() is None:
        outputs = _saved_outputs(path)
        if outputs is not None and outputs[0] and outputs[1]:
            return
        time.sleep(0.05)
    raise AssertionError(f"the finished cells were not saved while the run ran: {outputs}")


def _assert_two_finished_cells_saved(path: Path) -> None:
    saved = nbformat.read(path, as_version=4)  # whole, valid
    nbformat.validate(saved)
    texts = [[output.get("text") for output in cell.outputs] for cell in saved.cells]
    assert texts == [["one\n"], ["two\n"], []]
    first, second, third = (cell.execution_count for cell in saved.cells)
    assert first is not None and second == first + 1 and third is None


@pytest.mark.parametrize("kill", [signal.SIGHUP, signal.SIGKILL], ids=["sighup", "sigkill"])
@pytest.mark.parametrize("live", [False, True], ids=["own-kernel", "live-kernel"])
def test_a_run_killed_in_its_third_cell_keeps_the_two_cells_that_finished(
    tmp_path: Path, kill: signal.Signals, live: bool
) -> None:
    path = _cells(tmp_path)
    if live:
        start(path)
    try:
        child = spawn(CLICK, tmp_path, "-j", "run", path)
        try:
            _wait_for_two_saved(path, child)
            child.send_signal(kill)
        finally:
            status, out = finish(child)
    finally:
        stop(path)
    _assert_two_finished_cells_saved(path)
    if kill == signal.SIGHUP:  # as SIGTERM: one CANCELLED document, 128 + SIGHUP
        assert status == 129
        document = json.loads(out)
        assert (document["status"], document["code"]) == ("error", "CANCELLED")
        # the finished cells were saved: the message no longer says nothing was kept
        assert "what it printed since was not kept" not in document["message"]
    else:
        assert status == -signal.SIGKILL
