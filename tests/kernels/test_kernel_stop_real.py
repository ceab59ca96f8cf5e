"""Real ipykernel: a restart or shutdown while a cell runs, and a timeout the cell ignores.

A restart used to close the kernel's ZMQ sockets under the running execution: its receive
ended in a bare ``CancelledError`` that also cancelled the restart. Each test has its own
notebook path (its own kernel); every wait is bounded (``anyio.fail_after``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_jcli.kernels import ExecutionResult, KernelPool, NotebookKernel, Output

pytestmark = [pytest.mark.kernel, pytest.mark.anyio]

WAIT = 60.0
"""Upper bound (s) on any one test's kernel waits."""
TICKS = "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.1)"
IGNORES_SIGINT = (
    "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "print('ignoring', flush=True)\ntime.sleep(600)"
)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def pool() -> AsyncIterator[KernelPool]:
    async with KernelPool() as kernels:
        yield kernels


def stream_text(outputs: list[Output]) -> str:
    return "".join(str(o.get("text", "")) for o in outputs if o["output_type"] == "stream")


class Ticking:
    """Runs ``code`` on the kernel in a task; ``printed`` is set at its first output."""

    def __init__(self, kernel: NotebookKernel, code: str = TICKS) -> None:
        self.kernel = kernel
        self.code = code
        self.printed = anyio.Event()
        self.result: ExecutionResult | None = None

    async def __call__(self) -> None:
        self.result = await self.kernel.execute(
            self.code, cell_key="ticks", on_output=lambda output: self.printed.set()
        )


async def test_a_restart_while_a_cell_prints_interrupts_it_and_keeps_its_outputs(
    pool: KernelPool, tmp_path: Path
) -> None:
    kernel = pool.kernel(tmp_path / "restart.ipynb")
    ticking = Ticking(kernel)
    with anyio.fail_after(WAIT):
        await kernel.execute("kept = 1")
        async with anyio.create_task_group() as tg:
            tg.start_soon(ticking)
            await ticking.printed.wait()
            epoch = await kernel.restart()
        after = await kernel.execute("'kept' in dir()")
    result = ticking.result
    assert result is not None
    assert (result.status, result.interrupted_by) == ("interrupted", "kernel_restarted")
    assert result.ename == "KeyboardInterrupt" and not result.kernel_killed
    assert stream_text(result.outputs).startswith("tick 0\n")
    assert epoch != result.epoch and after.epoch == epoch
    assert after.status == "ok" and after.outputs[0]["data"]["text/plain"] == "False"


async def test_a_shutdown_while_a_cell_runs_interrupts_it_and_leaves_no_kernel(
    pool: KernelPool, tmp_path: Path
) -> None:
    kernel = pool.kernel(tmp_path / "shutdown.ipynb")
    ticking = Ticking(kernel)
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(ticking)
            await ticking.printed.wait()
            await kernel.shutdown()
        state = (await kernel.info()).state
    result = ticking.result
    assert result is not None
    assert (result.status, result.interrupted_by) == ("interrupted", "kernel_shutdown")
    assert "tick 0" in stream_text(result.outputs)
    assert state == "not_started"


async def test_a_timeout_the_cell_ignores_kills_the_kernel_and_says_so(
    pool: KernelPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_jcli.kernels._request.SETTLE_TIMEOUT", 1.5)
    kernel = pool.kernel(tmp_path / "ignores.ipynb")
    with anyio.fail_after(WAIT):
        await kernel.execute("kept = 1")
        result = await kernel.execute(IGNORES_SIGINT, timeout=1.0)
        info = await kernel.info()
        after = await kernel.execute("'kept' in dir()")
    assert result.status == "timeout" and result.kernel_killed
    assert stream_text(result.outputs) == "ignoring\n"
    assert info.state == "dead" and info.epoch is None
    assert after.kernel_restarted and after.epoch != result.epoch
    assert after.outputs[0]["data"]["text/plain"] == "False"


async def test_an_interrupted_cell_that_settles_keeps_the_kernel(
    pool: KernelPool, tmp_path: Path
) -> None:
    kernel = pool.kernel(tmp_path / "settles.ipynb")
    with anyio.fail_after(WAIT):
        result = await kernel.execute("import time\ntime.sleep(600)", timeout=1.0)
        info: Any = await kernel.info()
    assert result.status == "timeout" and not result.kernel_killed
    assert info.state == "idle" and info.epoch == result.epoch
