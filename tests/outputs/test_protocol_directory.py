"""Contract tests of ``list_outputs`` against the protocol fixture."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from protocol_cases import (
    DATA_NOT_OBJECT,
    ERROR,
    ERROR_WITHOUT_ENAME,
    EXECUTION_COUNT_STRING,
    JPEG_LINES,
    METADATA_NOT_OBJECT,
    NO_OUTPUT_TYPE,
    NOT_AN_OBJECT,
    OUTPUT_COUNT,
    PNG_WRAPPED,
    SOURCE,
    STREAM_EMPTY,
    STREAM_NON_ASCII_LIST,
    STREAM_STDOUT,
    STREAM_TEXT_NUMBER,
    SURROGATE_BUNDLE,
    TABLE_BUNDLE,
    UNKNOWN_OUTPUT_TYPE,
    compact_size,
    expect_error,
)

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs import (
    MAX_TRANSPORT_BYTES,
    SCHEMA_VERSION,
    OutputProtocolError,
    list_outputs,
    read_output,
)


def _entries(outputs: list[Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = list_outputs(outputs, source=SOURCE)["outputs"]
    return entries


def test_listing_has_envelope_source_and_one_entry_per_physical_output(
    mixed_outputs: list[Any],
) -> None:
    listing = list_outputs(mixed_outputs, source=SOURCE)
    assert listing["schema_version"] == SCHEMA_VERSION == 1
    assert listing["status"] == "ok"
    assert listing["source"] == SOURCE
    assert listing["output_count"] == OUTPUT_COUNT == len(mixed_outputs)
    assert [e["output_index"] for e in listing["outputs"]] == list(range(OUTPUT_COUNT))


def test_every_entry_carries_the_common_fields(mixed_outputs: list[Any]) -> None:
    for entry in _entries(mixed_outputs):
        assert {"output_index", "output_type", "available_mime_types", "metadata"} <= set(entry)
        assert isinstance(entry["available_mime_types"], list)
        assert isinstance(entry["metadata"], dict)


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (STREAM_STDOUT, {"output_type": "stream", "name": "stdout", "total_characters": 12}),
        (STREAM_NON_ASCII_LIST, {"name": "stderr", "total_characters": 17}),
        (STREAM_EMPTY, {"name": "stdout", "total_characters": 0}),
        (
            ERROR,
            {"output_type": "error", "ename": "ValueError", "evalue": "bad value"},
        ),
        (ERROR, {"traceback_lines": 2, "available_mime_types": []}),
        (
            PNG_WRAPPED,
            {
                "output_type": "display_data",
                "available_mime_types": ["text/plain", "image/png"],
                "metadata": {"image/png": {"width": 3}},
            },
        ),
        (JPEG_LINES, {"output_type": "execute_result", "execution_count": 3}),
        (SURROGATE_BUNDLE, {"execution_count": None, "metadata": {"note": "\ufffd"}}),
        (
            TABLE_BUNDLE,
            {
                "available_mime_types": [
                    "text/plain",
                    "application/json",
                    "text/markdown",
                    "text/html",
                ]
            },
        ),
    ],
)
def test_entry_describes_what_helps_choose_a_read(
    mixed_outputs: list[Any], index: int, expected: dict[str, Any]
) -> None:
    entry = _entries(mixed_outputs)[index]
    assert "problem" not in entry
    for key, value in expected.items():
        assert entry[key] == value, key


def test_stream_and_error_entries_have_no_mime_bytes(mixed_outputs: list[Any]) -> None:
    entries = _entries(mixed_outputs)
    assert "mime_bytes" not in entries[STREAM_STDOUT]
    assert "mime_bytes" not in entries[ERROR]
    assert "execution_count" not in entries[PNG_WRAPPED]


def test_mime_bytes_give_stored_sizes_per_type(mixed_outputs: list[Any]) -> None:
    entry = _entries(mixed_outputs)[TABLE_BUNDLE]
    data = mixed_outputs[TABLE_BUNDLE]["data"]
    assert list(entry["mime_bytes"]) == entry["available_mime_types"]
    assert entry["mime_bytes"]["text/html"] == len(data["text/html"].encode())
    assert entry["mime_bytes"]["application/json"] == compact_size(data["application/json"])
    jpeg = _entries(mixed_outputs)[JPEG_LINES]
    assert jpeg["mime_bytes"]["image/jpeg"] == len(
        "".join(mixed_outputs[JPEG_LINES]["data"]["image/jpeg"])
    )


@pytest.mark.parametrize(
    ("index", "code", "output_type"),
    [
        (UNKNOWN_OUTPUT_TYPE, ErrorCode.OUTPUT_TYPE_UNSUPPORTED, "widget_state"),
        (NOT_AN_OBJECT, ErrorCode.OUTPUT_DATA_INVALID, None),
        (DATA_NOT_OBJECT, ErrorCode.OUTPUT_DATA_INVALID, "display_data"),
        (STREAM_TEXT_NUMBER, ErrorCode.OUTPUT_DATA_INVALID, "stream"),
        (ERROR_WITHOUT_ENAME, ErrorCode.OUTPUT_DATA_INVALID, "error"),
        (NO_OUTPUT_TYPE, ErrorCode.OUTPUT_DATA_INVALID, None),
        (METADATA_NOT_OBJECT, ErrorCode.OUTPUT_DATA_INVALID, "display_data"),
        (EXECUTION_COUNT_STRING, ErrorCode.OUTPUT_DATA_INVALID, "execute_result"),
    ],
)
def test_malformed_output_is_listed_with_its_problem(
    mixed_outputs: list[Any], index: int, code: ErrorCode, output_type: str | None
) -> None:
    entry = _entries(mixed_outputs)[index]
    assert entry["output_type"] == output_type
    assert entry["problem"]["code"] == code
    assert entry["problem"]["message"]
    assert not {"name", "ename", "mime_bytes", "total_characters"} & set(entry)


def test_a_listed_problem_is_the_error_a_read_raises(mixed_outputs: list[Any]) -> None:
    problems = [e for e in _entries(mixed_outputs) if "problem" in e]
    assert len(problems) == 8
    for entry in problems:
        expect_error(
            ErrorCode(entry["problem"]["code"]),
            read_output,
            mixed_outputs,
            entry["output_index"],
            source=SOURCE,
        )


def test_unknown_output_type_keeps_its_metadata_in_the_listing(mixed_outputs: list[Any]) -> None:
    entry = _entries(mixed_outputs)[UNKNOWN_OUTPUT_TYPE]
    assert entry["metadata"] == {"w": 1}


def test_listing_serialises_with_orjson_despite_lone_surrogates(mixed_outputs: list[Any]) -> None:
    listing = list_outputs(mixed_outputs, source=SOURCE)
    document = orjson.loads(orjson.dumps(listing))
    assert document["outputs"][SURROGATE_BUNDLE]["metadata"] == {"note": "\ufffd"}


def test_listing_never_mutates_the_outputs_or_the_source(mixed_outputs: list[Any]) -> None:
    before = copy.deepcopy(mixed_outputs)
    source = dict(SOURCE)
    listing = list_outputs(mixed_outputs, source=source)
    listing["source"]["extra"] = 1
    assert mixed_outputs == before
    assert source == SOURCE


def test_empty_outputs_list_gives_an_empty_directory() -> None:
    listing = list_outputs([], source=SOURCE)
    assert listing["output_count"] == 0
    assert listing["outputs"] == []


@pytest.mark.parametrize("outputs", [None, {"output_type": "stream"}, "text", 3, ("a",)])
def test_outputs_that_are_not_a_list_are_output_data_invalid(outputs: object) -> None:
    expect_error(ErrorCode.OUTPUT_DATA_INVALID, list_outputs, outputs, source=SOURCE)


def test_source_must_be_a_mapping() -> None:
    with pytest.raises(TypeError):
        list_outputs([], source=[("kind", "ipynb")])  # type: ignore[arg-type]


@pytest.mark.parametrize("limit", [0, -1, MAX_TRANSPORT_BYTES + 1, 1.5, "100", True, None])
def test_listing_rejects_an_invalid_transport_limit(limit: object) -> None:
    expect_error(
        ErrorCode.INVALID_TRANSPORT_LIMIT,
        list_outputs,
        [],
        source=SOURCE,
        max_transport_bytes=limit,
    )


def test_listing_that_does_not_fit_is_output_too_large(mixed_outputs: list[Any]) -> None:
    size = compact_size(list_outputs(mixed_outputs, source=SOURCE))
    assert list_outputs(mixed_outputs, source=SOURCE, max_transport_bytes=size)["status"] == "ok"
    error: OutputProtocolError = expect_error(
        ErrorCode.OUTPUT_TOO_LARGE,
        list_outputs,
        mixed_outputs,
        source=SOURCE,
        max_transport_bytes=size - 1,
    )
    assert error.details == {
        "bytes": size,
        "max_transport_bytes": size - 1,
        "output_count": len(mixed_outputs),
        "read_by_index": True,
    }
    # As the details say, every output stays readable by its index under the same bound.
    for index in range(len(mixed_outputs)):
        try:
            read_output(mixed_outputs, index, source=SOURCE, max_transport_bytes=size - 1)
        except OutputProtocolError as err:
            assert err.code != ErrorCode.OUTPUT_TOO_LARGE
