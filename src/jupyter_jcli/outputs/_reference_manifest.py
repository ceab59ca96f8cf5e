"""Run manifests written by the reference jupyter-jcli 0.9.7, read in our shape (migration).

The reference saves a run that has no notebook under the same ``.j-cli/outputs/<run-id>/``
(its ``jupyter_jcli/outputs/store.py``), with this manifest::

    {"schema_version": 1, "managed_by": "jupyter-jcli", "status": "complete",
     "run_id": "<uuid4>", "created_at": <seconds since the epoch>, "cwd": "/abs",
     "source": {"kind": "inline", "cwd": "/abs", "run_id": "<uuid4>"},
     "outputs": [<nbformat v4 outputs, each raster value replaced by
                  {"type": "file", "path": "/abs/.../output-1.png", "mime": "image/png",
                   "bytes": 73}>]}

:func:`from_reference` gives the same run in the shape of ours
(:mod:`jupyter_jcli.outputs.manifest`): ``kind`` ``run_outputs``, ``created`` in ISO 8601
UTC, each raster reference replaced by its file's name and listed in ``files``. The file is
always looked up by that name inside the saved run's folder (never at the recorded path), so a run
folder that was moved or copied still reads, and nothing outside it is read or deleted. Only
raster MIME types hold file references, as in the reference: ``{"type": "file", ...}`` under
any other MIME type is that output's data. A reference that is not a file reference of a
raster (relative path, another ``mime``, a name that is not a plain file name) is left in
place: reading that representation fails with ``OUTPUT_DATA_INVALID`` (the listing flags it
in ``mime_problems``), and retention keeps the run (``reference.problems``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jupyter_jcli.outputs._raster import RASTER_MIME_TYPES

__all__ = ["REFERENCE_FORMAT", "file_references", "from_reference", "is_reference_manifest"]

REFERENCE_FORMAT = "jupyter-jcli-0.9.7"
"""The ``format`` of a run whose manifest the reference wrote (in ``source`` of every read)."""


def is_reference_manifest(document: Mapping[str, Any], managed_by: str) -> bool:
    """Whether ``document`` is a run manifest in the reference's shape: our ``managed_by``
    marker, no ``kind``, and an ``inline`` ``source``."""
    source = document.get("source")
    return (
        document.get("managed_by") == managed_by
        and "kind" not in document
        and isinstance(source, dict)
        and source.get("kind") == "inline"
    )


def _created(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    try:
        stamp = datetime.fromtimestamp(value, timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return stamp.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _file_name(
    reference: Mapping[str, Any], mime: str, is_file_name: Callable[[object], bool]
) -> str:
    """The file name a raster reference names, or raise ValueError with the reason."""
    if reference.get("mime") != mime:
        raise ValueError(f"its mime {reference.get('mime')!r} is not {mime}")
    path = reference.get("path")
    if not isinstance(path, str) or not os.path.isabs(path):
        raise ValueError("its path is not absolute")
    name = Path(path).name
    if not is_file_name(name):
        raise ValueError(f"its path does not end in a file name: {path!r}")
    return name


def file_references(
    outputs: list[Any], is_file_name: Callable[[object], bool]
) -> tuple[list[Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """Each raster file reference of ``outputs`` replaced by its file's name.

    Returns:
        ``(outputs, files, problems)``: new outputs (the given ones are not changed);
        ``{"name", "output_index", "mime_type"[, "bytes"]}`` per reference replaced; and
        ``{"output_index", "mime_type", "reason"}`` per reference left in place.
    """
    files: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    converted: list[Any] = []
    for index, output in enumerate(outputs):
        data = output.get("data") if isinstance(output, dict) else None
        if not isinstance(data, dict):
            converted.append(output)
            continue
        data = dict(data)
        for mime in RASTER_MIME_TYPES:
            reference = data.get(mime)
            if not isinstance(reference, dict) or reference.get("type") != "file":
                continue
            try:
                name = _file_name(reference, mime, is_file_name)
            except ValueError as err:
                problems.append({"output_index": index, "mime_type": mime, "reason": str(err)})
                continue
            data[mime] = name
            entry: dict[str, Any] = {"name": name, "output_index": index, "mime_type": mime}
            if isinstance(reference.get("bytes"), int):
                entry["bytes"] = reference["bytes"]
            files.append(entry)
        converted.append({**output, "data": data})
    return converted, files, problems


def from_reference(
    document: dict[str, Any], *, kind: str, is_file_name: Callable[[object], bool]
) -> dict[str, Any]:
    """The reference's manifest ``document`` in the shape of ours (see the module docstring).

    Args:
        document: a manifest for which :func:`is_reference_manifest` holds.
        kind: our manifest ``kind`` to give it.
        is_file_name: whether a name is a plain file name inside a saved run's folder.

    Returns:
        A new document: ``schema_version``, ``managed_by``, ``kind``, ``run_id``, ``status``,
        ``created`` (None when ``created_at`` is not a time), ``origin``, ``execution``
        (empty: the reference does not record it), ``outputs``, ``files``, ``format``
        (:data:`REFERENCE_FORMAT`) and ``reference``: ``{"source_run_id", "problems"}``, one
        ``{"output_index", "mime_type", "reason"}`` per raster reference left in place.
        The ``outputs`` check is the caller's: a non-list is passed through unchanged.
    """
    source = document["source"]
    outputs: Any = document.get("outputs")
    files: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    if isinstance(outputs, list):
        outputs, files, problems = file_references(outputs, is_file_name)
    return {
        "schema_version": document.get("schema_version"),
        "managed_by": document.get("managed_by"),
        "kind": kind,
        "run_id": document.get("run_id"),
        "status": document.get("status"),
        "created": _created(document.get("created_at")),
        "origin": {"cwd": source.get("cwd", document.get("cwd"))},
        "execution": {},
        "outputs": outputs,
        "files": files,
        "format": REFERENCE_FORMAT,
        "reference": {"source_run_id": source.get("run_id"), "problems": problems},
    }
