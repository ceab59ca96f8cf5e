"""The pixel size of a JPEG read from its markers, for headers real encoders write and for
broken ones (in-process): a size only when a frame header says it, else none, never a guess."""

from __future__ import annotations

import struct

import pytest

from jupyter_jcli.outputs._raster import image_dimensions

SOI = b"\xff\xd8"


def _segment(marker: int, body: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(body) + 2) + body


def _sof(marker: int = 0xC0, width: int = 640, height: int = 480) -> bytes:
    return _segment(marker, b"\x08" + struct.pack(">HH", height, width) + b"\x03" + b"\0" * 9)


APP0 = _segment(0xE0, b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0")


@pytest.mark.parametrize(
    ("raw", "size"),
    [
        (SOI + APP0 + _sof(), (640, 480)),
        (SOI + APP0 + _sof(0xC2, 17, 9), (17, 9)),  # progressive
        (SOI + b"\xff\xff\xff" + _sof(width=3, height=2), (3, 2)),  # fill bytes
        (SOI + b"\xff\xd0\xff\x01" + _sof(width=5, height=4), (5, 4)),  # markers with no length
        (SOI + _segment(0xC4, b"\0" * 20) + _sof(width=8, height=6), (8, 6)),  # DHT is no frame
        (SOI + APP0 + b"\xff\xd9" + b"\0" * 8, None),  # end of image before any frame
        (SOI + APP0 + b"\xff\xda" + b"\0" * 8, None),  # scan before any frame header
        (SOI + APP0 + b"\x00\x00\x00\x00", None),  # not a marker where one must be
        (SOI + b"\xff\xe0\x00\x01" + b"\0" * 8, None),  # a length below its own two bytes
        (SOI + b"\xff\xc0\x00\x11\x08\x01", None),  # frame header cut short
        (SOI + APP0, None),  # no frame at all
    ],
    ids=[
        "baseline", "progressive", "fill-bytes", "standalone-markers", "huffman-table-first",
        "end-before-frame", "scan-before-frame", "garbage", "bad-length", "truncated-frame",
        "no-frame",
    ],
)  # fmt: skip
def test_a_jpeg_has_the_size_its_frame_header_gives_or_none(
    raw: bytes, size: tuple[int, int] | None
) -> None:
    assert image_dimensions("image/jpeg", raw) == size
