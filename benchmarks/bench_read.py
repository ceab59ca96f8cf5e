"""Read-path speed of jupyter-jcli, measured against the cost of just parsing the JSON.

Run from the repository root with the project's environment::

    uv run python benchmarks/bench_read.py [--runs 15] [--size-mb 100]

(a) Cold command line: ``j-cli -j notebook output`` on a real ~2 MB notebook
    (``tests/fixtures/notebooks/05.11-K-Means.ipynb``), the venv's console script run directly
    in a fresh process each time; median wall time over ``--runs`` runs, and its ratio to the
    floor ``python -c "import json,sys; json.load(open(sys.argv[1]))"`` on the same file.
    Target: at most 3x the floor.
(b) Big notebook: a ~100 MB notebook generated in a temporary folder (cells holding the real
    PNG outputs of the corpus notebook plus text); one output is read through the API
    (``read_notebook_output``) in a fresh subprocess, and the same bytes are parsed with orjson
    alone in another. Time is measured inside each subprocess around the work (imports
    excluded). Peak memory is the subprocess's ``ru_maxrss``, reported whole and as the part
    added by the work (peak minus the high-water mark after imports, i.e. without the
    interpreter's own ~15 MB). Targets: at most 1.5x the orjson time; the memory the read
    adds at most 3x the file size (orjson alone needs about 3x: the input bytes, its parse
    buffer and the Python objects).

Child processes run with a private bytecode cache (``PYTHONPYCACHEPREFIX`` in the temporary
folder) and warm-up runs, so every measured start-up reads compiled bytecode, as an installed
tool does; nothing is written in the repository. Results depend on the machine: compare
figures from one run only.
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
from typing import Any

REPO = Path(__file__).resolve().parents[1]
REAL_NOTEBOOK = REPO / "tests" / "fixtures" / "notebooks" / "05.11-K-Means.ipynb"
FLOOR_CODE = "import json,sys; json.load(open(sys.argv[1]))"
TIMEOUT = 300

_PEAK = """
def peak():
    # VmHWM (Linux) is this process's own high-water mark; ru_maxrss survives exec and can
    # carry the parent's peak. ru_maxrss is KiB on Linux, bytes on macOS.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024
"""

_API_CHILD = """
import json, resource, sys, time
from jupyter_jcli.outputs.notebook import read_notebook_output
path, cell, output = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
baseline = peak()
start = time.perf_counter()
result = read_notebook_output(path, cell, output)
elapsed = time.perf_counter() - start
assert result["status"] == "ok" and result["selected"]["mime_type"] == "image/png"
print(json.dumps({"seconds": elapsed, "maxrss": peak(), "baseline": baseline}))
"""

_ORJSON_CHILD = """
import json, resource, sys, time
import orjson
path = sys.argv[1]
baseline = peak()
start = time.perf_counter()
with open(path, "rb") as handle:
    document = orjson.loads(handle.read())
