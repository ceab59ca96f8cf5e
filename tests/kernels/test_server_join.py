"""Joining the kernel a person already uses (marker ``server``): a session created through
the REST API as JupyterLab creates it, a variable set in its kernel by a second client over
its own WebSocket, then the workbench on the same notebook. Every wait is bounded.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.sync.client import ClientConnection, connect

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import KernelPool, ServerBackend, backend_factory
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.workbench import Workbench
from server_helpers import RunningServer, write_notebook

pytestmark = [pytest.mark.server, pytest.mark.anyio]

WAIT = 90.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class OtherClient:
    """JupyterLab's side: its own WebSocket to the kernel (legacy JSON framing)."""

    def __init__(self, ws: ClientConnection, session: str) -> None:
        self.ws = ws
        self.session = session

    def run(self, code: str) -> None:
        """Execute ``code`` and wait for its reply."""
        msg_id = self.send_execute(code)
        self.wait_for(lambda msg: msg["channel"] == "shell" and parent(msg) == msg_id)

    def send_execute(self, code: str) -> str:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": "execute_request",
            "session": self.session,
            "username": "ana",
            "version": "5.3",
        }
        content = {"code": code, "silent": False, "store_history": True, "allow_stdin": False}
        frame = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
        self.ws.send(json.dumps({**frame, "channel": "shell"}))
        return msg_id

    def wait_for(self, found: Any, limit: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + limit
        while (left := deadline - time.monotonic()) > 0:
            msg = json.loads(self.ws.recv(timeout=left))
            if found(msg):
                return dict(msg)
        raise TimeoutError("the other client saw no such message")


@contextmanager
def other_client(server: RunningServer, kernel_id: str) -> Iterator[OtherClient]:
    url = server.url.replace("http://", "ws://")
    session = uuid.uuid4().hex
    with connect(
        f"{url}api/kernels/{kernel_id}/channels?session_id={session}",
        additional_headers={"Authorization": f"token {server.token}"},
        open_timeout=30,
    ) as ws:
        yield OtherClient(ws, session)


def parent(msg: dict[str, Any]) -> object:
    return (msg.get("parent_header") or {}).get("msg_id")


@pytest.fixture
def person(jupyter_server: RunningServer, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A notebook open in "JupyterLab": its session, with ``shared = 42`` set by the person."""
    path = write_notebook(tmp_path, ["print(shared)", "mine = shared + 1"], "shared")
    relative = path.resolve().relative_to(jupyter_server.root.resolve()).as_posix()
    body = {"path": relative, "type": "notebook", "name": path.name, "kernel": {"name": "python3"}}
    with jupyter_server.client() as rest:
        session = rest.post("api/sessions", json=body).json()
        try:
            yield path, session["kernel"]["id"]
        finally:
            rest.delete(f"api/sessions/{session['id']}")


async def test_a_session_jupyterlab_has_open_is_joined_and_shared_both_ways(
    jupyter_server: RunningServer, person: tuple[Path, str], tmp_path: Path
) -> None:
    path, kernel_id = person
    with other_client(jupyter_server, kernel_id) as other:
        await joined_and_shared(jupyter_server, other, path, kernel_id, tmp_path)


async def joined_and_shared(
    jupyter_server: RunningServer, other: OtherClient, path: Path, kernel_id: str, tmp: Path
) -> None:
    other.run("shared = 42")
    show, mine = [view.name for view in Document.load(path).cells]
    pool = KernelPool(backend_factory=backend_factory(jupyter_server.config()))
    with anyio.fail_after(WAIT):
        async with Workbench(cache_dir=tmp / "cache", pool=pool) as wb:
            before = await wb.run_stale(path, dry_run=True)
            outcome = await wb.execute_cells(path, [show])
            overview = await wb.notebook_overview(path)
            seen = await wb.inspect_variable(path, "shared")
    assert before.plan == (show, mine)
    assert outcome.ok and outcome.cells[0].outputs is not None
    assert "42" in outcome.cells[0].outputs.text
    origin = overview.kernel.origin
    assert origin.attached and origin.kernel_id == kernel_id
    assert origin.started_by is not None and "shared.ipynb" in origin.started_by
    assert overview.statuses == {show: "fresh", mine: "never_run"}
    assert "42" in seen.to_dict()["repr"]
    echoed = other.wait_for(
        lambda msg: (
            msg["channel"] == "iopub"
            and msg["header"]["msg_type"] == "stream"
            and msg["content"]["text"] == "42\n"
        )
    )
    assert echoed["parent_header"]["session"] != other.session  # our request, seen by them
    other.run("alive_after_we_left = shared")  # our shutdown left the person's kernel running
    with jupyter_server.client() as rest:
        assert rest.get(f"api/kernels/{kernel_id}").status_code == 200


async def test_restarting_a_joined_kernel_keeps_the_session_on_the_same_kernel(
    jupyter_server: RunningServer, person: tuple[Path, str], tmp_path: Path
) -> None:
    path, kernel_id = person
    with other_client(jupyter_server, kernel_id) as other:
        other.run("shared = 42")
    show, _mine = [view.name for view in Document.load(path).cells]
    pool = KernelPool(backend_factory=backend_factory(jupyter_server.config()))
    with anyio.fail_after(WAIT):
        async with Workbench(cache_dir=tmp_path / "cache", pool=pool) as wb:
            joined = await wb.execute_cells(path, [show])
            with pytest.raises(KernelError) as refused:  # the person's kernel: force it
                await wb.restart_kernel(path)
            assert refused.value.code == ErrorCode.KERNEL_SHARED
            restarted = await wb.restart_kernel(path, force=True)
            after = await wb.execute_cells(path, [show])
    assert joined.ok and restarted.epoch != joined.epoch
    assert restarted.kernel.origin.kernel_id == kernel_id
    assert after.cells[0].ename == "NameError"
    with jupyter_server.client() as rest:
        sessions = rest.get("api/sessions").json()
    assert [s["kernel"]["id"] for s in sessions if s["name"] == path.name] == [kernel_id]


async def test_a_restart_someone_else_makes_counts_as_a_new_kernel(
    jupyter_server: RunningServer, person: tuple[Path, str], tmp_path: Path
) -> None:
    path, kernel_id = person
    show, _mine = [view.name for view in Document.load(path).cells]
    pool = KernelPool(backend_factory=backend_factory(jupyter_server.config()))
    with anyio.fail_after(WAIT):
        async with Workbench(cache_dir=tmp_path / "cache", pool=pool) as wb:
            with other_client(jupyter_server, kernel_id) as other:
                other.run("shared = 42")
                joined = await wb.execute_cells(path, [show])
                with jupyter_server.client() as rest:
                    await anyio.to_thread.run_sync(rest.post, f"api/kernels/{kernel_id}/restart")
                while (await wb.notebook_overview(path)).kernel.state != "dead":
                    await anyio.sleep(0.2)
                statuses = (await wb.notebook_overview(path)).statuses
                again = await wb.execute_cells(path, [show])
    assert joined.ok and statuses[show] != "fresh"
    assert again.kernel_started and again.epoch != joined.epoch
    assert again.cells[0].ename == "NameError"


async def test_a_kernel_busy_with_the_persons_cell_is_joined_without_waiting_for_it(
    jupyter_server: RunningServer, person: tuple[Path, str]
) -> None:
    path, kernel_id = person
    backend = ServerBackend(jupyter_server.config())
    with other_client(jupyter_server, kernel_id) as other:
        other.send_execute("import time\ntime.sleep(600)")
        other.wait_for(
            lambda msg: (
                msg["channel"] == "iopub"
                and msg["header"]["msg_type"] == "status"
                and msg["content"]["execution_state"] == "busy"
            )
        )
        try:
            with anyio.fail_after(WAIT):
                await backend.start(
                    kernelspec_name="python3",
                    cwd=path.parent,
                    startup_timeout=20.0,
                    notebook_path=path,
                )
            assert backend.origin.attached and await backend.is_alive()
        finally:
            with anyio.fail_after(WAIT):
                await backend.shutdown(now=True, timeout=5.0)
            with jupyter_server.client() as rest:
                rest.post(f"api/kernels/{kernel_id}/interrupt")


async def test_a_kept_kernel_is_ours_and_its_session_stays_after_we_leave(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    """``j-cli run --keep``: the session it creates is not someone else's kernel, and it is
    still on the server, kernel and all, once the backend has shut down."""
    path = write_notebook(tmp_path, ["kept = 1"], "kept")
    backend = ServerBackend(jupyter_server.config(), keep=True)
    try:
        with anyio.fail_after(WAIT):
            await backend.start(
                kernelspec_name="python3", cwd=path.parent, startup_timeout=20.0, notebook_path=path
            )
            origin = backend.origin
            await backend.shutdown(now=False, timeout=5.0)
        assert not origin.attached and origin.started_by is None
        with jupyter_server.client() as rest:
            sessions = rest.get("api/sessions").json()
        (kept,) = [s for s in sessions if s["kernel"]["id"] == origin.kernel_id]
    finally:
        with jupyter_server.client() as rest:
            for session in rest.get("api/sessions").json():
                if session["kernel"]["id"] == backend.kernel_id:
                    rest.delete(f"api/sessions/{session['id']}")
    assert kept["path"] == path.resolve().relative_to(jupyter_server.root.resolve()).as_posix()
