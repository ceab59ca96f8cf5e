"""``j-cli -j exec NB --code ...`` on a live kernel, through the console script: the answer
(inline, or saved as run outputs), the guarantees (the execution lock, the run log's
staleness records, Ctrl-C), a kernel killed from outside replaced and said so. Every command
is a real process."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from jcli_helpers import never_run_notebook as notebook

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.kernels import KernelRegistry

pytestmark = pytest.mark.kernel

TIMEOUT = 120.0
"""Seconds any one command may take (a kernel start included, on a loaded machine)."""
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
    "AAAABJRU5ErkJggg=="
)


def _run(argv: list[str], cwd: Path) -> tuple[int, str]:
    done = subprocess.run(
        argv, capture_output=True, text=True, encoding="utf-8", cwd=cwd, timeout=TIMEOUT,
        check=False,
    )  # fmt: skip
    return done.returncode, done.stdout


def click_path(cwd: Path, *args: str | Path) -> tuple[int, str]:
    """``j-cli`` through ``python -m jupyter_jcli``."""
    return _run([sys.executable, "-m", "jupyter_jcli", *map(str, args)], cwd)


def script(cwd: Path, *args: str | Path) -> tuple[int, str]:
    """``j-cli`` through the venv's console script."""
    return _run([str(Path(sys.executable).parent / "j-cli"), *map(str, args)], cwd)


def masked(stdout: str) -> dict[str, Any]:
    """The answer without what differs between two runs of the same code: durations,
    execution counts, run ids, who ran it, retention counts."""
    assert stdout.count("\n") == 1, stdout
    text = re.sub(r'"duration_s":[0-9.e-]+', '"duration_s":0', stdout)
    text = re.sub(r'"execution_count":[0-9]+', '"execution_count":0', text)
    text = re.sub(r"\[[0-9]+\]", "[0]", text)
    text = re.sub(r"exec by [^(']+ pid [0-9]+", "exec by WHO", text)
    document: dict[str, Any] = json.loads(text)
    if document.get("run_id"):
        text = text.replace(document["run_id"], "RUN")
        document = json.loads(text)
    if isinstance(document.get("retention"), dict):
        document["retention"] = sorted(document["retention"])
    return document


def start(path: Path) -> str:
    code, out = click_path(path.parent, "-j", "kernel", "start", path)
    assert code == 0, out
    epoch: str = json.loads(out)["kernel"]["epoch"]
    return epoch


def stop(path: Path) -> None:
    click_path(path.parent, "-j", "kernel", "stop", path)


def test_long_and_rich_results_of_an_exec_are_saved_as_run_outputs(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    try:
        status, out = script(tmp_path, "-j", "exec", path, "--code", "print('y' * 5000)")
    finally:
        stop(path)
    answer = json.loads(out)
    assert status == 0
    assert not answer.get("inline")  # saved: the answer names the manifest instead
    assert Path(answer["output_manifest"]).is_file()
    assert Path(answer["output_manifest"]).is_relative_to(tmp_path / ".j-cli" / "outputs")


def test_code_an_exec_runs_stales_the_cells_it_overwrote_for_later_commands(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1", "y = x + 1", "z = 3"])
    start(path)
    try:
        code, out = click_path(tmp_path, "-j", "run", path)
        assert code == 0, out
        status, served = script(tmp_path, "-j", "exec", path, "--code", "x = 5")
        code, rerun = click_path(tmp_path, "-j", "run", path, "--stale")
        clicked = click_path(tmp_path, "-j", "exec", path, "--code", "x = 5")
    finally:
        stop(path)
    effect = json.loads(served)["effect"]
    assert status == 0
    assert effect["names"] == ["x"]
    assert effect["stale"] == ["x", "y"]  # the cell x came from, and the one using it
    ran = [c["name"] for c in json.loads(rerun)["run"]["cells"] if c["status"] != "skipped"]
    assert code == 0
    assert ran == ["x", "y"]
    assert clicked[0] == status
    assert masked(clicked[1]) == masked(served)


def reap(child: subprocess.Popen[bytes]) -> None:
    """Kill ``child`` if it still runs (a failed test) and collect it, bounded."""
    if child.poll() is None:
        child.kill()
        child.communicate(timeout=TIMEOUT)


def _wait_busy(registry: KernelRegistry, path: Path, mark: Path | None = None) -> None:
    """Until the registry says busy and, given ``mark``, the code has created it (the busy
    record comes just before the ``execute_request`` is sent)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        entry = registry.read(path.resolve())
        if entry is not None and entry.busy and (mark is None or mark.exists()):
            return
        time.sleep(0.05)
    raise AssertionError("the first exec never held the kernel")


def test_an_exec_is_refused_with_kernel_busy_while_another_exec_holds_the_kernel(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    done = tmp_path / "done"  # the holder runs until both refusals are in (at most 120 s)
    hold = (
        "import os, time\ndeadline = time.monotonic() + 120\n"
        f"while not os.path.exists({str(done)!r}) and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", "-j", "exec", str(path), "--code", hold],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
    )  # fmt: skip
    try:
        _wait_busy(KernelRegistry(), path)
        served = script(tmp_path, "-j", "exec", path, "--code", "x")
        clicked = click_path(tmp_path, "-j", "exec", path, "--code", "x")
        done.touch()
        holder.communicate(timeout=TIMEOUT)
    finally:
        reap(holder)
        stop(path)
    assert holder.returncode == 0
    assert served[0] == clicked[0] == 1
    assert json.loads(served[1])["code"] == ErrorCode.KERNEL_BUSY
    assert masked(served[1]) == masked(clicked[1])


def test_ctrl_c_on_an_exec_interrupts_the_kernel_and_lets_it_go(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    handler = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
    entry = "import sys\nsys.argv[0] = 'j-cli'\nfrom jupyter_jcli.cli import main\nmain()\n"
    mark = tmp_path / "running"
    child = subprocess.Popen(  # Ctrl-C raises KeyboardInterrupt (as on a terminal)
        [sys.executable, "-c", handler + entry, "-j", "exec", str(path), "--code",
         f"open({str(mark)!r}, 'w').close()\nimport time\ntime.sleep(300)"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
    )  # fmt: skip
    try:
        _wait_busy(KernelRegistry(), path, mark)
        child.send_signal(signal.SIGINT)
        child.communicate(timeout=TIMEOUT)
        after = script(tmp_path, "-j", "exec", path, "--code", "6 * 7")  # not still sleeping
    finally:
        reap(child)
        stop(path)
    assert child.returncode == 130
    assert after[0] == 0
    assert json.loads(after[1])["outputs"][0]["data"]["text/plain"] == ["42"]


def test_a_kernel_killed_from_outside_is_replaced_and_the_exec_says_so(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1"])
    epoch = start(path)
    entry = KernelRegistry().read(path.resolve())
    assert entry is not None and entry.pid is not None
    os.kill(entry.pid, signal.SIGKILL)
    try:
        code, out = script(tmp_path, "-j", "exec", path, "--code", "print(1)")
    finally:
        stop(path)
    answer = json.loads(out)
    assert code == 0
    assert answer["run"]["kernel_restarted"] is True
    assert answer["run"]["replaced_epoch"] == epoch
