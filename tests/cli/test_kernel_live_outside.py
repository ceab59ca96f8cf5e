"""Live kernels changed from outside a command: inline code that overwrites the cells'
variables, an interrupt or a restart asked by another command while a run runs, a kernel
killed with ``kill -9`` between commands. Each command is a real ``j-cli`` process on a real
ipykernel, as an agent's shell runs them (helpers shared with ``test_kernel_live``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_kernel_live import (
    TIMEOUT,
    gone,
    jcli,
    jcli_json,
    names,
    notebook,
    ran,
    running_cell,
    start,
    wait_until,
)

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.kernels import KernelRegistry

pytestmark = pytest.mark.kernel

LOOP = "import time\nprint('started', flush=True)\ntime.sleep(60)\ndone = 1"


@pytest.fixture
def stopped_after(tmp_path: Path) -> Iterator[None]:
    """Every kernel the test left running is stopped at its end."""
    yield
    jcli("kernel", "stop", "--all")


def statuses(path: Path) -> dict[str, dict[str, Any]]:
    """The code cells of the overview ``jupyter-mcp`` answers (a workbench on the registry,
    in this process: not the one that ran the code), by name."""
    import anyio

    from jupyter_jcli.workbench import shared_workbench

    async def overview() -> dict[str, Any]:
        async with shared_workbench() as workbench:
            with anyio.fail_after(TIMEOUT):
                return (await workbench.notebook_overview(path)).to_dict()

    cells = anyio.run(overview)["cells"]
    return {cell["name"]: cell for cell in cells if cell["cell_type"] == "code"}


def test_exec_that_rebinds_a_name_stales_the_cells_that_made_it_for_every_later_command(
    tmp_path: Path, stopped_after: None
) -> None:
    path = notebook(tmp_path, ["a = 1", "b = a + 1", "print(b)", "c = 10"])
    first, second, third, fourth = names(path)
    start(path)
    assert jcli_json("run", path, "--stale")[0] == 0
    status, looked = jcli_json("exec", path, "--code", "print(b, a)\nb")
    assert status == 0 and {c["status"] for c in statuses(path).values()} == {"fresh"}

    status, wrote = jcli_json("exec", path, "--code", "b = -1")
    seen = statuses(path)  # another process: the registry's run log says it
    assert status == 0 and [seen[n]["status"] for n in (first, second, third, fourth)] == [
        "fresh", "stale", "stale", "fresh",
    ]  # fmt: skip
    assert wrote["effect"]["names"] == ["b"] and wrote["effect"]["stale"] == [second, third]
    assert seen[second]["stale_cause"] == wrote["effect"]["cause"]
    assert "stale_cause" not in seen[first]
    status, rerun = jcli_json("run", path, "--stale")
    assert status == 0 and ran(rerun) == [second, third]
    assert rerun["run"]["cells"][1]["outputs"]["text"].endswith("2\n")
    assert {c["status"] for c in statuses(path).values()} == {"fresh"}
    assert "stale" not in looked.get("effect", {})  # it wrote nothing: no effect


def test_exec_the_analyzer_cannot_see_through_stales_every_cell(
    tmp_path: Path, stopped_after: None
) -> None:
    path = notebook(tmp_path, ["a = 1", "b = a + 1"])
    start(path)
    assert jcli_json("run", path, "--stale")[0] == 0
    status, wrote = jcli_json("exec", path, "--code", "globals()['a'] = 5")
    assert status == 0 and {c["status"] for c in statuses(path).values()} == {"stale"}
    assert "names" not in wrote["effect"] and wrote["effect"]["opaque"]  # any name
    status, rerun = jcli_json("run", path, "--stale")
    assert status == 0 and ran(rerun) == names(path)


def stopped_from_outside(tmp_path: Path, *command: str) -> dict[str, Any]:
    """``j-cli -j run`` of a notebook whose second cell loops, with ``j-cli kernel COMMAND``
    run by another process while that cell runs; the run's document."""
    _status, out = run_stopped_from_outside(tmp_path, "-j", *command)
    document: dict[str, Any] = json.loads(out)
    return document


def run_stopped_from_outside(tmp_path: Path, mode: str, *command: str) -> tuple[int, str]:
    """As :func:`stopped_from_outside`, the run in ``mode`` (``-j`` or ``--no-json``): its
    exit status and output."""
    path = notebook(tmp_path, ["a = 1", LOOP, "after = 2"])
    _first, looping, _after = names(path)
    start(path)
    flags = ["-j"] if mode == "-j" else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", *flags, "run", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: running_cell(path) == looping, TIMEOUT)
        status, asked = jcli_json("kernel", *command, path)
        assert status == 0, asked
        out, _err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out


