"""``j-cli exec`` on a live kernel when it is stopped: Ctrl-C on the command itself (the
console script and ``python -m`` alike), an interrupt asked by another command, and what
the answer says about the kernel and about who did what. Every command is a real process on a
real ipykernel kernel."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from jcli_helpers import never_run_notebook as notebook
from live_helpers import (
    CLICK,
    LANE,
    finish,
    jcli,
    one_document,
    spawn,
    start,
    stop,
    wait_running,
)

from jupyter_jcli.kernels import KernelRegistry

pytestmark = pytest.mark.kernel

SLEEPER = "print('started', flush=True)\nimport time\ntime.sleep(120)\nprint('never')"
"""Code that prints, then sleeps far longer than any test waits."""


def ctrl_c(script: str, path: Path, *args: str) -> tuple[int, str]:
    """Run ``exec`` on NB's live kernel with ``script``, Ctrl-C it while the code sleeps."""
    child = spawn(script, path.parent, *args, "exec", path, "--code", SLEEPER)
    try:
        wait_running(path)
        child.send_signal(signal.SIGINT)
    finally:
        status, out = finish(child)
    return status, out


def streamed(document: dict[str, Any]) -> str:
    return "".join("".join(o["text"]) for o in document["outputs"] if o["output_type"] == "stream")


@pytest.mark.parametrize("script", [LANE, CLICK], ids=["lane", "click"])
def test_ctrl_c_on_exec_interrupts_the_kernel_and_answers_what_the_code_printed(
    tmp_path: Path, script: str
) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    try:
        status, out = ctrl_c(script, path, "-j")
        after = jcli(tmp_path, "-j", "exec", path, "--code", "6 * 7")  # not still sleeping
    finally:
        stop(path)
    document = one_document(out)
    assert status == 130
    assert document["run"]["status"] == "interrupted"
    assert document["run"]["interrupted_by"] == "kernel_interrupted"
    assert "interrupt_requested_by" not in document["run"]  # null: this command's own Ctrl-C
    assert document["inline"] is True and streamed(document) == "started\n"
    assert document["kernel"]["state"] == "idle"
    assert after.returncode == 0
    assert one_document(after.stdout)["outputs"][0]["data"]["text/plain"] == ["42"]


