"""Contract tests of streams, errors and text windows."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from protocol_cases import (
    ERROR,
    ERROR_EMPTY_TRACEBACK,
    JSON_TYPES_BUNDLE,
    PLAIN_NON_ASCII,
    PNG_WRAPPED,
    SOURCE,
    STREAM_EMPTY,
    STREAM_NON_ASCII_LIST,
    STREAM_STDOUT,
    STREAM_SURROGATE,
    SURROGATE_BUNDLE,
    TABLE_BUNDLE,
    expect_error,
)

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs import DEFAULT_TEXT_LIMIT, read_output

WINDOW_KEYS = {"data", "offset", "returned_characters", "total_characters", "truncated", "bytes"}


def _stream(text: Any, name: str = "stdout") -> list[Any]:
    return [{"output_type": "stream", "name": name, "text": text}]


def _page(outputs: list[Any], index: int = 0, **options: Any) -> dict[str, Any]:
    """The ``stream`` object of a stream read."""
    page: dict[str, Any] = read_output(outputs, index, source=SOURCE, **options)["stream"]
    return page


def test_stream_read_nests_name_and_window_under_stream(mixed_outputs: list[Any]) -> None:
    response = read_output(mixed_outputs, STREAM_STDOUT, source=SOURCE)
    assert response["output_type"] == "stream"
    assert response["available_mime_types"] == []
    assert response["source"]["output_index"] == STREAM_STDOUT
    stream = response["stream"]
    assert set(stream) == WINDOW_KEYS | {"name"}
    assert stream["name"] == "stdout"
    assert stream["data"] == "hello\nworld\n"
    assert stream["truncated"] is False
    assert not (WINDOW_KEYS | {"name", "selected", "error"}) & set(response)


def test_list_of_strings_is_joined_and_counted_in_code_points(mixed_outputs: list[Any]) -> None:
    response = _page(mixed_outputs, STREAM_NON_ASCII_LIST)
    assert response["data"] == "naïve café 日本語 🎉\n"
    assert response["total_characters"] == len(response["data"]) == 17
    assert response["bytes"] == len(response["data"].encode("utf-8"))


def test_non_ascii_bundle_text_reports_utf8_bytes(mixed_outputs: list[Any]) -> None:
    selected = read_output(mixed_outputs, PLAIN_NON_ASCII, source=SOURCE)["selected"]
    assert selected["data"] == "αβγ🎉 €"
    assert selected["returned_characters"] == 6
    assert selected["bytes"] == len("αβγ🎉 €".encode()) == 14


@pytest.mark.parametrize(
    ("offset", "limit", "data", "next_offset"),
    [
        (0, 5, "hello", 5),
        (5, 1, "\n", 6),
        (6, 100, "world\n", None),
        (11, 1, "\n", None),
        (12, 1, "", None),
        (0, DEFAULT_TEXT_LIMIT, "hello\nworld\n", None),
        (0, 12, "hello\nworld\n", None),
    ],
)
def test_stream_window_arithmetic(
    mixed_outputs: list[Any], offset: int, limit: int, data: str, next_offset: int | None
) -> None:
    response = _page(mixed_outputs, STREAM_STDOUT, offset=offset, limit=limit)
    assert response["data"] == data
    assert response["offset"] == offset
    assert response["returned_characters"] == len(data)
    assert response["total_characters"] == 12
    assert response["truncated"] is (offset > 0 or next_offset is not None)
    assert response.get("next_offset") == next_offset


def test_bundle_text_window_lives_inside_selected(mixed_outputs: list[Any]) -> None:
    response = read_output(mixed_outputs, TABLE_BUNDLE, source=SOURCE, offset=7, limit=4)
    selected = response["selected"]
    assert selected["mime_type"] == "text/html"
    assert selected["encoding"] == "utf-8"
    assert selected["data"] == "<tr>"
    assert selected["next_offset"] == 11
    assert "data" not in response
    assert "offset" not in response


def test_empty_stream_reads_as_an_empty_page(mixed_outputs: list[Any]) -> None:
    response = _page(mixed_outputs, STREAM_EMPTY)
    assert (response["data"], response["total_characters"], response["bytes"]) == ("", 0, 0)


@pytest.mark.parametrize(
    ("offset", "limit"),
    [
        (13, 1),
        (-1, 5),
        (0, 0),
        (0, -3),
        (True, 5),
        (0, False),
        (1.0, 5),
        (0, "10"),
        (None, 5),
    ],
)
def test_invalid_window_table(mixed_outputs: list[Any], offset: Any, limit: Any) -> None:
    expect_error(
        ErrorCode.INVALID_WINDOW,
        read_output,
        mixed_outputs,
        STREAM_STDOUT,
        source=SOURCE,
        offset=offset,
        limit=limit,
    )


def test_offset_past_the_end_reports_the_total(mixed_outputs: list[Any]) -> None:
    error = expect_error(
        ErrorCode.INVALID_WINDOW,
        read_output,
        mixed_outputs,
        STREAM_STDOUT,
        source=SOURCE,
        offset=99,
    )
    assert error.details == {"offset": 99, "total_characters": 12}


@pytest.mark.parametrize(
    ("index", "options"),
    [
        (PNG_WRAPPED, {"offset": 1}),
        (PNG_WRAPPED, {"limit": 10}),
        (JSON_TYPES_BUNDLE, {"limit": DEFAULT_TEXT_LIMIT + 1}),
        (TABLE_BUNDLE, {"mime_type": "application/json", "offset": 2}),
        (ERROR, {"offset": 1}),
        (ERROR, {"limit": 1}),
    ],
)
def test_window_on_image_json_or_error_is_not_supported(
    mixed_outputs: list[Any], index: int, options: dict[str, Any]
) -> None:
    expect_error(
        ErrorCode.WINDOW_NOT_SUPPORTED, read_output, mixed_outputs, index, source=SOURCE, **options
    )


def test_error_read_nests_the_stored_traceback_under_error(mixed_outputs: list[Any]) -> None:
    response = read_output(mixed_outputs, ERROR, source=SOURCE)
    assert response["output_type"] == "error"
    assert response["error"] == {
        "ename": "ValueError",
        "evalue": "bad value",
        "traceback": mixed_outputs[ERROR]["traceback"],
    }
    assert response["available_mime_types"] == []
    assert not (WINDOW_KEYS | {"ename", "evalue", "traceback", "stream"}) & set(response)


def test_error_with_empty_traceback_reads(mixed_outputs: list[Any]) -> None:
    error = read_output(mixed_outputs, ERROR_EMPTY_TRACEBACK, source=SOURCE)["error"]
    assert (error["ename"], error["evalue"], error["traceback"]) == (
        "KeyboardInterrupt",
        "",
        [],
    )


@pytest.mark.parametrize("index", [STREAM_STDOUT, ERROR])
def test_an_explicit_mime_type_on_a_stream_or_error_is_not_applicable(
    mixed_outputs: list[Any], index: int
) -> None:
    error = expect_error(
        ErrorCode.MIME_NOT_APPLICABLE,
        read_output,
        mixed_outputs,
        index,
        source=SOURCE,
        mime_type="text/plain",
    )
    assert error.details["output_type"] == mixed_outputs[index]["output_type"]


@pytest.mark.parametrize("index", [STREAM_STDOUT, ERROR])
@pytest.mark.parametrize("supported", [["text/plain"], [], ["image/png", "text/html"]])
def test_supported_mime_types_filter_only_bundles_so_streams_and_errors_read_normally(
    mixed_outputs: list[Any], index: int, supported: list[str]
) -> None:
    plain = read_output(mixed_outputs, index, source=SOURCE)
    assert read_output(mixed_outputs, index, source=SOURCE, supported_mime_types=supported) == plain


def test_lone_surrogate_in_a_stream_becomes_a_replacement_character(
    mixed_outputs: list[Any],
) -> None:
    response = _page(mixed_outputs, STREAM_SURROGATE)
    assert response["data"] == "bad \ufffd char\n"
    assert response["total_characters"] == 11
    assert response["bytes"] == len(response["data"].encode())
    assert orjson.loads(orjson.dumps(response))["data"] == "bad \ufffd char\n"


def test_lone_surrogate_in_bundle_text_and_metadata_is_replaced(mixed_outputs: list[Any]) -> None:
    response = read_output(mixed_outputs, SURROGATE_BUNDLE, source=SOURCE)
    assert response["selected"]["data"] == "x \ufffd y"
    assert response["metadata"] == {"note": "\ufffd"}
    assert response["execution_count"] is None
    orjson.dumps(response)


def test_surrogates_in_error_fields_and_source_are_replaced() -> None:
    outputs = [{"output_type": "error", "ename": "E\udc80", "evalue": "v", "traceback": ["\ud800"]}]
    response = read_output(outputs, 0, source={"path": "/x\udcff.ipynb"})
    assert response["error"]["ename"] == "E\ufffd"
    assert response["error"]["traceback"] == ["\ufffd"]
    assert response["source"]["path"] == "/x\ufffd.ipynb"


def test_surrogate_pair_halves_each_count_as_one_character() -> None:
    text = "a\ud83d\ude00b"  # two separate surrogates in a Python str, not one astral char
    response = _page(_stream(text), offset=1, limit=2)
    assert response["data"] == "\ufffd\ufffd"
    assert response["next_offset"] == 3


def test_pages_reassemble_the_whole_text_for_random_limits_and_line_splits() -> None:
    rng = random.Random(20240611)
    alphabet = 'ab\n\t"\\é日🎉\x00\x1f'
    for _ in range(30):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        limit = rng.randint(1, 40)
        cuts = sorted(rng.randint(0, len(text)) for _ in range(rng.randint(0, 12)))
        parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        outputs = _stream(parts)
        pages, offset = [], 0
        while True:
            page = _page(outputs, offset=offset, limit=limit)
            assert page["returned_characters"] == len(page["data"]) <= limit
            assert page["bytes"] == len(page["data"].encode())
            pages.append(page["data"])
            if "next_offset" not in page:
                break
            assert page["truncated"] is True
            offset = page["next_offset"]
        assert "".join(pages) == text


@pytest.mark.parametrize(
    ("offset", "limit", "expected"),
    [(0, 3, "abc"), (2, 3, "cde"), (3, 1, "d"), (4, 3, "efg"), (6, 5, "g"), (7, 1, "")],
)
def test_window_over_a_list_of_strings_crosses_part_boundaries(
    offset: int, limit: int, expected: str
) -> None:
    outputs = _stream(["ab", "", "c", "def", "g"])
    response = _page(outputs, offset=offset, limit=limit)
    assert response["data"] == expected
    assert response["total_characters"] == 7


@pytest.mark.parametrize(
    ("offset", "limit", "truncated", "next_offset"),
    [
        (0, 12, False, None),  # the whole text
        (0, 5, True, 5),  # text remains after the page
        (5, 3, True, 8),  # a middle page
        (6, 6, True, None),  # the last page: it is not the whole text, nothing remains
        (12, 1, True, None),  # the empty page at the end
        (0, None, False, None),  # no limit: everything
        (6, None, True, None),  # no limit from an offset: the rest
    ],
)
def test_truncated_means_the_page_is_not_the_whole_text_and_next_offset_that_text_remains(
    mixed_outputs: list[Any],
    offset: int,
    limit: int | None,
    truncated: bool,
    next_offset: int | None,
) -> None:
    stream = _page(mixed_outputs, STREAM_STDOUT, offset=offset, limit=limit)
    assert stream["truncated"] is truncated
    assert stream.get("next_offset") == next_offset
    html = read_output(mixed_outputs, TABLE_BUNDLE, source=SOURCE, offset=offset, limit=limit)
    total = html["selected"]["total_characters"]
    end = total if limit is None else min(total, offset + limit)
    assert html["selected"]["truncated"] is (offset > 0 or end < total)


def test_limit_none_returns_the_whole_text_of_a_stream_and_of_a_text_value() -> None:
    text = "x" * (DEFAULT_TEXT_LIMIT + 10)
    stream = _page(_stream(text), limit=None)
    assert (stream["data"], stream["returned_characters"], stream["truncated"]) == (
        text,
        len(text),
        False,
    )
    bundle = [{"output_type": "display_data", "data": {"text/plain": text}}]
    selected = read_output(bundle, 0, source=SOURCE, limit=None)["selected"]
    assert selected["data"] == text
    assert "next_offset" not in selected


def test_limit_none_is_still_bounded_by_the_transport_limit() -> None:
    error = expect_error(
        ErrorCode.OUTPUT_TOO_LARGE,
        read_output,
        _stream("y" * 5000),
        0,
        source=SOURCE,
        limit=None,
        max_transport_bytes=1000,
    )
    assert 0 < error.details["limit"] < 1000


@pytest.mark.parametrize("index", [PNG_WRAPPED, JSON_TYPES_BUNDLE, ERROR])
def test_limit_none_on_an_image_json_or_error_asks_for_no_window(
    mixed_outputs: list[Any], index: int
) -> None:
    whole = read_output(mixed_outputs, index, source=SOURCE)
    assert read_output(mixed_outputs, index, source=SOURCE, limit=None) == whole