def test_an_interrupt_from_another_command_ends_the_running_cell_interrupted(
    tmp_path: Path, stopped_after: None
) -> None:
    document = stopped_from_outside(tmp_path, "interrupt")
    cell = document["run"]["cells"][1]
    assert [c["status"] for c in document["run"]["cells"]] == ["ok", "interrupted", "skipped"]
    assert cell["interrupted_by"] == "kernel_interrupted"
    (entry,) = KernelRegistry().entries()  # the kernel and its variables are kept
    assert entry.state == "idle" and entry.interrupt is not None
    assert cell["interrupt_requested_by"] == entry.interrupt["who"]


def test_a_restart_from_another_command_ends_the_running_cell_by_the_restart(
    tmp_path: Path, stopped_after: None
) -> None:
    document = stopped_from_outside(tmp_path, "restart")
    cells = document["run"]["cells"]
    assert [c["status"] for c in cells] == ["ok", "interrupted", "skipped"]
    assert cells[1]["interrupted_by"] == "kernel_restarted" and cells[1]["interrupt_requested_by"]
    assert document["run"]["error"]["code"] == ErrorCode.KERNEL_RESTARTED


def test_a_stop_from_another_command_ends_the_running_cell_by_the_stop_and_saves_it(
    tmp_path: Path, stopped_after: None
) -> None:
    document = stopped_from_outside(tmp_path, "stop")
    cells = document["run"]["cells"]
    assert [c["status"] for c in cells] == ["ok", "interrupted", "skipped"]
    assert cells[1]["interrupted_by"] == "kernel_shutdown"
    assert " pid " in str(cells[1]["interrupt_requested_by"])
    assert "started" in cells[1]["outputs"]["text"]  # what it printed is saved
    saved = json.loads((tmp_path / "nb.ipynb").read_text(encoding="utf-8"))
    assert saved["cells"][1]["outputs"][0]["text"] == ["started\n"]
    assert KernelRegistry().entries() == []  # and the kernel is stopped


def test_exec_on_a_kernel_killed_between_commands_says_it_was_replaced(
    tmp_path: Path, stopped_after: None
) -> None:
    path = notebook(tmp_path, ["a = 1"])
    assert jcli_json("run", path, "--keep")[0] == 0
    (entry,) = KernelRegistry().entries()
    assert entry.pid is not None
    os.kill(entry.pid, signal.SIGKILL)
    assert wait_until(lambda: gone(entry.pid), 10)
    status, document = jcli_json("exec", path, "--code", "print('alive')")
    assert status == 0, document
    assert document["run"]["kernel_restarted"] is True
    assert document["run"]["replaced_epoch"] == entry.epoch
    assert document["run"]["epoch"] != entry.epoch and document["notice"]


def test_the_replacement_of_a_kept_kernel_killed_from_outside_is_kept_for_the_next_command(
    tmp_path: Path, stopped_after: None
) -> None:
    path = notebook(tmp_path, ["a = 1"])
    start(path, "--idle-timeout", "120")
    (entry,) = KernelRegistry().entries()
    assert entry.pid is not None
    os.kill(entry.pid, signal.SIGKILL)
    assert wait_until(lambda: gone(entry.pid), 10)
    status, document = jcli_json("exec", path, "--code", "x = 1")
    assert status == 0, document
    assert document["run"]["replaced_epoch"] == entry.epoch
    assert document["run"]["replacement_kept"] is True
    status, listed = jcli_json("kernel", "list")
    (kept,) = listed["kernels"]
    assert kept["notebook_path"] == str(path.resolve()) and kept["keep"] is True
    assert kept["state"] == "idle" and kept["epoch"] == document["run"]["epoch"]
    assert kept["idle_timeout_s"] == 120
    status, printed = jcli_json("exec", path, "--code", "print(x)")
    assert status == 0, printed
    assert "kernel_restarted" not in printed["run"]  # false: left out
    assert printed["outputs"][0]["text"] == ["1\n"]


def test_cli_overview_shows_each_cells_status_and_stale_cause_as_the_mcp_overview_does(
    tmp_path: Path, stopped_after: None
) -> None:
    path = notebook(tmp_path, ["a = 1", "b = a + 1", "c = 10"])
    first, second, third = names(path)
    start(path)
    assert jcli_json("run", path, "--stale")[0] == 0
    status, wrote = jcli_json("exec", path, "--code", "b = -1")
    assert status == 0 and wrote["effect"]["stale"] == [second]
    status, shown = jcli_json("notebook", "overview", path)
    assert status == 0
    cells = {c["name"]: c for c in shown["cells"] if c["cell_type"] == "code"}
    mcp = statuses(path)
    assert [cells[n]["status"] for n in (first, second, third)] == ["fresh", "stale", "fresh"]
    assert {n: (c["status"], c.get("stale_cause")) for n, c in cells.items()} == {
        n: (c["status"], c.get("stale_cause")) for n, c in mcp.items()
    }
    assert cells[second]["stale_cause"] == wrote["effect"]["cause"]
    assert shown["kernel"]["epoch"] == wrote["run"]["epoch"]
    text = jcli("notebook", "overview", path).stdout.splitlines()
    header = text[1].split()
    row = next(line.split() for line in text[2:] if line.split()[1:2] == [second])
    assert row[header.index("status")] == "stale"
    assert f"  `{second}` is stale: {wrote['effect']['cause']}" in text


