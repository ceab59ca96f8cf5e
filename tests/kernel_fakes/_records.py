"""In-memory kernel records for tests: the shared path without a registry folder, a
supervisor or a server (:class:`MemoryRecords`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_jcli.kernels._records import add_change, asked_since

__all__ = ["MemoryEntry", "MemoryRecords"]


@dataclass
class MemoryEntry:
    """One notebook's kernel as :class:`MemoryRecords` keeps it (the registry's fields)."""

    epoch: str
    seq: int = 0
    changes: list[dict[str, Any]] = field(default_factory=list)
    latest: dict[str, dict[str, Any]] = field(default_factory=dict)
    interrupt: dict[str, Any] | None = None
    running: dict[str, Any] | None = None


class MemoryRecords:
    """:class:`~jupyter_jcli.kernels.KernelRecords` in memory: pools (or workbenches) given
    one ``MemoryRecords`` stand for processes of ours on one kernel (with a fake backend of
    one ``origin.epoch``, so every one of them runs the same kernel epoch).

    A record for another epoch than the entry's starts the entry afresh (a new kernel), as
    the server's ledger does; :meth:`start` does so explicitly. ``running`` is what
    :meth:`running` reports (set it to stand for another process's cell)."""

    def __init__(self) -> None:
        self.entries: dict[Path, MemoryEntry] = {}

    def start(self, notebook_path: Path, epoch: str) -> MemoryEntry:
        """A new entry for the kernel of ``epoch`` (earlier records stop counting)."""
        entry = self.entries[Path(notebook_path).resolve()] = MemoryEntry(epoch)
        return entry

    def _of(self, notebook_path: Path, epoch: str) -> MemoryEntry:
        entry = self.entries.get(notebook_path)
        return (
            entry
            if entry is not None and entry.epoch == epoch
            else self.start(notebook_path, epoch)
        )

    def holds(self, notebook_path: Path) -> bool:
        """Always ``True``."""
        return True

    def read(self, notebook_path: Path) -> MemoryEntry | None:
        """The notebook's entry, ``None`` without one."""
        return self.entries.get(notebook_path)

    def executions(self, notebook_path: Path) -> list[dict[str, Any]]:
        """The latest run per cell on the entry's epoch, oldest first."""
        entry = self.entries.get(notebook_path)
        return [] if entry is None else sorted(entry.latest.values(), key=lambda r: r["seq"])

    def record_execution(self, notebook_path: Path, record: dict[str, Any]) -> int:
        """Keep ``record`` as its cell's latest run; its ``seq``."""
        entry = self._of(notebook_path, str(record["epoch"]))
        entry.seq += 1
        entry.latest[str(record["key"])] = {**record, "seq": entry.seq}
        return entry.seq

    def record_change(self, notebook_path: Path, change: dict[str, Any]) -> int:
        """Keep one run of code outside the cells; its ``seq``."""
        return add_change(self._of(notebook_path, str(change["epoch"])), change)

    def record_interrupt(self, notebook_path: Path, epoch: str, who: str, reason: str) -> None:
        """Note the stop ``who`` asks of the kernel of ``epoch`` (nothing for another)."""
        entry = self.entries.get(notebook_path)
        if entry is not None and entry.epoch == epoch:
            entry.interrupt = {
                "epoch": epoch, "who": who, "command": None, "reason": reason, "at": time.time()
            }  # fmt: skip

    def interrupt_since(
        self, notebook_path: Path, epoch: str, since: float
    ) -> dict[str, Any] | None:
        """The stop recorded for the kernel of ``epoch`` at or after ``since``."""
        entry = self.entries.get(notebook_path)
        return asked_since(entry.interrupt if entry is not None else None, epoch, since)

    def running(self, notebook_path: Path, epoch: str) -> dict[str, Any] | None:
        """The entry's ``running`` facts for the kernel of ``epoch``, else ``None``."""
        entry = self.entries.get(notebook_path)
        return entry.running if entry is not None and entry.epoch == epoch else None
