"""Two workbenches on one :class:`~kernel_fakes.MemoryRecords` stand for two
processes of ours on one shared kernel, in-process: each pool owns its records and the
workbench keeps its run log there, so a cell one ran is fresh in the other."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio
import pytest
from wb_helpers import make_notebook

from jupyter_jcli.kernels import KernelOrigin, KernelPool
from jupyter_jcli.workbench import Workbench
from kernel_fakes import InProcessPython, MemoryRecords, python_backend

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_cell_one_process_ran_is_fresh_for_another_on_the_same_kernel(
    tmp_path: Path,
) -> None:
    records, python = MemoryRecords(), InProcessPython()
    factory = partial(python_backend, origin=KernelOrigin(epoch="e1"), python=python)
    path = make_notebook(tmp_path, ["x = 40", "y = x + 2", "print(y)"])

    def workbench(name: str) -> Workbench:
        pool = KernelPool(backend_factory=factory, records=records)
        return Workbench(cache_dir=tmp_path / name, pool=pool)

    with anyio.fail_after(30):
        async with workbench("a") as first, workbench("b") as second:
            names = list((await first.notebook_overview(path)).statuses)
            await first.execute_cells(path, names[:2])
            await second.execute_cells(path, [names[2]])  # joins the kernel of epoch e1
            theirs = dict((await second.notebook_overview(path)).statuses)
            await second.execute_code(path, "x = 1")  # code outside the cells writes x
            after = dict((await first.notebook_overview(path)).statuses)
    assert theirs == dict.fromkeys(names, "fresh")
    assert set(after.values()) == {"stale"}  # x, and every cell that reads it since
