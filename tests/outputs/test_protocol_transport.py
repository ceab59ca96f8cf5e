"""Contract tests of indexing, transport bounds and real raster headers."""

from __future__ import annotations

import base64
import io
from typing import Any

import orjson
import pytest
from protocol_cases import (
    OUTPUT_COUNT,
    PNG_3X2,
    SOURCE,
    STREAM_STDOUT,
    compact_size,
    expect_error,
)

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs import (
    DEFAULT_TEXT_LIMIT,
    MAX_TRANSPORT_BYTES,
    OutputProtocolError,
    read_output,
)


def test_public_constants() -> None:
    assert MAX_TRANSPORT_BYTES == 32 * 1024 * 1024
    assert DEFAULT_TEXT_LIMIT == 100_000


@pytest.mark.parametrize("index", [OUTPUT_COUNT, OUTPUT_COUNT + 5, -1, True, 1.0, "0", None])
def test_missing_output_index_is_output_not_found_with_count(
    mixed_outputs: list[Any], index: Any
) -> None:
    error = expect_error(
        ErrorCode.OUTPUT_NOT_FOUND, read_output, mixed_outputs, index, source=SOURCE
    )
    assert error.details == {"output_count": OUTPUT_COUNT}


def test_reading_from_no_outputs_is_output_not_found() -> None:
    error = expect_error(ErrorCode.OUTPUT_NOT_FOUND, read_output, [], 0, source=SOURCE)
    assert error.details == {"output_count": 0}


def test_read_of_outputs_that_are_not_a_list_is_output_data_invalid() -> None:
    expect_error(ErrorCode.OUTPUT_DATA_INVALID, read_output, {"0": {}}, 0, source=SOURCE)


@pytest.mark.parametrize("limit", [0, -5, MAX_TRANSPORT_BYTES + 1, 2.0, True, "1024"])
def test_read_rejects_an_invalid_transport_limit(mixed_outputs: list[Any], limit: Any) -> None:
    expect_error(
        ErrorCode.INVALID_TRANSPORT_LIMIT,
        read_output,
        mixed_outputs,
        STREAM_STDOUT,
        source=SOURCE,
        max_transport_bytes=limit,
    )


def test_read_accepts_the_transport_limit_bounds(mixed_outputs: list[Any]) -> None:
    response = read_output(
        mixed_outputs, STREAM_STDOUT, source=SOURCE, max_transport_bytes=MAX_TRANSPORT_BYTES
    )
    assert response["status"] == "ok"
    expect_error(
        ErrorCode.OUTPUT_TOO_LARGE,
        read_output,
        mixed_outputs,
        STREAM_STDOUT,
        source=SOURCE,
        max_transport_bytes=1,
    )


def _successful_reads(outputs: list[Any]) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    reads = []
    for index in range(len(outputs)):
        for options in ({}, {"mime_type": "text/plain"}, {"mime_type": "application/json"}):
            try:
                reads.append(
                    (index, options, read_output(outputs, index, source=SOURCE, **options))
                )
            except OutputProtocolError:
                continue
    return reads


def test_transport_bound_is_exact_for_every_successful_read(mixed_outputs: list[Any]) -> None:
    reads = _successful_reads(mixed_outputs)
    assert len(reads) >= 20
    for index, options, response in reads:
        size = compact_size(response)
        fitted = read_output(
            mixed_outputs, index, source=SOURCE, max_transport_bytes=size, **options
        )
        assert fitted == response
        error = expect_error(
            ErrorCode.OUTPUT_TOO_LARGE,
            read_output,
            mixed_outputs,
            index,
            source=SOURCE,
            max_transport_bytes=size - 1,
            **options,
        )
        assert error.details["bytes"] == size
        assert error.details["max_transport_bytes"] == size - 1


def test_responses_serialise_compactly_keeping_non_ascii(mixed_outputs: list[Any]) -> None:
    for _index, _options, response in _successful_reads(mixed_outputs):
        encoded = orjson.dumps(response)
        assert orjson.loads(encoded) == response
    text = read_output([{"output_type": "stream", "name": "stdout", "text": "é"}], 0, source=SOURCE)
    assert "é".encode() in orjson.dumps(text)


def test_too_large_text_suggests_a_limit_that_fits() -> None:
    text = "".join(f'line {n} café "quoted"\n' for n in range(5_000))
    outputs = [{"output_type": "stream", "name": "stdout", "text": text}]
    bound = 20_000
    error = expect_error(
        ErrorCode.OUTPUT_TOO_LARGE,
        read_output,
        outputs,
        0,
        source=SOURCE,
        max_transport_bytes=bound,
    )
    hint = error.details["limit"]
    assert 1 <= hint < len(text)
    page = read_output(outputs, 0, source=SOURCE, limit=hint, max_transport_bytes=bound)
    assert compact_size(page) <= bound
    assert page["stream"]["returned_characters"] == hint


