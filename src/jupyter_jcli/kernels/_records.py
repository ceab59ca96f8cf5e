"""The records a kernel shares with every process of ours on it: one protocol, three stores.

What ran on a notebook's kernel, the code run outside its cells and the stops another
process asked for are kept outside any one process (each ``j-cli`` command, ``jupyter-mcp``)
by a :class:`KernelRecords`: :class:`~jupyter_jcli.kernels.KernelRegistry`'s files (a kernel
of this machine), a Jupyter Server's :class:`~jupyter_jcli.kernels.ServerLedger`, or, for
tests, ``MemoryRecords`` (``tests/kernel_fakes``). A
:class:`~jupyter_jcli.kernels.KernelPool` owns its records (``pool.records``; ``None``: kernels
of this process alone): its kernels read stops asked elsewhere there and the workbench keeps
its execution log there. Records have the registry's shapes
(:meth:`~jupyter_jcli.kernels.KernelRegistry.record_execution`, ``record_change``); every method is
bounded (each store's lock has a timeout).

The two stores on disk are one :class:`RecordsFolder`, a folder of per-notebook entry files,
each with its execution log and its lock; they differ only in their key, their folder, the
fields of their entries (the registry's kernel and its users, the ledger's server kernel id
and witness), whether writes are ``fsync``-ed, and what a record of another epoch than the
entry's does (the registry refuses it: another kernel's; the ledger starts afresh with it).
Both keep what a process of ours runs on the kernel while it runs (``busy``,
:meth:`RecordsFolder.set_busy`), so a command killed while its code ran leaves that said::

    <key>.json   the entry, replaced atomically (:func:`~._log_file.replace_file`)
    <key>.runs   its epoch's execution log, append-only JSON Lines (:mod:`._log_file`)
    <key>.lock   flock'ed for each read-modify-write of the two (bounded by LOCK_TIMEOUT)

``<key>`` is a digest of the store's scope (the ledger's server URL) and the resolved
notebook path. When the entry is gone its other files go too, each removed only by a holder
of its lock (see :mod:`._flock`: removing them never lets two processes hold one lock).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, get_args

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._entry import own_pid, process_command
from jupyter_jcli.kernels._flock import ExecLock, flock_path
from jupyter_jcli.kernels._log_file import (
    append_execution,
    read_executions,
    replace_file,
)
from jupyter_jcli.kernels._types import AskedStop, InterruptReason

__all__ = [
    "LOCK_TIMEOUT",
    "MAX_CHANGES",
    "FolderEntry",
    "KernelRecords",
    "RecordsEntry",
    "RecordsFolder",
    "add_change",
    "asked_since",
    "asked_stop",
    "replace_busy",
]

LOCK_TIMEOUT = 10.0
"""Seconds to wait for an entry's lock (held only for one read-modify-write)."""
MAX_CHANGES = 32
"""Changes of inline code kept per entry (older ones already count through newer ones)."""


def add_change(entry: Any, change: dict[str, Any]) -> int:
    """Append ``change`` (code run outside the cells) to ``entry.changes`` with the next
    ``entry.seq``, which it returns; keep the latest :data:`MAX_CHANGES` and none older than
    the last change that may have written any name (``names`` ``None``: it overwrote
    everything the older ones did). One rule for every records store."""
    entry.seq += 1
    kept = [*entry.changes, {**change, "seq": entry.seq}]
    last_all = max((i for i, c in enumerate(kept) if c.get("names") is None), default=0)
    entry.changes = kept[last_all:][-MAX_CHANGES:]
    return int(entry.seq)


def asked_since(asked: object, epoch: str, since: float) -> dict[str, Any] | None:
    """``asked`` (an entry's recorded interrupt, restart or stop request) when it is for the
    kernel of ``epoch`` and was made at or after ``since`` (Unix time, s), else ``None``."""
    if not isinstance(asked, dict) or asked.get("epoch") != epoch:
        return None
    at = asked.get("at")
    return asked if isinstance(at, (int, float)) and at >= since else None


def asked_stop(asked: dict[str, Any] | None) -> AskedStop | None:
    """The stop a recorded request (:func:`asked_since`'s) asks, ``None`` for none or one
    whose reason is not an :data:`~jupyter_jcli.kernels.InterruptReason`."""
    found = asked or {}
    reason = next((r for r in get_args(InterruptReason) if r == found.get("reason")), None)
    if reason is None:
        return None
    who, command = found.get("who"), found.get("command")
    return AskedStop(
        reason, who if isinstance(who, str) else None, command if isinstance(command, str) else None
    )


class RecordsEntry(Protocol):
    """A notebook's entry: the ``epoch`` its records are of, the last ``seq`` handed out
    (orders records across processes) and ``changes`` (code run outside the cells)."""

    @property
    def epoch(self) -> str | None: ...
    @property
    def seq(self) -> int: ...
    @property
    def changes(self) -> list[dict[str, Any]]: ...


