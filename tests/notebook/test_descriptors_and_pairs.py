"""Reading through a descriptor (kinds of file, comparing with what a write expects) and
finding the notebook a suffixed script pairs with, in-process."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._descriptors import compare_descriptor, file_kind
from jupyter_jcli.notebook.pairing import find_paired_notebook


def test_every_kind_of_file_is_named_by_its_mode(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        kinds = [
            file_kind(os.lstat(path).st_mode)
            for path in (tmp_path / "fifo", tmp_path / "sock", Path("/dev/null"), tmp_path)
        ]
    assert kinds == ["fifo", "socket", "device", "directory"]


def _compare(path: Path, expected: bytes, limit: int = 1 << 20) -> str | None:
    fd = os.open(path, os.O_RDONLY)
    try:
        return compare_descriptor(fd, path, expected, limit)
    finally:
        os.close(fd)


def test_comparing_a_file_with_what_it_should_hold_gives_the_digest_of_what_it_holds(
    tmp_path: Path,
) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"abc")
    assert _compare(path, b"abc") is None
    for expected in (b"abcdef", b"ab", b"xyz", b""):
        assert _compare(path, expected) == hashlib.sha256(b"abc").hexdigest()


def test_comparing_a_file_over_the_limit_is_refused_as_too_large(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"x" * 100)
    with pytest.raises(NotebookError) as caught:
        _compare(path, b"x" * 100, limit=10)
    assert caught.value.code == ErrorCode.NOTEBOOK_READ_FAILED
    assert caught.value.details["reason"] == "too_large"


def test_a_suffixed_script_pairs_with_the_notebook_whose_formats_claim_it(
    tmp_path: Path,
) -> None:
    notebook = tmp_path / "analysis.ipynb"
    document = {
        "cells": [],
        "metadata": {"jupytext": {"formats": "ipynb,.pct.py:percent"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    notebook.write_text(json.dumps(document), encoding="utf-8")
    script = tmp_path / "analysis.pct.py"
    script.write_text("# %%\nx = 1\n", encoding="utf-8")
    assert find_paired_notebook(script) == notebook.resolve()


def test_a_script_no_notebook_claims_has_no_pair(tmp_path: Path) -> None:
    (tmp_path / "other.ipynb").write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
        encoding="utf-8",
    )
    script = tmp_path / "lonely.pct.py"
    script.write_text("# %%\nx = 1\n", encoding="utf-8")
    with pytest.raises(NotebookError) as caught:
        find_paired_notebook(script)
    assert caught.value.code == ErrorCode.NOTEBOOK_PAIR_NOT_FOUND
