"""What the registry leaves behind (no kernels): users who exited, the files of a gone entry,
and lock files removed by their holder without ever letting two processes hold one lock."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from test_kernel_registry import dead_pid, entry

from jupyter_jcli.kernels import KernelRegistry
from jupyter_jcli.kernels._registry import ExecLock


def registered(
    tmp_path: Path, users: dict[str, float] | None = None
) -> tuple[KernelRegistry, Path]:
    """A registry with one entry, whose kernel is this process (alive)."""
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    stored = entry(notebook, pid=os.getpid(), supervisor=os.getpid())
    stored.users = dict(users or {})
    with registry.locked(notebook):
        registry.write(stored)
    return registry, notebook


def fds_on(path: Path) -> int:
    """How many of this process's descriptors are open on ``path`` (Linux)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith(str(path))
        except OSError:
            continue
    return count


def test_users_whose_process_has_ended_are_dropped_when_the_entry_is_read(
    tmp_path: Path,
) -> None:
    gone, here = f"j-cli pid {dead_pid()}", f"jupyter-mcp pid {os.getpid()}"
    registry, notebook = registered(tmp_path, {gone: 1.0, here: 2.0})
    stored = registry.read(notebook)
    assert stored is not None and list(stored.users) == [here]
    assert [list(e.users) for e in registry.entries()] == [[here]]


def test_a_removed_entry_leaves_no_lock_execution_or_log_file(tmp_path: Path) -> None:
    registry, notebook = registered(tmp_path)
    execution = ExecLock(registry.path(notebook, ".exec"))
    assert execution.try_acquire()
    execution.release()
    registry.path(notebook, ".log").write_bytes(b"kernel output\n")
    assert registry.remove(notebook)
    assert list(registry.root.iterdir()) == []


def test_an_execution_lock_someone_holds_survives_the_entry_and_still_excludes(
    tmp_path: Path,
) -> None:
    registry, notebook = registered(tmp_path)
    holder = ExecLock(registry.path(notebook, ".exec"))
    assert holder.try_acquire()
    try:
        assert registry.remove(notebook)
        assert registry.path(notebook, ".exec").exists()
        assert not ExecLock(registry.path(notebook, ".exec")).try_acquire()
    finally:
        holder.release()
    registry.sweep()  # the files of a gone entry, once nobody holds them
    assert list(registry.root.iterdir()) == []


def test_files_left_by_a_dead_process_are_swept_when_kernels_are_listed(tmp_path: Path) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    registry.root.mkdir()
    for suffix in (".lock", ".exec", ".log"):
        registry.path(notebook, suffix).write_bytes(b"")
    assert registry.entries() == []
    assert list(registry.root.iterdir()) == []


def test_a_lock_file_removed_by_its_holder_never_has_two_holders(tmp_path: Path) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    lock = registry.path(notebook, ".lock")
    held = threading.Event()
    leave = threading.Event()

    def waiter() -> None:
        with registry.locked(notebook, timeout=30.0):
            held.set()
            leave.wait(30.0)

    with registry.locked(notebook):
        thread = threading.Thread(target=waiter)
        thread.start()
        deadline = time.monotonic() + 30.0
        while fds_on(lock) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)  # the waiter has the file open and waits for its lock
        assert fds_on(lock) == 2
        lock.unlink()  # what a holder that leaves no entry does, last, before letting go
    try:
        assert held.wait(30.0)
        refused: list[bool] = []

        def third() -> None:
            try:
                with registry.locked(notebook, timeout=0.3):
                    refused.append(False)
            except Exception:
                refused.append(True)

        intruder = threading.Thread(target=third)
        intruder.start()
        intruder.join(30.0)
        assert refused == [True]  # the waiter holds the lock at the path, not a removed file
    finally:
        leave.set()
        thread.join(30.0)


def test_the_command_line_an_entry_records_never_holds_a_token(monkeypatch: object) -> None:
    """What started a kernel or runs on it is recorded (and shown to whoever it stops) with
    the value of ``--token`` hidden, in both spellings."""
    import sys

    from jupyter_jcli.kernels._entry import process_command

    argv = ["j-cli", "run", "nb.ipynb", "--token", "s3cret-a", "--token=s3cret-b", "--keep"]
    monkeypatch.setattr(sys, "argv", argv)  # type: ignore[attr-defined]
    recorded = process_command()
    assert "s3cret" not in recorded
    assert recorded.endswith("run nb.ipynb --token *** --token=*** --keep")
