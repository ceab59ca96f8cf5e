"""One live connection to one notebook's collaborative room (jupyter-collaboration).

The protocol, as jupyter-server-ydoc 3 and JupyterLab's ``WebSocketProvider`` speak it:

1. ``PUT <base>/api/collaboration/session/<path>`` with ``{"format": "json", "type":
   "notebook"}`` answers ``fileId`` and ``sessionId`` (404: no such file; any other refusal
   of the route: no collaboration on that server).
2. The WebSocket ``<base>/api/collaboration/room/json:notebook:<fileId>?sessionId=<id>``
   (the token as ``Authorization: token ...``) carries y-protocols messages: the server sends
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
import json
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from jupyter_jcli.errors import ErrorCode, NotebookError

__all__ = ["LoopThread", "Room", "RoomError", "session_url"]

T = TypeVar("T")

_RECONNECT_PAUSE = 0.2
"""Seconds between two attempts to open a dropped room again."""


class RoomError(NotebookError):
    """The room could not be reached or refused us (a ``NotebookError`` with a code)."""


def session_url(base_url: str, path: str) -> str:
    """The session request URL of the notebook at server path ``path``."""
    return f"{base_url.rstrip('/')}/api/collaboration/session/{quote(path)}"


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
        self.loop = loop
        self.base_url = base_url.rstrip("/") + "/"
        self.token = token
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

    # ------------------------------------------------------------------ document

    def _new_doc(self) -> None:
        from jupyter_ydoc import YNotebook
        from pycrdt import Doc

        with self.lock:
            self.doc: Doc[Any] = Doc()
            self.notebook = YNotebook(self.doc)
            self._applying = False
            self._subscription = self.doc.observe(self._on_update)
            self.generation += 1

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
                raise _unreachable(self, "the room did not answer in time")

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
                        raise _unreachable(self, "the room did not acknowledge our change")
                    self._ack_changed.wait(min(left, 0.1))
                if self._acks >= target and self._connection == connection:
                    self._unacked = False
                    return
            if time.monotonic() >= deadline:
                raise _unreachable(self, "the room did not acknowledge our change")

    def close(self) -> None:
        """Leave the room (bounded); the document stays readable."""
        self._closed = True
        socket = self._socket
        if socket is not None:
            with contextlib.suppress(Exception):
                self.loop.run(socket.close(), 5.0)
        if self._task is not None:
            self._task.cancel()

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
                    self._failure = _unreachable(self, "the room's WebSocket failed")
                    return
            first = False
            self._synced.clear()
            with self._ack_changed:
                self._ack_changed.notify_all()
            if not self._closed:
                await asyncio.sleep(_RECONNECT_PAUSE)

    async def _session(self) -> dict[str, Any]:
        import httpx

        headers = {"Authorization": f"token {self.token}"} if self.token else {}
        try:
            async with httpx.AsyncClient(timeout=self.timeout, headers=headers) as client:
                answer = await client.put(
                    session_url(self.base_url, self.path),
                    json={"format": "json", "type": "notebook"},
                )
        except httpx.HTTPError as err:
            raise _unreachable(self, f"{type(err).__name__}: {err}") from err
        if answer.status_code in (401, 403):
            raise RoomError(
                ErrorCode.SERVER_AUTH_FAILED,
                f"The Jupyter Server at {self.base_url} refused the token.",
                {"url": self.base_url, "status": answer.status_code},
            )
        body: Any = None
        with contextlib.suppress(ValueError):
            body = answer.json()
        if answer.status_code == 404 and isinstance(body, dict) and "fileId" not in body:
            message = str(body.get("message", ""))
            if "does not exist" in message:
                raise RoomError(
                    ErrorCode.FILE_NOT_FOUND,
                    f"No notebook {self.path} on the Jupyter Server at {self.base_url}.",
                    {"path": self.path, "url": self.base_url},
                )
        if answer.status_code not in (200, 201) or not isinstance(body, dict):
            raise no_collaboration(self.base_url, answer.status_code)
        if "fileId" not in body or "sessionId" not in body:
            raise no_collaboration(self.base_url, answer.status_code)
        return body

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
        headers = {"Authorization": f"token {self.token}"} if self.token else {}
        async with connect(
            url, additional_headers=headers, max_size=None, open_timeout=self.timeout
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
            _refusal(self, code, reason)

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


def _refusal(room: Room, code: int, reason: str) -> None:
    """Raise for a close of the room that is a refusal, not a drop."""
    if code == 1003:
        payload: Any = None
        with contextlib.suppress(ValueError):
            payload = json.loads(reason)
        why = payload.get("reason") if isinstance(payload, dict) else reason
        if why == "version_mismatch":
            raise RoomError(
                ErrorCode.COLLAB_VERSION_MISMATCH,
                f"The Jupyter Server at {room.base_url} serves another collaborative document "
                "version; nothing was read or written.",
                {"url": room.base_url, "expected": expected_schema(), "found": None},
            )
        if why == "unknown_session":
            return  # a restarted server: the next attempt asks for a session again
        raise RoomError(
            ErrorCode.SERVER_ERROR,
            f"The Jupyter Server at {room.base_url} could not open the room of {room.path}.",
            {"url": room.base_url, "path": room.path, "close_code": code, "reason": why},
        )
    if code == 4404:
        raise RoomError(
            ErrorCode.FILE_NOT_FOUND,
            f"No notebook {room.path} on the Jupyter Server at {room.base_url}.",
            {"path": room.path, "url": room.base_url},
        )
    if code in (4400, 4500):
        raise RoomError(
            ErrorCode.SERVER_ERROR,
            f"The Jupyter Server at {room.base_url} could not load {room.path} into its room.",
            {"url": room.base_url, "path": room.path, "close_code": code},
        )


def expected_schema() -> str:
    """The collaborative notebook schema version of the installed jupyter-ydoc."""
    from jupyter_ydoc import YNotebook

    return str(YNotebook().version)


def check_schema(room: Room) -> None:
    """Refuse a room whose document is not of our jupyter-ydoc's notebook schema.

    The schema shows in the document itself: a notebook of jupyter-ydoc >= 3 (schema 2.0.0)
    keeps ``meta`` as a map with ``nbformat``, each cell as a map whose ``source`` is a text
    and whose ``metadata`` is a map, and a stream output's ``text`` as a text; jupyter-ydoc
    1 and 2 (schema 1.0.0) keep a stream output as plain JSON inside a map.

    Raises:
        NotebookError: ``COLLAB_VERSION_MISMATCH`` (details ``expected``, ``found``).
    """
    from pycrdt import Map, Text

    found = ""
    with room.lock:
        meta = room.notebook._ymeta
        if len(room.notebook.ycells) or "nbformat" in meta:
            if not isinstance(meta.get("metadata", Map()), Map):
                found = "meta.metadata is not a map"
            for ycell in room.notebook.ycells:
                if found:
                    break
                if not isinstance(ycell, Map) or not isinstance(ycell.get("source"), Text):
                    found = "a cell's source is not a text"
                    break
                for output in ycell.get("outputs", None) or ():
                    if (
                        isinstance(output, Map)
                        and output.get("output_type") == "stream"
                        and not isinstance(output.get("text"), Text)
                    ):
                        found = "a stream output's text is not a text"
    if found:
        raise RoomError(
            ErrorCode.COLLAB_VERSION_MISMATCH,
            f"The notebook {room.path} on {room.base_url} is a collaborative document of "
            f"another jupyter-ydoc major ({found}); nothing was read or written.",
            {"url": room.base_url, "expected": expected_schema(), "found": found},
        )


def no_collaboration(base_url: str, status: int | None) -> NotebookError:
    """``COLLAB_UNAVAILABLE``: the server does not serve collaboration sessions."""
    return RoomError(
        ErrorCode.COLLAB_UNAVAILABLE,
        f"The Jupyter Server at {base_url} has no real-time collaboration "
        "(jupyter-collaboration): its live document cannot be opened.",
        {"url": base_url, "status": status},
    )


def _unreachable(room: Room, why: str) -> NotebookError:
    return RoomError(
        ErrorCode.SERVER_UNREACHABLE,
        f"The room of {room.path} on {room.base_url} could not be reached: {why}.",
        {"url": room.base_url, "path": room.path, "timeout_s": room.timeout},
    )
