"""Text output names cells in backticks wherever it names them in a sentence or a row: the
lint list of the overview and what a busy kernel runs (``KERNEL_BUSY``, the kernel line)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from jcli_helpers import run_cli

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.kernels._busy import busy_error, busy_facts, running_words
from jupyter_jcli.kernels._entry import KernelEntry


def test_the_overview_lint_list_names_each_cell_in_backticks(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "execution_count": None, "outputs": []}
        for i, source in enumerate(["a = 1", "code = a + z"])
    ]  # fmt: skip
    path = tmp_path / "nb.ipynb"
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document), encoding="utf-8")
    run = run_cli("notebook", "overview", path)
    assert run.exit_code == 0, run.stderr
    (finding,) = run.stdout.split("lint (1):\n")[1].splitlines()
    assert finding.startswith("  cell 1 `code`: unresolved_name")


def _entry(cell: str | None) -> KernelEntry:
    busy = {"who": f"j-cli run (pid {os.getpid()})", "cell": cell, "since": time.time(),
            "pid": os.getpid(), "command": "j-cli run nb.ipynb"}  # fmt: skip
    return KernelEntry(
        notebook_path="/nb.ipynb", kernelspec="python3", cwd="/", epoch="e1", state="running",
        started=time.time(), started_by="test", idle_since=time.time(), idle_timeout=60.0,
        keep=True, busy=busy,
    )  # fmt: skip


def test_what_a_busy_kernel_runs_names_its_cell_in_backticks() -> None:
    facts = busy_facts(_entry("data"))
    assert facts is not None and running_words(facts) == "cell `data`"
    assert facts["running"] == "cell data"  # the detail keeps its documented value
    inline = busy_facts(_entry(None))
    assert inline is not None and running_words(inline) == "inline code"
    assert running_words({}) == "cells"


def test_kernel_busy_names_the_running_cell_in_backticks() -> None:
    error = busy_error(Path("/nb.ipynb"), _entry("data"), 0.0)
    assert error.code == ErrorCode.KERNEL_BUSY
    assert "cell `data`" in error.message and error.details["running"] == "cell data"
    gone = busy_error(Path("/nb.ipynb"), _entry("data"), 0.0, gone=True)
    assert gone.code == ErrorCode.KERNEL_BUSY and "cell `data`" in gone.message


@pytest.mark.parametrize("gone", [False, True], ids=["running", "left-running"])
def test_kernel_busy_names_the_interrupt_command_with_the_notebook(gone: bool) -> None:
    error = busy_error(Path("/work/nb.ipynb"), _entry("data"), 0.0, gone=gone)
    assert error.code == ErrorCode.KERNEL_BUSY
    assert "`j-cli kernel interrupt /work/nb.ipynb`" in error.message


@pytest.mark.parametrize("gone", [False, True], ids=["running", "left-running"])
def test_kernel_busy_on_a_server_names_the_interrupt_with_its_server(gone: bool) -> None:
    url = "http://127.0.0.1:8888/"
    error = busy_error(Path("/work/nb.ipynb"), _entry("data"), 0.0, gone=gone, server_url=url)
    assert error.code == ErrorCode.KERNEL_BUSY
    assert f"`j-cli kernel interrupt /work/nb.ipynb --server-url {url}`" in error.message
