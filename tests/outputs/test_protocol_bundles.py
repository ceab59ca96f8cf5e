"""Contract tests of ``read_output`` on display_data and execute_result bundles."""

from __future__ import annotations

import base64
import copy
import sys
from typing import Any

import pytest
from protocol_cases import (
    EMPTY_BUNDLE,
    GIF_WITH_HTML,
    HTML_VALUE_NUMBER,
    JPEG_LINES,
    JPEG_NON_CANONICAL,
    JSON_TYPES_BUNDLE,
    ONLY_UNKNOWN_TYPES,
    PNG_3X2,
    PNG_BAD_ALPHABET,
    PNG_BAD_PADDING,
    PNG_INNER_WHITESPACE,
    PNG_LABELLED_JPEG,
    PNG_VALUE_OBJECT,
    PNG_WRAPPED,
    SOURCE,
    SURROGATE_BUNDLE,
    SVG_AND_PDF,
    TABLE_BUNDLE,
    WEBP_EXTENDED,
    WEBP_LOSSLESS,
    WEBP_LOSSY,
    expect_error,
)

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs import OutputProtocolError, list_outputs, read_output


def _selected(outputs: list[Any], index: int, **options: Any) -> dict[str, Any]:
    response = read_output(outputs, index, source=SOURCE, **options)
    selected: dict[str, Any] = response["selected"]
    return selected


def _bundle(data: dict[str, Any]) -> list[Any]:
    return [{"output_type": "display_data", "data": data, "metadata": {}}]


def test_bundle_read_has_envelope_provenance_and_every_available_type(
    mixed_outputs: list[Any],
) -> None:
    response = read_output(mixed_outputs, TABLE_BUNDLE, source=SOURCE)
    assert response["schema_version"] == 1
    assert response["status"] == "ok"
    assert response["source"] == {**SOURCE, "output_index": TABLE_BUNDLE}
    assert response["output_type"] == "execute_result"
    assert response["execution_count"] == 5
    assert response["metadata"] == {}
    assert response["available_mime_types"] == list(mixed_outputs[TABLE_BUNDLE]["data"])


def test_display_data_has_no_execution_count(mixed_outputs: list[Any]) -> None:
    response = read_output(mixed_outputs, PNG_WRAPPED, source=SOURCE)
    assert "execution_count" not in response
    assert response["metadata"] == {"image/png": {"width": 3}}


@pytest.mark.parametrize(
    ("index", "mime_type", "encoding"),
    [
        (PNG_WRAPPED, "image/png", "base64"),
        (JPEG_LINES, "image/jpeg", "base64"),
        (GIF_WITH_HTML, "image/gif", "base64"),
        (WEBP_LOSSY, "image/webp", "base64"),
        (TABLE_BUNDLE, "text/html", "utf-8"),
        (JSON_TYPES_BUNDLE, "application/geo+json", "json"),
        (SVG_AND_PDF, "image/svg+xml", "utf-8"),
    ],
)
def test_automatic_selection_follows_the_protocol_order(
    mixed_outputs: list[Any], index: int, mime_type: str, encoding: str
) -> None:
    selected = _selected(mixed_outputs, index)
    assert selected["mime_type"] == mime_type
    assert selected["encoding"] == encoding


SELECTION_ORDER = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/gif",
    "text/html",
    "text/markdown",
    "text/plain",
    "application/json",
    "application/geo+json",
    "application/vnd.plotly.v1+json",
    "image/svg+xml",
]


def test_full_selection_order_by_removing_the_winner_each_time() -> None:
    png = PNG_3X2
    values: dict[str, Any] = {
        "image/png": png,
        "image/jpeg": "/9j/2Q==",
        "image/webp": base64.b64encode(b"RIFF\x00\x00\x00\x00WEBP").decode(),
        "image/gif": base64.b64encode(b"GIF89a\x01\x00\x01\x00").decode(),
        "text/html": "<b>h</b>",
        "text/markdown": "*m*",
        "text/plain": "p",
        "application/json": {"j": 1},
        "application/geo+json": {"g": 1},
        "application/vnd.plotly.v1+json": {"p": 1},
        "image/svg+xml": "<svg/>",
    }
    data = {"application/x-never": "never", **dict(reversed(values.items()))}
    for expected in SELECTION_ORDER:
        assert _selected(_bundle(data), 0)["mime_type"] == expected
        del data[expected]
    expect_error(ErrorCode.MIME_NOT_SUPPORTED, read_output, _bundle(data), 0, source=SOURCE)


