"""An ``.ipynb`` paired by plain extensions (``ipynb,md``, ``ipynb,py:percent``) whose text
file is absent loads alone without importing jupytext (``_pairs.absent_text_pairs``), and in
every case pairs exactly the files jupytext's own expansion pairs."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_jcli.notebook import _pairs
from jupyter_jcli.notebook._open import Confinement, confined
from jupyter_jcli.notebook.document import Document

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "notebooks"
PAIRED = "05.04-Feature-Engineering.ipynb"
"""A fixture whose own metadata pairs it as ``ipynb,md`` (its ``.md`` is not shipped)."""
TIMEOUT = 120

FORMATS = [
    "ipynb,md",
    "md,ipynb",
    "ipynb,py:percent",
    "ipynb,py:light",
    "ipynb,py",
    "ipynb,md:myst",
    "ipynb,Rmd",
    "ipynb,qmd",
    "ipynb,R:percent",
    "ipynb,jl:percent",
    "ipynb,py:percent,md",
    "py:percent,md",  # does not cover the notebook: jupytext pairs nothing
    "ipynb,py:nosuchformat",  # jupytext rejects it: nothing pairs
    # forms only jupytext expands
    "ipynb,auto:percent",
    "notebooks//ipynb,scripts//py:percent",
    "ipynb,.pct.py:percent",
    "ipynb, md",
    "ipynb,markdown",
    "ipynb,script",
    "ipynb,,md",
]
SIBLINGS = ["md", "py", "Rmd", "qmd", "R", "jl", "pct.py"]


def _with_formats(folder: Path, formats: str) -> Path:
    path = folder / "nb.ipynb"
    document = json.loads((FIXTURES / PAIRED).read_text(encoding="utf-8"))
    document["metadata"]["jupytext"] = {"formats": formats}
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


def _by_jupytext(path: Path, metadata: object) -> list[tuple[Path, dict[str, object]]]:
    """What the pairing was before the shortcut: jupytext's expansion, existing files."""
    return [(p, fmt) for p, fmt in _pairs.text_candidates(path, metadata) if p.is_file()]


@pytest.mark.parametrize("formats", FORMATS)
def test_the_pairs_found_are_jupytexts_with_any_sibling_present(
    tmp_path: Path, formats: str
) -> None:
    path = _with_formats(tmp_path, formats)
    metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"]
    for count in range(3):
        for present in itertools.combinations(SIBLINGS, count):
            for stale in tmp_path.glob("nb.*"):
                if stale != path:
                    stale.unlink()
            for extension in present:
                (tmp_path / f"nb.{extension}").write_text("# %%\nx = 1\n", encoding="utf-8")
            assert _pairs.paired_text_files(path, metadata) == _by_jupytext(path, metadata), (
                formats,
                present,
            )


def test_a_sibling_linked_outside_the_confinement_still_counts_without_jupytext(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    path = _with_formats(root, "ipynb,md")
    outside = tmp_path / "outside.md"
    outside.write_text("x\n", encoding="utf-8")
    os.symlink(outside, root / "nb.md")
    metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"]
    with confined(Confinement((root.resolve(),))):
        assert _pairs.absent_text_pairs(path, metadata) is None
        assert [p for p, _ in _pairs.paired_text_files(path, metadata)] == [root / "nb.md"]


def test_a_paired_notebook_without_its_text_file_loads_without_importing_jupytext(
    tmp_path: Path,
) -> None:
    notebook = tmp_path / PAIRED
    shutil.copyfile(FIXTURES / PAIRED, notebook)
    script = (
        "import sys\n"
        "from jupyter_jcli.notebook.document import Document\n"
        "document = Document.load(sys.argv[1])\n"
        "assert document.paired_py is None\n"
        "heavy = sorted(m for m in ('jupytext', 'nbformat') if m in sys.modules)\n"
        "print(len(document.cells), heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(notebook)],
        capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    count, imported = done.stdout.split(" ", 1)
    assert int(count) > 0
    assert imported.strip() == "[]"


def test_the_same_notebook_with_its_text_file_is_read_as_the_pair(tmp_path: Path) -> None:
    import jupytext

    notebook = tmp_path / PAIRED
    shutil.copyfile(FIXTURES / PAIRED, notebook)
    text = notebook.with_suffix(".md")
    text.write_text(jupytext.writes(jupytext.read(notebook), fmt="md"), encoding="utf-8")
    assert Document.load(notebook).paired_py == text
