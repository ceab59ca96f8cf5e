"""What the live-kernel commands tell about a kernel's use: the ``KERNEL_BUSY`` refusal names
what runs on the kernel (the cell or inline code, the command, its pid, since when), and
``j-cli kernel list`` shows which command started a kernel and only the users that still run.
Real ``j-cli`` processes on a real ipykernel (helpers shared with ``test_kernel_live``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_kernel_live import (
    TIMEOUT,
    jcli,
    jcli_json,
    names,
    notebook,
    running_cell,
    start,
    wait_until,
)
from test_kernel_live_outside import LOOP

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.kernels import KernelRegistry

pytestmark = pytest.mark.kernel


def busy_with(path: Path, *command: str) -> tuple[subprocess.Popen[str], dict[str, object]]:
    """A ``j-cli -j COMMAND`` process busy on the notebook's kernel, and the details of the
    ``KERNEL_BUSY`` that an ``exec`` on the same notebook gets meanwhile."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", "-j", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: _state(path) == "busy", TIMEOUT)
        status, refused = jcli_json("exec", path, "--code", "1")
        assert status == 1 and refused["code"] == ErrorCode.KERNEL_BUSY, refused
        assert jcli_json("kernel", "interrupt", path)[0] == 0
        proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    details: dict[str, object] = refused["details"]
    return proc, details


def _state(path: Path) -> str | None:
    entry = KernelRegistry().read(path)
    return entry.state if entry is not None else None


def test_a_command_refused_as_busy_is_told_the_cell_command_pid_and_start_that_hold_the_kernel(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, [LOOP])
    (looping,) = names(path)
    start(path)
    proc, details = busy_with(path, "run", str(path))
    assert details["running_cell"] == looping and details["running"] == f"cell {looping}"
    assert details["busy_pid"] == proc.pid
    assert str(details["busy_by"]).endswith(f" pid {proc.pid}")
    command = str(details["busy_command"])
    assert " run " in f" {command} " and str(path) in command
    assert isinstance(details["busy_since"], str)


def test_a_command_refused_as_busy_is_told_inline_code_holds_the_kernel(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["a = 1"])
    start(path)
    proc, details = busy_with(path, "exec", str(path), "--code", LOOP)
    assert details["running_cell"] is None and details["running"] == "inline code"
    assert details["busy_pid"] == proc.pid
    assert running_cell(path) is None


def test_kernel_list_shows_the_command_that_started_a_kernel_and_only_users_that_still_run(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["a = 1"])
    start(path)
    (entry,) = KernelRegistry().entries()
    dead, alive = f"j-cli pid {_ended_pid()}", f"test pid {os.getpid()}"
    for who in (dead, alive):
        KernelRegistry().touch_user(path.resolve(), entry.epoch, who, present=True)
    status, listed = jcli_json("kernel", "list")
    (shown,) = listed["kernels"]
    assert status == 0 and shown["users"] == [alive]
    assert "kernel start" in shown["started_command"]
    assert shown["started_by"] == entry.started_by
    header, row = jcli("kernel", "list").stdout.splitlines()
    assert header.index("started by") < header.index("users")
    assert "kernel start" in row[header.index("started by") :] and dead not in row


def _ended_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=TIMEOUT)
    return proc.pid


def test_kernel_list_says_when_the_command_running_a_cell_was_killed(tmp_path: Path) -> None:
    path = notebook(tmp_path, [LOOP])
    (looping,) = names(path)
    start(path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", "-j", "run", str(path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert wait_until(lambda: _state(path) == "busy", TIMEOUT)
        status, listed = jcli_json("kernel", "list")
        (shown,) = listed["kernels"]
        assert status == 0 and shown["running_cell"] == looping and shown["busy_gone"] is False
    finally:
        proc.kill()
        proc.wait(timeout=TIMEOUT)
    status, listed = jcli_json("kernel", "list")
    (shown,) = listed["kernels"]
    assert status == 0 and shown["state"] == "busy" and shown["busy_gone"] is True
    assert jcli("kernel", "interrupt", path).returncode == 0
