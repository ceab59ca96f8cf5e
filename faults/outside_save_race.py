"""Fault harness (issue 9 item 5): saves by another program racing jupyter-jcli's mutations.

One process mutates a notebook through ``Document`` (``add_cell`` in a loop, as ``j-cli cell
add`` does); another saves the same notebook as an editor does (read, add a cell with a unique
marker, write a temporary file, ``os.replace``), ``--saves`` times. An outside save is lost
when its marker is missing from the final file: only a jupyter-jcli write can drop it (the
outside writer always keeps what it read). Bounded by ``--saves`` and ``--seconds``. Not
collected by pytest.

Run: ``python3 -m uv run python faults/outside_save_race.py [--saves 300]``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import tempfile
import time
from pathlib import Path
from typing import Any


def _ours(path: str, stop: Any, done: Any) -> None:
    from jupyter_jcli.errors import JcliError
    from jupyter_jcli.notebook.document import Document

    written = reloaded = 0
    errors: dict[str, int] = {}
    while not stop.is_set():
        try:
            result = Document.load(path).add_cell(f"ours = {written}")
            written += 1
            reloaded += result.reloaded
        except JcliError as err:
            errors[str(err.code)] = errors.get(str(err.code), 0) + 1
    done.put({"ours_written": written, "ours_refused": errors, "ours_reloaded": reloaded})


def _outside_save(path: Path, marker: str) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["cells"].append(
        {"cell_type": "markdown", "id": marker, "metadata": {}, "source": marker}
    )
    tmp = path.with_name(f".~{path.name}")
    tmp.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saves", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--interval", type=float, default=0.01, help="seconds between saves")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["JUPYTER_JCLI_CACHE_DIR"] = str(base / "cache")
        path = base / "nb.ipynb"
        empty = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}
        path.write_text(json.dumps(empty), encoding="utf-8")
        stop, done = multiprocessing.Event(), multiprocessing.Queue()
        ours = multiprocessing.Process(target=_ours, args=(str(path), stop, done))
        ours.start()
        time.sleep(1.0)  # let it import and start writing
        deadline = time.monotonic() + options.seconds
        markers: list[str] = []
        for k in range(options.saves):
            if time.monotonic() > deadline:
                break
            marker = f"outside-{k}"
            _outside_save(path, marker)
            markers.append(marker)
            time.sleep(options.interval)
        time.sleep(0.5)
        stop.set()
        ours_counts = done.get(timeout=60)
        ours.join(30)
        final = json.loads(path.read_text(encoding="utf-8"))
        present = {"".join(cell.get("source", "")) for cell in final["cells"]}
        lost = [m for m in markers if m not in present]
        leftovers = [p.name for p in base.iterdir() if p.name not in ("nb.ipynb", "cache")]
    print(
        json.dumps(
            {
                "outside_saves": len(markers),
                "outside_saves_lost": len(lost),
                **ours_counts,
                "temporary_files_left": leftovers,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
