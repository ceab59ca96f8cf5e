"""A command waiting (``--wait``) for the kernel another command started for itself and is
about to stop, each command a real process: the waiter runs either on that kernel, kept for
it, or on its own once that one has gone; never ``KERNEL_START_FAILED``. Afterwards nothing
is left running or in the runtime folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_kernel_live import (
    TIMEOUT,
    gone,
    jcli_json,
    names,
    notebook,
    ran,
    running_cell,
    wait_until,
)

from jupyter_jcli.kernels import KernelRegistry

pytestmark = pytest.mark.kernel


def test_a_command_waiting_for_a_kernel_its_starter_stops_runs_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["import time\ntime.sleep(3)\nslow = 1", "other = 2"])
    slow, other = names(path)
    first = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", "-j", "run", str(path), "--cell", slow],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: running_cell(path) == slow, TIMEOUT)
        started = KernelRegistry().read(path)
        assert started is not None and not started.keep
        status, waited = jcli_json("run", path, "--cell", other, "--only", "--wait", "60")
        out, _err = first.communicate(timeout=TIMEOUT)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0 and ran(json.loads(out)) == [slow]
    assert status == 0, waited
    assert ran(waited) == [other]
    # both commands are done: the kernel started for the first one stops, its files go
    assert wait_until(lambda: KernelRegistry().entries() == [], 30)
    assert wait_until(lambda: gone(started.pid), 30)
    assert wait_until(lambda: list(KernelRegistry().root.iterdir()) == [], 30)
