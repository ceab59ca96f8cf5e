"""Fault harness (issue 9 item 8, temporary files): SIGKILL a writer mid-write, ``--kills``
times, then count the temporary files left beside the notebook, and how many survive the
next write once they are older than a minute (their modification time is set back 61 s, as
if a minute had passed). Bounded by ``--kills`` and ``--seconds``. Not collected by pytest.

Run: ``python3 -m uv run python faults/killed_writes.py [--kills 200]``
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

_WRITER = """
import sys
from jupyter_jcli.notebook.document import Document
padding = "# padding\\n" * 2000
Document.load(sys.argv[1]).add_cell("first = 0\\n" + padding)
print("ready", flush=True)  # imports done, one write made: the next ones are killed
i = 0
while True:
    Document.load(sys.argv[1]).add_cell(f"w = {i}\\n" + padding)
    i += 1
"""

NOTEBOOK = Path(__file__).parent.parent / "tests" / "fixtures" / "notebooks" / "02.08-Sorting.ipynb"


def _temporaries(folder: Path, name: str) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(f".{name}.") and p.suffix == ".tmp"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=500.0)
    options = parser.parse_args()
    from jupyter_jcli.notebook.document import Document

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["JUPYTER_JCLI_CACHE_DIR"] = str(base / "cache")
        path = base / "nb" / NOTEBOOK.name
        path.parent.mkdir()
        shutil.copyfile(NOTEBOOK, path)
        deadline = time.monotonic() + options.seconds
        kills = 0
        rng = random.Random(9)
        while kills < options.kills and time.monotonic() < deadline:
            writer = subprocess.Popen(
                [sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True
            )
            assert writer.stdout is not None
            writer.stdout.readline()
            time.sleep(rng.uniform(0.0, 0.2))
            writer.send_signal(signal.SIGKILL)
            writer.wait(30)
            kills += 1
        left = _temporaries(path.parent, path.name)
        size = sum(p.stat().st_size for p in left)
        then = time.time() - 61
        for p in left:
            os.utime(p, (then, then))
        Document.load(path).add_cell("after = 1")
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
