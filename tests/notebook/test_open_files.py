"""Every file a document opens goes through one helper: regular files only, size-bounded,
inside the confinement, no link followed after the one resolution (issue 9 items 2-4)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.notebook import _atomic, _open
from jupyter_jcli.notebook._open import Confinement, confined
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.workbench import add_cell, undo_last

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"
WAIT_SECONDS = 20.0


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(folder))
    return folder


def _notebook(word: str, **metadata: Any) -> str:
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": metadata,
            "cells": [
                {
                    "cell_type": "code",
                    "id": "c0",
                    "metadata": {},
                    "execution_count": None,
                    "source": f"print('{word}')",
                    "outputs": [],
                }
            ],
        }
    )


def _code(call: Callable[[], object]) -> str:
    """Run ``call`` in a thread bounded by :data:`WAIT_SECONDS`; return its error code.

    A call that blocks (a FIFO opened without O_NONBLOCK) is released by opening the FIFO's
    write end, and the test fails.
    """
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            call()
            outcome["code"] = "ok"
        except JcliError as err:
            outcome["code"] = str(err.code)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(WAIT_SECONDS)
    if thread.is_alive():
        outcome["code"] = "blocked"
    return str(outcome["code"])


@pytest.fixture
def fifo(tmp_path: Path) -> Any:
    path = tmp_path / "pipe.ipynb"
    os.mkfifo(path)
    yield path
    with contextlib.suppress(OSError):  # release a reader that blocked on it (forbidden)
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_loading_a_fifo_named_ipynb_is_refused_at_once(fifo: Path, cache: Path) -> None:
    assert _code(lambda: Document.load(fifo)) == ErrorCode.NOTEBOOK_READ_FAILED


def test_adding_a_cell_to_a_fifo_named_ipynb_is_refused_at_once(fifo: Path, cache: Path) -> None:
    assert _code(lambda: add_cell(fifo, "x = 1")) == ErrorCode.NOTEBOOK_READ_FAILED


def test_a_link_to_dev_zero_named_ipynb_is_refused_without_reading_it(
    tmp_path: Path, cache: Path
) -> None:
    link = tmp_path / "zero.ipynb"
    link.symlink_to("/dev/zero")
    assert _code(lambda: Document.load(link)) == ErrorCode.NOTEBOOK_READ_FAILED


def test_a_file_larger_than_the_bound_is_refused_as_too_large(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.ipynb"
    path.write_text(_notebook("x"), encoding="utf-8")
    monkeypatch.setattr(_open, "MAX_NOTEBOOK_BYTES", 64)
    with pytest.raises(JcliError) as caught:
        Document.load(path)
    assert caught.value.code == ErrorCode.NOTEBOOK_READ_FAILED
    assert caught.value.details["reason"] == "too_large"


def _pair_outside(
    tmp_path: Path, formats: str, notebook_source: str = "INSIDE"
) -> tuple[Path, Path, Path]:
    """``root/nb.ipynb`` printing ``notebook_source`` (``"OUTSIDE"``: the same inputs as
    the text file, the two sides agree) paired by ``formats``; ``outside/nb.py``."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    notebook = root / "nb.ipynb"
    notebook.write_text(_notebook(notebook_source, jupytext={"formats": formats}), encoding="utf-8")
    text = outside / "nb.py"
    text.write_text("# %%\nprint('OUTSIDE')\n", encoding="utf-8")
    os.utime(notebook, ns=(1_000_000_000, 1_000_000_000))  # the text file is the newer one
    return root, notebook, text


def test_a_pair_pointing_outside_the_roots_is_neither_read_nor_written(
    tmp_path: Path, cache: Path
) -> None:
    root, notebook, text = _pair_outside(tmp_path, "ipynb,../outside//py:percent")
    before = text.read_bytes()
    with confined(Confinement.to_roots([root])):
        document = Document.load(notebook)
        assert [cell.source for cell in document.cells] == ["print('INSIDE')"]
        assert document.paired_py is None
        cell = document.cells[0]
        with pytest.raises(JcliError) as caught:
            document.update_cell(cell.name, expected_rev=cell.rev, source="print('EDIT')")
    assert caught.value.code == ErrorCode.PATH_NOT_ALLOWED
    assert text.read_bytes() == before
    assert "EDIT" not in notebook.read_text(encoding="utf-8")


def test_a_paired_text_file_that_links_outside_the_roots_is_neither_read_nor_written(
    tmp_path: Path, cache: Path
) -> None:
    root, notebook, text = _pair_outside(tmp_path, "ipynb,py:percent")
    (root / "nb.py").symlink_to(text)
    before = text.read_bytes()
    with confined(Confinement.to_roots([root])):
        document = Document.load(notebook)
        assert [cell.source for cell in document.cells] == ["print('INSIDE')"]
        cell = document.cells[0]
        with pytest.raises(JcliError) as caught:
            document.update_cell(cell.name, expected_rev=cell.rev, source="print('EDIT')")
    assert caught.value.code == ErrorCode.PATH_NOT_ALLOWED
    assert text.read_bytes() == before


