"""The warm path (``notebook._warm``): an unchanged notebook is parsed once, every outside
change is seen, a failed write leaves the cache as the file is; and writes in proportion
(``notebook._layout``): a spliced write gives the bytes of a whole serialisation.

Parses are counted by a spy on ``read_target`` (the one function that reads and parses a
notebook for a load). Every test uses real notebooks from tests/fixtures copied into
``tmp_path``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook import _loaded, _warm
from jupyter_jcli.notebook._jsonstyle import detect_style, dumps_notebook
from jupyter_jcli.notebook._open import Confinement
from jupyter_jcli.notebook._views import CellView, MutationResult
from jupyter_jcli.notebook._warm import DocumentCache, warm
from jupyter_jcli.notebook._writebase import write_base
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.io import parse_notebook

NOTEBOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "notebooks"
FIXTURE = "03.05-Hierarchical-Indexing.ipynb"
CTIME_TICK_TRIES = 100_000
"""Rewrites of the same bytes tried until the file's change time moves (a coarse clock)."""


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every path ``read_target`` read and parsed for a load, in order."""
    seen: list[Path] = []
    real = _loaded.read_target

    def spy(target: Path, **kwargs: Any) -> Any:
        seen.append(target)
        return real(target, **kwargs)

    monkeypatch.setattr(_loaded, "read_target", spy)
    return seen


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DocumentCache]:
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(tmp_path / "snapshots"))
    documents = DocumentCache()
    with warm(documents):
        yield documents


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    target = tmp_path / FIXTURE
    shutil.copyfile(NOTEBOOKS / FIXTURE, target)
    return target


def _same_size_edit(path: Path) -> bytes:
    """Change one character of the first code cell's source in place, size kept."""
    raw = path.read_bytes()
    source = json.loads(raw)["cells"][1]["source"][0]
    position = raw.index(json.dumps(source)[1:-1].encode())
    edited = bytearray(raw)
    edited[position] = ord("Z") if edited[position] != ord("Z") else ord("Y")
    return bytes(edited)


def _rewrite_until_ctime_moves(path: Path, data: bytes) -> None:
    """Write ``data`` over ``path`` in place until its ctime differs from before (bounded)."""
    before = os.stat(path).st_ctime_ns
    for _ in range(CTIME_TICK_TRIES):
        with path.open("r+b") as handle:
            handle.write(data)
        if os.stat(path).st_ctime_ns != before:
            return
    raise AssertionError("the file's ctime never moved")


def test_an_unchanged_notebook_is_parsed_once_while_a_cache_is_active(
    cache: DocumentCache, notebook: Path, parses: list[Path]
) -> None:
    first = Document.load(notebook)
    again = [Document.load(notebook) for _ in range(3)]
    assert parses == [notebook]
    assert all(doc.cells == first.cells for doc in again)
    assert cache.verified + cache.hits == 3


def test_an_old_unchanged_file_is_served_on_its_identity_alone(
    cache: DocumentCache, notebook: Path, parses: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_warm, "RACY_WINDOW_NS", 0)
    Document.load(notebook)  # read and fingerprinted
    Document.load(notebook)  # stamps older than the verification: no read at all
    assert parses == [notebook]
    assert cache.hits == 1


@pytest.mark.parametrize("window", ["default", "no_racy_window"])
def test_an_outside_save_that_keeps_size_and_mtime_is_seen(
    cache: DocumentCache,
    notebook: Path,
    parses: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    window: str,
) -> None:
    if window == "no_racy_window":  # only the ctime can tell the versions apart
        monkeypatch.setattr(_warm, "RACY_WINDOW_NS", 0)
    before = Document.load(notebook)
    stamps = os.stat(notebook)
    edited = _same_size_edit(notebook)
    _rewrite_until_ctime_moves(notebook, edited)
    os.utime(notebook, ns=(stamps.st_atime_ns, stamps.st_mtime_ns))
    assert (os.stat(notebook).st_size, os.stat(notebook).st_mtime_ns) == (
        stamps.st_size,
        stamps.st_mtime_ns,
    )
    after = Document.load(notebook)
    assert after.cells[1].rev != before.cells[1].rev
    assert after.cells[1].source == "".join(
        parse_notebook(edited, path=notebook)["cells"][1]["source"]
    )
    assert parses == [notebook, notebook]


def test_a_file_replaced_by_a_new_inode_is_seen(
    cache: DocumentCache, notebook: Path, parses: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_warm, "RACY_WINDOW_NS", 0)
    before = Document.load(notebook)
    stamps = os.stat(notebook)
    replacement = notebook.with_name("replacement.ipynb")
    replacement.write_bytes(_same_size_edit(notebook))
    os.utime(replacement, ns=(stamps.st_atime_ns, stamps.st_mtime_ns))
    os.replace(replacement, notebook)
    assert os.stat(notebook).st_ino != stamps.st_ino
    after = Document.load(notebook)
    assert after.cells[1].rev != before.cells[1].rev
    assert len(parses) == 2


