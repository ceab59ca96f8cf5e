"""The click-free ``j-cli -j exec NB --code ...`` lane on a live kernel (``cli._fast_exec``):
the same JSON document and exit status as the click command, the same guarantees (the
execution lock, the run log's staleness records), and a hand-over to click, with nothing run,
whenever there is no live kernel to join. Every command is a real process."""

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

from jupyter_jcli.cli._fast_exec import fast_exec
from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.kernels import KernelRegistry

pytestmark = pytest.mark.kernel

TIMEOUT = 120.0
"""Seconds any one command may take (a kernel start included, on a loaded machine)."""
HANDED_OVER = 99
"""The lane child's exit status when the lane handed the command line to click."""
LANE = (
    "import sys\n"
    "from jupyter_jcli.cli._fast_exec import fast_exec\n"
    "served = fast_exec(sys.argv[1:])\n"
    "if served is None:\n"
    "    sys.exit(99)\n"
    "sys.stdout.buffer.write(served[1])\n"
    "sys.exit(served[0])\n"
)
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
    """``j-cli`` through the click application (``python -m jupyter_jcli``: no fast lane)."""
    return _run([sys.executable, "-m", "jupyter_jcli", *map(str, args)], cwd)


def lane(cwd: Path, *args: str | Path) -> tuple[int, str]:
    """``j-cli`` through the exec lane alone (exit :data:`HANDED_OVER` when it hands over)."""
    return _run([sys.executable, "-c", LANE, *map(str, args)], cwd)


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


ANSWER_CASES = [
    pytest.param("print('hello'); 6 * 7", id="text"),
    pytest.param("1 / 0", id="error"),
    pytest.param(
        "from IPython.display import Image, display; import base64\n"
        f"display(Image(data=base64.b64decode({PNG!r})))",
        id="image",
    ),
    pytest.param("print('line of text ' * 400)", id="long"),
]
"""Inline code whose answers two ways of running an exec must give alike: text, an error,
an image (saved as run outputs), long text (saved too)."""


@pytest.mark.parametrize("code", ANSWER_CASES)
def test_the_exec_lane_answers_exactly_as_the_click_command(tmp_path: Path, code: str) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    try:
        served = lane(tmp_path, "-j", "exec", path, "--code", code)
        clicked = click_path(tmp_path, "-j", "exec", path, "--code", code)
    finally:
        stop(path)
    assert served[0] != HANDED_OVER
    assert served[0] == clicked[0]
    assert masked(served[1]) == masked(clicked[1])


