"""Speed of the static analysis on a 2,000-cell notebook built from real cells.

Run: ``uv run python benchmarks/bench_analysis.py``. The notebook repeats the code cells of
the real notebooks in tests/fixtures/notebooks/ (Python Data Science Handbook and jupytext
test notebooks), each copy made distinct by a trailing comment so the source cache cannot
share results between copies. Prints:

- full analysis (cold cache): every cell analysed and the graph built, with IPython's input
  transformer already imported, and separately the first-ever run including that import;
- re-analysis after editing one cell: one cell re-analysed and the graph brought up to date
  from the previous one (``build_graph``'s incremental path; median over edits spread over
  the notebook; ``bench_reanalysis.py`` has the detail per kind of edit);
- staleness: ``stale_after_edit`` for an edit near the top (the worst case) and the median,
  and ``fresh_cells`` + ``rerun_plan`` against a full run log.

Targets (analysis issue, section 5; issue 13): full analysis < 1 s, one-cell re-analysis
<= 10 ms.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from jupyter_jcli.analysis import (
    CellInput,
    ExecutionRecord,
    build_graph,
    clear_cache,
    fresh_cells,
    rerun_plan,
    stale_after_edit,
)

NOTEBOOKS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "notebooks"
SIZE = 2000
FULL_TARGET_S = 1.0
EDIT_TARGET_S = 0.010


def corpus_code_cells() -> list[str]:
    """Sources of every code cell in the fixture notebooks, in file and document order."""
    sources: list[str] = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb.get("cells", []):
            if cell["cell_type"] == "code":
                src = cell["source"]
                sources.append("".join(src) if isinstance(src, list) else src)
    return sources


def notebook(size: int) -> list[CellInput]:
    """A ``size``-cell notebook: the corpus cells repeated, each copy distinct."""
    base = corpus_code_cells()
    cells = []
    for i in range(size):
        src = base[i % len(base)]
        cells.append(CellInput(f"cell-{i}", "code", f"{src}\n# copy {i // len(base)}"))
    return cells


def timed(fn: object, *args: object, **kwargs: object) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn(*args, **kwargs)  # type: ignore[operator]
    return time.perf_counter() - start, result


def main() -> int:
    cells = notebook(SIZE)
    magic = sum(1 for c in cells if "%" in c.source or "!" in c.source)
    print(f"notebook: {len(cells)} code cells from {len(corpus_code_cells())} real cells")
    print(f"  cells with magic or shell syntax: {magic}")

    first, _ = timed(build_graph, cells)
    clear_cache()
    cold, graph = timed(build_graph, cells)
    print(f"full analysis, first run (includes importing IPython): {first * 1e3:8.1f} ms")
    print(f"full analysis, cold cache:                             {cold * 1e3:8.1f} ms")
    print(f"  edges: {len(graph.edges)}, findings: {len(graph.findings)}")  # type: ignore[attr-defined]

    edits = []
    for i in range(50, SIZE, SIZE // 20):
        changed = list(cells)
        old = changed[i]
        changed[i] = CellInput(old.key, "code", old.source + f"\nedited_{i} = {i}")
        t, _ = timed(build_graph, changed)
        edits.append(t)
    edit = statistics.median(edits)
    print(f"re-analysis after editing one cell (median of {len(edits)}): {edit * 1e3:8.2f} ms")
    print(f"  slowest edit (a cyclic-GC pass lands on some): {max(edits) * 1e3:8.2f} ms")

    stale_times = []
    sizes = []
    for i in range(0, SIZE, SIZE // 20):
        t, stale = timed(stale_after_edit, graph, [cells[i].key])
        stale_times.append(t)
        sizes.append(len(stale))  # type: ignore[arg-type]
    print(
        f"stale_after_edit: top cell {stale_times[0] * 1e3:.2f} ms ({sizes[0]} stale), "
        f"median {statistics.median(stale_times) * 1e3:.2f} ms"
    )
    log = [
        ExecutionRecord(n.key, "r1", "live", i, tuple(graph.parents(n.key)))  # type: ignore[attr-defined]
        for i, n in enumerate(graph.cells)  # type: ignore[attr-defined]
    ]
    revs = {c.key: "r1" for c in cells}
    revs[cells[100].key] = "r2"
    t_fresh, status = timed(fresh_cells, graph, log, "live", revs)
    t_plan, plan = timed(rerun_plan, graph, status)
    print(
        f"fresh_cells over a {len(log)}-run log: {t_fresh * 1e3:.2f} ms; "
        f"rerun_plan: {t_plan * 1e3:.2f} ms ({len(plan)} cells)"  # type: ignore[arg-type]
    )

    ok_full = cold < FULL_TARGET_S
    ok_edit = edit <= EDIT_TARGET_S
    print(f"full analysis < {FULL_TARGET_S:.0f} s: {'PASS' if ok_full else 'FAIL'}")
    print(f"one-cell re-analysis <= {EDIT_TARGET_S * 1e3:.0f} ms: {'PASS' if ok_edit else 'FAIL'}")
    return 0 if ok_full and ok_edit else 1


if __name__ == "__main__":
    raise SystemExit(main())