def test_a_warm_notebook_outside_the_confinement_is_refused(
    cache: DocumentCache, notebook: Path, tmp_path: Path
) -> None:
    Document.load(notebook)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(NotebookError) as refused:
        Document.load(notebook, confine=Confinement.to_roots([elsewhere]))
    assert refused.value.code == ErrorCode.PATH_NOT_ALLOWED


def test_a_touch_without_change_is_not_parsed_again(
    cache: DocumentCache, notebook: Path, parses: list[Path]
) -> None:
    Document.load(notebook)
    os.utime(notebook)
    Document.load(notebook)
    assert parses == [notebook]


def test_a_write_of_ours_is_served_warm_without_parsing_the_file(
    cache: DocumentCache, notebook: Path, parses: list[Path]
) -> None:
    document = Document.load(notebook)
    target = document.cells[1]
    result = document.update_cell(target.name, expected_rev=target.rev, source="x = 41\n")
    fresh = Document.load(notebook)
    assert parses == [notebook]
    assert fresh.cells == document.cells
    assert result.cell is not None and fresh.cells[1].rev == result.cell.rev
    with warm(None):
        cold = Document.load(notebook)
    assert cold.cells == fresh.cells
    assert cold.cell_dicts() == fresh.cell_dicts()


def test_a_refused_write_leaves_the_cache_as_the_file_is(
    cache: DocumentCache, notebook: Path, parses: list[Path]
) -> None:
    original = notebook.read_bytes()
    document = Document.load(notebook)
    target = document.cells[1]

    def refuse(_result: MutationResult, _cells: tuple[CellView, ...]) -> None:
        raise NotebookError(ErrorCode.INVALID_CELL_TYPE, "refused by the check")

    with pytest.raises(NotebookError) as refused:
        document.update_cell(target.name, expected_rev=target.rev, source="y = 1\n", check=refuse)
    assert refused.value.code == ErrorCode.INVALID_CELL_TYPE
    notebook.chmod(0o444)
    try:
        with pytest.raises(NotebookError) as failed:
            document.update_cell(target.name, expected_rev=target.rev, source="y = 2\n")
    finally:
        notebook.chmod(0o644)
    assert failed.value.code == ErrorCode.NOTEBOOK_WRITE_FAILED
    assert notebook.read_bytes() == original
    served = Document.load(notebook)
    assert served.cells[1] == target
    assert parses == [notebook]


def test_a_paired_text_file_that_appears_is_seen(
    cache: DocumentCache, notebook: Path, parses: list[Path]
) -> None:
    import jupytext

    document = json.loads(notebook.read_bytes())
    document["metadata"]["jupytext"] = {"formats": "ipynb,py:percent"}
    notebook.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    assert Document.load(notebook).paired_py is None
    assert Document.load(notebook).paired_py is None
    assert parses == [notebook]
    text = notebook.with_suffix(".py")
    text.write_text(jupytext.writes(jupytext.reads(notebook.read_text()), fmt="py:percent"))
    assert Document.load(notebook).paired_py == text
    assert parses == [notebook, notebook]


def _fixtures() -> list[str]:
    names = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        raw = path.read_bytes()
        try:
            model = parse_notebook(raw, path=path)
        except NotebookError:
            continue
        style = detect_style(raw, model)
        if model["nbformat"] == 4 and model["cells"] and style is not None and style.indent:
            names.append(path.name)
    return names


@pytest.mark.parametrize("name", _fixtures())
def test_a_spliced_write_gives_the_bytes_of_a_whole_serialisation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(tmp_path / "snapshots"))
    path = tmp_path / name
    shutil.copyfile(NOTEBOOKS / name, path)
    document = Document.load(path)
    original = path.read_bytes()
    style = detect_style(original, parse_notebook(original, path=path))
    assert write_base(original, path, document.notebook_dict(), paired=False).layout
    middle = document.cells[len(document.cells) // 2]
    document.update_cell(middle.name, expected_rev=middle.rev, source="ü = 'édité'\n")  # names
    edited = document.cells[len(document.cells) // 2]
    document.update_cell(edited.name, expected_rev=edited.rev, source="ü = 'second'\n")
    raw = path.read_bytes()
    model = parse_notebook(raw, path=path)
    assert style is not None and dumps_notebook(model, style) == raw
    assert document.notebook_dict() == model