def test_long_and_rich_results_of_the_lane_are_saved_as_run_outputs(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    try:
        status, out = lane(tmp_path, "-j", "exec", path, "--code", "print('y' * 5000)")
    finally:
        stop(path)
    answer = json.loads(out)
    assert status == 0
    assert "inline" not in answer  # false: left out
    assert Path(answer["output_manifest"]).is_file()
    assert Path(answer["output_manifest"]).is_relative_to(tmp_path / ".j-cli" / "outputs")


def test_code_the_lane_runs_stales_the_cells_it_overwrote_for_later_commands(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1", "y = x + 1", "z = 3"])
    start(path)
    try:
        code, out = click_path(tmp_path, "-j", "run", path)
        assert code == 0, out
        status, served = lane(tmp_path, "-j", "exec", path, "--code", "x = 5")
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


def test_the_lane_is_refused_with_kernel_busy_while_another_exec_holds_the_kernel(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    holder = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", "-j", "exec", str(path), "--code",
         "import time; time.sleep(8)"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
    )  # fmt: skip
    try:
        _wait_busy(KernelRegistry(), path)
        served = lane(tmp_path, "-j", "exec", path, "--code", "x")
        clicked = click_path(tmp_path, "-j", "exec", path, "--code", "x")
        holder.communicate(timeout=TIMEOUT)
    finally:
        reap(holder)
        stop(path)
    assert holder.returncode == 0
    assert served[0] == clicked[0] == 1
    assert json.loads(served[1])["code"] == ErrorCode.KERNEL_BUSY
    assert masked(served[1]) == masked(clicked[1])


def test_ctrl_c_on_the_lane_interrupts_the_kernel_and_lets_it_go(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    handler = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
    mark = tmp_path / "running"
    child = subprocess.Popen(  # Ctrl-C raises KeyboardInterrupt (as on a terminal)
        [sys.executable, "-c", handler + LANE, "-j", "exec", str(path), "--code",
         f"open({str(mark)!r}, 'w').close()\nimport time\ntime.sleep(300)"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
    )  # fmt: skip
    try:
        _wait_busy(KernelRegistry(), path, mark)
        child.send_signal(signal.SIGINT)
        child.communicate(timeout=TIMEOUT)
        after = lane(tmp_path, "-j", "exec", path, "--code", "6 * 7")  # not still sleeping
    finally:
        reap(child)
        stop(path)
    assert child.returncode == 130
    assert after[0] == 0
    assert json.loads(after[1])["outputs"][0]["data"]["text/plain"] == ["42"]


def test_without_a_live_kernel_the_lane_hands_over_having_run_nothing(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["x = 1"])
    status, out = lane(tmp_path, "-j", "exec", path, "--code", "print(1)")
    assert status == HANDED_OVER
    assert out == ""
    assert KernelRegistry().read(path.resolve()) is None
    assert not (tmp_path / ".j-cli").exists()


def test_a_kernel_killed_from_outside_is_handed_over_and_replaced_as_the_click_command_says(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1"])
    epoch = start(path)
    entry = KernelRegistry().read(path.resolve())
    assert entry is not None and entry.pid is not None
    os.kill(entry.pid, signal.SIGKILL)
    try:
        status, _out = lane(tmp_path, "-j", "exec", path, "--code", "print(1)")
        code, out = _run([str(Path(sys.executable).parent / "j-cli"), "-j", "exec", str(path),
                          "--code", "print(1)"], tmp_path)  # fmt: skip
    finally:
        stop(path)
    assert status == HANDED_OVER
    answer = json.loads(out)
    assert code == 0
    assert answer["run"]["kernel_restarted"] is True
    assert answer["run"]["replaced_epoch"] == epoch


def test_the_exec_lane_imports_no_click_asyncio_anyio_or_zmq_asyncio(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    script = LANE.replace(
        "sys.exit(served[0])\n",
        "import json\nprint(json.dumps(sorted(sys.modules)))\nsys.exit(served[0])\n",
    )
    try:
        code, out = _run([sys.executable, "-c", script, "-j", "exec", str(path), "--code",
                          "x = 2"], tmp_path)  # fmt: skip
    finally:
        stop(path)
    assert code == 0
    modules = set(json.loads(out.splitlines()[-1]))
    assert "jupyter_jcli.kernels._wire" in modules  # it joined the kernel
    assert "jupyter_jcli.analysis._overwrites" in modules  # and recorded what x = 2 staled
    assert not modules & {"click", "asyncio", "anyio", "zmq.asyncio"}


OBSERVED_LANE = (
    "import json, sys\n"
    "import jupyter_jcli.kernels._registry as registry_module\n"
    "writes = []\n"
    "real_write = registry_module.KernelRegistry.write\n"
    "def counted(self, entry):\n"
    "    writes.append(entry.state)\n"
    "    real_write(self, entry)\n"
    "registry_module.KernelRegistry.write = counted\n"
    "from jupyter_jcli.cli._fast_exec import fast_exec\n"
    "served = fast_exec(sys.argv[1:])\n"
    "assert served is not None and served[0] == 0, served\n"
    "import gc\n"
    "collector = {'enabled': gc.isenabled(), 'frozen': gc.get_freeze_count()}\n"
    "print(json.dumps({'writes': writes, 'modules': sorted(sys.modules), 'gc': collector}))\n"
)
"""The lane, reporting the states of the registry entries it wrote, the modules it loaded
and the garbage collector's state after it answered."""


def _observed_lane(tmp_path: Path, code: str) -> dict[str, Any]:
    path = notebook(tmp_path, ["x = 1"])
    start(path)
    try:
        status, out = _run(
            [sys.executable, "-c", OBSERVED_LANE, "-j", "exec", str(path), "--code", code],
            tmp_path,
        )
    finally:
        stop(path)
    assert status == 0, out
    observed: dict[str, Any] = json.loads(out.splitlines()[-1])
    return observed


def test_the_exec_lane_writes_the_registry_entry_once_busy_and_once_idle(tmp_path: Path) -> None:
    # the busy record carries the user and its clearing lets the user go: joining and
    # leaving write nothing of their own
    # the busy record (with the user), what x = 2 staled (the run log), the clearing
    assert _observed_lane(tmp_path, "x = 2")["writes"] == ["busy", "busy", "idle"]


def test_the_lane_keeps_its_start_up_objects_from_the_garbage_collector(tmp_path: Path) -> None:
    # collections during the run walk only what the run allocated; collection is on again
    collector = _observed_lane(tmp_path, "print(6 * 7)")["gc"]
    assert collector["enabled"] is True
    assert collector["frozen"] > 1000


LANE_LOADS_NONE_OF = (
    "jupyter_jcli.outputs._read",  # the saved-output reads: the lane only writes JSON
    "jupyter_jcli.outputs._directory",
    "jupyter_jcli.outputs.manifest",  # saving a run folder: only for a rich or long result
    "jupyter_jcli.runs._store",
    "jupyter_jcli.analysis._render",  # the DAG as text
    "jupyter_jcli.analysis._lint",  # lint records: only for a cell that has one
    "jupyter_jcli.kernels._evaluation",  # a silent evaluation's results (inspection)
    "jupyter_jcli.notebook._edits",  # the edit and output-merge rules: exec never writes it
    "jupyter_jcli.notebook._outputs",
    "jupyter_jcli.kernels._server_ledger",  # the run log of a Jupyter Server kernel
)


def test_an_exec_answered_inline_loads_neither_the_output_reads_nor_the_run_saving(
    tmp_path: Path,
) -> None:
    modules = set(_observed_lane(tmp_path, "print(6 * 7)")["modules"])
    assert "jupyter_jcli.kernels._wire" in modules  # it joined the kernel
    assert not modules & set(LANE_LOADS_NONE_OF)


@pytest.mark.parametrize(
    "argv",
    [
        ["exec", "nb.ipynb", "--code", "1"],  # text mode
        ["-j", "exec", "nb.ipynb", "--code-file", "x.py"],
        ["-j", "exec", "nb.ipynb", "--code", "1", "--code", "2"],
        ["-j", "exec", "nb.ipynb", "--code", "1", "--kernel", "python3"],
        ["-j", "exec", "nb.ipynb", "--code", "1", "--timeout", "1e3"],
        ["-j", "exec", "nb.ipynb", "--code", "-1"],
        ["-j", "exec", "nb.ipynb", "--code"],
        ["-j", "exec", "--code", "1"],  # no notebook: a scratch kernel
        ["-j", "exec", "nb.ipynb", "--code", "1", "--help"],
        ["-j", "exec", "nb.ipynb", "--code", "1", "--server-url", "http://localhost:1"],
    ],
)
def test_command_lines_that_are_not_plain_execs_go_to_the_click_app(argv: list[str]) -> None:
    assert fast_exec(argv) is None
