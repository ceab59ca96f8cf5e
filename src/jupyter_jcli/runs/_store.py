"""Saving the outputs of a run that has no notebook: inline, or a saved run with a manifest.

Results that stay in the response (:func:`~jupyter_jcli.runs._inline.stays_inline`) create
nothing. Anything else is saved under ``<cwd>/.j-cli/outputs/<run-id>/``: each raster
(``image/png``, ``image/jpeg``, ``image/webp``, ``image/gif``) decoded into a real file of its
own, then ``manifest.json`` (see :mod:`jupyter_jcli.outputs.manifest` for its shape: the
reference jupyter-jcli 0.9.7's, with our fields added, so either reads the other's), written
last: a saved run's folder without a manifest is a run that did not finish saving, which retention
keeps and reports. Every file is created by the one atomic writer, exclusively.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import JcliError, OutputProtocolError
from jupyter_jcli.notebook.io import create_file
from jupyter_jcli.outputs import RASTER_MIME_TYPES, decode_raster, serialize_json
from jupyter_jcli.outputs.manifest import (
    MANAGED_BY,
    MANIFEST_KIND,
    MANIFEST_NAME,
    MANIFEST_SCHEMA_VERSION,
)
from jupyter_jcli.runs._folders import (
    make_saved_run_folder,
    outputs_folder,
    remove_saved_run_folder,
)

__all__ = ["SavedRun", "new_run_id", "save_run"]

_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}


def new_run_id(now: float | None = None) -> str:
    """A run id that sorts by time: ``YYYYmmddTHHMMSSZ-<8 hex>`` (UTC)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class SavedRun:
    """A run saved to disk.

    Attributes:
        run_id: the run's id (its folder name).
        folder: the saved run's folder, absolute.
        manifest_path: its ``manifest.json``, absolute.
        files: the raster files written: ``{"name", "path", "output_index", "mime_type",
            "bytes"}`` each.
    """

    run_id: str
    folder: Path
    manifest_path: Path
    files: tuple[dict[str, Any], ...]


def _split_rasters(
    outputs: Sequence[Any], folder: Path
) -> tuple[list[Any], list[tuple[dict[str, Any], bytes]]]:
    """The outputs for the manifest, each decodable raster replaced by a reference to its
    file in ``folder`` (the reference's ``{"type": "file", "path", "mime", "bytes"}``), and
    the files to write. An undecodable raster stays as it was (a read reports it)."""
    stored: list[Any] = []
    files: list[tuple[dict[str, Any], bytes]] = []
    for index, output in enumerate(outputs):
        if not isinstance(output, Mapping):  # malformed: kept as is, the protocol flags it
            stored.append(output)
            continue
        copied = dict(output)
        data = copied.get("data")
        if isinstance(data, dict):
            data = dict(data)
            copied["data"] = data
            for mime in [m for m in data if m in RASTER_MIME_TYPES]:
                try:
                    raster = decode_raster(mime, data[mime])
                except OutputProtocolError:
                    continue
                name = f"output-{index}.{_EXTENSIONS[mime]}"
                data[mime] = {
                    "type": "file",
                    "path": str(folder / name),
                    "mime": mime,
                    "bytes": raster.size,
                }
                entry = {"name": name, "output_index": index, "mime_type": mime}
                files.append(({**entry, "bytes": raster.size}, raster.raw))
        stored.append(copied)
    return stored, files


def save_run(
    cwd: Path,
    outputs: Sequence[Mapping[str, Any]],
    *,
    origin: Mapping[str, Any],
    execution: Mapping[str, Any],
    now: float | None = None,
) -> SavedRun:
    """Save a run's outputs under ``<cwd>/.j-cli/outputs/<run-id>/``.

    Args:
        cwd: the command's real working directory (absolute).
        outputs: the run's nbformat v4 outputs.
        origin: what ran (operation, code digest, script path, notebook path...).
        execution: how it ended (status, execution_count, ename, evalue, duration_s).
        now: the time to stamp (seconds since the epoch); default now.

    Returns:
        The saved run. On failure nothing of the run is left (the folder is removed).

    Raises:
        JcliError: ``RUN_FOLDER_UNSAFE``, ``FILE_WRITE_FAILED``, ``NOTEBOOK_WRITE_FAILED``.
    """
    stamp = time.time() if now is None else now
    root = outputs_folder(cwd, create=True)
    assert root is not None
    run_id = new_run_id(stamp)
    folder = make_saved_run_folder(root, run_id)
    stored, files = _split_rasters(outputs, folder)
    written: list[str] = []
    try:
        for entry, content in files:
            create_file(folder / entry["name"], content)
            written.append(entry["name"])
        manifest = {
            "schema_version": MANIFEST_SCHEMA_VERSION,
            "managed_by": MANAGED_BY,
            "kind": MANIFEST_KIND,
            "run_id": run_id,
            "status": "complete",
            "created": datetime.fromtimestamp(stamp, timezone.utc)
            .isoformat(timespec="microseconds")
            .replace("+00:00", "Z"),
            "created_at": stamp,
            "cwd": str(cwd),
            "source": {"kind": "inline", "cwd": str(cwd), "run_id": run_id},
            "origin": dict(origin),
            "execution": dict(execution),
            "output_count": len(stored),
            "outputs": stored,
            "files": [entry for entry, _content in files],
        }
        create_file(folder / MANIFEST_NAME, serialize_json(manifest) + b"\n")
        written.append(MANIFEST_NAME)
    except (JcliError, OSError):
        with contextlib.suppress(OSError):
            remove_saved_run_folder(folder, written)
        raise
    return SavedRun(
        run_id=run_id,
        folder=folder,
        manifest_path=folder / MANIFEST_NAME,
        files=tuple({**entry, "path": str(folder / entry["name"])} for entry, _ in files),
    )
