"""NotebookKernel with a backend that restarts its kernel in place (``InPlaceRestart``, as the
Jupyter Server backend does): the same backend is kept with a new epoch; a changed
kernelspec or a dead kernel falls back to a fresh backend; a failed restart leaves the kernel
dead. On the shipped fake, in-process."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import InPlaceRestart, KernelBackend, NotebookKernel
from kernel_fakes import FakeBackend, InProcessPython

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class RestartingFake(FakeBackend):
    """The fake, plus an in-place restart: a fresh namespace in the same backend."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__(InProcessPython(), kernelspecs=["python3", "other"])
        self.restarts = 0
        self.fail = fail

    async def restart(self, *, timeout: float) -> None:
        if self.fail:
            raise KernelError(ErrorCode.SERVER_UNREACHABLE, "the server went away")
        self.restarts += 1
        self.react = InProcessPython()
        self.count = 0


def kernel_of(made: list[RestartingFake], tmp_path: Path, **fake: bool) -> NotebookKernel:
    def factory() -> KernelBackend:
        made.append(RestartingFake(**fake))
        return made[-1]

    return NotebookKernel(tmp_path / "nb.ipynb", backend_factory=factory)


async def test_a_live_kernel_is_restarted_in_place_with_a_new_epoch(tmp_path: Path) -> None:
    made: list[RestartingFake] = []
    kernel = kernel_of(made, tmp_path)
    with anyio.fail_after(10):
        first = await kernel.execute("a = 1")
        epoch = await kernel.restart()
        after = await kernel.execute("a")
    assert isinstance(made[0], InPlaceRestart)
    assert len(made) == 1 and made[0].restarts == 1 and made[0].shutdowns == []
    assert epoch != first.epoch and after.epoch == epoch
    assert (after.ename, after.execution_count) == ("NameError", 1)


async def test_a_changed_kernelspec_restarts_on_a_fresh_backend(tmp_path: Path) -> None:
    made: list[RestartingFake] = []
    kernel = kernel_of(made, tmp_path)
    with anyio.fail_after(10):
        await kernel.execute("a = 1")
        kernel.kernelspec_name = "other"
        await kernel.restart()
    assert len(made) == 2 and made[0].restarts == 0 and made[0].shutdowns == [False]
    assert made[1].started_with is not None and made[1].started_with[0] == "other"


async def test_a_failed_in_place_restart_leaves_the_kernel_dead(tmp_path: Path) -> None:
    made: list[RestartingFake] = []
    kernel = kernel_of(made, tmp_path, fail=True)
    with anyio.fail_after(10):
        await kernel.execute("a = 1")
        with pytest.raises(KernelError) as failed:
            await kernel.restart()
        info = await kernel.info()
    assert failed.value.code == ErrorCode.SERVER_UNREACHABLE
    assert info.state == "dead" and kernel.epoch is None


async def test_a_restart_to_a_kernelspec_not_installed_keeps_the_live_kernel(
    tmp_path: Path,
) -> None:
    made: list[RestartingFake] = []
    kernel = kernel_of(made, tmp_path)
    with anyio.fail_after(10):
        first = await kernel.execute("a = 1")
        kernel.kernelspec_name = "typo"
        with pytest.raises(KernelError) as refused:
            await kernel.restart()
        after = await kernel.execute("a")
    assert refused.value.code == ErrorCode.KERNELSPEC_NOT_FOUND
    assert refused.value.details["installed"] == ["other", "python3"]
    assert len(made) == 1 and made[0].restarts == 0 and made[0].shutdowns == []
    assert after.epoch == first.epoch and after.status == "ok"
