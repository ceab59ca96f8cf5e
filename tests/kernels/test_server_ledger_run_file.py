"""The Jupyter Server ledger's run log in its own append-only file (``kernels._run_file``, as
the registry's): a record costs the same whatever the log holds, the file stays within a
constant factor of the live log, and what cannot be trusted (a torn line, an earlier epoch's
runs, a ledger an earlier version wrote) reads as not run. The last test runs ``j-cli`` on a
real Jupyter Server (marker ``server``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_server_cli_trial import jcli

from jupyter_jcli.kernels import ServerLedger
from jupyter_jcli.kernels._run_file import COMPACT_MIN_BYTES
from jupyter_jcli.workbench import SharedRunLog
from server_helpers import RunningServer, write_notebook

CELLS = 3000
URL = "http://127.0.0.1:8888/"


def _joined(tmp_path: Path, epoch: str = "e1") -> tuple[ServerLedger, Path]:
    """A ledger whose notebook's kernel ``k1`` was joined on ``epoch`` (as ``_adopt``)."""
    ledger = ServerLedger(URL, tmp_path / "ledger")
    notebook = tmp_path / "nb.ipynb"
    assert ledger.adopt(notebook, "k1", None, epoch) == epoch
    return ledger, notebook


def _run(key: str, rev: str = "r1", epoch: str = "e1") -> dict[str, object]:
    return {"key": key, "rev": rev, "epoch": epoch, "parents": [], "ok": True}


def _keys(ledger: ServerLedger, notebook: Path) -> list[str]:
    return [str(run["key"]) for run in ledger.runs(notebook)]


def test_the_ledger_entry_does_not_grow_with_the_cells_a_run_records(tmp_path: Path) -> None:
    ledger, notebook = _joined(tmp_path)
    entry_file = ledger.path(notebook)
    assert ledger.record_run(notebook, _run("c0")) == 1
    first = entry_file.stat().st_size
    for i in range(1, CELLS):
        ledger.record_run(notebook, _run(f"c{i}"))
    assert entry_file.stat().st_size <= first + 8  # the seq's digits, not the log
    runs = ledger.runs(notebook)
    assert [r["key"] for r in runs] == [f"c{i}" for i in range(CELLS)]
    assert [r["seq"] for r in runs] == list(range(1, CELLS + 1))


def test_rerunning_the_same_cells_keeps_the_ledgers_run_file_within_twice_its_live_size(
    tmp_path: Path,
) -> None:
    ledger, notebook = _joined(tmp_path)
    log = ledger.path(notebook, ".runs")
    for round_ in range(40):
        for i in range(200):
            ledger.record_run(notebook, _run(f"c{i}", rev=f"r{round_}"))
    live = sum(len(line) + 1 for line in log.read_bytes().splitlines()[-200:])
    assert log.stat().st_size <= max(COMPACT_MIN_BYTES, 2 * live) + live
    runs = SharedRunLog(ledger, notebook).records()
    assert len(runs) == 200 and {r.rev for r in runs} == {"r39"}
    assert [r.key for r in runs] == [f"c{i}" for i in range(200)]


def test_a_torn_last_line_in_the_ledgers_run_file_reads_as_not_run(tmp_path: Path) -> None:
    ledger, notebook = _joined(tmp_path)
    ledger.record_run(notebook, _run("a"))
    with ledger.path(notebook, ".runs").open("ab") as file:
        file.write(b'{"epoch":"e1","key":"torn","ok":tr')
    assert _keys(ledger, notebook) == ["a"]
    assert ledger.record_run(notebook, _run("c")) > 0  # not glued to the torn line
    assert _keys(ledger, notebook) == ["a", "c"]


def test_a_restart_or_a_new_epoch_never_brings_an_earlier_epochs_runs_back(
    tmp_path: Path,
) -> None:
    ledger, notebook = _joined(tmp_path)
    ledger.record_run(notebook, _run("a"))
    ledger.record_run(notebook, _run("b"))
    ledger.start_afresh(notebook)  # the kernel restarted
    assert ledger.runs(notebook) == []
    ledger.record_run(notebook, _run("c"))  # a late record of the old epoch: only itself
    assert _keys(ledger, notebook) == ["c"]
    ledger.record_run(notebook, _run("d", epoch="e2"))  # the kernel's newer epoch
    assert _keys(ledger, notebook) == ["d"]
    ledger.record_run(notebook, _run("e"))  # e1 again: c is not back
    assert _keys(ledger, notebook) == ["e"]


