"""A registered kernel joined through its connection file (``RegistryBackend``): two pools on
one registry (two processes' views) run code, streams, errors and displays on the same
kernel, interrupt it and see it die."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from jupyter_jcli.kernels import KernelRegistry, RegistryBackend, RegistryKernelPool

pytestmark = [pytest.mark.kernel, pytest.mark.anyio]

WAIT = 60.0
"""Upper bound (s) on any one test's kernel waits."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def registry(tmp_path: Path) -> KernelRegistry:
    return KernelRegistry(tmp_path / "registry")


@pytest.fixture
async def starter(registry: KernelRegistry) -> AsyncIterator[RegistryKernelPool]:
    """The pool that starts the kernel (stopped when it ends)."""
    async with RegistryKernelPool(registry=registry) as pool:
        yield pool


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    path = tmp_path / "nb.ipynb"
    path.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', "utf-8")
    return path


async def test_a_second_pool_joins_the_registered_kernel_and_sees_its_state(
    registry: KernelRegistry, starter: RegistryKernelPool, notebook: Path
) -> None:
    with anyio.fail_after(WAIT):
        first = await starter.kernel(notebook).execute("shared = 41")
        assert first.status == "ok"
        async with RegistryKernelPool(registry=registry) as joiner:
            kernel = joiner.kernel(notebook)
            result = await kernel.execute("print(shared + 1)\nshared + 2")
            backend = kernel._backend
            assert isinstance(backend, RegistryBackend)
            assert result.epoch == first.epoch and not result.kernel_restarted
            assert result.status == "ok"
            assert [o["output_type"] for o in result.outputs] == ["stream", "execute_result"]
            assert result.outputs[0]["text"] == "42\n"
            assert result.outputs[1]["data"]["text/plain"] == "43"
            assert result.execution_count == first.execution_count + 1  # type: ignore[operator]
        assert await starter.kernel(notebook).is_alive()  # the joiner left it running


async def test_errors_stderr_and_displays_arrive_through_the_joined_kernel(
    starter: RegistryKernelPool, notebook: Path
) -> None:
    code = (
        "import sys\nfrom IPython.display import display, HTML\n"
        "print('warn', file=sys.stderr)\n"
        "display(HTML('<b>hi</b>'), display_id='d1')\n"
        "raise ValueError('boom')\n"
    )
    with anyio.fail_after(WAIT):
        result = await starter.kernel(notebook).execute(code, cell_key="c")
    assert result.status == "error"
    assert (result.ename, result.evalue) == ("ValueError", "boom")
    kinds = [o["output_type"] for o in result.outputs]
    assert kinds == ["stream", "display_data", "error"]
    assert result.outputs[0]["name"] == "stderr"
    assert result.outputs[1]["data"]["text/html"] == "<b>hi</b>"


async def test_an_interrupt_stops_running_code_and_the_kernel_keeps_its_state(
    starter: RegistryKernelPool, notebook: Path
) -> None:
    kernel = starter.kernel(notebook)
    with anyio.fail_after(WAIT):
        await kernel.execute("kept = 'yes'")
        results = []

        async def run() -> None:
            results.append(await kernel.execute("import time\nprint('go', flush=True)\n"
                                                "time.sleep(60)"))  # fmt: skip

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await anyio.sleep(1.0)
            await kernel.interrupt()
        (result,) = results
        assert result.status == "interrupted"
        assert result.ename == "KeyboardInterrupt"
        after = await kernel.execute("print(kept)")
    assert after.outputs[0]["text"] == "yes\n"
    assert after.epoch == result.epoch


async def test_a_joined_kernel_killed_from_outside_is_seen_dead(
    registry: KernelRegistry, starter: RegistryKernelPool, notebook: Path
) -> None:
    with anyio.fail_after(WAIT):
        await starter.kernel(notebook).execute("pass")
        async with RegistryKernelPool(registry=registry) as joiner:
            kernel = joiner.kernel(notebook)
            assert await kernel.is_alive()
            pid = (await kernel.info()).pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            while await kernel.is_alive():
                await anyio.sleep(0.1)
            assert (await kernel.info()).state in ("dead", "not_started")
