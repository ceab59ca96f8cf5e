"""The contents-API store: a notebook on a Jupyter Server whose disk we do not share (a
JupyterHub user server, a remote server), read and written through its REST contents API
(``store.NotebookStore``; https://jupyter-server.readthedocs.io/en/latest/developers/rest-api.html).

- **read**: ``GET api/contents/<path>?content=1&hash=1``. The version
  (:class:`ContentsVersion`) is the server's ``hash`` of the file's bytes (Jupyter Server
  >= 2.11; for a jupytext pair, both files'), else the sha256 of the model's canonical
  content; ``last_modified`` is carried, not compared (a touch is no change). The
  ``metadata.trusted`` marks the server adds to code cells (its notary's view, dropped by
  nbformat on every save) are removed.
- **commit**: the cell operations are applied to the notebook as read at the expected
  version (kept from the last read, else read again and compared), the body is serialised,
  then the version is checked once more (``GET ...?content=0&hash=1``: no content, only the
  hash; a full ``GET`` on a server without hashes) and at once ``PUT`` with ``type:
  "notebook"``. A notebook changed since is ``WRITE_CONFLICT`` (``version_changed``) and
  nothing is written. **The window**: the contents API has no conditional write, so a save
  by another client landing on the server between that check and our ``PUT`` (one network
  round trip, nothing computed in between) is overwritten; the local store's window (a save
  between its last comparison and the rename) is the same in kind. Writers on this machine
  are serialised by :meth:`ContentsStore.lock` (an advisory ``flock`` in the cache folder,
  keyed by ``NotebookRef.key``); the server has no lock. What a commit returns is read after
  the ``PUT``. A ``PUT`` whose answer is lost (``SERVER_UNREACHABLE``, a timeout) may have
  been written: no undo record is kept for it, and the next read shows what the server holds.
- **create**: ``PUT`` of a new model after a ``GET`` found none (``FILE_EXISTS`` otherwise;
  the same window: the API has no create-only write).
- **undo records** stay on this machine, in the snapshot stack of the ref's key
  (``snapshots.SnapshotStore.keyed``: the cell-level record, prepared before the ``PUT`` and
  made current after it). **Kernel**: on the server, started in the notebook's folder.
- **A paired ``.py``** goes through the same API when the server runs jupytext's contents
  manager (JupyterLab's jupytext extension): the server reads a ``.py`` as a notebook and
  writes both files of the pair on ``PUT``; we pair nothing ourselves (two ``PUT`` s would
  be two windows and half a pair on a failure, and would fight the server's own jupytext).
  A server that answers with a plain file is refused: ``FILE_TYPE_UNSUPPORTED``.
- **Trust**: as with the local store (a changed file no longer matches its signature), the
  server signs what we ``PUT`` only when no cell has rich output.

Errors (``NotebookError``, codes of the one catalogue; details never hold the token)::

    HTTP 404                                   -> FILE_NOT_FOUND (as the local store)
    HTTP 401 / 403                             -> SERVER_AUTH_FAILED
    any other unexpected status or document    -> SERVER_ERROR (details ``status``)
    connection refused, DNS, TLS, timeout      -> SERVER_UNREACHABLE
    an answer over MAX_NOTEBOOK_BYTES          -> NOTEBOOK_READ_FAILED (``too_large``)

Every request is bounded by the store's ``timeout`` (seconds, the whole answer included).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._open import MAX_NOTEBOOK_BYTES
from jupyter_jcli.notebook.snapshots import LOCK_TIMEOUT, SnapshotStore
from jupyter_jcli.notebook.store import (
    KernelPlace,
    NotebookRef,
    StoreChange,
    StoreRead,
    UndoEntry,
    Version,
    apply_ops,
    stale_version_error,
)

__all__ = ["ContentsStore", "ContentsVersion"]

KIND = "contents"


@dataclass(frozen=True)
class ContentsVersion:
    """The version of a server's notebook: ``digest`` decides (``"<algorithm>:<hex>"`` of
    the server's hash of the file, or ``"content-sha256:<hex>"`` of the canonical content
    when the server gives no hash); ``last_modified`` (the server's ISO time) is carried."""

    digest: str
    last_modified: str = field(default="", compare=False)


class ContentsStore:
    """Notebooks on a Jupyter Server, through its contents API (module docstring).

    Args:
        base_url: the server's base URL with its path prefix (``http://127.0.0.1:8000/``,
            ``https://hub.example.org/user/ana/``); a trailing ``/`` is added.
        token: sent as ``Authorization: token <token>`` (a Jupyter Server token, or a
            JupyterHub API token of the user); ``None``: no header.
        timeout: seconds one request may take, its whole answer included.
        verify: verify TLS certificates (``True``), or the path of a CA bundle.
        base_dir: the cache base folder of the undo records and locks; default
            ``snapshots.cache_dir()``.
    """

    kind = KIND

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        verify: bool | str = True,
        base_dir: Path | None = None,
    ) -> None:
        import httpx

        from jupyter_jcli.server import ServerConfig, client_options

        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self._timeout = timeout
        self._base_dir = base_dir
        self.server = ServerConfig(self.base_url, token, verify=verify)
        self._client = httpx.Client(**client_options(self.server, timeout))
        self._last: dict[str, tuple[Version, bytes]] = {}
        """Per ref key, the version and the answer of its last read: the base of a commit at
        that version (parsed again, so no caller's change to a read can reach the server)."""
        self._hashes = True
        self._guard = threading.Lock()

    def ref(self, path: str) -> NotebookRef:
        """The ref of the notebook at ``path`` (relative to the server's root)."""
        return NotebookRef(KIND, path.strip("/"), location=self.base_url)

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def __enter__(self) -> ContentsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the protocol

    def read(self, ref: NotebookRef) -> StoreRead:
        """The notebook and its :class:`ContentsVersion` (``GET``). Writes nothing.

        When this store read the notebook before and the server gives hashes, the hash is
        asked first (``content=0``: the server neither parses nor validates the notebook) and
        the last answer is used again while it is unchanged.

        Raises:
            NotebookError: ``FILE_NOT_FOUND``, ``FILE_TYPE_UNSUPPORTED`` (not a notebook for
                the server), and the codes of the module docstring.
        """
        path = self._path(ref)
        with self._guard:
            last = self._last.get(ref.key)
        if last is not None and self._hashes:
            probe = self._model(
                _json(self._request("GET", path, {"content": "0", "hash": "1"}), path), path
            )
            if probe.get("hash") and self._version(probe) == last[0]:
                return self._parsed(last[1], path)
        raw = self._request("GET", path, {"content": "1", "hash": "1"})
        read = self._parsed(raw, path)
        with self._guard:
            self._last[ref.key] = (read.version, raw)
        return read

    def _parsed(self, raw: bytes, path: str) -> StoreRead:
        """The notebook of a ``GET`` answer with content, and its version."""
        model = self._model(_json(raw, path), path)
        content = model.get("content")
        if not isinstance(content, dict) or not isinstance(content.get("cells"), list):
            raise _server_error(path, 200, "the notebook model has no cells")
        version = self._version(model, content)
        for cell in content["cells"]:
            metadata = cell.get("metadata") if isinstance(cell, dict) else None
            if isinstance(metadata, dict):
                metadata.pop("trusted", None)
        return StoreRead(content, version)

    def commit(self, ref: NotebookRef, change: StoreChange) -> StoreRead:
        """See ``store.NotebookStore.commit`` and the module docstring (the window).

        Raises:
            NotebookError: ``WRITE_CONFLICT`` (``version_changed``, ``cell_changed``), the
                snapshot's ``NOTEBOOK_WRITE_FAILED``, the codes of the module docstring.
                Nothing is written on the server nor recorded.
        """
        ops, undo, pop = change.ops, change.undo, change.pop
        path = self._path(ref)
        with self._guard:
            last = self._last.get(ref.key)
        checked = False
        base = self._parsed(last[1], path) if last and last[0] == change.version else None
        if base is None:
            base = self.read(ref)
            if base.version != change.version:
                raise stale_version_error(ref)
            checked = True
        cells, _origins = apply_ops(base.notebook["cells"], ops, where=str(ref))
        records = self._records(ref)
        if not ops:
            if not checked:
                self._check(ref, path, change.version)
            if pop is not None:
                records.discard(pop.handle)
            return base
        body = json.dumps(
            {"type": "notebook", "format": "json", "content": {**base.notebook, "cells": cells}}
        ).encode("utf-8")
        pending = records.prepare(undo[0], (), undo[1]) if undo is not None else None
        try:
            if not checked:
                self._check(ref, path, change.version)
            self._request("PUT", path, body=body)
            written = self.read(ref)
        except BaseException:
            if pending is not None:
                records.discard(pending)
            raise
        if pending is not None:
            try:
                records.commit(pending)
            except NotebookError:
                self._put_back(ref, path, written.version, base.notebook)
                raise
        if pop is not None:
            records.discard(pop.handle)
        return written

    def create(self, ref: NotebookRef, notebook: dict[str, Any]) -> StoreRead:
        """Create the notebook on the server (``PUT``), never replacing one.

        Raises:
            NotebookError: ``FILE_EXISTS``; the codes of the module docstring.
        """
        path = self._path(ref)
        if self._request("GET", path, {"content": "0"}, missing_ok=True):
            raise NotebookError(
                ErrorCode.FILE_EXISTS, f"{path} already exists on {self.base_url}.", {"path": path}
            )
        body = json.dumps({"type": "notebook", "format": "json", "content": notebook})
        self._request("PUT", path, body=body.encode("utf-8"))
        return self.read(ref)

    @contextmanager
    def lock(self, ref: NotebookRef, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
        """The notebook's write lock on this machine (``flock`` in the cache folder, keyed
        by ``ref.key``): one jupyter-jcli writer at a time here; the server has none.

        Raises:
            NotebookError: ``WRITE_CONFLICT`` (``reason: "lock_timeout"``, ``timeout_s``).
        """
        self._path(ref)
        with self._records(ref).lock(timeout):
            yield

    def undo_entries(self, ref: NotebookRef) -> list[UndoEntry]:
        """The notebook's undo records on this machine, oldest first. Creates nothing."""
        self._path(ref)
        return self._records(ref).undo_entries()

    def kernel_place(self, ref: NotebookRef) -> KernelPlace:
        """A kernel on the server, started in the notebook's folder (a server path)."""
        return KernelPlace("server", url=self.base_url, cwd=posixpath.dirname(self._path(ref)))

    # ------------------------------------------------------------------ helpers

    def _path(self, ref: NotebookRef) -> str:
        if ref.store != KIND or ref.location != self.base_url:
            raise NotebookError(
                ErrorCode.USAGE_ERROR,
                f"{ref} is not a notebook of the contents store of {self.base_url}.",
                {"path": ref.path, "store": ref.store, "location": ref.location},
            )
        return ref.path.strip("/")

    def _records(self, ref: NotebookRef) -> SnapshotStore:
        name = posixpath.basename(ref.path) or ref.path
        return SnapshotStore.keyed(ref.key, name, base_dir=self._base_dir)

    def _version(self, model: dict[str, Any], content: Any = None) -> ContentsVersion:
        modified = str(model.get("last_modified") or "")
        digest = model.get("hash")
        if isinstance(digest, str) and digest:
            return ContentsVersion(f"{model.get('hash_algorithm', '')}:{digest}", modified)
        self._hashes = False
        canonical = json.dumps(content, sort_keys=True, separators=(",", ":"))
        return ContentsVersion(
            "content-sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest(), modified
        )

    def _check(self, ref: NotebookRef, path: str, expected: Version) -> None:
        """Refuse (``WRITE_CONFLICT``) unless the server's notebook is still at ``expected``:
        its hash alone when the server gives one, else the whole notebook."""
        if self._hashes:
            model = self._model(
                _json(self._request("GET", path, {"content": "0", "hash": "1"}), path), path
            )
            if model.get("hash"):
                if self._version(model) != expected:
                    raise stale_version_error(ref)
                return
        if self.read(ref).version != expected:
            raise stale_version_error(ref)

    def _put_back(
        self, ref: NotebookRef, path: str, written: Version, notebook: dict[str, Any]
    ) -> None:
        """Restore ``notebook`` after its undo record could not be kept, if the server still
        holds what we wrote (never over another client's save)."""
        try:
            self._check(ref, path, written)
            body = json.dumps({"type": "notebook", "format": "json", "content": notebook})
            self._request("PUT", path, body=body.encode("utf-8"))
        except NotebookError:
            pass

    def _model(self, answer: Any, path: str) -> dict[str, Any]:
        if not isinstance(answer, dict):
            raise _server_error(path, 200, "the answer is not a contents model")
        if answer.get("type") != "notebook":
            raise NotebookError(
                ErrorCode.FILE_TYPE_UNSUPPORTED,
                f"{path} is a {answer.get('type')!r} for the server at {self.base_url}, not a "
                "notebook (a .py is a notebook there only when the server runs jupytext's "
                "contents manager; else open its paired .ipynb).",
                {"path": path, "type": answer.get("type"), "reason": "not_a_notebook"},
            )
        return answer

    def _request(
        self,
        method: str,
        path: str,
        params: dict[str, str] | None = None,
        *,
        body: bytes | None = None,
        missing_ok: bool = False,
    ) -> bytes:
        """One request, its answer's body (``b""`` for a 404 with ``missing_ok``), through the
        one error boundary of :mod:`jupyter_jcli.server`."""
        import httpx

        from jupyter_jcli.server import server_errors, status_error

        doing, where = f"{method} {path}", {"path": path, "server_url": self.base_url}
        deadline = time.monotonic() + self._timeout
        headers = {"Content-Type": "application/json"} if body is not None else None
        with (
            server_errors(doing, self.base_url, error=NotebookError, details=where),
            self._client.stream(
                method,
                "api/contents/" + quote(path, safe="/"),
                params=params,
                content=body,
                headers=headers,
            ) as response,
        ):
            raw = bytearray()
            for chunk in response.iter_bytes():
                raw += chunk
                if len(raw) > MAX_NOTEBOOK_BYTES:
                    raise NotebookError(
                        ErrorCode.NOTEBOOK_READ_FAILED,
                        f"{path}'s answer from {self.base_url} is over {MAX_NOTEBOOK_BYTES} bytes.",
                        {"path": path, "reason": "too_large", "limit": MAX_NOTEBOOK_BYTES},
                    )
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the answer took too long")
            status = response.status_code
        if status == 404 and missing_ok:
            return b""
        if status == 404:
            raise NotebookError(
                ErrorCode.FILE_NOT_FOUND,
                f"No notebook {path} on the server at {self.base_url}.",
                where,
            )
        if not 200 <= status < 300:
            raise status_error(status, path, doing, bytes(raw), error=NotebookError, details=where)
        return bytes(raw)


def _json(raw: bytes, path: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        raise _server_error(path, 200, "the answer is not JSON") from None


def _server_error(path: str, status: int, said: str | None) -> NotebookError:
    details: dict[str, Any] = {"path": path, "status": status}
    if said:
        details["reason"] = said
    return NotebookError(
        ErrorCode.SERVER_ERROR,
        f"The Jupyter Server answered HTTP {status} for {path}" + (f" ({said})" if said else ""),
        details,
    )
