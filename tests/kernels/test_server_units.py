"""The server backend's pure parts, without a server: both WebSocket framings against Jupyter
Server's own (de)serializers, the mapping of local paths to server paths through the root
(given, or read from the server's runtime file), the error boundary and the factory."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from jupyter_server.services.kernels.connection.base import (
    deserialize_msg_from_ws_v1,
    serialize_binary_message,
    serialize_msg_to_ws_v1,
)
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus
from websockets.http11 import Response

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import LocalBackend, ServerBackend, ServerConfig, backend_factory
from jupyter_jcli.kernels._server_config import local_server_root, server_path, server_root
from jupyter_jcli.kernels._server_frames import (
    V1_PROTOCOL,
    decode_frame,
    encode_legacy,
    encode_v1,
    new_message,
)
from jupyter_jcli.kernels._server_http import server_errors

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


def test_a_notebook_maps_to_its_path_under_the_root_with_slashes(tmp_path: Path) -> None:
    notebook = tmp_path / "a b" / "nb.ipynb"
    assert server_path(notebook, tmp_path) == "a b/nb.ipynb"


def test_a_notebook_outside_the_root_has_no_server_path(tmp_path: Path) -> None:
    with pytest.raises(KernelError) as refused:
        server_path(tmp_path / "nb.ipynb", tmp_path / "root")
    assert refused.value.code == ErrorCode.SERVER_PATH_OUTSIDE_ROOT
    assert refused.value.details["notebook_path"] == str((tmp_path / "nb.ipynb").resolve())


def write_info(runtime: Path, *, port: int, pid: int, root: Path) -> None:
    info = {"url": f"http://127.0.0.1:{port}/user/ana/", "port": port, "base_url": "/user/ana/"}
    info.update(pid=pid, root_dir=str(root))
    (runtime / f"jpserver-{pid}.json").write_text(json.dumps(info), encoding="utf-8")


def test_the_root_of_a_server_on_this_machine_comes_from_its_runtime_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    write_info(runtime, port=8898, pid=os.getpid(), root=tmp_path / "other")
    assert local_server_root(URL) is None  # another server's file
    write_info(runtime, port=8899, pid=os.getpid(), root=tmp_path / "served")
    assert local_server_root(URL) == (tmp_path / "served").resolve()
    given = tmp_path / "given"
    assert server_root(ServerConfig(url=URL, server_root=given)) == given
    assert local_server_root(URL.replace("127.0.0.1", "example.org")) is None


def test_without_a_runtime_file_the_root_is_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "none"))
    monkeypatch.chdir(tmp_path)
    assert server_root(ServerConfig(url=URL)) == tmp_path.resolve()


@pytest.mark.parametrize(
    ("raised", "code"),
    [
        (httpx.ConnectError("refused"), ErrorCode.SERVER_UNREACHABLE),
        (httpx.ReadTimeout("slow"), ErrorCode.SERVER_UNREACHABLE),
        (OSError("no route to host"), ErrorCode.SERVER_UNREACHABLE),
        (InvalidStatus(Response(403, "Forbidden", Headers())), ErrorCode.SERVER_AUTH_FAILED),
        (InvalidStatus(Response(500, "Error", Headers())), ErrorCode.SERVER_ERROR),
    ],
)
def test_transport_errors_become_server_codes_chained_from_the_original(
    raised: Exception, code: ErrorCode
) -> None:
    with pytest.raises(KernelError) as mapped, server_errors("talking", URL):
        raise raised
    assert mapped.value.code == code and mapped.value.__cause__ is raised


def test_the_factory_makes_a_fresh_unstarted_server_backend_per_kernel_life() -> None:
    assert backend_factory(None) is LocalBackend
    config = ServerConfig(url=URL, token="secret")
    factory = backend_factory(config)
    first, second = factory(), factory()
    assert isinstance(first, ServerBackend) and first is not second
    assert first.config == config and first.kernel_id is None and first.pid is None
    assert not first.origin.attached


@pytest.mark.parametrize(
    "url",
    ["http://[::1", "http://127.0.0.1:99999/", "localhost:8888/?token=s3cr3t", "ftp://host/"],
)
def test_a_bad_server_url_is_a_usage_error_that_never_echoes_a_token(url: str) -> None:
    from jupyter_jcli.errors import UsageError
    from jupyter_jcli.kernels import server_config

    with pytest.raises(UsageError) as refused:
        server_config(url, environ={})
    assert refused.value.code == ErrorCode.USAGE_ERROR
    assert "s3cr3t" not in str(refused.value) and "s3cr3t" not in str(refused.value.details)
