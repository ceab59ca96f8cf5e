"""What the server ledger's run log costs: ``j-cli -j run NB --stale`` of a chain of N cells
on a kept Jupyter Server kernel, for several N, each in a fresh ``j-cli`` process.

Every cell records one run in the notebook's ledger (``kernels._server_ledger``), so when a
record rewrites the whole log a run of N cells costs O(N²) in the ledger alone; appended to
its own file it costs O(N). For each N: a chain notebook (``x0 = 0``, ``xI = xI-1 + 1``), a
session started by ``j-cli kernel start --server-url``, then

- ``cold``: ``j-cli -j run NB --stale`` (every cell runs), wall time and the child's CPU time
  (user + system of the ``j-cli`` process, which is where the ledger's cost lands);
- ``again``: the same command once more (nothing is stale; it reads the log);
- the ledger entry's size and the run file's size afterwards;
- ``server``: the CPU time the Jupyter Server and its kernel spent during ``cold`` (from
  ``/proc``; the rest of the wall time not spent by ``j-cli`` itself).

Growth per 2x cells is ``t(2N) / t(N)`` (2 means linear). Everything runs under a private
temporary folder (``JUPYTER_RUNTIME_DIR``, ``JUPYTER_JCLI_RUNTIME_DIR``); the session and the
server are stopped at the end, whatever happens.

    uv run python benchmarks/bench_server_ledger.py --sizes 500,1000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from server_helpers import RunningServer, start_server, write_notebook

TIMEOUT = 1800


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["JUPYTER_RUNTIME_DIR"] = str(work / "client-runtime")
    env["JUPYTER_JCLI_RUNTIME_DIR"] = str(work / "registry")
    env["JUPYTER_JCLI_CACHE_DIR"] = str(work / "cache")
    env["JUPYTER_MCP_DISABLE_SUMMARIES"] = "1"
    return env


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and its live descendants (``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


def _jcli(server: RunningServer, env: dict[str, str], *args: str) -> tuple[float, float, dict]:
    """Run ``j-cli -j ARGS --server-url …``: wall s, CPU s of the child, its JSON document."""
    where = ["--server-url", server.url, "--token", server.token]
    where += ["--server-root", str(server.root)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "jupyter_jcli", "-j", *args, *where],
        check=False, env=env, capture_output=True, text=True, timeout=TIMEOUT,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"j-cli {' '.join(args[:2])} failed: {done.stdout}{done.stderr[-2000:]}")
    return wall, cpu, json.loads(done.stdout)


def _measure(server: RunningServer, work: Path, cells: int) -> dict[str, float]:
    env = _env(work)
    sources = ["x0 = 0", *(f"x{i} = x{i - 1} + 1" for i in range(1, cells))]
    path = write_notebook(server.root, sources, f"chain{cells}")
    _jcli(server, env, "kernel", "start", str(path))
    try:
        served = _tree_cpu(server.process.pid)
        wall, cpu, first = _jcli(server, env, "run", str(path), "--stale")
        served = _tree_cpu(server.process.pid) - served
        if first["run"]["ran_count"] != cells:
            raise SystemExit(f"chain{cells}: {first['run']['ran_count']} cells ran, not {cells}")
        again_wall, again_cpu, second = _jcli(server, env, "run", str(path), "--stale")
        if second["run"]["ran_count"] != 0:
            raise SystemExit(f"chain{cells}: the second run --stale ran cells again")
        ledger = work / "registry" / "server"
        sizes = {p.suffix: p.stat().st_size for p in ledger.iterdir() if p.suffix != ".lock"}
    finally:
        _jcli(server, env, "kernel", "stop", str(path))
    return {
        "wall": wall, "cpu": cpu, "server": served,
        "again_wall": again_wall, "again_cpu": again_cpu,
        "entry": sizes.get(".json", 0), "runs": sizes.get(".runs", 0),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,1000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-ledger-") as folder:
        base = Path(folder).resolve()
        (base / "root").mkdir()
        server = start_server(base / "root", base / "server-work")
        rows = {}
        try:
            for cells in sizes:
                work = base / f"work-{cells}"
                work.mkdir()
                rows[cells] = _measure(server, work, cells)
        finally:
            server.stop()
    print("j-cli -j run chainN.ipynb --stale --server-url … on a kept server kernel")
    previous = None
    for cells, row in rows.items():
        growth = ""
        if previous is not None:
            growth = f"   growth per 2x: wall {row['wall'] / rows[previous]['wall']:.2f}"
            growth += f", cpu {row['cpu'] / rows[previous]['cpu']:.2f}"
        print(
            f"  N={cells:<6} cold {row['wall']:7.2f} s wall {row['cpu']:7.2f} s cpu "
            f"(server+kernel {row['server']:6.2f} s cpu)   "
            f"again {row['again_wall']:6.2f} s wall {row['again_cpu']:6.2f} s cpu   "
            f"entry {row['entry']:>9,} B  runs file {row['runs']:>9,} B{growth}"
        )
        previous = cells
    return 0


if __name__ == "__main__":
    sys.exit(main())
