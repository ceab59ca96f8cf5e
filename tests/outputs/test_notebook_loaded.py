"""``open_notebook``: a notebook (or a paired ``.py``) is parsed once and read many times.

No timing assertions: the tests count the parser calls.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import jupytext
import pytest
from jupytext.jupytext import TextNotebookConverter

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.notebook import _cell_match, io
from jupyter_jcli.outputs import OutputProtocolError
from jupyter_jcli.outputs.notebook import (
    list_notebook_outputs,
    open_notebook,
    read_notebook_output,
)

NOTEBOOKS = Path(__file__).parents[1] / "fixtures" / "notebooks"
REAL = NOTEBOOKS / "text_outputs_and_images.ipynb"


def _stream_cell(index: int) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": index,
        "metadata": {},
        "source": f"print({index})",
        "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{index}\n"}],
    }


def _count_calls(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> Counter[str]:
    calls: Counter[str] = Counter()
    original = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_reading_every_output_of_n_cells_parses_the_notebook_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cells = [_stream_cell(i) for i in range(300)]
    path = tmp_path / "many.ipynb"
    path.write_text(
        json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": cells}),
        encoding="utf-8",
    )
    calls = _count_calls(monkeypatch, io, "_parse_read")  # read_notebook's one parse
    loaded = open_notebook(path)
    assert loaded.cell_count == 300
    for index in range(loaded.cell_count):
        listing = loaded.list_outputs(index)
        assert listing["output_count"] == 1
        read = loaded.read_output(index, 0)
        assert read["stream"]["data"] == f"{index}\n"
        assert read["source"]["cell_index"] == index
    assert calls["_parse_read"] == 1


def test_the_loaded_notebook_answers_like_the_file_level_functions() -> None:
    loaded = open_notebook(REAL)
    for index in range(loaded.cell_count):
        assert loaded.list_outputs(index) == list_notebook_outputs(REAL, index)
        for output in range(loaded.list_outputs(index)["output_count"]):
            assert loaded.read_output(index, output) == read_notebook_output(REAL, index, output)


def test_a_paired_py_is_parsed_once_and_mapped_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cells = [_stream_cell(i) for i in range(200)]
    notebook = {"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": cells}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    text = jupytext.writes(jupytext.reads(json.dumps(notebook), fmt="ipynb"), fmt="py:percent")
    py_path = tmp_path / "nb.py"
    py_path.write_text(text, encoding="utf-8")
    reads = _count_calls(monkeypatch, TextNotebookConverter, "reads")  # jupytext's parser
    parses = _count_calls(monkeypatch, io, "_parse_read")  # read_notebook's one parse
    normalized = _count_calls(monkeypatch, _cell_match, "normalized_source")
    loaded = open_notebook(py_path)
    assert loaded.kind == "py"
    assert loaded.cell_count == 200
    for index in range(loaded.cell_count):
        read = loaded.read_output(index, 0)
        assert read["stream"]["data"] == f"{index}\n"
        assert read["source"]["mapping"] == "content"
        assert read["source"]["requested_cell_index"] == index
        assert "source_start_line" in read["source"]
    assert reads["reads"] == 1
    assert parses["_parse_read"] == 1
    # Each cell's source is normalized once per side: matching is linear.
    assert normalized["normalized_source"] == 400


def test_a_py_without_a_pair_lists_its_cells_and_refuses_each_cell_access(
    tmp_path: Path,
) -> None:
    py_path = tmp_path / "alone.py"
    py_path.write_text("# %%\nx = 1\n\n# %%\ny = 2\n", encoding="utf-8")
    loaded = open_notebook(py_path)
    assert loaded.cell_count == 2
    assert loaded.notebook_path is None
    assert loaded.pairing_error is not None
    assert loaded.pairing_error.code == ErrorCode.NOTEBOOK_PAIR_NOT_FOUND
    assert all("id" not in cell for cell in loaded.cells)
    for index, code in ((0, ErrorCode.NOTEBOOK_PAIR_NOT_FOUND), (5, ErrorCode.CELL_NOT_FOUND)):
        with pytest.raises(OutputProtocolError) as excinfo:
            loaded.list_outputs(index)
        assert excinfo.value.code == code
