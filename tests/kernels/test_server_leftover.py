"""A ``j-cli run --server-url`` killed (``kill -9``) while its cell runs on the notebook's
Jupyter Server kernel leaves that cell running there: the next command is refused at once with
``KERNEL_BUSY`` (``busy_gone``) instead of queuing behind it, ``kernel list`` names the cell,
and once the code is interrupted every cell run before reads ``stale`` with the cause. Real
``jupyter server`` (marker ``server``), real processes; every wait is bounded."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from test_server_kernel_cli import jcli, jcli_process, listed_kernel

from jupyter_jcli.errors import ErrorCode
from server_helpers import RunningServer, write_notebook

pytestmark = pytest.mark.server


def blocking_cell(started: Path, go: Path) -> str:
    """A cell that says it started, then waits for ``go`` (at most 90 s)."""
    return (
        "# block\nimport pathlib, time\n"
        f"pathlib.Path({str(started)!r}).touch()\n"
        "until = time.time() + 90\n"
        f"while not pathlib.Path({str(go)!r}).exists() and time.time() < until:\n"
        "    time.sleep(0.1)"
    )


def server_state(server: RunningServer, kernel_id: str) -> str:
    """The kernel's ``execution_state`` as the server reports it."""
    with server.client() as rest:
        answer = rest.get(f"api/kernels/{kernel_id}")
        answer.raise_for_status()
        return str(answer.json()["execution_state"])


def test_a_run_killed_mid_cell_leaves_the_next_run_refused_busy_gone_then_stale_cells(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    sources = ["a = 1", "b = a + 1", blocking_cell(started, go), "print(b)"]
    path = write_notebook(tmp_path, sources, name="killed")
    status, kept = jcli(jupyter_server, "kernel", "start", path)
    assert status == 0, kept
    kernel_id = kept["kernel"]["kernel_id"]
    try:
        status, before = jcli(jupyter_server, "run", path, "--cell", "b")  # a and b ran
        assert status == 0 and before["ok"] is True, before
        killed = jcli_process(jupyter_server, "run", path, "--cell", "block", "--only")
        deadline = time.monotonic() + 120.0
        while not started.exists():  # its block cell runs on the kernel
            assert time.monotonic() < deadline and killed.poll() is None
            time.sleep(0.1)
        killed.send_signal(signal.SIGKILL)  # it cannot clear its record nor let the kernel go
        killed.communicate(timeout=30)
        status, refused = jcli(jupyter_server, "run", path, "--cell", "print-b", "--only")
        assert (status, refused.get("code")) == (1, ErrorCode.KERNEL_BUSY.value), refused
        details = refused["details"]
        assert details["busy_gone"] is True and details["busy_pid"] == killed.pid
        assert details["running_cell"] == "block"
        assert details["busy_command"].startswith("python -m jupyter_jcli -j run ")
        assert not go.exists() and server_state(jupyter_server, kernel_id) == "busy"
        listed = listed_kernel(jupyter_server, path)  # the orphan still runs: it says so
        assert (listed["running_cell"], listed["busy_gone"]) == ("block", True)
        status, again = jcli(jupyter_server, "run", path, "--cell", "print-b", "--only")
        assert (status, again["details"]["busy_gone"]) == (1, True)  # refused as long as it runs
        status, interrupted = jcli(jupyter_server, "kernel", "interrupt", path)
        assert status == 0, interrupted
        status, ran = jcli(jupyter_server, "run", path, "--cell", "print-b", "--only")
    finally:
        go.touch()
        jcli(jupyter_server, "kernel", "stop", path)
    assert status == 0 and ran["ok"] is True, ran
    cells = {cell["name"]: cell for cell in ran["overview"]["cells"]}
    for name in ("a", "b"):  # ran before the killed run's cell: what that cell did is unknown
        assert cells[name]["status"] == "stale", cells[name]
        assert f"(pid {killed.pid}, ended)" in cells[name]["stale_cause"]


def test_a_cell_another_command_runs_is_named_by_kernel_list_and_by_the_refusal(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    path = write_notebook(tmp_path, ["a = 1", blocking_cell(started, go)], name="held")
    status, kept = jcli(jupyter_server, "kernel", "start", path)
    assert status == 0, kept
    try:
        running = jcli_process(jupyter_server, "run", path)  # a, then block
        deadline = time.monotonic() + 120.0
        while not started.exists():
            assert time.monotonic() < deadline and running.poll() is None
            time.sleep(0.1)
        listed = listed_kernel(jupyter_server, path)  # while the run holds the kernel
        assert listed["running_cell"] == "block" and listed["busy_gone"] is False, listed
        assert listed["epoch"] is not None, listed  # the run's (its records are written as it goes)
        status, refused = jcli(jupyter_server, "exec", path, "--code", "1")
        assert (status, refused.get("code")) == (1, ErrorCode.KERNEL_BUSY.value), refused
        details = refused["details"]
        assert (details["running_cell"], details["busy_pid"]) == ("block", running.pid)
        assert details["busy_command"].startswith("python -m jupyter_jcli -j run ")
        assert details["busy_since"] is not None and details["busy_gone"] is False
        go.touch()
        out, _ = running.communicate(timeout=120)
        assert running.returncode == 0, out
        after = listed_kernel(jupyter_server, path)
        assert (after["epoch"], after["runs"], after["running_cell"]) == (listed["epoch"], 2, None)
    finally:
        go.touch()
        jcli(jupyter_server, "kernel", "stop", path)
    listed_after = jcli(jupyter_server, "kernel", "list")[1]["kernels"]  # the server is shared
    assert [k for k in listed_after if k["notebook_path"] == str(path.resolve())] == []
