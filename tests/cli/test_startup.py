"""Start-up: the console script's fast lane answers as the click app does, and the execution
commands import nothing they do not use (no MCP SDK, Pillow or Anthropic SDK)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jcli_helpers import EXAMPLE, run_cli

from jupyter_jcli.cli._fast import fast_read

WELL_FORMED = [
    ["-j", "notebook", "outputs", str(EXAMPLE), "--cell", "18"],
    ["--json", "notebook", "outputs", str(EXAMPLE), "--cell=import-pandas"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "24", "--output", "0"],
    ["-j", "notebook", "output", "--cell", "18", str(EXAMPLE), "--output=0", "--mime=text/plain"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "28", "--output", "0", "--offset", "5",
     "--limit", "10"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "0",
     "--supported-mime", "text/plain,text/html", "--supported-mime", "image/png"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "7"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "no-such-cell", "--output", "0"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "0", "--mime", "x/y"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "0",
     "--supported-mime", "a,,b"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "0", "--offset", "-1"],
    ["-j", "notebook", "outputs", "/no/such/notebook.ipynb", "--cell", "0"],
]  # fmt: skip
FOR_CLICK = [
    ["notebook", "outputs", str(EXAMPLE), "--cell", "18"],  # text mode
    ["-j", "notebook", "outputs", str(EXAMPLE), "--cell", "18", "--help"],
    ["-j", "notebook", "outputs", str(EXAMPLE)],  # --cell missing
    ["-j", "notebook", "outputs", str(EXAMPLE), "--cell", "1", "--cell", "2"],
    ["-j", "notebook", "outputs", str(EXAMPLE), "--cell", " "],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "1.5"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "٣"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "18", "--output"],
    ["-j", "notebook", "output", str(EXAMPLE), "--cell", "24", "--output", "0", "--save", "x"],
    ["-j", "notebook", "output", str(EXAMPLE), str(EXAMPLE), "--cell", "18", "--output", "0"],
    ["-j", "notebook", "cells", str(EXAMPLE)],
    ["-j", "notebook", "outputs", "", "--cell", "0"],
    ["-j", "exec", "--code", "1"],
]  # fmt: skip


@pytest.mark.parametrize("argv", WELL_FORMED, ids=range(len(WELL_FORMED)))
def test_the_fast_lane_answers_exactly_as_the_click_app(argv: list[str]) -> None:
    served = fast_read(argv)
    assert served is not None
    status, out = served
    expected = run_cli(*argv)
    assert (status, out.decode("utf-8")) == (expected.exit_code, expected.stdout)


@pytest.mark.parametrize("argv", FOR_CLICK, ids=range(len(FOR_CLICK)))
def test_command_lines_that_are_not_plain_reads_go_to_the_click_app(argv: list[str]) -> None:
    assert fast_read(argv) is None


def _modules_after(code: str, cwd: Path) -> set[str]:
    """The top-level packages imported by ``code`` in a fresh interpreter (bounded wait)."""
    script = (
        code
        + "\nimport sys, json\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules: set[str] = set(json.loads(done.stdout.splitlines()[-1]))
    return modules


def test_the_fast_lane_imports_no_click(tmp_path: Path) -> None:
    argv = ["-j", "notebook", "output", str(EXAMPLE), "--cell", "24", "--output", "0"]
    modules = _modules_after(
        f"from jupyter_jcli.cli._fast import fast_read\nassert fast_read({argv!r})[0] == 0",
        tmp_path,
    )
    assert "jupyter_jcli" in modules
    assert not modules & {"click", "mcp", "PIL", "anthropic", "jupytext", "nbformat", "anyio"}


LANE_NEVER_IMPORTS = {
    # start-up cost without use: orjson's own import (it loads uuid, platform, datetime,
    # dataclasses) costs more than the standard library's parse of a 2 MB notebook
    "orjson", "dataclasses", "inspect", "uuid", "platform", "datetime", "ast",
    # the front ends and heavy libraries the reads never need
    "click", "asyncio", "anyio", "mcp", "PIL", "anthropic", "jupytext", "nbformat", "zmq",
}  # fmt: skip


@pytest.mark.parametrize(
    "argv",
    [
        ["-j", "notebook", "output", str(EXAMPLE), "--cell", "24", "--output", "0"],
        ["-j", "notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "0",
         "--mime", "text/plain", "--offset", "3", "--limit", "10"],
        ["-j", "notebook", "outputs", str(EXAMPLE), "--cell", "18"],
        ["-j", "notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "9"],  # an error
    ],
    ids=["image", "text-window", "directory", "error"],
)  # fmt: skip
def test_a_read_in_the_fast_lane_imports_only_what_reading_needs(
    tmp_path: Path, argv: list[str]
) -> None:
    script = (
        "import sys\nfrom jupyter_jcli.cli._fast import fast_read\n"
        f"served = fast_read({argv!r})\nassert served is not None\n"
        "import json\nprint(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
        timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    assert "jupyter_jcli.outputs._read" in modules or "jupyter_jcli.outputs._directory" in modules
    assert not {name.split(".")[0] for name in modules} & LANE_NEVER_IMPORTS


def test_the_exec_lanes_modules_import_no_front_end_sdk_or_event_loop(tmp_path: Path) -> None:
    """What the ``-j exec`` lane imports before it joins a kernel (its own module and the
    live-kernel operation it calls), without a kernel: no click, asyncio, anyio, MCP SDK,
    Pillow or Anthropic SDK."""
    modules = _modules_after(
        "import jupyter_jcli.cli._fast_exec, jupyter_jcli.workbench._inline_live", tmp_path
    )
    assert "jupyter_jcli" in modules
    assert not modules & {"click", "asyncio", "anyio", "mcp", "PIL", "anthropic", "jupytext"}


@pytest.mark.kernel
def test_exec_and_run_import_neither_the_mcp_sdk_nor_pillow_nor_anthropic(
    tmp_path: Path,
) -> None:
    notebook = tmp_path / "nb.ipynb"
    cells = [{"cell_type": "code", "id": "a", "metadata": {}, "source": "x = 1",
              "execution_count": None, "outputs": []}]  # fmt: skip
    notebook.write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), "utf-8"
    )
    code = (
        "import os\nos.environ['JUPYTER_JCLI_CACHE_DIR'] = 'cache'\n"
        "from jupyter_jcli.cli import run\n"
        "assert run(['-j', 'exec', '--code', 'print(1)']) == 0\n"
        "assert run(['-j', 'exec', 'nb.ipynb', '--code', 'print(2)']) == 0\n"
        "assert run(['-j', 'run', 'nb.ipynb', '--stale']) == 0\n"
    )
    modules = _modules_after(code, tmp_path)
    assert {"jupyter_client", "jupyter_jcli"} <= modules  # the kernels really ran
    assert not modules & {"mcp", "PIL", "anthropic"}


@pytest.mark.kernel
def test_exec_and_run_on_a_live_kernel_join_it_without_jupyter_client_or_psutil(
    tmp_path: Path,
) -> None:
    notebook = tmp_path / "nb.ipynb"
    cells = [{"cell_type": "code", "id": "a", "metadata": {}, "source": "x = 1",
              "execution_count": None, "outputs": []}]  # fmt: skip
    notebook.write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), "utf-8"
    )
    started = run_cli("-j", "kernel", "start", str(notebook))
    assert started.exit_code == 0, started.stdout
    try:
        code = (
            "import sys\nfrom jupyter_jcli.cli import run\n"
            f"assert run(['-j', 'exec', {str(notebook)!r}, '--code', 'x = 1']) == 0\n"
            f"assert run(['-j', 'run', {str(notebook)!r}, '--stale']) == 0\n"
            "assert 'jupyter_jcli.kernels._wire' in sys.modules  # it joined the kernel\n"
        )
        modules = _modules_after(code, tmp_path)
    finally:
        run_cli("-j", "kernel", "stop", str(notebook))
    heavy = {"jupyter_client", "traitlets", "tornado", "dateutil", "psutil"}
    assert not modules & heavy
    assert not modules & {"mcp", "PIL", "anthropic"}


def test_the_fast_lane_builds_no_dataclass(tmp_path: Path) -> None:
    # a dataclass generates and compiles its methods at import: the read's records are
    # NamedTuples, built without compiling
    argv = ["-j", "notebook", "output", str(EXAMPLE), "--cell", "24", "--output", "0"]
    code = (
        f"from jupyter_jcli.cli._fast import fast_read\nassert fast_read({argv!r})[0] == 0\n"
        "import sys\n"
        "built = [f'{m.__name__}.{n}' for m in list(sys.modules.values())\n"
        "         if m.__name__.startswith('jupyter_jcli')\n"
        "         for n, v in vars(m).items()\n"
        "         if isinstance(v, type) and hasattr(v, '__dataclass_fields__')\n"
        "         and v.__module__ == m.__name__]\n"
        "assert not built, built\n"
    )
    _modules_after(code, tmp_path)


EXEC_NEEDS_NONE_OF = (
    "jupyter_jcli.cli._notebook",  # the `notebook` command group
    "jupyter_jcli.condense",  # condensing: only when there are outputs
    "jupyter_jcli.runs._retention",  # retention: only after a saved run
    "jupyter_jcli.kernels._server",  # the Jupyter Server backend: only with --server-url
    "jupyter_jcli.kernels._server_http",
    "jupyter_jcli.kernels._server_ws",
    "jupyter_jcli.notebook._commit",  # the write machinery: exec never writes the notebook
    "jupyter_jcli.notebook.snapshots",
    "jupyter_jcli.notebook._writebase",
    "jupyter_jcli.workbench._status_views",  # the reads with statuses
)


@pytest.mark.kernel
def test_exec_on_a_live_kernel_imports_only_what_its_run_uses(tmp_path: Path) -> None:
    notebook = tmp_path / "nb.ipynb"
    cells = [{"cell_type": "code", "id": "a", "metadata": {}, "source": "x = 1",
              "execution_count": None, "outputs": []}]  # fmt: skip
    notebook.write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), "utf-8"
    )
    started = run_cli("-j", "kernel", "start", str(notebook))
    assert started.exit_code == 0, started.stdout
    try:
        code = (
            "import sys\nfrom jupyter_jcli.cli import run\n"
            f"assert run(['-j', 'exec', {str(notebook)!r}, '--code', 'x = 2']) == 0\n"
            "assert 'jupyter_jcli.kernels._wire' in sys.modules  # it joined the kernel\n"
            "assert 'jupyter_jcli.analysis._overwrites' in sys.modules  # it staled x's cell\n"
            f"loaded = sorted(set(sys.modules) & set({EXEC_NEEDS_NONE_OF!r}))\n"
            "assert not loaded, loaded\n"
        )
        _modules_after(code, tmp_path)
    finally:
        run_cli("-j", "kernel", "stop", str(notebook))
