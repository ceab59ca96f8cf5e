"""run_stale against re-running everything below an edit, on the bundled example.

Copies ``examples/05.04-Feature-Engineering.ipynb`` to a temporary folder (the repository is
never written), runs it once on a fresh local kernel (``Workbench.run_stale``: every cell is
stale on a new kernel), edits one early cell through ``workbench.update_cell``, then on the
same, warm kernel measures:

- ``run_stale``: the cells the re-run plan names (the edited cell, its dependents, and any
  writer replayed before a self-mutating cell) and the wall seconds of the call;
- the naive alternative: ``execute_cells`` on every code cell from the edited one down.

Prints one table and PASS/FAIL lines; exit status 1 if a check fails. Usage::

    uv run python benchmarks/bench_run_stale.py [--cell NAME] [--timeout S]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio

from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV
from jupyter_jcli.workbench import Workbench, update_cell

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "05.04-Feature-Engineering.ipynb"
DEFAULT_CELL = "data"
"""The first code cell of the example: the list of house records the DictVectorizer cells use."""


async def bench(cell: str, timeout: float, folder: Path) -> bool:
    path = folder / EXAMPLE.name
    shutil.copyfile(EXAMPLE, path)
    async with Workbench(cache_dir=folder / "cache") as wb:
        started = time.perf_counter()
        full = await wb.run_stale(path, timeout=timeout)
        full_s = time.perf_counter() - started
        if not full.ok:
            print(f"FAIL the example did not run cleanly: stopped at {full.stopped_at}")
            return False
        document = Document.load(path, cache_dir=folder / "cache")
        target = document.cell(cell)
        code = [v.name for v in document.cells if v.cell_type == "code"]
        below = code[code.index(target.name) :]
        edit = update_cell(
            path,
            target.name,
            expected_rev=target.rev,
            source=target.source.replace("850000", "875000", 1) + "\n# edited by the benchmark",
            cache_dir=folder / "cache",
        )
        started = time.perf_counter()
        stale = await wb.run_stale(path, timeout=timeout)
        stale_s = time.perf_counter() - started
        started = time.perf_counter()
        naive = await wb.execute_cells(path, below, timeout=timeout)
        naive_s = time.perf_counter() - started

    ran = [c.name for c in stale.cells if c.status != "skipped"]
    print(f"bench_run_stale: {EXAMPLE.name}, {len(code)} code cells, edited {target.name!r}")
    print(f"  {'run':<34} {'cells':>5} {'seconds':>9}")
    print(f"  {'full run on a new kernel':<34} {len(full.cells):>5} {full_s:>9.3f}")
    print(f"  {'run_stale after the edit':<34} {len(ran):>5} {stale_s:>9.3f}")
    print(f"  {'re-run everything below the edit':<34} {len(below):>5} {naive_s:>9.3f}")
    print(f"  stale after the edit: {', '.join(edit.stale)}")
    print(f"  run_stale ran:        {', '.join(ran)}")
    checks = [
        (stale.ok and naive.ok, "both re-runs ended ok"),
        (tuple(ran) == stale.plan, "run_stale ran exactly its plan"),
        (set(edit.stale) <= set(ran), "run_stale covered every cell the edit made stale"),
        (stale.still_stale == (), "nothing is stale after run_stale"),
        (len(ran) < len(below), f"run_stale ran fewer cells ({len(ran)} < {len(below)})"),
        (stale_s <= naive_s, f"run_stale took no longer ({stale_s:.3f} s <= {naive_s:.3f} s)"),
    ]
    for passed, label in checks:
        print(f"{'PASS' if passed else 'FAIL'} {label}")
    return all(passed for passed, _label in checks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell", default=DEFAULT_CELL, help="name of the cell to edit")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per cell")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-run-stale-") as tmp:
        import os

        os.environ[CACHE_DIR_ENV] = str(Path(tmp) / "cache")
        ok = anyio.run(bench, args.cell, args.timeout, Path(tmp))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
