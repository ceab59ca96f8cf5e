"""How cold ``j-cli`` commands scale with the notebook: each is a fresh process that parses,
names and analyses the whole file, so its cost should grow at most linearly with the cells.

Run from the repository root with the project's environment::

    uv run python benchmarks/bench_cli_scale.py [--sizes 1000,10000] [--runs 3]

For each size, two generated notebooks of small code cells (one short ``stream`` output
each, the shape of ``bench_scale.py``'s):

- ``distinct``: every cell defines its own variable (``xN = xN-1 + 1``), so every derived
  cell name is different;
- ``alike``: every cell rebinds one variable (``df = df + N``), so every derived name has
  the same base (``df``, ``df-2``, ... ``df-N``) - the case that was quadratic (10,000 such
  cells took 15 s for an overview and 31 s for an edit).

and, on a copy in a temporary folder (nothing is written in the repository), the median wall
time of ``--runs`` fresh processes of:

- ``j-cli -j notebook overview NB --start MID --limit 100`` (one page);
- ``j-cli -j cell update NB CELL --expected-rev REV --source ...`` (writes the file);
- ``j-cli -j notebook undo NB`` (restores it).

Each row gives the floor (``python -c "import json,sys; json.load(open(sys.argv[1]))"`` on the
same file), each command's time and its growth per 10x cells against the previous size
(``t(n) / t(n/10)`` scaled to a 10x step: 10 means linear). Target: growth at most 12 (linear,
with the noise of a shared machine) for every command on both notebook kinds; PASS/FAIL lines
and exit status 1 if one is missed. Compare figures from one run only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GROWTH_TARGET = 12.0
TIMEOUT = 600
FLOOR = "import json,sys; json.load(open(sys.argv[1]))"


def generated(cells: int, kind: str) -> dict[str, Any]:
    """``cells`` code cells of ``kind`` ``distinct`` or ``alike`` (see the module notes)."""
    body = []
    for index in range(cells):
        if kind == "alike":
            source = f"df = df + {index}" if index else "df = 0"
        else:
            source = f"x{index} = x{index - 1} + 1" if index else "x0 = 0"
        body.append(
            {
                "cell_type": "code",
                "execution_count": index + 1,
                "id": f"cell-{index:06d}",
                "metadata": {},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": [f"{index}\n"]}],
                "source": source,
            }
        )
    return {
        "cells": body,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache / "bytecode")
    env["JUPYTER_JCLI_CACHE_DIR"] = str(cache / "snapshots")
    env["JUPYTER_MCP_DISABLE_SUMMARIES"] = "1"
    return env


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(
        command, check=False, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:6])} failed ({done.returncode}): {done.stdout}")
    return elapsed, done.stdout


def _measure(path: Path, cells: int, runs: int, env: dict[str, str]) -> dict[str, float]:
    jcli = [sys.executable, "-m", "jupyter_jcli", "-j"]
    middle = cells // 2
    times: dict[str, list[float]] = {"floor": [], "overview": [], "update": [], "undo": []}
    for run in range(runs + 1):  # the first round warms the bytecode cache
        floor, _ = _timed([sys.executable, "-c", FLOOR, str(path)], env)
        page = [*jcli, "notebook", "overview", str(path), "--start", str(middle), "--limit", "100"]
        overview, text = _timed(page, env)
        cell = json.loads(text)["cells"][0]
        edit = [*jcli, "cell", "update", str(path), cell["name"], "--expected-rev", cell["rev"]]
        update, _ = _timed([*edit, "--source", f"{cell['name'].split('-')[0]} = {run}"], env)
        undo, _ = _timed([*jcli, "notebook", "undo", str(path)], env)
        if run:
            for key, value in zip(times, (floor, overview, update, undo), strict=True):
                times[key].append(value)
    return {key: statistics.median(values) for key, values in times.items()}


def _growth(now: float, before: float, cells: int, previous: int) -> float:
    return (now / before) ** (1 / math.log10(cells / previous))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-cli-scale-") as folder:
        work = Path(folder)
        env = _env(work)
        print(
            f"{'notebook':<16}{'MB':>6}{'floor s':>9}{'overview s':>12}{'update s':>10}"
            f"{'undo s':>8}   growth per 10x (overview/update/undo)"
        )
        for kind in ("distinct", "alike"):
            previous: tuple[int, dict[str, float]] | None = None
            for cells in sizes:
                path = work / f"{kind}-{cells}.ipynb"
                path.write_text(json.dumps(generated(cells, kind), indent=1) + "\n")
                figures = _measure(path, cells, args.runs, env)
                growth = ""
                if previous is not None:
                    rates = [
                        _growth(figures[key], previous[1][key], cells, previous[0])
                        for key in ("overview", "update", "undo")
                    ]
                    growth = " / ".join(f"{rate:.1f}" for rate in rates)
                    for key, rate in zip(("overview", "update", "undo"), rates, strict=True):
                        verdict = "PASS" if rate <= GROWTH_TARGET else "FAIL"
                        failed = failed or verdict == "FAIL"
                        print(
                            f"  {verdict}: {kind} {key} grows {rate:.1f}x per 10x cells "
                            f"(target <= {GROWTH_TARGET:g})"
                        )
                size_mb = path.stat().st_size / 1e6
                print(
                    f"{kind + ' ' + str(cells):<16}{size_mb:>6.2f}{figures['floor']:>9.3f}"
                    f"{figures['overview']:>12.2f}{figures['update']:>10.2f}"
                    f"{figures['undo']:>8.2f}   {growth}"
                )
                previous = (cells, figures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
