"""The registry of live kernels: one entry per notebook on this machine, shared by every
process of ours (``j-cli`` commands, ``jupyter-mcp``, the Python API).

Layout, under :func:`registry_dir` (the Jupyter runtime folder's ``jcli-kernels``, or
``$JUPYTER_JCLI_RUNTIME_DIR``)::

    <key>.json   the entry (:class:`KernelEntry`), replaced atomically
    <key>.lock   flock'ed for each read-modify-write of the entry (bounded by LOCK_TIMEOUT)
    <key>.exec   flock'ed by the one process executing on the kernel (a batch of cells)
    <key>.log    the supervisor's and the kernel's own stdout/stderr
    <key>.lost   the epoch of a kernel that died by itself (``kill -9``, out of memory),
                 until the next kernel started for the notebook reports it replaced

``<key>`` is a hash of the resolved notebook path. Locks are ``fcntl.flock`` locks: the
kernel releases them when their holder dies, so a crashed command never leaves the notebook
locked. When the entry is gone its other files go too, each removed only by a holder of its
lock (see :mod:`._flock`: removing them never lets two processes hold one lock).

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
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._config import seconds_setting
from jupyter_jcli.kernels._entry import (
    EntryState,
    KernelEntry,
    own_pid,
    pid_alive,
    process_command,
    process_name,
)
from jupyter_jcli.kernels._flock import ExecLock, flock_path
from jupyter_jcli.kernels._log_file import (
    log_execution,
    read_executions,
    remove_executions,
    replace_file,
)
from jupyter_jcli.kernels._records import add_change, asked_since

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
LOCK_TIMEOUT = 10.0
"""Seconds to wait for an entry's lock (held only for one read-modify-write)."""
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


