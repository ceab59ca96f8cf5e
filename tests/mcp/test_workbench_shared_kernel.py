"""``jupyter-mcp`` on a kernel someone else started (``attached``), in-process through the MCP
SDK's client: the results say so, ``restart_kernel`` needs ``force``; and the server's
``--server-url``/``--token``/``--server-root`` options reach the backend factory."""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from memory_client import workbench_in_process
from workbench_client import call, error_code, ok

from jupyter_jcli import kernels
from jupyter_jcli.kernels import KernelOrigin, ServerConfig
from jupyter_jcli.mcp import workbench as workbench_server
from jupyter_jcli.mcp import workbench_command
from kernel_fakes import InProcessPython, python_backend

pytestmark = pytest.mark.anyio

NB = "work.ipynb"
CELLS = [
    {"source": "total = 40 + 2", "name": "total"},
    {"source": "print(total)", "name": "show"},
]
SERVER = ServerConfig(url="http://127.0.0.1:8888/", token="t0k3n")
LAB = KernelOrigin(attached=True, started_by="JupyterLab session 1f0e", kernel_id="k-42")
WAIT = 60


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder.resolve()


def _persons_kernel() -> Any:
    python = InProcessPython()
    python.namespace["mood"] = "curious"
    return partial(python_backend, origin=LAB, python=python)


def test_restart_kernel_lists_a_force_boolean_defaulting_to_false() -> None:
    (tool,) = [t for t in workbench_server.tools() if t.name == "restart_kernel"]
    assert tool.input_schema["properties"]["force"] == {
        "type": "boolean",
        "default": False,
        "description": tool.input_schema["properties"]["force"]["description"],
    }
    assert "force" not in tool.input_schema["required"]


@pytest.mark.usefixtures("in_process")
async def test_results_say_the_kernel_is_shared_and_a_restart_needs_force(
    root: Path, tmp_path: Path
) -> None:
    factory = _persons_kernel()
    with anyio.fail_after(WAIT):
        async with workbench_in_process(
            root, tmp_path / "cache", backend_factory=factory, server=SERVER
        ) as session:
            await ok(session, "create_notebook", path=NB, cells=CELLS)
            before = await ok(session, "notebook_overview", path=NB)
            inspected = await ok(session, "inspect_variable", path=NB, name="mood")
            joined = await ok(session, "notebook_overview", path=NB)
            executed = await ok(session, "execute_cells", path=NB, names=["total"])
            stale = await ok(session, "run_stale", path=NB)
            refused = await error_code(session, "restart_kernel", path=NB)
            _, refusal = await call(session, "restart_kernel", path=NB)
            still = await ok(session, "inspect_variable", path=NB, name="total")
            restarted = await ok(session, "restart_kernel", path=NB, force=True)
    assert before["kernel"]["state"] == "not_started" and before["kernel"]["attached"] is False
    assert inspected["repr"] == "'curious'"
    assert joined["kernel"]["attached"] is True
    assert joined["kernel"]["started_by"] == LAB.started_by
    assert {cell["status"] for cell in joined["cells"] if cell["cell_type"] == "code"} == {
        "never_run"
    }
    for document in (executed, stale):
        assert document["kernel"]["attached"] is True
        assert document["kernel"]["started_by"] == LAB.started_by
    assert stale["plan"] == ["show"] and stale["still_stale"] == []
    assert refused == "KERNEL_SHARED"
    assert refusal["details"]["started_by"] == LAB.started_by
    assert still["repr"] == "42"  # the refused restart changed nothing
    assert restarted["kernel"]["attached"] is True
    assert restarted["previous_epoch"] != restarted["epoch"]
    assert restarted["still_stale"] == ["total", "show"]


