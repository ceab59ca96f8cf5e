"""Real ipykernel tests: execution, errors, timeouts, stdin, death, races, displays, epochs.

One kernel is shared by the module where a test leaves it usable; tests that kill, restart or
shut down a kernel use their own notebook path. Every wait is bounded (``anyio.fail_after``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import (
    DisplayUpdate,
    KernelPool,
    NotebookKernel,
    Output,
    kernelspec_name_from_metadata,
)

pytestmark = [pytest.mark.kernel, pytest.mark.anyio]

WAIT = 45.0
"""Upper bound (s) on any one test's kernel waits."""
SORTING = "02.08-Sorting.ipynb"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("notebooks")


@pytest.fixture(scope="module")
def sorting(folder: Path) -> Path:
    """A copy of a real notebook (PDSH, MIT) in its own folder: the shared kernel's notebook."""
    src = Path(__file__).parent.parent / "fixtures" / "notebooks" / SORTING
    dest = folder / "sorting" / SORTING
    dest.parent.mkdir()
    shutil.copyfile(src, dest)
    return dest


@pytest.fixture(scope="module")
async def pool() -> AsyncIterator[KernelPool]:
    async with KernelPool() as kernels:
        yield kernels


@pytest.fixture(scope="module")
async def shared(pool: KernelPool, sorting: Path) -> NotebookKernel:
    metadata = json.loads(sorting.read_text(encoding="utf-8"))["metadata"]
    return pool.kernel(sorting, kernelspec_name=kernelspec_name_from_metadata(metadata))


def texts(outputs: list[Output]) -> list[tuple[str, str]]:
    """(output_type, text) per output: stream text, text/plain, or ename."""
    result = []
    for o in outputs:
        if o["output_type"] == "stream":
            result.append(("stream", o["text"]))
        elif o["output_type"] == "error":
            result.append(("error", o["ename"]))
        else:
            plain = o["data"].get("text/plain", "")
            result.append((o["output_type"], "".join(plain)))
    return result


