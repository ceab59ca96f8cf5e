"""Faults between us and a Jupyter Server (marker ``server``): a wrong token, no server, a
notebook outside the root, the server stopped during an execution, the WebSocket dropped,
the server restarted; and a Jupyter Kernel Gateway instead of a server. Each gives its
code, keeps the output already received, and the next call works or says why.
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import (
    KERNEL_WORKING_DIR,
    NotebookKernel,
    Output,
    ServerBackend,
    ServerConfig,
    backend_factory,
)
from server_helpers import DroppingProxy, RunningServer, free_port, running_server

pytestmark = [pytest.mark.server, pytest.mark.anyio]

WAIT = 90.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server of this test alone (it gets stopped or restarted)."""
    with running_server(tmp_path_factory.getbasetemp(), tmp_path_factory.mktemp("own")) as server:
        yield server


@pytest.fixture
async def kernel_for(tmp_path: Path) -> AsyncIterator[list[NotebookKernel]]:
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


async def start_fails(kernel: NotebookKernel) -> KernelError:
    with anyio.fail_after(WAIT), pytest.raises(KernelError) as failed:
        await kernel.execute("1")
    assert (await kernel.info()).state == "not_started"
    return failed.value


async def test_a_wrong_token_is_server_auth_failed(
    jupyter_server: RunningServer, kernel_for: list[NotebookKernel], tmp_path: Path
) -> None:
    config = jupyter_server.config(token="not-the-token")
    failed = await start_fails(kernel_on(kernel_for, config, tmp_path / "nb.ipynb"))
    assert failed.code == ErrorCode.SERVER_AUTH_FAILED
    assert "not-the-token" not in str(failed.to_dict())


async def test_no_server_listening_is_server_unreachable(
    kernel_for: list[NotebookKernel], tmp_path: Path
) -> None:
    config = ServerConfig(url=f"http://127.0.0.1:{free_port()}/", token="t", server_root=tmp_path)
    failed = await start_fails(kernel_on(kernel_for, config, tmp_path / "nb.ipynb"))
    assert failed.code == ErrorCode.SERVER_UNREACHABLE


async def test_a_notebook_outside_the_server_root_is_refused(
    jupyter_server: RunningServer, kernel_for: list[NotebookKernel], tmp_path: Path
) -> None:
    config = jupyter_server.config(root=tmp_path / "elsewhere")
    failed = await start_fails(kernel_on(kernel_for, config, tmp_path / "nb.ipynb"))
    assert failed.code == ErrorCode.SERVER_PATH_OUTSIDE_ROOT
    assert failed.details["server_root"] == str((tmp_path / "elsewhere").resolve())


