"""The saved-output protocol on a run manifest: the outputs of a run that has no notebook.

Inline code (``j-cli exec``) and plain scripts (``j-cli run script.py``) whose results are
too rich or too long to answer inline are saved by :mod:`jupyter_jcli.runs` under
``<cwd>/.j-cli/outputs/<run-id>/``: a ``manifest.json`` and one real file per raster. This
module reads such a manifest back through the same protocol as a notebook cell
(:func:`jupyter_jcli.outputs.list_outputs`, :func:`jupyter_jcli.outputs.read_output`): the
same response shapes, options and error codes. Only ``source`` differs::

    {"kind": "run", "path": "/abs/.j-cli/outputs/<run-id>/manifest.json", "run_id": "...",
     "run_status": "complete", "created": "2026-12-01T16:55:00Z"}

Manifest (schema version 1; written by ``jupyter_jcli.runs``): the reference
jupyter-jcli 0.9.7's manifest (its ``jupyter_jcli/outputs/store.py``), so either reads and
cleans the other's runs, with our fields added (``kind``, ``created``, ``origin``,
``execution``, ``output_count``, ``files``)::

    {"schema_version": 1, "managed_by": "jupyter-jcli", "kind": "run_outputs",
     "run_id": "...", "status": "complete", "created": "<ISO 8601 UTC>",
     "created_at": <seconds since the epoch>, "cwd": "/abs",
     "source": {"kind": "inline", "cwd": "/abs", "run_id": "..."},
     "origin": {...}, "execution": {...}, "output_count": 2,
     "outputs": [<nbformat v4 outputs, each raster value replaced by
                  {"type": "file", "path": "/abs/.j-cli/outputs/<run-id>/output-0.png",
                   "mime": "image/png", "bytes": 1234}>],
     "files": [{"name": "output-0.png", "output_index": 0, "mime_type": "image/png",
                "bytes": 1234}]}

A raster's value in ``outputs`` is a reference to its file (``files`` lists it), not base64; the
file is looked up by its name inside the saved run's folder, never at the recorded path, so a
saved run moved elsewhere still reads. On load each is read and given to the protocol as base64,
so a read returns it as for a notebook (the listing's ``mime_bytes`` of a raster is the size of
its canonical base64, without the line breaks a notebook may store). A file that is missing, not
a regular file or a symlink makes only the reads of that one representation fail
(``OUTPUT_DATA_INVALID``, details ``file`` and ``reason``); the listing flags it in
``mime_problems`` and everything else reads as usual. Manifests of ours from before held the
file's name in place of the reference; they read as well.

A manifest written by the reference (no ``kind``, no ``files``) is read too, given in our
shape (:mod:`jupyter_jcli.outputs._reference_manifest`); its reads' ``source`` adds
``format`` ``"jupyter-jcli-0.9.7"``.

Errors: ``OUTPUT_NOT_FOUND`` (no manifest there, as in the reference),
``NOTEBOOK_READ_FAILED`` (the manifest file cannot be read),
``RUN_MANIFEST_INVALID`` (not JSON, not ours, a bad shape), then the protocol's own codes.
"""

from __future__ import annotations

