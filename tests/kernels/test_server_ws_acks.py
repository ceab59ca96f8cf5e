"""The kernel WebSocket's TCP acknowledgements (``kernels._server_ws._ack_at_once``): Jupyter
Server leaves Nagle's algorithm on, so this end acknowledges at once (Linux
``TCP_QUICKACK``) after every frame; on a socket that is not TCP it does nothing."""

from __future__ import annotations

import socket
import sys
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_jcli.kernels._server_ws import _ack_at_once


def _connection(sock: socket.socket | None) -> Any:
    transport = SimpleNamespace(get_extra_info=lambda name: sock if name == "socket" else None)
    return SimpleNamespace(transport=transport)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="TCP_QUICKACK is Linux's")
def test_a_tcp_websocket_is_asked_to_acknowledge_at_once_after_a_frame() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    server, _ = listener.accept()
    try:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 0)
        _ack_at_once(_connection(client))
        assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK) == 1
    finally:
        for sock in (client, server, listener):
            sock.close()


def test_a_websocket_over_another_kind_of_socket_or_none_is_left_alone() -> None:
    left, right = socket.socketpair()
    try:
        _ack_at_once(_connection(left))  # a Unix socket has no TCP options: nothing raised
        _ack_at_once(_connection(None))
        _ack_at_once(SimpleNamespace(transport=None))
        left.sendall(b"frame")
        assert right.recv(16) == b"frame"
    finally:
        left.close()
        right.close()
