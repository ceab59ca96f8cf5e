"""``j-cli run`` on a notebook's live kernel against a run that starts its own kernel.

In a temporary folder (own kernel registry, own snapshot cache; the repository is never
written), with a small two-cell notebook, each in a fresh ``j-cli`` process (the venv's
console script), median wall seconds of:

- ``python -c pass`` (the floor of any command);
- ``j-cli -j run NB`` with no live kernel: a kernel is started for the command and stopped;
- ``j-cli -j run NB --stale`` on a live kernel (``j-cli kernel start``) with nothing stale:
  the cost of joining the kernel, reading the shared run log and answering;
- ``j-cli -j run NB --cell NAME --only`` on the live kernel: one cell run.

Prints one table. Usage::

    uv run python benchmarks/bench_live_kernel.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def _timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, check=True, timeout=300)
    return time.perf_counter() - started


def _notebook(folder: Path) -> Path:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "execution_count": None, "outputs": []}
        for i, source in enumerate(["a = 1", "b = a + 1"])
    ]  # fmt: skip
    path = folder / "bench.ipynb"
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    jcli = str(BIN / "j-cli")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = dict(os.environ)
        env["JUPYTER_JCLI_RUNTIME_DIR"] = str(folder / "runtime")
        env["JUPYTER_JCLI_CACHE_DIR"] = str(folder / "cache")
        env["JUPYTER_MCP_DISABLE_SUMMARIES"] = "1"
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        path = str(_notebook(folder))
        rows: list[tuple[str, list[float]]] = []
        floor = [sys.executable, "-c", "pass"]
        _timed(floor, env)
        rows.append(("python -c pass", [_timed(floor, env) for _ in range(runs)]))
        own = [jcli, "-j", "run", path]
        _timed(own, env)
        rows.append(("run, own kernel", [_timed(own, env) for _ in range(runs)]))
        subprocess.run([jcli, "kernel", "start", path], env=env, check=True, timeout=300)
        try:
            _timed(own, env)  # runs every cell once on the live kernel
            stale = [jcli, "-j", "run", path, "--stale"]
            rows.append(
                ("run --stale, live, nothing stale", [_timed(stale, env) for _ in range(runs)])
            )
            cell = [jcli, "-j", "run", path, "--cell", "0", "--only"]
            rows.append(("run --cell --only, live", [_timed(cell, env) for _ in range(runs)]))
        finally:
            subprocess.run([jcli, "kernel", "stop", "--all"], env=env, check=False, timeout=300)
    base = statistics.median(rows[0][1])
    print(f"{'command':36} {'median s':>9} {'x floor':>8}")
    for name, times in rows:
        median = statistics.median(times)
        print(f"{name:36} {median:9.3f} {median / base:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
