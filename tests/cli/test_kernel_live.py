"""Live kernels across ``j-cli`` processes: ``j-cli kernel …`` and ``j-cli run`` on the
notebook's registered kernel (each command a real process, as an agent's shell runs it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jcli_helpers import never_run_notebook as notebook

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.kernels import KernelRegistry

pytestmark = pytest.mark.kernel

TIMEOUT = 120.0
"""Seconds any one command may take (kernel start included, on a loaded machine)."""


def names(path: Path) -> list[str]:
    from jupyter_jcli.notebook.document import Document

    return [view.name for view in Document.load(path).cells]


def rev(path: Path, name: str) -> str:
    from jupyter_jcli.notebook.document import Document

    return Document.load(path).cell(name).rev


def jcli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_jcli", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        check=False,
    )


def jcli_json(*args: str | Path) -> tuple[int, dict[str, Any]]:
    done = jcli("-j", *args)
    assert done.stdout.count("\n") == 1, done.stdout + done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, document


def start(path: Path, *options: str) -> dict[str, Any]:
    """``j-cli -j kernel start PATH OPTIONS``'s answer, which must succeed (else the failure
    shows the error document, with the kernel's reason)."""
    status, document = jcli_json("kernel", "start", path, *options)
    assert status == 0, document
    return document


def ran(document: dict[str, Any]) -> list[str]:
    cells = document["run"].get("cells", [])  # none ran: left out of the -j run answer
    return [c["name"] for c in cells if c["status"] != "skipped"]


def gone(pid: int | None) -> bool:
    from jupyter_jcli.kernels._registry import pid_alive

    return not pid_alive(pid)


def running_cell(path: Path) -> str | None:
    """The cell the registry says runs on the notebook's kernel now."""
    entry = KernelRegistry().read(path)
    return (entry.busy or {}).get("cell") if entry is not None else None


