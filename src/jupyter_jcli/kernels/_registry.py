"""The registry of live kernels: one entry per notebook on this machine, shared by every
process of ours (``j-cli`` commands, ``jupyter-mcp``, the Python API).

Layout, under :func:`registry_dir` (the Jupyter runtime folder's ``jcli-kernels``, or
``$JUPYTER_JCLI_RUNTIME_DIR``)::

    <key>.json   the entry (:class:`KernelEntry`), replaced atomically
    <key>.runs   its epoch's execution log
    <key>.lock   flock'ed for each read-modify-write of the entry (bounded by LOCK_TIMEOUT)
    <key>.exec   flock'ed by the one process executing on the kernel (a batch of cells)
    <key>.log    the supervisor's and the kernel's own stdout/stderr
    <key>.lost   the epoch of a kernel that died by itself (``kill -9``, out of memory),
                 until the next kernel started for the notebook reports it replaced

``<key>`` is a hash of the resolved notebook path; the entry, its log and its lock are a
:class:`~jupyter_jcli.kernels._records.RecordsFolder`'s, as the server ledger's. Locks are
``fcntl.flock`` locks: the kernel releases them when their holder dies, so a crashed command
never leaves the notebook locked. When the entry is gone its other files go too, each removed
only by a holder of its lock (see :mod:`._flock`: removing them never lets two processes hold
one lock).

The entry records the kernel's transport (a local process through its connection file
and pid, or a Jupyter Server kernel by id and URL), its epoch, who started it and who uses
it, its idle clock and the execution log of its epoch (which cell rev ran with which outcome), so
every process judges freshness against the same records. An entry whose kernel process is
gone is removed by whoever notices (:meth:`KernelRegistry.live`); an epoch is minted once per
kernel start, so a dead kernel's records never count for another. A kernel being stopped says
so first (``state == "stopping"``, written under the entry's lock): nobody joins it, a
process that wants the notebook's kernel waits for its entry to go and starts its own. Users
whose process has ended are dropped when an entry is read.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import KernelError
from jupyter_jcli.kernels._config import seconds_setting
from jupyter_jcli.kernels._entry import (
    EntryState,
    KernelEntry,
    own_pid,
    pid_alive,
    process_name,
)
from jupyter_jcli.kernels._flock import ExecLock
from jupyter_jcli.kernels._log_file import read_executions, replace_file
from jupyter_jcli.kernels._records import LOCK_TIMEOUT, RecordsFolder, replace_busy

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "IDLE_TIMEOUT_ENV",
    "LOCK_TIMEOUT",
    "RUNTIME_DIR_ENV",
    "EntryState",
    "ExecLock",
    "KernelEntry",
    "KernelRegistry",
    "idle_timeout",
    "pid_alive",
    "process_name",
    "registry_dir",
]

RUNTIME_DIR_ENV = "JUPYTER_JCLI_RUNTIME_DIR"
"""Environment variable naming the registry folder (tests point it at a temporary folder)."""
IDLE_TIMEOUT_ENV = "JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT"
"""Environment variable overriding :data:`DEFAULT_IDLE_TIMEOUT` (seconds, > 0)."""
DEFAULT_IDLE_TIMEOUT = 3600.0
"""Seconds a registered kernel may stay idle before its supervisor stops it."""
LOST_TTL = 86_400.0
"""Seconds a ``.lost`` record counts (a kernel started later than that says nothing)."""
_SCHEMA = 1
_MAX_USERS = 20


def registry_dir() -> Path:
    """The registry folder: ``$JUPYTER_JCLI_RUNTIME_DIR``, else ``jcli-kernels`` in the
    Jupyter runtime folder (``jupyter_core.paths.jupyter_runtime_dir()``)."""
    raw = os.environ.get(RUNTIME_DIR_ENV, "").strip()
    if raw:
        return Path(raw).expanduser().resolve()
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir()).resolve() / "jcli-kernels"


def idle_timeout(value: float | None = None) -> float:
    """The idle timeout to use, in seconds: ``value``, else ``$JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT``,
    else :data:`DEFAULT_IDLE_TIMEOUT`.

    Raises:
        UsageError: ``USAGE_ERROR`` when the value is not a finite number > 0.
    """
    return seconds_setting(
        value, option="idle_timeout", env=IDLE_TIMEOUT_ENV, default=DEFAULT_IDLE_TIMEOUT
    )


class KernelRegistry(RecordsFolder[KernelEntry]):
    """The registry folder (see the module docstring): entries, their execution logs and notes
    (inline code, stops asked, lost kernels).

    Args:
        root: the folder; default :func:`registry_dir`.
    """

    durable = False
    """Not ``fsync``-ed: the registry describes running processes, which a crash of the system
    ends too, and an entry lost or torn by one reads as no kernel (:meth:`read`), so
    durability would buy nothing and cost every exec two disk flushes."""

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(root if root is not None else registry_dir())

    def drop_if_unused(self, notebook_path: Path) -> None:
        """With no entry for the notebook, remove its other files (an execution lock taken by
        a command whose kernel never started, e.g. a kernelspec not installed); nothing when
        it has an entry or its lock is taken (its holder cleans up)."""
        self._drop_if_unused(self.key(notebook_path))

    def sweep(self) -> None:
        """Remove the files of entries that are gone (left by a process that died)."""
        if self.root.is_dir():
            suffixes = (".lock", ".exec", ".log", ".runs")
            for key in sorted({f.stem for end in suffixes for f in self.root.glob(f"*{end}")}):
                self._drop_if_unused(key)

    def _drop_if_unused(self, key: str) -> None:
        if not (self.root / f"{key}.json").exists():
            with contextlib.suppress(KernelError), self.locked_key(key, timeout=0.0, name=key):
                pass

    def _load(self, data: object) -> KernelEntry | None:
        """The entry (no liveness check), users whose process has ended dropped."""
        entry = KernelEntry.from_dict(data)
        if entry is not None:
            entry.drop_gone_users()
        return entry

    def write(self, entry: KernelEntry) -> None:
        """Replace the entry atomically (call under :meth:`locked`)."""
        super()._store(Path(entry.notebook_path), entry)

    def _store(self, notebook_path: Path, entry: KernelEntry) -> None:
        self.write(entry)  # every write of an entry is one of :meth:`write`

    def remove(self, notebook_path: Path, *, epoch: str | None = None) -> bool:
        """Remove the entry (only if it has ``epoch``, when given); ``True`` if removed."""
        return self._forget(notebook_path, lambda entry: epoch in (None, entry.epoch))

    def live(self, notebook_path: Path) -> KernelEntry | None:
        """The notebook's entry if its kernel runs and may be joined (not one being stopped);
        a dead one is removed (and its kernel process, should it outlive its supervisor,
        killed)."""
        entry = self.read(notebook_path)
        if entry is None or entry.state == "starting" or entry.stopping_elsewhere():
            return None
        if entry.joinable():
            return entry
        if entry.state != "failed":
            self.discard(entry)
        return None

    def discard(self, entry: KernelEntry) -> None:
        """Remove a dead entry and kill what is left of its processes."""
        if entry.state in ("idle", "busy"):
            self.record_lost(
                Path(entry.notebook_path),
                entry.epoch,
                keep=entry.keep,
                idle_timeout=entry.idle_timeout,
            )
        entry.kill()
        self.remove(Path(entry.notebook_path), epoch=entry.epoch)

    def entries(self) -> list[KernelEntry]:
        """Every stored entry (kernels starting and stopping included), dead ones removed
        and the files of gone ones too (:meth:`sweep`), sorted by notebook path."""
        if not self.root.is_dir():
            return []
        found = []
        for file in sorted(self.root.glob("*.json")):
            entry = self.read_file(file)
            if entry is None:
                continue
            starting = entry.state == "starting"
            if (starting and pid_alive(entry.supervisor_pid or entry.owner_pid)) or (
                entry.stopping_elsewhere()
            ):
                found.append(entry)
            elif (live := self.live(Path(entry.notebook_path))) is not None:
                found.append(live)
        self.sweep()
        return sorted(found, key=lambda e: e.notebook_path)

    # ------------------------------------------------------------------ users and runs

    def touch_user(self, notebook_path: Path, epoch: str, who: str, *, present: bool) -> None:
        """Record that ``who`` uses the kernel (or, ``present=False``, stopped using it)."""
        self.update(notebook_path, lambda entry: _touch(entry, who, present), epoch=epoch)

    def set_busy(
        self,
        notebook_path: Path,
        epoch: str,
        busy: dict[str, Any] | None,
        *,
        of: int | None = None,
        user: str | None = None,
    ) -> None:
        """Mark the kernel busy (``{"who", "cell", "since", "pid", "command"}``) or, with
        ``None``, idle since now. ``None`` clears only a record of process ``of`` (default:
        this process) or of no process: the record another process left (it was killed
        while its code ran) stays, so later commands learn that its code may still run.

        ``user``: in the same write, :meth:`touch_user` of ``user`` (present with a busy
        record, absent when clearing), for a process that uses the kernel only while its
        code runs (the ``j-cli exec`` lane): two writes of the entry per command, not four.
        """
        owner = own_pid() if of is None else of

        def change(entry: KernelEntry) -> None:
            if user is not None:
                _touch(entry, user, busy is not None)
            if not replace_busy(entry, busy, owner):
                return
            if entry.state in ("idle", "busy"):
                entry.state = "busy" if busy is not None else "idle"
            if busy is None:
                entry.idle_since = time.time()

        self.update(notebook_path, change, epoch=epoch)

    def executions_of(self, entry: KernelEntry) -> list[dict[str, Any]]:
        """The execution log of ``entry``'s epoch (as :meth:`executions`); ``[]`` once it is
        removed."""
        return read_executions(self.path(Path(entry.notebook_path), ".runs"), entry.epoch)

    # ------------------------------------------------------------------ notes

    def holds(self, notebook_path: Path) -> bool:
        """Always ``True``: the registry keeps every run of its kernels (none without an
        entry: no registered kernel, nothing is fresh)."""
        return True

    def running(self, notebook_path: Path, epoch: str) -> dict[str, Any] | None:
        """What another process runs on the registered kernel of ``epoch`` (its ``busy``
        record: :func:`~jupyter_jcli.kernels._busy.busy_facts`), else ``None``."""
        from jupyter_jcli.kernels._busy import busy_facts

        entry = self.read(notebook_path)
        if entry is None or entry.epoch != epoch or entry.state != "busy":
            return None
        return busy_facts(entry)

    def record_lost(
        self,
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
        record: dict[str, Any] = {"schema_version": _SCHEMA, "epoch": epoch, "at": time.time()}
        if keep:
            record.update(keep=True, idle_timeout=idle_timeout)
        with contextlib.suppress(OSError):
            self._ensure_root()
            lost = self.path(notebook_path, ".lost")
            replace_file(lost, json.dumps(record).encode(), durable=False)

    def take_lost(self, notebook_path: Path) -> str | None:
        """The epoch :meth:`record_lost` noted for the notebook within :data:`LOST_TTL`
        seconds, else ``None``; the record is removed (one process takes it)."""
        lost = self.take_lost_record(notebook_path)
        return lost[0] if lost is not None else None

    def take_lost_record(self, notebook_path: Path) -> tuple[str, bool, float | None] | None:
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

    def lost_record(self, notebook_path: Path) -> tuple[str, bool, float | None] | None:
        """:meth:`take_lost_record` without taking it: the record stays for the command that
        starts the next kernel (a process that ends after its kernel died reads it so)."""
        return _lost_record(self.path(notebook_path, ".lost"))


def _touch(entry: KernelEntry, who: str, present: bool) -> None:
    """``who`` among ``entry``'s users now (at most :data:`_MAX_USERS`, the latest), or not."""
    entry.users.pop(who, None)
    if present:
        entry.users[who] = time.time()
        while len(entry.users) > _MAX_USERS:
            entry.users.pop(min(entry.users, key=entry.users.__getitem__))


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
