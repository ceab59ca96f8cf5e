"""``--save``: write a selected image to a path the user names, atomically."""

from __future__ import annotations

import base64
import binascii
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from jupyter_jcli.errors import ErrorCode, JcliError, UsageError
from jupyter_jcli.outputs import TEXT_ENCODING

__all__ = ["SavedFile", "image_bytes", "require_matching_suffix", "save_bytes"]

_SVG = "image/svg+xml"


class SavedFile(TypedDict):
    """What ``--save`` wrote: ``path`` (as given), ``mime_type`` and ``bytes`` (size)."""

    path: str
    mime_type: str
    bytes: int


def image_bytes(result: Mapping[str, Any]) -> tuple[str, bytes]:
    """The MIME type and file content of the image selected in a ``read_output`` response.

    Rasters (``encoding: "base64"``) give their decoded bytes; ``image/svg+xml`` gives its
    source text as UTF-8, provided the text window holds all of it.

    Raises:
        UsageError: ``USAGE_ERROR`` if the read selected no image (a stream, an error, text
            or JSON), or an SVG page that is not the whole document.
        JcliError: ``OUTPUT_DATA_INVALID`` if the base64 does not decode (the protocol
            returns canonical base64, so this means a broken response).
    """
    selected = result.get("selected")
    if not isinstance(selected, Mapping):
        raise UsageError(
            f"--save needs an image, but this output's type is {result.get('output_type')} "
            "(read it without --save).",
            {"output_type": result.get("output_type")},
        )
    mime_type = str(selected.get("mime_type"))
    encoding = selected.get("encoding")
    if encoding == "base64":
        try:
            return mime_type, base64.b64decode(str(selected.get("data", "")), validate=True)
        except (binascii.Error, ValueError) as err:
            raise JcliError(
                ErrorCode.OUTPUT_DATA_INVALID,
                f"The {mime_type} data is not valid base64.",
                {"mime_type": mime_type},
            ) from err
    if mime_type == _SVG and encoding == TEXT_ENCODING:
        if selected.get("truncated") or int(selected.get("offset", 0)) != 0:
            raise UsageError(
                "--save needs the whole SVG document: read it without --offset and with a "
                "--limit of at least its total_characters.",
                {"total_characters": selected.get("total_characters")},
            )
        return mime_type, str(selected.get("data", "")).encode("utf-8")
    raise UsageError(
        f"--save needs an image, but the selected representation is {mime_type}; "
        "choose one with --mime.",
        {"mime_type": mime_type, "available_mime_types": result.get("available_mime_types")},
    )


def require_matching_suffix(path: str, mime_type: str) -> None:
    """Refuse a destination whose suffix names another image format than the one selected
    (``chart.jpg`` for ``image/png`` bytes): the file would lie about its content. The
    suffix's type is :func:`mimetypes.guess_type`'s (case-insensitive); a suffix that names
    no image type (``.bin``, none) is the user's choice and passes.

    Raises:
        UsageError: ``USAGE_ERROR`` (details ``path``, ``mime_type``, ``suffix_type``).
    """
    import mimetypes

    suffix_type = mimetypes.guess_type(path.lower())[0]
    if suffix_type is None or not suffix_type.startswith("image/") or suffix_type == mime_type:
        return
    wanted = mimetypes.guess_extension(mime_type) or "a suffix of that type"
    raise UsageError(
        f"{path} names {suffix_type}, but the selected image is {mime_type}: name the file "
        f"{wanted}, or choose another representation with --mime.",
        {"path": path, "mime_type": mime_type, "suffix_type": suffix_type},
    )


def _kind(mode: int) -> str:
    from jupyter_jcli.notebook import file_kind

    if stat.S_ISLNK(mode):
        return "symlink"
    kind = file_kind(mode)
    return f"{kind} file" if kind in ("regular", "special") else kind


def _check_target(path: str, *, force: bool) -> None:
    """Refuse a destination that exists (without ``force``) or is not a regular file.

    ``lstat`` is used: a symbolic link, even a dangling one, is itself what exists there.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as err:
        message = f"Cannot write {path}: {err.strerror or err}."
        raise _write_failed(message, {"path": path, "errno": err.errno}) from err
    kind = _kind(info.st_mode)
    details = {"path": path, "file_type": kind}
    if kind != "regular file":
        raise JcliError(
            ErrorCode.FILE_EXISTS,
            f"{path} is a {kind}; --save writes only regular files and never replaces "
            "anything else, even with --force.",
            details,
        )
    if not force:
        raise _exists(path, file_type=kind)


def save_bytes(path: str, content: bytes, *, force: bool) -> None:
    """Write ``content`` to ``path`` through the one atomic writer
    (:func:`jupyter_jcli.notebook.io.write_file`: a temporary file in the same folder, fsync,
    then hard-linked into place, or with ``force`` renamed over the file); a crash leaves no
    half-written file. A new file gets the mode a plain ``open(path, "w")`` would give.

    Args:
        path: the destination the user named.
        content: the bytes to write.
        force: replace an existing regular file; without it any existing path is refused.

    Raises:
        UsageError: ``USAGE_ERROR`` for an empty path, ``-`` (stdout's usual name) or one
            holding a NUL byte.
        JcliError: ``FILE_EXISTS`` if something exists at ``path`` (checked with ``lstat``, so
            a dangling symbolic link counts) and ``force`` is False, or if it is not a
            regular file (a symbolic link, a directory, a device, a FIFO, a socket), whatever
            ``force`` says; ``FILE_WRITE_FAILED`` if the folder is missing, the file is
            read-only or the write fails.
    """
    if not path:
        raise UsageError("--save needs a file path, not an empty string.", {"path": path})
    if "\0" in path:
        raise UsageError("The --save path contains a NUL byte.", {"path": repr(path)})
    if path == "-":  # the usual name of stdout, which carries the command's own output
        raise UsageError(
            "--save writes a file and never stdout; name a file (./- for one named '-').",
            {"path": path},
        )
    _check_target(path, force=force)
    from jupyter_jcli.errors import NotebookError
    from jupyter_jcli.notebook.io import write_file

    try:
        write_file(Path(path), content, replace=force)
    except FileExistsError as err:  # created meanwhile by another program: kept
        raise _exists(path) from err
    except NotebookError as err:
        raise _write_failed(err.message, {**err.details, "path": path}) from err


def _exists(path: str, **details: str) -> JcliError:
    """``FILE_EXISTS``: something is at ``path`` and ``--force`` was not given."""
    return JcliError(
        ErrorCode.FILE_EXISTS,
        f"{path} already exists; pass --force to replace it.",
        {"path": path, **details},
    )


def _write_failed(message: str, details: Mapping[str, Any]) -> JcliError:
    """``FILE_WRITE_FAILED``, with the OS's or the writer's reason."""
    return JcliError(ErrorCode.FILE_WRITE_FAILED, message, dict(details))
