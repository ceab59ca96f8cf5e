"""The registry's notes beside the run log: inline code run on a kernel, stops asked of it by
another process, and kernels that died by themselves.

:class:`RegistryNotes` is a part of :class:`~jupyter_jcli.kernels.KernelRegistry` (which
inherits it): the entry fields ``changes`` and ``interrupt`` (see
:class:`~jupyter_jcli.kernels.KernelEntry`) and the ``<key>.lost`` file, each written under
the entry's lock or atomically, read without one.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, get_args

from jupyter_jcli.kernels._entry import process_command
from jupyter_jcli.kernels._types import AskedStop, InterruptReason

if TYPE_CHECKING:
    from jupyter_jcli.kernels._registry import KernelEntry

__all__ = [
    "LOST_TTL",
    "MAX_CHANGES",
    "RegistryNotes",
    "add_change",
    "asked_since",
    "asked_stop",
]

LOST_TTL = 86_400.0
"""Seconds a ``.lost`` record counts (a kernel started later than that says nothing)."""
MAX_CHANGES = 32
"""Changes of inline code kept per entry (older ones already count through newer ones)."""
_SCHEMA = 1


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


class _Registry(Protocol):
    def path(self, notebook_path: Path, suffix: str) -> Path: ...

    def read(self, notebook_path: Path) -> KernelEntry | None: ...

    def update(
        self, notebook_path: Path, change: Callable[[KernelEntry], None], *, epoch: str | None
    ) -> KernelEntry | None: ...

    def _ensure_root(self) -> None: ...


class RegistryNotes:
    """Notes kept beside a registry entry (module docstring)."""

    def record_change(self: _Registry, notebook_path: Path, change: dict[str, Any]) -> int:
        """Append one run of code outside the cells (``epoch``, ``names``: a list or
        ``None`` for any name, ``cause``) to the log of the kernel it ran on; returns its
        sequence number, from the same counter as :meth:`record_run` (so it orders against
        the cells' runs across processes), ``-1`` when the entry names another kernel.

        The entry keeps the latest :data:`MAX_CHANGES`, and none older than the last change
        that may have written any name (it overwrote everything the older ones did)."""
        assigned = -1

        def apply(entry: KernelEntry) -> None:
            nonlocal assigned
            assigned = add_change(entry, change)

        self.update(notebook_path, apply, epoch=str(change["epoch"]))
        return assigned

    def record_interrupt(
        self: _Registry, notebook_path: Path, epoch: str, who: str, reason: str
    ) -> None:
        """Note that ``who`` (this process: its command line is recorded too) asks the
        kernel of ``epoch`` to stop its running request (``reason``: ``kernel_interrupted``,
        ``kernel_restarted`` or ``kernel_shutdown``), before the request is sent, so the
        process running the cell can tell an interrupt from a ``KeyboardInterrupt`` of its
        own and say who asked (:meth:`interrupt_since`)."""
        command = process_command()

        def apply(entry: KernelEntry) -> None:
            entry.interrupt = {
                "epoch": epoch, "who": who, "command": command, "reason": reason,
                "at": time.time(),
            }  # fmt: skip

        self.update(notebook_path, apply, epoch=epoch)

    def interrupt_since(
        self: _Registry, notebook_path: Path, epoch: str, since: float
    ) -> dict[str, Any] | None:
        """The interrupt request recorded for the kernel of ``epoch`` at or after ``since``
        (Unix time, s), else ``None``."""
        entry = self.read(notebook_path)
        return asked_since(entry.interrupt if entry is not None else None, epoch, since)

    def holds(self: _Registry, notebook_path: Path) -> bool:
        """Always ``True``: the registry keeps every run of its kernels (none without an
        entry: no registered kernel, nothing is fresh)."""
        return True

    def running(self: _Registry, notebook_path: Path, epoch: str) -> dict[str, Any] | None:
        """What another process runs on the registered kernel of ``epoch`` (its ``busy``
        record: :func:`~jupyter_jcli.kernels._shared_busy.busy_facts`), else ``None``."""
        from jupyter_jcli.kernels._shared_busy import busy_facts

        entry = self.read(notebook_path)
        if entry is None or entry.epoch != epoch or entry.state != "busy":
            return None
        return busy_facts(entry)

    def record_lost(
        self: _Registry,
        notebook_path: Path,
        epoch: str,
        *,
        keep: bool = False,
        idle_timeout: float | None = None,
    ) -> None:
        """Note that the kernel of ``epoch`` died without being asked to (its supervisor
        or whoever found its entry dead calls this), in ``<key>.lost``, so the command that
        starts the next kernel for the notebook says the old one was replaced
        (:meth:`take_lost`), and keeps the replacement (with the same ``idle_timeout``) when
        the lost kernel was kept. Best effort: a failure to write loses only that notice."""
        target = self.path(notebook_path, ".lost")
        record: dict[str, Any] = {"schema_version": _SCHEMA, "epoch": epoch, "at": time.time()}
        if keep:
            record.update(keep=True, idle_timeout=idle_timeout)
        data = json.dumps(record)
        with contextlib.suppress(OSError):
            self._ensure_root()
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            tmp.write_text(data, encoding="utf-8")
            os.replace(tmp, target)

    def take_lost(self: _Registry, notebook_path: Path) -> str | None:
        """The epoch :meth:`record_lost` noted for the notebook within :data:`LOST_TTL`
        seconds, else ``None``; the record is removed (one process takes it)."""
        lost = RegistryNotes.take_lost_record(self, notebook_path)
        return lost[0] if lost is not None else None

    def take_lost_record(
        self: _Registry, notebook_path: Path
    ) -> tuple[str, bool, float | None] | None:
        """Like :meth:`take_lost`: the lost kernel's epoch, whether it was kept and its idle
        timeout (``False, None`` for a record written without them)."""
        target = self.path(notebook_path, ".lost")
        claimed = target.with_name(f".{target.name}.{os.getpid()}.taken")
        try:
            os.replace(target, claimed)
        except OSError:
            return None
        try:
            return _lost_record(claimed)
        finally:
            with contextlib.suppress(OSError):
                claimed.unlink()

    def lost_record(self: _Registry, notebook_path: Path) -> tuple[str, bool, float | None] | None:
        """:meth:`take_lost_record` without taking it: the record stays for the command that
        starts the next kernel (a process that ends after its kernel died reads it so)."""
        return _lost_record(self.path(notebook_path, ".lost"))


def _lost_record(path: Path) -> tuple[str, bool, float | None] | None:
    """The ``(epoch, keep, idle_timeout)`` of the ``.lost`` record at ``path`` when it is
    ours and within :data:`LOST_TTL` seconds, else ``None``."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("schema_version") != _SCHEMA:
        return None
    at, epoch = data.get("at"), data.get("epoch")
    if not isinstance(at, (int, float)) or time.time() - at > LOST_TTL:
        return None
    if not isinstance(epoch, str):
        return None
    idle = data.get("idle_timeout")
    idle = float(idle) if isinstance(idle, (int, float)) and idle > 0 else None
    return epoch, data.get("keep") is True, idle
