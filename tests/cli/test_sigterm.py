"""SIGTERM (or SIGHUP) on a ``-j`` command that runs code on a live kernel (``exec`` through the
console script and ``python -m``, ``run``) ends it as a second Ctrl-C does: the kernel is
interrupted and let go, stdout holds one ``CANCELLED`` document and the exit status is 143
(129). Every
command is a real process on a real ipykernel kernel."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from jcli_helpers import never_run_notebook as notebook
from live_helpers import CLICK, LANE, TIMEOUT, finish, jcli, one_document, spawn, start, stop

from jupyter_jcli.kernels import KernelRegistry

pytestmark = pytest.mark.kernel


def _sleeper(marker: Path) -> str:
    """Code that makes ``marker`` once it runs, then sleeps far longer than any test waits."""
    return f"open({str(marker)!r}, 'w').close()\nimport time\ntime.sleep(120)"


def _wait_for(marker: Path) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not marker.exists():
        if time.monotonic() > deadline:
            raise AssertionError("the code never ran")
        time.sleep(0.05)
    time.sleep(0.5)  # the command is now waiting on the kernel


@pytest.mark.parametrize("kill", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
@pytest.mark.parametrize(
    ("script", "command"),
    [(LANE, "exec"), (CLICK, "exec"), (CLICK, "run")],
    ids=["lane-exec", "click-exec", "click-run"],
)
def test_sigterm_under_json_answers_one_cancelled_document_and_leaves_the_kernel_idle(
    tmp_path: Path, script: str, command: str, kill: signal.Signals
) -> None:
    """SIGHUP (a closed terminal, a dropped SSH session) is treated as SIGTERM."""
    marker = tmp_path / "running"
    code = _sleeper(marker)
    path = notebook(tmp_path, [code] if command == "run" else ["x = 1"])
    start(path)
    try:
        args = ("exec", path, "--code", code) if command == "exec" else ("run", path)
        child = spawn(script, tmp_path, "-j", *args)
        try:
            _wait_for(marker)
            child.send_signal(kill)
        finally:
            status, out = finish(child)
        entry = KernelRegistry().read(path.resolve())
        after = jcli(tmp_path, "-j", "exec", path, "--code", "6 * 7")  # not still sleeping
    finally:
        stop(path)
    assert status == 128 + kill
    document = one_document(out)
    assert (document["status"], document["code"]) == ("error", "CANCELLED")
    assert entry is not None and not entry.busy
    assert after.returncode == 0, after.stdout
    assert one_document(after.stdout)["outputs"][0]["data"]["text/plain"] == ["42"]
