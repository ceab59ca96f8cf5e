"""The two JSON paths of notebook reading: orjson, and the standard library for lone
surrogate escapes and for files past ``LEAN_PARSE_BYTES``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook import io
from jupyter_jcli.outputs.notebook import read_notebook_output

NOTEBOOKS = Path(__file__).parents[1] / "fixtures" / "notebooks"

SURROGATE_NOTEBOOK = (
    '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code",'
    ' "id": "a1", "metadata": {}, "execution_count": 1, "source": "print(b)",'
    ' "outputs": [{"output_type": "stream", "name": "stdout", "text": "bad \\ud800 byte\\n"}]}]}'
)


def test_a_lone_surrogate_escape_is_read_and_replaced_by_the_protocol(tmp_path: Path) -> None:
    path = tmp_path / "surrogate.ipynb"
    path.write_text(SURROGATE_NOTEBOOK, encoding="utf-8")

    notebook = io.read_notebook(path)
    response = read_notebook_output(path, 0, 0)

    assert notebook["cells"][0]["outputs"][0]["text"] == "bad \ud800 byte\n"
    assert response["stream"]["data"] == "bad \ufffd byte\n"


def test_invalid_utf8_is_a_read_failure_on_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "latin1.ipynb"
    path.write_bytes(b'{"nbformat": 4, "cells": [], "metadata": {"x": "\xe9"}}')

    with pytest.raises(NotebookError) as small:
        io.read_notebook(path)
    monkeypatch.setattr(io, "LEAN_PARSE_BYTES", 1)
    with pytest.raises(NotebookError) as big:
        io.read_notebook(path)

    assert small.value.code == ErrorCode.NOTEBOOK_READ_FAILED
    assert big.value.code == ErrorCode.NOTEBOOK_READ_FAILED


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_the_lean_path_reads_every_fixture_exactly_as_orjson_does(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = NOTEBOOKS / name
    expected = io.read_notebook(path)
    monkeypatch.setattr(io, "LEAN_PARSE_BYTES", 1)

    assert io.read_notebook(path) == expected


def test_the_lean_path_reports_invalid_json_with_its_position(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cut.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "cells": []})[:-3], encoding="utf-8")
    monkeypatch.setattr(io, "LEAN_PARSE_BYTES", 1)

    with pytest.raises(NotebookError) as caught:
        io.read_notebook(path)

    assert caught.value.code == ErrorCode.NOTEBOOK_READ_FAILED
    assert caught.value.details["line"] == 1


@pytest.mark.parametrize(
    ("raw", "position"),
    [
        (b'{"nbformat": 4, "cells": [], "x": "\xe9t\xe9"}', 35),  # latin-1
        ("{}".encode("utf-16"), 0),  # starts with a UTF-16 byte order mark
        (bytes(range(256)), 128),
    ],
    ids=["latin-1", "utf-16", "binary"],
)
def test_a_file_that_is_not_utf8_says_so_and_at_which_byte(
    tmp_path: Path, raw: bytes, position: int
) -> None:
    path = tmp_path / "enc.ipynb"
    path.write_bytes(raw)
    with pytest.raises(NotebookError) as excinfo:
        io.read_notebook(path)
    assert excinfo.value.code == ErrorCode.NOTEBOOK_READ_FAILED
    # An encoding error points at a byte; it has no JSON line/column.
    assert excinfo.value.details["position"] == position
    assert "line" not in excinfo.value.details


@pytest.mark.parametrize(
    "worksheets",
    [
        ["not a worksheet"],
        [{"cells": "nope"}],
        [{"cells": ["a cell?"]}],
        [{"cells": [{"cell_type": "code", "input": "x", "outputs": "no"}]}],
        [{"cells": [{"cell_type": "code", "input": "x", "outputs": ["o"]}]}],
        [{"cells": [{"cell_type": "code", "input": "x", "outputs": [{"text": "t"}]}]}],
        [{"cells": [{"cell_type": 3}]}],
        [{"cells": [{"cell_type": "heading", "source": "t", "level": "one"}]}],
        [{"cells": [{"cell_type": "markdown", "source": {"a": 1}}]}],
    ],
)
def test_a_broken_nbformat_3_structure_is_read_failed_before_nbformat_sees_it(
    tmp_path: Path, worksheets: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import nbformat.v4

    def no_upgrade(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the structure check must refuse this first")

    monkeypatch.setattr(nbformat.v4, "upgrade", no_upgrade)
    path = tmp_path / "v3.ipynb"
    path.write_text(
        json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": worksheets}),
        encoding="utf-8",
    )
    with pytest.raises(NotebookError) as excinfo:
        io.read_notebook(path)
    assert excinfo.value.code == ErrorCode.NOTEBOOK_READ_FAILED
