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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, get_args

from jupyter_jcli.kernels._types import AskedStop, InterruptReason

__all__ = [
    "MAX_CHANGES",
    "KernelRecords",
    "RecordsEntry",
    "add_change",
    "asked_since",
    "asked_stop",
]

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
