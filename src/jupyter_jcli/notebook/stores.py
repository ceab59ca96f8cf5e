"""Which store a notebook opens in: ``--store`` and ``$JUPYTER_JCLI_STORE``.

A front end turns its ``--store`` value (or the variable; neither: ``auto``) and its server
options into one :class:`StoreChoice`, and every notebook it names opens in the store that
choice gives for it (:meth:`StoreChoice.ref_for`; :func:`using_store` makes a choice the
active one for a block, as ``notebook._warm`` does for the document cache, so
:func:`~jupyter_jcli.notebook.store.open_notebook` of a path honours it):

==========  ==================================================================================
kind        the notebook opens in
==========  ==================================================================================
local       the file on this machine (``Document.load``: pairing, warm cache, undo snapshots)
collab      the Jupyter Server's collaborative room (``_collab_store.CollabStore``)
contents    the Jupyter Server's contents API (``_contents_store.ContentsStore``); refused
            on a server with real-time collaboration (its rooms would lose people's typing)
auto        local without a server URL, or for a file here outside the server's root;
            else collab when the server answers
            ``PUT /api/collaboration/session/<path>`` (asked once per server and process),
            else contents when no ``--server-root`` is given and the path is no file here,
            else local (the behaviour before stores)
==========  ==================================================================================

A server store names a notebook by its path relative to the server's root (``/``
separators): a path given on this machine is taken relative to ``server_root`` (default: the
current folder, as the kernel layer maps a notebook to the server's session path). Such a
notebook is confined by the server, not by local roots.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from jupyter_jcli.errors import JcliError, UsageError

if TYPE_CHECKING:
    from jupyter_jcli.notebook.store import NotebookRef, NotebookStore

__all__ = [
    "SERVER_STORES",
    "STORE_ENV",
    "STORE_KINDS",
    "StoreChoice",
    "active_choice",
    "collab_available",
    "open_store",
    "resolve_ref",
    "store_kind",
    "using_store",
]

STORE_ENV = "JUPYTER_JCLI_STORE"
"""The variable a front end's ``--store`` falls back to."""
STORE_KINDS = ("auto", "local", "collab", "contents")
"""The values of ``--store``."""
SERVER_STORES = frozenset({"collab", "contents"})
"""The kinds that need a server URL."""
PROBE_TIMEOUT = 5.0
"""Seconds the collaboration probe may take."""

_probed: dict[str, bool] = {}
_probe_lock = threading.Lock()


def store_kind(value: str | None, *, environ: Mapping[str, str] | None = None) -> str:
    """The store kind ``value`` names (``None``: ``$JUPYTER_JCLI_STORE``, else ``auto``).

    Raises:
        UsageError: ``USAGE_ERROR`` (details ``option: "store"``, ``value``, ``choices``)
            for any other value.
    """
    env = os.environ if environ is None else environ
    source = "store" if value is not None else STORE_ENV
    raw = value if value is not None else env.get(STORE_ENV) or "auto"
    kind = raw.strip().lower()
    if kind not in STORE_KINDS:
        raise UsageError(
            f"unknown store {raw!r} ({'--store' if source == 'store' else '$' + STORE_ENV}); "
            f"choose one of {', '.join(STORE_KINDS)}",
            {"option": source, "value": raw, "choices": list(STORE_KINDS)},
        )
    return kind


def collab_available(
    server_url: str, path: str, token: str | None = None, *, timeout: float = PROBE_TIMEOUT
) -> bool:
    """Whether the server at ``server_url`` has real-time collaboration: it answers
    ``PUT /api/collaboration/session/<path>`` (jupyter-collaboration's session request;
    a ``404`` saying the file does not exist is an answer too). Asked once per server URL
    in this process; the answer is kept.

    No answer within ``timeout`` s is ``False`` (not kept: asked again next time).

    Raises:
        JcliError: ``SERVER_AUTH_FAILED`` (401/403); nothing is kept.
    """
    base = server_url.rstrip("/")
    with _probe_lock:
        if base in _probed:
            return _probed[base]
    import httpx

    from jupyter_jcli.notebook._collab_protocol import SESSION_REQUEST, file_missing, session_path
    from jupyter_jcli.server import ServerConfig, client_options, status_error

    try:
        with httpx.Client(**client_options(ServerConfig(base + "/", token), timeout)) as client:
            response = client.put(session_path(path), json=SESSION_REQUEST)
    except httpx.HTTPError:
        return False  # no answer: not known to collaborate (not kept; the kernel or the
        # contents store reports the server unreachable with its own code)
    if response.status_code in (401, 403):
        doing = "asking whether the server has real-time collaboration"
        raise status_error(response.status_code, path, doing, details={"server_url": server_url})
    answered = response.is_success or file_missing(response.status_code, response.content)
    with _probe_lock:
        _probed[base] = answered
    return answered


