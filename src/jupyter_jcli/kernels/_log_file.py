"""The execution log of a shared kernel, in its own append-only file beside the entry that names
the kernel: a local kernel's registry entry or a Jupyter Server kernel's ledger entry
(:meth:`~jupyter_jcli.kernels._records.RecordsFolder.record_execution`, which both are).

Each cell run on a shared kernel is recorded. Kept inside the entry's JSON, every record
rewrote the whole log, so a run of N cells cost O(N²) (a 3,000-cell run took minutes). Here a
record is one line appended to ``<key>.runs`` (JSON Lines: ``{"key", "rev", "epoch", "seq",
"parents", "ok", "interrupted"}``), and a reader folds the file: the latest line per cell of
the entry's epoch, in ``seq`` order. The entry keeps what the file needs (the last ``seq``
handed out, the file's size after its last compaction); the log is emptied when the entry
starts a new epoch (an entry whose epoch changes in place, as a server ledger's does, must, so
that runs of an earlier epoch can never count again should that epoch come back).

The file is compacted (rewritten atomically with only what a reader keeps) when it has grown
past twice its size after the last compaction (and past :data:`COMPACT_MIN_BYTES`), so
appends cost O(1) amortised and the file stays within a constant factor of the live log.
Lines of another epoch (an earlier kernel of the notebook) or that do not parse (a torn last
line after a crash) are skipped: a run missing from the log reads as not run, never as
fresh. Callers hold the entry's lock for appends and compaction; reads take no lock (appends
of one short line and the compaction's rename are each seen whole or not at all).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = [
    "COMPACT_MIN_BYTES",
    "append_execution",
    "read_executions",
    "replace_file",
]

COMPACT_MIN_BYTES = 256 * 1024
"""A log smaller than this is never compacted."""


def read_executions(file: Path, epoch: str) -> list[dict[str, Any]]:
    """The execution log of ``epoch`` in ``file``: the latest record per cell ``key``, oldest
    ``seq`` first; ``[]`` when the file is missing."""
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        return []
    latest: dict[str, dict[str, Any]] = {}
    for line in raw.splitlines():
        try:
            run = json.loads(line)
        except ValueError:
            continue
        if isinstance(run, dict) and run.get("epoch") == epoch and isinstance(run.get("key"), str):
            latest.pop(run["key"], None)  # re-inserted last: the dict keeps run order
            latest[run["key"]] = run
    return sorted(latest.values(), key=lambda run: run.get("seq", 0))


def append_execution(
    file: Path, run: dict[str, Any], *, compacted_size: int, durable: bool = True
) -> int:
    """Append ``run`` (with its ``epoch``) to ``file``, compacting first when it has grown
    past ``max(COMPACT_MIN_BYTES, 2 * compacted_size)`` (call under the entry's lock);
    ``durable``: ``fsync`` what is written (a server ledger: its kernel may outlive a crash of
    this machine; a local registry's kernels end with the machine).

    Returns:
        The file's size after its last compaction (``compacted_size`` when none was done
        now): the caller keeps it for the next call.

    Raises:
        OSError: the file cannot be written.
    """
    line = _line(run)
    try:
        size = file.stat().st_size
    except FileNotFoundError:
        size = 0
    if size > max(COMPACT_MIN_BYTES, 2 * compacted_size):
        kept = [
            r for r in read_executions(file, str(run["epoch"])) if r.get("key") != run.get("key")
        ]
        body = b"".join(map(_line, [*kept, run]))
        replace_file(file, body, durable=durable)
        return len(body)
    fd = os.open(file, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # after a torn line (a crash mid-append): a line of its own
        _write_all(fd, line)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    return compacted_size


def replace_file(file: Path, body: bytes, *, durable: bool) -> None:
    """Write ``body`` to a temporary file beside ``file``, ``fsync`` it when ``durable``,
    then ``os.replace`` it onto ``file`` (mode 0600): readers see the old file or the new.

    Raises:
        OSError: it cannot be written.
    """
    tmp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        _write_all(fd, body)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, file)


def _line(run: dict[str, Any]) -> bytes:
    """``run`` as one line of the log: compact JSON, keys sorted, ``\n``-ended."""
    return json.dumps(run, separators=(",", ":"), sort_keys=True).encode() + b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
