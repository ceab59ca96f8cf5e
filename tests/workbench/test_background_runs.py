"""The background runs' bookkeeping (``workbench._background``), without a kernel: runs
outside ``async with``, the bound on kept runs, a failed run's error, KERNEL_BUSY naming the
run that holds the notebook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, JcliError, KernelError
from jupyter_jcli.workbench._background import BATCHES_KEPT, BackgroundBatch, BackgroundBatches

pytestmark = pytest.mark.anyio

NB = Path("/nowhere/work.ipynb")


async def _quick(run: BackgroundBatch) -> str:
    return "outcome"


def test_a_run_needs_the_task_group_of_async_with() -> None:
    with pytest.raises(JcliError) as caught:
        BackgroundBatches().start("execute_cells", NB, _quick)
    assert caught.value.code == ErrorCode.USAGE_ERROR


async def test_only_the_last_finished_runs_are_kept_and_older_ids_say_expired() -> None:
    async with BackgroundBatches() as runs:
        ids = []
        for _ in range(BATCHES_KEPT + 3):
            run = runs.start("execute_cells", NB, _quick)
            await run.wait(10)
            assert run.state == "done"
            ids.append(run.run_id)
        assert runs.get(NB, ids[-1]).outcome == "outcome"
        with pytest.raises(JcliError) as caught:
            runs.get(NB, ids[0])
        assert caught.value.code == ErrorCode.RUN_NOT_FOUND
        assert caught.value.details["expired"] is True
        with pytest.raises(JcliError) as unknown:
            runs.get(NB, "never")
        assert unknown.value.details["expired"] is False
        with pytest.raises(JcliError) as elsewhere:
            runs.get(Path("/nowhere/other.ipynb"), ids[-1])
        assert elsewhere.value.code == ErrorCode.RUN_NOT_FOUND


async def test_a_running_run_holds_its_notebook_and_a_failed_one_keeps_its_error() -> None:
    gate = anyio.Event()

    async def held(run: BackgroundBatch) -> Any:
        await gate.wait()
        raise KernelError(ErrorCode.KERNEL_DIED, "gone", {})

    async with BackgroundBatches() as runs:
        run = runs.start("run_stale", NB, held)
        with pytest.raises(KernelError) as busy:
            runs.start("execute_cells", NB, _quick)
        assert busy.value.code == ErrorCode.KERNEL_BUSY
        assert busy.value.details["run_id"] == run.run_id
        assert runs.running_on(Path("/nowhere/other.ipynb")) is None
        assert run.status()["state"] == "running"
        gate.set()
        await run.wait(10)
        assert run.state == "failed"
        assert isinstance(run.error, KernelError)
        assert runs.running_on(NB) is None


async def test_an_error_that_ends_the_block_comes_out_as_itself_with_its_code() -> None:
    # jupyter-mcp serves inside `async with workbench.background`: a port it cannot bind must reach
    # main's `except JcliError` (one coded line), not a traceback of an exception group.
    refused = JcliError(ErrorCode.USAGE_ERROR, "cannot serve on 127.0.0.1:1")
    with pytest.raises(JcliError) as caught:
        async with BackgroundBatches():
            raise refused
    assert caught.value is refused
