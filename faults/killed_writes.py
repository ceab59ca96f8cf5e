"""Fault harness (issue 9 item 8, temporary files): SIGKILL a writer mid-write, ``--kills``
times, then count the temporary files left beside the notebook, and how many survive the
next write once they are older than a minute (their modification time is set back 61 s, as
if a minute had passed). Each writer is a forked child (imports done) rewriting a 2 MB cell
in a loop; it is killed at a random moment of its first writes. Bounded by ``--kills`` and
``--seconds``. Not collected by pytest.

Run: ``python3 -m uv run python faults/killed_writes.py [--kills 200]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import tempfile
import time
from pathlib import Path

NOTEBOOK = Path(__file__).parent.parent / "tests" / "fixtures" / "notebooks" / "02.08-Sorting.ipynb"
PADDING = "# padding line of a big cell\n" * 70_000  # about 2 MB


def _temporaries(folder: Path, name: str) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(f".{name}.") and p.suffix == ".tmp"]


def _writer(path: Path) -> None:
    from jupyter_jcli.notebook.document import Document

    i = 0
    while True:
        document = Document.load(path)
        cell = document.cell("big")
        document.update_cell(
            "big", expected_rev=cell.rev, source=f"# {os.getpid()} {i}\n" + PADDING
        )
        i += 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=400.0)
    options = parser.parse_args()
    from jupyter_jcli.notebook.document import Document

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["JUPYTER_JCLI_CACHE_DIR"] = str(base / "cache")
        path = base / "nb" / NOTEBOOK.name
        path.parent.mkdir()
        shutil.copyfile(NOTEBOOK, path)
        Document.load(path).add_cell("# start\n" + PADDING, name="big")
        deadline = time.monotonic() + options.seconds
        kills = 0
        rng = random.Random(9)
        while kills < options.kills and time.monotonic() < deadline:
            pid = os.fork()
            if pid == 0:  # the child: write until killed
                try:
                    _writer(path)
                finally:
                    os._exit(1)
            time.sleep(rng.uniform(0.05, 1.5))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            kills += 1
        left = _temporaries(path.parent, path.name)
        size = sum(p.stat().st_size for p in left)
        then = time.time() - 61
        for p in left:
            os.utime(p, (then, then))
        document = Document.load(path)
        cell = document.cell("big")
        document.update_cell("big", expected_rev=cell.rev, source="# after\n")
        survivors = _temporaries(path.parent, path.name)
        json.loads(path.read_text(encoding="utf-8"))  # the notebook is whole
    print(
        json.dumps(
            {
                "kills": kills,
                "temporary_files_after_kills": len(left),
                "temporary_bytes_after_kills": size,
                "temporary_files_after_next_write": len(survivors),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