def test_ctrl_c_on_exec_in_text_mode_says_what_stopped_the_code_and_shows_its_output(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    try:
        status, out = ctrl_c(LANE, path)  # text mode: served by the click command
    finally:
        stop(path)
    assert status == 130
    head = out.splitlines()[0]
    assert "interrupted by Ctrl-C on the kernel of" in head and "KeyboardInterrupt" in head
    shown = [line.strip() for line in out.splitlines()]
    assert "started" in shown and "never" not in shown


@pytest.mark.parametrize("script", [LANE, CLICK], ids=["lane", "click"])
def test_the_kernel_block_of_an_exec_says_the_kernel_is_idle_after_the_code(
    tmp_path: Path, script: str
) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    try:
        child = spawn(script, tmp_path, "-j", "exec", path, "--code", "6 * 7")
        status, out = finish(child)
    finally:
        stop(path)
    assert status == 0
    assert one_document(out)["kernel"]["state"] == "idle"


def test_an_interrupt_from_another_command_is_named_by_that_command_in_exec_and_run(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, [SLEEPER])
    start(path)
    try:
        child = spawn(CLICK, tmp_path, "-j", "exec", path, "--code", SLEEPER)
        wait_running(path)
        asked = jcli(tmp_path, "kernel", "interrupt", path)
        status, out = finish(child)
        runner = spawn(CLICK, tmp_path, "run", path)  # text mode
        wait_running(path)
        jcli(tmp_path, "kernel", "interrupt", path)
        ran_status, ran = finish(runner)
    finally:
        stop(path)
    assert asked.returncode == 0
    run = one_document(out)["run"]
    assert status == 130 and run["interrupted_by"] == "kernel_interrupted"
    assert run["interrupt_requested_by"].startswith("python -m jupyter_jcli pid ")
    assert run["interrupt_requested_command"].startswith("python -m jupyter_jcli kernel interrupt ")
    pid = run["interrupt_requested_by"].rsplit(" ", 1)[1]
    named = f"interrupted by `python -m jupyter_jcli kernel interrupt {path}` (pid "
    assert ran_status == 130
    assert named in ran and ", ended)" in ran
    assert f"(pid {pid}, ended)" not in ran  # the second interrupt, not the first


def test_under_python_m_the_who_fields_name_the_command_not_its_main_module(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1", "y = x + 1"])
    start(path)
    try:
        assert jcli(tmp_path, "-j", "run", path).returncode == 0
        done = jcli(tmp_path, "-j", "exec", path, "--code", "x = 5")
        entry = KernelRegistry().read(path.resolve())
    finally:
        stop(path)
    effect = one_document(done.stdout)["effect"]
    assert effect["cause"].startswith("exec by python -m jupyter_jcli pid ")
    assert entry is not None and entry.started_by.startswith("python -m jupyter_jcli pid ")
    assert "__main__" not in json.dumps(entry.to_dict())


def test_code_left_running_by_a_killed_exec_is_named_and_refused_not_queued_behind(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    try:
        assert jcli(tmp_path, "-j", "run", path).returncode == 0  # x is fresh
        killed = spawn(CLICK, tmp_path, "-j", "exec", path, "--code", SLEEPER)
        wait_running(path)
        killed.kill()  # SIGKILL: it cannot let the kernel go nor clear its record
        finish(killed)
        lane = finish(spawn(LANE, tmp_path, "-j", "exec", path, "--code", "6 * 7"))
        clicked = jcli(tmp_path, "-j", "exec", path, "--code", "6 * 7")
        stale = jcli(tmp_path, "-j", "run", path, "--stale")
        asked = jcli(tmp_path, "kernel", "interrupt", path)
        after = finish(spawn(LANE, tmp_path, "-j", "exec", path, "--code", "6 * 7"))
        rerun = jcli(tmp_path, "-j", "run", path, "--stale")
    finally:
        stop(path)
    for status, out in (lane, (clicked.returncode, clicked.stdout)):
        refused = one_document(out)
        assert status == 1 and refused["code"] == "KERNEL_BUSY"
        details = refused["details"]
        assert details["busy_gone"] is True and details["busy_pid"] == killed.pid
        assert details["running"] == "inline code"
        assert details["busy_command"].startswith("python -m jupyter_jcli -j exec ")
    assert one_document(stale.stdout)["code"] == "KERNEL_BUSY"  # run shares the cause
    assert asked.returncode == 0
    assert after[0] == 0
    assert one_document(after[1])["outputs"][0]["data"]["text/plain"] == ["42"]
    cells = one_document(rerun.stdout)["run"]["cells"]
    assert [c["status"] for c in cells] == ["ok"]  # x is not fresh: unknown code ran after it


def test_a_restart_from_another_command_names_that_command_in_the_runs_error(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, [SLEEPER])
    start(path)
    try:
        runner = spawn(CLICK, tmp_path, "-j", "run", path)
        wait_running(path)
        restarted = jcli(tmp_path, "kernel", "restart", path)
        status, out = finish(runner)
    finally:
        stop(path)
    assert restarted.returncode == 0
    error = one_document(out)["run"]["error"]
    assert status == 1 and error["code"] == "KERNEL_RESTARTED"
    assert f"restarted by `python -m jupyter_jcli kernel restart {path}` (pid " in error["message"]


STUBBORN = (
    "import time\nprint('started', flush=True)\nfor _ in range(120):\n"
    "    try:\n        time.sleep(0.5)\n    except KeyboardInterrupt:\n        pass\n"
)
"""Code that prints, then shrugs off interrupts for a minute: only a second Ctrl-C ends the
command."""


@pytest.mark.parametrize("script", [LANE, CLICK], ids=["lane", "click"])
def test_a_second_ctrl_c_under_json_still_answers_one_document_cancelled(
    tmp_path: Path, script: str
) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    try:
        child = spawn(script, tmp_path, "-j", "exec", path, "--code", STUBBORN)
        try:
            wait_running(path)
            child.send_signal(signal.SIGINT)  # interrupts the kernel; the code goes on
            time.sleep(1.0)
            child.send_signal(signal.SIGINT)  # gives up waiting
        finally:
            status, out = finish(child)
    finally:
        stop(path)
    assert status == 130
    document = one_document(out)
    assert (document["status"], document["code"]) == ("error", "CANCELLED")
