"""The run log in its own append-only file (``kernels._log_file``), of a local kernel's
registry entry and of a Jupyter Server kernel's ledger entry alike: a record costs the same
whatever the log holds, the file stays within a constant factor of the live log, and what
cannot be trusted (a torn line, another kernel's runs) reads as not run. The ledger's own
rules (epochs changing in place, an earlier version's entry) are in
``test_server_ledger_run_file.py``."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from jupyter_jcli.kernels import KernelEntry, KernelRegistry, ServerLedger
from jupyter_jcli.kernels._log_file import COMPACT_MIN_BYTES
from jupyter_jcli.workbench import SharedExecutionLog

CELLS = 3000


def _registered(tmp_path: Path, epoch: str = "e1") -> tuple[KernelRegistry, Path]:
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    now = time.time()
    with registry.locked(notebook):
        registry.write(
            KernelEntry(
                notebook_path=str(notebook), kernelspec="python3", cwd=str(tmp_path),
                epoch=epoch, state="idle", started=now, started_by="test pid 1",
                idle_since=now, idle_timeout=60.0, keep=True, pid=os.getpid(),
                supervisor_pid=os.getpid(),
            )
        )  # fmt: skip
    return registry, notebook


def joined_ledger(tmp_path: Path, epoch: str = "e1") -> tuple[ServerLedger, Path]:
    """A server ledger whose notebook's kernel ``k1`` was joined on ``epoch`` (as the server
    backend's ``_adopt`` does)."""
    ledger = ServerLedger("http://127.0.0.1:8888/", tmp_path / "ledger")
    notebook = tmp_path / "nb.ipynb"
    assert ledger.adopt(notebook, "k1", None, epoch) == epoch
    return ledger, notebook


@pytest.fixture(params=["registry", "server-ledger"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[KernelRegistry | ServerLedger, Path]:
    """The notebook's kernel known to the registry, or to a Jupyter Server's ledger."""
    if request.param == "registry":
        return _registered(tmp_path)
    return joined_ledger(tmp_path)


def run_record(key: str, rev: str = "r1", epoch: str = "e1") -> dict[str, object]:
    """One run of cell ``key`` (the shape ``record_execution`` takes)."""
    return {"key": key, "rev": rev, "epoch": epoch, "parents": [], "ok": True}


def test_the_entry_does_not_grow_with_the_cells_a_run_records(
    store: tuple[KernelRegistry | ServerLedger, Path],
) -> None:
    registry, notebook = store
    entry_file = registry.path(notebook, ".json")
    assert registry.record_execution(notebook, run_record("c0")) == 1
    first = entry_file.stat().st_size
    for i in range(1, CELLS):
        registry.record_execution(notebook, run_record(f"c{i}"))
    assert entry_file.stat().st_size <= first + 8  # the seq's digits, not the log
    runs = registry.executions(notebook)
    assert [r["key"] for r in runs] == [f"c{i}" for i in range(CELLS)]
    assert [r["seq"] for r in runs] == list(range(1, CELLS + 1))


def test_rerunning_the_same_cells_keeps_the_file_within_twice_its_live_size(
    store: tuple[KernelRegistry | ServerLedger, Path],
) -> None:
    registry, notebook = store
    log = registry.path(notebook, ".runs")
    for round_ in range(40):
        for i in range(200):
            registry.record_execution(notebook, run_record(f"c{i}", rev=f"r{round_}"))
    live = sum(len(line) + 1 for line in log.read_bytes().splitlines()[-200:])
    assert log.stat().st_size <= max(COMPACT_MIN_BYTES, 2 * live) + live
    runs = SharedExecutionLog(registry, notebook).records()
    assert len(runs) == 200 and {r.rev for r in runs} == {"r39"}
    assert [r.key for r in runs] == [f"c{i}" for i in range(200)]


def test_a_torn_last_line_and_another_kernels_runs_read_as_not_run(tmp_path: Path) -> None:
    registry, notebook = _registered(tmp_path)
    registry.record_execution(notebook, run_record("a"))
    log = registry.path(notebook, ".runs")
    with log.open("ab") as file:
        file.write(b'{"epoch":"e0","key":"old","ok":true,"parents":[],"rev":"r","seq":9}\n')
        file.write(b'{"epoch":"e1","key":"torn","ok":tr')
    assert [r["key"] for r in registry.executions(notebook)] == ["a"]
    assert (
        registry.record_execution(notebook, run_record("b", epoch="e2")) == -1
    )  # not this kernel's
    assert registry.record_execution(notebook, run_record("c")) > 0  # not glued to the torn line
    assert [r["key"] for r in registry.executions(notebook)] == ["a", "c"]


def test_removing_the_entry_removes_its_run_log(tmp_path: Path) -> None:
    registry, notebook = _registered(tmp_path)
    registry.record_execution(notebook, run_record("a"))
    assert registry.path(notebook, ".runs").exists()
    assert registry.remove(notebook)
    assert not registry.path(notebook, ".runs").exists()
    assert registry.executions(notebook) == []
