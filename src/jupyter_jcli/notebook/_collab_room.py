"""One live connection to one notebook's collaborative room (jupyter-collaboration).

The protocol, as jupyter-server-ydoc 3 and JupyterLab's ``WebSocketProvider`` speak it:

1. ``PUT <base>/api/collaboration/session/<path>`` with ``{"format": "json", "type":
   "notebook"}`` answers ``fileId`` and ``sessionId`` (404: no such file; any other refusal
   of the route: no collaboration on that server).
2. The WebSocket ``<base>/api/collaboration/room/json:notebook:<fileId>?sessionId=<id>``
   (the token and TLS of :mod:`jupyter_jcli.server`, as every request to the server)
   carries y-protocols messages: the server sends
   its SYNC_STEP1 (state vector), we answer SYNC_STEP2 (what it lacks) and send our own
   SYNC_STEP1, whose SYNC_STEP2 answer brings the room's document; then SYNC_UPDATE both
   ways. Close code 1003 with a JSON reason (``version_mismatch``, ``unknown_session``,
   ``initialization_error``) or 44xx refuses the room.

The room's server handles one client's messages in order, so the SYNC_STEP2 answer to a
SYNC_STEP1 we send after an update proves the server applied that update:
:meth:`Room.flush` is that acknowledgement.

A :class:`Room` runs its connection on the store's event-loop thread (:class:`LoopThread`);
every access to its ``pycrdt.Doc`` holds :attr:`Room.lock`. A dropped connection is opened
again (a new session request first). When the server kept its session (same ``sessionId``)
and an update of ours is unacknowledged, the document is merged again (resync: Y.js sends what
the room lacks); otherwise the room is joined with a fresh document (a restarted server
rebuilt its room from the file: merging an older document's items would duplicate cells), and
:attr:`Room.generation` moves on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._collab_protocol import (
    SESSION_REQUEST,
    RoomError,
    check_schema,
    file_missing,
    no_collaboration,
    refusal,
    session_path,
    unreachable,
)

__all__ = ["LoopThread", "Room"]

T = TypeVar("T")

_RECONNECT_PAUSE = 0.2
"""Seconds between two attempts to open a dropped room again."""


class LoopThread:
    """One daemon thread running one asyncio event loop, for every room of a store."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="jcli-collab", daemon=True
        )
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coro`` on the loop; wait at most ``timeout`` s (then cancel it).

        Raises:
            TimeoutError: it did not finish in time.
        """
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def call(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` on the loop thread soon."""
        self.loop.call_soon_threadsafe(fn)

    def stop(self) -> None:
        """Stop the loop and its thread (bounded)."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5.0)
        if not self._thread.is_alive():
            self.loop.close()


class Room:
    """The live shared document of one notebook (module docstring).

    Args:
        loop: the store's event-loop thread.
        base_url: the server's base URL (``http(s)://host:port/base/``).
        token: the server's token, or ``None``.
        path: the notebook's server path (``/``-separated, relative to the root).
        timeout: the longest wait of any step, seconds.
    """

    def __init__(
        self, loop: LoopThread, base_url: str, token: str | None, path: str, timeout: float
    ) -> None:
        from jupyter_jcli.server import ServerConfig

        self.loop = loop
        self.base_url = base_url.rstrip("/") + "/"
        self.server = ServerConfig(self.base_url, token)
        self.path = path
        self.timeout = timeout
        self.lock = threading.RLock()
        """Held for every access to :attr:`doc` (the loop thread applies remote updates)."""
        self.generation = 0
        """Moves on each time the room is joined with a fresh document."""
        self.session_id = ""
        self.file_id = ""
        self._new_doc()
        self._socket: Any = None
        self._queue: asyncio.Queue[bytes] | None = None
        self._synced = threading.Event()
        self._acks = 0
        self._asked = 0
        self._connection = 0
        self._ack_changed = threading.Condition()
        self._closed = False
        self._unacked = False
        self._failure: NotebookError | None = None
        self._task: concurrent.futures.Future[None] | None = None
        self._http: Any = None

    # ------------------------------------------------------------------ document

    def _new_doc(self) -> None:
        from jupyter_ydoc import YNotebook
        from pycrdt import Doc

        with self.lock:
            self.doc: Doc[Any] = Doc()
            self.notebook = YNotebook(self.doc)
            self._applying = False
            self._subscription = self.doc.observe(self._on_update)
            self._cells_subscription = self.notebook.ycells.observe_deep(self._on_cells)
            self._mirror: list[dict[str, Any] | None] | None = None
            self.generation += 1

    def cells(self) -> list[dict[str, Any]]:
        """Every live cell as an nbformat dict (``YNotebook.get_cell``), kept between calls
        and rebuilt only where the document changed since (converting a shared cell is slow:
        a 2,000-cell notebook takes about half a second). Call it holding :attr:`lock`; the
        dicts are the room's: copy before changing one."""
        ycells = self.notebook.ycells
        if self._mirror is None or len(self._mirror) != len(ycells):
            self._mirror = [None] * len(ycells)
        mirror = self._mirror
        for index, cell in enumerate(mirror):
            if cell is None:
                mirror[index] = self.notebook.get_cell(index)
        return mirror  # type: ignore[return-value]

    def _on_cells(self, events: Any) -> None:
        """Forget the converted cells a transaction changed (a deep event's path is the
        cell's index after the transaction; the cell list's own delta is relative to the
        list before it)."""
        mirror = self._mirror
        if mirror is None:
            return
        for event in events:
            if list(event.path):
                continue
            at = 0
            for step in event.delta:
                if "retain" in step:
                    at += int(step["retain"])
                elif "delete" in step:
                    del mirror[at : at + int(step["delete"])]
                elif "insert" in step:
                    count = len(step["insert"])
                    mirror[at:at] = [None] * count
                    at += count
        for event in events:
            path = list(event.path)
            if path and isinstance(path[0], int) and path[0] < len(mirror):
                mirror[path[0]] = None

    def _on_update(self, event: Any) -> None:
        """A transaction on the document: send our own changes to the room."""
        if self._applying:
            return
        from pycrdt import create_update_message

        message = create_update_message(event.update)
        self._unacked = True
        queue = self._queue
        if queue is not None:
            self.loop.call(lambda: queue.put_nowait(message))

    # ------------------------------------------------------------------ connection

    def open(self) -> None:
        """Join the room and wait (bounded) until its document is here.

        Raises:
            NotebookError: ``COLLAB_UNAVAILABLE``, ``FILE_NOT_FOUND``, ``SERVER_AUTH_FAILED``,
                ``SERVER_UNREACHABLE``, ``COLLAB_VERSION_MISMATCH``.
        """
        self._task = asyncio.run_coroutine_threadsafe(self._serve(), self.loop.loop)
        self.wait_synced()

    def wait_synced(self) -> None:
        """Wait (bounded) until the connection is up and synced.

        Raises:
            NotebookError: why the room cannot be joined, or ``SERVER_UNREACHABLE``.
        """
        deadline = time.monotonic() + self.timeout
        while not self._synced.wait(0.05):
            if self._failure is not None:
                raise self._failure
            if self._closed or time.monotonic() >= deadline:
                raise unreachable(self, "the room did not answer in time")

    def flush(self) -> None:
        """Wait (bounded) until the room's server has applied every update we sent.

        Raises:
            NotebookError: ``SERVER_UNREACHABLE`` (the connection is down and did not come
                back in time; an update of ours not acknowledged is sent on a resync).
        """
        from pycrdt import create_sync_message

        deadline = time.monotonic() + self.timeout
        while True:
            self.wait_synced()
            queue = self._queue
            with self.lock:
                message = create_sync_message(self.doc)
            with self._ack_changed:
                self._asked += 1
                target, connection = self._asked, self._connection
            if queue is not None:
                self.loop.call(lambda q=queue, m=message: q.put_nowait(m))  # type: ignore[misc]
            with self._ack_changed:
                while (
                    self._acks < target and self._synced.is_set() and self._connection == connection
                ):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise unreachable(self, "the room did not acknowledge our change")
                    self._ack_changed.wait(min(left, 0.1))
                if self._acks >= target and self._connection == connection:
                    self._unacked = False
                    return
            if time.monotonic() >= deadline:
                raise unreachable(self, "the room did not acknowledge our change")

    def file_path_now(self) -> str | None:
        """The server path of the room's file now, or ``None`` when the server knows no
        file of its id (deleted): its file id follows a rename (jupyter-server-fileid's
        ``GET api/fileid/path?id=``, bounded). The room outlives its file (jupyter-collaboration
        keeps it while anyone is joined, its saves failing), so a room kept open is checked
        before it is used (``CollabStore.room``).

        Raises:
            NotebookError: ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``.
        """
        where = self._ask(self._request("GET", "api/fileid/path", params={"id": self.file_id}))
        found: Any = None
        with contextlib.suppress(ValueError):
            found = where.json().get("path") if where.status_code == 200 else None
        return found.strip("/") if isinstance(found, str) else None

    def path_has_file(self) -> bool:
        """Whether a file is at the room's path now (the contents API, bounded).

        Raises:
            NotebookError: ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``.
        """
        url = f"api/contents/{quote(self.path)}"
        return bool(self._ask(self._request("GET", url, params={"content": 0})).status_code == 200)

    def _ask(self, coro: Coroutine[Any, Any, T]) -> T:
        """``coro`` (one bounded request) run on the loop from another thread."""
        try:
            return self.loop.run(coro, self.timeout + 5.0)
        except TimeoutError:
            raise unreachable(self, "the server did not answer in time") from None

    def close(self) -> None:
        """Leave the room (bounded); the document stays readable."""
        self._closed = True
        socket = self._socket
        if socket is not None:
            with contextlib.suppress(Exception):
                self.loop.run(socket.close(), 5.0)
        if self._task is not None:
            self._task.cancel()
        http, self._http = self._http, None
        if http is not None:
            with contextlib.suppress(Exception):
                self.loop.run(http.aclose(), 5.0)

    def drop(self) -> None:
        """Abort the connection as a network drop would (for fault tests)."""
        socket = self._socket
        if socket is not None:
            self.loop.call(socket.transport.abort)

    async def _serve(self) -> None:
        first = True
        while not self._closed:
            try:
                await self._connect_once(first)
            except NotebookError as err:
                if first or err.code != ErrorCode.SERVER_UNREACHABLE:
                    self._failure = err
                    return
            except Exception:  # a dropped connection: try again
                if first:
                    self._failure = unreachable(self, "the room's WebSocket failed")
                    return
            first = False
            self._synced.clear()
            with self._ack_changed:
                self._ack_changed.notify_all()
            if not self._closed:
                await asyncio.sleep(_RECONNECT_PAUSE)

    async def _session(self) -> dict[str, Any]:
        """The room's session (jupyter-collaboration's ``fileId`` and ``sessionId``).

        Raises:
            NotebookError: ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED`` (the boundary of
                :mod:`jupyter_jcli.server`), ``FILE_NOT_FOUND``, ``COLLAB_UNAVAILABLE``.
        """
        answer = await self._request("PUT", session_path(self.path), json=SESSION_REQUEST)
        if file_missing(answer.status_code, answer.content):
            raise RoomError(
                ErrorCode.FILE_NOT_FOUND,
                f"No notebook {self.path} on the Jupyter Server at {self.base_url}.",
                {"path": self.path, "url": self.base_url},
            )
        body: Any = None
        with contextlib.suppress(ValueError):
            body = answer.json()
        if answer.status_code not in (200, 201) or not isinstance(body, dict):
            raise no_collaboration(self.base_url, answer.status_code)
        if "fileId" not in body or "sessionId" not in body:
            raise no_collaboration(self.base_url, answer.status_code)
        return body

    async def _request(self, method: str, url: str, **options: Any) -> Any:
        """One request to the server about the room (its ``httpx.Response``), through the
        room's one HTTP client (on the loop thread; closed with the room).

        Raises:
            NotebookError: ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED`` (the boundary of
                :mod:`jupyter_jcli.server`).
        """
        import httpx

        from jupyter_jcli.server import client_options, server_errors, status_error

        doing = f"asking for the room of {self.path}"
        where = {"path": self.path}
        with server_errors(doing, self.base_url, error=RoomError, details=where):
            if self._http is None:  # kept: making a client (its TLS context) takes ~40 ms
                self._http = httpx.AsyncClient(**client_options(self.server, self.timeout))
            answer = await self._http.request(method, url, **options)
        if answer.status_code in (401, 403):
            facts = {"server_url": self.base_url}  # as the boundary's own errors say
            raise status_error(answer.status_code, self.path, doing, error=RoomError, details=facts)
        return answer

    async def _connect_once(self, first: bool) -> None:
        from pycrdt import create_sync_message
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        session = await self._session()
        same = session["sessionId"] == self.session_id
        if not first and not (same and self._unacked):
            self._new_doc()  # the room may have been rebuilt from the file: start afresh
        self.session_id, self.file_id = str(session["sessionId"]), str(session["fileId"])
        room = f"json:notebook:{self.file_id}"
        url = self.base_url.replace("http", "ws", 1) + f"api/collaboration/room/{room}"
        url += "?" + urlencode({"sessionId": self.session_id})
        from jupyter_jcli.server import websocket_options

        async with connect(
            url, **websocket_options(self.server, url), max_size=None, open_timeout=self.timeout
        ) as socket:
            queue: asyncio.Queue[bytes] = asyncio.Queue()
            self._socket, self._queue = socket, queue
            with self.lock:
                queue.put_nowait(create_sync_message(self.doc))
            with self._ack_changed:
                self._asked, self._acks = 1, 0
                self._connection += 1
            sender = asyncio.ensure_future(_send(socket, queue))
            try:
                await self._receive(socket, queue)
            except ConnectionClosed:
                pass
            finally:
                sender.cancel()
                self._socket, self._queue = None, None
                self._synced.clear()
        code, reason = socket.close_code, socket.close_reason or ""
        if code is not None:
            refusal(self, code, reason)

    async def _receive(self, socket: Any, queue: asyncio.Queue[bytes]) -> None:
        from pycrdt import YMessageType, YSyncMessageType

        async for message in socket:
            if isinstance(message, str) or not message or message[0] != YMessageType.SYNC:
                continue
            reply = self._apply(message)
            if reply is not None:
                queue.put_nowait(reply)
            if message[1] == YSyncMessageType.SYNC_STEP2:
                with self._ack_changed:
                    self._acks += 1
                    self._ack_changed.notify_all()
                if not self._synced.is_set():
                    check_schema(self)
                    self._synced.set()

    def _apply(self, message: bytes) -> bytes | None:
        from pycrdt import handle_sync_message

        with self.lock:
            self._applying = True
            try:
                return handle_sync_message(message[1:], self.doc)
            finally:
                self._applying = False


async def _send(socket: Any, queue: asyncio.Queue[bytes]) -> None:
    while True:
        message = await queue.get()
        await socket.send(message)