def test_explicit_request_returns_the_asked_type(mixed_outputs: list[Any]) -> None:
    selected = _selected(mixed_outputs, TABLE_BUNDLE, mime_type="text/plain")
    assert selected["mime_type"] == "text/plain"
    assert selected["data"] == "   a  b\n0  1  2"


@pytest.mark.parametrize("mime_type", ["application/x-unknown", "application/x-structured"])
def test_an_explicit_type_that_is_not_image_text_svg_or_json_is_listed_but_not_supported(
    mixed_outputs: list[Any], mime_type: str
) -> None:
    listed = list_outputs(mixed_outputs, source=SOURCE)["outputs"][ONLY_UNKNOWN_TYPES]
    assert mime_type in listed["available_mime_types"]
    error = expect_error(
        ErrorCode.MIME_NOT_SUPPORTED,
        read_output,
        mixed_outputs,
        ONLY_UNKNOWN_TYPES,
        source=SOURCE,
        mime_type=mime_type,
    )
    assert error.details["mime_type"] == mime_type


def test_an_explicit_text_type_outside_the_selection_order_is_a_text_window() -> None:
    outputs = [{"output_type": "display_data", "data": {"text/csv": "a,b\n1,2\n"}}]
    selected = read_output(outputs, 0, source=SOURCE, mime_type="text/csv")["selected"]
    assert (selected["encoding"], selected["data"], selected["truncated"]) == (
        "utf-8",
        "a,b\n1,2\n",
        False,
    )


def test_types_outside_the_order_are_never_picked_automatically(mixed_outputs: list[Any]) -> None:
    error = expect_error(
        ErrorCode.MIME_NOT_SUPPORTED, read_output, mixed_outputs, ONLY_UNKNOWN_TYPES, source=SOURCE
    )
    assert error.details["available_mime_types"] == [
        "application/x-unknown",
        "application/x-structured",
    ]


def test_pdf_is_visible_but_svg_is_chosen(mixed_outputs: list[Any]) -> None:
    response = read_output(mixed_outputs, SVG_AND_PDF, source=SOURCE)
    assert response["available_mime_types"] == ["application/pdf", "image/svg+xml"]
    assert response["selected"]["data"].startswith("<svg xmlns=")
    assert response["selected"]["data"].endswith("</svg>\n")


@pytest.mark.parametrize(
    ("supported", "expected"),
    [
        (["text/plain"], "text/plain"),
        (["text/plain", "text/markdown"], "text/markdown"),
        (("application/json", "text/plain"), "text/plain"),
        ({"application/json"}, "application/json"),
    ],
)
def test_supported_types_filter_automatic_selection(
    mixed_outputs: list[Any], supported: Any, expected: str
) -> None:
    assert _selected(mixed_outputs, TABLE_BUNDLE, supported_mime_types=supported)["mime_type"] == (
        expected
    )


def test_no_supported_candidate_is_mime_not_supported_with_available_types(
    mixed_outputs: list[Any],
) -> None:
    error = expect_error(
        ErrorCode.MIME_NOT_SUPPORTED,
        read_output,
        mixed_outputs,
        PNG_WRAPPED,
        source=SOURCE,
        supported_mime_types=["image/jpeg"],
    )
    assert error.details["available_mime_types"] == ["text/plain", "image/png"]
    assert error.details["supported_mime_types"] == ["image/jpeg"]


def test_empty_supported_set_leaves_no_candidate(mixed_outputs: list[Any]) -> None:
    expect_error(
        ErrorCode.MIME_NOT_SUPPORTED,
        read_output,
        mixed_outputs,
        TABLE_BUNDLE,
        source=SOURCE,
        supported_mime_types=[],
    )


