"""Reading the files behind a Document, with fingerprints, and writing them back atomically.

Every file is opened by ``_open`` (one resolution, no link followed after it, the
confinement checked where the file is opened, regular files only, size-bounded) and written by
``_atomic.atomic_write_bytes`` with the bytes it was read as (compare before replace).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._atomic import FileChanged, atomic_write_bytes, check_writable
from jupyter_jcli.notebook._open import (
    Confinement,
    chosen,
    compare_regular,
    confined,
    read_regular,
)
from jupyter_jcli.notebook._pairs import PairContext, combine_pair, paired_text_files
from jupyter_jcli.notebook._paths import os_error
from jupyter_jcli.notebook.io import parse_notebook

__all__ = ["FileState", "Loaded", "read_file", "read_target", "write_all", "written_state"]


@dataclass(frozen=True)
class FileState:
    """A file as it was read or written: its fingerprint and bytes.

    Attributes:
        path: the file, absolute.
        size: bytes.
        mtime_ns: modification time, nanoseconds.
        sha256: hex digest of ``raw``.
        raw: the content.
        info: the ``fstat`` of the descriptor it was read from (``None`` for a file state
            computed after our own write); not part of the comparison.
    """

    path: Path
    size: int
    mtime_ns: int
    sha256: str
    raw: bytes
    info: os.stat_result | None = field(default=None, compare=False, repr=False)


def read_file(path: Path, *, confine: Confinement | None = None) -> FileState:
    """Read one file of a document (``_open.read_regular``) with its fingerprint.

    Args:
        path: the file, absolute.
        confine: the roots it must lie in; default the active confinement.

    Raises:
        NotebookError: ``PATH_NOT_ALLOWED``, ``FILE_NOT_FOUND``, ``NOTEBOOK_READ_FAILED``
            (not a regular file, too large, unreadable).
    """
    try:
        opened = read_regular(path, confine=confine)
    except OSError as err:
        raise os_error(err, path) from err
    raw = opened.raw
    return FileState(
        path=path,
        size=len(raw),
        mtime_ns=opened.info.st_mtime_ns,
        sha256=hashlib.sha256(raw).hexdigest(),
        raw=raw,
        info=opened.info,
    )


Loaded = tuple[dict[str, Any], tuple[FileState, ...], PairContext | None, NotebookError | None]
"""``(notebook model, files with the .ipynb first, pair context, refusal)``: see
:func:`read_target`."""


def read_target(
    target: Path, *, confine: Confinement | None = None, base_dir: Path | None = None
) -> Loaded:
    """Read an ``.ipynb`` or a py:percent ``.py`` with the files it is paired with.

    An ``.ipynb`` paired by its ``metadata.jupytext.formats`` with an existing text file
    (``_pairs.paired_text_files``) is read as that pair, like the text file would be, so a
    mutation writes both.

    Returns:
        ``(notebook, files, pair, refusal)``. ``refusal`` is ``None`` or the error every
        mutation of this content must raise (reads still work): ``PAIR_OUT_OF_SYNC`` when
        the two sides hold different inputs and the ``.ipynb`` is not what jupyter-jcli
        wrote when they last agreed (``_pairs``; details: ``PairContext.out_of_sync`` and
        the commands that make them agree, ``keep_notebook`` and ``keep_text``);
        ``FILE_TYPE_UNSUPPORTED`` when the ``.ipynb`` is paired with several existing text
        files; the ``NOTEBOOK_READ_FAILED``/``FILE_NOT_FOUND``/``PATH_NOT_ALLOWED`` of a
        paired text file that cannot be read or combined, or lies outside the confinement
        (the ``.ipynb`` is then read alone).

    Every file is read under ``confine`` (default the active confinement): a paired file
    outside it is ``PATH_NOT_ALLOWED``, as a refusal for the ``.ipynb``'s pair, as an error
    for a ``.py``'s notebook. ``base_dir``: the snapshot cache base folder, where the last
    agreement of a pair is recorded (default ``snapshots.cache_dir()``).

    Raises:
        NotebookError: the read codes of ``Document.load``.
    """
    with confined(chosen(confine)):
        return _read_target(target, base_dir)


def _read_target(target: Path, base_dir: Path | None) -> Loaded:
    suffix = target.suffix.lower()
    if suffix == ".ipynb":
        state = read_file(target)
        notebook = parse_notebook(state.raw, path=target)
        texts = paired_text_files(target, notebook.get("metadata"))
        if not texts:
            return notebook, (state,), None, None
        if len(texts) > 1:
            refusal = NotebookError(
                ErrorCode.FILE_TYPE_UNSUPPORTED,
                f"{target} is paired with several text files; jupyter-jcli edits a notebook "
                "paired with one text file only (edit that file, or unpair the others).",
                {"path": str(target), "paired_files": [str(path) for path, _fmt in texts]},
            )
            return notebook, (state,), None, refusal
        [(text_path, fmt)] = texts
        try:
            text_state = read_file(text_path)
            return _combined(text_state, state, fmt, base_dir)
        except NotebookError as err:
            return notebook, (state,), None, err
    if suffix == ".py":
        from jupyter_jcli.notebook.pairing import find_paired_notebook

        py_state = read_file(target)
        ipynb_path = Path(os.path.abspath(find_paired_notebook(target)))
        ipynb_state = read_file(ipynb_path)
        return _combined(py_state, ipynb_state, None, base_dir)
    raise NotebookError(
        ErrorCode.FILE_TYPE_UNSUPPORTED,
        f"{target} is neither a .ipynb notebook nor a paired .py file.",
        {"path": str(target), "suffix": target.suffix},
    )


def _combined(
    text: FileState, ipynb: FileState, fmt: dict[str, Any] | None, base_dir: Path | None
) -> Loaded:
    notebook, pair = combine_pair(text.path, text.raw, ipynb.path, ipynb.raw, fmt=fmt)
    if pair.out_of_sync is None:
        return notebook, (ipynb, text), pair, None
    from jupyter_jcli.notebook.snapshots import SnapshotStore

    newer = "notebook" if ipynb.mtime_ns > text.mtime_ns else "text"
    agreed = SnapshotStore(ipynb.path, base_dir=base_dir).agreed_pair() == ipynb.sha256
    facts: dict[str, Any] = {
        **pair.out_of_sync,
        "newer": newer,
        "notebook_mtime_ns": ipynb.mtime_ns,
        "text_mtime_ns": text.mtime_ns,
        "writes": "take_text" if agreed else "refused",
    }
    facts.update(agree_commands(facts, notebook, pair.metadata, _short(pair.fmt)))
    pair = replace(pair, out_of_sync=facts)
    if agreed:
        return notebook, (ipynb, text), pair, None
    refusal = NotebookError(ErrorCode.PAIR_OUT_OF_SYNC, out_of_sync_message(facts), facts)
    return notebook, (ipynb, text), pair, refusal


def _short(fmt: dict[str, Any]) -> str:
    """``{"extension": ".py", "format_name": "percent"}`` as ``py:percent``."""
    extension = str(fmt.get("extension", ".py")).lstrip(".")
    name = fmt.get("format_name")
    return f"{extension}:{name}" if name else extension


def agree_commands(
    facts: dict[str, Any], notebook: dict[str, Any], combined: dict[str, Any], fmt: str
) -> dict[str, str]:
    """The shell commands that make an out-of-sync pair agree with jupytext, keeping one
    side's inputs: ``{"keep_notebook": ..., "keep_text": ...}``. ``jupytext --sync`` runs on
    the file whose metadata names the pairing (the ``.ipynb``'s own, else the text file's
    header) and takes the inputs of the more recent file, so the side to keep is touched
    first when it is the older. Without ``formats`` on either side (paired by stem only),
    ``--set-formats`` pairs them (taking, as ``--sync``, the more recent file's inputs) and
    ``--to ipynb --update`` takes the text file's inputs into the notebook, outputs kept.

    Args:
        facts: ``PairContext.out_of_sync`` with ``newer``.
        notebook: the ``.ipynb`` as read (its own metadata).
        combined: the pair's combined notebook metadata (``PairContext.metadata``).
        fmt: the text file's format, short form (``py:percent``).
    """
    from jupyter_jcli.notebook._pair_search import notebook_formats

    ipynb, text = shlex.quote(facts["notebook_path"]), shlex.quote(facts["text_path"])
    if notebook_formats(notebook.get("metadata")) is not None:
        sync = f"jupytext --sync {ipynb}"
    elif notebook_formats(combined) is not None:
        sync = f"jupytext --sync {text}"
    else:
        pair_them = f"jupytext --set-formats ipynb,{fmt} {ipynb}"  # syncs as --sync does
        return {
            "keep_notebook": pair_them
            if facts["newer"] == "notebook"
            else f"touch {ipynb} && {pair_them}",
            "keep_text": f"jupytext --to ipynb --update {text}",
        }
    newer = facts["newer"]
    return {
        "keep_notebook": sync if newer == "notebook" else f"touch {ipynb} && {sync}",
        "keep_text": sync if newer == "text" else f"touch {text} && {sync}",
    }


def out_of_sync_message(facts: dict[str, Any]) -> str:
    """What a ``PAIR_OUT_OF_SYNC`` refusal says: which side changed last, and the commands
    of :func:`agree_commands` (in ``facts``)."""
    notebook_path, text_path = facts["notebook_path"], facts["text_path"]
    newer = notebook_path if facts["newer"] == "notebook" else text_path
    return (
        f"{notebook_path} and its paired {text_path} hold different cell inputs, and "
        f"{newer} was changed last; jupyter-jcli runs and writes nothing on such a pair, as "
        "it would replace one side's change with the other's. To keep the inputs of "
        f"{notebook_path}: `{facts['keep_notebook']}`; to keep those of {text_path}: "
        f"`{facts['keep_text']}`. Then retry."
    )


def write_all(
    changed: list[tuple[Path, bytes, bytes]],
    *,
    confine: Confinement | None = None,
    checked: Callable[[], None] | None = None,
) -> dict[Path, os.stat_result]:
    """Write each file atomically; if a later one fails, put the earlier ones back.

    Each ``(path, before, after)`` is replaced only if the file still holds ``before`` right
    before its rename (``atomic_write_bytes(expected=before)``); every file is compared once
    before the first is written, so a pair is rarely half written. Putting a file back is
    compared the same way (with what this call wrote): a file saved by someone else since is
    left as they saved it.

    Args:
        changed: ``(path, before, after)`` per file, in write order.
        confine: the roots the files must lie in; default the active confinement.
        checked: called once every file passed those checks, before the first is written
            (a mutation prepares its undo snapshot there); whatever it raises writes nothing.

    Returns:
        The ``fstat`` of each written file, by path.

    Raises:
        FileChanged: ``WRITE_CONFLICT``: a file no longer holds ``before`` (nothing of that
            file written; earlier files of the call put back).
        NotebookError: ``NOTEBOOK_WRITE_FAILED``; a read-only file (``check_writable``) is
            found before any file is written; ``PATH_NOT_ALLOWED``.
    """
    for path, before, _after in changed:
        check_writable(path)
        try:
            actual = compare_regular(path, before, confine=confine)  # in chunks
        except OSError as err:
            coded = os_error(err, path)
            if coded.code != ErrorCode.FILE_NOT_FOUND:
                raise coded from err
            raise _changed(path, before, None) from err
        if actual is not None:
            raise _changed(path, before, actual)
    if checked is not None:
        checked()
    done: list[tuple[Path, bytes, bytes]] = []
    written: dict[Path, os.stat_result] = {}
    try:
        for path, before, after in changed:
            written[path] = atomic_write_bytes(path, after, expected=before, confine=confine)
            done.append((path, before, after))
    except NotebookError:
        for path, before, after in reversed(done):
            with contextlib.suppress(FileChanged):
                atomic_write_bytes(path, before, expected=after, confine=confine)
        raise
    return written


def _changed(path: Path, expected: bytes, actual_sha256: str | None) -> FileChanged:
    return FileChanged(
        ErrorCode.WRITE_CONFLICT,
        f"{path} was saved by another program while this write was prepared.",
        {
            "path": str(path),
            "expected_sha256": hashlib.sha256(expected).hexdigest(),
            "actual_sha256": actual_sha256,
        },
    )


def written_state(state: FileState, data: bytes, info: os.stat_result | None = None) -> FileState:
    """The fingerprint of ``state``'s file after ``data`` was written (``info``: its fstat)."""
    if data == state.raw:
        return state
    return FileState(
        path=state.path,
        size=len(data),
        mtime_ns=info.st_mtime_ns if info is not None else 0,
        sha256=hashlib.sha256(data).hexdigest(),
        raw=data,
    )
