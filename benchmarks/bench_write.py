"""Write-path cost of keeping every value exact (``notebook._writebase``).

Run from the repository root with the project's environment::

    uv run python benchmarks/bench_write.py [--runs 7]

For real notebooks of the corpus, each in three forms, it times one ``Document.update_cell``
(a source edit of one cell, on a notebook whose names are already stored, so the edit writes
only that cell), median over ``--runs`` runs in this process:

- ``jupyter``: the file as Jupyter wrote it: the read path's values reproduce the file, so the
  write needs no second parse (the fast proof);
- ``big-int``: the same with one integer beyond 64 bits in the notebook metadata: the write
  parses the file again with the lossless parser;
- ``v3``: the notebook written as nbformat 3 by nbformat (kept as nbformat 3 on write).

It also prints the time of the read path's parse of each file (orjson, ``parse_notebook``)
and of the lossless parse alone, for scale. Results depend on the machine: compare figures
from one run only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "tests" / "fixtures" / "notebooks"
CORPUS = ["02.08-Sorting.ipynb", "04.03-Errorbars.ipynb", "05.11-K-Means.ipynb"]


def _forms(folder: Path, name: str) -> dict[str, Path]:
    import nbformat

    source = NOTEBOOKS / name
    jupyter = folder / f"jupyter-{name}"
    shutil.copyfile(source, jupyter)
    notebook = json.loads(source.read_text(encoding="utf-8"))
    notebook["metadata"]["bench_big"] = 2**70 + 1
    big = folder / f"big-{name}"
    big.write_text(
        json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n", "utf-8"
    )
    v3 = folder / f"v3-{name}"
    v3.write_text(nbformat.writes(nbformat.read(str(source), as_version=4), version=3), "utf-8")
    return {"jupyter": jupyter, "big-int": big, "v3": v3}


def _time_update(path: Path, runs: int) -> float:
    from jupyter_jcli.notebook.document import Document

    document = Document.load(path)
    document.add_cell("warm = 0", position="end")  # stores every name once
    seconds = []
    for run in range(runs):
        document = Document.load(path)
        target = document.cells[-1]
        start = time.perf_counter()
        document.update_cell(target.name, expected_rev=target.rev, source=f"warm = {run + 1}")
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def _time_parse(path: Path, runs: int, *, exact: bool) -> float:
    from jupyter_jcli.notebook.io import parse_notebook

    raw = path.read_bytes()
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        parse_notebook(raw, path=path, exact=exact)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["JUPYTER_JCLI_CACHE_DIR"] = str(Path(tmp) / "cache")
        print(f"{'notebook':<24} {'form':<8} {'MB':>5} {'read ms':>8} {'exact ms':>9} "
              f"{'update ms':>10}")  # fmt: skip
        for name in CORPUS:
            for form, path in _forms(Path(tmp), name).items():
                size = path.stat().st_size / 1e6
                read = _time_parse(path, args.runs, exact=False) * 1e3
                exact = _time_parse(path, args.runs, exact=True) * 1e3
                update = _time_update(path, args.runs) * 1e3
                print(f"{name[:24]:<24} {form:<8} {size:5.2f} {read:8.1f} {exact:9.1f} "
                      f"{update:10.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
