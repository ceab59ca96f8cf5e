"""The execution loop against a scripted backend (no kernel): parents, replies, death, settling,
start failures, timeouts and configuration."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, JcliError, KernelError
from jupyter_jcli.kernels import (
    DEFAULT_EXECUTE_TIMEOUT,
    EXECUTE_TIMEOUT_ENV,
    KernelBackend,
    KernelMessage,
    NotebookKernel,
    execute_timeout,
    kernelspec_name_from_metadata,
)

pytestmark = pytest.mark.anyio

Reaction = Callable[["ScriptedBackend", str, str], None]
"""What the scripted kernel does with an execute request: (backend, msg_id, code)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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


def test_backends_satisfy_the_protocol() -> None:
    from jupyter_jcli.kernels import LocalBackend

    assert isinstance(LocalBackend(), KernelBackend)
    assert isinstance(ScriptedBackend(prints("x")), KernelBackend)


async def test_messages_of_other_requests_are_skipped(tmp_path: Path) -> None:
    kernel = make_kernel(tmp_path, ScriptedBackend(prints("mine\n")))
    with anyio.fail_after(10):
        result = await kernel.execute("print('mine')")
    assert result.status == "ok"
    assert result.outputs == [{"output_type": "stream", "name": "stdout", "text": "mine\n"}]
    assert result.execution_count == 1


async def test_idle_without_a_reply_ends_with_the_error_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_jcli.kernels._run.REPLY_GRACE", 0.2)

    def react(b: ScriptedBackend, msg_id: str, code: str) -> None:
        b.emit(message("execute_input", msg_id, code=code, execution_count=4))
        b.emit(message("error", msg_id, ename="KeyboardInterrupt", evalue="", traceback=[]))
        b.finish(msg_id, reply=False)

    kernel = make_kernel(tmp_path, ScriptedBackend(react))
    with anyio.fail_after(10):
        result = await kernel.execute("x")
    assert (result.status, result.ename, result.execution_count) == (
        "error",
        "KeyboardInterrupt",
        4,
    )


async def test_a_kernel_that_dies_is_reported_and_replaced(tmp_path: Path) -> None:
    def dies(b: ScriptedBackend, msg_id: str, code: str) -> None:
        b.emit(message("stream", msg_id, name="stdout", text="last words\n"))
        b.alive = False

    first, second = ScriptedBackend(dies), ScriptedBackend(prints("hi\n"))
    kernel = make_kernel(tmp_path, first, second)
    with anyio.fail_after(10):
        died = await kernel.execute("boom", cell_key="crash")
        info = await kernel.info()
        again = await kernel.execute("print('hi')")
    assert died.status == "died"
    assert died.outputs[0]["text"] == "last words\n"
    assert info.state == "dead"
    assert info.epoch is None
    assert again.kernel_restarted
    assert again.epoch != died.epoch
    assert first.shutdowns


class LateWordsBackend(ScriptedBackend):
    """A kernel whose last outputs reach the client only after its death is noticed (as
    ipykernel's do: they leave from its I/O thread)."""

    def __init__(self) -> None:
        super().__init__(self._dies)
        self.late: list[dict[str, Any]] = []

    def _dies(self, b: ScriptedBackend, msg_id: str, code: str) -> None:
        b.emit(message("execute_input", msg_id, code=code, execution_count=1))
        self.late = [
            message("stream", msg_id, name="stdout", text="bye\n"),
            message("display_data", msg_id, data={"text/plain": "last"}, metadata={}),
        ]
        b.alive = False

    async def is_alive(self) -> bool:
        if not self.alive:
            for late in self.late:
                self.emit(late)
            self.late = []
        return self.alive


async def test_outputs_arriving_after_the_death_is_noticed_are_kept(tmp_path: Path) -> None:
    backend = LateWordsBackend()
    kernel = make_kernel(tmp_path, backend)
    with anyio.fail_after(10):
        died = await kernel.execute("print('bye'); os._exit(1)", cell_key="crash")
    assert died.status == "died"
    assert died.outputs == [
        {"output_type": "stream", "name": "stdout", "text": "bye\n"},
        {"output_type": "display_data", "data": {"text/plain": "last"}, "metadata": {}},
    ]


async def test_a_kernel_that_ignores_interrupts_is_killed_after_settling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_jcli.kernels._run.SETTLE_TIMEOUT", 0.6)
    monkeypatch.setattr("jupyter_jcli.kernels._run.INTERRUPT_RETRY", 0.2)

    def hangs(b: ScriptedBackend, msg_id: str, code: str) -> None:
        b.emit(message("stream", msg_id, name="stdout", text="working\n"))

    stuck, fresh = ScriptedBackend(hangs), ScriptedBackend(prints("ok\n"))
    kernel = make_kernel(tmp_path, stuck, fresh)
    with anyio.fail_after(10):
        result = await kernel.execute("loop", timeout=0.3)
        state = (await kernel.info()).state
        after = await kernel.execute("print('ok')")
    assert result.status == "timeout"
    assert result.kernel_killed  # the state is gone: the result says so
    assert stuck.interrupts >= 2
    assert stuck.shutdowns
    assert all(stuck.shutdowns)  # killed, not asked
    assert state == "dead"
    assert after.kernel_restarted


