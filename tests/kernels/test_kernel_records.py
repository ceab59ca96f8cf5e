"""The records protocol (:class:`~jupyter_jcli.kernels.KernelRecords`): the same sentences
against every store (the registry's files, a server's ledger, the in-memory fake), and the
shared path in-process: kernels given one ``MemoryRecords`` stand for processes of ours on
one kernel (no registry folder, no supervisor, no server)."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import anyio
import pytest

from jupyter_jcli.kernels import (
    KernelEntry,
    KernelOrigin,
    KernelRecords,
    KernelRegistry,
    NotebookKernel,
    ServerLedger,
)
from jupyter_jcli.kernels._records import MAX_CHANGES
from jupyter_jcli.workbench import SharedExecutionLog
from kernel_fakes import (
    FakeBackend,
    MemoryRecords,
    message,
    python_backend,
)

pytestmark = pytest.mark.anyio

EPOCH = "e1"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _registry(tmp_path: Path, path: Path) -> KernelRecords:
    registry = KernelRegistry(tmp_path / "registry")
    now = time.time()
    entry = KernelEntry(
        notebook_path=str(path), kernelspec="python3", cwd=str(path.parent), epoch=EPOCH,
        state="idle", started=now, started_by="test", idle_since=now, idle_timeout=60.0,
        keep=True,
    )  # fmt: skip
    with registry.locked(path):
        registry.write(entry)
    return registry


def _ledger(tmp_path: Path, path: Path) -> KernelRecords:
    ledger = ServerLedger("http://127.0.0.1:1/", root=tmp_path / "ledger")
    ledger.adopt(path, "k-1", None, EPOCH)
    return ledger


def _memory(tmp_path: Path, path: Path) -> KernelRecords:
    records = MemoryRecords()
    records.start(path, EPOCH)
    return records


STORES = [
    pytest.param(_registry, id="registry"),
    pytest.param(_ledger, id="ledger"),
    pytest.param(_memory, id="memory"),
]


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[KernelRecords, Path]:
    make: Callable[[Path, Path], KernelRecords] = request.param
    path = (tmp_path / "nb.ipynb").resolve()
    return make(tmp_path, path), path


def run(key: str, epoch: str = EPOCH) -> dict[str, object]:
    return {"key": key, "rev": "r", "epoch": epoch, "parents": [], "ok": True}


def test_a_stop_record_counts_only_for_its_epoch_and_from_its_time(
    store: tuple[KernelRecords, Path],
) -> None:
    records, path = store
    before = time.time()
    records.record_interrupt(path, EPOCH, "j-cli pid 5", "kernel_interrupted")
    asked = records.interrupt_since(path, EPOCH, before)
    assert asked is not None and (asked["who"], asked["reason"]) == (
        "j-cli pid 5", "kernel_interrupted",
    )  # fmt: skip
    assert records.interrupt_since(path, "e2", before) is None
    assert records.interrupt_since(path, EPOCH, time.time() + 1) is None
    records.record_interrupt(path, "other", "j-cli pid 6", "kernel_interrupted")  # not ours
    assert records.interrupt_since(path, EPOCH, before) == asked


def test_runs_and_changes_share_one_sequence_and_changes_stay_bounded(
    store: tuple[KernelRecords, Path],
) -> None:
    records, path = store
    first = records.record_execution(path, run("a"))
    change = records.record_change(path, {"epoch": EPOCH, "names": ["b"], "cause": "c"})
    again = records.record_execution(path, run("a"))
    assert first < change < again
    assert [(r["key"], r["seq"]) for r in records.executions(path)] == [("a", again)]
    for _ in range(MAX_CHANGES + 5):
        records.record_change(path, {"epoch": EPOCH, "names": ["b"], "cause": "c"})
    entry = records.read(path)
    assert entry is not None and entry.epoch == EPOCH and len(entry.changes) == MAX_CHANGES
    assert records.holds(path)


def test_a_run_log_on_shared_records_sees_another_processes_runs(
    store: tuple[KernelRecords, Path],
) -> None:
    records, path = store
    mine, theirs = SharedExecutionLog(records, path), SharedExecutionLog(records, path)
    theirs.record("a", "r1", EPOCH, 1, (), ok=True)
    assert [r.key for r in mine.records()] == ["a"]
    stamp = mine.stamp()
    theirs.record_change(EPOCH, 2, None, "inline code")
    assert [c.cause for c in mine.changes()] == ["inline code"] and mine.stamp() != stamp


async def test_a_stop_another_process_recorded_ends_the_running_cell_interrupted(
    tmp_path: Path,
) -> None:
    records = MemoryRecords()
    path = (tmp_path / "nb.ipynb").resolve()
    records.start(path, EPOCH)

    def asked_elsewhere(b: FakeBackend, msg_id: str, code: str) -> None:
        # another process records its interrupt, then the kernel stops the cell
        records.record_interrupt(path, EPOCH, "j-cli pid 7", "kernel_interrupted")
        b.emit(message("error", msg_id, ename="KeyboardInterrupt", evalue="", traceback=[]))
        b.finish(msg_id, status="error", ename="KeyboardInterrupt", evalue="")

    def backend() -> FakeBackend:
        return FakeBackend(asked_elsewhere, origin=KernelOrigin(epoch=EPOCH))

    kernel = NotebookKernel(path, backend_factory=backend, records=records)
    with anyio.fail_after(10):
        result = await kernel.execute("import time; time.sleep(60)")
        await kernel.shutdown(now=True)
    assert (result.status, result.interrupted_by) == ("interrupted", "kernel_interrupted")
    assert result.interrupt_requested_by == "j-cli pid 7"


async def test_an_interrupt_is_recorded_for_the_other_processes_on_the_kernel(
    tmp_path: Path,
) -> None:
    records = MemoryRecords()
    path = (tmp_path / "nb.ipynb").resolve()
    factory = partial(python_backend, origin=KernelOrigin(epoch=EPOCH))
    kernel = NotebookKernel(path, backend_factory=factory, records=records)
    records.start(path, EPOCH)
    before = time.time()
    with anyio.fail_after(10):
        assert (await kernel.execute("x = 1")).status == "ok"
        await kernel.interrupt()
        await kernel.shutdown(now=True)
    asked = records.interrupt_since(path, EPOCH, before)
    assert asked is not None and asked["reason"] == "kernel_interrupted"
