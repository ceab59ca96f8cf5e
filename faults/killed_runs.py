"""Fault harness (issue 27 item 2): kill ``j-cli -j run`` of a multi-cell notebook at random
moments, ``--kills`` times, and check that every cell that finished before the kill kept its
outputs, in a notebook that is never half-written.

Each round, on a fresh copy of one notebook of ten cells (each sleeps 0 to 3 s, prints
``cell N``, then appends ``N <time>`` to a side file: when its code finished), with its own
kernel registry and cache folders (no other kernel on the machine is touched):

1. picks a kernel (``own``: started by the run for itself; ``live``: ``j-cli kernel start``
   first) and a signal (SIGHUP, SIGTERM or SIGKILL);
2. starts the run and sends the signal at a random moment of an unkilled run's measured span
   on such a kernel (start-up included, so some kills land before any cell ran, some during
   writes; a few after the run ended: *ended_before_kill*);
3. waits (bounded) for the command to end, then checks the notebook: it parses and is valid
   nbformat (else *corrupt*); each cell that finished before the kill has its ``cell N``
   output (else *lost*). A cell whose code ended less than :data:`RACE` s before the kill may
   still have been on its way back to the command (*racing*: not counted as lost). After a
   SIGKILL, a cell that ended less than the save interval plus :data:`WRITE_SLACK` s before
   the kill may not be written yet, by design (*in_window*: counted apart); one that ended
   earlier and is missing is *lost*. Also counted: saved outputs of a cell that never
   finished (*saved_unfinished*), run records (``live``) of cells whose outputs are not
   saved (*recorded_unsaved*: a record must never claim more than the file holds), our
   temporary files left beside the notebook, and commands that did not end in time
   (*hung*: then SIGKILLed).

Measured on the 2-core development machine under load (``--kills 30``, seed 27: 12 SIGKILL,
11 SIGTERM, 7 SIGHUP; 10 own, 20 live, 8 of them through the warm exec server that
was retired since): 127 cells finished before a kill,
114 saved, 0 lost, 2 racing, 11 in_window (SIGKILL only), 0 corrupt, 0 records without
saved outputs, 0 temporary files left, 0 hung. The same harness on the code that wrote only
when a run ended (10 kills): 39 finished, 21 saved, 5 lost, 13 records without saved
outputs.

Prints the running counts on stderr and one JSON document with the totals on stdout. Not a
test (pytest does not collect ``faults/``); run it against a checkout:
``python3 -m uv run python faults/killed_runs.py --kills 30``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DURATIONS = (0.0, 0.05, 0.0, 1.2, 0.1, 2.6, 0.0, 0.3, 3.0, 0.05)
"""Seconds each cell sleeps: quick runs (batched writes) and slow cells (a write each)."""
RACE = 0.25
"""Seconds before a kill within which a finished cell's reply may still be in flight."""
WRITE_SLACK = 0.75
"""Seconds a batched write may take past the save interval on a loaded machine."""
TIMEOUT = 120.0
"""Seconds any one command may take (a kernel start on a loaded machine included)."""
SIGNALS = {"SIGHUP": signal.SIGHUP, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
MODES = ("own", "live")
SCRIPT = str(Path(sys.executable).parent / "j-cli")


def make_notebook(folder: Path, finished: Path) -> Path:
    """``folder/runs.ipynb``: one code cell per :data:`DURATIONS` entry, named ``cell-N``."""
    import nbformat

    cells = [
        nbformat.v4.new_code_cell(
            f"# cell {n}\nimport time\ntime.sleep({seconds})\nprint('cell {n}')\n"
            f"with open({str(finished)!r}, 'a') as f:\n    f.write(f'{n} {{time.time()}}\\n')"
        )
        for n, seconds in enumerate(DURATIONS)
    ]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    path = folder / "runs.ipynb"
    nbformat.write(notebook, path)
    return path


def jcli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [SCRIPT, *args], env=env, cwd=cwd, capture_output=True, timeout=TIMEOUT, check=False
    )


def finish_times(finished: Path) -> dict[int, float]:
    """Cell number -> when its code ended (``time.time()``), from the side file."""
    times: dict[int, float] = {}
    if finished.exists():
        for line in finished.read_text(encoding="utf-8").splitlines():
            number, _, when = line.partition(" ")
            if number.isdigit() and when:
                times[int(number)] = float(when)
    return times


def saved_cells(path: Path) -> set[int] | None:
    """The cells whose ``cell N`` output is saved, or None when the notebook is not whole."""
    import nbformat

    try:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
    except Exception:
        return None
    saved = set()
    for n, cell in enumerate(notebook.cells):
        text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
        if f"cell {n}\n" in text:
            saved.add(n)
    return saved


def recorded_cells(path: Path) -> set[int]:
    """The cells the registry records as run on the notebook's live kernel (by name)."""
    from jupyter_jcli.kernels import KernelRegistry

    names = {f"cell-{n}": n for n in range(len(DURATIONS))}
    return {names[r["key"]] for r in KernelRegistry().runs(path.resolve()) if r["key"] in names}


def temp_files(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f".{path.name}.*.tmp"))


