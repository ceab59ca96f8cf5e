"""A scripted kernel backend for the execution-loop tests (no kernel): each request is answered
as a ``Reaction`` says, messages are fed through memory streams."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import KernelBackend, KernelMessage, NotebookKernel

__all__ = ["Reaction", "ScriptedBackend", "make_kernel", "message", "prints"]

Reaction = Callable[["ScriptedBackend", str, str], None]
"""What the scripted kernel does with an execute request: (backend, msg_id, code)."""


def message(kind: str, parent: str, **content: Any) -> dict[str, Any]:
    return {"header": {"msg_type": kind}, "parent_header": {"msg_id": parent}, "content": content}


class ScriptedBackend:
    """A KernelBackend whose kernel answers each request as ``react`` says."""

    def __init__(self, react: Reaction, *, fail_start: bool = False) -> None:
        self.react = react
        self.fail_start = fail_start
        self.alive = False
        self.interrupts = 0
        self.shutdowns: list[bool] = []
        self.count = 0
        self.sent = 0
        self.iopub_in, self.iopub_out = anyio.create_memory_object_stream[dict[str, Any]](1000)
        self.shell_in, self.shell_out = anyio.create_memory_object_stream[dict[str, Any]](1000)
        self.on_interrupt: Callable[[], None] | None = None

    @property
    def pid(self) -> int | None:
        return None

    async def start(self, *, kernelspec_name: str, cwd: Path, startup_timeout: float) -> None:
        if self.fail_start:
            raise KernelError(ErrorCode.KERNEL_START_FAILED, "scripted failure")
        self.alive = True

    async def is_alive(self) -> bool:
        return self.alive

    async def send_execute(
        self, code: str, *, silent: bool, store_history: bool, user_expressions: Mapping[str, str]
    ) -> str:
        self.sent += 1
        msg_id = f"req-{self.sent}"
        self.react(self, msg_id, code)
        return msg_id

    def finish(self, msg_id: str, *, reply: bool = True, status: str = "ok") -> None:
        self.count += 1
        if reply:
            self.shell_in.send_nowait(
                message("execute_reply", msg_id, status=status, execution_count=self.count)
            )
        self.iopub_in.send_nowait(message("status", msg_id, execution_state="idle"))

    def emit(self, msg: dict[str, Any]) -> None:
        self.iopub_in.send_nowait(msg)

    async def next_iopub(self, timeout: float) -> KernelMessage | None:
        with anyio.move_on_after(timeout):
            return await self.iopub_out.receive()
        return None

    async def next_shell_reply(self, timeout: float) -> KernelMessage | None:
        with anyio.move_on_after(timeout):
            return await self.shell_out.receive()
        return None

    async def interrupt(self) -> None:
        self.interrupts += 1
        if self.on_interrupt is not None:
            self.on_interrupt()

    async def shutdown(self, *, now: bool, timeout: float) -> None:
        self.shutdowns.append(now)
        self.alive = False


def make_kernel(tmp_path: Path, *backends: ScriptedBackend) -> NotebookKernel:
    queue = list(backends)

    def factory() -> KernelBackend:
        return queue.pop(0)

    return NotebookKernel(tmp_path / "nb.ipynb", backend_factory=factory)


def prints(text: str) -> Reaction:
    def react(b: ScriptedBackend, msg_id: str, code: str) -> None:
        b.emit(message("stream", "someone-else", name="stdout", text="stale\n"))
        b.emit(message("stream", msg_id, name="stdout", text=text))
        b.finish(msg_id)

    return react
