"""Kernels whose executions exclude every other process of ours (``KernelPool(locks=...)``, the
pool of server kernels): the registry's execution lock is taken around each hold."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import KernelPool, KernelRegistry
from kernel_fakes import python_backend

pytestmark = pytest.mark.anyio

WAIT = 30


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_second_process_holding_the_notebooks_kernel_gets_kernel_busy(
    tmp_path: Path,
) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    notebook = tmp_path / "nb.ipynb"
    # Two pools on one registry stand for two processes: each opens its own lock file.
    first = KernelPool(backend_factory=python_backend, locks=registry)
    second = KernelPool(backend_factory=python_backend, locks=registry)
    with anyio.fail_after(WAIT):
        async with first, second:
            async with first.kernel(notebook).hold():
                ran = await first.kernel(notebook).execute("x = 1")
                assert ran.status == "ok"
                with pytest.raises(KernelError) as busy:
                    async with second.kernel(notebook).hold(busy_wait=0.2):
                        pass
                assert busy.value.code == ErrorCode.KERNEL_BUSY
                assert busy.value.details["busy_by"] == "another process"
            async with second.kernel(notebook).hold(busy_wait=0.2):  # released: free again
                assert (await second.kernel(notebook).execute("y = 2")).status == "ok"


async def test_a_hold_is_reentrant_within_its_task_and_other_notebooks_are_free(
    tmp_path: Path,
) -> None:
    registry = KernelRegistry(tmp_path / "registry")
    pool = KernelPool(backend_factory=python_backend, locks=registry)
    other = KernelPool(backend_factory=python_backend, locks=registry)
    with anyio.fail_after(WAIT):
        async with pool, other:
            kernel = pool.kernel(tmp_path / "a.ipynb")
            async with kernel.hold(), kernel.hold():  # execute() holds again inside
                assert (await kernel.execute("z = 3")).status == "ok"
                async with other.kernel(tmp_path / "b.ipynb").hold(busy_wait=0.2):
                    pass