def assert_valid(outputs: list[Output]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x", outputs=outputs, execution_count=1))
    nbformat.validate(nbformat.from_dict(nb))


async def test_real_notebook_cells_reproduce_their_saved_outputs(
    shared: NotebookKernel, sorting: Path
) -> None:
    cells = json.loads(sorting.read_text(encoding="utf-8"))["cells"]
    # the first ten: later ones use np.partition, whose order depends on the numpy version
    code = [c for c in cells if c["cell_type"] == "code"][:10]
    counts = []
    with anyio.fail_after(WAIT):
        for i, cell in enumerate(code):
            result = await shared.execute("".join(cell["source"]), cell_key=f"cell-{i}")
            assert result.status == "ok", result
            saved = [
                {**o, "text": "".join(o["text"])}
                if o["output_type"] == "stream"
                else {**o, "data": {k: "".join(v) for k, v in o["data"].items()}}
                for o in cell["outputs"]
            ]
            assert texts(result.outputs) == texts(saved)
            assert_valid(result.outputs)
            assert result.epoch == shared.epoch
            counts.append(result.execution_count)
    assert counts == sorted(counts)
    assert len(set(counts)) == len(counts)


async def test_execution_gives_outputs_count_and_epoch(shared: NotebookKernel) -> None:
    code = "from IPython.display import display\nprint('out')\ndisplay('shown')\n6 * 7"
    with anyio.fail_after(WAIT):
        first = await shared.execute(code, cell_key="simple")
        second = await shared.execute("None", cell_key="other")
        info = await shared.info()
    assert first.status == "ok"
    assert texts(first.outputs) == [
        ("stream", "out\n"),
        ("display_data", "'shown'"),
        ("execute_result", "42"),
    ]
    assert first.outputs[-1]["execution_count"] == first.execution_count
    assert second.execution_count == (first.execution_count or 0) + 1
    assert second.outputs == []
    assert not first.kernel_restarted
    assert info.state == "idle"
    assert info.epoch == first.epoch == second.epoch
    assert info.kernelspec_name == "python3"
    assert isinstance(info.pid, int)
    assert_valid(first.outputs)


async def test_an_exception_is_an_error_output_and_status(shared: NotebookKernel) -> None:
    with anyio.fail_after(WAIT):
        result = await shared.execute("print('before')\nraise ValueError('boom')")
        after = await shared.execute("'still alive'")
    assert result.status == "error"
    assert (result.ename, result.evalue) == ("ValueError", "boom")
    assert texts(result.outputs) == [("stream", "before\n"), ("error", "ValueError")]
    assert result.outputs[-1]["evalue"] == "boom"
    assert result.outputs[-1]["traceback"]
    assert after.status == "ok"
    assert texts(after.outputs) == [("execute_result", "'still alive'")]


async def test_a_cell_past_its_timeout_is_interrupted_and_the_kernel_stays_usable(
    shared: NotebookKernel,
) -> None:
    code = "import time\nprint('started', flush=True)\ntime.sleep(60)\nprint('never')"
    with anyio.fail_after(WAIT):
        result = await shared.execute(code, timeout=2)
        after = await shared.execute("'usable'")
    assert result.status == "timeout"
    assert ("stream", "started\n") in texts(result.outputs)
    assert ("stream", "never\n") not in texts(result.outputs)
    assert after.status == "ok"
    assert not after.kernel_restarted
    assert after.epoch == result.epoch
    assert texts(after.outputs) == [("execute_result", "'usable'")]


async def test_input_fails_at_once_with_a_clear_error(shared: NotebookKernel) -> None:
    with anyio.fail_after(WAIT):
        result = await shared.execute("name = input('Your name? ')", timeout=30)
    assert result.status == "error"
    assert result.ename == "StdinNotImplementedError"
    assert "input" in (result.evalue or "")
    assert texts(result.outputs)[-1] == ("error", "StdinNotImplementedError")


async def test_a_second_execution_never_interleaves(shared: NotebookKernel) -> None:
    started = anyio.Event()
    results: dict[str, Any] = {}

    def first_output(output: Output) -> None:
        started.set()

    async def first() -> None:
        results["a"] = await shared.execute(
            "import time\nprint('a1', flush=True)\ntime.sleep(1)\nprint('a2')",
            cell_key="a",
            on_output=first_output,
        )

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await started.wait()
            with pytest.raises(KernelError) as refused:
                await shared.execute("print('refused')", busy_wait=0)
            results["b"] = await shared.execute("print('b')", cell_key="b", busy_wait=WAIT)
    assert refused.value.code == ErrorCode.KERNEL_BUSY
    assert refused.value.details["running_cell"] == "a"
    assert texts(results["a"].outputs) == [("stream", "a1\na2\n")]
    assert texts(results["b"].outputs) == [("stream", "b\n")]
    assert results["b"].execution_count == results["a"].execution_count + 1


async def test_hold_keeps_the_kernel_for_a_batch(shared: NotebookKernel) -> None:
    with anyio.fail_after(WAIT):
        async with shared.hold():
            one = await shared.execute("1")
            assert (await shared.info()).state == "busy"

            async def intruder() -> None:
                with pytest.raises(KernelError) as refused:
                    await shared.execute("2")
                assert refused.value.code == ErrorCode.KERNEL_BUSY

            async with anyio.create_task_group() as tg:
                tg.start_soon(intruder)
            two = await shared.execute("3")
    assert two.execution_count == (one.execution_count or 0) + 1


async def test_update_display_reaches_an_earlier_cell(shared: NotebookKernel) -> None:
    with anyio.fail_after(WAIT):
        shown = await shared.execute(
            "from IPython.display import display\nprint('x')\n"
            "handle = display('v1', display_id='progress-bar')",
            cell_key="show",
        )
        updated = await shared.execute("handle.update('v2')", cell_key="update")
    assert texts(shown.outputs) == [("stream", "x\n"), ("display_data", "'v1'")]
    assert updated.status == "ok"
    assert updated.outputs == []
    assert updated.display_updates == [
        DisplayUpdate("show", 1, {"text/plain": "'v2'"}, {}),
    ]


async def test_ten_thousand_carriage_return_updates_end_as_one_line(
    shared: NotebookKernel,
) -> None:
    seen: list[Output] = []
    code = (
        "import sys\n"
        "for i in range(10_000):\n"
        "    print(f'{i / 100:.2f}% |' + '#' * (i // 500), end='\\r')\n"
        "print('done')"
    )
    with anyio.fail_after(WAIT):
        result = await shared.execute(code, on_output=seen.append)
    assert result.status == "ok"
    assert result.outputs == [{"output_type": "stream", "name": "stdout", "text": "done\n"}]
    assert seen
    assert all(o["output_type"] == "stream" for o in seen)


async def test_the_kernel_runs_in_the_notebook_folder(
    shared: NotebookKernel, sorting: Path
) -> None:
    with anyio.fail_after(WAIT):
        result = await shared.execute("import os\nprint(os.getcwd())")
    assert texts(result.outputs) == [("stream", f"{sorting.parent.resolve()}\n")]
    assert shared.cwd == sorting.parent.resolve()


async def test_silent_evaluation_leaves_count_and_history_alone(shared: NotebookKernel) -> None:
    with anyio.fail_after(WAIT):
        before = await shared.execute("value = 41\nvalue")
        inspected = await shared.evaluate(
            "print(type(value).__name__)",
            user_expressions={"next": "value + 1", "bad": "missing_name"},
        )
        after = await shared.execute("_")
    assert inspected.status == "ok"
    assert inspected.stdout == "int\n"
    assert inspected.expressions["next"].status == "ok"
    assert inspected.expressions["next"].text == "42"
    assert inspected.expressions["bad"].status == "error"
    assert inspected.expressions["bad"].ename == "NameError"
    assert inspected.epoch == before.epoch
    assert after.execution_count == (before.execution_count or 0) + 1
    assert texts(after.outputs) == [("execute_result", "41")]


async def test_interrupt_stops_the_running_cell_and_says_so(shared: NotebookKernel) -> None:
    async def interrupt_on_output(output: Output) -> None:
        if output.get("text") == "go\n":
            await shared.interrupt()

    # the cell leaves the flush to ipykernel: a SIGINT landing inside an explicit flush can
    # be lost by ipykernel (one in ~50 runs), which is the kernel's behaviour, not ours
    with anyio.fail_after(WAIT):
        result = await shared.execute(
            "import sys, time\nsys.stdout.write('go\\n')\ntime.sleep(60)",
            on_output=interrupt_on_output,
        )
    assert result.status == "interrupted"
    assert result.interrupted_by == "kernel_interrupted"
    assert result.ename == "KeyboardInterrupt"
    assert not result.kernel_killed


async def test_a_cancelled_execution_leaves_the_kernel_idle(shared: NotebookKernel) -> None:
    started = anyio.Event()
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                await shared.execute(
                    "import time\nprint('go', flush=True)\ntime.sleep(60)",
                    on_output=lambda output: started.set(),
                )

            tg.start_soon(run)
            await started.wait()
            tg.cancel_scope.cancel()
        after = await shared.execute("'next'")
    assert after.status == "ok"
    assert texts(after.outputs) == [("execute_result", "'next'")]


async def test_a_dead_kernel_is_reported_then_replaced_with_a_new_epoch(
    pool: KernelPool, folder: Path
) -> None:
    kernel = pool.kernel(folder / "dies.ipynb")
    with anyio.fail_after(WAIT):
        first = await kernel.execute("x = 1\nprint('ok')")
        died = await kernel.execute(
            "print('bye', flush=True)\nimport os\nos._exit(1)", cell_key="c"
        )
        dead = await kernel.info()
        again = await kernel.execute("'x' in dir()")
    assert first.status == "ok"
    assert died.status == "died"
    assert died.epoch == first.epoch
    assert dead.state == "dead"
    assert dead.epoch is None
    assert kernel.epoch == again.epoch
    assert again.status == "ok"
    assert again.kernel_restarted
    assert again.epoch != first.epoch
    assert again.execution_count == 1
    assert texts(again.outputs) == [("execute_result", "False")]


async def test_restart_mints_a_new_epoch_and_an_empty_namespace(
    pool: KernelPool, folder: Path
) -> None:
    kernel = pool.kernel(folder / "restarts.ipynb")
    with anyio.fail_after(WAIT):
        with pytest.raises(KernelError) as not_running:
            await kernel.evaluate("", user_expressions={"x": "1"})
        first = await kernel.execute("y = 5")
        new_epoch = await kernel.restart()
        after = await kernel.execute("'y' in dir()")
    assert not_running.value.code == ErrorCode.KERNEL_NOT_RUNNING
    assert new_epoch != first.epoch
    assert after.epoch == new_epoch
    assert not after.kernel_restarted
    assert after.execution_count == 1
    assert texts(after.outputs) == [("execute_result", "False")]


async def test_a_missing_kernelspec_lists_the_installed_ones(
    pool: KernelPool, folder: Path
) -> None:
    kernel = pool.kernel(folder / "other.ipynb", kernelspec_name="no-such-kernel-jcli")
    with anyio.fail_after(WAIT), pytest.raises(KernelError) as missing:
        await kernel.execute("1")
    assert missing.value.code == ErrorCode.KERNELSPEC_NOT_FOUND
    assert missing.value.details["kernelspec"] == "no-such-kernel-jcli"
    assert "python3" in missing.value.details["installed"]
    assert (await kernel.info()).state == "not_started"


async def test_shutdown_all_leaves_no_kernel_process(folder: Path) -> None:
    pids = []
    with anyio.fail_after(WAIT):
        async with KernelPool() as own:
            for name in ("one.ipynb", "two.ipynb"):
                kernel = own.kernel(folder / name)
                result = await kernel.execute("import os\nos.getpid()")
                pid = int(texts(result.outputs)[0][1])
                assert (await kernel.info()).pid == pid
                pids.append(pid)
        states = [(await k.info()).state for k in own.kernels()]
    assert states == ["not_started", "not_started"]
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
