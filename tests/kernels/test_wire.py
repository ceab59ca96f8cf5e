"""Our Jupyter messaging wire format against ``jupyter_client.session.Session``: the same
frames for the same message and key, each side reads and verifies the other's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.session import Session

from jupyter_jcli.kernels._wire import DELIMITER, WireError, WireSession, read_connection

KEY = b"5f7c3c1e-6d1a-4c7e-9d3b-0b6f2b1e9a44"
CONTENT = {"code": "print('é ✓')\n1/0", "silent": False, "user_expressions": {"a": "1"}}


def _message(session: WireSession) -> dict[str, Any]:
    msg = session.message("execute_request", CONTENT)
    msg["parent_header"] = {"msg_id": "p1", "msg_type": "kernel_info_request"}
    msg["metadata"] = {"deletedCells": [], "n": 3.5}
    return msg


@pytest.mark.parametrize("scheme", ["hmac-sha256", "hmac-sha512"])
def test_our_frames_are_the_bytes_jupyter_clients_session_makes_for_the_same_message(
    scheme: str,
) -> None:
    ours = WireSession(KEY, scheme, "s1")
    theirs = Session(key=KEY, signature_scheme=scheme, session="s1")
    msg = _message(ours)
    identities = [b"peer-1"]
    assert ours.serialize(msg, identities) == theirs.serialize(msg, ident=identities)


def test_jupyter_clients_session_verifies_and_reads_our_messages() -> None:
    ours = WireSession(KEY, "hmac-sha256", "s1")
    msg = _message(ours)
    frames = ours.serialize(msg, [b"peer-1"])
    theirs = Session(key=KEY, signature_scheme="hmac-sha256")
    identities, rest = theirs.feed_identities(frames)
    read = theirs.deserialize(rest)
    assert identities == [b"peer-1"]
    assert read["content"] == CONTENT
    assert read["header"]["msg_id"] == msg["header"]["msg_id"]
    assert read["parent_header"] == msg["parent_header"]
    assert read["metadata"] == msg["metadata"]


def test_we_verify_and_read_jupyter_clients_session_messages_with_their_buffers() -> None:
    theirs = Session(key=KEY, signature_scheme="hmac-sha256", session="k1")
    sent = theirs.msg("display_data", {"data": {"text/plain": "x"}, "metadata": {}})
    frames = theirs.serialize(sent, ident=[b"a", b"b"])
    frames.append(b"\x00raw buffer")
    identities, read = WireSession(KEY, "hmac-sha256").deserialize(frames)
    assert identities == [b"a", b"b"]
    assert read["header"]["msg_id"] == sent["header"]["msg_id"]
    assert read["msg_type"] == read["header"]["msg_type"] == "display_data"
    assert read["content"] == sent["content"]
    assert read["buffers"] == [b"\x00raw buffer"]


def test_unsigned_messages_round_trip_with_an_empty_key() -> None:
    ours = WireSession(b"", "hmac-sha256", "s1")
    frames = ours.serialize(_message(ours))
    assert frames[frames.index(DELIMITER) + 1] == b""
    assert Session(key=b"").deserialize(Session(key=b"").feed_identities(frames)[1])
    assert ours.deserialize(frames)[1]["content"] == CONTENT


@pytest.mark.parametrize(
    "tamper",
    [
        lambda frames: [*frames[:-1], frames[-1].replace(b"1/0", b"2/0")],  # content changed
        lambda frames: [f for f in frames if f != DELIMITER],  # no delimiter
        lambda frames: frames[:4],  # parts missing
    ],
    ids=["content-changed", "no-delimiter", "parts-missing"],
)
def test_a_message_that_is_not_signed_by_the_key_or_not_whole_is_refused(tamper: Any) -> None:
    ours = WireSession(KEY, "hmac-sha256", "s1")
    frames = ours.serialize(_message(ours))
    with pytest.raises(WireError):
        ours.deserialize(tamper(frames))
    with pytest.raises(WireError):
        WireSession(b"another key", "hmac-sha256").deserialize(frames)


def test_an_unknown_signature_scheme_is_refused() -> None:
    with pytest.raises(WireError):
        WireSession(KEY, "rsa-sha256")


def test_a_connection_file_without_its_ports_or_key_is_refused(tmp_path: Path) -> None:
    good = {"ip": "127.0.0.1", "key": "k", "shell_port": 1, "iopub_port": 2,
            "control_port": 3, "transport": "tcp", "signature_scheme": "hmac-sha256"}  # fmt: skip
    path = tmp_path / "kernel.json"
    path.write_text(json.dumps(good), "utf-8")
    assert read_connection(path)["shell_port"] == 1
    for broken in ({**good, "shell_port": "1"}, {**good, "transport": "udp"}, [good]):
        path.write_text(json.dumps(broken), "utf-8")
        with pytest.raises(WireError):
            read_connection(path)
    path.write_text("{not json", "utf-8")
    with pytest.raises(WireError):
        read_connection(path)
    with pytest.raises(WireError):
        read_connection(tmp_path / "missing.json")


class _FakeKernel:
    """The kernel's side of the three channels (ROUTER shell and control, PUB iopub) on
    ephemeral loopback ports, signing with ``jupyter_client``'s Session."""

    def __init__(self, key: bytes, curve: tuple[bytes, bytes] | None) -> None:
        import zmq

        self.context = zmq.Context()
        self.session = Session(key=key, signature_scheme="hmac-sha256", session="kernel")
        self.sockets: dict[str, Any] = {}
        self.info: dict[str, Any] = {"ip": "127.0.0.1", "transport": "tcp", "key": key.decode(),
                                     "signature_scheme": "hmac-sha256"}  # fmt: skip
        if curve is not None:
            self.info["curve_publickey"], self.info["curve_secretkey"] = (k.decode() for k in curve)
        for channel, kind in (("shell", zmq.ROUTER), ("control", zmq.ROUTER), ("iopub", zmq.PUB)):
            sock = self.context.socket(kind)
            sock.linger = 0
            if curve is not None:
                sock.curve_publickey, sock.curve_secretkey = curve
                sock.curve_server = True
            self.info[f"{channel}_port"] = sock.bind_to_random_port("tcp://127.0.0.1")
            self.sockets[channel] = sock

    def close(self) -> None:
        self.context.destroy(linger=0)


