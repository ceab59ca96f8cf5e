"""The kernel start request without a server (httpx's mock transport): the ``KERNEL_USERNAME``
sent (option, then ``$JUPYTER_JCLI_KERNEL_USERNAME``, then the local user), and an HTTP error
answering the start (the token already accepted) as ``KERNEL_START_REFUSED`` with the
server's own reason, as Enterprise Gateway 3.3.0 words it
(``enterprise_gateway/mixins.py``: ``JSONErrorsMixin.write_error``)."""

from __future__ import annotations

import getpass
import json
from typing import Any

import httpx
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError, UsageError
from jupyter_jcli.kernels import ServerConfig, server_config
from jupyter_jcli.kernels._server_http import ServerApi
from jupyter_jcli.server import kernel_username

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:8899/"
USER_REFUSED = {  # EG's answer to a KERNEL_USERNAME in EG_UNAUTHORIZED_USERS (HTTP 403)
    "reason": "User 'root' is not authorized to start kernel 'Python 3'. Ensure "
    "KERNEL_USERNAME is set to an appropriate value and retry the request.",
    "message": "",
}
LAUNCH_FAILED = {  # EG's answer to an exception that is not an HTTPError (HTTP 500)
    "reason": "Internal Server Error",
    "message": "Unknown server error",
    "traceback": "Traceback (most recent call last):\n  ...\nRuntimeError: launcher died\n",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_kernel_username_is_the_option_then_the_variable_then_the_local_user() -> None:
    env = {"JUPYTER_JCLI_KERNEL_USERNAME": "from-env"}
    given = server_config(URL, kernel_username="ana", environ=env)
    from_env = server_config(URL, environ=env)
    neither = server_config(URL, environ={})
    assert given is not None and from_env is not None and neither is not None
    assert (given.kernel_username, from_env.kernel_username) == ("ana", "from-env")
    assert neither.kernel_username is None
    assert kernel_username(neither) == getpass.getuser()
    assert "ana" in repr(given)


@pytest.mark.parametrize(
    ("url", "name"), [(URL, ""), (URL, "  "), (None, "ana")], ids=["empty", "blank", "no-server"]
)
def test_a_kernel_username_that_cannot_be_sent_is_a_usage_error(url: str | None, name: str) -> None:
    # An empty name fell back to the local user (root: refused by a gateway, for a reason
    # the user did not choose); without a server it was silently ignored.
    with pytest.raises(UsageError) as caught:
        server_config(url, kernel_username=name, environ={})
    assert caught.value.code == ErrorCode.USAGE_ERROR


def api_answering(status: int, document: dict[str, Any], sent: list[Any]) -> ServerApi:
    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(status, json=document)

    api = ServerApi(ServerConfig(URL, token="t"))
    api._client = httpx.AsyncClient(base_url=URL, transport=httpx.MockTransport(answer))
    return api


async def test_the_start_request_carries_the_env_given() -> None:
    sent: list[Any] = []
    api = api_answering(201, {"id": "k1", "name": "python3"}, sent)
    env = {"KERNEL_USERNAME": "ana", "KERNEL_WORKING_DIR": "/w"}
    assert await api.start_kernel("python3", env, 10.0) == "k1"
    assert sent == [{"name": "python3", "env": env}]
    await api.aclose()


@pytest.mark.parametrize(
    ("status", "document", "said"),
    [
        (403, USER_REFUSED, "User 'root' is not authorized"),
        (500, LAUNCH_FAILED, "RuntimeError: launcher died"),
        (401, {"reason": "Unauthorized", "message": "Invalid auth token"}, "Invalid auth token"),
    ],
    ids=["user-refused", "launch-failed", "unauthorized"],
)
async def test_an_http_error_answering_the_start_is_kernel_start_refused_with_the_reason(
    status: int, document: dict[str, Any], said: str
) -> None:
    api = api_answering(status, document, [])
    with pytest.raises(KernelError) as refused:
        await api.start_kernel("python3", {"KERNEL_USERNAME": "root"}, 10.0)
    error = refused.value
    assert error.code == ErrorCode.KERNEL_START_REFUSED
    assert (error.details["status"], error.details["kernel_username"]) == (status, "root")
    assert said in error.details["reason"]
    assert error.details["server_url"] == URL
    assert isinstance(error.__cause__, KernelError)
    await api.aclose()


async def test_a_session_the_server_refuses_to_create_is_kernel_start_refused() -> None:
    api = api_answering(500, {"message": "No such kernel spec"}, [])
    with pytest.raises(KernelError) as refused:
        await api.create_session({"path": "nb.ipynb", "type": "notebook"}, 10.0)
    assert refused.value.code == ErrorCode.KERNEL_START_REFUSED
    assert "kernel_username" not in refused.value.details  # none is sent with a session
    await api.aclose()


async def test_an_unreachable_server_at_the_start_stays_server_unreachable() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    api = ServerApi(ServerConfig(URL))
    api._client = httpx.AsyncClient(base_url=URL, transport=httpx.MockTransport(refuse))
    with pytest.raises(KernelError) as failed:
        await api.start_kernel("python3", {}, 10.0)
    assert failed.value.code == ErrorCode.SERVER_UNREACHABLE
    await api.aclose()