def test_a_run_an_interrupt_from_another_command_stopped_exits_interrupted_not_failed(
    tmp_path: Path, stopped_after: None
) -> None:
    status, out = run_stopped_from_outside(tmp_path, "-j", "interrupt")
    document = json.loads(out)
    _first, looping, after = (c["name"] for c in document["run"]["cells"])
    shown = {c["name"]: c.get("status") for c in document["overview"]["cells"]}
    assert status == 130 and "error" not in document["run"]
    assert shown[looping] == "interrupted" and shown[after] == "never_run"
    path = Path(document["overview"]["notebook_path"])
    assert statuses(path)[looping]["status"] == "interrupted"  # every process judges so


def test_the_text_summary_of_a_run_interrupted_from_outside_says_by_whom(
    tmp_path: Path, stopped_after: None
) -> None:
    status, out = run_stopped_from_outside(tmp_path, "text", "interrupt")
    (entry,) = KernelRegistry().entries()
    assert status == 130 and entry.interrupt is not None
    summary = next(line for line in out.splitlines() if line.startswith("interrupted: "))
    pid = entry.interrupt["who"].rsplit(" ", 1)[1]  # the asking command, by its command line
    assert f"`{entry.interrupt['command']}` (pid {pid}, ended)" in summary


def test_a_session_that_used_a_kept_kernel_killed_from_outside_replaces_it_with_a_kept_one(
    tmp_path: Path, stopped_after: None
) -> None:
    """The ``jupyter-mcp`` side: a session (a workbench on the registry, not keeping what it
    starts) that ran a cell on a kept kernel, then saw it killed, keeps the replacement."""
    import anyio

    from jupyter_jcli.workbench import shared_workbench

    path = notebook(tmp_path, ["a = 1"])
    (first,) = names(path)
    start(path, "--idle-timeout", "90")
    (entry,) = KernelRegistry().entries()

    async def session() -> bool:
        async with shared_workbench() as workbench:
            with anyio.fail_after(TIMEOUT):
                assert (await workbench.execute_cells(path, [first])).ok
                assert entry.pid is not None
                os.kill(entry.pid, signal.SIGKILL)
                while not gone(entry.pid):
                    await anyio.sleep(0.1)
                again = await workbench.execute_cells(path, [first])
                return again.ok and again.kernel_restarted

    assert anyio.run(session)
    (kept,) = KernelRegistry().entries()  # the session has ended: the kernel stays
    assert kept.epoch != entry.epoch and kept.keep and kept.idle_timeout == 90


def test_a_kept_kernel_killed_while_a_run_uses_it_is_replaced_by_a_kept_one_next_command(
    tmp_path: Path, stopped_after: None
) -> None:
    path = notebook(tmp_path, ["a = 1", LOOP])
    _first, looping = names(path)
    start(path, "--idle-timeout", "120")
    (entry,) = KernelRegistry().entries()
    assert entry.pid is not None
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", "-j", "run", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: running_cell(path) == looping, TIMEOUT)
        os.kill(entry.pid, signal.SIGKILL)
        out, _err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1
    assert json.loads(out)["run"]["error"]["code"] == ErrorCode.KERNEL_DIED
    status, document = jcli_json("exec", path, "--code", "u = 3")
    assert status == 0, document
    assert document["run"]["kernel_restarted"] is True
    assert document["run"]["replaced_epoch"] == entry.epoch
    assert document["run"]["replacement_kept"] is True
    status, listed = jcli_json("kernel", "list")
    (kept,) = listed["kernels"]
    assert kept["keep"] is True and kept["idle_timeout_s"] == 120
    status, printed = jcli_json("exec", path, "--code", "print(u)")
    assert status == 0, printed
    assert printed["outputs"][0]["text"] == ["3\n"]


@pytest.mark.parametrize("lane", ["j-cli", "python -m jupyter_jcli"])
def test_exec_an_interrupt_from_another_command_stopped_exits_interrupted_as_run_does(
    tmp_path: Path, stopped_after: None, lane: str
) -> None:
    path = notebook(tmp_path, ["a = 1"])
    start(path)
    program = (
        [str(Path(sys.executable).with_name("j-cli"))]
        if lane == "j-cli"
        else [sys.executable, "-m", "jupyter_jcli"]
    )
    started = tmp_path / "started"  # the code runs: an interrupt now stops it
    code = f"open({str(started)!r}, 'w').close()\n{LOOP}"
    proc = subprocess.Popen(
        [*program, "-j", "exec", str(path), "--code", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(started.exists, TIMEOUT)
        status, asked = jcli_json("kernel", "interrupt", path)
        assert status == 0, asked
        out, _err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    document = json.loads(out)
    assert document["run"]["status"] == "interrupted"
    assert document["run"]["interrupt_requested_by"]
    assert proc.returncode == 130
