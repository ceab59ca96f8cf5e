"""Fault campaign: SIGKILL ``j-cli cell update`` at random points of its run, many times.

Each round, on a copy of a real notebook with its own snapshot cache:

1. start ``j-cli cell update`` (a new source for one code cell) and SIGKILL it: in a quarter
   of the rounds at a random time of its run, in the others at a random time of its write
   (polling for the first snapshot folder or temporary file it creates, then waiting up to
   1.5 times the write's measured duration), so kills land before, during and after the
   snapshot and the notebook write;
2. check that the notebook still parses (*corrupt* otherwise);
3. undo (``undo_last``, as ``j-cli notebook undo``): ``UNDO_CONFLICT`` although nothing
   changed outside counts as *undo stuck* (the round then forces the undo to go on);
4. make the next write (an unkilled ``update_cell``) and count what is left: our
   temporary files beside the notebook (``.<name>.*.tmp``) and snapshot folders that are not
   complete snapshots (no readable manifest, or pending).

Prints one JSON document with the counts. Not a test (pytest does not collect ``faults/``);
run it against a checkout: ``python3 -m uv run python faults/kill_campaign.py --kills 200``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_NOTEBOOK = ROOT / "tests" / "fixtures" / "notebooks" / "03.09-Pivot-Tables.ipynb"
TIMEOUT = 120.0


def killable_update(
    env: dict[str, str], notebook: Path, name: str, source: str
) -> subprocess.Popen[bytes]:
    """Start ``j-cli -j cell update`` of cell ``name`` with this interpreter's package."""
    from jupyter_jcli.notebook.document import Document

    rev = Document.load(notebook).cell(name).rev
    code = "import sys; from jupyter_jcli.cli import main; sys.argv[0] = 'j-cli'; main()"
    args = ["cell", "update", str(notebook), name, "--expected-rev", rev, "--source", source]
    return subprocess.Popen(
        [sys.executable, "-c", code, "-j", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def write(notebook: Path, name: str, source: str) -> None:
    """An unkilled update, in this process."""
    from jupyter_jcli.workbench import update_cell

    update_cell(notebook, name, expected_rev=_rev(notebook, name), source=source)


def _rev(notebook: Path, name: str) -> str:
    from jupyter_jcli.notebook.document import Document

    return Document.load(notebook).cell(name).rev


def undo_is_stuck(notebook: Path) -> bool:
    """Undo once; ``True`` when it refuses with ``UNDO_CONFLICT`` (then forced through)."""
    from jupyter_jcli.errors import JcliError
    from jupyter_jcli.workbench import undo_last

    try:
        undo_last(notebook)
    except JcliError as err:
        if err.code != "UNDO_CONFLICT":
            return False
        undo_last(notebook, force=True)
        return True
    return False


def parses(notebook: Path) -> bool:
    try:
        document = json.loads(notebook.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(document, dict) and isinstance(document.get("cells"), list)


def temp_files(notebook: Path) -> list[Path]:
    return sorted(notebook.parent.glob(f".{notebook.name}.*.tmp"))


def incomplete_snapshots(cache: Path) -> int:
    """Folders of the snapshot stacks that are not complete snapshots."""
    count = 0
    for stack in (cache / "snapshots").glob("*"):
        for entry in stack.iterdir():
            if not entry.is_dir():
                continue
            manifest = entry / "manifest.json"
            complete = entry.name.isdigit() and manifest.is_file()
            if complete:
                try:
                    json.loads(manifest.read_bytes())
                except ValueError:
                    complete = False
            count += not complete
    return count


def write_started(notebook: Path, cache: Path, before: set[str]) -> bool:
    """Whether the update has started writing: a new snapshot folder or a temporary file."""
    return bool(stack_entries(cache) - before) or bool(temp_files(notebook))


def stack_entries(cache: Path) -> set[str]:
    """``<stack>/<entry>`` of everything in the snapshot stacks."""
    stacks = list((cache / "snapshots").glob("*"))
    return {f"{stack.name}/{entry.name}" for stack in stacks for entry in stack.iterdir()}


def wait_for_write(
    process: subprocess.Popen[bytes], notebook: Path, cache: Path, before: set[str]
) -> float | None:
    """Poll (1 ms) until the update starts writing; its time, or ``None`` if it exited."""
    started = time.monotonic()
    while process.poll() is None and time.monotonic() - started < TIMEOUT:
        if write_started(notebook, cache, before):
            return time.monotonic() - started
        time.sleep(0.001)
    return None


def measure(
    env: dict[str, str], notebook: Path, cache: Path, name: str, runs: int
) -> tuple[float, float]:
    """Medians of an unkilled ``j-cli cell update``: its wall time, and how long it writes
    (from the first snapshot folder or temporary file to the notebook's new mtime)."""
    spans, writes = [], []
    for number in range(runs):
        before, mtime = stack_entries(cache), notebook.stat().st_mtime_ns
        started = time.monotonic()
        process = killable_update(env, notebook, name, f"measured = {number}")
        first = wait_for_write(process, notebook, cache, before)
        while process.poll() is None and notebook.stat().st_mtime_ns == mtime:
            time.sleep(0.001)
        written = time.monotonic() - started
        if process.wait(timeout=TIMEOUT) != 0:
            raise SystemExit("an unkilled update failed")
        spans.append(time.monotonic() - started)
        if first is not None:
            writes.append(max(written - first, 0.001))
    return statistics.median(spans), statistics.median(writes) if writes else 0.05


def campaign(kills: int, notebook_source: Path, seed: int) -> dict[str, Any]:
    """Run the rounds (module docstring) and return the counts."""
    from jupyter_jcli.notebook.document import Document

    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="kill-campaign-"))
    try:
        notebook = work / "nb" / notebook_source.name
        notebook.parent.mkdir()
        shutil.copyfile(notebook_source, notebook)
        cache = work / "cache"
        os.environ["JUPYTER_JCLI_CACHE_DIR"] = str(cache)
        env = dict(os.environ)
        name = next(view.name for view in Document.load(notebook).cells if view.cell_type == "code")
        span, writing = measure(env, notebook, cache, name, 3)
        counts: dict[str, Any] = {
            "kills": kills,
            "killed_while_running": 0,
            "undo_stuck": 0,
            "temp_files_left_after_next_write": 0,
            "rounds_with_temp_files_left": 0,
            "incomplete_snapshot_folders_after_next_write": 0,
            "corrupt_files": 0,
        }
        for number in range(kills):
            before = stack_entries(cache)
            process = killable_update(env, notebook, name, f"killed = {number}")
            if rng.random() < 0.25:  # anywhere in the run
                time.sleep(rng.uniform(0.0, span * 1.1))
            elif wait_for_write(process, notebook, cache, before) is not None:  # mid-write
                time.sleep(rng.uniform(0.0, writing * 1.5))
            if process.poll() is None:
                counts["killed_while_running"] += 1
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=TIMEOUT)
            if not parses(notebook):
                counts["corrupt_files"] += 1
                shutil.copyfile(notebook_source, notebook)
            counts["undo_stuck"] += undo_is_stuck(notebook)
            write(notebook, name, f"next = {number}")
            left = temp_files(notebook)
            counts["temp_files_left_after_next_write"] += len(left)
            counts["rounds_with_temp_files_left"] += bool(left)
            for path in left:  # count each kill's leftovers once
                path.unlink()
            counts["incomplete_snapshot_folders_after_next_write"] += incomplete_snapshots(cache)
            print(number + 1, json.dumps(counts), file=sys.stderr, flush=True)
            for stack in (cache / "snapshots").glob("*"):
                for entry in stack.iterdir():
                    if entry.is_dir() and not (entry / "manifest.json").is_file():
                        shutil.rmtree(entry)
        counts["corrupt_files"] += not parses(notebook)
        counts["unkilled_update_seconds"] = round(span, 3)
        counts["write_seconds"] = round(writing, 4)
        return counts
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200, help="rounds (default 200)")
    parser.add_argument("--notebook", type=Path, default=DEFAULT_NOTEBOOK, help="notebook to copy")
    parser.add_argument("--seed", type=int, default=9, help="random seed of the kill delays")
    args = parser.parse_args()
    counts = campaign(args.kills, args.notebook, args.seed)
    counts["notebook"] = args.notebook.name
    print(json.dumps(counts, indent=1))


if __name__ == "__main__":
    main()
