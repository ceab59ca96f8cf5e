"""What a notebook's kernel is busy with, as the registry records it (``KernelEntry.busy``)
and as ``KERNEL_BUSY`` tells another process that wants it: the cell (or inline code), the
command running it, its process id and since when."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._entry import KernelEntry, process_command, process_name, user_pid

__all__ = ["busy_error", "busy_record"]


def busy_record(cell: str | None) -> dict[str, Any]:
    """The ``busy`` record of this process running ``cell`` (``None``: inline code)."""
    return {
        "who": process_name(),
        "cell": cell,
        "since": time.time(),
        "pid": os.getpid(),
        "command": process_command(),
    }


def busy_error(notebook_path: Path, entry: KernelEntry | None, busy_wait: float) -> KernelError:
    """``KERNEL_BUSY`` for a process that waited ``busy_wait`` s for the kernel of ``entry``.

    Its details: ``notebook_path``, ``running_cell`` (``None`` for inline code or when
    unknown), ``running`` (``"cell NAME"``, ``"inline code"``, or ``None`` when the registry
    does not say), ``busy_by`` (who, :func:`process_name`), ``busy_pid``, ``busy_command``,
    ``busy_since`` (ISO 8601 UTC), ``busy_wait_s``."""
    busy = (entry.busy if entry is not None else None) or {}
    who, cell, since = busy.get("who"), busy.get("cell"), busy.get("since")
    pid = busy.get("pid")
    if not isinstance(pid, int) and isinstance(who, str):
        pid = user_pid(who)
    command = busy.get("command") if isinstance(busy.get("command"), str) else None
    running = None if not busy else (f"cell {cell}" if isinstance(cell, str) else "inline code")
    stamp = (
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(since))
        if isinstance(since, (int, float))
        else None
    )
    what = "cells" if running is None else running
    parts = (command, f"pid {pid}" if isinstance(pid, int) else None, stamp and f"since {stamp}")
    by = ", ".join(part for part in parts if part)
    return KernelError(
        ErrorCode.KERNEL_BUSY,
        f"another process is running {what} on this notebook's kernel"
        + (f" ({by})" if by else "")
        + "; wait for it, or interrupt it (j-cli kernel interrupt)",
        {
            "notebook_path": str(notebook_path),
            "running_cell": cell if isinstance(cell, str) else None,
            "running": running,
            "busy_by": who if isinstance(who, str) else None,
            "busy_pid": pid if isinstance(pid, int) else None,
            "busy_command": command,
            "busy_since": stamp,
            "busy_wait_s": busy_wait,
        },
    )
