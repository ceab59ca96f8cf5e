"""The execution log of a notebook's Jupyter Server kernel, kept between our processes.

A server kernel outlives the command that ran cells on it (``j-cli kernel start --server-url``,
``j-cli run --keep``, a person's JupyterLab session), so what ran on it must too: else every
command joins a kernel with an unknown history and ``j-cli run --stale`` re-runs everything.
The ledger keeps, per (server, notebook) under ``<registry_dir>/server/``, the kernel id,
whether a session one of our processes created is kept and the command that created it
(:meth:`ServerLedger.created`; ``j-cli kernel list --server-url`` shows them), the
epoch, the runs and the code run outside the cells in the registry's shapes
(:meth:`~jupyter_jcli.kernels.KernelRegistry.record_execution`), so
:class:`~jupyter_jcli.workbench.SharedExecutionLog` reads either::

    <key>.json   the entry (:class:`LedgerEntry`), replaced atomically
    <key>.runs   its epoch's execution log, append-only JSON Lines (:mod:`._log_file`)
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

Leftover code: while a process of ours runs a cell on the kernel, the entry says so (``busy``,
:func:`~jupyter_jcli.kernels._busy.busy_record`; cleared when its batch ends). A process killed
meanwhile (``kill -9``) leaves no witness but that record, and its code may run on: a process
joining the same kernel process (``kernel_process``, the ``header.session`` of its messages)
then keeps the entry's epoch, so the command that finds the leftover
(:func:`~jupyter_jcli.kernels._busy.check_leftover`) makes every cell run before ``stale``
with its cause (what that code did is unknown) and refuses to queue behind it; any other
kernel process (restarted since) starts the entry afresh, record and all.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_jcli.kernels._busy import left_running
from jupyter_jcli.kernels._entry import pid_alive, process_command
from jupyter_jcli.kernels._log_file import read_executions
from jupyter_jcli.kernels._records import RecordsFolder
from jupyter_jcli.kernels._registry import registry_dir

__all__ = ["LedgerEntry", "ServerLedger", "SessionFacts", "witness"]


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
            run per cell on ``epoch``, read with :meth:`ServerLedger.executions`) after its last
            compaction (:mod:`~jupyter_jcli.kernels._log_file`).
        changes: code run outside the cells on ``epoch`` (the registry's change shape).
        witness: the kernel's ``last_activity`` when the last process of ours left it;
            ``None`` while one of ours may still run on it.
        interrupt: the last stop another command asked of the kernel of ``epoch``
            (``{"epoch", "who", "reason", "at"}``, as the registry's
            :meth:`~jupyter_jcli.kernels.KernelRegistry.record_interrupt`).
        keep: whether the kernel's session outlives the process of ours that created it
            (``False``: created for a run, deleted when that process exits); ``True`` for a
            session none of ours created (we never delete it).
        started_command: the command line of the process of ours that created the session
            (:func:`~jupyter_jcli.kernels._entry.process_command`), ``None`` when none did.
        busy: what a process of ours runs on the kernel
            (:func:`~jupyter_jcli.kernels._busy.busy_record`), ``None`` when nothing.
        kernel_process: the kernel process the last process of ours joined (its messages'
            ``header.session``), ``None`` when unknown (see the module docstring).
    """

    kernel_id: str
    epoch: str | None = None
    seq: int = 0
    runs_compacted: int = 0
    changes: list[dict[str, Any]] = field(default_factory=list)
    witness: str | None = None
    interrupt: dict[str, Any] | None = None
    keep: bool = True
    started_command: str | None = None
    busy: dict[str, Any] | None = None
    kernel_process: str | None = None

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
        compacted, keep = data.get("runs_compacted"), data.get("keep")
        command, busy = data.get("started_command"), data.get("busy")
        process = data.get("kernel_process")
        return cls(
            kernel_id=data["kernel_id"],
            epoch=epoch if isinstance(epoch, str) else None,
            seq=seq,
            runs_compacted=compacted if type(compacted) is int and compacted >= 0 else 0,
            changes=[c for c in changes if isinstance(c, dict)],
            witness=witness if isinstance(witness, str) else None,
            interrupt=data["interrupt"] if isinstance(data.get("interrupt"), dict) else None,
            keep=keep if isinstance(keep, bool) else True,  # an earlier version's: not known
            started_command=command if isinstance(command, str) else None,
            busy=busy if isinstance(busy, dict) else None,
            kernel_process=process if isinstance(process, str) else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """The stored form (JSON-ready): every field, by its name."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class SessionFacts:
    """What the ledger says of a server session's kernel, for a listing
    (:meth:`ServerLedger.facts`; the defaults: a kernel none of ours created or ran on).

    Attributes:
        keep: whether it outlives the process of ours that created it (``True``: kept, or
            created by none of ours).
        started_command: the command line that created it, ``None``: none of ours did.
        epoch: the epoch of its recorded runs while they are trusted
            (:meth:`ServerLedger.trusted_epoch`), else ``None``.
        runs: the cells recorded as run on ``epoch`` (their latest run each), 0 without one.
        busy: what a process of ours runs on it (the entry's ``busy``), ``None`` when nothing.
    """

    keep: bool = True
    started_command: str | None = None
    epoch: str | None = None
    runs: int = 0
    busy: dict[str, Any] | None = None


class ServerLedger(RecordsFolder[LedgerEntry]):
    """The ledger files of one Jupyter Server (see the module docstring).

    Every read-modify-write holds the entry's lock (bounded by
    :data:`~jupyter_jcli.kernels._records.LOCK_TIMEOUT`); the entry is replaced atomically,
    the execution log appended to (:mod:`~jupyter_jcli.kernels._log_file`): the records of a
    :class:`~jupyter_jcli.kernels._records.RecordsFolder`, keyed by the server URL and the
    notebook path. A run or change of another epoch than the entry's starts it afresh with
    that epoch (the kernel's newest: older runs stop counting).

    Args:
        server_url: the server's base URL (as :class:`~jupyter_jcli.kernels.ServerConfig`).
        root: the folder; default ``server`` in :func:`~jupyter_jcli.kernels.registry_dir`.
    """

    def __init__(self, server_url: str, root: Path | None = None) -> None:
        super().__init__(root if root is not None else registry_dir() / "server", f"{server_url}\0")
        self.server_url = server_url

    def _load(self, data: object) -> LedgerEntry | None:
        return LedgerEntry.from_dict(data)

    def _new_epoch(self, notebook_path: Path, entry: LedgerEntry, epoch: str | None) -> None:
        """``entry`` with no runs: ``epoch``'s and no other's (under the lock, before the
        entry is written: see the module docstring)."""
        self.path(notebook_path, ".runs").unlink(missing_ok=True)
        entry.runs_compacted = 0
        entry.epoch, entry.changes = epoch, []

    def _take_epoch(self, notebook_path: Path, entry: LedgerEntry, epoch: str) -> bool | None:
        """A record is ours to keep: the witness goes (one of ours ran on the kernel), and an
        entry of another epoch starts afresh with ``epoch``."""
        entry.witness = None
        if entry.epoch == epoch:
            return False
        self._new_epoch(notebook_path, entry, epoch)
        return True

    def adopt(
        self,
        notebook_path: Path,
        kernel_id: str,
        seen: str | None,
        epoch: str,
        process: str | None = None,
    ) -> str:
        """The epoch whose runs count on ``kernel_id`` as the server shows it now (``seen``,
        its :func:`witness`; ``process``, the kernel process joined), or ``epoch`` after
        starting the entry afresh with it (see the module docstring). The witness is used up:
        until a process of ours leaves the kernel again, another one joining trusts nothing.
        An entry whose ``busy`` record a killed process left on that same kernel process is
        kept (its leftover is judged by :func:`~jupyter_jcli.kernels._busy.check_leftover`)."""
        with self.locked(notebook_path):
            entry = self._entry(notebook_path)
            same = entry if entry is not None and entry.kernel_id == kernel_id else None
            trusted = same is not None and same.epoch is not None and (
                (same.witness is not None and same.witness == seen)
                or (process is not None and same.kernel_process == process
                    and left_running(same.busy))
            )  # fmt: skip
            if entry is None or not trusted:
                entry = LedgerEntry(
                    kernel_id=kernel_id,
                    seq=entry.seq if entry else 0,
                    keep=same.keep if same else True,  # who created this kernel still holds
                    started_command=same.started_command if same else None,
                )
                self._new_epoch(notebook_path, entry, epoch)
            entry.witness, entry.kernel_process = None, process
            self._store(notebook_path, entry)
            return entry.epoch or epoch

    def leave(self, notebook_path: Path, kernel_id: str, epoch: str, last_activity: str) -> None:
        """Note the witness: we leave ``kernel_id``, whose runs are those of ``epoch``, with
        the server showing ``last_activity``. Nothing when the entry now holds another
        kernel's or another epoch's runs (a process of ours ran there since)."""

        def change(entry: LedgerEntry) -> None:
            if entry.kernel_id == kernel_id and entry.epoch in (None, epoch):
                entry.epoch, entry.witness = epoch, last_activity

        self.update(notebook_path, change)

    def trusted_epoch(
        self, notebook_path: Path, kernel_id: str, last_activity: str | None
    ) -> str | None:
        """The epoch whose runs count on ``kernel_id`` for a process that reads without joining
        it (an overview): the entry's, while the server still shows the ``last_activity`` the
        last process of ours left the kernel with (the first part of its :func:`witness`;
        anything run since, a restart's new process included, moves it); else ``None`` (not
        ours, touched since, or one of ours is on it now). Uses nothing up: a process joining
        still checks the whole witness (:meth:`adopt`)."""
        return self._trusted(self.read(notebook_path), kernel_id, last_activity)

    @staticmethod
    def _trusted(
        entry: LedgerEntry | None, kernel_id: str, last_activity: str | None
    ) -> str | None:
        if entry is None or entry.kernel_id != kernel_id or not entry.witness:
            return None
        return entry.epoch if entry.witness.split(" ", 1)[0] == last_activity else None

    def created(self, notebook_path: Path, kernel_id: str, *, keep: bool) -> None:
        """Note that this process created the notebook's session of ``kernel_id``, to be kept
        after it exits or (``keep`` false) deleted then, with its command line
        (:func:`~jupyter_jcli.kernels._entry.process_command`): an entry without runs, whose
        other records a process running cells there starts (:meth:`adopt`)."""
        with self.locked(notebook_path):
            entry = self._entry(notebook_path)
            made = LedgerEntry(kernel_id=kernel_id, seq=entry.seq if entry else 0, keep=keep)
            made.started_command = process_command()
            self._new_epoch(notebook_path, made, None)
            self._store(notebook_path, made)

    def facts(self, notebook_path: Path, kernel_id: str, last_activity: str | None) -> SessionFacts:
        """What the entry says of the notebook's session of ``kernel_id``, whose kernel the
        server shows with ``last_activity`` (:class:`SessionFacts`: the defaults when the
        entry is another kernel's or there is none); reads only. Its epoch (and the runs
        counted on it) is the entry's when the overview would trust it (:meth:`trusted_epoch`)
        or while a process of ours runs code on the kernel (its ``busy`` record names a live
        process), else ``None``."""
        entry = self._entry(notebook_path)
        if entry is None or entry.kernel_id != kernel_id:
            return SessionFacts()
        epoch = self._trusted(entry, kernel_id, last_activity) or _held_epoch(entry)
        runs = read_executions(self.path(notebook_path, ".runs"), epoch) if epoch else []
        return SessionFacts(entry.keep, entry.started_command, epoch, len(runs), entry.busy)

    def start_afresh(self, notebook_path: Path) -> None:
        """Forget the runs (the kernel restarted: none of them holds any more)."""

        def change(entry: LedgerEntry) -> None:
            self._new_epoch(notebook_path, entry, None)
            entry.witness = entry.kernel_process = entry.busy = None

        self.update(notebook_path, change)

    def forget(self, notebook_path: Path, kernel_id: str | None = None) -> None:
        """Remove the entry and its execution log (the kernel was stopped); with ``kernel_id``,
        only an entry of that kernel (not one a newer kernel of the notebook wrote)."""
        self._forget(
            notebook_path, None if kernel_id is None else lambda e: e.kernel_id == kernel_id
        )


def _held_epoch(entry: LedgerEntry) -> str | None:
    """The entry's epoch while a process of ours runs code on its kernel (its ``busy``
    record names a live process: the epoch it adopted and records its runs under), else
    ``None``."""
    pid = (entry.busy or {}).get("pid")
    return entry.epoch if isinstance(pid, int) and pid_alive(pid) else None
