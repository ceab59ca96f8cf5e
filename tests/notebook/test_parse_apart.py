"""Large notebooks read and checked one cell at a time: parsed (``_layout.parse_apart``,
used by ``io.parse_notebook`` past ``LEAN_PARSE_BYTES``) to the same values as a whole-file
parse, without orjson's copy of the whole file; their JSON style detected
(``_layout.reproduces``) with the same answer as a whole serialisation, without holding it."""

from __future__ import annotations

import copy
import itertools
import json
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from jupyter_jcli.notebook import io
from jupyter_jcli.notebook._jsonstyle import JsonStyle, dumps_notebook
from jupyter_jcli.notebook._layout import parse_apart, reproduces
from jupyter_jcli.notebook._writebase import write_base

FIXTURES = Path(__file__).parents[1] / "fixtures"
STYLES = [
    JsonStyle(indent=indent, sort_keys=sort_keys, ensure_ascii=ascii_, crlf=crlf)
    for indent, sort_keys, ascii_, crlf in itertools.product(
        (1, 2, 4), (True, False), (True, False), (False, True)
    )
]


def _notebook(cells: int = 6, output_chars: int = 10) -> dict[str, Any]:
    body = [
        {
            "cell_type": "code",
            "execution_count": index,
            "id": f"c{index}",
            "metadata": {"tags": ["x"], "n": [1, 2.5, None, True]},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["é" * output_chars]}],
            "source": [f"# step {index}\n", f"x{index} = {{'a': [1]}}"],
        }
        for index in range(cells)
    ]
    return {"metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4,
            "nbformat_minor": 5, "cells": body}  # fmt: skip


@pytest.mark.parametrize("style", STYLES, ids=repr)
def test_a_file_parsed_apart_equals_its_whole_parse_in_every_indented_style(
    style: JsonStyle,
) -> None:
    raw = dumps_notebook(_notebook(), style)

    assert parse_apart(raw) == orjson.loads(raw)


def test_every_fixture_that_parses_apart_gives_its_whole_parse() -> None:
    apart = 0
    for path in sorted(FIXTURES.rglob("*.ipynb")):
        raw = path.read_bytes()
        try:
            whole = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        found = parse_apart(raw)
        if found is not None:
            apart += 1
            assert found == whole, path.name
    assert apart > 10


@pytest.mark.parametrize(
    "text",
    [
        # a second "cells" key spelled with an escape: the last one wins in a whole parse
        '{\n "cells": [\n  {\n   "a": 1\n  }\n ],\n "cell\\u0073": []\n}\n',
        # a span that is not one whole object (the first cell is cut by a deeper "  }")
        '{\n "cells": [\n  {\n   "a": {\n  },\n  "b": 2\n  }\n ]\n}\n',
        # a lone surrogate escape orjson refuses
        '{\n "cells": [\n  {\n   "a": "\\ud800"\n  }\n ]\n}\n',
        # not indented
        '{"cells": [{"a": 1}]}',
        # "cells" once more outside the cells (a value here; it could be a key)
        '{\n "cells": [\n  {\n   "a": 1\n  }\n ],\n "x": "cells"\n}\n',
    ],
)
def test_a_file_whose_cells_cannot_be_parsed_apart_exactly_is_left_to_the_whole_parse(
    text: str,
) -> None:
    assert parse_apart(text.encode("utf-8")) is None


def test_parse_notebook_past_the_lean_size_gives_the_same_notebook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw = (json.dumps(_notebook(40), indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    expected = io.parse_notebook(raw, path=Path("nb.ipynb"))
    monkeypatch.setattr(io, "LEAN_PARSE_BYTES", 1)

    assert io.parse_notebook(raw, path=Path("nb.ipynb")) == expected


def test_parsing_a_large_notebook_holds_no_copy_of_the_whole_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    notebook = _notebook(200, output_chars=10_000)  # about 4 MB of output text
    raw = (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    monkeypatch.setattr(io, "LEAN_PARSE_BYTES", 1)
    tracemalloc.start()
    try:
        parsed = io.parse_notebook(raw, path=Path("big.ipynb"))
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert parsed == notebook
    # what stays is the parsed values; the parse itself adds at most one cell's buffer
    assert peak - kept < len(raw) // 10


@pytest.mark.parametrize("style", STYLES, ids=repr)
def test_a_style_reproduces_a_file_cell_by_cell_exactly_when_it_does_whole(
    style: JsonStyle,
) -> None:
    notebook = _notebook()
    raw = dumps_notebook(notebook, style)
    edited = copy.deepcopy(notebook)
    edited["cells"][3]["source"] = "changed"
    header = copy.deepcopy(notebook)
    header["metadata"]["extra"] = 1

    for candidate in STYLES:
        for model in (notebook, edited, header):
            assert reproduces(raw, model, candidate) == (dumps_notebook(model, candidate) == raw)


def test_the_write_base_of_a_large_file_never_holds_its_whole_serialisation() -> None:
    notebook = _notebook(200, output_chars=10_000)
    raw = (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    model = io.parse_notebook(raw, path=Path("big.ipynb"))
    tracemalloc.start()
    try:
        base = write_base(raw, Path("big.ipynb"), model, paired=False)
        _kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert base.plain
    assert base.layout is not None
    assert peak < len(raw) // 10