def test_the_same_pair_inside_the_roots_is_read_and_written_as_a_pair(
    tmp_path: Path, cache: Path
) -> None:
    root, notebook, text = _pair_outside(tmp_path, "ipynb,py:percent", "OUTSIDE")
    shutil.copyfile(text, root / "nb.py")
    with confined(Confinement.to_roots([root])):
        document = Document.load(notebook)
        assert document.paired_py == root / "nb.py"
        assert [cell.source for cell in document.cells] == ["print('OUTSIDE')"]
        cell = document.cells[0]
        result = document.update_cell(cell.name, expected_rev=cell.rev, source="print('EDIT')")
    assert set(result.written) == {notebook, root / "nb.py"}


def _swap_after_resolution(
    monkeypatch: pytest.MonkeyPatch, folder: Path, outside: Path, *, on_write: bool = False
) -> list[int]:
    """Rename ``folder`` away and link it to ``outside`` right after the first resolution
    (with ``on_write``: the first one of an atomic write): the window between checking a
    path and opening it."""
    original = Confinement.check
    swaps: list[int] = []
    armed = [not on_write]
    if on_write:
        real_open_folder = _atomic.open_folder

        def open_folder(*args: Any, **kwargs: Any) -> Any:
            armed[0] = True
            return real_open_folder(*args, **kwargs)

        monkeypatch.setattr(_atomic, "open_folder", open_folder)

    def check(self: Confinement, path: str | os.PathLike[str]) -> Path:
        resolved = original(self, path)
        if armed[0] and not swaps:
            swaps.append(1)
            folder.rename(folder.with_name(folder.name + "_away"))
            folder.symlink_to(outside, target_is_directory=True)
        return resolved

    monkeypatch.setattr(Confinement, "check", check)
    return swaps


def _swap_layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "nb.ipynb").write_text(_notebook("INSIDE"), encoding="utf-8")
    (outside / "nb.ipynb").write_text(_notebook("OUTSIDE"), encoding="utf-8")
    return root, root / "sub", outside


def test_a_folder_swapped_for_an_outside_link_after_the_check_is_not_read(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, sub, outside = _swap_layout(tmp_path)
    swaps = _swap_after_resolution(monkeypatch, sub, outside)
    with confined(Confinement.to_roots([root])), pytest.raises(JcliError) as caught:
        Document.load(sub / "nb.ipynb")
    assert swaps
    assert caught.value.code == ErrorCode.PATH_NOT_ALLOWED


def test_a_folder_swapped_for_an_outside_link_after_the_check_is_not_written(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, sub, outside = _swap_layout(tmp_path)
    before = (outside / "nb.ipynb").read_bytes()
    with confined(Confinement.to_roots([root])):
        document = Document.load(sub / "nb.ipynb")
        swaps = _swap_after_resolution(monkeypatch, sub, outside, on_write=True)
        with pytest.raises(JcliError) as caught:
            document.add_cell("x = 1")
    assert swaps
    assert caught.value.code == ErrorCode.PATH_NOT_ALLOWED
    assert (outside / "nb.ipynb").read_bytes() == before
    assert sorted(p.name for p in outside.iterdir()) == ["nb.ipynb"]  # no temporary file


def test_a_folder_swapped_back_during_the_open_is_read_at_its_new_place(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unconfined (the command line), a swap is followed only through a fresh resolution."""
    _root, sub, outside = _swap_layout(tmp_path)
    _swap_after_resolution(monkeypatch, sub, outside)
    document = Document.load(sub / "nb.ipynb")
    assert [cell.source for cell in document.cells] == ["print('OUTSIDE')"]


def test_a_symlinked_root_confines_to_its_target(tmp_path: Path, cache: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    shutil.copyfile(NOTEBOOKS / SORTING, real / SORTING)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    with confined(Confinement.to_roots([link])):
        result = Document.load(link / SORTING).add_cell("x = 1")
    assert result.written == (link / SORTING,)


def test_undo_under_a_confinement_restores_nothing_when_a_snapshot_file_lies_outside(
    tmp_path: Path, cache: Path
) -> None:
    root, notebook, text = _pair_outside(tmp_path, "ipynb,../outside//py:percent", "OUTSIDE")
    document = Document.load(notebook)  # unconfined (the command line): the pair is edited
    cell = document.cells[0]
    result = document.update_cell(cell.name, expected_rev=cell.rev, source="print('EDIT')")
    assert set(result.written) == {notebook, text}
    after = (notebook.read_bytes(), text.read_bytes())
    with confined(Confinement.to_roots([root])), pytest.raises(JcliError) as caught:
        undo_last(notebook)
    assert caught.value.code == ErrorCode.PATH_NOT_ALLOWED
    assert (notebook.read_bytes(), text.read_bytes()) == after
