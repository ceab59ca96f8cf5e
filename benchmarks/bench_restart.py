"""restart_kernel while a cell runs, against restarting an idle kernel, on a real kernel.

In a temporary folder, a notebook with one cell that prints a line every 0.1 s for a minute.
For each round, on one ``Workbench``:

- idle: ``restart_kernel`` on a kernel that runs nothing (seconds of the call);
- busy: ``execute_cells`` on the printing cell, and once it has printed for a second,
  ``restart_kernel``: seconds of the restart call, and seconds from the restart request to
  the end of the interrupted call (its result is written by then).

Checks, every round: the running call ends ``interrupted`` (``kernel_restarted``) with
``KERNEL_RESTARTED``, what it printed is in the file, the restart completes and the next
execution runs on the new epoch. Prints one table and PASS/FAIL lines; exit status 1 if a
check fails. Usage::

    uv run python benchmarks/bench_restart.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV
from jupyter_jcli.workbench import Workbench

TICKS = "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.1)"


def _notebook(folder: Path) -> Path:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "execution_count": None, "outputs": []}
        for i, source in enumerate([TICKS, "x = 1"])
    ]  # fmt: skip
    path = folder / "restart.ipynb"
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


async def _round(wb: Workbench, path: Path, ticks: str, warm: str) -> tuple[float, float, float]:
    await wb.execute_cells(path, [warm])
    started = time.perf_counter()
    await wb.restart_kernel(path)
    idle_s = time.perf_counter() - started
    await wb.execute_cells(path, [warm])
    printing = anyio.Event()
    ended: dict[str, float] = {}
    outcome: dict[str, object] = {}

    async def progress(done: float, _total: float | None, message: str) -> None:
        if done != int(done):
            printing.set()

    async def run() -> None:
        outcome["run"] = await wb.execute_cells(path, [ticks], on_progress=progress)
        ended["run"] = time.perf_counter()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await printing.wait()
        asked = time.perf_counter()
        restarted = await wb.restart_kernel(path)
        busy_s = time.perf_counter() - asked
    result = outcome["run"]
    cell = result.cells[0]  # type: ignore[attr-defined]
    error = result.error  # type: ignore[attr-defined]
    saved = json.loads(path.read_text(encoding="utf-8"))["cells"][0]["outputs"]
    after = await wb.execute_cells(path, [warm])
    checks = [
        cell.status == "interrupted" and cell.interrupted_by == "kernel_restarted",
        error is not None and error["code"] == "KERNEL_RESTARTED",
        bool(saved) and "".join(saved[0]["text"]).startswith("tick 0\n"),
        after.epoch == restarted.epoch and after.cells[0].status == "ok",
    ]
    if not all(checks):
        raise AssertionError(f"round failed: {checks}")
    return idle_s, busy_s, ended["run"] - asked


async def bench(rounds: int, folder: Path) -> bool:
    from jupyter_jcli.workbench import _execute

    _execute.HEARTBEAT_INTERVAL = 1.0  # a heartbeat 1 s into the cell: it has printed
    path = _notebook(folder)
    ticks, warm = (view.name for view in Document.load(path).cells)
    rows: list[tuple[float, float, float]] = []
    async with Workbench(cache_dir=folder / "cache") as wb:
        for _ in range(rounds):
            try:
                rows.append(await _round(wb, path, ticks, warm))
            except AssertionError as err:
                print(f"FAIL {err}")
                return False
    print(f"{'':28} {'median s':>9} {'max s':>7}")
    for label, values in (
        ("restart, idle kernel", [r[0] for r in rows]),
        ("restart, cell running", [r[1] for r in rows]),
        ("interrupted call returns", [r[2] for r in rows]),
    ):
        print(f"{label:28} {statistics.median(values):9.2f} {max(values):7.2f}")
    print(f"PASS {rounds} rounds: cell interrupted, output saved, restart done, kernel usable")
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        import os

        os.environ[CACHE_DIR_ENV] = str(Path(tmp) / "cache")
        ok = anyio.run(bench, options.rounds, Path(tmp))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
