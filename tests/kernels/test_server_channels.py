"""The server backend's kernel channels against a scripted kernel WebSocket (in process, the
legacy JSON framing): which lifecycle messages mean the kernel we know is gone, and what a
reconnect does when the server no longer has the kernel.

The scripted kernel answers ``kernel_info_request`` (control reply, then iopub ``idle``) and
``execute_request`` (iopub ``idle``, then the shell reply), signing every message with the
session of its current process, as a real kernel process does; frames it is given to send
go out before the next request's iopub ``idle``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import orjson
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._server_frames import decode_frame, new_message
from jupyter_jcli.kernels._server_ws import KernelChannels

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection
    from websockets.asyncio.server import ServerConnection

pytestmark = pytest.mark.anyio

WAIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class ScriptedKernel:
    """A kernel's WebSocket: answers probes and executions as process :attr:`process`;
    :attr:`pending` frames are sent once, before the next request's iopub ``idle``, which
    comes :attr:`iopub_delay` s after a probe's control reply (a loaded server)."""

    def __init__(self) -> None:
        self.process = "process-a"
        self.pending: list[str] = []
        self.iopub_delay = 0.0
        self.sockets: list[ServerConnection] = []

    def frame(
        self, channel: str, msg_type: str, content: dict[str, Any], parent: dict[str, Any] | None
    ) -> str:
        msg = new_message(msg_type, content, self.process)
        msg["parent_header"] = dict(parent["header"]) if parent is not None else {}
        return orjson.dumps({**msg, "channel": channel}).decode()

    async def serve(self, ws: ServerConnection) -> None:
        self.sockets.append(ws)
        async for raw in ws:
            channel, msg = decode_frame(raw, None)
            kind = msg["header"]["msg_type"]
            if kind == "kernel_info_request":
                await ws.send(self.frame(channel, "kernel_info_reply", {"status": "ok"}, msg))
                await anyio.sleep(self.iopub_delay)
                await self.idle(ws, msg)
            elif kind == "execute_request":
                await self.idle(ws, msg)
                await ws.send(self.frame("shell", "execute_reply", {"status": "ok"}, msg))

    async def idle(self, ws: ServerConnection, msg: dict[str, Any]) -> None:
        for frame in self.pending:
            await ws.send(frame)
        self.pending = []
        await ws.send(self.frame("iopub", "status", {"execution_state": "idle"}, msg))

    async def drop(self) -> None:
        """Close every WebSocket from the server's side."""
        for ws in self.sockets:
            await ws.close()


Connect = Callable[[str], Awaitable["ClientConnection"]]


@asynccontextmanager
async def scripted_kernel() -> AsyncIterator[tuple[ScriptedKernel, Connect]]:
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import serve

    kernel = ScriptedKernel()
    async with serve(kernel.serve, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]

        async def open_ws(session: str) -> ClientConnection:
            return await connect(f"ws://127.0.0.1:{port}/?session_id={session}")

        yield kernel, open_ws


async def still_there() -> bool:
    return False


async def ready_channels(connect: Connect, kernel_gone: Callable[[], Awaitable[bool]]) -> Any:
    channels = KernelChannels(connect, kernel_gone)
    await channels.open()
    await channels.wait_ready(WAIT)
    return channels


async def round_trip(channels: KernelChannels) -> None:
    """Execute once and wait for the reply: every frame the kernel sent before is routed."""
    msg = new_message("execute_request", {"code": ""}, channels.session)
    await channels.send(msg)
    while (reply := await channels.receive("shell", WAIT)) is not None:
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            return
    raise AssertionError("no execute_reply")


async def test_a_restart_of_ours_is_over_when_the_new_process_answers_on_iopub_too() -> None:
    async with scripted_kernel() as (kernel, connect):
        with anyio.fail_after(WAIT):
            channels = await ready_channels(connect, still_there)
            assert channels.process == "process-a"
            channels.watching = False  # a restart of ours, as ServerBackend.restart does
            farewell = kernel.frame(
                "iopub", "shutdown_reply", {"status": "ok", "restart": True}, None
            )
            kernel.process = "process-b"
            starting = kernel.frame("iopub", "status", {"execution_state": "starting"}, None)
            # the new process answers on control at once, its iopub lags behind
            kernel.pending, kernel.iopub_delay = [farewell, starting], 1.5
            await channels.wait_ready(WAIT)
            kernel.iopub_delay = 0.0
            await round_trip(channels)
        assert channels.process == "process-b"
        assert channels.usable and channels.gone is None
        await channels.close()


@pytest.mark.parametrize("what", ["shutdown_reply", "another process starting", "restarting"])
async def test_the_kernel_process_ending_or_replaced_marks_the_kernel_gone(what: str) -> None:
    """A broadcast ``shutdown_reply`` (a shutdown or restart through the server, ours never
    sends one), a parent-less ``starting`` of another process, the server's ``restarting``."""
    async with scripted_kernel() as (kernel, connect):
        with anyio.fail_after(WAIT):
            channels = await ready_channels(connect, still_there)
            if what == "shutdown_reply":
                content = {"status": "ok", "restart": False}
                sign = kernel.frame("iopub", "shutdown_reply", content, None)
            else:
                if what == "another process starting":
                    kernel.process = "process-b"
                state = what.rsplit(maxsplit=1)[-1]
                sign = kernel.frame("iopub", "status", {"execution_state": state}, None)
                kernel.process = "process-a"  # the process that answers the probe
            kernel.pending = [sign]
            await round_trip(channels)  # the sign comes before the answer
            assert not channels.usable and channels.gone is not None
            with pytest.raises(KernelError) as gone:
                await round_trip(channels)
        assert gone.value.code == ErrorCode.KERNEL_NOT_RUNNING
        await channels.close()


@pytest.mark.parametrize("told_by", ["rest", "handshake"])
async def test_a_reconnect_to_a_kernel_the_server_no_longer_has_ends_at_once(
    told_by: str,
) -> None:
    async with scripted_kernel() as (kernel, connect):
        opened: list[str] = []

        async def connect_once(session: str) -> ClientConnection:
            if opened:  # the server came back without the kernel
                raise KernelError(ErrorCode.SERVER_ERROR, "HTTP 404", {"status": 404})
            opened.append(session)
            return await connect(session)

        async def kernel_gone() -> bool:
            dropped = bool(kernel.sockets) and kernel.sockets[0].close_code is not None
            if dropped and told_by == "handshake":  # REST cannot tell; the handshake's 404 does
                raise KernelError(ErrorCode.SERVER_UNREACHABLE, "no REST", {"reason": "refused"})
            return dropped

        # Well inside the 10 s reconnect window: nothing waits for it to pass.
        with anyio.fail_after(WAIT / 2):
            channels = await ready_channels(connect_once, kernel_gone)
            await kernel.drop()
            assert not await channels.settled()
            with pytest.raises(KernelError) as failed:
                await round_trip(channels)
        assert failed.value.code == ErrorCode.KERNEL_NOT_RUNNING
        assert channels.gone is not None and channels.lost is None
        await channels.close()
