"""Start-up: the reads and the execution commands import nothing they do not use (no MCP SDK,
Pillow or Anthropic SDK; no event loop or ZeroMQ for a read)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jcli_helpers import EXAMPLE, run_cli


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


READ_NEVER_IMPORTS = {
    # start-up cost without use: orjson's own import costs more than the standard library's
    # parse of a 2 MB notebook
    "orjson",
    # the front ends and heavy libraries the reads never need
    "asyncio", "anyio", "mcp", "PIL", "anthropic", "jupytext", "nbformat", "zmq",
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
def test_a_read_imports_only_what_reading_needs(tmp_path: Path, argv: list[str]) -> None:
    script = (
        "import sys\nfrom jupyter_jcli.cli import run\n"
        f"assert run({argv!r}) in (0, 1)\n"
        "import json\nprint(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
        timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    assert "jupyter_jcli.outputs._read" in modules or "jupyter_jcli.outputs._directory" in modules
    assert not {name.split(".")[0] for name in modules} & READ_NEVER_IMPORTS
    # the store seam's document model (~12 ms, a tenth of the command): only a server store's
    # read needs it, a local file is read by the output protocol alone
    assert "jupyter_jcli.notebook.store" not in modules


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


EXEC_NEEDS_NONE_OF = (
    "jupyter_jcli.cli._notebook",  # the `notebook` command group
    "jupyter_jcli.condense",  # condensing: only when there are outputs
    "jupyter_jcli.runs._retention",  # retention: only after a saved run
    "jupyter_jcli.kernels._server",  # the Jupyter Server backend: only with --server-url
    "jupyter_jcli.kernels._server_http",
    "jupyter_jcli.server._http",
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
            "assert 'jupyter_jcli.kernels._registry_backend' in sys.modules  # joined the kernel\n"
            "assert 'jupyter_jcli.analysis._overwrites' in sys.modules  # it staled x's cell\n"
            f"loaded = sorted(set(sys.modules) & set({EXEC_NEEDS_NONE_OF!r}))\n"
            "assert not loaded, loaded\n"
        )
        _modules_after(code, tmp_path)
    finally:
        run_cli("-j", "kernel", "stop", str(notebook))
