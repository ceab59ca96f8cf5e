"""The server backend's pure parts, without a server: both WebSocket framings against Jupyter
Server's own (de)serializers and the factory (the Jupyter Server client it uses:
``tests/server``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jupyter_server.services.kernels.connection.base import (
    deserialize_msg_from_ws_v1,
    serialize_binary_message,
    serialize_msg_to_ws_v1,
)

from jupyter_jcli.kernels import LocalBackend, ServerBackend, ServerConfig, backend_factory
from jupyter_jcli.kernels._server_frames import (
    V1_PROTOCOL,
    decode_frame,
    encode_legacy,
    encode_v1,
    new_message,
)

URL = "http://127.0.0.1:8899/user/ana/"


def a_message() -> dict[str, Any]:
    msg = new_message("execute_request", {"code": "print('é')", "silent": False}, "s1")
    msg["parent_header"] = {"msg_id": "p1"}
    return msg


def test_a_v1_frame_we_send_is_what_jupyter_server_reads() -> None:
    msg = a_message()
    channel, parts = deserialize_msg_from_ws_v1(encode_v1(msg, "shell"))
    assert channel == "shell"
    header, parent, metadata, content = (json.loads(part) for part in parts)
    assert header == msg["header"] and parent == {"msg_id": "p1"} and metadata == {}
    assert content == msg["content"]


def test_a_v1_frame_jupyter_server_sends_is_decoded_with_its_buffers() -> None:
    msg = a_message()
    parts = [json.dumps(msg[key]).encode() for key in ("header", "parent_header", "metadata")]
    parts += [json.dumps(msg["content"]).encode(), b"\x00raw"]
    channel, decoded = decode_frame(serialize_msg_to_ws_v1(parts, "iopub"), V1_PROTOCOL)
    assert channel == "iopub"
    assert decoded["header"] == msg["header"] and decoded["content"] == msg["content"]
    assert decoded["buffers"] == [b"\x00raw"]


def test_legacy_text_and_binary_frames_are_decoded() -> None:
    msg = a_message()
    channel, decoded = decode_frame(encode_legacy(msg, "shell"), None)
    assert channel == "shell" and decoded["content"] == msg["content"]
    binary = serialize_binary_message({**msg, "channel": "iopub", "buffers": [b"abc"]})
    channel, decoded = decode_frame(binary, None)
    assert channel == "iopub" and decoded["buffers"] == [b"abc"]
    assert decoded["header"]["msg_id"] == msg["header"]["msg_id"]


@pytest.mark.parametrize("frame", [b"\x01" + b"\x00" * 7, "[1, 2]"])
def test_a_frame_that_is_no_message_is_refused(frame: str | bytes) -> None:
    with pytest.raises(ValueError):
        decode_frame(frame, V1_PROTOCOL if isinstance(frame, bytes) else None)


def test_the_factory_makes_a_fresh_unstarted_server_backend_per_kernel_life() -> None:
    assert backend_factory(None) is LocalBackend
    config = ServerConfig(url=URL, token="secret")
    factory = backend_factory(config)
    first, second = factory(), factory()
    assert isinstance(first, ServerBackend) and first is not second
    assert first.config == config and first.kernel_id is None and first.pid is None
    assert not first.origin.attached