@pytest.mark.parametrize(
    ("mime_type", "supported", "code"),
    [
        ("text/html", ["text/plain"], ErrorCode.MIME_NOT_SUPPORTED),
        ("text/plain", ["text/html"], ErrorCode.MIME_NOT_SUPPORTED),
        ("image/png", ["text/plain"], ErrorCode.MIME_NOT_FOUND),  # absent first, as the reference
        ("image/png", None, ErrorCode.MIME_NOT_FOUND),
        ("image/png", ["image/png"], ErrorCode.MIME_NOT_FOUND),
        ("TEXT/HTML", None, ErrorCode.MIME_NOT_FOUND),
    ],
)
def test_explicit_request_never_falls_back(
    mixed_outputs: list[Any], mime_type: str, supported: list[str] | None, code: ErrorCode
) -> None:
    error = expect_error(
        code,
        read_output,
        mixed_outputs,
        TABLE_BUNDLE,
        source=SOURCE,
        mime_type=mime_type,
        supported_mime_types=supported,
    )
    assert error.details["mime_type"] == mime_type
    assert "text/html" in error.details["available_mime_types"]


def test_empty_bundle_is_mime_not_found(mixed_outputs: list[Any]) -> None:
    error = expect_error(
        ErrorCode.MIME_NOT_FOUND, read_output, mixed_outputs, EMPTY_BUNDLE, source=SOURCE
    )
    assert error.details["available_mime_types"] == []


@pytest.mark.parametrize("bad", ["text/plain", b"text/plain"])
def test_supported_types_must_not_be_a_bare_string(mixed_outputs: list[Any], bad: Any) -> None:
    with pytest.raises(TypeError):
        read_output(mixed_outputs, TABLE_BUNDLE, source=SOURCE, supported_mime_types=bad)


@pytest.mark.parametrize(
    ("index", "mime_type", "expected"),
    [
        (PNG_WRAPPED, "image/png", (78, 3, 2)),
        (PNG_INNER_WHITESPACE, "image/png", (78, 3, 2)),
        (JPEG_LINES, "image/jpeg", (632, 4, 3)),
        (JPEG_NON_CANONICAL, "image/jpeg", (632, 4, 3)),
        (GIF_WITH_HTML, "image/gif", (42, 5, 4)),
        (WEBP_LOSSY, "image/webp", (44, 6, 5)),
        (WEBP_LOSSLESS, "image/webp", (46, 7, 6)),
        (WEBP_EXTENDED, "image/webp", (80, 9, 8)),
    ],
)
def test_raster_is_canonical_base64_with_decoded_size_and_dimensions(
    mixed_outputs: list[Any], index: int, mime_type: str, expected: tuple[int, int, int]
) -> None:
    size, width, height = expected
    selected = _selected(mixed_outputs, index, mime_type=mime_type)
    assert selected["encoding"] == "base64"
    decoded = base64.b64decode(selected["data"], validate=True)
    assert base64.b64encode(decoded).decode() == selected["data"]
    assert selected["bytes"] == len(decoded) == size
    assert (selected["width"], selected["height"]) == (width, height)


def test_stored_canonical_base64_is_returned_without_copying() -> None:
    value = PNG_3X2
    assert _selected(_bundle({"image/png": value}), 0)["data"] is value


@pytest.mark.parametrize(
    "index",
    [PNG_LABELLED_JPEG, PNG_BAD_ALPHABET, PNG_BAD_PADDING, PNG_VALUE_OBJECT, HTML_VALUE_NUMBER],
)
def test_invalid_selected_value_is_output_data_invalid_without_fallback(
    mixed_outputs: list[Any], index: int
) -> None:
    error = expect_error(
        ErrorCode.OUTPUT_DATA_INVALID, read_output, mixed_outputs, index, source=SOURCE
    )
    assert error.details["mime_type"] in mixed_outputs[index]["data"]


def test_the_text_of_a_bundle_with_a_broken_image_stays_readable(mixed_outputs: list[Any]) -> None:
    selected = _selected(mixed_outputs, PNG_LABELLED_JPEG, mime_type="text/plain")
    assert selected["data"] == "a PNG labelled JPEG"


