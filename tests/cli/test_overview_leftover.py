"""``j-cli notebook overview`` while code a killed command left running still runs on the
notebook's live kernel: the overview tells the kernel as the registry knows it (busy, the
running cell, the command that ended) and claims no cell fresh against state that code may
be changing. Real processes on a real ipykernel kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from jcli_helpers import never_run_notebook as notebook
from live_helpers import (
    CLICK,
    finish,
    jcli,
    one_document,
    spawn,
    start,
    stop,
    wait_running,
)

pytestmark = pytest.mark.kernel

SLEEPER = "import time\nprint('start', flush=True)\ntime.sleep(120)\nq = p + 1"
"""A cell that prints, then sleeps far longer than the test waits (then writes ``q``)."""


def test_overview_during_code_a_killed_run_left_running_says_busy_and_claims_nothing_fresh(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["p = 1", SLEEPER, "r = q + 1"])
    start(path)
    try:
        assert jcli(tmp_path, "-j", "run", path, "--cell", "0").returncode == 0  # p fresh
        killed = spawn(CLICK, tmp_path, "-j", "run", path, "--cell", "1")
        wait_running(path)
        killed.kill()  # SIGKILL: it cannot let the kernel go nor clear its record
        finish(killed)
        listed = jcli(tmp_path, "-j", "kernel", "list")
        seen = jcli(tmp_path, "-j", "notebook", "overview", path)
        text = jcli(tmp_path, "notebook", "overview", path)
        again = jcli(tmp_path, "-j", "notebook", "overview", path)  # the overview wrote nothing
    finally:
        jcli(tmp_path, "kernel", "interrupt", path)
        stop(path)
    kernels = one_document(listed.stdout)["kernels"]
    entries = [e for e in kernels if e["notebook_path"] == str(path.resolve())]
    assert [e["state"] for e in entries] == ["busy"]
    overview = one_document(seen.stdout)
    assert seen.returncode == 0 and overview == one_document(again.stdout)
    kernel = overview["kernel"]
    assert kernel["state"] == "busy" and kernel["running_cell"] == entries[0]["running_cell"]
    assert kernel["busy"]["busy_gone"] is True and kernel["busy"]["busy_pid"] == killed.pid
    assert kernel["busy"]["running"] == f"cell {kernel['running_cell']}"
    cells = {cell["name"]: cell for cell in overview["cells"]}
    first = cells[next(iter(cells))]
    assert first["status"] == "stale"
    assert f"(pid {killed.pid}, ended)" in first["stale_cause"]
    assert "fresh" not in overview["status_summary"]
    assert text.returncode == 0 and f"(pid {killed.pid}, ended)" in text.stdout


def test_overview_and_read_cells_of_the_mcp_workbench_judge_a_killed_runs_code_the_same(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["p = 1", SLEEPER])
    start(path)
    try:
        assert jcli(tmp_path, "-j", "run", path, "--cell", "0").returncode == 0
        killed = spawn(CLICK, tmp_path, "-j", "exec", path, "--code", SLEEPER)
        wait_running(path)
        killed.kill()
        finish(killed)
        overview, read = anyio.run(_seen_by_a_workbench, path)
    finally:
        jcli(tmp_path, "kernel", "interrupt", path)
        stop(path)
    kernel = overview["kernel"]
    assert kernel["state"] == "busy" and kernel["running_cell"] is None  # inline code
    assert kernel["busy"]["running"] == "inline code" and kernel["busy"]["busy_gone"] is True
    assert [cell["status"] for cell in read["cells"]] == ["stale", "never_run"]
    assert f"(pid {killed.pid}, ended)" in read["cells"][0]["stale_cause"]


async def _seen_by_a_workbench(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The overview and ``read_cells`` a workbench on the registry answers (as
    ``jupyter-mcp`` holds one), in this process."""
    from jupyter_jcli.workbench import shared_workbench

    async with shared_workbench() as workbench:
        with anyio.fail_after(120):
            overview = (await workbench.notebook_overview(path)).to_dict()
            read = (await workbench.read_cells(path)).to_dict()
    return overview, read
