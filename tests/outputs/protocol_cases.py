"""Named indexes into ``tests/fixtures/outputs/mixed_outputs.json`` and shared helpers."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs import OutputProtocolError

STREAM_STDOUT = 0
STREAM_NON_ASCII_LIST = 1
STREAM_SURROGATE = 2
ERROR = 3
PNG_WRAPPED = 4
JPEG_LINES = 5
GIF_WITH_HTML = 6
WEBP_LOSSY = 7
WEBP_LOSSLESS = 8
WEBP_EXTENDED = 9
PNG_LABELLED_JPEG = 10
PNG_BAD_ALPHABET = 11
PNG_BAD_PADDING = 12
TABLE_BUNDLE = 13
JSON_TYPES_BUNDLE = 14
SVG_AND_PDF = 15
ONLY_UNKNOWN_TYPES = 16
EMPTY_BUNDLE = 17
SURROGATE_BUNDLE = 18
UNKNOWN_OUTPUT_TYPE = 19
NOT_AN_OBJECT = 20
DATA_NOT_OBJECT = 21
STREAM_TEXT_NUMBER = 22
ERROR_WITHOUT_ENAME = 23
NO_OUTPUT_TYPE = 24
METADATA_NOT_OBJECT = 25
EXECUTION_COUNT_STRING = 26
STREAM_EMPTY = 27
PLAIN_NON_ASCII = 28
JPEG_NON_CANONICAL = 29
PNG_VALUE_OBJECT = 30
HTML_VALUE_NUMBER = 31
ERROR_EMPTY_TRACEBACK = 32
PNG_INNER_WHITESPACE = 33
CSV_AND_PDF = 34
OUTPUT_COUNT = 35

SOURCE = {
    "kind": "notebook",
    "path": "/abs/nb.ipynb",
    "cell_index": 3,
    "requested_path": "/abs/nb.ipynb",
    "requested_cell_index": 3,
    "mapping": "direct",
}

PNG_3X2 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAFUlEQVR4nGM8wcXFwMDAwMDAxAADABByAOAp6i43"
    "AAAAAElFTkSuQmCC"
)


def compact_size(document: Any) -> int:
    """Size of the canonical serialisation (the standard library's compact JSON, non-ASCII
    kept, UTF-8), as the transport rule measures it."""
    return len(json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode())


def expect_error(code: ErrorCode, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``func``; it must raise :class:`OutputProtocolError` with ``code``.

    Also checks that the error document serialises (details are JSON-safe). Returns the error.
    """
    with pytest.raises(OutputProtocolError) as excinfo:
        func(*args, **kwargs)
    error = excinfo.value
    assert error.code == code, error.to_dict()
    orjson.dumps(error.to_dict())
    return error
