"""MIME bundles: classification of MIME types and selection of one representation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs._jsonsafe import protocol_error
from jupyter_jcli.outputs._raster import RASTER_MIME_TYPES
from jupyter_jcli.outputs._text import is_text

__all__ = [
    "TEXT_ENCODING",
    "Encoding",
    "automatic_candidates",
    "encoding_for",
    "is_extractable",
    "is_json_type",
    "normalize_supported",
    "select_mime_type",
]

Encoding = Literal["base64", "json", "utf-8"]

TEXT_ENCODING: Encoding = "utf-8"
"""The ``encoding`` of a text MIME value: ``data`` is a page of the text itself."""

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


def is_extractable(mime_type: str) -> bool:
    """True for the types a read can return: rasters, ``text/*``, SVG and the JSON types.

    Any other type (``application/pdf``, ``application/octet-stream``, ...) is listed but
    never returned: its stored string is base64 of a binary format that is neither an image
    a client can show nor text.
    """
    return (
        mime_type in RASTER_MIME_TYPES
        or mime_type.startswith("text/")
        or mime_type == _SVG
        or is_json_type(mime_type)
    )


def encoding_for(mime_type: str, value: object) -> Encoding:
    """How a value is returned: rasters as base64, JSON types structured, text as a window.

    ``text/*`` and SVG are text (``"utf-8"``). A type outside the known ones (only listed,
    never read: see :func:`is_extractable`) counts as text when its value is a string or a
    list of strings, and as JSON otherwise, for its listed size.
    """
    if mime_type in RASTER_MIME_TYPES:
        return "base64"
    if is_json_type(mime_type):
        return "json"
    if mime_type.startswith("text/") or mime_type == _SVG:
        return TEXT_ENCODING
    return TEXT_ENCODING if is_text(value) else "json"


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
    available_mime_types: Iterable[str],
    *,
    mime_type: str | None = None,
    supported_mime_types: Iterable[str] | None = None,
) -> str:
    """Pick the MIME type to return from a bundle's types (or its ``data`` mapping).

    The reference protocol's selection (jupyter-jcli 0.9.7, same signature).

    Args:
        available_mime_types: the bundle's MIME types in stored order (a ``data`` mapping
            gives its keys).
        mime_type: an explicit request, or None for automatic selection.
        supported_mime_types: the caller's accepted types, or None for no restriction. It
            filters explicit and automatic selection alike; there is never a fallback.

    Returns:
        The chosen MIME type.

    Raises:
        OutputProtocolError: ``MIME_NOT_FOUND`` when the explicit type is absent or the bundle
            is empty; ``MIME_NOT_SUPPORTED`` when the explicit type is outside
            ``supported_mime_types`` or cannot be returned (see :func:`is_extractable`), or no
            automatic candidate is left (details: ``available_mime_types``,
            ``supported_mime_types``).
        TypeError: ``supported_mime_types`` is a bare string or holds a non-string.
    """
    available = list(available_mime_types)
    supported = normalize_supported(supported_mime_types)
    details: dict[str, object] = {"available_mime_types": available}
    if supported is not None:
        details["supported_mime_types"] = sorted(supported)
    if mime_type is not None:
        details["mime_type"] = mime_type
        if mime_type not in available:
            raise protocol_error(
                ErrorCode.MIME_NOT_FOUND,
                f"MIME representation {mime_type} not found in this output.",
                details,
            )
        if supported is not None and mime_type not in supported:
            raise protocol_error(
                ErrorCode.MIME_NOT_SUPPORTED,
                f"{mime_type} is not among the supported MIME types.",
                details,
            )
        if not is_extractable(mime_type):
            raise protocol_error(
                ErrorCode.MIME_NOT_SUPPORTED,
                f"{mime_type} is listed but cannot be returned: only images, text/*, SVG and "
                "JSON types can.",
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
