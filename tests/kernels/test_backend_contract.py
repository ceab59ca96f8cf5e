"""The backend contract: the same behaviour sentences against every kernel backend.

Each test runs once per backend in :data:`BACKENDS`, through :class:`NotebookKernel` (the
shared execution loop above every backend): the local backend (a real ipykernel, marker
``kernel``), the shipped fake (:mod:`kernel_fakes`, in-process), the
Jupyter Server backend on a real ``jupyter server`` (marker ``server``, fixture
``jupyter_server`` of ``conftest.py``) and :class:`~jupyter_jcli.kernels.RegistryBackend`, the
default of both front ends (a registry kernel joined through its connection file, started
by a supervisor; marker ``kernel``, a registry folder of the test's own); the sentences do
not change. Every wait is bounded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import (
    BackendFactory,
    KernelBackend,
    KernelRegistry,
    NotebookKernel,
    Output,
    RegistryKernelPool,
)
from kernel_fakes import FakeBackend, InProcessPython
from server_helpers import RunningServer

pytestmark = pytest.mark.anyio

WAIT = 60.0
"""Upper bound (s) on one test's kernel waits (a real kernel starts in a few seconds)."""
SLEEPS = "print('go')\nimport time\ntime.sleep(60)\nprint('never')"
"""A cell that runs until it is stopped, after saying ``go``."""


def _local(request: pytest.FixtureRequest) -> BackendFactory:
    from jupyter_jcli.kernels import LocalBackend

    return LocalBackend


def _server(request: pytest.FixtureRequest) -> BackendFactory:
    from jupyter_jcli.kernels import backend_factory

    server: RunningServer = request.getfixturevalue("jupyter_server")
    return backend_factory(server.config())


def _fake(request: pytest.FixtureRequest) -> BackendFactory:
    def factory() -> KernelBackend:
        return FakeBackend(InProcessPython(), kernelspecs=["python3"])

    return factory


MakeKernel = Callable[[Path, str], NotebookKernel]
"""A notebook's kernel object for a path and a kernelspec, not started."""


def _of(factory: BackendFactory) -> MakeKernel:
    def make(path: Path, spec: str) -> NotebookKernel:
        return NotebookKernel(path, kernelspec_name=spec, backend_factory=factory)

    return make


def _shared(request: pytest.FixtureRequest) -> MakeKernel:
    tmp_path: Path = request.getfixturevalue("tmp_path")
    pool = RegistryKernelPool(registry=KernelRegistry(tmp_path / "registry"))
    return lambda path, spec: pool.kernel(path, kernelspec_name=spec)


BACKENDS = [
    pytest.param(lambda request: _of(_local(request)), id="local", marks=pytest.mark.kernel),
    pytest.param(lambda request: _of(_fake(request)), id="fake"),
    pytest.param(lambda request: _of(_server(request)), id="server", marks=pytest.mark.server),
    pytest.param(_shared, id="shared", marks=pytest.mark.kernel),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=BACKENDS)
def make_kernel(request: pytest.FixtureRequest) -> MakeKernel:
    make: Callable[[pytest.FixtureRequest], MakeKernel] = request.param
    return make(request)


@pytest.fixture
async def kernel(make_kernel: MakeKernel, tmp_path: Path) -> AsyncIterator[NotebookKernel]:
    kernel = make_kernel(tmp_path / "nb.ipynb", "python3")
    try:
        yield kernel
    finally:
        with anyio.fail_after(WAIT):
            await kernel.shutdown(now=True)


def texts(outputs: list[Output]) -> list[tuple[str, str]]:
    """(output_type, text) per output: stream text, text/plain, or ename."""
    found = []
    for output in outputs:
        if output["output_type"] == "stream":
            found.append(("stream", output["text"]))
        elif output["output_type"] == "error":
            found.append(("error", output["ename"]))
        else:
            plain = output["data"].get("text/plain", "")
            found.append((output["output_type"], "".join(plain)))
    return found


async def test_the_first_execution_starts_the_kernel_in_the_notebook_folder(
    kernel: NotebookKernel, tmp_path: Path
) -> None:
    with anyio.fail_after(WAIT):
        before = await kernel.info()
        result = await kernel.execute("print('hello')")
        after = await kernel.info()
    assert before.state == "not_started" and before.epoch is None
    assert result.status == "ok"
    assert result.execution_count == 1
    assert after.state == "idle" and after.epoch == result.epoch
    assert after.cwd == tmp_path.resolve()


async def test_a_missing_kernelspec_is_refused_listing_the_installed_ones(
    make_kernel: MakeKernel, tmp_path: Path
) -> None:
    kernel = make_kernel(tmp_path / "nb.ipynb", "no-such-kernel")
    with anyio.fail_after(WAIT), pytest.raises(KernelError) as refused:
        await kernel.execute("1")
    assert refused.value.code == ErrorCode.KERNELSPEC_NOT_FOUND
    assert "python3" in refused.value.details["installed"]
    assert (await kernel.info()).state == "not_started"


async def test_streams_results_and_counts_come_back_as_nbformat_outputs(
    kernel: NotebookKernel,
) -> None:
    with anyio.fail_after(WAIT):
        printed = await kernel.execute("print('a')\nprint('b')")
        value = await kernel.execute("x = 6\nx * 7")
    assert printed.status == "ok"
    assert "".join(text for _kind, text in texts(printed.outputs)) == "a\nb\n"
    assert texts(value.outputs) == [("execute_result", "42")]
    assert value.outputs[0]["execution_count"] == value.execution_count == 2


