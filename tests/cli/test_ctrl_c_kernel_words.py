"""What Ctrl-C on ``j-cli run`` / ``j-cli exec`` says about the kernel's variables: kept when
the kernel outlives the command (a live kernel it joined), gone when the kernel was started
for the command and stopped at its end (it used to say "the kernel keeps its variables"
either way). Real processes on real kernels."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from jcli_helpers import never_run_notebook as notebook
from live_helpers import CLICK, finish, spawn, start, stop, wait_running

pytestmark = pytest.mark.kernel

SLEEPER = "print('started', flush=True)\nimport time\ntime.sleep(120)"
KEPT = "the kernel keeps its variables"


def ctrl_c(path: Path, *args: str) -> tuple[int, str]:
    """Run ``j-cli ARGS`` (text mode), Ctrl-C it once the code runs on NB's kernel."""
    child = spawn(CLICK, path.parent, *args)
    try:
        wait_running(path)
        child.send_signal(signal.SIGINT)
    finally:
        status, out = finish(child)
    return status, out


@pytest.mark.parametrize("command", ["run", "exec"])
def test_ctrl_c_on_a_kernel_started_for_the_command_does_not_say_it_keeps_its_variables(
    tmp_path: Path, command: str
) -> None:
    path = notebook(tmp_path, [SLEEPER])
    args = ("run", str(path)) if command == "run" else ("exec", str(path), "--code", SLEEPER)

    status, out = ctrl_c(path, *args)

    assert status == 130 and "interrupted" in out
    assert KEPT not in out


@pytest.mark.parametrize("command", ["run", "exec"])
def test_ctrl_c_on_a_live_kernel_says_it_keeps_its_variables(tmp_path: Path, command: str) -> None:
    path = notebook(tmp_path, [SLEEPER])
    args = ("run", str(path)) if command == "run" else ("exec", str(path), "--code", SLEEPER)
    start(path)
    try:
        status, out = ctrl_c(path, *args)
    finally:
        stop(path)

    assert status == 130 and KEPT in out