@pytest.mark.usefixtures("in_process")
async def test_a_kernel_of_our_own_restarts_without_force(root: Path, tmp_path: Path) -> None:
    with anyio.fail_after(WAIT):
        async with workbench_in_process(root, tmp_path / "cache", server=SERVER) as session:
            await ok(session, "create_notebook", path=NB, cells=CELLS)
            await ok(session, "execute_cells", path=NB, names=["total"])
            restarted = await ok(session, "restart_kernel", path=NB)
    assert restarted["kernel"]["attached"] is False
    assert restarted["previous_epoch"] != restarted["epoch"]


def _main(*argv: str) -> Any:
    """``jupyter-mcp``'s command run in this process; its exit status."""
    return workbench_command.main(list(argv), "jupyter-mcp", standalone_mode=False)


def test_the_server_options_reach_the_backend_factory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    asked: list[ServerConfig | None] = []
    served: list[tuple[tuple[Path, ...], Any]] = []

    def factory(server: ServerConfig | None) -> kernels.BackendFactory:
        asked.append(server)
        return python_backend

    async def fake_serve(roots: tuple[Path, ...], *, workbench: Any, transport: Any) -> None:
        served.append((roots, workbench))

    monkeypatch.setattr(kernels, "backend_factory", factory)
    monkeypatch.setattr(workbench_server, "serve", fake_serve)
    monkeypatch.delenv("JUPYTER_JCLI_SERVER_TOKEN", raising=False)
    argv = ["--root", str(tmp_path), "--server-url", "https://hub.example.org/user/ana"]
    assert _main(*argv, "--token", "s3", "--server-root", str(tmp_path)) == 0
    assert asked == [
        ServerConfig("https://hub.example.org/user/ana/", "s3", server_root=tmp_path.resolve())
    ]
    ((roots, workbench),) = served
    assert roots == (tmp_path.resolve(),) and workbench.server == asked[0]


def test_the_token_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    asked: list[ServerConfig | None] = []

    def factory(server: ServerConfig | None) -> kernels.BackendFactory:
        asked.append(server)
        return python_backend

    async def fake_serve(roots: tuple[Path, ...], *, workbench: Any, transport: Any) -> None:
        return None

    monkeypatch.setattr(kernels, "backend_factory", factory)
    monkeypatch.setattr(workbench_server, "serve", fake_serve)
    monkeypatch.setenv("JUPYTER_JCLI_SERVER_TOKEN", "from-env")
    assert _main("--root", str(tmp_path), "--server-url", "http://lab:1") == 0
    assert [server.token if server else None for server in asked] == ["from-env"]


def test_without_a_url_the_server_serves_local_kernels(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    served: list[Any] = []

    def refuse(server: ServerConfig | None) -> kernels.BackendFactory:
        raise AssertionError("asked for a server backend")

    async def fake_serve(roots: tuple[Path, ...], *, workbench: Any, transport: Any) -> None:
        served.append(workbench)

    monkeypatch.setattr(kernels, "backend_factory", refuse)
    monkeypatch.setattr(workbench_server, "serve", fake_serve)
    monkeypatch.delenv("JUPYTER_JCLI_SERVER_URL", raising=False)
    assert _main("--root", str(tmp_path)) == 0
    assert served[0].server is None


@pytest.mark.parametrize(
    ("url", "status", "option"),
    [("ftp://lab:8888", 2, "--server-url"), ("http://127.0.0.1:9/", None, None)],
)
def test_a_bad_url_fails_at_start_up_and_the_token_is_never_echoed(
    tmp_path: Path, url: str, status: int | None, option: str | None
) -> None:
    token = "never-show-this-token"
    command = [sys.executable, "-m", "jupyter_jcli.mcp.workbench", "--root", str(tmp_path)]
    done = subprocess.run(
        [*command, "--server-url", url, "--token", token],
        input="",
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert token not in done.stdout + done.stderr
    assert done.stdout == ""  # stdout is JSON-RPC only
    if status is not None:
        assert done.returncode == status  # click's usage error, naming the option
        assert done.stderr.startswith("Usage: ")
        assert f"'{option}'" in done.stderr
