"""Stops another process asks for (``j-cli kernel interrupt``, a restart), as the registry
records them, and the kernels' deaths it keeps: how the running request is classified, and
the registry records behind it (no kernel process: the fake backend and a registry folder).

The end-to-end paths through real ``j-cli`` processes are in
``tests/cli/test_kernel_live_outside.py``."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from jupyter_jcli.kernels import (
    AskedStop,
    KernelEntry,
    KernelRegistry,
    NotebookKernel,
)
from jupyter_jcli.kernels._records import MAX_CHANGES
from kernel_fakes import FakeBackend, message, one_after_another

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class AskedKernel(NotebookKernel):
    """A kernel whose "registry" says another process asked for ``asked`` since the
    request began."""

    asked: AskedStop | None = None

    def _asked_elsewhere(self, epoch: str, since: float) -> AskedStop | None:
        return self.asked


def keyboard_interrupt(b: FakeBackend, msg_id: str, code: str) -> None:
    b.emit(message("error", msg_id, ename="KeyboardInterrupt", evalue="", traceback=[]))
    b.finish(msg_id, status="error", ename="KeyboardInterrupt", evalue="")


def dies(b: FakeBackend, msg_id: str, code: str) -> None:
    b.die()


def kernel(tmp_path: Path, react: object) -> AskedKernel:
    backends = one_after_another(FakeBackend(react), FakeBackend(keyboard_interrupt))  # type: ignore[arg-type]
    return AskedKernel(tmp_path / "nb.ipynb", backend_factory=backends)


async def test_a_keyboard_interrupt_another_process_asked_for_ends_interrupted(
    tmp_path: Path,
) -> None:
    k = kernel(tmp_path, keyboard_interrupt)
    k.asked = AskedStop("kernel_interrupted", "j-cli pid 7")
    with anyio.fail_after(10):
        result = await k.execute("import time; time.sleep(60)")
    assert (result.status, result.interrupted_by) == ("interrupted", "kernel_interrupted")
    assert result.interrupt_requested_by == "j-cli pid 7" and result.ename == "KeyboardInterrupt"


async def test_a_keyboard_interrupt_nobody_asked_for_stays_an_error(tmp_path: Path) -> None:
    k = kernel(tmp_path, keyboard_interrupt)
    with anyio.fail_after(10):
        result = await k.execute("raise KeyboardInterrupt")
    assert (result.status, result.interrupted_by, result.interrupt_requested_by) == (
        "error", None, None,
    )  # fmt: skip


async def test_a_restart_from_another_process_that_took_the_kernel_ends_interrupted(
    tmp_path: Path,
) -> None:
    k = kernel(tmp_path, dies)
    k.asked = AskedStop("kernel_restarted", "j-cli pid 8")
    with anyio.fail_after(10):
        result = await k.execute("x")
    assert (result.status, result.interrupted_by) == ("interrupted", "kernel_restarted")


async def test_a_death_after_an_outside_interrupt_is_still_a_death(tmp_path: Path) -> None:
    k = kernel(tmp_path, dies)
    k.asked = AskedStop("kernel_interrupted", "j-cli pid 9")
    with anyio.fail_after(10):
        result = await k.execute("x")
    assert result.status == "died"


async def test_a_replaced_dead_kernel_names_the_epoch_it_lost(tmp_path: Path) -> None:
    k = kernel(tmp_path, dies)
    with anyio.fail_after(10):
        first = await k.execute("x")
        second = await k.execute("raise KeyboardInterrupt")
    assert first.status == "died"
    assert second.kernel_restarted and second.replaced_epoch == first.epoch != second.epoch


def entry(path: Path, epoch: str) -> KernelEntry:
    now = time.time()
    return KernelEntry(
        notebook_path=str(path), kernelspec="python3", cwd=str(path.parent), epoch=epoch,
        state="idle", started=now, started_by="test", idle_since=now, idle_timeout=60.0,
        keep=True,
    )  # fmt: skip


def test_an_interrupt_record_counts_only_for_its_epoch_and_from_its_time(tmp_path: Path) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    path = tmp_path / "nb.ipynb"
    with registry.locked(path):
        registry.write(entry(path, "e1"))
    before = time.time()
    registry.record_interrupt(path, "e1", "j-cli pid 5", "kernel_interrupted")
    asked = registry.interrupt_since(path, "e1", before)
    assert asked is not None and asked["who"] == "j-cli pid 5"
    assert registry.interrupt_since(path, "e2", before) is None
    assert registry.interrupt_since(path, "e1", time.time() + 1) is None
    registry.record_interrupt(path, "other", "j-cli pid 6", "kernel_interrupted")  # not ours
    assert registry.interrupt_since(path, "e1", before) == asked


def test_recorded_changes_share_the_run_sequence_and_stay_bounded(tmp_path: Path) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    path = tmp_path / "nb.ipynb"
    with registry.locked(path):
        registry.write(entry(path, "e1"))
    run = registry.record_execution(path, {"key": "a", "rev": "r", "epoch": "e1", "parents": [],
                                     "ok": True})  # fmt: skip
    change = registry.record_change(path, {"epoch": "e1", "names": ["b"], "cause": "c"})
    assert change == run + 1
    assert registry.record_change(path, {"epoch": "e2", "names": None, "cause": "c"}) == -1
    for _ in range(MAX_CHANGES + 5):
        registry.record_change(path, {"epoch": "e1", "names": ["b"], "cause": "c"})
    stored = registry.read(path)
    assert stored is not None and len(stored.changes) == MAX_CHANGES
    registry.record_change(path, {"epoch": "e1", "names": None, "cause": "all"})
    registry.record_change(path, {"epoch": "e1", "names": ["x"], "cause": "x"})
    stored = registry.read(path)
    assert stored is not None and [c["cause"] for c in stored.changes] == ["all", "x"]


def test_a_lost_kernel_is_told_once(tmp_path: Path) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    path = tmp_path / "nb.ipynb"
    assert registry.take_lost(path) is None
    registry.record_lost(path, "e1")
    assert registry.take_lost(path) == "e1"
    assert registry.take_lost(path) is None


@pytest.mark.parametrize("died", [True, False], ids=["died", "stop-asked"])
def test_a_command_that_finds_a_dead_kernels_entry_stopping_says_it_replaces_that_kernel(
    tmp_path: Path, died: bool
) -> None:
    """Between a kernel's death and the removal of its entry, its supervisor has noted the
    death (``.lost``) and marked the entry ``stopping``: a command coming then notes the
    kernel it will start as the dead one's replacement, as it does before and after. A stop
    that was asked (no ``.lost``) is no death."""
    from jupyter_jcli.kernels import RegistryKernel

    registry = KernelRegistry(tmp_path / "registry")
    path = (tmp_path / "nb.ipynb").resolve()
    stopping = entry(path, "e1")
    stopping.state = "stopping"
    with registry.locked(path):
        registry.write(stopping)
    if died:
        registry.record_lost(path, "e1", keep=True, idle_timeout=60.0)
    joiner = RegistryKernel(path, registry=registry)
    joiner._note_registered_death()
    assert joiner._dead is died
    assert joiner._epoch == ("e1" if died else None)
    assert registry.take_lost(path) is None  # taken once, by this command
