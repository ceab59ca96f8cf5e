"""What a notebook's kernel is busy with, as its records keep it (the ``busy`` of a
:class:`~jupyter_jcli.kernels._records.RecordsFolder` entry: the registry's for a kernel of
this machine, the ledger's for a Jupyter Server kernel) and as ``KERNEL_BUSY`` tells another
process that wants it: the cell (or inline code), the command running it, its process id and
since when; and the policy around it: taking the notebook's execution lock
(:func:`take_exec`), refusing to queue behind code a killed command left running
(:func:`check_leftover`). Stops asked elsewhere are in the kernel's records
(:class:`~jupyter_jcli.kernels.KernelRecords`)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._config import STOP_WAIT
from jupyter_jcli.kernels._entry import (
    KernelEntry,
    own_pid,
    pid_alive,
    process_command,
    process_name,
    user_pid,
)

if TYPE_CHECKING:
    from jupyter_jcli.kernels._flock import ExecLock
    from jupyter_jcli.kernels._records import RecordsFolder
    from jupyter_jcli.kernels._registry import KernelRegistry

__all__ = [
    "EXEC_POLL",
    "LEFTOVER_PROBE",
    "BusyHolder",
    "ShellProbe",
    "busy_error",
    "busy_facts",
    "busy_record",
    "check_leftover",
    "command_words",
    "interrupt_registered",
    "left_running",
    "leftover_cause",
    "running_words",
    "stop_words",
    "take_exec",
]

EXEC_POLL = 0.05
"""Seconds between two tries of the execution lock while another process holds it."""
LEFTOVER_PROBE = 3.0
"""Seconds, at least, a command gives the kernel to answer on its shell when its records
say a command that ended (killed) was running code on it (:func:`check_leftover`)."""


class BusyHolder(Protocol):
    """What keeps a ``busy`` record (:func:`busy_record`, ``None``: nothing runs): a
    registry entry, a ledger entry, the ledger's facts of a server session."""

    @property
    def busy(self) -> dict[str, Any] | None: ...


@runtime_checkable
class ShellProbe(Protocol):
    """A backend that can tell whether its kernel's shell is free (:func:`check_leftover`):
    the registry's, a Jupyter Server's."""

    async def shell_free(self, timeout: float) -> bool:
        """Whether the kernel's shell channel serves a ``kernel_info`` request within
        ``timeout`` s (it serves one request at a time: a kernel still running code
        answers once that code ended); ``True`` as well when the kernel is gone."""
        ...


def busy_record(cell: str | None) -> dict[str, Any]:
    """The ``busy`` record of this process running ``cell`` (``None``: inline code)."""
    return {
        "who": process_name(),
        "cell": cell,
        "since": time.time(),
        "pid": own_pid(),
        "command": process_command(),
    }


def command_words(command: str | None, who: str | None) -> str:
    """Another command named for a person: its command line when recorded, else its program
    (``who``: :func:`process_name`), with its pid and whether it has ended since:
    ```j-cli kernel interrupt nb.ipynb` (pid 123, ended)``; ``another command`` when
    nothing is known."""
    pid = user_pid(who) if who is not None else None
    name = command or (who.rsplit(" pid ", 1)[0] if who is not None else None)
    if name is None:
        return "another command"
    if pid is None:
        return f"`{name}`"
    return f"`{name}` (pid {pid}{'' if pid_alive(pid) else ', ended'})"


_STOPS = {"kernel_restarted": "a kernel restart", "kernel_shutdown": "a kernel shutdown"}


def stop_words(reason: str, who: str | None, command: str | None) -> str:
    """What ended an execution ``interrupted``, for a person: ``interrupted by `j-cli kernel
    interrupt nb.ipynb` (pid 123, ended)``, ``interrupted by Ctrl-C`` (an interrupt nobody
    else asked for: this command's), ``interrupted by a kernel restart asked by ...``."""
    asker = command_words(command, who) if who is not None or command is not None else None
    if reason not in _STOPS:
        return f"interrupted by {asker or 'Ctrl-C'}"
    return f"interrupted by {_STOPS[reason]}" + (f" asked by {asker}" if asker else "")


