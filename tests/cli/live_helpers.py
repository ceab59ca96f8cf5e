"""Helpers of the command-line tests that drive real ``j-cli`` processes on a live kernel:
run a command to its end, start one to signal it, wait until it holds the kernel.

Imported by the test modules of this folder as ``live_helpers``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from jupyter_jcli.kernels import KernelRegistry

TIMEOUT = 120.0
"""Seconds any one command may take (a kernel start included, on a loaded machine)."""
SIGINT_AS_ON_A_TERMINAL = (
    "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
)
"""Ctrl-C raises KeyboardInterrupt in the child, as in a terminal (a child started from a
background job may inherit SIGINT ignored)."""
LANE = SIGINT_AS_ON_A_TERMINAL + (
    "import sys\nsys.argv[0] = 'j-cli'\nfrom jupyter_jcli.cli import main\nmain()\n"
)
"""The ``j-cli`` console script's entry point (``jupyter_jcli.cli:main``)."""
CLICK = SIGINT_AS_ON_A_TERMINAL + (
    "import runpy\nrunpy.run_module('jupyter_jcli', run_name='__main__', alter_sys=True)\n"
)
"""``python -m jupyter_jcli``: the click application alone."""


def jcli(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m jupyter_jcli ARGS`` (the click application), to its end."""
    return subprocess.run(
        [sys.executable, "-m", "jupyter_jcli", *map(str, args)], capture_output=True,
        text=True, encoding="utf-8", cwd=cwd, timeout=TIMEOUT, check=False,
    )  # fmt: skip


def one_document(stdout: str) -> dict[str, Any]:
    assert stdout.count("\n") == 1, stdout
    document: dict[str, Any] = json.loads(stdout)
    return document


def start(path: Path) -> None:
    done = jcli(path.parent, "-j", "kernel", "start", path)
    assert done.returncode == 0, done.stdout + done.stderr


def stop(path: Path) -> None:
    jcli(path.parent, "-j", "kernel", "stop", path)


def spawn(script: str, cwd: Path, *args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, encoding="utf-8", cwd=cwd,
    )  # fmt: skip


def wait_running(path: Path) -> None:
    """Until the registry says code runs on the notebook's kernel, then a moment more (so
    what it printed first has reached the command)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        entry = KernelRegistry().read(path.resolve())
        if entry is not None and entry.busy:
            time.sleep(1.5)
            return
        time.sleep(0.05)
    raise AssertionError("the exec never held the kernel")


def finish(child: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        out, _err = child.communicate(timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=TIMEOUT)
    return child.returncode, out
