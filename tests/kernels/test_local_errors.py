"""The local backend's one error boundary, on a real kernel (ipykernel): a channel that fails
under a call surfaces as ``KernelError`` chained from the library's own error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import LocalBackend

pytestmark = [pytest.mark.kernel, pytest.mark.anyio]

WAIT = 45.0
"""Upper bound (s) on any one test's kernel waits."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[LocalBackend]:
    started = LocalBackend()
    with anyio.fail_after(WAIT):
        await started.start(kernelspec_name="python3", cwd=tmp_path, startup_timeout=WAIT)
    try:
        yield started
    finally:
        with anyio.fail_after(WAIT):
            await started.shutdown(now=True, timeout=5.0)


def _close_socket(backend: LocalBackend, channel: str) -> None:
    """Close one channel's zmq socket under the backend (as a dying client's would be)."""
    client = backend._kc
    assert client is not None
    getattr(client, f"{channel}_channel").socket.close(linger=0)


async def test_a_receive_on_a_closed_iopub_socket_is_kernel_not_running_from_zmq(
    backend: LocalBackend,
) -> None:
    import zmq

    _close_socket(backend, "iopub")
    with anyio.fail_after(WAIT), pytest.raises(KernelError) as failed:
        await backend.next_iopub(0.1)
    assert failed.value.code == ErrorCode.KERNEL_NOT_RUNNING
    assert isinstance(failed.value.__cause__, zmq.ZMQError)
    assert "reason" in failed.value.details


async def test_a_reply_wait_on_a_closed_shell_socket_is_kernel_not_running_from_zmq(
    backend: LocalBackend,
) -> None:
    import zmq

    _close_socket(backend, "shell")
    with anyio.fail_after(WAIT), pytest.raises(KernelError) as failed:
        await backend.next_shell_reply(0.1)
    assert failed.value.code == ErrorCode.KERNEL_NOT_RUNNING
    assert isinstance(failed.value.__cause__, zmq.ZMQError)
