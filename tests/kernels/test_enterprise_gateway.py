"""Jupyter Enterprise Gateway 3.3.0 (marker ``server``), in its own virtual environment
(``gateway_helpers``): cells run on its kernels, from the kernel layer and ``j-cli run``; the
``KERNEL_USERNAME`` we send (``--kernel-username``, ``$JUPYTER_JCLI_KERNEL_USERNAME``, else
the local user) reaches the kernel; a user it refuses is ``KERNEL_START_REFUSED`` with its
reason, not a token failure. Every wait is bounded.
"""

from __future__ import annotations

import dataclasses
import getpass
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from gateway_helpers import INSTALL_WAIT, running_enterprise_gateway
from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import NotebookKernel, Output, ServerConfig, backend_factory
from server_helpers import RunningServer, write_notebook

pytestmark = [
    pytest.mark.server,
    pytest.mark.kernel,
    pytest.mark.anyio,
    # the first test to use the gateway may create its environment (57 to 162 s measured)
    pytest.mark.timeout(INSTALL_WAIT + 300),
]

WAIT = 90.0
REFUSED = "mallory"
"""The user the gateway refuses (``EG_UNAUTHORIZED_USERS``; the local user, root on CI,
stays allowed so the default name can be checked)."""
USERNAME = "import os\nprint(os.environ.get('KERNEL_USERNAME'))"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root, work = tmp_path_factory.mktemp("eg-root"), tmp_path_factory.mktemp("eg")
    with running_enterprise_gateway(root, work, {"EG_UNAUTHORIZED_USERS": REFUSED}) as server:
        yield server


@pytest.fixture
async def kernels() -> AsyncIterator[list[NotebookKernel]]:
    made: list[NotebookKernel] = []
    yield made
    with anyio.fail_after(WAIT):
        for kernel in made:
            await kernel.shutdown(now=True)


def kernel_on(made: list[NotebookKernel], config: ServerConfig, path: Path) -> NotebookKernel:
    made.append(NotebookKernel(path, backend_factory=backend_factory(config)))
    return made[-1]


def texts(outputs: list[Output]) -> str:
    return "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")


@pytest.mark.parametrize("name", [None, "ana"], ids=["local-user", "given"])
async def test_cells_run_on_a_gateway_kernel_that_sees_the_kernel_username(
    gateway: RunningServer, kernels: list[NotebookKernel], tmp_path: Path, name: str | None
) -> None:
    config = dataclasses.replace(gateway.config(), kernel_username=name)
    kernel = kernel_on(kernels, config, tmp_path / "nb.ipynb")
    with anyio.fail_after(WAIT):
        result = await kernel.execute(USERNAME)
        info = await kernel.info()
    assert result.status == "ok"
    assert texts(result.outputs) == f"{name or getpass.getuser()}\n"
    assert not info.origin.attached and info.origin.kernel_id is not None


async def test_a_user_the_gateway_refuses_is_kernel_start_refused_with_its_reason(
    gateway: RunningServer, kernels: list[NotebookKernel], tmp_path: Path
) -> None:
    config = dataclasses.replace(gateway.config(), kernel_username=REFUSED)
    kernel = kernel_on(kernels, config, tmp_path / "nb.ipynb")
    with anyio.fail_after(WAIT), pytest.raises(KernelError) as failed:
        await kernel.execute("1")
    error = failed.value
    assert error.code == ErrorCode.KERNEL_START_REFUSED
    assert (error.details["status"], error.details["kernel_username"]) == (403, REFUSED)
    assert REFUSED in error.details["reason"]  # the gateway's own words name the user
    assert (await kernel.info()).state == "not_started"


def j_cli(gateway: RunningServer, tmp_path: Path, *args: str | Path) -> tuple[int, Any]:
    """``j-cli -j ARGS --server-url GATEWAY`` as a user runs it (its token from the
    environment): exit status and JSON document."""
    env = {**os.environ, "JUPYTER_JCLI_SERVER_TOKEN": gateway.token}
    env["JUPYTER_JCLI_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("JUPYTER_JCLI_KERNEL_USERNAME", None)
    command = [sys.executable, "-m", "jupyter_jcli", "-j", *map(str, args)]
    done = subprocess.run(
        [*command, "--server-url", gateway.url],
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT,
        check=False,
    )
    return done.returncode, json.loads(done.stdout)


def test_j_cli_run_runs_the_notebook_on_the_gateway_as_the_given_user(
    gateway: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["a = 20", "b = a + 1", USERNAME + "\nprint(a + b)"])
    status, document = j_cli(gateway, tmp_path, "run", path, "--kernel-username", "ana")
    assert status == 0, document
    cells = document["run"]["cells"]
    assert [c["status"] for c in cells] == ["ok"] * 3
    assert cells[2]["outputs"]["text"].endswith("ana\n41\n")
    assert document["run"]["kernel"]["server_url"] == gateway.url


def test_j_cli_run_as_a_refused_user_says_so_and_writes_nothing(
    gateway: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["x = 1"])
    before = path.read_bytes()
    status, document = j_cli(gateway, tmp_path, "run", path, "--kernel-username", REFUSED)
    assert (status, document["code"]) == (1, ErrorCode.KERNEL_START_REFUSED)
    assert REFUSED in document["details"]["reason"]
    assert path.read_bytes() == before