def resolve_ref(
    path_text: str | os.PathLike[str],
    store: NotebookStore,
    *,
    server_root: str | os.PathLike[str] | None = None,
) -> NotebookRef:
    """The ref of the notebook ``path_text`` names in ``store``.

    A local store: the file's ref (``NotebookRef.local``). A server store (``collab``,
    ``contents``): the path relative to ``server_root`` (default: the current folder),
    ``/``-separated, located at the store's ``base_url``. Any other store (``memory``):
    the text as given.

    Raises:
        JcliError: ``SERVER_PATH_OUTSIDE_ROOT`` (details ``notebook_path``,
            ``server_root``) for a server store and a path outside the root.
    """
    from jupyter_jcli.notebook.store import NotebookRef

    text = os.fspath(path_text)
    if store.kind == "local":
        return NotebookRef.local(text)
    if store.kind not in SERVER_STORES:
        return NotebookRef(store.kind, text)
    from jupyter_jcli.server import server_path

    root = Path(os.path.abspath(server_root if server_root is not None else os.getcwd()))
    path = server_path(text, root, resolve=False)  # the stores' rule: paths as written
    location = str(getattr(store, "base_url", "") or "")
    return NotebookRef(store.kind, path, location)


class StoreChoice:
    """The store each notebook of a front end opens in (module docstring).

    Args:
        kind: ``auto``, ``local``, ``collab``, ``contents`` (``None``: ``$JUPYTER_JCLI_STORE``,
            else ``auto``).
        server_url: the Jupyter Server's base URL (already resolved from the front end's
            options and variables); ``None``: no server.
        token: the server's token.
        server_root: the local folder that is the server's root (``--server-root``).
        path_root: the folder local paths of a server store are taken relative to (default
            ``server_root``, else the current folder; a front end passes the root the
            kernel layer maps notebooks with, so a notebook and its kernel agree).
        store: a store to use for every notebook instead (a test's ``MemoryStore``).
        timeout: seconds each request of a server store may take.

    Raises:
        UsageError: ``USAGE_ERROR`` for an unknown kind (:func:`store_kind`), or ``collab``
            or ``contents`` without a server URL (details ``option: "store"``, ``value``).
    """

    def __init__(
        self,
        kind: str | None = None,
        *,
        server_url: str | None = None,
        token: str | None = None,
        server_root: str | os.PathLike[str] | None = None,
        path_root: str | os.PathLike[str] | None = None,
        store: NotebookStore | None = None,
        environ: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.kind = store.kind if store is not None else store_kind(kind, environ=environ)
        if self.kind in SERVER_STORES and not server_url and store is None:
            raise UsageError(
                f"--store {self.kind} needs a Jupyter Server: give --server-url (or "
                "$JUPYTER_JCLI_SERVER_URL)",
                {"option": "store", "value": self.kind},
            )
        self.server_url = server_url or None
        self.token = token
        self.server_root = None if server_root is None else Path(server_root)
        root = path_root if path_root is not None else server_root
        self.path_root = Path(os.path.abspath(root if root is not None else os.getcwd()))
        self.timeout = timeout
        self._fixed = store
        self._stores: dict[str, NotebookStore] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(
        cls, store: NotebookStore, *, path_root: str | os.PathLike[str] | None = None
    ) -> StoreChoice:
        """A choice that opens every notebook in ``store``."""
        return cls(store=store, path_root=path_root)

    @property
    def local_only(self) -> bool:
        """Whether every notebook opens as a local file (no server store can be chosen)."""
        return self.kind == "local" or (self.kind == "auto" and not self.server_url)

    def kind_for(self, path_text: str | os.PathLike[str]) -> str:
        """The kind of store ``path_text`` opens in (``auto`` resolved; module docstring).

        Raises:
            JcliError: the probe's ``SERVER_AUTH_FAILED``.
        """
        if self._fixed is not None or self.kind != "auto":
            return self.kind
        if not self.server_url:
            return "local"
        text = os.fspath(path_text)
        server_path = self._server_path(text)
        if server_path is None and os.path.exists(text):
            return "local"  # a file here, outside the server's root: no server path
        if collab_available(self.server_url, server_path or _as_server_path(text), self.token):
            return "collab"
        if self.server_root is None and not os.path.exists(text):
            return "contents"
        return "local"

    def store_for(self, path_text: str | os.PathLike[str]) -> NotebookStore:
        """The store ``path_text`` opens in (one store object per kind, kept)."""
        if self._fixed is not None:
            return self._fixed
        kind = self.kind_for(path_text)
        if kind == "contents" and self.server_url:
            self._refuse_contents_beside_rooms(os.fspath(path_text))
        with self._lock:
            store = self._stores.get(kind)
            if store is None:
                store = self._stores[kind] = _new_store(
                    kind, self.server_url, self.token, self.timeout
                )
        return store

    def _refuse_contents_beside_rooms(self, text: str) -> None:
        """``--store contents`` on a server with real-time collaboration would ``PUT`` the
        file beneath its open rooms: the room then overwrites what people type, or our
        write (a trial lost a person's typing so). Refused; the room is the way in.

        Raises:
            UsageError: ``USAGE_ERROR`` (details ``option: "store"``, ``reason:
                "server_has_rooms"``).
        """
        assert self.server_url is not None
        server_path = self._server_path(text)
        if server_path is None:
            server_path = _as_server_path(text)
        if collab_available(self.server_url, server_path, self.token):
            raise UsageError(
                f"the Jupyter Server at {self.server_url} has real-time collaboration: a write "
                "through its contents API would go beneath the notebook's live document and "
                "lose what people type in it; use --store collab (or auto)",
                {"option": "store", "value": "contents", "reason": "server_has_rooms"},
            )

    def _server_path(self, text: str) -> str | None:
        """The server path of local path ``text`` under :attr:`path_root` (the stores' rule:
        :func:`jupyter_jcli.server.server_path`, paths as written); ``None`` outside it."""
        from jupyter_jcli.server import server_path

        try:
            return server_path(text, self.path_root, resolve=False)
        except JcliError:
            return None

    def store_of(self, ref: NotebookRef) -> NotebookStore | None:
        """The store of this choice that holds ``ref`` (``None``: a local ref, or a kind
        this choice does not open)."""
        if self._fixed is not None:
            return self._fixed if self._fixed.kind == ref.store else None
        if ref.store not in SERVER_STORES or not self.server_url:
            return None
        with self._lock:
            store = self._stores.get(ref.store)
            if store is None:
                store = self._stores[ref.store] = _new_store(
                    ref.store, self.server_url, self.token, self.timeout
                )
        return store

    def ref_for(self, path_text: str | os.PathLike[str]) -> tuple[NotebookStore, NotebookRef]:
        """The store ``path_text`` opens in and the notebook's ref there."""
        store = self.store_for(path_text)
        return store, resolve_ref(path_text, store, server_root=self.path_root)

    def kernel_path(self, ref: NotebookRef) -> Path:
        """The path that keys the kernel, execution log and kernelspec choice of ``ref`` on this
        machine: a local ref's file; a server store's notebook under :attr:`path_root` (so
        the kernel layer maps it back to the same server path: one session per server
        path, whichever store opened it); any other ref under the current folder."""
        if ref.local_path is not None:
            return ref.local_path
        base = self.path_root if ref.store in SERVER_STORES else Path(os.getcwd())
        return base.joinpath(*PurePosixPath(ref.path).parts)


def _as_server_path(text: str) -> str:
    """``text`` taken as a server path already (a notebook that is no file here)."""
    return PurePosixPath(text).as_posix().lstrip("/")


def _new_store(kind: str, server_url: str | None, token: str | None, timeout: float) -> Any:
    """The store of ``kind``; the server stores are imported by name, on first use."""
    if kind == "local":
        from jupyter_jcli.notebook._local_store import LocalStore

        return LocalStore()
    assert server_url is not None
    if kind == "collab":
        from jupyter_jcli.notebook._collab_store import CollabStore

        return CollabStore(server_url, token, timeout=timeout)
    from jupyter_jcli.notebook._contents_store import ContentsStore

    return ContentsStore(server_url, token, timeout=timeout)


def open_store(
    kind: str | None = None,
    *,
    server_url: str | None = None,
    token: str | None = None,
    server_root: str | os.PathLike[str] | None = None,
    path: str | os.PathLike[str] = "",
    timeout: float = 30.0,
) -> NotebookStore:
    """The store a notebook at ``path`` opens in for ``--store kind`` and the server options
    (:class:`StoreChoice`; ``path`` matters only for ``auto`` with a server).

    Raises:
        UsageError: ``USAGE_ERROR`` (unknown kind; a server kind without ``server_url``).
        JcliError: the probe's ``SERVER_AUTH_FAILED``.
    """
    choice = StoreChoice(
        kind, server_url=server_url, token=token, server_root=server_root, timeout=timeout
    )
    return choice.store_for(path)


_ACTIVE: ContextVar[StoreChoice | None] = ContextVar("jupyter_jcli_store", default=None)


def active_choice() -> StoreChoice | None:
    """The choice made active by the innermost :func:`using_store` block, else ``None``
    (every path opens as a local file)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def using_store(choice: StoreChoice | None) -> Iterator[StoreChoice | None]:
    """Make ``choice`` the active one for the block (and the threads and tasks it starts):
    ``open_notebook`` of a path opens it in the store the choice gives."""
    token = _ACTIVE.set(choice)
    try:
        yield choice
    finally:
        _ACTIVE.reset(token)