def test_too_large_image_has_no_limit_hint() -> None:
    outputs = [{"output_type": "display_data", "data": {"image/png": PNG_3X2}, "metadata": {}}]
    error = expect_error(
        ErrorCode.OUTPUT_TOO_LARGE, read_output, outputs, 0, source=SOURCE, max_transport_bytes=100
    )
    assert "limit" not in error.details
    assert error.details["bytes"] > 100


def test_huge_metadata_makes_even_an_error_output_too_large() -> None:
    outputs = [
        {
            "output_type": "error",
            "ename": "E",
            "evalue": "v",
            "traceback": ["x" * 5_000],
            "metadata": {},
        }
    ]
    expect_error(
        ErrorCode.OUTPUT_TOO_LARGE,
        read_output,
        outputs,
        0,
        source=SOURCE,
        max_transport_bytes=4_096,
    )


def test_large_text_is_paged_by_default_and_bounded() -> None:
    text = "0123456789" * 25_001  # 250,010 code points, more than one chunk of measurement
    outputs = [{"output_type": "display_data", "data": {"text/plain": text}, "metadata": {}}]
    first = read_output(outputs, 0, source=SOURCE)["selected"]
    assert first["returned_characters"] == DEFAULT_TEXT_LIMIT
    assert first["next_offset"] == DEFAULT_TEXT_LIMIT
    whole = read_output(outputs, 0, source=SOURCE, limit=len(text))
    assert whole["selected"]["data"] is text
    assert compact_size(whole) == len(orjson.dumps(whole))
    exact = compact_size(whole)
    expect_error(
        ErrorCode.OUTPUT_TOO_LARGE,
        read_output,
        outputs,
        0,
        source=SOURCE,
        limit=len(text),
        max_transport_bytes=exact - 1,
    )


def test_escaped_control_characters_are_counted_in_the_transport_size() -> None:
    text = '\x00\x01\n\t"\\' * 200_000  # > one measurement chunk; escapes up to 6 bytes each
    outputs = [{"output_type": "stream", "name": "stdout", "text": text}]
    response = read_output(outputs, 0, source=SOURCE, limit=len(text))
    size = compact_size(response)
    read_output(outputs, 0, source=SOURCE, limit=len(text), max_transport_bytes=size)
    expect_error(
        ErrorCode.OUTPUT_TOO_LARGE,
        read_output,
        outputs,
        0,
        source=SOURCE,
        limit=len(text),
        max_transport_bytes=size - 1,
    )


def _pillow_image(fmt: str, size: tuple[int, int], **save: Any) -> str:
    from PIL import Image

    mode = "RGBA" if save.pop("alpha", False) else "RGB"
    buffer = io.BytesIO()
    Image.new(mode, size, (10, 20, 30, 128)[: len(mode)]).save(buffer, fmt, **save)
    return base64.encodebytes(buffer.getvalue()).decode()  # wrapped at 76 characters


@pytest.mark.parametrize(
    ("mime_type", "fmt", "size", "save"),
    [
        ("image/png", "PNG", (640, 480), {}),
        ("image/jpeg", "JPEG", (300, 17), {}),
        ("image/jpeg", "JPEG", (1024, 3), {"progressive": True}),
        ("image/jpeg", "JPEG", (33, 44), {"exif": b"Exif\x00\x00" + b"\x00" * 400}),
        ("image/gif", "GIF", (65535, 1), {}),
        ("image/webp", "WEBP", (16383, 2), {"quality": 10}),
        ("image/webp", "WEBP", (257, 129), {"lossless": True}),
        ("image/webp", "WEBP", (16383, 1), {"lossless": True, "alpha": True}),
        ("image/webp", "WEBP", (31, 29), {"quality": 50, "alpha": True}),
    ],
)
def test_dimensions_of_real_images_match_the_encoder(
    mime_type: str, fmt: str, size: tuple[int, int], save: dict[str, Any]
) -> None:
    stored = _pillow_image(fmt, size, **save)
    outputs = [{"output_type": "display_data", "data": {mime_type: stored}, "metadata": {}}]
    selected = read_output(outputs, 0, source=SOURCE)["selected"]
    assert (selected["width"], selected["height"]) == size
    assert selected["data"] == "".join(stored.split())
    assert selected["bytes"] == len(base64.b64decode(selected["data"]))