def busy_error(
    notebook_path: Path,
    entry: BusyHolder | None,
    busy_wait: float,
    *,
    gone: bool = False,
    server_url: str | None = None,
) -> KernelError:
    """``KERNEL_BUSY`` for a process that waited ``busy_wait`` s for the kernel of ``entry``;
    ``gone``: the process that ran the code has ended (killed) and the kernel still runs it;
    ``server_url``: the Jupyter Server the kernel runs on (the interrupt the message suggests
    names it).

    Its details: ``notebook_path``, ``running_cell`` (``None`` for inline code or when
    unknown), ``running`` (``"cell NAME"``, ``"inline code"``, or ``None`` when the registry
    does not say), ``busy_by`` (who, :func:`process_name`), ``busy_pid``, ``busy_command``,
    ``busy_since`` (ISO 8601 UTC), ``busy_wait_s``, ``busy_gone``. With no record of what
    runs (``entry`` ``None``: no registered kernel, or a server kernel's lock) ``busy_by`` is
    ``"another process"``."""
    facts = busy_facts(entry) or {"busy_by": "another process"}
    command, pid, stamp = facts.get("busy_command"), facts.get("busy_pid"), facts.get("busy_since")
    what, by = running_words(facts), facts.get("busy_command_words", "another command")
    where = f" --server-url {server_url}" if server_url else ""
    interrupt = f"`j-cli kernel interrupt {notebook_path}{where}`"
    if gone:
        message = (
            f"the {what} that {by} ran is still running on this "
            f"notebook's kernel{f' (since {stamp})' if stamp else ''}: that command ended "
            f"before its code did. Stop the code with {interrupt}, or wait for it to end and "
            "ask again"
        )
    else:
        parts = (
            command, f"pid {pid}" if isinstance(pid, int) else None, stamp and f"since {stamp}"
        )  # fmt: skip
        named = ", ".join(part for part in parts if part)
        message = (
            f"another process is running {what} on this notebook's kernel"
            + (f" ({named})" if named else "")
            + f"; wait for it, or interrupt it ({interrupt})"
        )
    return KernelError(
        ErrorCode.KERNEL_BUSY,
        message,
        {
            "notebook_path": str(notebook_path),
            "running_cell": facts.get("running_cell"),
            "running": facts.get("running"),
            "busy_by": facts.get("busy_by"),
            "busy_pid": pid,
            "busy_command": command,
            "busy_since": stamp,
            "busy_wait_s": busy_wait,
            "busy_gone": gone,
        },
    )


def left_running(busy: dict[str, Any] | None) -> bool:
    """Whether ``busy`` (a :func:`busy_record`) is the record of another process that has
    ended (killed while its code ran: that code may still run on the kernel)."""
    pid = (busy or {}).get("pid")
    return isinstance(pid, int) and pid != own_pid() and not pid_alive(pid)


def busy_facts(entry: BusyHolder | None) -> dict[str, Any] | None:
    """What the records say ``entry``'s kernel is busy with, ``None`` when they record
    nothing running: ``running_cell`` (``None`` for inline code), ``running`` (``"cell
    NAME"`` or ``"inline code"``), ``busy_by`` (who, :func:`process_name`), ``busy_pid``,
    ``busy_command``, ``busy_since`` (ISO 8601 UTC), ``busy_gone`` (the command that runs it
    has ended: a killed command left its code running) and ``busy_command_words``
    (:func:`command_words`)."""
    busy = entry.busy if entry is not None else None
    if not busy:
        return None
    who, cell, since, pid = busy.get("who"), busy.get("cell"), busy.get("since"), busy.get("pid")
    who = who if isinstance(who, str) else None
    if not isinstance(pid, int) and who is not None:
        pid = user_pid(who)
    pid = pid if isinstance(pid, int) else None
    command = busy.get("command") if isinstance(busy.get("command"), str) else None
    stamp = (
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(since))
        if isinstance(since, (int, float))
        else None
    )
    return {
        "running_cell": cell if isinstance(cell, str) else None,
        "running": f"cell {cell}" if isinstance(cell, str) else "inline code",
        "busy_by": who,
        "busy_pid": pid,
        "busy_command": command,
        "busy_since": stamp,
        "busy_gone": left_running({"pid": pid}),
        "busy_command_words": command_words(command, who),
    }


def running_words(facts: Mapping[str, Any]) -> str:
    """What runs, for a sentence (``facts``: :func:`busy_facts`): ``cell `NAME``` (the name
    in backticks, as text names cells), ``inline code``, or ``cells`` when unknown."""
    cell = facts.get("running_cell")
    return f"cell `{cell}`" if isinstance(cell, str) else str(facts.get("running") or "cells")