@pytest.fixture(params=["plain", "curve"])
def fake_kernel(request: pytest.FixtureRequest) -> Any:
    import zmq

    kernel = _FakeKernel(KEY, zmq.curve_keypair() if request.param == "curve" else None)
    yield kernel
    kernel.close()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_client_gets_replies_drops_forged_messages_and_bounds_every_wait(
    fake_kernel: _FakeKernel, anyio_backend: str
) -> None:
    import anyio

    from jupyter_jcli.kernels._wire import WireClient

    client = WireClient(fake_kernel.info, "client-1")
    client.open()
    try:
        with anyio.fail_after(30):
            assert await client.receive("shell", 0.2) is None  # nothing came: bounded
            sent = await client.request("shell", "execute_request", {"code": "1"})
            frames = fake_kernel.sockets["shell"].recv_multipart()
            identities, rest = fake_kernel.session.feed_identities(frames)
            request = fake_kernel.session.deserialize(rest)
            assert identities == [b"client-1"]
            assert request["content"] == {"code": "1"}
            shell = fake_kernel.sockets["shell"]
            forged = Session(key=b"not the key", signature_scheme="hmac-sha256")
            fake_kernel.session.send(shell, "execute_reply", {"status": "first"},
                                     parent=request, ident=identities)  # fmt: skip
            shell.send_multipart(forged.serialize(
                forged.msg("execute_reply", {"status": "forged"}), ident=identities))  # fmt: skip
            fake_kernel.session.send(shell, "execute_reply", {"status": "ok"},
                                     parent=request, ident=identities)  # fmt: skip
            first = await client.receive("shell", 10.0)
            second = await client.receive("shell", 10.0)
            assert first is not None and second is not None
            assert first["content"] == {"status": "first"}
            assert second["content"] == {"status": "ok"}  # the forged one was dropped
            assert second["parent_header"]["msg_id"] == sent["header"]["msg_id"]
            assert await client.receive("shell", 0.2) is None
            iopub = fake_kernel.sockets["iopub"]
            status = None
            while status is None:  # the subscription joins in the background
                fake_kernel.session.send(iopub, "status", {"execution_state": "idle"},
                                         parent=request)  # fmt: skip
                status = await client.receive("iopub", 0.2)
            assert status["msg_type"] == "status"
    finally:
        client.close()
    with pytest.raises(WireError):
        await client.receive("shell", 0.1)  # closed: refused, not a wait
