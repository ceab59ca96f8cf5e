"""The warm path: a long-lived process keeps what it parsed, keyed by the file's identity.

A :class:`DocumentCache` holds, per ``.ipynb``, what loading it produced (the parsed model,
the file's fingerprint and bytes, the cells' names and views, and what a write derived from
them: the write base, see ``_writebase``), so an unchanged file is never parsed twice. The
cache is made active for a block of work by :func:`warm` (a ``contextvars`` variable, like
the confinement of ``_open``: it follows a call into worker threads); ``Document.load``
consults the active cache, and every document adopted from a read or a write of ours stores
its state back.

Never stale (correctness first): each use opens the file through ``_open`` (the
confinement is checked as for a read) and compares its ``fstat`` with the identity the
entry was verified for: device, inode, size, ``mtime_ns`` and ``ctime_ns``. The change
time cannot be set by ``os.utime``, so an outside save that restores size and mtime is
still seen, and a file replaced by rename has a new inode. Timestamps have a granularity
(a coarse kernel clock, 2 s on FAT): a save landing in the same tick as the one the entry
saw would keep every stamp. So an identity is trusted only once its stamps are older than
a racy window (:data:`FINE_RACY_WINDOW_NS`, or :data:`RACY_WINDOW_NS` for whole-second
stamps) before the moment the entry's content was verified (git's "racy clean" rule);
until then, and for the state our own write adopted (the file's stat after a rename cannot
be tied to our bytes), every use reads the file and compares it with the bytes kept (read,
not parsed). Any difference, or any failure to open the file, drops
the entry: the caller reads and parses the file as without a cache.

Only notebooks that load alone are cached: an ``.ipynb`` without refusal and without an
existing paired text file. Its jupytext pairing metadata may name text files that do not
exist (``ipynb,md`` is common): whether they exist can change without the notebook
changing, so every use checks that each is still absent (``_pairs.pairs_absent``).
Pairs are read every time.

A cache may carry a :data:`Watcher`: every document made under the cache tells it of each
version of its content it takes, read from disk (a load, a reload) or written by us (a
commit), pairs included (``_loaded``), with the version's :func:`ticket`. A long-lived
session learns that way what its calls saw, at no cost of its own (the workbench's
``_sightings``).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._files import FileState
from jupyter_jcli.notebook._open import read_regular, stat_regular
from jupyter_jcli.notebook._pairs import pairs_absent
from jupyter_jcli.notebook._views import CellView

if TYPE_CHECKING:
    from jupyter_jcli.notebook._loaded import LoadedNotebook

__all__ = [
    "FINE_RACY_WINDOW_NS",
    "LONG_LIVED_GC_THRESHOLDS",
    "RACY_WINDOW_NS",
    "DocumentCache",
    "Identity",
    "WarmState",
    "Watcher",
    "active_cache",
    "ticket",
    "tune_collector",
    "warm",
]

LONG_LIVED_GC_THRESHOLDS = (100_000, 50, 100)
"""Collector thresholds for a long-lived process holding warm notebooks (see
:func:`tune_collector`); CPython's defaults are ``(700, 10, 10)``."""

RACY_WINDOW_NS = 2_000_000_000
"""Nanoseconds a file's stamps must predate the verification of its content before its
identity alone proves it unchanged, on a file system that stamps whole seconds (FAT keeps
2 s, HFS+ and ext3 1 s)."""

FINE_RACY_WINDOW_NS = 100_000_000
"""The same for stamps finer than a second: the kernel's timestamp clock ticks every few
milliseconds (a jiffy, at most 10 ms), exFAT's stamps every 10 ms."""

DEFAULT_MAX_ENTRIES = 8
"""Notebooks kept by a cache (least recently used dropped first)."""


@dataclass(frozen=True)
class Identity:
    """What ``fstat`` says of one file version: device, inode, size, mtime and ctime (ns)."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, info: Any) -> Identity:
        """The identity in an ``os.stat_result``."""
        return cls(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)

    def trusted(self, verified_ns: int) -> bool:
        """Whether the stamps predate ``verified_ns`` by more than the racy window (the
        coarse one when a stamp is a whole second: the file system may keep no finer)."""
        newest = max(self.mtime_ns, self.ctime_ns)
        coarse = self.mtime_ns % 1_000_000_000 == 0 or self.ctime_ns % 1_000_000_000 == 0
        window = RACY_WINDOW_NS if coarse else min(FINE_RACY_WINDOW_NS, RACY_WINDOW_NS)
        return verified_ns > 0 and newest + window < verified_ns


@dataclass(frozen=True)
class WarmState:
    """One loaded version of a plain notebook, shared read-only by every document of it.

    Attributes:
        notebook: the parsed model (never changed in place: writes build new dicts).
        files: the ``.ipynb``'s fingerprint and bytes (one file: plain notebooks only).
        names: every cell's name.
        views: every cell's view.
        absent: the text files the notebook's pairing metadata names, none of which existed
            (each use checks they still do not).
        derived: what writes computed from this version (``"base"``: the write base),
            filled at most once per key.
    """

    notebook: dict[str, Any]
    files: tuple[FileState, ...]
    names: list[str]
    views: tuple[CellView, ...]
    absent: tuple[Path, ...] = ()
    derived: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class _Entry:
    state: WarmState
    identity: Identity | None
    verified_ns: int


_TICKETS = itertools.count(1)


def ticket() -> int:
    """The next number of this process's order of versions: a read draws one before it
    reads (a warm load before it validates), a write once it has written. A version read
    with a smaller ticket than a write's may be older than what that write wrote."""
    return next(_TICKETS)  # one C call: atomic under the GIL


