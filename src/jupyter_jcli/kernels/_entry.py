"""One notebook's registered kernel: the entry of the live-kernel registry (``<key>.json``,
:mod:`jupyter_jcli.kernels._registry`), and the process names and liveness checks it is
judged by.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from jupyter_jcli.server import pid_alive

__all__ = [
    "EntryState",
    "KernelEntry",
    "pid_alive",
    "process_command",
    "process_name",
    "program",
    "user_pid",
]

_SCHEMA = 1
_USER_PID = re.compile(r" pid (\d+)$")
_COMMAND_WIDTH = 200
"""Longest command line an entry records (:func:`process_command`)."""

EntryState = Literal["starting", "idle", "busy", "stopping", "failed"]
"""``starting``: a supervisor is launching the kernel; ``idle`` / ``busy``: it runs (busy:
a process holds its execution lock); ``stopping``: it is being stopped (nobody joins it; its
entry goes when it has stopped); ``failed``: the start failed (``error`` says why; the
starter removes the entry)."""


def program() -> str:
    """This process's program as a person would type it: the script's name (``j-cli``), or
    ``python -m PACKAGE`` for a module run with ``-m`` (whose ``sys.argv[0]`` is the module's
    file, ``__main__.py``: a name nobody can run)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    module = getattr(spec, "name", None)
    if isinstance(module, str) and module:
        return "python -m " + module.removesuffix(".__main__")
    return Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"


def own_pid() -> int:
    """The pid this process records and recognises itself by in the registry."""
    return os.getpid()


def process_name() -> str:
    """Who this process is, as entries record it: ``"j-cli pid 123"`` (:func:`own_pid`)."""
    return f"{program()} pid {own_pid()}"


def process_command() -> str:
    """This process's command line as entries record it (``"j-cli run nb.ipynb"``, at most
    :data:`_COMMAND_WIDTH` characters): what started a kernel, what runs on it."""
    line = " ".join([program(), *_shown(sys.argv[1:])])
    return line if len(line) <= _COMMAND_WIDTH else line[: _COMMAND_WIDTH - 1] + "…"


_SECRET_OPTIONS = ("--token",)
"""Options whose value is a secret: recorded as ``***`` (a token is never logged, echoed or
written)."""


def _shown(args: list[str]) -> list[str]:
    """``args`` shell-quoted, with the value of every :data:`_SECRET_OPTIONS` option
    (``--token T`` or ``--token=T``) shown as ``***``."""
    import shlex

    shown: list[str] = []
    for position, arg in enumerate(args):
        name, equals, _ = arg.partition("=")
        if position and args[position - 1] in _SECRET_OPTIONS:
            shown.append("***")
        elif equals and name in _SECRET_OPTIONS:
            shown.append(f"{name}=***")
        else:
            shown.append(shlex.quote(arg))
    return shown


def user_pid(who: str) -> int | None:
    """The process id in a user's name (:func:`process_name`), ``None`` when it has none."""
    found = _USER_PID.search(who)
    return int(found.group(1)) if found else None