def leftover_cause(facts: dict[str, Any]) -> str:
    """Why every cell run before is stale once the command running code on the kernel
    (``facts``: :func:`busy_facts`) ended before its code: nobody knows what it did."""
    by, what = facts["busy_command_words"], facts["running"]
    return f"{by} ended while its {what} ran on the kernel: what that code did is unknown"


def interrupt_registered(entry: KernelEntry) -> None:
    """Ask the supervisor of ``entry``'s kernel to interrupt it.

    Raises:
        KernelError: ``KERNEL_NOT_RUNNING`` when the supervisor is gone.
    """
    pid = entry.supervisor_pid
    if pid is None or not pid_alive(pid):
        raise KernelError(
            ErrorCode.KERNEL_NOT_RUNNING,
            "the kernel's supervisor is gone",
            {"notebook_path": entry.notebook_path},
        )
    try:
        os.kill(pid, signal.SIGUSR1)
    except OSError as exc:
        raise KernelError(
            ErrorCode.KERNEL_NOT_RUNNING,
            f"interrupting the kernel failed: {exc}",
            {"notebook_path": entry.notebook_path},
        ) from exc


async def take_exec(
    lock: ExecLock,
    registry: KernelRegistry,
    notebook_path: Path,
    busy_wait: float,
    records: RecordsFolder[Any] | None = None,
) -> None:
    """Take the notebook's execution lock within ``busy_wait`` s, polling every
    :data:`EXEC_POLL` s; a kernel being stopped extends the wait by
    :data:`~jupyter_jcli.kernels.STOP_WAIT` once (its holder lets it go as it stops).

    ``records``: the kernel's own records when they are not the registry's (a Jupyter
    Server's ledger): what runs is read there for the refusal.

    Raises:
        KernelError: ``KERNEL_BUSY`` (its details: :func:`busy_error`: what runs, who runs
            it, since when, from the registry's entry or ``records``).
    """
    import anyio

    deadline = time.monotonic() + max(busy_wait, 0.0)
    extended = False
    while not lock.try_acquire():
        if time.monotonic() >= deadline:
            entry = registry.read(notebook_path)
            if not extended and entry is not None and entry.state == "stopping":
                extended = True
                deadline = time.monotonic() + STOP_WAIT
                continue
            held = records.read(notebook_path) if records is not None else None
            holder = held if held is not None and held.busy else entry
            server_url = records.server_url if records is not None else None
            raise busy_error(notebook_path, holder, busy_wait, server_url=server_url)
        await anyio.sleep(EXEC_POLL)


async def check_leftover(
    records: RecordsFolder[Any],
    notebook_path: Path,
    epoch: str,
    backend: ShellProbe,
    busy_wait: float,
) -> None:
    """Refuse to queue code behind the code of a command that ended (killed, ``kill -9``)
    while it ran on the kernel of ``epoch``: its records (the registry's, a Jupyter Server's
    ledger) still hold that command's ``busy`` record.

    Its code may have run on (a kernel outlives a command): what it did is recorded once in
    the execution log as a change of any name (every cell run before reads ``stale``, never fresh,
    with that cause). Then the kernel is asked on its shell (:meth:`ShellProbe.shell_free`,
    within ``busy_wait`` s and at least :data:`LEFTOVER_PROBE` s): when it answers, that code
    has ended and its record is dropped; else ``KERNEL_BUSY`` (``busy_gone``), naming the
    command and how to stop its code, with nothing sent to the kernel but the probe.
    """
    entry = records.read(notebook_path)
    busy = entry.busy if entry is not None else None
    if entry is None or entry.epoch != epoch or busy is None or not left_running(busy):
        return
    pid = busy["pid"]
    if not busy.get("noted"):
        facts = busy_facts(entry)
        if facts is None:  # not reached: ``busy`` is a record with a pid
            return
        cause = leftover_cause(facts)
        with contextlib.suppress(KernelError):
            records.record_change(notebook_path, {"epoch": epoch, "names": None, "cause": cause})
            records.set_busy(notebook_path, epoch, {**busy, "noted": True}, of=pid)
    if await backend.shell_free(max(busy_wait, LEFTOVER_PROBE)):
        with contextlib.suppress(KernelError):
            records.set_busy(notebook_path, epoch, None, of=pid)
        return
    raise busy_error(notebook_path, entry, busy_wait, gone=True, server_url=records.server_url)
