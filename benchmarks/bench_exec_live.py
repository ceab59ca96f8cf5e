"""``j-cli -j exec NB --code pass`` on a live kernel, cold process, against its floors.

Run from the repository root with the project's environment::

    uv run python benchmarks/bench_exec_live.py [--runs 15] [--baseline SRC]

Two notebooks get a live kernel each (``j-cli kernel start``), stopped at the end: a copy of
the bundled example (``examples/05.04-Feature-Engineering.ipynb``: 43 cells with real
outputs, paired ``ipynb,md`` by its own metadata, as a user's notebook is) and an empty one.
The registry is found as a user's is, through ``jupyter_core``'s runtime folder
(``JUPYTER_RUNTIME_DIR`` points it into the scratch folder). Then, interleaved in one run (so
a machine loaded by other work loads every figure alike):

- ``python -c pass``: the interpreter's own start-up;
- ``j-cli -j exec EXAMPLE --code pass``: the venv's console script in a fresh process (load the
  notebook, join its registered kernel through ``jupyter_client``, run, record, answer);
- the same on the empty notebook (what the notebook's size adds);
- with ``--baseline SRC``: the example's row with ``PYTHONPATH=SRC`` (e.g. the ``src`` of an
  older commit from ``git archive``), to compare two versions on the same kernel;
- ``j-cli -j run EXAMPLE --stale`` with nothing stale (the agent's loop after an edit that
  staled nothing);
- the kernel's own round trip: an ``execute_request`` of ``pass`` on an open connection, until
  its ``execute_reply`` and ``idle`` status (measured in this process, wall time).

Wall time (median) and CPU time (user + system of the command's process, minimum) are
printed. Children run with a private bytecode cache after warm-up runs, as an installed tool
runs. Target (issue 23): at most 0.5 s wall median on two cores (the share of
``python -c pass`` in the wall time is printed).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_startup import TIMEOUT, _env, _once

EXEC_ROW = "j-cli -j exec EXAMPLE --code pass"
RUN_ROW = "j-cli -j run EXAMPLE --stale"
TARGET = 0.5
"""Seconds (issue 23): a cold exec on a live kernel, wall median."""


def _kernel_round_trips(connection_file: str, runs: int) -> list[float]:
    """Seconds of ``runs`` execute round trips of ``pass`` on one open connection."""
    from jupyter_client import BlockingKernelClient

    client = BlockingKernelClient()
    client.load_connection_file(connection_file)
    client.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=False)
    try:
        client.wait_for_ready(timeout=TIMEOUT)
        times = []
        for _ in range(runs + 2):
            start = time.perf_counter()
            msg_id = client.execute("pass", store_history=False, allow_stdin=False)
            deadline = time.monotonic() + TIMEOUT
            replied = idle = False
            while not replied and time.monotonic() < deadline:
                msg = client.get_shell_msg(timeout=TIMEOUT)
                replied = msg["parent_header"].get("msg_id") == msg_id
            while not idle and time.monotonic() < deadline:
                msg = client.get_iopub_msg(timeout=TIMEOUT)
                idle = (
                    msg["parent_header"].get("msg_id") == msg_id
                    and msg["content"].get("execution_state") == "idle"
                )
            times.append(time.perf_counter() - start)
        return times[2:]
    finally:
        client.stop_channels()


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "05.04-Feature-Engineering.ipynb"
"""The bundled example (43 cells, real outputs, paired ``ipynb,md`` by its own metadata)."""


def _start(script: str, notebook: Path, env: dict[str, str]) -> str:
    """Start ``notebook``'s live kernel; its connection file."""
    started = subprocess.run(
        [script, "-j", "kernel", "start", str(notebook)],
        capture_output=True, env=env, timeout=TIMEOUT, check=True,
    )  # fmt: skip
    return str(json.loads(started.stdout)["kernel"]["connection_file"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="a src folder to compare (PYTHONPATH)")
    options = parser.parse_args()
    script = str(Path(sys.executable).parent / "j-cli")
    with tempfile.TemporaryDirectory(prefix="jcli-bench-") as tmp:
        folder = Path(tmp)
        env = _env(folder / "pycache")
        env.pop("JUPYTER_JCLI_RUNTIME_DIR", None)  # found as a user's is: through jupyter_core
        env["JUPYTER_RUNTIME_DIR"] = str(folder / "runtime")
        example = folder / EXAMPLE.name
        shutil.copyfile(EXAMPLE, example)
        empty = folder / "empty.ipynb"
        empty.write_text(
            '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', "utf-8"
        )
        started: list[Path] = []
        try:
            connection = _start(script, example, env)
            started.append(example)
            _start(script, empty, env)
            started.append(empty)
            on_example = [script, "-j", "exec", str(example), "--code", "pass"]
            commands: dict[str, tuple[list[str], dict[str, str]]] = {
                "python -c pass": ([sys.executable, "-c", "pass"], env),
                EXEC_ROW: (on_example, env),
                "same, empty notebook": ([*on_example[:3], str(empty), *on_example[4:]], env),
            }
            if options.baseline is not None:
                old = {**env, "PYTHONPATH": str(options.baseline.resolve())}
                commands["baseline, example"] = (on_example, old)
            run_stale = [script, "-j", "run", str(example), "--stale"]
            commands[RUN_ROW] = (run_stale, env)
            for _ in range(3):
                for command, command_env in commands.values():
                    _once(command, command_env)
            samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
            trips: list[float] = []
            for _ in range(options.runs):
                for name, (command, command_env) in commands.items():
                    samples[name].append(_once(command, command_env))
                trips.extend(_kernel_round_trips(connection, 1))
        finally:
            for notebook in started:
                subprocess.run(
                    [script, "-j", "kernel", "stop", str(notebook)],
                    capture_output=True, env=env, timeout=TIMEOUT, check=False,
                )  # fmt: skip
    bare = {
        "wall": statistics.median(w for w, _c in samples["python -c pass"]),
        "cpu": min(c for _w, c in samples["python -c pass"]),
    }
    trip = statistics.median(trips)
    print(f"{'command':<30} {'wall ms':>8} {'cpu ms':>8}  x pass (wall / cpu)  x kernel trip")
    for name, values in samples.items():
        wall = statistics.median(w for w, _c in values)
        cpu = min(c for _w, c in values)
        print(
            f"{name:<30} {wall * 1000:8.1f} {cpu * 1000:8.1f}  "
            f"{wall / bare['wall']:6.2f}x / {cpu / bare['cpu']:5.2f}x  {wall / trip:10.1f}x"
        )
    print(f"{'kernel round trip (in process)':<30} {trip * 1000:8.1f}")
    wall = statistics.median(w for w, _c in samples[EXEC_ROW])
    print(f"\nj-cli exec on the example's live kernel: {wall * 1000:.1f} ms wall median "
          f"(target {TARGET * 1000:.0f} ms): {'PASS' if wall <= TARGET else 'FAIL'}; "
          f"Python start-up is {bare['wall'] / wall:.0%} of it")  # fmt: skip
    print(f"its overhead over the kernel's round trip: {(wall - trip) * 1000:.1f} ms, of which "
          f"Python start-up is {bare['wall'] / (wall - trip):.0%}")  # fmt: skip
    run = statistics.median(w for w, _c in samples[RUN_ROW])
    print(f"j-cli run --stale with nothing stale: {run * 1000:.1f} ms wall median")
    return 0 if wall <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
