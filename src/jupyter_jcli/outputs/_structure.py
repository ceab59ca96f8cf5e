"""Structural checks of one stored output, shared by the directory and the reader.

The shapes follow the nbformat v4 schema (``nbformat/v4/nbformat.v4.schema.json``): ``stream``
(``name``, ``text``), ``display_data`` (``data``, ``metadata``), ``execute_result`` (plus
``execution_count``) and ``error`` (``ename``, ``evalue``, ``traceback``). Checks are
tolerant where readers in the wild are (missing ``metadata`` is ``{}``, a missing
``execution_count`` is ``None``) and strict where a read could not be answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs._jsonsafe import json_problem, protocol_error
from jupyter_jcli.outputs._limits import is_int
from jupyter_jcli.outputs._mime import encoding_for, is_json_type
from jupyter_jcli.outputs._text import is_text

__all__ = [
    "BUNDLE_TYPES",
    "KNOWN_OUTPUT_TYPES",
    "Problem",
    "as_output_list",
    "available_mime_types",
    "metadata_of",
    "mime_problems",
    "output_problem",
    "output_type_of",
    "value_problem",
]

BUNDLE_TYPES = ("display_data", "execute_result")
KNOWN_OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error")


class Problem(NamedTuple):
    """Why an output cannot be read: an error code and one sentence."""

    code: ErrorCode
    message: str

    def as_dict(self) -> dict[str, str]:
        """The ``problem`` object of a directory entry."""
        return {"code": str(self.code), "message": self.message}


def as_output_list(outputs: object) -> Sequence[Any]:
    """Check that a cell's ``outputs`` value is a list.

    Raises:
        OutputProtocolError: ``OUTPUT_DATA_INVALID`` otherwise.
    """
    if not isinstance(outputs, list):
        raise protocol_error(
            ErrorCode.OUTPUT_DATA_INVALID,
            f"The cell's outputs are not a list (got {type(outputs).__name__}).",
        )
    return outputs


def output_type_of(output: object) -> str | None:
    """The stored ``output_type`` when the output is an object with a string type."""
    if isinstance(output, dict):
        value = output.get("output_type")
        if isinstance(value, str):
            return value
    return None


def metadata_of(output: object) -> dict[str, Any]:
    """The output's ``metadata`` object, or ``{}`` when absent or malformed (not an object,
    not JSON, or nested more than ``MAX_JSON_DEPTH`` (128) levels)."""
    if isinstance(output, dict):
        value = output.get("metadata")
        if isinstance(value, dict) and json_problem(value) is None:
            return value
    return {}


def available_mime_types(output: object) -> list[str]:
    """The keys of a bundle's ``data`` in stored order; ``[]`` for streams, errors, or junk."""
    if isinstance(output, dict) and output.get("output_type") in BUNDLE_TYPES:
        data = output.get("data")
        if isinstance(data, dict):
            return [key for key in data if isinstance(key, str)]
    return []


def _invalid(message: str) -> Problem:
    return Problem(ErrorCode.OUTPUT_DATA_INVALID, message)


def _is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def output_problem(output: object) -> Problem | None:
    """The structural problem that makes ``output`` unreadable, or None when it is sound.

    Content problems (invalid base64, a wrong image signature) are found only by a read.
    """
    if not isinstance(output, dict):
        return _invalid(f"The output is not a JSON object (got {type(output).__name__}).")
    output_type = output.get("output_type")
    if not isinstance(output_type, str):
        return _invalid("The output has no string 'output_type'.")
    if output_type not in KNOWN_OUTPUT_TYPES:
        return Problem(
            ErrorCode.OUTPUT_TYPE_UNSUPPORTED,
            f"Output type {output_type!r} is not one of {', '.join(KNOWN_OUTPUT_TYPES)}.",
        )
    if "metadata" in output:
        metadata = output["metadata"]
        if not isinstance(metadata, dict):
            return _invalid("The output's 'metadata' is not a JSON object.")
        problem = json_problem(metadata)
        if problem is not None:
            return _invalid(f"The output's 'metadata' cannot be returned: {problem}.")
    if output_type == "stream":
        if not isinstance(output.get("name"), str):
            return _invalid("The stream output has no string 'name'.")
        if not is_text(output.get("text")):
            return _invalid("The stream 'text' is not a string or a list of strings.")
        return None
    if output_type == "error":
        for key in ("ename", "evalue"):
            if not isinstance(output.get(key), str):
                return _invalid(f"The error output has no string {key!r}.")
        if not _is_str_list(output.get("traceback")):
            return _invalid("The error 'traceback' is not a list of strings.")
        return None
    data = output.get("data")
    if not isinstance(data, dict):
        return _invalid(f"The {output_type} output has no 'data' object.")
    if not all(isinstance(key, str) for key in data):
        return _invalid(f"The {output_type} 'data' has a non-string MIME type key.")
    count = output.get("execution_count")
    if output_type == "execute_result" and count is not None and not is_int(count):
        return _invalid("The execute_result 'execution_count' is not an integer or null.")
    return None


def value_problem(mime_type: str, value: object) -> Problem | None:
    """Why one MIME value of a bundle cannot be read, or None when its type is right.

    Rasters (``image/png``...), ``text/*`` types of the selection order and SVG must be a
    string or a list of strings (nbformat's multiline string); JSON types (and other types
    whose value is not text) must be a JSON value nested at most ``MAX_JSON_DEPTH`` (128)
    levels. Content (base64, image signature) is checked only by a read.
    """
    # encoding_for(mime, None) is "base64"/"utf-8" exactly for the types that must be text.
    if encoding_for(mime_type, None) != "json":
        if is_text(value):
            return None
        return _invalid(
            f"The {mime_type} value is not a string or a list of strings "
            f"(got {type(value).__name__})."
        )
    if not is_json_type(mime_type) and is_text(value):
        return None
    problem = json_problem(value)
    if problem is None:
        return None
    return _invalid(f"The {mime_type} value cannot be returned as JSON: {problem}.")


def mime_problems(output: dict[str, Any]) -> dict[str, Problem]:
    """The problem of each unreadable MIME value of a sound bundle, by MIME type."""
    found: dict[str, Problem] = {}
    for mime_type, value in output["data"].items():
        problem = value_problem(mime_type, value)
        if problem is not None:
            found[mime_type] = problem
    return found
