"""``jupyter-mcp --server-url GATEWAY`` over stdio with the MCP SDK's client, on a real
Jupyter Enterprise Gateway 3.3.0 in its own virtual environment (``gateway_helpers``): stale
cells run on a gateway kernel started as the ``--kernel-username`` given, and a user the
gateway refuses is a tool error ``KERNEL_START_REFUSED`` the model can read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from workbench_client import call, module_params, ok, open_session, server_env

from gateway_helpers import INSTALL_WAIT, running_enterprise_gateway
from server_helpers import RunningServer, write_notebook

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.server,
    pytest.mark.kernel,
    pytest.mark.timeout(INSTALL_WAIT + 300),  # the gateway's environment may be created
]

REFUSED = "mallory"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root, work = tmp_path_factory.mktemp("eg-root"), tmp_path_factory.mktemp("eg")
    with running_enterprise_gateway(root, work, {"EG_UNAUTHORIZED_USERS": REFUSED}) as server:
        yield server


async def test_jupyter_mcp_runs_stale_cells_on_a_gateway_kernel_as_the_given_user(
    gateway: RunningServer, tmp_path: Path
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    source = "import os\nprint(os.environ['KERNEL_USERNAME'], a + 1)"
    path = write_notebook(root, ["a = 20", source])
    env = server_env(tmp_path / "cache", JUPYTER_JCLI_SERVER_TOKEN=gateway.token)
    args = ("--root", str(root), "--server-url", gateway.url, "--kernel-username", "ana")
    async with open_session(module_params(*args, env=env), tmp_path / "mcp.log") as session:
        ran = await ok(session, "run_stale", path=path.name)
        assert [cell["status"] for cell in ran["cells"]] == ["ok", "ok"]
        assert ran["cells"][1]["outputs"]["text"].endswith("ana 21\n")
        assert ran["kernel"]["server_url"] == gateway.url and ran["kernel"]["kernel_id"]
        again = await ok(session, "run_stale", path=path.name)
        assert [cell for cell in again["cells"] if cell["status"] != "skipped"] == []


async def test_jupyter_mcp_as_a_refused_user_gets_kernel_start_refused_with_the_reason(
    gateway: RunningServer, tmp_path: Path
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    path = write_notebook(root, ["x = 1"])
    env = server_env(
        tmp_path / "cache",
        JUPYTER_JCLI_SERVER_TOKEN=gateway.token,
        JUPYTER_JCLI_KERNEL_USERNAME=REFUSED,  # the variable, as a host's config passes it
    )
    args = ("--root", str(root), "--server-url", gateway.url)
    async with open_session(module_params(*args, env=env), tmp_path / "mcp.log") as session:
        result, document = await call(session, "run_stale", path=path.name)
    assert result.is_error
    assert document["code"] == "KERNEL_START_REFUSED"
    assert document["details"]["kernel_username"] == REFUSED
    assert REFUSED in document["details"]["reason"]
