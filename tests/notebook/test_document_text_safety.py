"""Never write invalid UTF-8: lone surrogates in new sources are refused, escaped ones kept."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._jsonstyle import JsonStyle, detect_style, dumps_notebook
from jupyter_jcli.notebook.document import CellOutputs, Document
from jupyter_jcli.notebook.io import parse_notebook, read_notebook
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV, SnapshotStore
from jupyter_jcli.workbench import add_cell, update_cell

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"
LONE = ["\udcff", "s = '\ud800'", "ok\n\udfff tail", "\udced\udcb3\udcbf"]


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "work" / "s.ipynb"
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(NOTEBOOKS / SORTING, target)
    return target


def _valid(raw: bytes) -> dict[str, object]:
    """The file is strict UTF-8 and nbformat (the reference reader) reads and validates it."""
    import nbformat

    raw.decode("utf-8")  # raises on invalid UTF-8
    node = nbformat.reads(raw.decode("utf-8"), as_version=4)  # type: ignore[no-untyped-call]
    nbformat.validate(node)  # type: ignore[no-untyped-call]
    parsed: dict[str, object] = json.loads(raw)
    return parsed


@pytest.mark.parametrize("source", LONE)
def test_adding_a_source_with_a_lone_surrogate_is_refused_before_anything_is_written(
    tmp_path: Path, cache: Path, source: str
) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    document = Document.load(path)
    with pytest.raises(NotebookError) as info:
        document.add_cell(source, position="end")
    assert info.value.code == ErrorCode.INVALID_SOURCE
    assert info.value.details["reason"] == "lone_surrogate"
    assert path.read_bytes() == before
    assert not cache.exists()  # no lock folder, no snapshot


def test_updating_a_source_with_a_lone_surrogate_is_refused(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    document = Document.load(path)
    cell = document.cell("l")
    with pytest.raises(NotebookError) as info:
        document.update_cell("l", expected_rev=cell.rev, source="L = [1]  # \udcff")
    assert info.value.code == ErrorCode.INVALID_SOURCE
    assert info.value.details["offset"] == len("L = [1]  # ")
    assert info.value.details["code_point"] == "U+DCFF"
    assert path.read_bytes() == before
    assert SnapshotStore(path).snapshots() == []


def test_the_workbench_api_refuses_a_lone_surrogate(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    with pytest.raises(NotebookError) as info:
        add_cell(path, source="s = '\ud800'", position="end")
    assert info.value.code == ErrorCode.INVALID_SOURCE
    rev = Document.load(path).cell("l").rev
    with pytest.raises(NotebookError) as info:
        update_cell(path, "l", expected_rev=rev, source="\udfff")
    assert info.value.code == ErrorCode.INVALID_SOURCE
    assert path.read_bytes() == before


def test_the_command_line_refuses_an_undecodable_source_byte(tmp_path: Path) -> None:
    """``--source $'\\udcff'`` (bytes ED B3 BF in argv) as a real process gets."""
    path = _copy(tmp_path)
    before = path.read_bytes()
    source = os.fsdecode(b"s = '\xed\xb3\xbf'")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from jupyter_jcli.cli import main; sys.exit(main())",
            "-j",
            "cell",
            "add",
            str(path),
            "--source",
            source,
            "--end",
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    document = json.loads(done.stdout)
    assert document["status"] == "error"
    assert document["code"] == "INVALID_SOURCE"
    assert path.read_bytes() == before


def _with_escaped_surrogate(path: Path) -> str:
    """Put a JSON-escaped lone surrogate in the first code cell's source (as some tools
    write); returns the escaped text as it stands in the file."""
    text = path.read_text(encoding="utf-8")
    old = '"import numpy as np\\n",'
    assert text.count(old) == 1
    escaped = '"import numpy as np  # \\udcff\\n",'
    path.write_text(text.replace(old, escaped), encoding="utf-8")
    return escaped


def test_a_notebook_read_with_escaped_lone_surrogates_is_rewritten_with_the_escapes(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    escaped = _with_escaped_surrogate(path)
    before = path.read_bytes()
    document = Document.load(path)
    [target] = [view for view in document.cells if "\udcff" in view.source]
    other = document.cell("l")
    document.update_cell("l", expected_rev=other.rev, source="L = [2, 1]")
    after = path.read_bytes()
    parsed = _valid(after)
    assert escaped.encode() in after  # same escape, same place
    reread = Document.load(path)
    assert reread.cells[target.index].source == target.source  # the surrogate round-trips
    assert reread.cells[target.index].rev == target.rev
    assert reread.cell("l").source == "L = [2, 1]"
    assert isinstance(parsed["cells"], list)
    # Only the edited cell's lines and the names changed; the escaped line is untouched.
    assert before.count(escaped.encode()) == after.count(escaped.encode()) == 1


def test_an_outputs_write_holding_a_lone_surrogate_stays_valid_utf8(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    cell = document.cell("l")
    outputs = [{"output_type": "stream", "name": "stdout", "text": "bad \ud800 byte\n"}]
    assert document.write_outputs({"l": CellOutputs(cell.rev, outputs, 7)}) == ("l",)
    raw = path.read_bytes()
    _valid(raw)
    assert b"bad \\ud800 byte" in raw
    stored = read_notebook(path)["cells"][cell.index]
    assert stored["outputs"][0]["text"] in ("bad \ud800 byte\n", ["bad \ud800 byte\n"])


@pytest.mark.parametrize(
    "style",
    [
        JsonStyle(),
        JsonStyle(ensure_ascii=True),
        JsonStyle(indent=None, compact_separators=True),
        JsonStyle(indent=2, crlf=True),
    ],
    ids=["jupyter", "ascii", "compact", "crlf"],
)
def test_the_serialiser_never_emits_invalid_utf8(style: JsonStyle) -> None:
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {"k\udc80": "v\udbff"},
                "outputs": [],
                "source": ["é \ud83d\n", "x = '\udfff'"],
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 4,
    }
    raw = dumps_notebook(notebook, style)
    raw.decode("utf-8")
    assert parse_notebook(raw, path=Path("x.ipynb")) == notebook
    assert detect_style(raw, parse_notebook(raw, path=Path("x.ipynb"))) == style