def test_joining_a_kernel_untrusted_empties_the_run_file_and_a_trusted_join_keeps_it(
    tmp_path: Path,
) -> None:
    ledger, notebook = _joined(tmp_path)
    ledger.record_run(notebook, _run("a"))
    ledger.leave(notebook, "k1", "e1", "t1 p1")
    assert ledger.adopt(notebook, "k1", "t1 p1", "e9") == "e1"  # as we left it
    assert _keys(ledger, notebook) == ["a"]
    ledger.leave(notebook, "k1", "e1", "t1 p1")
    assert ledger.adopt(notebook, "k1", "t2 p1", "e1") == "e1"  # ran since: afresh
    assert ledger.runs(notebook) == []  # even on the same epoch id
    assert not ledger.path(notebook, ".runs").exists()


def test_forgetting_the_ledger_entry_removes_its_run_file(tmp_path: Path) -> None:
    ledger, notebook = _joined(tmp_path)
    ledger.record_run(notebook, _run("a"))
    assert ledger.path(notebook, ".runs").exists()
    ledger.forget(notebook, "k0")  # a stop of an older kernel of the notebook
    assert _keys(ledger, notebook) == ["a"]
    ledger.forget(notebook, "k1")
    assert not ledger.path(notebook).exists()
    assert not ledger.path(notebook, ".runs").exists()
    assert ledger.runs(notebook) == []
    assert ledger.record_run(notebook, _run("b")) == -1  # no kernel of ours joined


def test_a_ledger_an_earlier_version_wrote_reads_its_cells_as_not_run(tmp_path: Path) -> None:
    ledger = ServerLedger(URL, tmp_path / "ledger")
    notebook = tmp_path / "nb.ipynb"
    ledger.root.mkdir(parents=True)
    legacy = {
        "kernel_id": "k1", "epoch": "e1", "seq": 2, "changes": [], "witness": "t1 p1",
        "interrupt": None, "runs": [{**_run("a"), "seq": 1}, {**_run("b"), "seq": 2}],
    }  # fmt: skip
    ledger.path(notebook).write_text(json.dumps(legacy))
    assert ledger.read(notebook) is not None  # the kernel is still known, its runs are not
    assert ledger.runs(notebook) == []
    assert ledger.adopt(notebook, "k1", "t1 p1", "e9") == "e1"
    assert ledger.record_run(notebook, _run("c")) == 3
    assert _keys(ledger, notebook) == ["c"]
    assert "runs" not in json.loads(ledger.path(notebook).read_bytes())


@pytest.mark.server
def test_a_server_kernels_runs_go_to_the_run_file_emptied_at_restart_and_removed_at_stop(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    cells = 60
    sources = ["x0 = 0", *(f"x{i} = x{i - 1} + 1" for i in range(1, cells))]
    path = write_notebook(tmp_path, sources, "chain")
    assert jcli(jupyter_server, "kernel", "start", path)[0] == 0
    ledger = ServerLedger(jupyter_server.url)
    try:
        status, first = jcli(jupyter_server, "run", path, "--stale")
        assert (status, first["run"]["ran_count"]) == (0, cells)
        entry = ledger.path(path.resolve())
        assert "runs" not in json.loads(entry.read_bytes())
        assert len(ledger.path(path.resolve(), ".runs").read_bytes().splitlines()) == cells
        status, again = jcli(jupyter_server, "run", path, "--stale")
        assert (status, again["run"]["ran_count"]) == (0, 0)  # fresh through the run file
        assert jcli(jupyter_server, "kernel", "restart", path)[0] == 0
        status, after = jcli(jupyter_server, "run", path, "--stale")
        assert (status, after["run"]["ran_count"]) == (0, cells)
        assert len(ledger.path(path.resolve(), ".runs").read_bytes().splitlines()) == cells
    finally:
        assert jcli(jupyter_server, "kernel", "stop", path)[0] == 0
    assert not entry.exists()
    assert not ledger.path(path.resolve(), ".runs").exists()