elapsed = time.perf_counter() - start
assert document["cells"]
print(json.dumps({"seconds": elapsed, "maxrss": peak(), "baseline": baseline}))
"""


def _child_env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def _wall(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, env=env, timeout=TIMEOUT, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed: {command}\n{proc.stdout[-500:]!r}\n{proc.stderr[-2000:]!r}")
    return elapsed


def _first_png_output(path: Path) -> tuple[int, int]:
    cells = json.loads(path.read_bytes())["cells"]
    for cell_index, cell in enumerate(cells):
        for output_index, output in enumerate(cell.get("outputs") or []):
            if "image/png" in (output.get("data") or {}):
                return cell_index, output_index
    raise SystemExit(f"no PNG output in {path}")


def _console_script() -> Path:
    script = Path(sys.executable).parent / ("j-cli.exe" if os.name == "nt" else "j-cli")
    if not script.exists():
        raise SystemExit(f"{script} not found: run `uv sync` first")
    return script


def bench_cold_cli(runs: int, env: dict[str, str]) -> dict[str, float]:
    """Median wall seconds of the cold CLI read and of the json.load floor, interleaved."""
    cell, output = _first_png_output(REAL_NOTEBOOK)
    cli = [str(_console_script()), "-j", "notebook", "output", str(REAL_NOTEBOOK)]
    cli += ["--cell", str(cell), "--output", str(output)]
    floor = [sys.executable, "-c", FLOOR_CODE, str(REAL_NOTEBOOK)]
    for _ in range(3):  # warm-up: bytecode cache and OS file cache
        _wall(cli, env)
        _wall(floor, env)
    cli_times, floor_times = [], []
    for _ in range(runs):
        cli_times.append(_wall(cli, env))
        floor_times.append(_wall(floor, env))
    return {
        "size": REAL_NOTEBOOK.stat().st_size,
        "cli": statistics.median(cli_times),
        "floor": statistics.median(floor_times),
    }


def generate_big_notebook(path: Path, size_mb: float) -> tuple[int, int]:
    """Write a notebook of about ``size_mb`` MB made of real PNG outputs and text.

    Returns:
        The (cell, output) of a PNG output in the middle of the notebook.
    """
    source = json.loads(REAL_NOTEBOOK.read_bytes())
    pngs = [
        output["data"]["image/png"]
        for cell in source["cells"]
        for output in cell.get("outputs") or []
        if "image/png" in (output.get("data") or {})
    ]
    text = "".join(f"iteration {i:05d}: loss={1 / (i + 1):.6f}\n" for i in range(2_000))
    target = int(size_mb * 1_000_000)
    cells: list[dict[str, Any]] = []
    size = 0
    while size < target:
        index = len(cells)
        outputs = [
            {"output_type": "stream", "name": "stdout", "text": text},
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {"image/png": pngs[index % len(pngs)], "text/plain": "<Figure>"},
            },
        ]
        cells.append(
            {
                "cell_type": "code",
                "execution_count": index + 1,
                "id": f"cell-{index}",
                "metadata": {},
                "source": f"plot_step({index})",
                "outputs": outputs,
            }
        )
        size += len(text) + len(json.dumps(outputs[1]))
    document = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return len(cells) // 2, 1


def _child(code: str, args: list[str], env: dict[str, str]) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK + code, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"child failed:\n{proc.stderr[-2000:]}")
    result: dict[str, float] = json.loads(proc.stdout)
    return result


def bench_big_notebook(folder: Path, size_mb: float, env: dict[str, str]) -> dict[str, float]:
    """Medians over 3 fresh subprocesses each: API read of one output vs orjson alone."""
    path = folder / "big.ipynb"
    # Generated in a child so that this process stays small (its peak must not leak into
    # the measured children's figures).
    proc = subprocess.run(
        [sys.executable, __file__, "--generate", str(path), "--size-mb", str(size_mb)],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
        check=True,
    )
    cell, output = json.loads(proc.stdout)
    args = [str(path), str(cell), str(output)]
    _child(_API_CHILD, args, env)  # warm-up
    _child(_ORJSON_CHILD, [str(path)], env)
    api = [_child(_API_CHILD, args, env) for _ in range(3)]
    parse = [_child(_ORJSON_CHILD, [str(path)], env) for _ in range(3)]
    return {
        "size": path.stat().st_size,
        "api_seconds": statistics.median(r["seconds"] for r in api),
        "api_maxrss": max(r["maxrss"] for r in api),
        "api_added": max(r["maxrss"] - r["baseline"] for r in api),
        "orjson_seconds": statistics.median(r["seconds"] for r in parse),
        "orjson_maxrss": max(r["maxrss"] for r in parse),
        "orjson_added": max(r["maxrss"] - r["baseline"] for r in parse),
    }


def _row(name: str, measured: str, target: str = "", ok: bool | None = None) -> str:
    verdict = "" if ok is None else ("PASS" if ok else "FAIL")
    return f"{name:<46} {measured:>22}  {target:<10} {verdict}"


def main() -> int:
    """Run both benchmarks and print the table; exit 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="cold CLI runs (default 15)")
    parser.add_argument("--size-mb", type=float, default=100, help="big notebook size in MB")
    parser.add_argument("--generate", metavar="PATH", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.generate:
        print(json.dumps(generate_big_notebook(Path(options.generate), options.size_mb)))
        return 0
    with tempfile.TemporaryDirectory(prefix="jcli-bench-") as tmp:
        folder = Path(tmp)
        env = _child_env(folder / "pycache")
        cold = bench_cold_cli(options.runs, env)
        big = bench_big_notebook(folder, options.size_mb, env)
    cli_ratio = cold["cli"] / cold["floor"]
    time_ratio = big["api_seconds"] / big["orjson_seconds"]
    memory_ratio = big["api_added"] / big["size"]
    total_ratio = big["api_maxrss"] / big["size"]
    mb = 1_000_000
    rows = [
        _row("benchmark", "measured", "target", None),
        _row(f"(a) notebook: {REAL_NOTEBOOK.name}", f"{cold['size'] / mb:.2f} MB"),
        _row(
            f"    j-cli -j notebook output, median of {options.runs}", f"{cold['cli'] * 1e3:.1f} ms"
        ),
        _row("    floor: python json.load, median", f"{cold['floor'] * 1e3:.1f} ms"),
        _row("    ratio to the floor", f"{cli_ratio:.2f}x", "<= 3x", cli_ratio <= 3),
        _row("(b) generated notebook", f"{big['size'] / mb:.1f} MB"),
        _row("    API read of one output: time", f"{big['api_seconds'] * 1e3:.0f} ms"),
        _row("    orjson parse alone: time", f"{big['orjson_seconds'] * 1e3:.0f} ms"),
        _row("    time ratio to orjson", f"{time_ratio:.2f}x", "<= 1.5x", time_ratio <= 1.5),
        _row("    API read: peak RSS of the process", f"{big['api_maxrss'] / mb:.0f} MB"),
        _row("    API read: peak RSS added by the read", f"{big['api_added'] / mb:.0f} MB"),
        _row("    orjson alone: peak RSS of the process", f"{big['orjson_maxrss'] / mb:.0f} MB"),
        _row("    orjson alone: peak RSS added by the parse", f"{big['orjson_added'] / mb:.0f} MB"),
        _row("    API process peak / file size (info)", f"{total_ratio:.2f}x"),
        _row("    API added peak / file size", f"{memory_ratio:.2f}x", "<= 3x", memory_ratio <= 3),
    ]
    print(f"python {sys.version.split()[0]} on {sys.platform}, {os.cpu_count()} CPUs")
    print("\n".join(rows))
    return 0 if cli_ratio <= 3 and time_ratio <= 1.5 and memory_ratio <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
