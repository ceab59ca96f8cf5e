"""Stopping a running execution from outside it, against a scripted backend (no kernel):
interrupt, restart and shutdown while a request runs, overlapping restarts, a holder between
two cells, a cell that ignores the interrupt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import KernelMessage, NotebookKernel
from kernel_fakes import FakeBackend, message, one_after_another, prints

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_kernel(tmp_path: Path, *backends: FakeBackend) -> NotebookKernel:
    """A kernel whose successive lives are ``backends``."""
    return NotebookKernel(tmp_path / "nb.ipynb", backend_factory=one_after_another(*backends))


class EventLog(FakeBackend):
    """A scripted kernel whose request runs until interrupted (``working`` first), and that
    records, in one list shared by every backend of a kernel, what happened to it in order."""

    def __init__(self, events: list[str], *, obeys_interrupt: bool = True) -> None:
        super().__init__(self._runs)
        self.events = events
        self.obeys = obeys_interrupt
        self.on_interrupt = self._stops

    def _runs(self, b: FakeBackend, msg_id: str, code: str) -> None:
        self.events.append(f"run {code}")
        b.emit(message("execute_input", msg_id, code=code, execution_count=self.count + 1))
        b.emit(message("stream", msg_id, name="stdout", text="working\n"))

    def _stops(self) -> None:
        self.events.append("interrupt")
        if self.obeys:
            msg_id = f"req-{self.sent}"
            self.emit(message("error", msg_id, ename="KeyboardInterrupt", evalue="", traceback=[]))
            self.finish(msg_id, status="error")

    async def next_iopub(self, timeout: float) -> KernelMessage | None:
        if not self.alive:  # a closed channel: the real backend raises, never blocks
            raise KernelError(ErrorCode.KERNEL_NOT_RUNNING, "shut down")
        return await super().next_iopub(timeout)

    async def shutdown(self, *, now: bool, timeout: float) -> None:
        self.events.append("shutdown now" if now else "shutdown")
        await super().shutdown(now=now, timeout=timeout)


class Runner:
    """A task body that executes ``loop`` on the kernel and keeps its result; ``working`` is
    set once the cell printed."""

    def __init__(self, kernel: NotebookKernel) -> None:
        self.kernel = kernel
        self.working = anyio.Event()
        self.results: list[Any] = []

    async def __call__(self) -> None:
        result = await self.kernel.execute(
            "loop", cell_key="c", on_output=lambda output: self.working.set()
        )
        self.results.append(result)


async def test_a_restart_stops_the_running_execution_before_closing_the_kernel(
    tmp_path: Path,
) -> None:
    events: list[str] = []
    kernel = make_kernel(tmp_path, EventLog(events), EventLog(events))
    body = Runner(kernel)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(body)
            await body.working.wait()
            epoch = await kernel.restart()
    (result,) = body.results
    assert result.status == "interrupted"
    assert result.interrupted_by == "kernel_restarted"
    assert not result.kernel_killed
    assert [o.get("text") or o.get("ename") for o in result.outputs] == [
        "working\n",
        "KeyboardInterrupt",
    ]
    assert events == ["run loop", "interrupt", "shutdown"]  # stopped, then closed gracefully
    assert epoch != result.epoch and kernel.epoch == epoch
    assert (await kernel.info()).state == "idle"


async def test_a_cell_that_ignores_the_restart_interrupt_is_abandoned_and_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_jcli.kernels._request.STOP_GRACE", 0.5)
    monkeypatch.setattr("jupyter_jcli.kernels._request.INTERRUPT_RETRY", 0.2)
    events: list[str] = []
    kernel = make_kernel(tmp_path, EventLog(events, obeys_interrupt=False), EventLog(events))
    body = Runner(kernel)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(body)
            await body.working.wait()
            epoch = await kernel.restart()
    (result,) = body.results
    assert (result.status, result.interrupted_by) == ("interrupted", "kernel_restarted")
    assert result.kernel_killed
    assert events[0] == "run loop" and events[1] == "interrupt"
    assert "shutdown now" in events
    assert kernel.epoch == epoch != result.epoch


async def test_overlapping_restarts_are_one_restart(tmp_path: Path) -> None:
    events: list[str] = []
    kernel = make_kernel(tmp_path, EventLog(events), EventLog(events))  # a third would fail
    epochs: list[str] = []
    body = Runner(kernel)

    async def restart() -> None:
        epochs.append(await kernel.restart())

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(body)
            await body.working.wait()
            tg.start_soon(restart)
            tg.start_soon(restart)
    assert len(epochs) == 2 and epochs[0] == epochs[1] == kernel.epoch
    assert body.results[0].status == "interrupted"
    assert events.count("shutdown") == 1


async def test_a_restart_waiting_for_a_held_kernel_stops_the_holder_before_its_next_cell(
    tmp_path: Path,
) -> None:
    kernel = make_kernel(tmp_path, FakeBackend(prints("one\n")), FakeBackend(prints("")))
    first_done = anyio.Event()
    go_on = anyio.Event()
    seen: dict[str, Any] = {}

    async def holder() -> None:
        async with kernel.hold():
            seen["first"] = await kernel.execute("print('one')")
            first_done.set()
            await go_on.wait()
            seen["stop"] = kernel.stop_requested
            with pytest.raises(KernelError) as refused:
                await kernel.execute("print('two')")
            seen["refused"] = refused.value

    async def restart() -> None:
        seen["epoch"] = await kernel.restart()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(holder)
            await first_done.wait()
            tg.start_soon(restart)
            await anyio.wait_all_tasks_blocked()
            go_on.set()
    assert seen["stop"] == "kernel_restarted"
    assert seen["refused"].code == ErrorCode.KERNEL_BUSY
    assert seen["refused"].details["stop_requested"] == "kernel_restarted"
    assert seen["epoch"] != seen["first"].epoch
    assert kernel.stop_requested is None


async def test_a_shutdown_kills_the_kernel_when_the_holder_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_jcli.kernels._hold.STOP_WAIT", 0.3)
    kernel = make_kernel(tmp_path, FakeBackend(prints("x\n")))
    release = anyio.Event()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:

            async def holder() -> None:
                async with kernel.hold():
                    await kernel.execute("print('x')")
                    await release.wait()

            tg.start_soon(holder)
            await anyio.wait_all_tasks_blocked()
            await kernel.shutdown()
            state = (await kernel.info()).state
            release.set()
    assert state == "not_started"


async def test_an_interrupt_request_ends_the_cell_interrupted_not_error(tmp_path: Path) -> None:
    events: list[str] = []
    kernel = make_kernel(tmp_path, EventLog(events))
    body = Runner(kernel)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(body)
            await body.working.wait()
            await kernel.interrupt()
        info = await kernel.info()
    (result,) = body.results
    assert (result.status, result.interrupted_by) == ("interrupted", "kernel_interrupted")
    assert result.outputs[-1]["ename"] == "KeyboardInterrupt" and not result.kernel_killed
    assert info.state == "idle" and info.epoch == result.epoch
