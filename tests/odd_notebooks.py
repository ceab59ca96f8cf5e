"""Shared by the refused-write tests (``tests/cli``, ``tests/notebook``): a real notebook with a
cell of a type the analysis refuses, and a fingerprint of everything a write could touch."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

__all__ = ["SORTING", "folder_and_snapshots", "with_odd_cell"]

NOTEBOOKS = Path(__file__).parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"


def with_odd_cell(tmp_path: Path, odd: str | None) -> Path:
    """The Sorting notebook in ``tmp_path/work``; with ``odd``, Jupyter style with its cell 3 of
    type ``odd`` (``""``: no ``cell_type`` at all); with ``None``, as shipped."""
    folder = tmp_path / "work"
    folder.mkdir()
    path = folder / SORTING
    shutil.copyfile(NOTEBOOKS / SORTING, path)
    if odd is not None:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        if odd:
            notebook["cells"][3]["cell_type"] = odd
        else:
            del notebook["cells"][3]["cell_type"]
        text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")
    return path


def folder_and_snapshots(path: Path, cache: Path) -> tuple[dict[str, str], list[str]]:
    """Every file of the notebook's folder (with its hash) and every snapshot entry."""
    files = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.parent.iterdir())
    }
    return files, sorted(str(p.relative_to(cache)) for p in cache.glob("snapshots/*/0*/**/*"))