class KernelRecords(Protocol):
    """The records of the kernels of one place (module docstring)."""

    def holds(self, notebook_path: Path) -> bool:
        """Whether they keep the notebook's runs now (``False``: the process running the
        kernel keeps them, e.g. a server kernel without a ledger entry)."""
        ...

    def read(self, notebook_path: Path) -> RecordsEntry | None:
        """The notebook's entry, ``None`` without one."""
        ...

    def executions(self, notebook_path: Path) -> list[dict[str, Any]]:
        """The latest run per cell on the entry's epoch, oldest first."""
        ...

    def record_execution(self, notebook_path: Path, record: dict[str, Any]) -> int:
        """Append one run; its ``seq``, ``-1`` when nothing was recorded."""
        ...

    def record_change(self, notebook_path: Path, change: dict[str, Any]) -> int:
        """Append one run of code outside the cells; its ``seq``, ``-1`` as above."""
        ...

    def record_interrupt(self, notebook_path: Path, epoch: str, who: str, reason: str) -> None:
        """Note that ``who`` asks the kernel of ``epoch`` to stop (``reason``: an
        :data:`~jupyter_jcli.kernels.InterruptReason`), before asking it."""
        ...

    def interrupt_since(
        self, notebook_path: Path, epoch: str, since: float
    ) -> dict[str, Any] | None:
        """The stop recorded for the kernel of ``epoch`` at or after ``since`` (Unix time,
        s): ``{"epoch", "who", "command", "reason", "at"}``, else ``None``."""
        ...

    def running(self, notebook_path: Path, epoch: str) -> dict[str, Any] | None:
        """What another process runs on the kernel of ``epoch`` (the facts of
        ``KERNEL_BUSY``), ``None`` when the records do not say."""
        ...


class FolderEntry(RecordsEntry, Protocol):
    """An entry a :class:`RecordsFolder` stores: what its execution log needs (``seq``, the
    last sequence number handed out; ``runs_compacted``, the log file's size in bytes after
    its last compaction, 0: never), the last stop asked (``interrupt``) and what a process
    of ours runs on the kernel (``busy``: :func:`~jupyter_jcli.kernels._busy.busy_record`,
    ``None`` when nothing)."""

    seq: int
    runs_compacted: int
    changes: list[dict[str, Any]]
    interrupt: dict[str, Any] | None
    busy: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        """The stored form (JSON-ready)."""
        ...


E = TypeVar("E", bound=FolderEntry)


def replace_busy(entry: FolderEntry, busy: dict[str, Any] | None, owner: int) -> bool:
    """Set ``entry``'s ``busy`` record to ``busy``; ``None`` clears only a record of process
    ``owner`` or of no process (the record a killed process left stays, so later commands
    learn that its code may still run). Whether it changed."""
    pid = (entry.busy or {}).get("pid")
    if busy is None and isinstance(pid, int) and pid != owner:
        return False
    entry.busy = busy
    return True