import base64
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from jupyter_jcli.errors import ErrorCode, NotebookError, OutputProtocolError
from jupyter_jcli.notebook.io import display_path, read_binary_file, read_text_file
from jupyter_jcli.outputs import MAX_TRANSPORT_BYTES, list_outputs, read_output
from jupyter_jcli.outputs._mime import select_mime_type
from jupyter_jcli.outputs._raster import RASTER_MIME_TYPES
from jupyter_jcli.outputs._reference_manifest import (
    file_references,
    from_reference,
    is_reference_manifest,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from jupyter_jcli.outputs._read import ReadOptions

__all__ = [
    "MANAGED_BY",
    "MANIFEST_KIND",
    "MANIFEST_NAME",
    "MANIFEST_SCHEMA_VERSION",
    "SavedRunOutputs",
    "open_manifest",
]

MANIFEST_NAME = "manifest.json"
"""The manifest's file name inside a saved run's folder."""
MANAGED_BY = "jupyter-jcli"
"""The ``managed_by`` marker of every manifest we write: what retention deletes is ours."""
MANIFEST_KIND = "run_outputs"
"""The manifest's ``kind``."""
MANIFEST_SCHEMA_VERSION = 1
"""The manifest's ``schema_version``."""


def _invalid(path: Path, message: str, **details: Any) -> OutputProtocolError:
    return OutputProtocolError(
        ErrorCode.RUN_MANIFEST_INVALID,
        f"{path} is not a run manifest of jupyter-jcli: {message}.",
        {"path": str(path), **details},
    )


def is_file_name(name: object) -> bool:
    """Whether ``name`` is a plain file name inside the saved run's folder (no separator, no
    ``..``)."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and "\\" not in name
        and "\x00" not in name
        and name != MANIFEST_NAME
    )


def parse_manifest(raw: str, path: Path) -> dict[str, Any]:
    """Parse and check a manifest's text; a manifest the reference jupyter-jcli 0.9.7 wrote
    is given in our shape (:mod:`jupyter_jcli.outputs._reference_manifest`).

    Raises:
        OutputProtocolError: ``RUN_MANIFEST_INVALID`` (details ``path``, ``reason``).
    """
    try:
        document: object = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise _invalid(path, f"not valid JSON ({err.msg})", reason="not_json") from err
    if not isinstance(document, dict):
        raise _invalid(path, "not a JSON object", reason="not_an_object")
    written_by_reference = is_reference_manifest(document, MANAGED_BY)
    if written_by_reference:
        document = from_reference(document, kind=MANIFEST_KIND, is_file_name=is_file_name)
    if document.get("managed_by") != MANAGED_BY or document.get("kind") != MANIFEST_KIND:
        raise _invalid(path, "no managed_by/kind marker of ours", reason="not_ours")
    if document.get("schema_version") != MANIFEST_SCHEMA_VERSION:
        raise _invalid(
            path,
            f"schema_version {document.get('schema_version')!r} is not supported",
            reason="schema_version",
        )
    if not isinstance(document.get("outputs"), list):
        raise _invalid(path, "its 'outputs' is not a list", reason="bad_outputs")
    if not written_by_reference:  # each raster a file reference (earlier ours: its name)
        document["outputs"] = file_references(document["outputs"], is_file_name)[0]
    files = document.get("files", [])
    if not isinstance(files, list) or not all(
        isinstance(entry, dict)
        and is_file_name(entry.get("name"))
        and isinstance(entry.get("output_index"), int)
        and isinstance(entry.get("mime_type"), str)
        for entry in files
    ):
        raise _invalid(path, "its 'files' is not a list of file entries", reason="bad_files")
    if not isinstance(document.get("run_id"), str):
        raise _invalid(path, "it has no 'run_id'", reason="bad_run_id")
    return document


class SavedRunOutputs:
    """A run manifest loaded once, its outputs read through the protocol.

    Built by :func:`open_manifest`.

    Attributes:
        path: the manifest, absolute and resolved.
        folder: the saved run's folder (the manifest's folder).
        manifest: the manifest document as stored (one the reference wrote, in our shape).
        outputs: the run's outputs with each raster file's content in place (base64), or
            ``None`` in place of a file that could not be read (see :attr:`file_problems`).
        file_problems: ``{(output_index, mime_type): {"file", "reason"}}`` for every raster
            file that could not be read (``missing``, ``not_a_file``, ``symlink``,
            ``unreadable``).
    """

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        self.path = path
        self.folder = path.parent
        self.manifest = manifest
        self.file_problems: dict[tuple[int, str], dict[str, str]] = {}
        self.outputs: list[Any] = [_copy_output(output) for output in manifest["outputs"]]
        for entry in manifest.get("files", []):
            self._load_file(entry)

    @property
    def output_count(self) -> int:
        """How many outputs the run has."""
        return len(self.outputs)

    def source(self) -> dict[str, Any]:
        """The provenance of every response: ``kind`` ``"run"``, the manifest, the run; and
        ``format`` ``"jupyter-jcli-0.9.7"`` for a run the reference saved."""
        source = {
            "kind": "run",
            "path": str(self.path),
            "run_id": self.manifest["run_id"],
            "run_status": self.manifest.get("status"),
            "created": self.manifest.get("created"),
        }
        if "format" in self.manifest:
            source["format"] = self.manifest["format"]
        return source

    def _load_file(self, entry: dict[str, Any]) -> None:
        index, mime, name = entry["output_index"], entry["mime_type"], entry["name"]
        if not 0 <= index < len(self.outputs) or mime not in RASTER_MIME_TYPES:
            return
        output = self.outputs[index]
        data = output.get("data") if isinstance(output, dict) else None
        if not isinstance(data, dict) or data.get(mime) != name:
            return
        file_path = self.folder / name
        reason = _file_problem(file_path)
        if reason is None:
            try:
                raw = read_binary_file(file_path)
            except NotebookError:
                reason = "unreadable"
            else:
                data[mime] = base64.b64encode(raw).decode("ascii")
                return
        data[mime] = None
        self.file_problems[(index, mime)] = {"file": str(file_path), "reason": reason}

    def list_outputs(self, *, max_transport_bytes: int = MAX_TRANSPORT_BYTES) -> dict[str, Any]:
        """The directory of the run's outputs (:func:`jupyter_jcli.outputs.list_outputs`):
        one entry per output; a raster whose file is unreadable is in ``mime_problems``."""
        listing = list_outputs(
            self.outputs, source=self.source(), max_transport_bytes=max_transport_bytes
        )
        for (index, mime), problem in self.file_problems.items():
            entry = listing["outputs"][index]
            problems = entry.setdefault("mime_problems", {})
            problems[mime] = {
                "code": str(ErrorCode.OUTPUT_DATA_INVALID),
                "message": _file_message(mime, problem),
            }
        return listing

    def read_output(self, output_index: int, **options: Unpack[ReadOptions]) -> dict[str, Any]:
        """Read one output of the run (:func:`jupyter_jcli.outputs.read_output`, which takes
        the same ``options``).

        Raises:
            OutputProtocolError: the codes of ``read_output``; ``OUTPUT_DATA_INVALID`` with
                details ``file`` and ``reason`` when the representation read is a raster
                whose file is unreadable.
        """
        if self.file_problems and isinstance(output_index, int):
            mime_type = options.get("mime_type")
            self._check_file(output_index, mime_type, options.get("supported_mime_types"))
        return read_output(self.outputs, output_index, source=self.source(), **options)

    def _check_file(
        self, index: int, mime_type: str | None, supported: Iterable[str] | None
    ) -> None:
        broken = {mime: p for (i, mime), p in self.file_problems.items() if i == index}
        if not broken:
            return
        data = self.outputs[index].get("data")
        try:
            chosen = select_mime_type(data, mime_type=mime_type, supported_mime_types=supported)
        except (OutputProtocolError, TypeError):
            return  # read_output reports the selection's own error
        problem = broken.get(chosen)
        if problem is not None:
            raise OutputProtocolError(
                ErrorCode.OUTPUT_DATA_INVALID,
                _file_message(chosen, problem),
                {"mime_type": chosen, "output_index": index, **problem},
            )


def _copy_output(output: Any) -> Any:
    if not isinstance(output, dict):
        return output
    copied = dict(output)
    if isinstance(copied.get("data"), dict):
        copied["data"] = dict(copied["data"])
    return copied


def _file_problem(path: Path) -> str | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "unreadable"
    if stat.S_ISLNK(info.st_mode):
        return "symlink"
    if not stat.S_ISREG(info.st_mode):
        return "not_a_file"
    return None


def _file_message(mime: str, problem: dict[str, str]) -> str:
    what = {
        "missing": "is missing",
        "symlink": "is a symlink (never followed)",
        "not_a_file": "is not a regular file",
        "unreadable": "cannot be read",
    }.get(problem["reason"], "cannot be read")
    return f"The {mime} file of this output {what}: {problem['file']}."


def open_manifest(path: str | os.PathLike[str]) -> SavedRunOutputs:
    """Load a run manifest (and its raster files) once, to list and read its outputs.

    Args:
        path: the ``manifest.json`` of a run, or its folder.

    Raises:
        OutputProtocolError: ``OUTPUT_NOT_FOUND`` (no manifest there: never saved, or removed
            by retention; the reference's code), ``NOTEBOOK_READ_FAILED`` (unreadable, not
            UTF-8, too large), ``USAGE_ERROR`` (empty path, NUL byte), ``RUN_MANIFEST_INVALID``.
    """
    given = Path(path)
    if given.is_dir():
        given = given / MANIFEST_NAME
    try:
        text = read_text_file(given)
    except NotebookError as err:
        if err.code == ErrorCode.FILE_NOT_FOUND:
            raise OutputProtocolError(
                ErrorCode.OUTPUT_NOT_FOUND,
                f"No run manifest at {given}: the run was never saved there, or retention "
                "removed it (j-cli output clean).",
                err.details,
            ) from err
        raise OutputProtocolError(err.code, err.message, err.details) from err
    resolved = display_path(given)
    return SavedRunOutputs(resolved, parse_manifest(text, resolved))