@pytest.mark.parametrize(
    ("mime_type", "value"),
    [
        ("image/png", "iVBORw0KGgo=\u00a0"),  # non-ASCII whitespace is not base64 whitespace
        ("image/png", "iVBORw0KGgo=AAAA"),  # data after padding
        ("image/png", "=iVBORw0KGgo"),  # leading padding
        ("image/png", "iVBORw0KGgo-"),  # URL-safe alphabet
        ("image/png", ""),
        ("image/png", ["iVBORw0KGgo=", 7]),
        ("image/jpeg", base64.b64encode(b"\xff\xd8").decode()),
        ("image/gif", base64.b64encode(b"GIF88a\x01\x00\x01\x00").decode()),
        ("image/webp", base64.b64encode(b"RIFF\x00\x00\x00\x00WAVE").decode()),
    ],
)
def test_raster_strictness_table(mime_type: str, value: Any) -> None:
    expect_error(
        ErrorCode.OUTPUT_DATA_INVALID, read_output, _bundle({mime_type: value}), 0, source=SOURCE
    )


def test_raster_without_readable_header_omits_dimensions() -> None:
    selected = _selected(_bundle({"image/png": "iVBORw0KGgo="}), 0)
    assert selected["bytes"] == 8
    assert "width" not in selected
    assert "height" not in selected


def test_json_is_returned_structured_with_its_compact_size(mixed_outputs: list[Any]) -> None:
    selected = _selected(mixed_outputs, TABLE_BUNDLE, mime_type="application/json")
    assert selected == {
        "mime_type": "application/json",
        "encoding": "json",
        "bytes": len(b'{"a":[1],"b":[2]}'),
        "data": {"a": [1], "b": [2]},
    }


def test_json_type_holding_a_string_stays_json() -> None:
    selected = _selected(_bundle({"application/json": "just a string"}), 0)
    assert selected["encoding"] == "json"
    assert selected["data"] == "just a string"
    assert selected["bytes"] == len('"just a string"')


def test_json_with_lone_surrogates_is_returned_with_replacement_characters(
    mixed_outputs: list[Any],
) -> None:
    selected = _selected(mixed_outputs, SURROGATE_BUNDLE, mime_type="application/json")
    assert selected["data"] == {"k\ufffd": "v\ufffd"}


def test_json_with_a_non_string_key_is_output_data_invalid() -> None:
    expect_error(
        ErrorCode.OUTPUT_DATA_INVALID,
        read_output,
        _bundle({"application/json": {1: "one"}}),
        0,
        source=SOURCE,
    )


def test_every_read_succeeds_or_raises_a_protocol_error_and_never_mutates(
    mixed_outputs: list[Any],
) -> None:
    before = copy.deepcopy(mixed_outputs)
    outcomes = set()
    for index in range(len(mixed_outputs)):
        for mime_type in (None, "text/plain", "application/json"):
            try:
                read_output(mixed_outputs, index, source=SOURCE, mime_type=mime_type)
                outcomes.add("ok")
            except OutputProtocolError as error:
                outcomes.add(str(error.code))
    assert mixed_outputs == before
    assert {"ok", "MIME_NOT_APPLICABLE", "MIME_NOT_FOUND", "OUTPUT_DATA_INVALID"} <= outcomes


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("iVBORw0KGgo=", True),
        ("iVBORw0KGgo==", False),
        ("iVBORw0KGgo=AAAA", False),
        ("=iVBORw0KGgo", False),
        ("iVBORw0KGgo", False),
        ("iVBORw0K Ggo=", True),
    ],
)
def test_python_310_decoder_is_as_strict_as_strict_mode(
    monkeypatch: pytest.MonkeyPatch, value: str, valid: bool
) -> None:
    monkeypatch.setattr(sys, "version_info", (3, 10, 14, "final", 0))
    outputs = _bundle({"image/png": value})
    if valid:
        assert _selected(outputs, 0)["data"] == "iVBORw0KGgo="
    else:
        expect_error(ErrorCode.OUTPUT_DATA_INVALID, read_output, outputs, 0, source=SOURCE)
