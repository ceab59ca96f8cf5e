"""The two JSON paths of notebook reading: orjson, and the standard library for lone
surrogate escapes and for files past ``LEAN_PARSE_BYTES``."""

from __future__ import annotations

import json
import math
import sys
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


def _cells_json(extra: str) -> bytes:
    """A notebook whose one cell's metadata holds the raw JSON text ``extra``."""
    return (
        '{"nbformat": 4, "nbformat_minor": 5, "metadata": {"\\u2028 k": "\\u2028 \\u2029 \x7f"},'
        ' "cells": [{"cell_type": "code", "id": "a", "source": "", "execution_count": 1,'
        f' "outputs": [], "metadata": {{"v": {extra}}}}}]}}'
    ).encode()


PROTOCOL_READ_CASES = {
    "big integers": _cells_json(f"[{2**64}, {-(2**63) - 1}, {10**40}, {2**64 - 1}, {-(2**63)}]"),
    "a long mantissa": _cells_json(
        "[0.1000000000000000055511151231257827, 1.00000000000000011102]"
    ),
    "long integer parts": _cells_json("[12345678901234567890.5, -98765432109876543210e-3]"),
    "long fractions": _cells_json("[0.00030000000000000003, 0.000123456789012345678901234]"),
    "floats": _cells_json("[1e-05, 1E+16, -0.0, 0.1, 5e-324, 1.7976931348623157e308, 1e-400]"),
    "an out of range float": _cells_json("[1e400, -1e400]"),
    "NaN and Infinity literals": _cells_json("[NaN, Infinity, -Infinity]"),
    "a lone surrogate escape": _cells_json('"\\ud800 x"'),
    "escapes and astral text": _cells_json('["\\u00e9\\ud83d\\ude00\\/\\b", "\U0001f600 é"]'),
    "a duplicate key": _cells_json('{"a": 1, "a": 2.5}'),
    "empty containers": _cells_json('[[], {}, [[]], {"": {}}, true, false, null]'),
    "deep nesting": _cells_json("[" * 1100 + "]" * 1100),
    "bad JSON after non-ASCII": _cells_json('"é€"')[:-3] + b"x}",
    "a control character in a string": _cells_json('"a\tb"'),
    "a byte order mark": b"\xef\xbb\xbf" + _cells_json("1"),
    "trailing data": _cells_json("1") + b" 2",
}


def _outcome(path: Path) -> tuple[str, object]:
    try:
        return "value", repr(io.read_notebook(path))  # repr: 1 and 1.0 differ, key order shows
    except NotebookError as err:
        return err.code, err.details


@pytest.mark.parametrize("raw", PROTOCOL_READ_CASES.values(), ids=PROTOCOL_READ_CASES)
def test_the_protocol_read_gives_the_standard_librarys_value_or_error_with_orjson_loaded_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: bytes
) -> None:
    import orjson  # a long-lived server has it loaded: the read may let it parse

    path = tmp_path / "case.ipynb"
    path.write_bytes(raw)
    assert "orjson" in sys.modules and orjson.loads(b"1") == 1
    with_orjson = _outcome(path)
    monkeypatch.delitem(sys.modules, "orjson")  # a fresh process: the standard library
    without = _outcome(path)
    assert with_orjson == without
    if without[0] == "value":
        stdlib = json.loads(raw.decode("utf-8"))
        assert repr(io.read_notebook(path)["cells"]) == repr(stdlib["cells"])


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_every_fixture_reads_the_same_with_orjson_loaded_or_not(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orjson  # noqa: F401

    with_orjson = _outcome(NOTEBOOKS / name)
    monkeypatch.delitem(sys.modules, "orjson")
    assert _outcome(NOTEBOOKS / name) == with_orjson


def test_random_numbers_read_the_same_with_orjson_loaded_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random
    import struct

    import orjson

    chance = random.Random(11)
    floats, integers = [], []
    for _ in range(3000):
        bits = struct.unpack("<d", chance.getrandbits(64).to_bytes(8, "little"))[0]
        floats.append(repr(bits) if math.isfinite(bits) else "0.5")
        digits = "".join(chance.choice("0123456789") for _ in range(chance.randint(1, 24)))
        exponent = chance.choice(["", f"e{chance.randint(-340, 300)}", "E+5", "e-7"])
        floats.append(f"{chance.choice(['', '-'])}0.{digits}{exponent}")
        integers.append(f"{chance.choice(['', '-'])}{chance.randint(1, 9)}{digits}")
    files = {}
    for name, numbers in (("floats", floats), ("integers", integers)):
        files[name] = tmp_path / f"{name}.ipynb"
        files[name].write_bytes(_cells_json("[" + ", ".join(numbers) + "]"))
    assert orjson.loads(files["floats"].read_bytes())  # no long integer part: orjson parses
    with_orjson = {name: _outcome(path) for name, path in files.items()}
    monkeypatch.delitem(sys.modules, "orjson")
    assert {name: _outcome(path) for name, path in files.items()} == with_orjson


BROKEN_JSON = {
    "truncated": _cells_json('"abc"')[:-7],
    "truncated inside a string": _cells_json('"abcdef"')[:-6],
    "bad JSON after non-ASCII": PROTOCOL_READ_CASES["bad JSON after non-ASCII"],
    "trailing data": PROTOCOL_READ_CASES["trailing data"],
    "a control character in a string": PROTOCOL_READ_CASES["a control character in a string"],
    "empty": b"",
}


@pytest.mark.parametrize("lean", [False, True], ids=["orjson", "lean"])
@pytest.mark.parametrize("raw", BROKEN_JSON.values(), ids=BROKEN_JSON)
def test_the_document_models_parse_reports_broken_json_as_the_protocol_read_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: bytes, lean: bool
) -> None:
    path = tmp_path / "broken.ipynb"
    path.write_bytes(raw)
    with pytest.raises(NotebookError) as read:
        io.read_notebook(path)
    if lean:
        monkeypatch.setattr(io, "LEAN_PARSE_BYTES", 1)
    with pytest.raises(NotebookError) as parsed:
        io.parse_notebook(raw, path=path)
    assert read.value.code == parsed.value.code == ErrorCode.NOTEBOOK_READ_FAILED
    assert parsed.value.details == read.value.details
