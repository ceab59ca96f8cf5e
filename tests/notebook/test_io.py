"""Tolerant notebook reading on real notebooks and hand-made broken ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.io import cell_source, check_cell_index, parse_notebook, read_notebook

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
BAD = NOTEBOOKS / "bad"
REAL_V4 = sorted(p for p in NOTEBOOKS.glob("*.ipynb") if not p.name.endswith(".v3.ipynb"))
V3 = NOTEBOOKS / "text_outputs_and_images.v3.ipynb"
V3_SOURCE = NOTEBOOKS / "text_outputs_and_images.ipynb"


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
    }


def test_fixture_set_covers_the_nbformat_4_minor_versions() -> None:
    minors = {json.loads(p.read_bytes())["nbformat_minor"] for p in REAL_V4}
    assert {2, 4, 5} <= minors


@pytest.mark.parametrize("path", REAL_V4, ids=lambda p: p.name)
def test_real_v4_notebook_is_returned_exactly_as_stored(path: Path) -> None:
    notebook = read_notebook(path)
    assert notebook == json.loads(path.read_bytes())
    assert notebook["nbformat"] == 4


def test_cells_without_ids_are_normal_in_nbformat_4_4() -> None:
    notebook = read_notebook(NOTEBOOKS / "01.06-Errors-and-Debugging.ipynb")
    assert notebook["nbformat_minor"] == 4
    assert notebook["cells"]
    assert all("id" not in cell for cell in notebook["cells"])


def test_nbformat_3_is_upgraded_in_memory_like_nbformat_does() -> None:
    import nbformat

    notebook = read_notebook(V3)
    expected = nbformat.read(str(V3), as_version=4)
    assert notebook["nbformat"] == 4
    assert notebook["nbformat_minor"] == 4
    assert notebook["metadata"]["orig_nbformat"] == 3
    assert len(notebook["cells"]) == len(expected.cells)
    for ours, theirs in zip(notebook["cells"], expected.cells, strict=True):
        assert "id" not in ours
        without_id = {k: v for k, v in theirs.items() if k != "id"}
        assert json.loads(json.dumps(without_id)) == ours


def test_nbformat_3_upgrade_yields_v4_output_types_and_mime_keys() -> None:
    cells = read_notebook(V3)["cells"]
    original = json.loads(V3_SOURCE.read_bytes())["cells"]
    assert [c["cell_type"] for c in cells] == [c["cell_type"] for c in original]
    output_types = [o["output_type"] for c in cells for o in c.get("outputs", [])]
    assert output_types == [o["output_type"] for c in original for o in c.get("outputs", [])]
    mime_types = {m for c in cells for o in c.get("outputs", []) for m in o.get("data", {})}
    assert {"image/png", "text/html", "text/plain"} <= mime_types
    errors = [o for c in cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert errors and errors[0]["ename"]


def test_reading_v4_imports_neither_nbformat_nor_jupytext() -> None:
    code = (
        "import sys\n"
        "from jupyter_jcli.notebook.io import read_notebook\n"
        f"read_notebook({str(NOTEBOOKS / '05.11-K-Means.ipynb')!r})\n"
        "print(sorted(m for m in ('nbformat', 'jupytext') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("name", "detail_keys"),
    [
        ("truncated.ipynb", {"path", "position", "line", "column"}),
        ("empty.ipynb", {"path", "reason", "size"}),  # 0 bytes: reason "empty"
        ("missing_cells.ipynb", {"path"}),
        ("cells_not_list.ipynb", {"path"}),
        ("cell_not_object.ipynb", {"path", "cell_index"}),
        ("nbformat_v5.ipynb", {"path", "nbformat"}),
        ("missing_nbformat.ipynb", {"path"}),
        ("top_level_array.ipynb", {"path"}),
    ],
)
def test_broken_notebook_is_notebook_read_failed(name: str, detail_keys: set[str]) -> None:
    with pytest.raises(NotebookError) as caught:
        read_notebook(BAD / name)
    assert caught.value.code is ErrorCode.NOTEBOOK_READ_FAILED
    assert detail_keys <= set(caught.value.details)
    assert caught.value.details["path"] == str(BAD / name)


def test_json_error_reports_the_parse_position() -> None:
    raw = (BAD / "truncated.ipynb").read_bytes()
    with pytest.raises(NotebookError) as caught:
        parse_notebook(raw, path=BAD / "truncated.ipynb")
    with pytest.raises(NotebookError) as read:
        read_notebook(BAD / "truncated.ipynb")
    assert 0 < caught.value.details["position"] <= len(raw)
    assert caught.value.details == read.value.details  # one parse-error path


def test_cell_that_is_not_an_object_is_named_by_index() -> None:
    with pytest.raises(NotebookError) as caught:
        read_notebook(BAD / "cell_not_object.ipynb")
    assert caught.value.details["cell_index"] == 2


def test_invalid_utf8_is_notebook_read_failed(tmp_path: Path) -> None:
    raw = b'{"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": ["\xff"]}'
    with pytest.raises(NotebookError) as caught:
        parse_notebook(raw, path=tmp_path / "x.ipynb")
    assert caught.value.code is ErrorCode.NOTEBOOK_READ_FAILED


def test_v3_without_worksheets_is_notebook_read_failed(tmp_path: Path) -> None:
    raw = json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}}).encode()
    with pytest.raises(NotebookError) as caught:
        parse_notebook(raw, path=tmp_path / "x.ipynb")
    assert caught.value.code is ErrorCode.NOTEBOOK_READ_FAILED


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotebookError) as caught:
        read_notebook(tmp_path / "absent.ipynb")
    assert caught.value.code is ErrorCode.FILE_NOT_FOUND


def test_directory_is_file_not_found(tmp_path: Path) -> None:
    folder = tmp_path / "folder.ipynb"
    folder.mkdir()
    with pytest.raises(NotebookError) as caught:
        read_notebook(folder)
    assert caught.value.code is ErrorCode.FILE_NOT_FOUND


@pytest.mark.parametrize("name", ["notebook.json", "notebook.py", "notebook"])
def test_other_suffix_is_file_type_unsupported(tmp_path: Path, name: str) -> None:
    target = tmp_path / name
    target.write_bytes((NOTEBOOKS / "jupyter.ipynb").read_bytes())
    with pytest.raises(NotebookError) as caught:
        read_notebook(target)
    assert caught.value.code is ErrorCode.FILE_TYPE_UNSUPPORTED


def test_suffix_is_compared_case_insensitively(tmp_path: Path) -> None:
    target = tmp_path / "UPPER.IPYNB"
    target.write_bytes((NOTEBOOKS / "jupyter.ipynb").read_bytes())
    assert len(read_notebook(target)["cells"]) == 6


def test_reading_never_writes(tmp_path: Path) -> None:
    for source in (V3, NOTEBOOKS / "jupyter.ipynb"):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    before = _snapshot(tmp_path)
    for path in tmp_path.iterdir():
        read_notebook(path)
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ({"source": ["import numpy\n", "x = 1"]}, "import numpy\nx = 1"),
        ({"source": "a\nb"}, "a\nb"),
        ({}, ""),
        ({"source": None}, ""),
        ({"source": ["ok", 3]}, "ok"),
    ],
)
def test_cell_source_joins_multiline_strings(cell: dict[str, Any], expected: str) -> None:
    assert cell_source(cell) == expected


def test_real_list_sources_join_to_the_text_nbformat_defines() -> None:
    import nbformat

    path = NOTEBOOKS / "01.07-Timing-and-Profiling.ipynb"
    ours = [cell_source(c) for c in read_notebook(path)["cells"]]
    assert ours == [c.source for c in nbformat.read(str(path), as_version=4).cells]


@pytest.mark.parametrize("index", [-1, 3, True, 1.0, "0", None])
def test_bad_cell_index_is_cell_not_found_with_cell_count(index: object, tmp_path: Path) -> None:
    with pytest.raises(NotebookError) as caught:
        check_cell_index(index, 3, path=tmp_path)
    assert caught.value.code is ErrorCode.CELL_NOT_FOUND
    assert caught.value.details["cell_count"] == 3


def test_valid_cell_index_is_returned() -> None:
    assert check_cell_index(2, 3, path=Path("x.ipynb")) == 2
