"""The two framings of a kernel's Jupyter Server WebSocket.

Whichever the server selects during the handshake
(https://jupyter-server.readthedocs.io/en/latest/developers/websocket-protocols.html):

- ``v1.kernel.websocket.jupyter.org``: one binary frame per message: ``n`` (8-byte little
  endian), then ``n`` offsets (8-byte little endian), then the channel name and the message
  parts (header, parent header, metadata, content, buffers...) as the offsets delimit them.
- the legacy JSON framing (no subprotocol): one text frame, the message as JSON with a
  ``channel`` key; a message with binary buffers comes as a binary frame (``n`` as a 4-byte
  big endian count, ``n`` 4-byte big endian offsets, the JSON message, then the buffers).

Messages are Jupyter messages (https://jupyter-client.readthedocs.io/en/latest/messaging.html);
the server signs what it forwards to the kernel, so a client never signs.
"""

from __future__ import annotations

import itertools
import struct
import uuid
from datetime import datetime, timezone
from typing import Any

import orjson

from jupyter_jcli.kernels._types import KernelMessage

__all__ = ["V1_PROTOCOL", "decode_frame", "encode_legacy", "encode_v1", "new_message"]

V1_PROTOCOL = "v1.kernel.websocket.jupyter.org"
"""The binary kernel WebSocket subprotocol of Jupyter Server 2."""
_PROTOCOL_VERSION = "5.3"


def new_message(msg_type: str, content: dict[str, Any], session: str) -> dict[str, Any]:
    """A Jupyter message (protocol 5.3) of ``msg_type`` from client session ``session``."""
    return {
        "header": {
            "msg_id": uuid.uuid4().hex,
            "msg_type": msg_type,
            "username": "jupyter-jcli",
            "session": session,
            "date": datetime.now(timezone.utc).isoformat(),
            "version": _PROTOCOL_VERSION,
        },
        "parent_header": {},
        "metadata": {},
        "content": content,
        "buffers": [],
    }


_PARTS = ("header", "parent_header", "metadata", "content")


def encode_v1(msg: KernelMessage, channel: str) -> bytes:
    """``msg`` as one ``v1.kernel.websocket.jupyter.org`` binary frame."""
    parts = [channel.encode(), *(orjson.dumps(msg.get(key) or {}) for key in _PARTS)]
    offsets = list(itertools.accumulate(map(len, parts), initial=8 * (len(parts) + 2)))
    return struct.pack(f"<{len(offsets) + 1}Q", len(offsets), *offsets) + b"".join(parts)


def encode_legacy(msg: KernelMessage, channel: str) -> str:
    """``msg`` as one legacy JSON text frame."""
    frame = {key: msg.get(key) or {} for key in _PARTS}
    return orjson.dumps({**frame, "channel": channel, "buffers": []}).decode()


def decode_frame(frame: str | bytes, protocol: str | None) -> tuple[str, dict[str, Any]]:
    """``(channel, message)`` from one frame of the framing ``protocol`` (``None``: legacy).

    Raises:
        ValueError: a frame that is not a message of that framing.
    """
    if protocol == V1_PROTOCOL:
        if not isinstance(frame, bytes):
            raise ValueError("a v1 kernel frame must be binary")
        count = int.from_bytes(frame[:8], "little")
        if count < 2 or len(frame) < 8 * (count + 1):
            raise ValueError("a v1 kernel frame with too few offsets")
        bounds = struct.unpack_from(f"<{count}Q", frame, 8)
        channel = frame[bounds[0] : bounds[1]].decode()
        parts = [frame[start:end] for start, end in itertools.pairwise(bounds[1:])]
        if len(parts) < 4:
            raise ValueError("a v1 kernel frame without its four message parts")
        msg = dict(zip(_PARTS, map(orjson.loads, parts[:4]), strict=True))
        return channel, {**msg, "buffers": parts[4:]}
    if isinstance(frame, bytes):
        (count,) = struct.unpack("!I", frame[:4])
        offsets = [*struct.unpack(f"!{count}I", frame[4 : 4 * (count + 1)]), len(frame)]
        pieces = [frame[start:end] for start, end in itertools.pairwise(offsets)]
        msg = orjson.loads(pieces[0])
        msg["buffers"] = pieces[1:]
    else:
        msg = orjson.loads(frame)
    if not isinstance(msg, dict):
        raise ValueError("a legacy kernel frame that is not a JSON object")
    return str(msg.pop("channel", "shell")), msg