def wait_until(check: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return bool(check())


def test_a_started_kernel_outlives_commands_and_run_stale_runs_only_the_stale_set(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["a = 1", "b = a + 1", "c = 10", "print(b, c)"])
    first, second, third, fourth = names(path)
    status, started = jcli_json("kernel", "start", path)
    assert status == 0 and started["started"] is True
    pid = started["kernel"]["pid"]
    status, whole = jcli_json("run", path, "--stale")
    assert status == 0 and ran(whole) == [first, second, third, fourth]
    assert whole["run"]["kernel"]["pid"] == pid and not whole["run"].get("kernel_started")

    source = tmp_path / "new.py"
    source.write_text("c = 20\n", encoding="utf-8")
    edit = jcli("cell", "update", path, third, "--expected-rev", rev(path, third),
                "--source-file", source)  # fmt: skip
    assert edit.returncode == 0, edit.stderr
    status, stale = jcli_json("run", path, "--stale")
    assert status == 0 and ran(stale) == [third, fourth]
    assert stale["run"]["cells"][1]["outputs"]["text"].endswith("2 20\n")
    assert {c["status"] for c in stale["overview"]["cells"]} == {"fresh"}
    status, again = jcli_json("run", path, "--stale")
    assert status == 0 and ran(again) == []
    before = path.read_bytes()
    status, scratch = jcli_json("exec", path, "--code", "print(b * c)")
    assert status == 0 and scratch["outputs"][0]["text"] == ["40\n"]  # the live kernel's state
    assert scratch["run"]["epoch"] == started["kernel"]["epoch"] and path.read_bytes() == before

    status, listing = jcli_json("kernel", "list")
    (entry,) = listing["kernels"]
    assert entry["notebook_path"] == str(path.resolve()) and entry["pid"] == pid
    assert entry["state"] == "idle" and entry["epoch"] == started["kernel"]["epoch"]
    status, stopped = jcli_json("kernel", "stop", path)
    assert status == 0 and [e["pid"] for e in stopped["stopped"]] == [pid]
    assert wait_until(lambda: gone(pid), 10)
    assert jcli_json("kernel", "list")[1]["kernels"] == []
    status, error = jcli_json("kernel", "stop", path)
    assert status == 1 and error["code"] == ErrorCode.KERNEL_NOT_RUNNING


def test_a_run_without_a_live_kernel_starts_one_for_itself_unless_keep(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["x = 1"])
    status, once = jcli_json("run", path)
    assert status == 0 and wait_until(lambda: gone(once["run"]["kernel"]["pid"]), 10)
    assert KernelRegistry().entries() == []
    status, kept = jcli_json("run", path, "--keep")
    assert status == 0
    (entry,) = KernelRegistry().entries()
    assert entry.pid == kept["run"]["kernel"]["pid"] and entry.keep
    status, again = jcli_json("run", path, "--stale")
    assert status == 0 and ran(again) == []


def test_two_commands_at_once_on_one_notebook_never_both_run(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["import time\ntime.sleep(4)\nslow = 1", "fast = 2"])
    slow, fast = names(path)
    start(path)
    first = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", "-j", "run", str(path), "--cell", slow],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: running_cell(path) == slow, TIMEOUT)
        status, refused = jcli_json("run", path, "--cell", fast)
        assert status == 1 and refused["code"] == ErrorCode.KERNEL_BUSY
        assert refused["details"]["running_cell"] == slow
        out, _err = first.communicate(timeout=TIMEOUT)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0 and ran(json.loads(out)) == [slow]
    saved = nbformat.read(path, as_version=4)
    assert [c.execution_count for c in saved.cells] == [1, None]


def test_a_command_told_to_wait_runs_after_the_other_one_ends(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["import time\ntime.sleep(3)\nslow = 1", "after = slow + 1"])
    slow, after = names(path)
    start(path)
    first = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", "-j", "run", str(path), "--cell", slow],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: running_cell(path) == slow, TIMEOUT)
        status, waited = jcli_json("run", path, "--cell", after, "--only", "--wait", "60")
        out, _err = first.communicate(timeout=TIMEOUT)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0 and ran(json.loads(out)) == [slow]
    assert status == 0 and ran(waited) == [after]  # it saw `slow`: it ran after, not beside
    assert waited["run"].get("not_fresh_parents", []) == []
    saved = nbformat.read(path, as_version=4)
    assert [c.execution_count for c in saved.cells] == [1, 2]


def test_a_kernel_killed_between_commands_is_detected_and_nothing_stays_fresh(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["a = 1", "b = a + 1"])
    assert jcli_json("run", path, "--keep")[0] == 0
    (entry,) = KernelRegistry().entries()
    assert entry.pid is not None
    os.kill(entry.pid, signal.SIGKILL)
    assert wait_until(lambda: gone(entry.pid), 10)
    status, rerun = jcli_json("run", path, "--stale")
    assert status == 0 and ran(rerun) == names(path)
    assert rerun["run"]["epoch"] != entry.epoch and rerun["run"]["kernel_started"]
    # the lost kernel was kept (--keep), so its replacement is kept too (issue 11)
    (kept,) = KernelRegistry().entries()
    assert kept.epoch == rerun["run"]["epoch"] and kept.keep


def test_an_idle_kernel_stops_by_itself_after_its_idle_timeout(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["a = 1"])
    status, started = jcli_json("kernel", "start", path, "--idle-timeout", "2")
    assert status == 0 and started["kernel"]["idle_timeout_s"] == 2
    pid = started["kernel"]["pid"]
    assert wait_until(lambda: KernelRegistry().read(path) is None and gone(pid), 30)


def test_run_cell_runs_its_stale_ancestors_first_and_only_says_they_were_not_fresh(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["a = 1", "unrelated = 0", "b = a + 1", "print(b)"])
    first, _unrelated, second, last = names(path)
    status, only = jcli_json("run", path, "--cell", last, "--only", "--keep")
    assert status == 1 and ran(only) == [last]
    assert only["run"]["cells"][0]["ename"] == "NameError"
    assert only["run"]["not_fresh_parents"] == [first, second]
    status, full = jcli_json("run", path, "--cell", last)
    assert status == 0 and ran(full) == [first, second, last]
    assert full["run"]["parents_run"] == [first, second]
    assert full["run"]["cells"][2]["outputs"]["text"].endswith("2\n")
    status, again = jcli_json("run", path, "--cell", last)
    assert status == 0 and ran(again) == [last] and again["run"].get("parents_run", []) == []


def test_sigint_during_run_interrupts_the_kernel_and_saves_what_arrived(tmp_path: Path) -> None:
    loop = "import time\nprint('started', flush=True)\ntime.sleep(60)\ndone = 1"
    path = notebook(tmp_path, ["a = 1", loop, "after = 2"])
    _first, looping, _after = names(path)
    start(path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", "-j", "run", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: running_cell(path) == looping, TIMEOUT)
        time.sleep(1.0)  # let 'started' reach the command
        proc.send_signal(signal.SIGINT)
        out, _err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    document = json.loads(out)
    statuses = [c["status"] for c in document["run"]["cells"]]
    assert statuses == ["ok", "interrupted", "skipped"] and document["run"]["interrupted"]
    saved = nbformat.read(path, as_version=4)
    assert "started" in "".join(saved.cells[1].outputs[0]["text"])
    (entry,) = KernelRegistry().entries()  # the kernel and its variables are kept
    assert entry.state == "idle"


def test_kernel_restart_gives_a_new_kernel_on_which_every_cell_is_stale(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["a = 1", "b = a + 1"])
    status, started = jcli_json("kernel", "start", path)
    assert status == 0 and jcli_json("run", path)[0] == 0
    status, restarted = jcli_json("kernel", "restart", path)
    assert status == 0
    assert restarted["kernel"]["epoch"] != started["kernel"]["epoch"]
    assert restarted["kernel"]["pid"] != started["kernel"]["pid"] and restarted["kernel"]["keep"]
    assert wait_until(lambda: gone(started["kernel"]["pid"]), 10)
    assert jcli_json("kernel", "interrupt", path)[0] == 0
    status, rerun = jcli_json("run", path, "--stale")
    assert status == 0 and ran(rerun) == names(path)
    assert rerun["run"]["kernel"]["pid"] == restarted["kernel"]["pid"]
