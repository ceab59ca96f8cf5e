"""The protocol's bytes are the standard library's compact JSON, in every process.

A response's size decides paging and truncation, so the bytes a front end writes and the sizes
the protocol measures come from one serialiser: ``json.dumps(value, separators=(",", ":"),
ensure_ascii=False)`` as UTF-8 (what the reference jupyter-jcli 0.9.7 measures). These cases
compare our writer, our sizes and our text measure with that spelling, on the values where
serialisers differ (floats) and on every class of string escape.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from protocol_cases import SOURCE

from jupyter_jcli.notebook.io import read_notebook
from jupyter_jcli.outputs import list_outputs, read_output, serialize_json
from jupyter_jcli.outputs._jsonsafe import make_serialisable
from jupyter_jcli.outputs._text import prefix_json_bytes, text_window

STRINGS = [
    "",
    "plain ascii",
    "".join(map(chr, range(32))),  # every control character: \b \f \n \r \t and \u00XX
    'quote " backslash \\ slash /',
    "\x7f DEL is not escaped",
    "\u2028 line and paragraph \u2029 separators",
    "\u00e9t\u00e9 \u4e2d\u6587 \U0001f600 astral \U00010348",
    "\ufeff byte order mark, \ufffd replacement",
]
FLOATS = [1e-05, 1e-7, 1e16, 1e22, 1.5e300, 5e-324, -0.0, 0.1, 1.0, 123456789.125, 2.5e-5]
INTS = [0, -1, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1, 10**40]


def canonical(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


VALUES = [
    *STRINGS,
    *FLOATS,
    *INTS,
    True,
    False,
    None,
    [],
    {},
    [[], {}, [[]], {"": {}}],
    {"nested": {"a": [1, 2.5, "x", None, True]}, "k\n\u2028": FLOATS, "ints": INTS},
    {text: text for text in STRINGS},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_responses_are_written_and_measured_as_the_standard_librarys_compact_json(
    value: Any,
) -> None:
    assert serialize_json(value) == canonical(value)
    assert make_serialisable(value)[1] == len(canonical(value))


@pytest.mark.parametrize("number", FLOATS)
def test_a_float_in_a_json_output_counts_the_bytes_python_writes(number: float) -> None:
    value = {"x": number}
    outputs = [{"output_type": "display_data", "metadata": {},
                "data": {"application/json": value}}]  # fmt: skip
    response = read_output(outputs, 0, source=SOURCE)
    assert response["selected"]["bytes"] == len(canonical(value))
    entry = list_outputs(outputs, source=SOURCE)["outputs"][0]
    assert entry["mime_bytes"]["application/json"] == len(canonical(value))
    assert serialize_json(response) == canonical(response)


@pytest.mark.parametrize("text", STRINGS, ids=range(len(STRINGS)))
def test_a_text_page_is_measured_as_the_canonical_writer_writes_it(text: str) -> None:
    window = text_window(text, 0, None)
    assert window.data_json_bytes == len(canonical(text))
    assert window.fields["bytes"] == len(text.encode("utf-8"))
    assert prefix_json_bytes(text, 3) == len(canonical(text[:3]))


def test_a_text_of_several_measuring_chunks_is_measured_exactly() -> None:
    text = ('\x00"\u2028\U0001f600é\\\n' * 300_000)[:2_100_000]  # past two 1 MiB chunks
    window = text_window(text, 5, None)
    assert window.data_json_bytes == len(canonical(text[5:]))
    assert window.fields["bytes"] == len(text[5:].encode("utf-8"))


def test_lone_surrogates_and_non_finite_floats_are_written_as_their_clean_form() -> None:
    value = {"s\ud800": ["\udfff x", math.nan, math.inf, -math.inf, 1e-05]}
    clean = {"s\ufffd": ["\ufffd x", None, None, None, 1e-05]}
    assert serialize_json(value) == canonical(clean)
    assert make_serialisable(value) == (clean, len(canonical(clean)))


def test_a_notebook_read_keeps_integers_beyond_64_bits_exact(tmp_path: Path) -> None:
    big = 2**80 + 1
    output = {"output_type": "display_data", "metadata": {}, "data": {"application/json": big}}
    cell = {"cell_type": "code", "id": "a", "metadata": {"n": big}, "source": "",
            "execution_count": 1, "outputs": [output]}  # fmt: skip
    path = tmp_path / "big.ipynb"
    path.write_text(
        json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]}),
        encoding="utf-8",
    )
    notebook = read_notebook(path)
    assert notebook["cells"][0]["metadata"]["n"] == big
    assert type(notebook["cells"][0]["metadata"]["n"]) is int
    selected = read_output(notebook["cells"][0]["outputs"], 0, source=SOURCE)["selected"]
    assert (selected["data"], selected["bytes"]) == (big, len(str(big)))


def test_a_process_that_loaded_orjson_writes_the_same_response_bytes(tmp_path: Path) -> None:
    """Whatever a process has imported (a long-lived server has orjson loaded), a response
    and its measured sizes are the same bytes as in a fresh process."""
    value = {"f": FLOATS, "i": INTS[:5], "s": STRINGS}  # no integer past 64 bits
    outputs = [{"output_type": "display_data", "metadata": {},
                "data": {"application/json": value}}]  # fmt: skip
    code = (
        "import sys EXTRA\n"
        "from jupyter_jcli.outputs import read_output, serialize_json\n"
        f"outputs = {outputs!r}\n"
        "sys.stdout.buffer.write(serialize_json(read_output(outputs, 0, source={'kind': 'x'})))\n"
    )
    answers = []
    for extra in ("", ", orjson"):
        done = subprocess.run(
            [sys.executable, "-c", code.replace(" EXTRA", extra)],
            capture_output=True,
            cwd=tmp_path,
            timeout=120,
            check=True,
        )
        answers.append(done.stdout)
    assert answers[0] == answers[1]
    assert json.loads(answers[0])["selected"]["bytes"] == len(canonical(value))
