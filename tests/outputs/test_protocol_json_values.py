"""The shared structural checks: JSON depth and shape, MIME value types, exact numbers.

The directory (``list_outputs``) and the reader (``read_output``) must agree: every value the
listing reports as sound reads, and every value a read refuses on structure is flagged in the
listing. Nothing recurses on user data without a bound.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from protocol_cases import SOURCE, expect_error

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs import (
    MAX_JSON_DEPTH,
    OutputProtocolError,
    list_outputs,
    read_output,
    serialize_json,
)


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _bundle(data: dict[str, Any], metadata: Any = None) -> dict[str, Any]:
    return {"output_type": "display_data", "data": data, "metadata": metadata or {}}


STREAM = {"output_type": "stream", "name": "stdout", "text": "fine\n"}


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 300, 600, 2_000, 100_000])
def test_a_json_value_nested_too_deeply_is_flagged_in_the_listing_and_refused_by_a_read(
    depth: int,
) -> None:
    outputs = [STREAM, _bundle({"application/json": _nested(depth), "text/plain": "x"})]
    listing = list_outputs(outputs, source=SOURCE)
    entry = listing["outputs"][1]
    assert entry["mime_problems"]["application/json"]["code"] == ErrorCode.OUTPUT_DATA_INVALID
    assert entry["mime_bytes"]["application/json"] is None
    assert "problem" not in listing["outputs"][0]
    expect_error(
        ErrorCode.OUTPUT_DATA_INVALID,
        read_output,
        outputs,
        1,
        source=SOURCE,
        mime_type="application/json",
    )
    only_json = [_bundle({"application/json": _nested(depth)})]
    expect_error(ErrorCode.OUTPUT_DATA_INVALID, read_output, only_json, 0, source=SOURCE)
    # The other representation of the same bundle still reads.
    plain = read_output(outputs, 1, source=SOURCE)
    assert plain["selected"]["data"] == "x"


def test_a_json_value_at_the_maximum_depth_reads_whole() -> None:
    value = _nested(MAX_JSON_DEPTH)
    outputs = [_bundle({"application/json": value})]
    entry = list_outputs(outputs, source=SOURCE)["outputs"][0]
    assert "mime_problems" not in entry
    response = read_output(outputs, 0, source=SOURCE)
    assert response["selected"]["data"] == value
    assert response["selected"]["bytes"] == entry["mime_bytes"]["application/json"]


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 5_000])
def test_metadata_nested_too_deeply_is_a_problem_of_that_output_only(depth: int) -> None:
    outputs = [STREAM, {**STREAM, "metadata": {"deep": _nested(depth)}}]
    listing = list_outputs(outputs, source=SOURCE)
    entry = listing["outputs"][1]
    assert entry["problem"]["code"] == ErrorCode.OUTPUT_DATA_INVALID
    assert entry["metadata"] == {}
    assert listing["outputs"][0]["total_characters"] == 5
    expect_error(ErrorCode.OUTPUT_DATA_INVALID, read_output, outputs, 1, source=SOURCE)


@pytest.mark.parametrize(
    ("mime_type", "value"),
    [
        ("text/plain", 5),
        ("image/png", 12),
        ("text/html", {"a": 1}),
        ("text/plain", ["line", ["nested"]]),
        ("text/markdown", None),
        ("image/svg+xml", {"svg": True}),
        ("image/jpeg", [1, 2]),
    ],
)
def test_a_value_of_the_wrong_type_is_flagged_by_the_listing_and_refused_by_the_read(
    mime_type: str, value: Any
) -> None:
    outputs = [_bundle({mime_type: value, "text/x-other": "ok"})]
    entry = list_outputs(outputs, source=SOURCE)["outputs"][0]
    assert entry["mime_problems"][mime_type]["code"] == ErrorCode.OUTPUT_DATA_INVALID
    assert entry["mime_bytes"][mime_type] is None
    expect_error(
        ErrorCode.OUTPUT_DATA_INVALID, read_output, outputs, 0, source=SOURCE, mime_type=mime_type
    )
    other = read_output(outputs, 0, source=SOURCE, mime_type="text/x-other")
    assert other["selected"]["data"] == "ok"


def test_every_listed_sound_value_reads_and_every_flagged_one_does_not() -> None:
    data = {
        "text/plain": ["a", "b"],
        "text/html": 3,
        "application/json": {"k": [1, 2]},
        "application/vnd.custom+json": _nested(MAX_JSON_DEPTH + 5),
        "application/x-thing+json": {"structured": True},
        "text/latex": "$x$",
    }
    outputs = [_bundle(data)]
    entry = list_outputs(outputs, source=SOURCE)["outputs"][0]
    flagged = set(entry.get("mime_problems", {}))
    assert flagged == {"text/html", "application/vnd.custom+json"}
    for mime_type in data:
        try:
            read_output(outputs, 0, source=SOURCE, mime_type=mime_type)
        except OutputProtocolError as err:
            assert mime_type in flagged
            assert err.code == ErrorCode.OUTPUT_DATA_INVALID
        else:
            assert mime_type not in flagged


@pytest.mark.parametrize("number", [2**64, 2**70, -(2**63) - 1, 10**40])
def test_integers_beyond_64_bits_are_serialised_exactly(number: int) -> None:
    value = {"n": number, "text": "é"}
    outputs = [_bundle({"application/json": value}, metadata={"big": number})]
    response = read_output(outputs, 0, source=SOURCE)
    assert response["selected"]["data"] == value
    assert response["metadata"] == {"big": number}
    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    assert response["selected"]["bytes"] == len(expected)
    assert json.loads(serialize_json(response))["selected"]["data"]["n"] == number
    entry = list_outputs(outputs, source=SOURCE)["outputs"][0]
    assert entry["mime_bytes"]["application/json"] == len(expected)


def test_non_finite_floats_come_back_as_none_and_serialise_as_null() -> None:
    value = {"nan": math.nan, "inf": [math.inf, -math.inf], "ok": 1.5}
    outputs = [_bundle({"application/json": value})]
    response = read_output(outputs, 0, source=SOURCE)
    data = response["selected"]["data"]
    assert data == {"nan": None, "inf": [None, None], "ok": 1.5}
    # Any serialiser now gives the document that was measured.
    assert json.dumps(data, separators=(",", ":")).encode() == serialize_json(data)
    assert response["selected"]["bytes"] == len(serialize_json(data))
    assert math.isnan(outputs[0]["data"]["application/json"]["nan"])  # input not mutated


def test_serialize_json_replaces_lone_surrogates_and_refuses_non_json() -> None:
    assert json.loads(serialize_json({"k\ud800": ["\udfff"]})) == {"k\ufffd": ["\ufffd"]}
    with pytest.raises(OutputProtocolError) as excinfo:
        serialize_json({"s": {1, 2}})
    assert excinfo.value.code == ErrorCode.OUTPUT_DATA_INVALID
    with pytest.raises(OutputProtocolError) as excinfo:
        serialize_json(_nested(100_000))
    assert excinfo.value.code == ErrorCode.OUTPUT_DATA_INVALID
