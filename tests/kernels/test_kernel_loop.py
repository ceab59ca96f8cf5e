"""The execution loop against a scripted backend (no kernel): parents, replies, death, settling,
start failures, timeouts and configuration."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, JcliError, KernelError
from jupyter_jcli.kernels import (
    DEFAULT_EXECUTE_TIMEOUT,
    EXECUTE_TIMEOUT_ENV,
    KernelBackend,
    NotebookKernel,
    execute_timeout,
    kernelspec_name_from_metadata,
)
from kernel_fakes import FakeBackend, message, one_after_another, prints

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_kernel(tmp_path: Path, *backends: FakeBackend) -> NotebookKernel:
    """A kernel whose successive lives are ``backends``."""
    return NotebookKernel(tmp_path / "nb.ipynb", backend_factory=one_after_another(*backends))


def test_backends_satisfy_the_protocol() -> None:
    from jupyter_jcli.kernels import LocalBackend

    assert isinstance(LocalBackend(), KernelBackend)
    assert isinstance(FakeBackend(prints("x")), KernelBackend)


async def test_messages_of_other_requests_are_skipped(tmp_path: Path) -> None:
    kernel = make_kernel(tmp_path, FakeBackend(prints("mine\n")))
    with anyio.fail_after(10):
        result = await kernel.execute("print('mine')")
    assert result.status == "ok"
    assert result.outputs == [{"output_type": "stream", "name": "stdout", "text": "mine\n"}]
    assert result.execution_count == 1


async def test_idle_without_a_reply_ends_with_the_error_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_jcli.kernels._request.REPLY_GRACE", 0.2)

    def react(b: FakeBackend, msg_id: str, code: str) -> None:
        b.emit(message("execute_input", msg_id, code=code, execution_count=4))
        b.emit(message("error", msg_id, ename="KeyboardInterrupt", evalue="", traceback=[]))
        b.finish(msg_id, reply=False)

    kernel = make_kernel(tmp_path, FakeBackend(react))
    with anyio.fail_after(10):
        result = await kernel.execute("x")
    assert (result.status, result.ename, result.execution_count) == (
        "error",
        "KeyboardInterrupt",
        4,
    )


async def test_a_kernel_that_dies_is_reported_and_replaced(tmp_path: Path) -> None:
    def dies(b: FakeBackend, msg_id: str, code: str) -> None:
        b.emit(message("stream", msg_id, name="stdout", text="last words\n"))
        b.alive = False

    first, second = FakeBackend(dies), FakeBackend(prints("hi\n"))
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


class LateWordsBackend(FakeBackend):
    """A kernel whose last outputs reach the client only after its death is noticed (as
    ipykernel's do: they leave from its I/O thread)."""

    def __init__(self) -> None:
        super().__init__(self._dies)
        self.late: list[dict[str, Any]] = []

    def _dies(self, b: FakeBackend, msg_id: str, code: str) -> None:
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
    monkeypatch.setattr("jupyter_jcli.kernels._request.SETTLE_TIMEOUT", 0.6)
    monkeypatch.setattr("jupyter_jcli.kernels._request.INTERRUPT_RETRY", 0.2)

    def hangs(b: FakeBackend, msg_id: str, code: str) -> None:
        b.emit(message("stream", msg_id, name="stdout", text="working\n"))

    stuck, fresh = FakeBackend(hangs), FakeBackend(prints("ok\n"))
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
    backend = FakeBackend(lambda b, msg_id, code: None)

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
    backend = FakeBackend(
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
    kernel = make_kernel(tmp_path, FakeBackend(prints(""), fail_start=True))
    with anyio.fail_after(10), pytest.raises(KernelError) as failed:
        await kernel.execute("1")
    assert failed.value.code == ErrorCode.KERNEL_START_FAILED
    assert (await kernel.info()).state == "not_started"


async def test_a_restart_past_the_last_scripted_life_fails_to_start(tmp_path: Path) -> None:
    only = FakeBackend(prints("one\n"))
    kernel = make_kernel(tmp_path, only)
    with anyio.fail_after(10):
        first = await kernel.execute("print('one')")
        with pytest.raises(KernelError) as failed:
            await kernel.restart()
    assert first.status == "ok"
    assert failed.value.code == ErrorCode.KERNEL_START_FAILED
    assert only.shutdowns == [False]


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