class KernelRegistry:
    """The registry folder (see the module docstring): entries, their execution logs and notes
    (inline code, stops asked, lost kernels).

    Args:
        root: the folder; default :func:`registry_dir`.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else registry_dir()

    def key(self, notebook_path: Path) -> str:
        """The file stem of a notebook's entry: a digest of its resolved path's bytes (a name
        that is not UTF-8 is hashed as the file system spells it, ``os.fsencode``)."""
        digest = hashlib.sha256(os.fsencode(notebook_path.resolve())).hexdigest()
        return digest[:24]

    def path(self, notebook_path: Path, suffix: str) -> Path:
        """``<root>/<key><suffix>`` (``.json``, ``.lock``, ``.exec``, ``.log``)."""
        return self.root / f"{self.key(notebook_path)}{suffix}"

    def _ensure_root(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)

    @contextlib.contextmanager
    def locked(self, notebook_path: Path, *, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
        """Hold the entry's lock (for one read-modify-write).

        Raises:
            KernelError: ``KERNEL_BUSY`` (details ``lock``) when it stays taken ``timeout`` s.
        """
        with self.locked_key(self.key(notebook_path), timeout=timeout, name=notebook_path):
            yield

    @contextlib.contextmanager
    def locked_key(self, key: str, *, timeout: float, name: object) -> Iterator[None]:
        """:meth:`locked` by entry key (``name``: the error's ``notebook_path``); on the way
        out, with no entry left, the entry's other files are removed (the lock file last, still
        held). The server ledger locks its entries with it too."""
        self._ensure_root()
        lock = self.root / f"{key}.lock"
        fd = flock_path(lock, blocking_until=time.monotonic() + timeout)
        if fd is None:
            raise KernelError(
                ErrorCode.KERNEL_BUSY,
                "the kernel registry entry stayed locked",
                {"notebook_path": str(name), "lock": "registry"},
            )
        try:
            yield
            if not (self.root / f"{key}.json").exists():
                self._remove_side_files(key)
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()  # last: a waiter then locks a new file (see flock_path)
        finally:
            os.close(fd)  # closing releases the flock

    def _remove_side_files(self, key: str) -> None:
        """Remove an entry-less key's log, and its execution lock unless someone holds it
        (call under the entry's lock)."""
        with contextlib.suppress(FileNotFoundError):
            (self.root / f"{key}.log").unlink()
        remove_executions(self.root / f"{key}.runs")
        file = self.root / f"{key}.exec"
        execution = ExecLock(file)
        if file.exists() and execution.try_acquire():
            try:
                with contextlib.suppress(FileNotFoundError):
                    file.unlink()  # held: a waiter then locks a new file (see _flock)
            finally:
                execution.release()

    def drop_if_unused(self, notebook_path: Path) -> None:
        """With no entry for the notebook, remove its other files (an execution lock taken by
        a command whose kernel never started, e.g. a kernelspec not installed); nothing when
        it has an entry or its lock is taken (its holder cleans up)."""
        if self.path(notebook_path, ".json").exists():
            return
        with contextlib.suppress(KernelError), self.locked(notebook_path, timeout=0.0):
            pass

    def sweep(self) -> None:
        """Remove the files of entries that are gone (left by a process that died)."""
        if not self.root.is_dir():
            return
        suffixes = (".lock", ".exec", ".log", ".runs")
        keys = {file.stem for suffix in suffixes for file in self.root.glob(f"*{suffix}")}
        for key in sorted(keys):
            if (self.root / f"{key}.json").exists():
                continue
            with contextlib.suppress(KernelError), self.locked_key(key, timeout=0.0, name=key):
                pass

    def read(self, notebook_path: Path) -> KernelEntry | None:
        """The stored entry (no liveness check), ``None`` when there is none or it is not
        readable as one."""
        return self.read_file(self.path(notebook_path, ".json"))

    @staticmethod
    def read_file(file: Path) -> KernelEntry | None:
        """The entry stored in ``file``, ``None`` when it is missing or not one."""
        try:
            entry = KernelEntry.from_dict(json.loads(file.read_bytes()))
        except (OSError, ValueError):
            return None
        if entry is not None:
            entry.drop_gone_users()
        return entry

    def write(self, entry: KernelEntry) -> None:
        """Replace the entry atomically (call under :meth:`locked`): a temporary file, then
        ``os.replace``. Not ``fsync``-ed: the registry describes running processes, which a
        crash of the system ends too, and an entry lost or torn by one reads as no kernel
        (:meth:`read`), so durability would buy nothing and cost every exec two disk
        flushes."""
        self._ensure_root()
        # compact, as the C encoder writes it (an ``indent`` takes the pure-Python encoder,
        # about 10x slower on an entry whose execution log holds thousands of cells)
        data = json.dumps(entry.to_dict(), separators=(",", ":"), sort_keys=True).encode()
        replace_file(self.path(Path(entry.notebook_path), ".json"), data, durable=False)

    def remove(self, notebook_path: Path, *, epoch: str | None = None) -> bool:
        """Remove the entry (only if it has ``epoch``, when given); ``True`` if removed."""
        with self.locked(notebook_path):
            entry = self.read(notebook_path)
            if entry is None or (epoch is not None and entry.epoch != epoch):
                return False
            with contextlib.suppress(FileNotFoundError):
                self.path(notebook_path, ".json").unlink()
            remove_executions(self.path(notebook_path, ".runs"))
            return True

    def update(
        self, notebook_path: Path, change: Callable[[KernelEntry], None], *, epoch: str | None
    ) -> KernelEntry | None:
        """Apply ``change`` to the entry under its lock and store it; nothing when there is
        no entry or (``epoch`` given) it is another kernel's. Returns the stored entry."""
        with self.locked(notebook_path):
            entry = self.read(notebook_path)
            if entry is None or (epoch is not None and entry.epoch != epoch):
                return None
            change(entry)
            self.write(entry)
            return entry

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
            pid = (entry.busy or {}).get("pid")
            if busy is None and isinstance(pid, int) and pid != owner:
                return
            entry.busy = busy
            if entry.state in ("idle", "busy"):
                entry.state = "busy" if busy is not None else "idle"
            if busy is None:
                entry.idle_since = time.time()

        self.update(notebook_path, change, epoch=epoch)

    def record_execution(self, notebook_path: Path, record: dict[str, Any]) -> int:
        """Append one run (``key``, ``rev``, ``epoch``, ``parents``, ``ok``) to
        the log of the kernel it ran on; returns its sequence number (``seq`` is set here,
        growing across processes). A run on a kernel the entry no longer names is not
        recorded (that kernel is gone; its runs count for nothing) and gets ``-1``.

        The log is its own append-only file (:mod:`~jupyter_jcli.kernels._log_file`), so a
        record costs the same whatever the log holds."""
        with self.locked(notebook_path):
            entry = self.read(notebook_path)
            if entry is None or entry.epoch != str(record["epoch"]):
                return -1
            seq = log_execution(self.path(notebook_path, ".runs"), entry, record, durable=False)
            if seq >= 0:  # else not recorded: the cell reads as not run, never as fresh
                self.write(entry)
            return seq

    def executions(self, notebook_path: Path) -> list[dict[str, Any]]:
        """The execution log of the notebook's registered kernel (its epoch's latest run per cell,
        oldest first); ``[]`` without an entry."""
        entry = self.read(notebook_path)
        return [] if entry is None else self.executions_of(entry)

    def executions_of(self, entry: KernelEntry) -> list[dict[str, Any]]:
        """The execution log of ``entry``'s epoch (as :meth:`runs`); ``[]`` once it is removed."""
        return read_executions(self.path(Path(entry.notebook_path), ".runs"), entry.epoch)

    # ------------------------------------------------------------------ notes

    def record_change(self, notebook_path: Path, change: dict[str, Any]) -> int:
        """Append one run of code outside the cells (``epoch``, ``names``: a list or
        ``None`` for any name, ``cause``) to the log of the kernel it ran on; returns its
        sequence number, from the same counter as :meth:`record_execution` (so it orders against
        the cells' runs across processes), ``-1`` when the entry names another kernel.

        The entry keeps the latest :data:`MAX_CHANGES`, and none older than the last change
        that may have written any name (it overwrote everything the older ones did)."""
        assigned = -1

        def apply(entry: KernelEntry) -> None:
            nonlocal assigned
            assigned = add_change(entry, change)

        self.update(notebook_path, apply, epoch=str(change["epoch"]))
        return assigned

    def record_interrupt(self, notebook_path: Path, epoch: str, who: str, reason: str) -> None:
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
        self, notebook_path: Path, epoch: str, since: float
    ) -> dict[str, Any] | None:
        """The interrupt request recorded for the kernel of ``epoch`` at or after ``since``
        (Unix time, s), else ``None``."""
        entry = self.read(notebook_path)
        return asked_since(entry.interrupt if entry is not None else None, epoch, since)

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
