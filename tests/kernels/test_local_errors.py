"""The local backend's one error boundary, on a real kernel (ipykernel): a channel that fails
under a call surfaces as ``KernelError`` chained from the library's own error."""

from __future__ import annotations

import json
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
        await started.start(
            kernelspec_name="python3",
            cwd=tmp_path,
            startup_timeout=WAIT,
            notebook_path=tmp_path / "n.ipynb",
        )
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


@pytest.mark.parametrize(
    ("channel", "receive"), [("iopub", "next_iopub"), ("shell", "next_shell_reply")]
)
async def test_a_receive_on_a_closed_socket_is_kernel_not_running_chained_from_zmq(
    backend: LocalBackend, channel: str, receive: str
) -> None:
    import zmq

    _close_socket(backend, channel)
    with anyio.fail_after(WAIT), pytest.raises(KernelError) as failed:
        await getattr(backend, receive)(0.1)
    assert failed.value.code == ErrorCode.KERNEL_NOT_RUNNING
    assert isinstance(failed.value.__cause__, zmq.ZMQError)
    assert "reason" in failed.value.details


async def test_a_kernelspec_whose_program_is_missing_fails_to_start_chained_from_the_os(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "jupyter" / "kernels" / "missing-program"
    spec.mkdir(parents=True)
    argv = [str(tmp_path / "no-such-python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "missing", "language": "python"}),
        encoding="utf-8",
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    backend = LocalBackend()
    with anyio.fail_after(WAIT), pytest.raises(KernelError) as failed:
        await backend.start(
            kernelspec_name="missing-program",
            cwd=tmp_path,
            startup_timeout=WAIT,
            notebook_path=tmp_path / "n.ipynb",
        )
    assert failed.value.code == ErrorCode.KERNEL_START_FAILED
    assert isinstance(failed.value.__cause__, OSError)
    assert failed.value.details["kernelspec"] == "missing-program"
    assert backend.pid is None
