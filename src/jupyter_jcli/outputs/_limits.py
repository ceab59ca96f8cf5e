"""Protocol constants and validation of the caller's numeric options (window, transport)."""

from __future__ import annotations

from typing import TypeGuard

from jupyter_jcli.errors import ErrorCode, OutputProtocolError

__all__ = [
    "DEFAULT_TEXT_LIMIT",
    "MAX_TRANSPORT_BYTES",
    "check_transport_limit",
    "check_window",
    "is_int",
    "window_requested",
]

MAX_TRANSPORT_BYTES = 32 * 1024 * 1024
"""Upper bound (bytes) of one compact serialised response; also the default limit."""

DEFAULT_TEXT_LIMIT = 100_000
"""Default size of a text page, in Unicode code points."""


def is_int(value: object) -> TypeGuard[int]:
    """True for a real ``int``; ``bool`` is rejected although it subclasses ``int``."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_transport_limit(max_transport_bytes: object) -> int:
    """Validate ``max_transport_bytes``: an int in ``[1, MAX_TRANSPORT_BYTES]``.

    Raises:
        OutputProtocolError: ``INVALID_TRANSPORT_LIMIT`` otherwise.
    """
    if not is_int(max_transport_bytes) or not 1 <= max_transport_bytes <= MAX_TRANSPORT_BYTES:
        raise OutputProtocolError(
            ErrorCode.INVALID_TRANSPORT_LIMIT,
            f"max_transport_bytes must be an integer from 1 to {MAX_TRANSPORT_BYTES}.",
            {"max_transport_bytes_allowed": [1, MAX_TRANSPORT_BYTES]},
        )
    return max_transport_bytes


def check_window(offset: object, limit: object) -> tuple[int, int | None]:
    """Validate a text window request: ``offset >= 0`` and ``limit >= 1`` (or None), ints.

    ``limit=None`` asks for the whole text from ``offset`` (the reference protocol's "no
    limit"), still bounded by the transport limit. Whether ``offset`` lies within the text is
    checked once the text is known.

    Raises:
        OutputProtocolError: ``INVALID_WINDOW`` for a non-int (``bool`` included), a negative
            offset or a limit below 1.
    """
    if not is_int(offset) or offset < 0:
        raise OutputProtocolError(
            ErrorCode.INVALID_WINDOW,
            "offset must be a non-negative integer (Unicode code points).",
            {"offset": _jsonable_number(offset)},
        )
    if limit is None:
        return offset, None
    if not is_int(limit) or limit < 1:
        raise OutputProtocolError(
            ErrorCode.INVALID_WINDOW,
            "limit must be an integer of at least 1 (Unicode code points).",
            {"limit": _jsonable_number(limit)},
        )
    return offset, limit


def window_requested(offset: int, limit: int | None) -> bool:
    """True when the caller asked for a window: a non-zero offset or a limit other than the
    default (``None``, no limit, asks for no window)."""
    return offset != 0 or (limit is not None and limit != DEFAULT_TEXT_LIMIT)


def _jsonable_number(value: object) -> int | str:
    """An int as is, anything else as its ``repr`` (error details stay JSON-serialisable)."""
    return value if is_int(value) else repr(value)