async def test_a_timeout_interrupts_and_keeps_a_kernel_that_settles(tmp_path: Path) -> None:
    backend = ScriptedBackend(lambda b, msg_id, code: None)

    def settle() -> None:
        msg_id = f"req-{backend.sent}"
        backend.emit(message("error", msg_id, ename="KeyboardInterrupt", evalue="", traceback=[]))
        backend.finish(msg_id, status="error")

    backend.on_interrupt = settle
    kernel = make_kernel(tmp_path, backend)
    with anyio.fail_after(10):
        result = await kernel.execute("sleep", timeout=0.2)
        info = await kernel.info()
    assert result.status == "timeout"
    assert not result.kernel_killed
    assert backend.interrupts == 1
    assert info.state == "idle"
    assert info.epoch == result.epoch


async def test_a_failing_output_callback_interrupts_before_propagating(tmp_path: Path) -> None:
    backend = ScriptedBackend(
        lambda b, msg_id, code: b.emit(message("stream", msg_id, name="stdout", text="x"))
    )

    def settle() -> None:
        backend.finish(f"req-{backend.sent}", status="error")

    backend.on_interrupt = settle
    kernel = make_kernel(tmp_path, backend)

    def explode(output: Any) -> None:
        raise RuntimeError("client went away")

    with anyio.fail_after(10):
        with pytest.raises(RuntimeError):
            await kernel.execute("x", on_output=explode)
        backend.react = prints("fine\n")
        after = await kernel.execute("y")
    assert backend.interrupts == 1
    assert after.status == "ok"


async def test_a_failed_start_leaves_no_kernel(tmp_path: Path) -> None:
    kernel = make_kernel(tmp_path, ScriptedBackend(prints(""), fail_start=True))
    with anyio.fail_after(10), pytest.raises(KernelError) as failed:
        await kernel.execute("1")
    assert failed.value.code == ErrorCode.KERNEL_START_FAILED
    assert (await kernel.info()).state == "not_started"


async def test_interrupt_and_evaluate_need_a_live_kernel(tmp_path: Path) -> None:
    kernel = make_kernel(tmp_path)
    with anyio.fail_after(10):
        for call in (kernel.interrupt(), kernel.evaluate("1")):
            with pytest.raises(KernelError) as refused:
                await call
            assert refused.value.code == ErrorCode.KERNEL_NOT_RUNNING


def test_execute_timeout_default_argument_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EXECUTE_TIMEOUT_ENV, raising=False)
    assert execute_timeout(None) == DEFAULT_EXECUTE_TIMEOUT == 600.0
    assert execute_timeout(2) == 2.0
    monkeypatch.setenv(EXECUTE_TIMEOUT_ENV, "42.5")
    assert execute_timeout(None) == 42.5
    assert execute_timeout(3) == 3.0


@pytest.mark.parametrize("env", ["abc", "0", "-1", "nan", "inf"])
def test_an_invalid_timeout_environment_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, env: str
) -> None:
    monkeypatch.setenv(EXECUTE_TIMEOUT_ENV, env)
    with pytest.raises(JcliError) as bad:
        execute_timeout(None)
    assert bad.value.code == ErrorCode.USAGE_ERROR


@pytest.mark.parametrize("value", [0, -5, math.nan, math.inf, True])
def test_an_invalid_timeout_argument_is_a_usage_error(value: float) -> None:
    with pytest.raises(JcliError) as bad:
        execute_timeout(value)
    assert bad.value.code == ErrorCode.USAGE_ERROR


@pytest.mark.parametrize(
    ("metadata", "name"),
    [
        ({"kernelspec": {"name": "ir", "display_name": "R"}}, "ir"),
        ({"kernelspec": {"name": "  python3  "}}, "python3"),
        ({"kernelspec": {"display_name": "no name"}}, "python3"),
        ({"kernelspec": "python3"}, "python3"),
        ({}, "python3"),
        (None, "python3"),
    ],
)
def test_kernelspec_name_comes_from_notebook_metadata(
    metadata: dict[str, Any] | None, name: str
) -> None:
    assert kernelspec_name_from_metadata(metadata) == name


class EventLog(ScriptedBackend):
    """A scripted kernel whose request runs until interrupted (``working`` first), and that
    records, in one list shared by every backend of a kernel, what happened to it in order."""

    def __init__(self, events: list[str], *, obeys_interrupt: bool = True) -> None:
        super().__init__(self._runs)
        self.events = events
        self.obeys = obeys_interrupt
        self.on_interrupt = self._stops

    def _runs(self, b: ScriptedBackend, msg_id: str, code: str) -> None:
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
    monkeypatch.setattr("jupyter_jcli.kernels._run.STOP_GRACE", 0.5)
    monkeypatch.setattr("jupyter_jcli.kernels._run.INTERRUPT_RETRY", 0.2)
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
    kernel = make_kernel(tmp_path, ScriptedBackend(prints("one\n")), ScriptedBackend(prints("")))
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
    monkeypatch.setattr("jupyter_jcli.kernels._kernel.STOP_WAIT", 0.3)
    kernel = make_kernel(tmp_path, ScriptedBackend(prints("x\n")))
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
