"""The collaboration protocol's edges, for ``_collab_room`` and the store choice's probe: the
session request (its path, its body, the handler's "no such file" answer), how a
room refuses us (close codes and the session handler's answers, as jupyter-server-ydoc 3 and
JupyterLab's ``WebSocketProvider`` read them), and the jupyter-ydoc schema check of a room's
document."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from jupyter_jcli.errors import ErrorCode, NotebookError

if TYPE_CHECKING:
    from jupyter_jcli.notebook._collab_room import Room

__all__ = [
    "SESSION_REQUEST",
    "RoomError",
    "check_schema",
    "expected_schema",
    "file_missing",
    "no_collaboration",
    "refusal",
    "session_path",
    "unreachable",
]

SESSION_REQUEST = {"format": "json", "type": "notebook"}
"""The body of jupyter-collaboration's session request (``PUT``) for a notebook."""


class RoomError(NotebookError):
    """The room could not be reached or refused us (a ``NotebookError`` with a code)."""


def session_path(path: str) -> str:
    """The session request's REST path (under the server's base URL) of the notebook at
    server path ``path``."""
    return f"api/collaboration/session/{quote(path.lstrip('/'))}"


def file_missing(status: int, body: bytes) -> bool:
    """Whether a session request's answer is the collaboration handler's own 404 (a JSON
    ``message``: the file does not exist), not the server's page for an unknown route."""
    try:
        document = json.loads(body) if status == 404 else None
    except ValueError:
        return False
    return (
        isinstance(document, dict)
        and "fileId" not in document
        and "does not exist" in str(document.get("message", ""))
    )


def refusal(room: Room, code: int, reason: str) -> None:
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


def unreachable(room: Room, why: str) -> NotebookError:
    return RoomError(
        ErrorCode.SERVER_UNREACHABLE,
        f"The room of {room.path} on {room.base_url} could not be reached: {why}.",
        {"url": room.base_url, "path": room.path, "timeout_s": room.timeout},
    )