@dataclass
class KernelEntry:
    """One notebook's registered kernel (the JSON of ``<key>.json``).

    Attributes:
        notebook_path: the resolved notebook path.
        kernelspec: the kernelspec the kernel runs.
        cwd: the kernel's working directory.
        epoch: the kernel's epoch (minted once, when the start began).
        state: see :data:`EntryState`.
        started: when the start began (Unix time, s).
        started_by: who started it (:func:`process_name`).
        started_command: the command line that started it (:func:`process_command`;
            ``None`` in an entry written before it was recorded).
        idle_since: when it last became idle (Unix time, s).
        idle_timeout: seconds of idleness after which its supervisor stops it.
        keep: ``False`` when the starter stops it when it ends (``owner_pid``).
        owner_pid: the starting process, for a kernel it does not keep.
        transport: ``"local"`` (a process here) or ``"server"`` (a Jupyter Server kernel).
        connection_file: the local kernel's connection file.
        pid: the local kernel's process id.
        supervisor_pid: the process that launched and watches the local kernel.
        kernel_id: the Jupyter Server kernel id (``transport == "server"``).
        server_url: the Jupyter Server base URL (``transport == "server"``).
        users: who uses it -> when they last did (Unix time, s).
        busy: ``{"who", "cell", "since", "pid", "command"}`` while a process executes on
            it (``cell``: ``None`` for inline code; ``pid`` and ``command`` may be missing).
        seq: the last run sequence number handed out (orders runs across processes).
        runs_compacted: the size in bytes of the execution log file after its last compaction
            (:mod:`~jupyter_jcli.kernels._log_file`; the log itself, the latest run per cell:
            ``{"key", "rev", "epoch", "seq", "parents", "ok", "interrupted"}``, is read with
            ``KernelRegistry.executions``).
        changes: code run on the kernel outside the cells since (inline code), the latest
            ``MAX_CHANGES``: ``{"seq", "epoch", "names", "cause"}`` (``names``: what it may
            have written, ``None`` for any name; see :meth:`KernelRegistry.record_change`).
        interrupt: the last interrupt, restart or stop asked of the kernel by some process:
            ``{"epoch", "who", "reason", "at"}`` (:meth:`KernelRegistry.record_interrupt`).
        error: ``{"code", "message", "details"}`` when ``state == "failed"``.
    """

    notebook_path: str
    kernelspec: str
    cwd: str
    epoch: str
    state: EntryState
    started: float
    started_by: str
    idle_since: float
    idle_timeout: float
    keep: bool
    owner_pid: int | None = None
    transport: Literal["local", "server"] = "local"
    connection_file: str | None = None
    pid: int | None = None
    supervisor_pid: int | None = None
    kernel_id: str | None = None
    server_url: str | None = None
    users: dict[str, float] = field(default_factory=dict)
    busy: dict[str, Any] | None = None
    seq: int = 0
    runs_compacted: int = 0
    changes: list[dict[str, Any]] = field(default_factory=list)
    interrupt: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    started_command: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON object (with ``schema_version``); its values are the entry's own,
        not copies (serialise it, do not change it)."""
        return {"schema_version": _SCHEMA, **{f.name: getattr(self, f.name) for f in _FIELDS}}

    @classmethod
    def from_dict(cls, data: Any) -> KernelEntry | None:
        """The entry of a stored object, ``None`` when it is not one of ours."""
        if not isinstance(data, dict) or data.get("schema_version") != _SCHEMA:
            return None
        names = _NAMES
        try:
            return cls(**{k: v for k, v in data.items() if k in names})
        except TypeError:
            return None

    def alive(self) -> bool:
        """Whether the kernel runs: a local kernel's process and its supervisor are alive
        (a server kernel is taken as alive; its backend checks it). A kernel being stopped
        may still be alive: see :meth:`joinable`."""
        if self.state in ("starting", "failed"):
            return False
        if self.transport == "server":
            return True
        return pid_alive(self.pid) and pid_alive(self.supervisor_pid)

    def joinable(self) -> bool:
        """Whether a process may use the kernel: it runs and nobody is stopping it."""
        return self.state in ("idle", "busy") and self.alive()

    def stopping_elsewhere(self) -> bool:
        """Whether a stop of the kernel is under way (``stopping``, and its supervisor, which
        removes the entry once the kernel has stopped, still runs)."""
        return self.state == "stopping" and pid_alive(self.supervisor_pid)

    def live_users(self, *, besides: str | None = None) -> list[str]:
        """The users whose process still runs (other than ``besides``)."""
        return [
            who
            for who in self.users
            if who != besides and (pid := user_pid(who)) is not None and pid_alive(pid)
        ]

    def present_users(self) -> list[str]:
        """The users whose process still runs (names without a pid kept: they cannot be
        checked), most recent first."""
        order = sorted(self.users, key=self.users.__getitem__, reverse=True)
        return [who for who in order if (pid := user_pid(who)) is None or pid_alive(pid)]

    def kill(self) -> None:
        """Kill what is left of the kernel's and its supervisor's processes (``SIGKILL``)."""
        import signal

        for pid in (self.pid, self.supervisor_pid):
            if pid is not None and pid_alive(pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def drop_gone_users(self) -> None:
        """Forget the users whose process has ended (names without a pid are kept)."""
        for who in list(self.users):
            pid = user_pid(who)
            if pid is not None and not pid_alive(pid):
                del self.users[who]


_FIELDS = fields(KernelEntry)
_NAMES = frozenset(f.name for f in _FIELDS)
