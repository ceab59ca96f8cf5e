"""``j-cli run --wait S`` while code a killed command left running still runs on the kernel:
text mode says on stderr what it waits on (the cell, the command that ended, how to stop
its code); ``-j`` still writes one document only. Real processes on a real ipykernel kernel."""

from __future__ import annotations

from pathlib import Path

import pytest
from jcli_helpers import never_run_notebook as notebook
from live_helpers import CLICK, finish, jcli, one_document, spawn, start, stop, wait_running

pytestmark = pytest.mark.kernel

SLEEPER = "import time\nprint('start', flush=True)\ntime.sleep(120)"
"""A cell that prints, then sleeps far longer than the test waits."""


def test_a_run_waiting_on_code_a_killed_command_left_running_says_what_it_waits_on(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["p = 1", SLEEPER])
    start(path)
    try:
        killed = spawn(CLICK, tmp_path, "-j", "run", path, "--cell", "1")
        wait_running(path)
        killed.kill()  # SIGKILL: it cannot let the kernel go nor clear its record
        finish(killed)
        text = jcli(tmp_path, "run", path, "--cell", "0", "--only", "--wait", "1")
        json_run = jcli(tmp_path, "-j", "run", path, "--cell", "0", "--only", "--wait", "1")
    finally:
        jcli(tmp_path, "kernel", "interrupt", path)
        stop(path)
    (waiting,) = [line for line in text.stderr.splitlines() if line.startswith("waiting ")]
    assert waiting.startswith("waiting up to 1 s for the kernel: it runs the cell `")
    assert f"(pid {killed.pid}, ended)" in waiting
    assert f"j-cli kernel interrupt {path}" in waiting
    assert text.returncode == 1 and "KERNEL_BUSY" in text.stderr
    refused = one_document(json_run.stdout)  # one document, nothing else on stdout
    assert json_run.returncode == 1 and refused["code"] == "KERNEL_BUSY"
    assert refused["details"]["busy_gone"] is True
    assert not any(line.startswith("waiting ") for line in json_run.stderr.splitlines())


def test_a_run_with_nothing_running_on_the_kernel_says_nothing_about_waiting(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["p = 1"])
    start(path)
    try:
        done = jcli(tmp_path, "run", path, "--wait", "5")
    finally:
        stop(path)
    assert done.returncode == 0, done.stderr
    assert not any(line.startswith("waiting ") for line in done.stderr.splitlines())
