"""How a warm ``jupyter-mcp`` scales with the notebook: cost that should grow with the change.

Run from the repository root with the project's environment::

    uv run python benchmarks/bench_scale.py [--sizes 100,1000,5000,20000] [--runs 7]

One real server (``python -m jupyter_jcli.mcp.workbench``) is driven over stdio through the
MCP SDK's own client, as a host does, in a temporary folder (notebook copies, snapshot
cache): nothing is written in the repository. For each notebook, after one warm-up call of
each tool, the median wall time of ``--runs`` calls of:

- ``notebook_overview`` of one page of :data:`OVERVIEW_PAGE` cells (from the middle of the
  notebook);
- ``update_cell`` of one cell (a different cell each time, its source alternating, so every
  call writes the file);
- ``read_cells`` of one cell (the cell just edited: the server must see the new content);
- ``run_stale`` with ``dry_run`` right after an edit: the re-run plan, no kernel started.

Notebooks: generated ones of ``--sizes`` small code cells (``xN = xN-1 + 1``; one short
``stream`` output each, the shape of long real EDA notebooks), and the longest real notebook
of the fixtures (``03.05-Hierarchical-Indexing.ipynb``, 96 cells). Each table row gives the
file size, the medians, the growth factor of each call per 10x cells against the previous
generated size (``t(n) / t(n/10)`` scaled to a 10x step: 1 means constant, 10 means
linear), and the server's peak resident memory (``VmHWM`` of ``/proc/PID/status``) after
that notebook's calls. With ``--big-mb N`` a generated notebook of about N MB (long stream
outputs) is opened (overview, then one read) in a fresh server to measure its memory, then
edited once (``update_cell``: the peak of a write, printed but not a target).

Targets (issue 13): on 5,000 cells, ``read_cells`` of one cell <= 20 ms, ``update_cell``
<= 80 ms and a 100-cell page of ``notebook_overview`` <= 30 ms; from 1,000 to 20,000 cells
at most linear growth for writes and near constant for one-cell reads; server memory for an
open 100 MB notebook <= 3x its size. Printed as PASS/FAIL lines; exit status 1 if one is
missed. Results depend on the machine: compare figures from one run only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[1]
REAL_NOTEBOOK = REPO / "tests" / "fixtures" / "notebooks" / "03.05-Hierarchical-Indexing.ipynb"
SESSION_TIMEOUT = 3600
READ_TARGET_S = 0.020
UPDATE_TARGET_S = 0.080
MEMORY_TARGET = 3.0
OVERVIEW_PAGE = 100
OVERVIEW_TARGET_S = 0.030


def generated(cells: int, *, output_chars: int = 0) -> dict[str, Any]:
    """A notebook of ``cells`` small code cells, each with one short stream output (plus
    ``output_chars`` characters of output per cell, for the memory run)."""
    padding = "." * output_chars
    body = []
    for index in range(cells):
        previous = f"x{index - 1} + 1" if index else "0"
        body.append(
            {
                "cell_type": "code",
                "execution_count": index + 1,
                "id": f"cell-{index:06d}",
                "metadata": {},
                "outputs": [
                    {"name": "stdout", "output_type": "stream", "text": [f"{index}{padding}\n"]}
                ],
                "source": [f"# step {index}\n", f"x{index} = {previous}\n", f"print(x{index})"],
            }
        )
    return {
        "cells": body,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _write(path: Path, notebook: dict[str, Any]) -> None:
    text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")


def _params(root: Path, cache: Path) -> StdioServerParameters:
    env = dict(os.environ)
    env["JUPYTER_JCLI_CACHE_DIR"] = str(cache)
    env["JUPYTER_MCP_DISABLE_SUMMARIES"] = "1"
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "jupyter_jcli.mcp.workbench", "--root", str(root)],
        env=env,
    )


def _document(result: types.CallToolResult) -> dict[str, Any]:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    document: dict[str, Any] = json.loads(first.text)
    if result.is_error:
        raise RuntimeError(f"tool error: {document}")
    return document


def _peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _server_pid(parent: int) -> int:
    """The server process: the newest child of this process running the workbench module."""
    for child in sorted(Path("/proc").glob("[0-9]*"), key=lambda p: -int(p.name)):
        try:
            stat = (child / "stat").read_text()
            cmdline = (child / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent and b"mcp.workbench" in cmdline:
            return int(child.name)
    raise RuntimeError("server process not found")


async def _median(runs: int, call: Callable[[int], Awaitable[Any]]) -> float:
    times = []
    for run in range(runs):
        start = time.perf_counter()
        await call(run)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def _notebook(session: ClientSession, name: str, runs: int) -> dict[str, float]:
    overview = _document(
        await session.call_tool("notebook_overview", {"path": name, "limit": 1_000_000})
    )
    cells = [cell for cell in overview["cells"] if cell.get("cell_type", "code") == "code"]
    page = {"path": name, "start": len(overview["cells"]) // 2, "limit": OVERVIEW_PAGE}
    targets = [cells[(len(cells) * (k + 1)) // (runs + 2)] for k in range(runs + 1)]
    revs = {cell["name"]: cell["rev"] for cell in cells}
    sources = {
        cell["name"]: _document(
            await session.call_tool("read_cells", {"path": name, "names": [cell["name"]]})
        )["cells"][0]["source"]
        for cell in targets
    }
    flips = dict.fromkeys(revs, 0)

    async def edit(run: int) -> None:
        target = targets[run % len(targets)]["name"]
        flips[target] += 1
        source = sources[target] + ("\n# edited" if flips[target] % 2 else "")
        arguments = {"path": name, "name": target, "expected_rev": revs[target], "source": source}
        document = _document(await session.call_tool("update_cell", arguments))
        revs[target] = document["cell"]["rev"]

    async def read(run: int) -> None:
        target = targets[run % len(targets)]["name"]
        document = _document(
            await session.call_tool("read_cells", {"path": name, "names": [target]})
        )
        assert document["cells"][0]["rev"] == revs[target], "read_cells served stale content"

    async def overview_call(_run: int) -> None:
        _document(await session.call_tool("notebook_overview", page))

    async def plan(run: int) -> None:
        _document(await session.call_tool("run_stale", {"path": name, "dry_run": True}))

    await edit(runs)  # warm-up of each call
    await read(runs)
    await plan(0)
    result = {"overview": await _median(max(3, runs // 2), overview_call)}
    result["update"] = await _median(runs, edit)
    result["read"] = await _median(runs, read)
    plans = []
    for run in range(max(3, runs // 2)):
        await edit(run)
        start = time.perf_counter()
        await plan(run)
        plans.append(time.perf_counter() - start)
    result["plan"] = statistics.median(plans)
    return result


async def _session(
    root: Path, cache: Path, errlog: Path, body: Callable[..., Awaitable[Any]]
) -> Any:
    with anyio.fail_after(SESSION_TIMEOUT), errlog.open("a", encoding="utf-8") as err:
        async with (
            stdio_client(_params(root, cache), errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await body(session, _server_pid(os.getpid()))


async def _measure(sizes: list[int], runs: int, work: Path) -> list[dict[str, Any]]:
    root = work / "root"
    root.mkdir()
    names = []
    for size in sizes:
        _write(root / f"gen-{size}.ipynb", generated(size))
        names.append((f"gen-{size}.ipynb", size))
    shutil.copyfile(REAL_NOTEBOOK, root / REAL_NOTEBOOK.name)
    names.append((REAL_NOTEBOOK.name, None))

    async def body(session: ClientSession, pid: int) -> list[dict[str, Any]]:
        rows = []
        for name, size in names:
            figures = await _notebook(session, name, runs)
            cells = (
                size if size is not None else len(json.loads((root / name).read_bytes())["cells"])
            )
            rows.append(
                {
                    "name": name,
                    "cells": cells,
                    "generated": size is not None,
                    "bytes": (root / name).stat().st_size,
                    "peak_kb": _peak_kb(pid),
                    **figures,
                }
            )
        return rows

    rows: list[dict[str, Any]] = await _session(root, work / "cache", work / "server.log", body)
    return rows


async def _memory(megabytes: int, work: Path) -> tuple[int, int, int, int]:
    root = work / "big"
    root.mkdir()
    cells = 2_000
    per_cell = megabytes * 1_000_000 // cells
    path = root / "big.ipynb"
    _write(path, generated(cells, output_chars=per_cell))

    async def body(session: ClientSession, pid: int) -> tuple[int, int, int]:
        before = _peak_kb(pid)
        page = {"path": path.name, "start": cells // 2, "limit": OVERVIEW_PAGE}
        overview = _document(await session.call_tool("notebook_overview", page))
        cell = overview["cells"][0]
        read = {"path": path.name, "names": [cell["name"]]}
        source = _document(await session.call_tool("read_cells", read))["cells"][0]["source"]
        opened = _peak_kb(pid)
        edit = {"path": path.name, "name": cell["name"], "expected_rev": cell["rev"]}
        _document(await session.call_tool("update_cell", {**edit, "source": source + "\n#"}))
        return before, opened, _peak_kb(pid)

    before, opened, edited = await _session(root, work / "cache", work / "server.log", body)
    return path.stat().st_size, before, opened, edited


def _growth(rows: list[dict[str, Any]], key: str, index: int) -> str:
    row = rows[index]
    if index == 0 or not row["generated"] or not rows[index - 1]["generated"]:
        return "-"
    previous = rows[index - 1]
    steps = math.log10(row["cells"] / previous["cells"])
    return f"{(row[key] / previous[key]) ** (1 / steps):.1f}x"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,5000,20000", help="generated cell counts")
    parser.add_argument("--runs", type=int, default=7, help="measured calls per tool")
    parser.add_argument("--big-mb", type=int, default=0, help="also open a notebook of ~N MB")
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as folder:
        rows = anyio.run(_measure, sizes, options.runs, Path(folder))
        memory = anyio.run(_memory, options.big_mb, Path(folder)) if options.big_mb else None
    keys = ("overview", "update", "read", "plan")
    print(
        f"{'notebook':<36} {'cells':>6} {'size':>9} "
        + " ".join(f"{key + ' ms':>12} {'x/10':>6}" for key in keys)
        + f" {'peak RSS':>9}"
    )
    for index, row in enumerate(rows):
        print(
            f"{row['name']:<36} {row['cells']:>6} {row['bytes'] / 1e6:>7.2f}MB "
            + " ".join(f"{row[key] * 1e3:>12.1f} {_growth(rows, key, index):>6}" for key in keys)
            + f" {row['peak_kb'] / 1024:>7.0f}MB"
        )
    ok = True
    by_cells = {row["cells"]: row for row in rows if row["generated"]}
    if 5000 in by_cells:
        row = by_cells[5000]
        targets = (
            ("read", READ_TARGET_S),
            ("update", UPDATE_TARGET_S),
            ("overview", OVERVIEW_TARGET_S),
        )
        for key, target in targets:
            passed = row[key] <= target
            ok = ok and passed
            print(
                f"5,000 cells {key}: {row[key] * 1e3:.1f} ms <= {target * 1e3:.0f} ms: "
                f"{'PASS' if passed else 'FAIL'}"
            )
    if 1000 in by_cells and 20000 in by_cells:
        low, high = by_cells[1000], by_cells[20000]
        write_growth = high["update"] / low["update"]
        read_growth = high["read"] / low["read"]
        passed = write_growth <= 20 * 1.1
        ok = ok and passed
        print(f"update 1k->20k: {write_growth:.1f}x (linear = 20x): {'PASS' if passed else 'FAIL'}")
        passed = read_growth <= 3
        ok = ok and passed
        print(
            f"read 1k->20k: {read_growth:.1f}x (near constant <= 3x): "
            f"{'PASS' if passed else 'FAIL'}"
        )
    if memory is not None:
        size, before, opened, edited = memory
        ratio = opened * 1024 / size
        passed = ratio <= MEMORY_TARGET
        ok = ok and passed
        print(
            f"open {size / 1e6:.0f} MB notebook: server peak {opened / 1024:.0f} MB "
            f"(idle {before / 1024:.0f} MB) = {ratio:.1f}x: {'PASS' if passed else 'FAIL'}"
        )
        print(
            f"then one update_cell: server peak {edited / 1024:.0f} MB "
            f"= {edited * 1024 / size:.1f}x (not a target)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
