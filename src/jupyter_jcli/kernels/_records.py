"""The records a kernel shares with every process of ours on it: one protocol, three stores.

A notebook's kernel is one thing to every process that runs cells on it (each ``j-cli``
command, ``jupyter-mcp``), so what ran on it, what code outside the cells changed and which
stop another process asked for are kept outside any one process. :class:`KernelRecords` is
that keeping, whatever holds it:

- :class:`~jupyter_jcli.kernels.KernelRegistry`: the local registry's files (a kernel this
  machine runs, joined through its connection file);
- :class:`~jupyter_jcli.kernels.ServerLedger`: the ledger of a Jupyter Server's kernels;
- :class:`~jupyter_jcli.kernels.testing.MemoryRecords`: in memory, for tests (two objects on
  one ``MemoryRecords`` stand for two processes).

A :class:`~jupyter_jcli.kernels.KernelPool` owns its records (``pool.records``, ``None`` for
kernels of this process alone); its kernels read stops asked elsewhere from them and the
workbench keeps its run log in them. Run and change records have the registry's shapes
(:meth:`~jupyter_jcli.kernels.KernelRegistry.record_run`,
:meth:`~jupyter_jcli.kernels.KernelRegistry.record_change`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

__all__ = ["KernelRecords", "RecordsEntry"]


class RecordsEntry(Protocol):
    """What a records entry says about the notebook's kernel (the registry's
    :class:`~jupyter_jcli.kernels.KernelEntry`, the ledger's ``LedgerEntry``)."""

    @property
    def epoch(self) -> str | None:
        """The epoch the records are of."""
        ...

    @property
    def seq(self) -> int:
        """The last sequence number handed out (orders records across processes)."""
        ...

    @property
    def changes(self) -> list[dict[str, Any]]:
        """Code run outside the cells on :attr:`epoch`, oldest first."""
        ...


class KernelRecords(Protocol):
    """The records of the kernels of one place (module docstring). Every method is bounded
    (each store's lock has a timeout) and says nothing new to a kernel."""

    def holds(self, notebook_path: Path) -> bool:
        """Whether these records keep the notebook's runs now; ``False``: the process
        that runs the kernel keeps them (a server kernel without a ledger entry)."""
        ...

    def read(self, notebook_path: Path) -> RecordsEntry | None:
        """The notebook's entry, ``None`` without one."""
        ...

    def runs(self, notebook_path: Path) -> list[dict[str, Any]]:
        """The latest run per cell on the entry's epoch, oldest first."""
        ...

    def record_run(self, notebook_path: Path, record: dict[str, Any]) -> int:
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