class RecordsFolder(ABC, Generic[E]):
    """:class:`KernelRecords` in a folder of per-notebook entry files (the module docstring):
    the execution log, the changes, the stops asked, every read-modify-write under the
    entry's lock. A store gives its entry type (:meth:`_load`), its scope and folder, and how
    a record of another epoch than the entry's is taken (:meth:`_take_epoch`).

    Args:
        root: the folder.
        scope: what the key digests before the notebook path (``""``: the path alone).
    """

    durable = True
    """Whether each write is ``fsync``-ed (a store whose kernels end with this machine need
    not: a run lost by a crash reads as not run anyway)."""
    server_url: str | None = None
    """The Jupyter Server whose kernels the records are of (``None``: this machine's), named
    by the commands a refusal suggests (``j-cli kernel interrupt NB --server-url URL``)."""

    def __init__(self, root: Path, scope: str = "") -> None:
        self.root = root
        self._scope = scope

    def key(self, notebook_path: Path) -> str:
        """The file stem of a notebook's entry: a digest of the scope and the resolved path's
        bytes (a name that is not UTF-8 is hashed as the file system spells it,
        ``os.fsencode``)."""
        name = os.fsencode(f"{self._scope}{notebook_path.resolve()}")
        return hashlib.sha256(name).hexdigest()[:24]

    def path(self, notebook_path: Path, suffix: str = ".json") -> Path:
        """``<root>/<key><suffix>`` (``.json``, ``.runs``, ``.lock``, and a store's own)."""
        return self.root / f"{self.key(notebook_path)}{suffix}"

    def _ensure_root(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)

    def locked(
        self, notebook_path: Path, *, timeout: float = LOCK_TIMEOUT
    ) -> contextlib.AbstractContextManager[None]:
        """Hold the entry's lock (for one read-modify-write).

        Raises:
            KernelError: ``KERNEL_BUSY`` (details ``lock``) when it stays taken ``timeout`` s.
        """
        return self.locked_key(self.key(notebook_path), timeout=timeout, name=notebook_path)

    @contextlib.contextmanager
    def locked_key(self, key: str, *, timeout: float, name: object) -> Iterator[None]:
        """:meth:`locked` by entry key (``name``: the error's ``notebook_path``); on the way
        out, with no entry left, the entry's other files are removed (the lock file last,
        still held)."""
        self._ensure_root()
        lock = self.root / f"{key}.lock"
        fd = flock_path(lock, blocking_until=time.monotonic() + timeout)
        if fd is None:
            raise KernelError(
                ErrorCode.KERNEL_BUSY,
                "the kernel registry entry stayed locked",
                {"notebook_path": str(name), "lock": "registry"},
            )
        try:
            yield
            if not (self.root / f"{key}.json").exists():
                self._remove_side_files(key)
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()  # last: a waiter then locks a new file (see flock_path)
        finally:
            os.close(fd)  # closing releases the flock

    def _remove_side_files(self, key: str) -> None:
        """Remove an entry-less key's log files, and its execution lock unless someone holds
        it (call under the entry's lock)."""
        (self.root / f"{key}.log").unlink(missing_ok=True)
        (self.root / f"{key}.runs").unlink(missing_ok=True)
        file = self.root / f"{key}.exec"
        execution = ExecLock(file)
        if file.exists() and execution.try_acquire():
            try:
                with contextlib.suppress(FileNotFoundError):
                    file.unlink()  # held: a waiter then locks a new file (see _flock)
            finally:
                execution.release()

    @abstractmethod
    def _load(self, data: object) -> E | None:
        """The entry stored as ``data`` (parsed JSON), ``None`` when it is not one (each
        store's entry type: :class:`KernelEntry`, the ledger's ``LedgerEntry``)."""

    def read_file(self, file: Path) -> E | None:
        """The entry stored in ``file``, ``None`` when it is missing or not one."""
        try:
            return self._load(json.loads(file.read_bytes()))
        except (OSError, ValueError):
            return None

    def _entry(self, notebook_path: Path) -> E | None:
        """The stored entry, with an epoch or not (:meth:`read` wants one)."""
        return self.read_file(self.path(notebook_path))

    def read(self, notebook_path: Path) -> E | None:
        """The notebook's entry when it has an epoch (runs to count), else ``None``."""
        entry = self._entry(notebook_path)
        return entry if entry is not None and entry.epoch is not None else None

    def _store(self, notebook_path: Path, entry: E) -> None:
        """Replace the entry atomically (call under :meth:`locked`), compact, as the C encoder
        writes it (an ``indent`` takes the pure-Python encoder, about 10x slower)."""
        self._ensure_root()
        data = json.dumps(entry.to_dict(), separators=(",", ":"), sort_keys=True).encode()
        replace_file(self.path(notebook_path), data, durable=self.durable)

    def update(
        self, notebook_path: Path, change: Callable[[E], None], *, epoch: str | None = None
    ) -> E | None:
        """Apply ``change`` to the entry under its lock and store it; nothing when there is
        no entry or (``epoch`` given) it is another kernel's. Returns the stored entry."""
        with self.locked(notebook_path):
            entry = self._entry(notebook_path)
            if entry is None or (epoch is not None and entry.epoch != epoch):
                return None
            change(entry)
            self._store(notebook_path, entry)
            return entry

    def _forget(self, notebook_path: Path, which: Callable[[E], bool] | None) -> bool:
        """Remove the entry and its execution log (the log first: a crash in between leaves
        an entry with fewer runs, never a log without its entry), only an entry ``which``
        accepts when given; ``True`` if removed."""
        with self.locked(notebook_path):
            if which is not None and (
                (entry := self._entry(notebook_path)) is None or not which(entry)
            ):
                return False
            self.path(notebook_path, ".runs").unlink(missing_ok=True)
            self.path(notebook_path).unlink(missing_ok=True)
            return True

    def _take_epoch(self, notebook_path: Path, entry: E, epoch: str) -> bool | None:
        """Before a record of ``epoch`` is added to ``entry`` (under the lock): ``None`` when
        it is not to be recorded, else whether ``entry`` changed (it is stored even when the
        record is not). Here a record counts only on its entry's epoch (another kernel's runs
        count for nothing)."""
        return None if entry.epoch != epoch else False

    def _append(self, notebook_path: Path, epoch: str, add: Callable[[E], int]) -> int:
        """``add`` (which returns the ``seq`` it handed out, ``-1`` for nothing recorded) on
        the entry, taken to ``epoch`` (:meth:`_take_epoch`); ``-1`` without an entry."""
        with self.locked(notebook_path):
            entry = self._entry(notebook_path)
            changed = None if entry is None else self._take_epoch(notebook_path, entry, epoch)
            if entry is None or changed is None:
                return -1
            assigned = add(entry)
            if changed or assigned >= 0:
                self._store(notebook_path, entry)
            return assigned

    def record_execution(self, notebook_path: Path, record: dict[str, Any]) -> int:
        """Append one run (``key``, ``rev``, ``epoch``, ``parents``, ``ok``, ``interrupted``)
        to the execution log of the kernel it ran on; returns its ``seq`` (set here, growing
        across processes), ``-1`` when it is not recorded (no entry, another kernel's, or the
        log cannot be written: the cell reads as not run, never as fresh).

        The log is its own append-only file (:mod:`~jupyter_jcli.kernels._log_file`), so a
        record costs the same whatever the log holds."""
        file = self.path(notebook_path, ".runs")

        def add(entry: E) -> int:
            seq = entry.seq + 1
            try:
                entry.runs_compacted = append_execution(
                    file, {**record, "seq": seq}, compacted_size=entry.runs_compacted,
                    durable=self.durable,
                )  # fmt: skip
            except OSError:
                return -1
            entry.seq = seq
            return seq

        return self._append(notebook_path, str(record["epoch"]), add)

    def executions(self, notebook_path: Path) -> list[dict[str, Any]]:
        """The execution log of the notebook's kernel (its epoch's latest run per cell,
        oldest first); ``[]`` without an entry."""
        entry = self.read(notebook_path)
        if entry is None or entry.epoch is None:
            return []
        return read_executions(self.path(notebook_path, ".runs"), entry.epoch)

    def record_change(self, notebook_path: Path, change: dict[str, Any]) -> int:
        """Append one run of code outside the cells (``epoch``, ``names``: a list or
        ``None`` for any name, ``cause``) to the entry of the kernel it ran on (kept as
        :func:`add_change` says); returns its ``seq``, from the same counter as
        :meth:`record_execution` (so it orders against the cells' runs across processes),
        ``-1`` as there."""
        return self._append(
            notebook_path, str(change["epoch"]), lambda entry: add_change(entry, change)
        )

    def record_interrupt(
        self, notebook_path: Path, epoch: str | None, who: str, reason: str
    ) -> None:
        """Note that ``who`` (this process: its command line is recorded too) asks the
        kernel of ``epoch`` (``None``: the one the entry names) to stop its running request
        (``reason``: ``kernel_interrupted``, ``kernel_restarted`` or ``kernel_shutdown``),
        before the request is sent, so the process running the cell can tell an interrupt
        from a ``KeyboardInterrupt`` of its own and say who asked (:meth:`interrupt_since`)."""
        command = process_command()

        def change(entry: E) -> None:
            if entry.epoch is not None:
                entry.interrupt = {
                    "epoch": entry.epoch, "who": who, "command": command, "reason": reason,
                    "at": time.time(),
                }  # fmt: skip

        self.update(notebook_path, change, epoch=epoch)

    def interrupt_since(
        self, notebook_path: Path, epoch: str, since: float
    ) -> dict[str, Any] | None:
        """The stop recorded for the kernel of ``epoch`` at or after ``since`` (Unix time,
        s), else ``None``."""
        entry = self._entry(notebook_path)
        return asked_since(entry.interrupt if entry is not None else None, epoch, since)

    def holds(self, notebook_path: Path) -> bool:
        """Whether they keep the notebook's runs: it has an entry with an epoch."""
        return self.read(notebook_path) is not None

    def set_busy(
        self,
        notebook_path: Path,
        epoch: str,
        busy: dict[str, Any] | None,
        *,
        of: int | None = None,
    ) -> None:
        """Note what this process runs on the kernel of ``epoch`` (``busy``:
        :func:`~jupyter_jcli.kernels._busy.busy_record`) or, with ``None``, that it runs
        nothing, as :func:`replace_busy` says (``of``: the process whose record is cleared,
        default this one); nothing when the entry is another kernel's."""
        owner = own_pid() if of is None else of

        def change(entry: E) -> None:
            replace_busy(entry, busy, owner)

        self.update(notebook_path, change, epoch=epoch)

    def running(self, notebook_path: Path, epoch: str) -> dict[str, Any] | None:
        """What a process of ours runs on the kernel of ``epoch`` (its ``busy`` record:
        :func:`~jupyter_jcli.kernels._busy.busy_facts`), else ``None``."""
        from jupyter_jcli.kernels._busy import busy_facts

        entry = self.read(notebook_path)
        return busy_facts(entry) if entry is not None and entry.epoch == epoch else None
