"""The response shapes of the reference jupyter-jcli 0.9.7, one case per rule (issue 8).

The outputs are the reference's own protocol fixture (``reference_mixed_outputs.json``, copied
from the peer fixtures): a stderr stream, a bundle with every MIME family, an execute_result
with JSON, and an error. Each case names the row of the issue's table it checks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs import OutputProtocolError, read_output
from jupyter_jcli.outputs.notebook import (
    list_notebook_outputs,
    read_notebook_output,
    resolve_notebook_cell,
)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "outputs" / "reference_mixed_outputs.json"
SOURCE = {"kind": "notebook", "path": "/work/report.ipynb", "cell_index": 4}
STREAM, BUNDLE, RESULT, ERROR = 0, 1, 2, 3


def _outputs() -> list[Any]:
    outputs: list[Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return outputs


@dataclass(frozen=True)
class ReadCase:
    """One read of the fixture and the part of the response it must give exactly."""

    name: str
    row: int
    output_index: int
    options: dict[str, Any]
    part: Callable[[dict[str, Any]], Any]
    expected: Any = None
    absent: tuple[str, ...] = field(default=())


READ_CASES = [
    ReadCase(
        "a stream page nests name and window under stream",
        1,
        STREAM,
        {"offset": 6, "limit": 9},
        lambda r: r["stream"],
        {
            "name": "stderr",
            "offset": 6,
            "returned_characters": 9,
            "total_characters": 23,
            "truncated": True,
            "next_offset": 15,
            "bytes": 9,
            "data": "line\nseco",
        },
        ("name", "data", "offset", "truncated"),
    ),
    ReadCase(
        "an error nests ename, evalue and traceback under error",
        2,
        ERROR,
        {},
        lambda r: r["error"],
        {
            "ename": "ValueError",
            "evalue": "bad value",
            "traceback": ["Traceback line 1", "ValueError: bad value"],
        },
        ("ename", "evalue", "traceback"),
    ),
    ReadCase(
        "the last page from an offset is truncated without next_offset",
        3,
        STREAM,
        {"offset": 11},
        lambda r: (r["stream"]["truncated"], "next_offset" in r["stream"]),
        (True, False),
    ),
    ReadCase(
        "the whole text is not truncated",
        3,
        STREAM,
        {},
        lambda r: (r["stream"]["truncated"], "next_offset" in r["stream"]),
        (False, False),
    ),
    ReadCase(
        "HTML is returned verbatim as utf-8 text",
        4,
        BUNDLE,
        {"mime_type": "text/html"},
        lambda r: (r["selected"]["encoding"], r["selected"]["data"]),
        ("utf-8", "<strong>raw html</strong>"),
    ),
    ReadCase(
        "a list-of-strings plain text is joined as utf-8 text",
        4,
        BUNDLE,
        {"mime_type": "text/plain"},
        lambda r: (r["selected"]["encoding"], r["selected"]["data"]),
        ("utf-8", "plain text"),
    ),
    ReadCase(
        "SVG is utf-8 text",
        4,
        BUNDLE,
        {"mime_type": "image/svg+xml"},
        lambda r: r["selected"]["encoding"],
        "utf-8",
    ),
    ReadCase(
        "limit None returns the whole stream",
        5,
        STREAM,
        {"limit": None},
        lambda r: (r["stream"]["data"], r["stream"]["truncated"]),
        ("first line\nsecond line\n", False),
    ),
    ReadCase(
        "limit None returns the whole markdown",
        5,
        BUNDLE,
        {"mime_type": "text/markdown", "limit": None},
        lambda r: r["selected"]["data"],
        "**raw markdown**",
    ),
    ReadCase(
        "an adapter's capability list does not stop a stream read",
        6,
        STREAM,
        {"supported_mime_types": ["text/plain", "image/png"]},
        lambda r: r["stream"]["data"],
        "first line\nsecond line\n",
    ),
    ReadCase(
        "an adapter's capability list does not stop an error read",
        6,
        ERROR,
        {"supported_mime_types": ["text/html"]},
        lambda r: r["error"]["ename"],
        "ValueError",
    ),
    ReadCase(
        "an adapter's capability list still filters a bundle",
        6,
        BUNDLE,
        {"supported_mime_types": ["text/html", "text/plain"]},
        lambda r: r["selected"]["mime_type"],
        "text/html",
    ),
]


@pytest.mark.parametrize("case", READ_CASES, ids=lambda c: f"row{c.row}: {c.name}")
def test_reads_have_the_reference_shapes(case: ReadCase) -> None:
    response = read_output(_outputs(), case.output_index, source=SOURCE, **case.options)
    assert case.part(response) == case.expected
    assert not set(case.absent) & set(response)  # nothing left flattened at the top level


@pytest.mark.parametrize(
    ("output_index", "options", "code"),
    [
        (STREAM, {"mime_type": "text/plain"}, ErrorCode.MIME_NOT_APPLICABLE),
        (ERROR, {"mime_type": "text/plain"}, ErrorCode.MIME_NOT_APPLICABLE),
        (BUNDLE, {"mime_type": "application/octet-stream"}, ErrorCode.MIME_NOT_SUPPORTED),
        (BUNDLE, {"mime_type": "text/csv"}, ErrorCode.MIME_NOT_FOUND),
        (BUNDLE, {"limit": 1}, ErrorCode.WINDOW_NOT_SUPPORTED),
        (STREAM, {"offset": 24}, ErrorCode.INVALID_WINDOW),
    ],
)
def test_reads_the_reference_refuses_are_refused_with_its_codes(
    output_index: int, options: dict[str, Any], code: ErrorCode
) -> None:
    with pytest.raises(OutputProtocolError) as caught:
        read_output(_outputs(), output_index, source=SOURCE, **options)
    assert caught.value.code == code


def _notebook(path: Path, cells: list[dict[str, Any]]) -> Path:
    document = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _code(source: str, cell_id: str, count: int | None, outputs: list[Any]) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "id": cell_id,
        "metadata": {},
        "source": source,
        "execution_count": count,
        "outputs": outputs,
    }


def test_an_ipynb_source_is_kind_notebook_with_requested_fields_and_execution_count(
    tmp_path: Path,
) -> None:
    path = _notebook(tmp_path / "mixed.ipynb", [_code("display()", "c0", 9, _outputs())])
    resolved = str(path.resolve())
    expected = {
        "kind": "notebook",
        "path": resolved,
        "cell_index": 0,
        "requested_path": resolved,
        "requested_cell_index": 0,
        "mapping": "direct",
        "cell_id": "c0",
        "execution_count": 9,
        "cell_type": "code",
    }
    assert list_notebook_outputs(path, 0)["source"] == expected
    assert read_notebook_output(path, 0, 3)["source"] == {**expected, "output_index": 3}


def test_a_cell_never_run_has_no_execution_count_in_its_source(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "fresh.ipynb", [_code("x = 1", "c0", None, [])])
    assert "execution_count" not in list_notebook_outputs(path, 0)["source"]


def test_a_py_source_names_the_requested_cell_and_its_lines(tmp_path: Path) -> None:
    py_path = tmp_path / "report.py"
    py_path.write_text(
        '# %% id="first"\nfirst = 1\n\n# %% id="second"\n# a comment\nsecond = 2\n\n\n',
        encoding="utf-8",
    )
    stream = {"output_type": "stream", "name": "stdout", "text": "two"}
    notebook = _notebook(
        tmp_path / "report.ipynb",
        [_code("second = 20", "second", 4, [stream]), _code("first = 10", "first", None, [])],
    )
    source = read_notebook_output(py_path, 1, 0, limit=None)["source"]
    assert source == {
        "kind": "notebook",
        "path": str(notebook.resolve()),
        "cell_index": 0,
        "requested_path": str(py_path.resolve()),
        "requested_cell_index": 1,
        "mapping": "id",
        "cell_id": "second",
        "execution_count": 4,
        "source_start_line": 5,
        "source_end_line": 6,
        "cell_type": "code",
        "output_index": 0,
    }
    first = list_notebook_outputs(py_path, 0)["source"]
    assert (first["source_start_line"], first["source_end_line"]) == (2, 2)


def test_resolve_notebook_cell_says_what_was_requested_and_what_was_read(tmp_path: Path) -> None:
    py_path = tmp_path / "report.py"
    py_path.write_text("# %%\nx = 1\n\n# %%\ny = 2\n", encoding="utf-8")
    notebook = _notebook(
        tmp_path / "report.ipynb",
        [
            _code("inserted = True", "a", None, []),
            _code("x = 1", "b", None, []),
            _code("y = 2", "c", 1, []),
        ],
    )
    resolved = resolve_notebook_cell(py_path, 1)
    assert (resolved.requested_path, resolved.requested_cell_index) == (py_path.resolve(), 1)
    assert (resolved.notebook_path, resolved.notebook_cell_index) == (notebook.resolve(), 2)
    assert resolved.mapping == "content"
    assert resolved.source["requested_cell_index"] == 1
    assert resolved.cell["id"] == "c"
    direct = resolve_notebook_cell(notebook, 2)
    assert (direct.requested_path, direct.requested_cell_index) == (notebook.resolve(), 2)
    assert (direct.notebook_cell_index, direct.mapping) == (2, "direct")
