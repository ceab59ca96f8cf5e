"""The kernel registry without kernels: entries, liveness, locks, the shared run log."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, JcliError, KernelError
from jupyter_jcli.kernels import IDLE_TIMEOUT_ENV, KernelEntry, KernelRegistry, idle_timeout
from jupyter_jcli.kernels._busy import busy_record
from jupyter_jcli.kernels._registry import ExecLock
from jupyter_jcli.workbench import SharedExecutionLog


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def entry(notebook: Path, *, pid: int, supervisor: int, epoch: str = "e1") -> KernelEntry:
    now = time.time()
    return KernelEntry(
        notebook_path=str(notebook),
        kernelspec="python3",
        cwd=str(notebook.parent),
        epoch=epoch,
        state="idle",
        started=now,
        started_by="test pid 1",
        idle_since=now,
        idle_timeout=60.0,
        keep=True,
        pid=pid,
        supervisor_pid=supervisor,
    )


def test_an_entry_whose_kernel_died_is_removed_and_its_runs_never_count(tmp_path: Path) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    with registry.locked(notebook):
        registry.write(entry(notebook, pid=dead_pid(), supervisor=dead_pid()))
    record = {"key": "a", "rev": "r1", "epoch": "e1", "parents": [], "ok": True}
    assert registry.record_execution(notebook, record) == 1
    assert [r.key for r in SharedExecutionLog(registry, notebook).records()] == ["a"]
    assert registry.live(notebook) is None
    assert registry.read(notebook) is None and registry.entries() == []
    assert SharedExecutionLog(registry, notebook).records() == []


def test_a_live_entry_is_listed_and_records_runs_of_its_own_epoch_only(tmp_path: Path) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with registry.locked(notebook):
            registry.write(entry(notebook, pid=sleeper.pid, supervisor=sleeper.pid))
        assert [e.epoch for e in registry.entries()] == ["e1"]
        other = {"key": "a", "rev": "r1", "epoch": "old", "parents": [], "ok": True}
        assert registry.record_execution(notebook, other) == -1
        mine = {**other, "epoch": "e1"}
        assert registry.record_execution(notebook, mine) == 1
        assert registry.record_execution(notebook, {**mine, "rev": "r2"}) == 2
        (kept,) = SharedExecutionLog(registry, notebook).records()
        assert (kept.rev, kept.seq, kept.epoch) == ("r2", 2, "e1")
    finally:
        sleeper.kill()
        sleeper.wait(timeout=30)
    assert registry.live(notebook) is None


def test_an_unreadable_entry_reads_as_none(tmp_path: Path) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    registry.root.mkdir()
    registry.path(notebook, ".json").write_text("{not json", encoding="utf-8")
    assert registry.read(notebook) is None and registry.entries() == []


def test_the_entry_lock_is_exclusive_and_bounded(tmp_path: Path) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    with (
        registry.locked(notebook),
        pytest.raises(KernelError) as caught,
        registry.locked(notebook, timeout=0.2),
    ):
        pass
    assert caught.value.code == ErrorCode.KERNEL_BUSY
    with registry.locked(notebook, timeout=0.2):
        pass


def test_the_execution_lock_has_one_holder_and_a_dead_holder_releases_it(tmp_path: Path) -> None:
    path = tmp_path / "registry" / "k.exec"
    first, second = ExecLock(path), ExecLock(path)
    assert first.try_acquire() and not second.try_acquire() and second.taken_elsewhere()
    first.release()
    assert not second.taken_elsewhere() and second.try_acquire()
    second.release()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         f"fd = os.open({str(path)!r}, os.O_RDWR)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert first.taken_elsewhere()
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert first.try_acquire()
    first.release()


def test_the_idle_timeout_comes_from_the_option_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(IDLE_TIMEOUT_ENV, raising=False)
    assert idle_timeout() == 3600.0 and idle_timeout(5) == 5.0
    monkeypatch.setenv(IDLE_TIMEOUT_ENV, "7.5")
    assert idle_timeout() == 7.5
    for bad in ("0", "-1", "soon", "inf"):
        monkeypatch.setenv(IDLE_TIMEOUT_ENV, bad)
        with pytest.raises(JcliError) as caught:
            idle_timeout()
        assert caught.value.code == ErrorCode.USAGE_ERROR


def test_a_busy_record_with_its_user_is_one_write_and_clearing_it_lets_the_user_go(
    tmp_path: Path,
) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    with registry.locked(notebook):
        registry.write(entry(notebook, pid=os.getpid(), supervisor=os.getpid()))
    writes: list[str] = []
    real_write = registry.write

    def counted(stored: KernelEntry) -> None:
        writes.append(stored.state)
        real_write(stored)

    registry.write = counted  # type: ignore[method-assign]
    me = f"test pid {os.getpid()}"
    registry.set_busy(notebook, "e1", busy_record(None), user=me)
    busy = registry.read(notebook)
    assert busy is not None and busy.state == "busy" and me in busy.users
    assert busy.busy is not None and busy.busy["pid"] == os.getpid()
    registry.set_busy(notebook, "e1", None, user=me)
    idle = registry.read(notebook)
    assert idle is not None and (idle.state, idle.busy, idle.users) == ("idle", None, {})
    assert writes == ["busy", "idle"]


def test_clearing_leaves_the_busy_record_of_a_killed_command_but_lets_the_user_go(
    tmp_path: Path,
) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    killed = {**busy_record(None), "pid": dead_pid()}
    with registry.locked(notebook):
        stored = entry(notebook, pid=os.getpid(), supervisor=os.getpid())
        stored.busy, stored.state = killed, "busy"
        registry.write(stored)
    me = f"test pid {os.getpid()}"
    registry.touch_user(notebook, "e1", me, present=True)
    registry.set_busy(notebook, "e1", None, user=me)
    after = registry.read(notebook)
    assert after is not None and after.busy == killed and after.state == "busy"
    assert me not in after.users
