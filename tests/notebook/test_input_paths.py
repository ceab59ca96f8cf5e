"""Paths a read is given that name no readable file: each refused with its code before
anything is read (``notebook.io``'s path checks, in-process)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.io import display_path, read_binary_file, read_text_file


def _code(path: str | Path) -> NotebookError:
    with pytest.raises(NotebookError) as caught:
        read_text_file(path)
    return caught.value


@pytest.mark.parametrize(
    "path", ["", "a\0b.ipynb", "\ud800.ipynb"], ids=["empty", "nul", "surrogate"]
)
def test_a_path_no_file_name_can_hold_is_a_usage_error(path: str) -> None:
    assert _code(path).code == ErrorCode.USAGE_ERROR


def test_a_symbolic_link_loop_is_a_missing_file_with_its_errno(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    err = _code(tmp_path / "a")
    assert err.code == ErrorCode.FILE_NOT_FOUND
    assert err.details["errno"] == errno.ELOOP


def test_a_name_too_long_for_the_filesystem_is_a_missing_file_with_its_errno(
    tmp_path: Path,
) -> None:
    err = _code(tmp_path / ("n" * 300 + ".ipynb"))
    assert err.code == ErrorCode.FILE_NOT_FOUND
    assert err.details["errno"] == errno.ENAMETOOLONG


def test_a_path_through_a_regular_file_is_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    err = read_binary_error(tmp_path / "notes.txt" / "nb.ipynb")
    assert err.code == ErrorCode.FILE_NOT_FOUND
    assert err.details["errno"] == errno.ENOTDIR


def read_binary_error(path: Path) -> NotebookError:
    with pytest.raises(NotebookError) as caught:
        read_binary_file(path)
    return caught.value


def test_a_folder_is_no_file_and_says_it_is_a_directory(tmp_path: Path) -> None:
    err = _code(tmp_path)
    assert err.code == ErrorCode.FILE_NOT_FOUND
    assert err.details["file_type"] == "directory"


def test_the_path_shown_in_messages_is_absolute_even_when_it_cannot_be_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shown = display_path("a\0b")
    assert shown.is_absolute() and shown.name == "a\0b"
    assert display_path("x/../y.ipynb") == tmp_path.resolve() / "y.ipynb"
    assert os.listdir(tmp_path) == []