async def test_a_first_handshake_slower_than_the_connect_timeout_is_within_the_start_budget(
    jupyter_server: RunningServer,
    kernel_for: list[NotebookKernel],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The server holds the first WebSocket handshake until the new kernel answers its
    # kernel_info request: on a loaded machine that outlasts any connect timeout.
    monkeypatch.setattr("jupyter_jcli.kernels._server.CONNECT_TIMEOUT", 0.001)
    kernel = kernel_on(kernel_for, jupyter_server.config(), tmp_path / "nb.ipynb")
    with anyio.fail_after(WAIT):
        result = await kernel.execute("print(6 * 7)")
    assert result.status == "ok" and texts(result.outputs) == "42\n"


@pytest.mark.parametrize("how", ["kill", "stop"])
async def test_a_server_gone_during_an_execution_ends_it_with_its_outputs_so_far(
    own_server: RunningServer, kernel_for: list[NotebookKernel], tmp_path: Path, how: str
) -> None:
    kernel = kernel_on(kernel_for, own_server.config(), tmp_path / "nb.ipynb")
    end = own_server.kill if how == "kill" else own_server.stop

    async def end_on_go(output: Output) -> None:
        if output.get("text") == "go\n":
            await anyio.to_thread.run_sync(end)

    with anyio.fail_after(WAIT):
        result = await kernel.execute(
            "import time\nprint('go')\ntime.sleep(60)\nprint('never')", on_output=end_on_go
        )
    # Killed, the server just vanishes; stopped, it first shuts its kernels down, which
    # interrupts the cell before the kernel ends: either way the kernel died under the cell.
    assert (result.status, result.ename) == ("died", None)
    assert texts(result.outputs) == "go\n"
    with anyio.fail_after(WAIT):
        while await kernel.is_alive():
            await anyio.sleep(0.2)
    failed = await start_fails(kernel)
    assert failed.code == ErrorCode.SERVER_UNREACHABLE


async def test_a_dropped_websocket_is_reopened_and_the_running_cell_ends_whole(
    jupyter_server: RunningServer, kernel_for: list[NotebookKernel], tmp_path: Path
) -> None:
    async with DroppingProxy(jupyter_server.port) as proxy:
        config = ServerConfig(
            url=proxy.url(jupyter_server),
            token=jupyter_server.token,
            server_root=jupyter_server.root,
        )
        kernel = kernel_on(kernel_for, config, tmp_path / "nb.ipynb")

        async def drop_on_first(output: Output) -> None:
            if output.get("text") == "first\n":
                proxy.drop()

        code = "import time\nprint('first')\ntime.sleep(2)\nprint('second')\n'done'"
        with anyio.fail_after(WAIT):
            await kernel.execute("kept = 'yes'")
            result = await kernel.execute(code, on_output=drop_on_first)
            after = await kernel.execute("kept")
    assert proxy.dropped > 0
    assert result.status == "ok" and texts(result.outputs) == "first\nsecond\n"
    assert result.outputs[-1]["data"]["text/plain"] == "'done'"
    assert after.status == "ok" and after.epoch == result.epoch
    assert after.outputs[0]["data"]["text/plain"] == "'yes'"


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_after_a_server_restart_the_next_execution_starts_a_new_kernel(
    own_server: RunningServer, kernel_for: list[NotebookKernel], tmp_path: Path, how: str
) -> None:
    kernel = kernel_on(kernel_for, own_server.config(), tmp_path / "nb.ipynb")
    with anyio.fail_after(WAIT):
        first = await kernel.execute("lost = 1")
        # Stopped, the server shuts the kernel down (it says so); killed, it says nothing
        # and our WebSocket is still being reopened when the next call comes.
        await anyio.to_thread.run_sync(lambda: own_server.restart(kill=how == "kill"))
        again = await kernel.execute("'lost' in dir()")
    assert first.status == "ok"
    assert again.status == "ok" and again.kernel_restarted and again.epoch != first.epoch
    assert again.outputs[0]["data"]["text/plain"] == "False"


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command makes the test certificate")
    root, work = tmp_path_factory.getbasetemp(), tmp_path_factory.mktemp("tls")
    with running_server(root, work, tls=True) as server:
        yield server


async def test_tls_is_verified_unless_the_server_certificate_is_trusted(
    tls_server: RunningServer, kernel_for: list[NotebookKernel], tmp_path: Path
) -> None:
    untrusted = dataclasses.replace(tls_server.config(), verify=True)
    failed = await start_fails(kernel_on(kernel_for, untrusted, tmp_path / "a.ipynb"))
    assert failed.code == ErrorCode.SERVER_UNREACHABLE
    assert "CERTIFICATE_VERIFY_FAILED" in failed.details["reason"]
    trusted = kernel_on(kernel_for, tls_server.config(), tmp_path / "b.ipynb")
    with anyio.fail_after(WAIT):
        result = await trusted.execute("print('over wss')")
    assert result.status == "ok" and texts(result.outputs) == "over wss\n"


@pytest.fixture(scope="module")
def kernel_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root, work = tmp_path_factory.mktemp("gateway-root"), tmp_path_factory.mktemp("gateway")
    with running_server(root, work, kind="kernelgateway") as server:
        yield server


async def test_a_kernel_gateway_runs_cells_on_a_kernel_given_the_working_folder(
    kernel_gateway: RunningServer, kernel_for: list[NotebookKernel], tmp_path: Path
) -> None:
    kernel = kernel_on(kernel_for, kernel_gateway.config(), tmp_path / "nb.ipynb")
    code = f"import os\nprint(os.environ[{KERNEL_WORKING_DIR!r}])\nprint(6 * 7)"
    with anyio.fail_after(WAIT):
        result = await kernel.execute(code)
        info = await kernel.info()
    assert result.status == "ok"
    assert texts(result.outputs) == f"{tmp_path.resolve()}\n42\n"
    assert not info.origin.attached and info.origin.kernel_id is not None


async def test_a_kept_kernel_on_a_kernel_gateway_is_refused_for_it_keeps_no_sessions(
    kernel_gateway: RunningServer, kernel_for: list[NotebookKernel], tmp_path: Path
) -> None:
    """``j-cli run --keep`` needs a session to leave behind; a gateway has none to keep."""
    backend = functools.partial(ServerBackend, kernel_gateway.config(), keep=True)
    kernel_for.append(NotebookKernel(tmp_path / "nb.ipynb", backend_factory=backend))
    failed = await start_fails(kernel_for[-1])
    assert failed.code == ErrorCode.KERNEL_START_FAILED
    assert failed.details["reason"] == "no sessions API"


async def test_a_kernel_someone_shuts_down_on_the_server_ends_the_running_cell_died(
    jupyter_server: RunningServer, kernel_for: list[NotebookKernel], tmp_path: Path
) -> None:
    kernel = kernel_on(kernel_for, jupyter_server.config(), tmp_path / "nb.ipynb")

    async def delete_on_go(output: Output) -> None:
        if output.get("text") == "go\n":
            kernel_id = (await kernel.info()).origin.kernel_id
            with jupyter_server.client() as rest:
                await anyio.to_thread.run_sync(rest.delete, f"api/kernels/{kernel_id}")

    with anyio.fail_after(WAIT):
        result = await kernel.execute(
            "import time\nprint('go')\ntime.sleep(60)", on_output=delete_on_go
        )
        again = await kernel.execute("'new'")
    # The server's shutdown of a busy kernel interrupts it first: the cell shows a
    # KeyboardInterrupt before the kernel ends, and still ends died, with what it printed.
    assert texts(result.outputs) == "go\n"
    assert (result.status, result.ename) == ("died", None)
    assert again.status == "ok" and again.kernel_restarted


async def test_an_interrupt_someone_sends_through_the_server_ends_the_cell_with_the_kernel_kept(
    jupyter_server: RunningServer, kernel_for: list[NotebookKernel], tmp_path: Path
) -> None:
    kernel = kernel_on(kernel_for, jupyter_server.config(), tmp_path / "nb.ipynb")

    async def interrupt_on_go(output: Output) -> None:
        if output.get("text") == "go\n":
            kernel_id = (await kernel.info()).origin.kernel_id
            with jupyter_server.client() as rest:  # JupyterLab's stop button
                await anyio.to_thread.run_sync(rest.post, f"api/kernels/{kernel_id}/interrupt")

    with anyio.fail_after(WAIT):
        await kernel.execute("kept = 'yes'")
        result = await kernel.execute(
            "import time\nprint('go')\ntime.sleep(60)", on_output=interrupt_on_go
        )
        again = await kernel.execute("kept")
    # The kernel answers the probe that a KeyboardInterrupt we did not ask for makes: it
    # lives, so the cell's error stands and the next call runs on the same kernel.
    assert (result.status, result.ename) == ("error", "KeyboardInterrupt")
    assert again.status == "ok" and not again.kernel_restarted and again.epoch == result.epoch
    assert again.outputs[0]["data"]["text/plain"] == "'yes'"
