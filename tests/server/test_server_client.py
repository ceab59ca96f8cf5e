"""The Jupyter Server client's pure parts, without a server: the mapping of local paths to
server paths through the root (given, or read from the server's runtime file; symbolic links
followed for kernels, paths as written for stores), the one error boundary (raised as the
caller's class), and the URL checks of a config."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus
from websockets.http11 import Response

from jupyter_jcli.errors import ErrorCode, JcliError, KernelError, NotebookError
from jupyter_jcli.server import (
    ServerConfig,
    local_server_root,
    server_errors,
    server_path,
    server_root,
    status_error,
)

URL = "http://127.0.0.1:8899/user/ana/"


def test_a_notebook_maps_to_its_path_under_the_root_with_slashes(tmp_path: Path) -> None:
    notebook = tmp_path / "a b" / "nb.ipynb"
    assert server_path(notebook, tmp_path) == "a b/nb.ipynb"


def test_a_notebook_outside_the_root_has_no_server_path(tmp_path: Path) -> None:
    with pytest.raises(KernelError) as refused:
        server_path(tmp_path / "nb.ipynb", tmp_path / "root", error=KernelError)
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
    with pytest.raises(KernelError) as mapped, server_errors("talking", URL, error=KernelError):
        raise raised
    assert mapped.value.code == code and mapped.value.__cause__ is raised


def test_a_store_gets_the_boundarys_codes_as_its_own_class_with_its_details() -> None:
    with (
        pytest.raises(NotebookError) as mapped,
        server_errors("GET nb.ipynb", URL, error=NotebookError, details={"path": "nb.ipynb"}),
    ):
        raise httpx.ConnectError("refused")
    assert mapped.value.code == ErrorCode.SERVER_UNREACHABLE
    assert mapped.value.details["path"] == "nb.ipynb"
    assert mapped.value.details["server_url"] == URL


def test_an_error_of_ours_and_an_unrelated_exception_pass_the_boundary_unchanged() -> None:
    ours = NotebookError(ErrorCode.FILE_NOT_FOUND, "gone")
    with pytest.raises(NotebookError) as passed, server_errors("talking", URL):
        raise ours
    assert passed.value is ours
    with pytest.raises(KeyError), server_errors("talking", URL):
        raise KeyError("not the transport's")


@pytest.mark.parametrize(
    ("status", "code"),
    [(401, ErrorCode.SERVER_AUTH_FAILED), (403, ErrorCode.SERVER_AUTH_FAILED),
     (500, ErrorCode.SERVER_ERROR), (302, ErrorCode.SERVER_ERROR)],
)  # fmt: skip
def test_an_answers_status_maps_to_the_same_codes_with_the_servers_own_words(
    status: int, code: ErrorCode
) -> None:
    body = json.dumps({"message": "no", "traceback": "Traceback\nValueError: why"}).encode()
    error = status_error(status, "api/x", "asking", body)
    assert type(error) is JcliError and error.code == code
    assert error.details == {"status": status, "path": "api/x", "reason": "no (ValueError: why)"}


def test_kernels_follow_symbolic_links_and_stores_keep_the_path_as_written(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "link").symlink_to(root / "real")
    notebook = root / "link" / "nb.ipynb"
    assert server_path(notebook, root) == "real/nb.ipynb"
    assert server_path(notebook, root, resolve=False) == "link/nb.ipynb"
    outside = tmp_path / "elsewhere"
    outside.symlink_to(root / "real")
    assert server_path(outside / "nb.ipynb", root) == "real/nb.ipynb"
    with pytest.raises(JcliError) as refused:
        server_path(outside / "nb.ipynb", root, resolve=False)
    assert refused.value.code == ErrorCode.SERVER_PATH_OUTSIDE_ROOT


@pytest.mark.parametrize(
    "url",
    ["http://[::1", "http://127.0.0.1:99999/", "localhost:8888/?token=s3cr3t", "ftp://host/"],
)
def test_a_bad_server_url_is_a_usage_error_that_never_echoes_a_token(url: str) -> None:
    from jupyter_jcli.errors import UsageError
    from jupyter_jcli.server import server_config

    with pytest.raises(UsageError) as refused:
        server_config(url, environ={})
    assert refused.value.code == ErrorCode.USAGE_ERROR
    assert "s3cr3t" not in str(refused.value) and "s3cr3t" not in str(refused.value.details)
