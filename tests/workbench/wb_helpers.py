"""Helpers of the workbench tests: copy real notebooks, build small ones, fingerprint folders.

Imported by the test modules of this folder as ``wb_helpers`` (pytest puts the folder on
``sys.path``); also used by ``tests/cli/test_document_cli.py``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from jupyter_jcli.kernels import KernelPool
from jupyter_jcli.workbench import Workbench
from kernel_fakes import python_backend

NOTEBOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "notebooks"


def copy_fixture(name: str, folder: Path) -> Path:
    """Copy a real notebook from tests/fixtures/notebooks into ``folder``."""
    target = folder / name
    shutil.copyfile(NOTEBOOKS / name, target)
    return target


def make_notebook(folder: Path, sources: Sequence[str | tuple[str, str]], name: str = "nb") -> Path:
    """An nbformat 4.5 notebook of code cells (``(type, source)`` for other types), unnamed,
    written as Jupyter writes it (indent 1)."""
    cells = []
    for number, item in enumerate(sources):
        cell_type, source = ("code", item) if isinstance(item, str) else item
        cell: dict[str, object] = {
            "cell_type": cell_type,
            "id": f"cell-{number}",
            "metadata": {},
            "source": source,
        }
        if cell_type == "code":
            cell["execution_count"] = None
            cell["outputs"] = []
        cells.append(cell)
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


def tree_state(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative path -> sha256), to prove nothing was written."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def fake_workbench(cache_dir: Path) -> Workbench:
    """A Workbench whose kernels are the in-process fake
    (:func:`kernel_fakes.python_backend`): no ipykernel, no process."""
    return Workbench(cache_dir=cache_dir, pool=KernelPool(backend_factory=python_backend))