async def test_an_exception_is_an_error_output_with_its_name(kernel: NotebookKernel) -> None:
    with anyio.fail_after(WAIT):
        result = await kernel.execute("print('before')\n1 / 0")
    assert result.status == "error"
    assert (result.ename, result.evalue) == ("ZeroDivisionError", "division by zero")
    assert texts(result.outputs) == [("stream", "before\n"), ("error", "ZeroDivisionError")]
    assert result.outputs[-1]["traceback"]


async def test_a_display_update_replaces_the_shown_data(kernel: NotebookKernel) -> None:
    code = "h = display('first', display_id=True)\nh.update('second')"
    with anyio.fail_after(WAIT):
        result = await kernel.execute(code, cell_key="shown")
        later = await kernel.execute("h.update('third')", cell_key="later")
    assert result.status == "ok"
    assert texts(result.outputs) == [("display_data", "'second'")]
    assert later.outputs == []
    (update,) = later.display_updates
    assert (update.cell_key, update.output_index) == ("shown", 0)
    assert update.data["text/plain"] == "'third'"


async def test_input_is_refused_at_once(kernel: NotebookKernel) -> None:
    with anyio.fail_after(WAIT):
        result = await kernel.execute("name = input('Your name? ')", timeout=30)
    assert result.status == "error"
    assert result.ename == "StdinNotImplementedError"
    assert texts(result.outputs)[-1] == ("error", "StdinNotImplementedError")


async def test_a_silent_evaluation_returns_user_expressions_without_a_count(
    kernel: NotebookKernel,
) -> None:
    with anyio.fail_after(WAIT):
        await kernel.execute("x = 5")
        evaluated = await kernel.evaluate("", user_expressions={"double": "x * 2", "bad": "y"})
        after = await kernel.execute("x")
    assert evaluated.status == "ok"
    assert evaluated.expressions["double"].text == "10"
    assert evaluated.expressions["bad"].status == "error"
    assert evaluated.expressions["bad"].ename == "NameError"
    assert after.execution_count == 2


async def test_an_interrupt_ends_the_running_cell_and_keeps_the_kernel(
    kernel: NotebookKernel,
) -> None:
    async def interrupt_on_go(output: Output) -> None:
        if output.get("text") == "go\n":
            await kernel.interrupt()

    with anyio.fail_after(WAIT):
        result = await kernel.execute(SLEEPS, on_output=interrupt_on_go)
        info = await kernel.info()
    assert (result.status, result.interrupted_by) == ("interrupted", "kernel_interrupted")
    assert result.ename == "KeyboardInterrupt" and not result.kernel_killed
    assert ("stream", "never\n") not in texts(result.outputs)
    assert info.state == "idle" and info.epoch == result.epoch


async def test_a_cell_past_its_timeout_is_interrupted_and_the_kernel_stays_usable(
    kernel: NotebookKernel,
) -> None:
    with anyio.fail_after(WAIT):
        await kernel.execute("kept = 'yes'")
        result = await kernel.execute(SLEEPS, timeout=2)
        after = await kernel.execute("kept")
    assert result.status == "timeout" and not result.kernel_killed
    assert texts(result.outputs)[0] == ("stream", "go\n")
    assert after.status == "ok" and not after.kernel_restarted
    assert after.epoch == result.epoch
    assert texts(after.outputs) == [("execute_result", "'yes'")]


async def test_a_restart_mints_a_new_epoch_and_forgets_the_variables(
    kernel: NotebookKernel,
) -> None:
    with anyio.fail_after(WAIT):
        first = await kernel.execute("a = 1")
        epoch = await kernel.restart()
        after = await kernel.execute("a")
    assert epoch != first.epoch and after.epoch == epoch == kernel.epoch
    assert (after.status, after.ename) == ("error", "NameError")
    assert after.execution_count == 1


async def test_a_shutdown_leaves_no_kernel_and_the_next_execution_starts_one(
    kernel: NotebookKernel,
) -> None:
    with anyio.fail_after(WAIT):
        first = await kernel.execute("a = 1")
        await kernel.shutdown()
        state = (await kernel.info()).state
        again = await kernel.execute("'back'")
    assert state == "not_started"
    assert again.status == "ok" and again.epoch != first.epoch
    assert texts(again.outputs) == [("execute_result", "'back'")]


async def test_a_kernel_that_dies_is_reported_and_replaced_on_the_next_execution(
    kernel: NotebookKernel,
) -> None:
    with anyio.fail_after(WAIT):
        died = await kernel.execute("import os\nos._exit(1)", cell_key="crash")
        info = await kernel.info()
        again = await kernel.execute("'alive'")
    assert died.status == "died"
    assert info.state == "dead" and info.epoch is None
    assert again.status == "ok" and again.kernel_restarted
    assert again.epoch != died.epoch


async def test_interrupt_and_evaluate_need_a_live_kernel(kernel: NotebookKernel) -> None:
    with anyio.fail_after(WAIT):
        for call in (kernel.interrupt(), kernel.evaluate("1")):
            with pytest.raises(KernelError) as refused:
                await call
            assert refused.value.code == ErrorCode.KERNEL_NOT_RUNNING
