"""MIME bundles: classification of MIME types and selection of one representation."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Literal

from jupyter_jcli.errors import ErrorCode

from ._jsonsafe import protocol_error
from ._raster import RASTER_MIME_TYPES
from ._text import is_text

__all__ = [
    "Encoding",
    "automatic_candidates",
    "encoding_for",
    "is_json_type",
    "normalize_supported",
    "select_mime_type",
]

Encoding = Literal["base64", "json", "text"]

_TEXT_TYPES = ("text/html", "text/markdown", "text/plain")
_SVG = "image/svg+xml"


def is_json_type(mime_type: str) -> bool:
    """True for ``application/json``, ``*+json`` and ``application/*json``."""
    return mime_type.endswith("+json") or (
        mime_type.startswith("application/") and mime_type.endswith("json")
    )


def automatic_candidates(mime_types: Iterable[str]) -> list[str]:
    """The types of a bundle that automatic selection may pick, best first.

    Order: ``image/png``, ``image/jpeg``, ``image/webp``, ``image/gif``, ``text/html``,
    ``text/markdown``, ``text/plain``, ``application/json``, the other JSON types sorted
    lexically, ``image/svg+xml``. Any other type is never picked automatically.
    """
    present = set(mime_types)
    head = [m for m in (*RASTER_MIME_TYPES, *_TEXT_TYPES, "application/json") if m in present]
    other_json = sorted(m for m in present if m != "application/json" and is_json_type(m))
    tail = [_SVG] if _SVG in present else []
    return head + other_json + tail


def encoding_for(mime_type: str, value: object) -> Encoding:
    """How a value is returned: rasters as base64, JSON types structured, text as a window.

    A type outside the known ones is text when its value is a string or a list of strings,
    and JSON otherwise.
    """
    if mime_type in RASTER_MIME_TYPES:
        return "base64"
    if is_json_type(mime_type):
        return "json"
    if mime_type in _TEXT_TYPES or mime_type == _SVG:
        return "text"
    return "text" if is_text(value) else "json"


def normalize_supported(supported_mime_types: Iterable[str] | None) -> frozenset[str] | None:
    """Validate ``supported_mime_types``: None, or an iterable of ``str`` (not a bare ``str``).

    Raises:
        TypeError: for a bare string or a non-string member (a programming error).
    """
    if supported_mime_types is None:
        return None
    if isinstance(supported_mime_types, str | bytes):
        raise TypeError("supported_mime_types must be an iterable of MIME type strings")
    members = frozenset(supported_mime_types)
    if not all(isinstance(m, str) for m in members):
        raise TypeError("supported_mime_types must contain only strings")
    return members


def select_mime_type(
    data: Mapping[str, object],
    mime_type: str | None,
    supported: Collection[str] | None,
) -> str:
    """Pick the MIME type to return from a bundle's ``data``.

    Args:
        data: the bundle (MIME type -> stored value).
        mime_type: an explicit request, or None for automatic selection.
        supported: the caller's accepted types, or None for no restriction. It filters
            explicit and automatic selection alike; there is never a fallback.

    Raises:
        OutputProtocolError: ``MIME_NOT_SUPPORTED`` when the explicit type is outside
            ``supported`` or no automatic candidate is left (details: ``available_mime_types``,
            ``supported_mime_types``); ``MIME_NOT_FOUND`` when the explicit type is absent or
            the bundle is empty.
    """
    available = list(data)
    details: dict[str, object] = {"available_mime_types": available}
    if supported is not None:
        details["supported_mime_types"] = sorted(supported)
    if mime_type is not None:
        details["mime_type"] = mime_type
        if supported is not None and mime_type not in supported:
            raise protocol_error(
                ErrorCode.MIME_NOT_SUPPORTED,
                f"{mime_type} is not among the supported MIME types.",
                details,
            )
        if mime_type not in data:
            raise protocol_error(
                ErrorCode.MIME_NOT_FOUND,
                f"This output has no {mime_type} representation.",
                details,
            )
        return mime_type
    if not available:
        raise protocol_error(
            ErrorCode.MIME_NOT_FOUND, "This output's MIME bundle is empty.", details
        )
    for candidate in automatic_candidates(available):
        if supported is None or candidate in supported:
            return candidate
    raise protocol_error(
        ErrorCode.MIME_NOT_SUPPORTED,
        "No representation of this output can be selected; request one of the available "
        "MIME types explicitly.",
        details,
    )
