"""The execution log of a notebook's Jupyter Server kernel, kept between our processes.

A server kernel outlives the command that ran cells on it (``j-cli kernel start --server-url``,
``j-cli run --keep``, a person's JupyterLab session), so what ran on it must too: else every
command joins a kernel with an unknown history and ``j-cli run --stale`` re-runs everything.
The ledger keeps, per (server, notebook) under ``<registry_dir>/server/``, the kernel id, the
epoch, the runs and the code run outside the cells in the registry's shapes
(:meth:`~jupyter_jcli.kernels.KernelRegistry.record_execution`), so
:class:`~jupyter_jcli.workbench.SharedExecutionLog` reads either::

    <key>.json   the entry (:class:`LedgerEntry`), replaced atomically
    <key>.runs   its epoch's execution log, append-only JSON Lines (:mod:`._run_file`)
    <key>.lock   flock'ed for each read-modify-write of the two

The execution log is emptied whenever the entry starts another epoch and removed with the entry,
before the entry is written, so a crash in between leaves fewer runs, never runs of an
earlier epoch. An earlier version's entry (runs inside it, under ``runs``) is read without
them: not run is the safe reading.

Trust: a process of ours leaving the kernel notes a **witness** (:func:`witness`): the
kernel's ``last_activity`` as the server reports it (Jupyter Server moves it on every
execution and output, whoever asked, not on a client's ``kernel_info``) and the kernel
process it talked to. The next process joining the same kernel id adopts the ledger's epoch
only when it finds the same witness; anything else (another kernel, activity since, no
witness because one of ours still runs on it or left it busy) starts the ledger afresh, so
a cell is never fresh on state it may not have.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_jcli.kernels._entry import process_command
from jupyter_jcli.kernels._log_file import (
    forget_executions,
    log_execution,
    read_executions,
    remove_executions,
    replace_file,
)
from jupyter_jcli.kernels._records import add_change, asked_since
from jupyter_jcli.kernels._registry import LOCK_TIMEOUT, KernelRegistry, registry_dir

__all__ = ["LedgerEntry", "ServerLedger", "witness"]


def witness(last_activity: object, process: str | None) -> str | None:
    """What says a server kernel is as we left it: its ``last_activity`` and the kernel
    process (the ``header.session`` its messages carry: a restart makes a new process at
    once, while ``last_activity`` moves only when the new process first speaks); ``None``
    when either is unknown."""
    if not isinstance(last_activity, str) or not last_activity or not process:
        return None
    return f"{last_activity} {process}"


@dataclass
class LedgerEntry:
    """One notebook's server kernel as the ledger knows it.

    Attributes:
        kernel_id: the server's kernel id.
        epoch: the epoch the runs belong to (``None``: none recorded since the ledger started
            afresh).
        seq: the last sequence number handed out (orders runs across processes).
        runs_compacted: the size in bytes of the execution log file (``<key>.runs``, the latest
            run per cell on ``epoch``, read with :meth:`ServerLedger.runs`) after its last
            compaction (:mod:`~jupyter_jcli.kernels._log_file`).
        changes: code run outside the cells on ``epoch`` (the registry's change shape).
        witness: the kernel's ``last_activity`` when the last process of ours left it;
            ``None`` while one of ours may still run on it.
        interrupt: the last stop another command asked of the kernel of ``epoch``
            (``{"epoch", "who", "reason", "at"}``, as the registry's
            :meth:`~jupyter_jcli.kernels.KernelRegistry.record_interrupt`).
    """

    kernel_id: str
    epoch: str | None = None
    seq: int = 0
    runs_compacted: int = 0
    changes: list[dict[str, Any]] = field(default_factory=list)
    witness: str | None = None
    interrupt: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: object) -> LedgerEntry | None:
        """The entry stored as ``data``, ``None`` when it is not one (an earlier version's
        ``runs`` inside the entry are ignored: see the module docstring)."""
        if not isinstance(data, dict) or not isinstance(data.get("kernel_id"), str):
            return None
        epoch, witness = data.get("epoch"), data.get("witness")
        changes, seq = data.get("changes"), data.get("seq")
        if not isinstance(changes, list) or type(seq) is not int:
            return None
        compacted = data.get("runs_compacted")
        return cls(
            kernel_id=data["kernel_id"],
            epoch=epoch if isinstance(epoch, str) else None,
            seq=seq,
            runs_compacted=compacted if type(compacted) is int and compacted >= 0 else 0,
            changes=[c for c in changes if isinstance(c, dict)],
            witness=witness if isinstance(witness, str) else None,
            interrupt=data["interrupt"] if isinstance(data.get("interrupt"), dict) else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """The stored form (JSON-ready): every field, by its name."""
        return dataclasses.asdict(self)


class ServerLedger:
    """The ledger files of one Jupyter Server (see the module docstring).

    Every read-modify-write holds the entry's lock (bounded by
    :data:`~jupyter_jcli.kernels._registry.LOCK_TIMEOUT`); the entry is replaced atomically,
    the execution log appended to (:mod:`~jupyter_jcli.kernels._log_file`).

    Args:
        server_url: the server's base URL (as :class:`~jupyter_jcli.kernels.ServerConfig`).
        root: the folder; default ``server`` in :func:`~jupyter_jcli.kernels.registry_dir`.
    """

    def __init__(self, server_url: str, root: Path | None = None) -> None:
        self.server_url = server_url
        self.root = root if root is not None else registry_dir() / "server"
        self._files = KernelRegistry(self.root)  # for its locking of a key's files

    def path(self, notebook_path: Path, suffix: str = ".json") -> Path:
        """``<root>/<key><suffix>``, the key a digest of the server URL and notebook path."""
        return self.root / f"{self._key(notebook_path)}{suffix}"

    def _key(self, notebook_path: Path) -> str:
        name = f"{self.server_url}\0{notebook_path.resolve()}".encode()
        return hashlib.sha256(name).hexdigest()[:24]

    def _locked(self, notebook_path: Path) -> contextlib.AbstractContextManager[None]:
        """The registry's lock on the entry (``KERNEL_BUSY`` after ``LOCK_TIMEOUT``); with no
        entry left, the key's other files go on the way out."""
        key = self._key(notebook_path)
        return self._files.locked_key(key, timeout=LOCK_TIMEOUT, name=notebook_path)

    def _read(self, notebook_path: Path) -> LedgerEntry | None:
        try:
            return LedgerEntry.from_dict(json.loads(self.path(notebook_path).read_bytes()))
        except (OSError, ValueError):
            return None

    def _write(self, notebook_path: Path, entry: LedgerEntry) -> None:
        body = json.dumps(entry.to_dict(), sort_keys=True).encode("utf-8")
        replace_file(self.path(notebook_path), body, durable=True)

    def _update(self, notebook_path: Path, change: Callable[[LedgerEntry], None]) -> None:
        with self._locked(notebook_path):
            entry = self._read(notebook_path)
            if entry is not None:
                change(entry)
                self._write(notebook_path, entry)

    def _new_epoch(self, notebook_path: Path, entry: LedgerEntry, epoch: str | None) -> None:
        """``entry`` with no runs: ``epoch``'s and no other's (under the lock, before the
        entry is written: see the module docstring)."""
        forget_executions(self.path(notebook_path, ".runs"), entry)
        entry.epoch, entry.changes = epoch, []

    def read(self, notebook_path: Path) -> LedgerEntry | None:
        """The entry when it has an epoch (runs to count), else ``None``."""
        entry = self._read(notebook_path)
        return entry if entry is not None and entry.epoch is not None else None

    def adopt(self, notebook_path: Path, kernel_id: str, seen: str | None, epoch: str) -> str:
        """The epoch whose runs count on ``kernel_id`` as the server shows it now (``seen``,
        its :func:`witness`), or ``epoch`` after starting the entry afresh with it (see the
        module docstring). The witness is used up: until a process of ours leaves the kernel
        again, another one joining trusts nothing."""
        with self._locked(notebook_path):
            entry = self._read(notebook_path)
            trusted = (
                entry is not None
                and entry.kernel_id == kernel_id
                and entry.witness is not None
                and entry.witness == seen
                and entry.epoch is not None
            )
            if entry is None or not trusted:
                entry = LedgerEntry(kernel_id=kernel_id, seq=entry.seq if entry else 0)
                self._new_epoch(notebook_path, entry, epoch)
            entry.witness = None
            self._write(notebook_path, entry)
            return entry.epoch or epoch

    def leave(self, notebook_path: Path, kernel_id: str, epoch: str, last_activity: str) -> None:
        """Note the witness: we leave ``kernel_id``, whose runs are those of ``epoch``, with
        the server showing ``last_activity``. Nothing when the entry now holds another
        kernel's or another epoch's runs (a process of ours ran there since)."""

        def change(entry: LedgerEntry) -> None:
            if entry.kernel_id == kernel_id and entry.epoch in (None, epoch):
                entry.epoch, entry.witness = epoch, last_activity

        self._update(notebook_path, change)

    def start_afresh(self, notebook_path: Path) -> None:
        """Forget the runs (the kernel restarted: none of them holds any more)."""

        def change(entry: LedgerEntry) -> None:
            self._new_epoch(notebook_path, entry, None)
            entry.witness = None

        self._update(notebook_path, change)

    def record_interrupt(
        self, notebook_path: Path, epoch: str | None, who: str, reason: str
    ) -> None:
        """Note that ``who`` asks the notebook's kernel of ``epoch`` (``None``: the one
        the ledger names) to stop its running request (``reason``: ``kernel_interrupted``,
        ``kernel_restarted``, ``kernel_shutdown``), before asking the server, so the process
        running the cell ends it ``interrupted`` and names who asked
        (:meth:`interrupt_since`), as for a local kernel."""

        command = process_command()

        def change(entry: LedgerEntry) -> None:
            if entry.epoch is not None and epoch in (None, entry.epoch):
                at = time.time()
                entry.interrupt = {
                    "epoch": entry.epoch, "who": who, "command": command, "reason": reason,
                    "at": at,
                }  # fmt: skip

        self._update(notebook_path, change)

    def interrupt_since(
        self, notebook_path: Path, epoch: str, since: float
    ) -> dict[str, Any] | None:
        """The stop recorded for the kernel of ``epoch`` at or after ``since`` (Unix time,
        s), else ``None``."""
        entry = self._read(notebook_path)
        return asked_since(entry.interrupt if entry is not None else None, epoch, since)

    def holds(self, notebook_path: Path) -> bool:
        """Whether the ledger keeps the notebook's runs: it has an entry (a server session
        every command finds); else the process running the kernel keeps them (a kernel
        gateway's kernel lives only as long as that process)."""
        return self.read(notebook_path) is not None

    def running(self, notebook_path: Path, epoch: str) -> dict[str, Any] | None:
        """``None``: the ledger does not record what runs (the server runs it)."""
        return None

    def forget(self, notebook_path: Path, kernel_id: str | None = None) -> None:
        """Remove the entry and its execution log (the kernel was stopped); with ``kernel_id``,
        only an entry of that kernel (not one a newer kernel of the notebook wrote)."""
        with self._locked(notebook_path):
            entry = self._read(notebook_path) if kernel_id is not None else None
            if kernel_id is not None and (entry is None or entry.kernel_id != kernel_id):
                return
            remove_executions(self.path(notebook_path, ".runs"))  # first: see the module docstring
            with contextlib.suppress(FileNotFoundError):
                self.path(notebook_path).unlink()

    def _append(self, notebook_path: Path, epoch: str, add: Callable[[LedgerEntry], int]) -> int:
        """``add`` (which returns the ``seq`` it handed out, ``-1`` for nothing recorded) on
        the entry of ``epoch``, the kernel's newest: an entry of another epoch starts afresh
        with it (older runs stop counting). ``-1`` without an entry."""
        with self._locked(notebook_path):
            entry = self._read(notebook_path)
            if entry is None:
                return -1
            afresh = entry.epoch != epoch
            if afresh:
                self._new_epoch(notebook_path, entry, epoch)
            assigned = add(entry)
            if afresh or assigned >= 0:
                entry.witness = None
                self._write(notebook_path, entry)
            return assigned

    def executions(self, notebook_path: Path) -> list[dict[str, Any]]:
        """The execution log of the notebook's server kernel (the registry's shape: its epoch's
        latest run per cell, oldest first); ``[]`` without an entry."""
        entry = self.read(notebook_path)
        if entry is None or entry.epoch is None:
            return []
        return read_executions(self.path(notebook_path, ".runs"), entry.epoch)

    def record_execution(self, notebook_path: Path, record: dict[str, Any]) -> int:
        """Append one run (the registry's shape) to the execution log; returns its ``seq``, ``-1``
        when the notebook has no entry (no server kernel of ours was joined) or the log
        cannot be written (the cell reads as not run)."""
        file = self.path(notebook_path, ".runs")
        return self._append(
            notebook_path, str(record["epoch"]), lambda entry: log_execution(file, entry, record)
        )

    def record_change(self, notebook_path: Path, change: dict[str, Any]) -> int:
        """Append one run of code outside the cells (the registry's shape and trimming);
        returns its ``seq``, ``-1`` without an entry."""
        return self._append(
            notebook_path, str(change["epoch"]), lambda entry: add_change(entry, change)
        )
