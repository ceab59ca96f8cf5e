"""Ordinary filesystem problems get codes, never raw exceptions or hangs (io, pairing,
outputs.notebook share one path-resolution helper)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.notebook import _open
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.io import read_notebook, read_source_file
from jupyter_jcli.notebook.pairing import read_py
from jupyter_jcli.outputs.notebook import (
    list_notebook_outputs,
    open_notebook,
    read_notebook_output,
    resolve_notebook_cell,
)

NOTEBOOK = {"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": []}

READERS: dict[str, Callable[[Path | str], Any]] = {
    "read_notebook": read_notebook,
    "open_notebook": open_notebook,
    "resolve_notebook_cell": lambda p: resolve_notebook_cell(p, 0),
    "list_notebook_outputs": lambda p: list_notebook_outputs(p, 0),
    "read_notebook_output": lambda p: read_notebook_output(p, 0, 0),
}


def _code(reader: Callable[[Path | str], Any], path: Path | str) -> ErrorCode:
    with pytest.raises(JcliError) as excinfo:
        reader(path)
    return excinfo.value.code


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_a_symlink_loop_is_file_not_found(tmp_path: Path, reader: Any) -> None:
    loop = tmp_path / "loop.ipynb"
    loop.symlink_to(tmp_path / "other.ipynb")
    (tmp_path / "other.ipynb").symlink_to(loop)
    assert _code(reader, loop) == ErrorCode.FILE_NOT_FOUND


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_a_name_too_long_is_file_not_found(tmp_path: Path, reader: Any) -> None:
    assert _code(reader, tmp_path / ("x" * 5_000 + ".ipynb")) == ErrorCode.FILE_NOT_FOUND


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
@pytest.mark.parametrize("path", ["a\0b.ipynb", ""])
def test_a_nul_byte_or_an_empty_path_is_a_usage_error(reader: Any, path: str) -> None:
    code = _code(reader, path)
    assert code == (ErrorCode.USAGE_ERROR if path else ErrorCode.FILE_TYPE_UNSUPPORTED)


def test_a_nul_byte_in_a_py_path_is_a_usage_error() -> None:
    with pytest.raises(JcliError) as excinfo:
        read_py("a\0b.py")
    assert excinfo.value.code == ErrorCode.USAGE_ERROR


@pytest.mark.timeout(20)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, reader: Any) -> None:
    fifo = tmp_path / "x.ipynb"
    os.mkfifo(fifo)
    assert _code(reader, fifo) == ErrorCode.NOTEBOOK_READ_FAILED


@pytest.mark.timeout(20)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_py_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "x.py"
    os.mkfifo(fifo)
    with pytest.raises(JcliError) as excinfo:
        read_py(fifo)
    assert excinfo.value.code == ErrorCode.NOTEBOOK_READ_FAILED


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_a_device_behind_a_notebook_name_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "dev.ipynb"
    link.symlink_to("/dev/null")
    assert _code(read_notebook, link) == ErrorCode.NOTEBOOK_READ_FAILED


def test_a_dangling_symlink_and_a_directory_are_file_not_found(tmp_path: Path) -> None:
    dangling = tmp_path / "gone.ipynb"
    dangling.symlink_to(tmp_path / "missing.ipynb")
    folder = tmp_path / "folder.ipynb"
    folder.mkdir()
    assert _code(read_notebook, dangling) == ErrorCode.FILE_NOT_FOUND
    assert _code(read_notebook, folder) == ErrorCode.FILE_NOT_FOUND


def _error(reader: Callable[[Path], Any], path: Path) -> JcliError:
    with pytest.raises(JcliError) as excinfo:
        reader(path)
    return excinfo.value


DANGLING_READERS: dict[str, Callable[[Path], Any]] = {
    **READERS,
    "document_load": Document.load,
    "read_py": read_py,
    "read_source_file": read_source_file,
}


@pytest.mark.parametrize("reader", DANGLING_READERS.values(), ids=DANGLING_READERS.keys())
def test_a_dangling_symlink_names_the_link_and_its_target_whichever_reader_meets_it(
    tmp_path: Path, reader: Any
) -> None:
    suffix = ".py" if reader in (read_py, read_source_file) else ".ipynb"
    link, target = tmp_path / f"link{suffix}", tmp_path / f"gone{suffix}"
    link.symlink_to(target)
    error = _error(reader, link)
    assert error.code == ErrorCode.FILE_NOT_FOUND
    assert error.details == {"path": str(link), "errno": 2, "resolved": str(target)}


def test_a_missing_file_without_links_has_no_resolved_detail(tmp_path: Path) -> None:
    for reader in (read_notebook, Document.load):
        error = _error(reader, tmp_path / "missing.ipynb")
        assert error.code == ErrorCode.FILE_NOT_FOUND
        assert error.details == {"path": str(tmp_path / "missing.ipynb"), "errno": 2}


@pytest.mark.timeout(60)  # a FIFO opened without O_NONBLOCK would block here for ever
def test_a_source_file_that_is_a_fifo_or_a_device_is_an_invalid_source(tmp_path: Path) -> None:
    fifo = tmp_path / "code.py"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "fifo"), (Path(os.devnull), "device")):
        error = _error(read_source_file, path)
        assert error.code == ErrorCode.INVALID_SOURCE
        assert (error.details["reason"], error.details["file_type"]) == ("not_regular", kind)


def test_a_source_file_past_the_size_bound_is_an_invalid_source(
    tmp_path: Path, monkeypatch: Any
) -> None:
    code = tmp_path / "code.py"
    code.write_text("x = 1\n" * 100, encoding="utf-8")
    monkeypatch.setattr(_open, "MAX_NOTEBOOK_BYTES", 64)
    error = _error(read_source_file, code)
    assert error.code == ErrorCode.INVALID_SOURCE
    assert (error.details["reason"], error.details["limit"]) == ("too_large", 64)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_source_file_that_cannot_be_read_is_an_invalid_source(tmp_path: Path) -> None:
    code = tmp_path / "code.py"
    code.write_text("x = 1\n", encoding="utf-8")
    code.chmod(0)
    try:
        error = _error(read_source_file, code)
    finally:
        code.chmod(0o644)
    assert error.code == ErrorCode.INVALID_SOURCE
    assert error.details["reason"] == "unreadable"


def test_errors_name_the_absolute_resolved_path(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.ipynb").write_text("{", encoding="utf-8")
    with pytest.raises(JcliError) as excinfo:
        read_notebook("bad.ipynb")
    assert excinfo.value.details["path"] == str((tmp_path / "bad.ipynb").resolve())
    with pytest.raises(JcliError) as excinfo:
        read_notebook("missing.ipynb")
    assert excinfo.value.details["path"] == str((tmp_path / "missing.ipynb").resolve())


def test_a_symlinked_notebook_reads_and_reports_its_target(tmp_path: Path) -> None:
    target = tmp_path / "real.ipynb"
    target.write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    link = tmp_path / "link.ipynb"
    link.symlink_to(target)
    loaded = open_notebook(link)
    assert loaded.path == target.resolve()
    assert loaded.cell_count == 0