class Watcher(Protocol):
    """Told of each version a document takes (module docstring); called in the thread that
    loads or writes, possibly under the notebook's write lock: quick, and raises nothing."""

    def __call__(self, document: LoadedNotebook, *, written: bool, ticket: int) -> None:
        """``document`` now holds a version read from disk (``written`` false) or one our
        own write just wrote (``written`` true); ``ticket``: the version's :func:`ticket`."""


class DocumentCache:
    """Loaded notebooks by path, each re-validated on every use (module docstring).

    Thread-safe (worker threads share it). Counters for benchmarks and tests:
    ``hits`` (served without reading), ``verified`` (served after comparing the content's
    hash), ``stores``.

    Args:
        max_entries: notebooks kept (least recently used dropped first).
        watcher: told of every version the documents made under this cache take.
    """

    def __init__(
        self, max_entries: int = DEFAULT_MAX_ENTRIES, *, watcher: Watcher | None = None
    ) -> None:
        self._entries: OrderedDict[Path, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries
        self.watcher = watcher
        self.hits = 0
        self.verified = 0
        self.stores = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, path: Path) -> WarmState | None:
        """The state of ``path`` if the file still holds exactly what it was loaded as,
        else ``None`` (and the entry is dropped).

        Raises:
            NotebookError: ``PATH_NOT_ALLOWED`` when the path is outside the active
                confinement (as a read would).
        """
        with self._lock:
            entry = self._entries.get(path)
        if entry is None:
            return None
        before = time.time_ns()
        try:
            _resolved, info = stat_regular(path)
        except NotebookError as err:
            self.forget(path)
            if err.code == ErrorCode.PATH_NOT_ALLOWED:
                raise
            return None
        except OSError:
            self.forget(path)
            return None
        if entry.state.absent and not pairs_absent(entry.state.absent):
            self.forget(path)
            return None
        identity = Identity.of(info)
        if identity == entry.identity and identity.trusted(entry.verified_ns):
            self._touch(path, entry)
            self.hits += 1
            return entry.state
        state = entry.state
        if identity.size != state.files[0].size:
            self.forget(path)
            return None
        try:
            fresh = read_regular(path).raw  # compared with the bytes kept: no hashing
        except (NotebookError, OSError):
            self.forget(path)
            return None
        if fresh != state.files[0].raw:
            self.forget(path)
            return None
        self._touch(path, _Entry(state, identity, before))
        self.verified += 1
        return state

    def put(self, path: Path, state: WarmState, *, identity: Identity | None, read_ns: int) -> None:
        """Keep ``state`` for ``path``.

        Args:
            path: the notebook (absolute, as loaded).
            state: what loading (or our write) produced.
            identity: the ``fstat`` of the descriptor the bytes were read from, ``None``
                when the state comes from our own write (its next use compares hashes).
            read_ns: wall time taken before that ``fstat`` (0 with no identity).
        """
        if len(state.files) != 1:
            return
        self._touch(path, _Entry(state, identity, read_ns if identity is not None else 0))
        self.stores += 1

    def forget(self, path: Path) -> None:
        """Drop the entry of ``path`` (nothing happens when there is none)."""
        with self._lock:
            self._entries.pop(path, None)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()

    def _touch(self, path: Path, entry: _Entry) -> None:
        with self._lock:
            self._entries[path] = entry
            self._entries.move_to_end(path)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)


_ACTIVE: ContextVar[DocumentCache | None] = ContextVar("jupyter_jcli_warm", default=None)


def active_cache() -> DocumentCache | None:
    """The cache made active by the innermost :func:`warm` block, else ``None``."""
    return _ACTIVE.get()


@contextlib.contextmanager
def warm(cache: DocumentCache | None) -> Iterator[DocumentCache | None]:
    """Make ``cache`` the active one for the block (and the threads and tasks it starts);
    ``None`` turns caching off inside the block."""
    token = _ACTIVE.set(cache)
    try:
        yield cache
    finally:
        _ACTIVE.reset(token)


def tune_collector() -> None:
    """Set the cyclic garbage collector for a long-lived process that keeps notebooks warm.

    A warm notebook of thousands of cells is hundreds of thousands of objects; with CPython's
    default thresholds each edit's allocations set off a full collection that walks all of
    them (hundreds of milliseconds on 5,000 cells, more than the edit itself). With
    :data:`LONG_LIVED_GC_THRESHOLDS` young objects are collected every 100,000 allocations
    and the whole heap rarely; what a notebook holds is freed by reference counting either
    way (it has no cycles), so only cyclic garbage waits longer.
    """
    gc.set_threshold(*LONG_LIVED_GC_THRESHOLDS)
