"""Raster images: strict base64, format signatures and pixel dimensions, without an imaging
library.

Signatures and header layouts come from the format specifications: PNG (RFC 2083, the IHDR
chunk), JPEG (ITU T.81, SOI and SOFn markers), GIF (GIF89a spec, logical screen descriptor)
and WebP (the RIFF container with ``VP8 ``, ``VP8L`` or ``VP8X`` first chunk).
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
import sys
from collections.abc import Callable
from typing import NamedTuple

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs._jsonsafe import protocol_error
from jupyter_jcli.outputs._text import join_text

__all__ = ["RASTER_MIME_TYPES", "Raster", "decode_raster", "image_dimensions"]

_WHITESPACE = re.compile(r"[\t\n\v\f\r ]+")


class Raster(NamedTuple):
    """A checked raster value.

    Attributes:
        base64: canonical base64 text (no whitespace), the stored string itself when it
            already was canonical.
        size: decoded size in bytes.
        width: pixel width, or None when the header does not say.
        height: pixel height, or None when the header does not say.
        raw: the decoded image bytes (``size`` of them).
    """

    base64: str
    size: int
    width: int | None
    height: int | None
    raw: bytes

    def __repr__(self) -> str:  # without ``raw``, which ``base64`` already shows
        return (
            f"Raster(base64={self.base64!r}, size={self.size}, "
            f"width={self.width}, height={self.height})"
        )


def _strict_b64decode(text: str) -> bytes:
    """Decode base64, refusing any character outside the alphabet and any bad padding.

    Raises:
        ValueError: (``binascii.Error`` included) on invalid input.
    """
    if sys.version_info >= (3, 11):
        return binascii.a2b_base64(text, strict_mode=True)
    if len(text) % 4:  # pragma: no cover - Python 3.10: validate=True allows extra "="
        raise ValueError("base64 length is not a multiple of 4")
    return base64.b64decode(text, validate=True)  # pragma: no cover - Python 3.10


def _has_signature(mime_type: str, raw: bytes) -> bool:
    if mime_type == "image/png":
        return raw.startswith(b"\x89PNG\r\n\x1a\n")
    if mime_type == "image/jpeg":
        return raw.startswith(b"\xff\xd8\xff")
    if mime_type == "image/gif":
        return raw[:6] in (b"GIF87a", b"GIF89a")
    return raw[:4] == b"RIFF" and raw[8:12] == b"WEBP"


def _png_size(raw: bytes) -> tuple[int, int] | None:
    if len(raw) < 24 or raw[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", raw[16:24])
    return int(width), int(height)


def _gif_size(raw: bytes) -> tuple[int, int] | None:
    if len(raw) < 10:
        return None
    width, height = struct.unpack("<HH", raw[6:10])
    return int(width), int(height)


# SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_NO_LENGTH = frozenset(range(0xD0, 0xD8)) | {0x01, 0xD8}


def _jpeg_size(raw: bytes) -> tuple[int, int] | None:
    pos = 2
    end = len(raw)
    while pos + 4 <= end:  # every step advances pos: the walk is bounded by the data
        if raw[pos] != 0xFF:
            return None
        marker = raw[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in _JPEG_NO_LENGTH:
            pos += 2
            continue
        if marker in (0xD9, 0xDA):  # EOI or start of scan before any frame header
            return None
        (length,) = struct.unpack(">H", raw[pos + 2 : pos + 4])
        if marker in _JPEG_SOF:
            if pos + 9 > end:
                return None
            height, width = struct.unpack(">HH", raw[pos + 5 : pos + 9])
            return int(width), int(height)
        if length < 2:
            return None
        pos += 2 + length
    return None


def _webp_size(raw: bytes) -> tuple[int, int] | None:
    chunk = raw[12:16]
    if chunk == b"VP8 " and len(raw) >= 30 and raw[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", raw[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if chunk == b"VP8L" and len(raw) >= 25 and raw[20] == 0x2F:
        bits = int.from_bytes(raw[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(raw) >= 30:
        width = int.from_bytes(raw[24:27], "little") + 1
        height = int.from_bytes(raw[27:30], "little") + 1
        return width, height
    return None


_DIMENSION_READERS: dict[str, Callable[[bytes], tuple[int, int] | None]] = {
    "image/png": _png_size,
    "image/jpeg": _jpeg_size,
    "image/webp": _webp_size,
    "image/gif": _gif_size,
}

RASTER_MIME_TYPES: tuple[str, ...] = ("image/png", "image/jpeg", "image/webp", "image/gif")
"""The raster types, in automatic selection order."""


def image_dimensions(mime_type: str, raw: bytes) -> tuple[int, int] | None:
    """``(width, height)`` in pixels read from the image header, or None if not determinable.

    ``mime_type`` is one of :data:`RASTER_MIME_TYPES`; a zero dimension counts as unknown.
    """
    reader = _DIMENSION_READERS.get(mime_type)
    size = reader(raw) if reader is not None else None
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def _canonical(text: str, raw: bytes) -> str:
    """``text`` if it is the canonical encoding of ``raw``, else the canonical encoding.

    Strictly valid base64 differs from the canonical form only in the unused bits of its last
    group, so only that group is compared.
    """
    if not raw:
        return ""
    tail = raw[((len(raw) - 1) // 3) * 3 :]
    if binascii.b2a_base64(tail, newline=False).decode("ascii") == text[-4:]:
        return text
    return binascii.b2a_base64(raw, newline=False).decode("ascii")


def decode_raster(mime_type: str, value: object) -> Raster:
    """Check a stored raster value and describe it.

    ``value`` is a base64 ``str`` or a list of ``str`` (joined). Whitespace and line breaks
    inside it are accepted; any other character outside the base64 alphabet, or bad padding,
    is not. The bytes are decoded once.

    Raises:
        OutputProtocolError: ``OUTPUT_DATA_INVALID`` for a non-string value, invalid base64,
            or decoded bytes without the signature of ``mime_type``.
    """
    text = join_text(value)
    details = {"mime_type": mime_type}
    if text is None:
        raise protocol_error(
            ErrorCode.OUTPUT_DATA_INVALID,
            f"The {mime_type} value is not a base64 string or a list of strings.",
            details,
        )
    try:
        raw = _strict_b64decode(text)
    except ValueError:
        stripped = _WHITESPACE.sub("", text)
        try:
            if len(stripped) == len(text):
                raise
            raw = _strict_b64decode(stripped)
        except ValueError as exc:
            raise protocol_error(
                ErrorCode.OUTPUT_DATA_INVALID,
                f"The {mime_type} value is not valid base64: {exc}.",
                details,
            ) from exc
        text = stripped
    if not _has_signature(mime_type, raw):
        raise protocol_error(
            ErrorCode.OUTPUT_DATA_INVALID,
            f"The decoded {mime_type} bytes do not carry the {mime_type} signature.",
            details,
        )
    dims = image_dimensions(mime_type, raw)
    width, height = dims if dims is not None else (None, None)
    return Raster(_canonical(text, raw), len(raw), width, height, raw)
