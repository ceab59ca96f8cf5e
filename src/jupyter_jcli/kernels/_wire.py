"""A thin Jupyter messaging client over pyzmq, for joining a running kernel through its
connection file (no ``jupyter_client``, whose package import alone costs more than a whole
``j-cli exec`` on a live kernel should).

The wire format (https://jupyter-client.readthedocs.io/en/latest/messaging.html#the-wire-protocol):
a message is a ZeroMQ multipart message

    [identities..., b"<IDS|MSG>", signature, header, parent_header, metadata, content,
     buffers...]

where the four dict parts are JSON (UTF-8) and ``signature`` is the hex HMAC of those four
parts, in that order, with the connection file's ``key`` and the hash its
``signature_scheme`` names (``hmac-sha256``); an empty key means unsigned messages (an empty
signature). Messages whose signature does not match are dropped, never handed on.

- :class:`WireSession`: signing, framing and parsing (byte-compatible with
  ``jupyter_client.session.Session`` for the same key and scheme).
- :class:`WireClient`: the shell and control (DEALER) and iopub (SUB) sockets of one kernel,
  CurveZMQ-encrypted when the connection file carries a keypair (a kernel started with
  ``transport_encryption``); every receive is bounded by its timeout. A ``blocking`` client
  uses plain pyzmq sockets: its coroutines block instead of suspending, so they run to the end
  without an event loop (:func:`~jupyter_jcli.kernels._blocking.drive`), and neither
  ``asyncio`` nor ``zmq.asyncio`` is imported.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from jupyter_jcli.kernels._server_frames import new_message
from jupyter_jcli.kernels._types import KernelMessage

if TYPE_CHECKING:
    import zmq
    import zmq.asyncio

__all__ = ["DELIMITER", "Channel", "WireClient", "WireError", "WireSession", "read_connection"]

DELIMITER = b"<IDS|MSG>"
"""The frame between the routing identities and the signed message."""
Channel = Literal["shell", "control", "iopub"]
_LINGER_MS = 500
"""How long closing a socket may still deliver what was queued on it."""


class WireError(ValueError):
    """A connection file or a message that is not what the protocol says."""


class WireSession:
    """Signs, frames and parses Jupyter messages for one connection's ``key`` and scheme.

    Args:
        key: the connection file's ``key`` (empty: messages are not signed).
        signature_scheme: ``hmac-<hash>`` (a ``hashlib`` name, e.g. ``hmac-sha256``).
        session: this client's session id (header ``session``).

    Raises:
        WireError: an unknown signature scheme.
    """

    def __init__(self, key: bytes, signature_scheme: str = "hmac-sha256", session: str = ""):
        scheme, _, digest = signature_scheme.partition("-")
        if scheme != "hmac" or digest not in hashlib.algorithms_available:
            raise WireError(f"unknown signature scheme {signature_scheme!r}")
        self.key = key
        self.digest = digest
        self.session = session

    def sign(self, parts: Sequence[bytes]) -> bytes:
        """The signature of the four serialized dict parts (``b""`` without a key)."""
        if not self.key:
            return b""
        mac = hmac.new(self.key, digestmod=self.digest)
        for part in parts:
            mac.update(part)
        return mac.hexdigest().encode("ascii")

    def message(self, msg_type: str, content: Mapping[str, Any]) -> dict[str, Any]:
        """A new request of ``msg_type`` from this session."""
        return new_message(msg_type, dict(content), self.session)

    def serialize(self, msg: KernelMessage, identities: Sequence[bytes] = ()) -> list[bytes]:
        """The frames of ``msg`` (its ``header``, ``parent_header``, ``metadata``,
        ``content`` and ``buffers``), after ``identities``."""
        parts = [
            orjson.dumps(msg.get(name) or {})
            for name in ("header", "parent_header", "metadata", "content")
        ]
        buffers = [bytes(buffer) for buffer in msg.get("buffers") or ()]
        return [*identities, DELIMITER, self.sign(parts), *parts, *buffers]

    def deserialize(self, frames: Sequence[bytes]) -> tuple[list[bytes], dict[str, Any]]:
        """``(identities, message)`` from received frames; the message has ``header``,
        ``parent_header``, ``metadata``, ``content``, ``buffers`` and, as
        ``jupyter_client`` gives them, top-level ``msg_id`` and ``msg_type``.

        Raises:
            WireError: no delimiter, too few parts, a bad signature or a part that is not a
                JSON object.
        """
        frames = [bytes(frame) for frame in frames]
        try:
            at = frames.index(DELIMITER)
        except ValueError:
            raise WireError("a message without the <IDS|MSG> delimiter") from None
        identities, signature, parts = frames[:at], frames[at + 1 : at + 2], frames[at + 2 :]
        if not signature or len(parts) < 4:
            raise WireError("a message with fewer than its five parts")
        if self.key and not hmac.compare_digest(signature[0], self.sign(parts[:4])):
            raise WireError("a message with a bad signature")
        try:
            header, parent, metadata, content = (orjson.loads(part) for part in parts[:4])
        except orjson.JSONDecodeError as err:
            raise WireError(f"a message part that is not JSON: {err}") from err
        if not all(isinstance(d, dict) for d in (header, parent, metadata, content)):
            raise WireError("a message part that is not a JSON object")
        msg = {
            "header": header,
            "msg_id": header.get("msg_id"),
            "msg_type": header.get("msg_type"),
            "parent_header": parent,
            "metadata": metadata,
            "content": content,
            "buffers": parts[4:],
        }
        return identities, msg


def read_connection(path: str | Path) -> dict[str, Any]:
    """The connection file at ``path`` as a dict, checked for what :class:`WireClient` uses.

    Raises:
        WireError: unreadable, not JSON, or without a transport, address, port or key.
    """
    try:
        info = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError) as err:
        raise WireError(f"cannot read the connection file {path}: {err}") from err
    if not isinstance(info, dict):
        raise WireError(f"the connection file {path} is not a JSON object")
    for name, kind in (("ip", str), ("key", str), ("shell_port", int), ("iopub_port", int),
                       ("control_port", int)):  # fmt: skip
        if not isinstance(info.get(name), kind):
            raise WireError(f"the connection file {path} has no valid {name!r}")
    if info.get("transport", "tcp") not in ("tcp", "ipc"):
        raise WireError(f"the connection file {path} names an unknown transport")
    return info


class WireClient:
    """The shell, control and iopub channels of one running kernel.

    Args:
        info: the connection file's contents (:func:`read_connection`).
        session: this client's session id.
        blocking: plain (blocking) sockets instead of ``zmq.asyncio``'s (module docstring).
    """

    def __init__(self, info: Mapping[str, Any], session: str, *, blocking: bool = False) -> None:
        self.info = dict(info)
        self.session = WireSession(
            str(info["key"]).encode("utf-8"),
            str(info.get("signature_scheme") or "hmac-sha256"),
            session,
        )
        self.blocking = blocking
        self._context: zmq.Context[Any] | None = None
        self._sockets: dict[str, Any] = {}
        """Channel -> ``zmq.asyncio.Socket``, or ``zmq.Socket`` when :attr:`blocking`."""

    @property
    def is_open(self) -> bool:
        """Whether the channels are connected (until :meth:`close`)."""
        return bool(self._sockets)

    def _url(self, channel: str) -> str:
        port = int(self.info[f"{channel}_port"])
        if self.info.get("transport", "tcp") == "ipc":
            return f"ipc://{self.info['ip']}-{port}"
        return f"tcp://{self.info['ip']}:{port}"

    def open(self) -> None:
        """Connect the three channels (ZeroMQ connects in the background).

        Raises:
            zmq.ZMQError: a socket that cannot be made or connected.
        """
        import zmq

        if self.blocking:
            context: zmq.Context[Any] = zmq.Context()
        else:
            import zmq.asyncio

            context = zmq.asyncio.Context()
        self._context = context
        public, secret = self.info.get("curve_publickey"), self.info.get("curve_secretkey")
        kinds = {"shell": zmq.DEALER, "control": zmq.DEALER, "iopub": zmq.SUB}
        for channel, kind in kinds.items():
            sock = context.socket(kind)
            sock.linger = _LINGER_MS
            if isinstance(public, str) and isinstance(secret, str):
                # the connection file's keypair: the kernel is the CURVE server of this key
                sock.curve_secretkey = secret.encode("ascii")
                sock.curve_publickey = public.encode("ascii")
                sock.curve_serverkey = public.encode("ascii")
            if kind == zmq.SUB:
                sock.setsockopt(zmq.SUBSCRIBE, b"")
            else:
                sock.identity = self.session.session.encode("ascii")
            self._sockets[channel] = sock
            sock.connect(self._url(channel))

    async def send(self, channel: Channel, msg: KernelMessage) -> None:
        """Sign and send ``msg`` on ``channel`` (``shell`` or ``control``).

        Raises:
            WireError: the channels are closed; zmq.ZMQError: a socket error.
        """
        sent = self._socket(channel).send_multipart(self.session.serialize(msg))
        if not self.blocking:
            await sent

    async def request(
        self, channel: Channel, msg_type: str, content: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Send a new ``msg_type`` request on ``channel``; return the message sent."""
        msg = self.session.message(msg_type, content)
        await self.send(channel, msg)
        return msg

    async def receive(self, channel: Channel, timeout: float) -> dict[str, Any] | None:
        """The next correctly signed message on ``channel``, or ``None`` after ``timeout``
        seconds (messages that are not valid are dropped).

        Raises:
            WireError: the channels are closed; zmq.ZMQError: a socket error.
        """
        import zmq

        sock = self._socket(channel)
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            left = int(max(deadline - time.monotonic(), 0.0) * 1000)
            ready = sock.poll(left) if self.blocking else await sock.poll(left)
            if not ready:
                return None
            received = sock.recv_multipart(zmq.NOBLOCK)
            frames = received if self.blocking else await received
            try:
                return self.session.deserialize(frames)[1]
            except WireError:
                if time.monotonic() >= deadline:
                    return None

    def close(self) -> None:
        """Close the channels (queued messages get :data:`_LINGER_MS` ms). Idempotent."""
        sockets, context = list(self._sockets.values()), self._context
        self._sockets = {}
        self._context = None
        for sock in sockets:
            sock.close(linger=_LINGER_MS)
        if context is not None:
            context.term()

    def _socket(self, channel: Channel) -> Any:
        sock = self._sockets.get(channel)
        if sock is None:
            raise WireError(f"the {channel} channel is closed")
        return sock