def one_round(
    env: dict[str, str], work: Path, mode: str, kill: signal.Signals, delay: float
) -> dict[str, Any]:
    """One kill; the round's counts."""
    folder = Path(tempfile.mkdtemp(prefix="round-", dir=work))
    finished = folder / "finished.txt"
    path = make_notebook(folder, finished)
    env = dict(env)
    counts: dict[str, Any] = dict.fromkeys(
        ("ended_before_kill", "finished", "saved", "lost", "racing", "in_window",
         "saved_unfinished", "recorded_unsaved", "temp_files", "corrupt", "hung"), 0,
    )  # fmt: skip
    try:
        if mode != "own":
            done = jcli(env, folder, "-j", "kernel", "start", str(path))
            if done.returncode != 0:
                raise SystemExit(f"kernel start failed: {done.stdout!r}")
            jcli(env, folder, "-j", "exec", str(path), "--code", "pass")  # warms the server
        process = subprocess.Popen(
            [SCRIPT, "-j", "run", str(path)], env=env, cwd=folder,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(delay)
        killed_at = time.time()
        counts["ended_before_kill"] = int(process.poll() is not None)
        process.send_signal(kill)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            counts["hung"] += 1
            process.kill()
            process.wait(timeout=TIMEOUT)
        saved = saved_cells(path)
        if saved is None:
            counts["corrupt"] += 1
            saved = set()
        window = RACE if kill != signal.SIGKILL else save_interval() + WRITE_SLACK
        times = finish_times(finished)
        before = {n for n, when in times.items() if when <= killed_at}
        counts["finished"] = len(before)
        counts["saved"] = len(before & saved)
        for n in before - saved:
            age = killed_at - times[n]
            if age < RACE:
                counts["racing"] += 1
            elif age < window:
                counts["in_window"] += 1
            else:
                counts["lost"] += 1
        counts["saved_unfinished"] = len(saved - set(times))
        if mode != "own":
            counts["recorded_unsaved"] = len(recorded_cells(path) - saved)
        counts["temp_files"] = len(temp_files(path))
    finally:
        jcli(env, folder, "-j", "kernel", "stop", "--all")
    return counts


def save_interval() -> float:
    """The checkout's save interval (2 s where a checkout has none: one that writes only
    when a run ends, which this harness also measures)."""
    try:
        from jupyter_jcli.workbench._batch_save import SAVE_INTERVAL
    except ImportError:
        return 2.0
    return SAVE_INTERVAL


def measure(env: dict[str, str], work: Path, *, live: bool) -> float:
    """The wall time of an unkilled run, on its own kernel or (``live``) on a kernel started
    before it; the run must save every cell."""
    folder = Path(tempfile.mkdtemp(prefix="measure-", dir=work))
    path = make_notebook(folder, folder / "finished.txt")
    try:
        if live:
            jcli(env, folder, "-j", "kernel", "start", str(path))
            jcli(env, folder, "-j", "exec", str(path), "--code", "pass")
        started = time.monotonic()
        done = jcli(env, folder, "-j", "run", str(path))
        span = time.monotonic() - started
    finally:
        jcli(env, folder, "-j", "kernel", "stop", "--all")
    if done.returncode != 0 or saved_cells(path) != set(range(len(DURATIONS))):
        raise SystemExit(f"an unkilled run did not save every cell: {done.stdout!r}")
    return span


def campaign(kills: int, seed: int) -> dict[str, Any]:
    """Run the rounds (module docstring) and return the totals."""
    from jupyter_jcli.kernels import RUNTIME_DIR_ENV

    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="killed-runs-"))
    try:
        os.environ[RUNTIME_DIR_ENV] = str(work / "runtime")
        os.environ["JUPYTER_JCLI_CACHE_DIR"] = str(work / "cache")
        env = dict(os.environ)
        spans = {"own": measure(env, work, live=False), "live": measure(env, work, live=True)}
        totals: dict[str, Any] = {"kills": 0, "by_signal": {}, "by_mode": {}}
        for number in range(kills):
            mode = rng.choice(MODES)
            name = rng.choice(sorted(SIGNALS))
            delay = rng.uniform(0.0, spans["own" if mode == "own" else "live"])
            counts = one_round(env, work, mode, SIGNALS[name], delay)
            totals["kills"] += 1
            totals["by_signal"][name] = totals["by_signal"].get(name, 0) + 1
            totals["by_mode"][mode] = totals["by_mode"].get(mode, 0) + 1
            for key, value in counts.items():
                totals[key] = totals.get(key, 0) + value
            line = {"round": number + 1, "mode": mode, "signal": name, "delay": round(delay, 2)}
            print(json.dumps({**line, **counts}), file=sys.stderr, flush=True)
        totals["unkilled_run_seconds"] = {mode: round(span, 2) for mode, span in spans.items()}
        totals["save_interval_seconds"] = save_interval()
        return totals
    finally:
        env = dict(os.environ)
        jcli(env, work, "-j", "kernel", "stop", "--all")
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=30, help="rounds (default 30)")
    parser.add_argument("--seed", type=int, default=27, help="random seed of the choices")
    args = parser.parse_args()
    print(json.dumps(campaign(args.kills, args.seed), indent=1))


if __name__ == "__main__":
    main()
