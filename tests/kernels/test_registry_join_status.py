"""Joining a shared kernel: a ``kernel_info`` status published before this client's iopub
subscription took (ZeroMQ's slow joiner) costs a short retry, not a grace or a whole try of the
join; a kernel that publishes no status for control requests still joins; one that never
answers and is gone fails at once."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import _registry_backend
from jupyter_jcli.kernels._registry import KernelRegistry
from jupyter_jcli.kernels._registry_backend import RegistryBackend


class _Clock:
    """A monotonic clock that moves 10 ms at every reading (the join's loop reads it)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 0.01
        return self.now


class _Client:
    """Answers every ``kernel_info_request`` on control; its iopub status is lost for the
    first ``lost`` requests (published before the subscription was live). Stands for
    ``jupyter_client``'s ``AsyncKernelClient``: its ``session.msg`` and
    ``control_channel.send``."""

    def __init__(self, lost: int, *, replies: bool = True) -> None:
        self.sent: list[str] = []
        self._replies = replies
        self._ids = (f"m{i}" for i in itertools.count())
        self._lost = lost
        self.queues: dict[str, list[dict[str, Any]]] = {"control": [], "iopub": []}
        self.session = self
        self.control_channel = self

    def msg(self, msg_type: str) -> dict[str, Any]:
        return {"header": {"msg_id": next(self._ids), "msg_type": msg_type}}

    def send(self, msg: dict[str, Any]) -> None:
        assert msg["header"]["msg_type"] == "kernel_info_request"
        msg_id = msg["header"]["msg_id"]
        self.sent.append(msg_id)
        parent = {"parent_header": {"msg_id": msg_id}}
        if self._replies:
            self.queues["control"].append({**parent, "content": {"status": "ok"}})
        if len(self.sent) > self._lost:
            self.queues["iopub"].append({**parent, "content": {"execution_state": "idle"}})


class _Joining(RegistryBackend):
    def __init__(self, client: _Client, tmp_path: Path, *, alive: bool = True) -> None:
        super().__init__(KernelRegistry(tmp_path / "registry"), keep=False, idle_timeout=60.0)
        self.client = client
        self.alive = alive

    async def _take(self, channel: Any, timeout: float) -> Any:
        queue = self.client.queues[channel]
        return queue.pop(0) if queue else None

    async def is_alive(self) -> bool:
        return self.alive


@pytest.mark.parametrize("lost", [1, 3])
def test_a_status_lost_to_the_subscription_is_asked_again_after_a_short_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lost: int
) -> None:
    clock = _Clock()
    monkeypatch.setattr(_registry_backend.time, "monotonic", clock)
    client = _Client(lost)
    backend = _Joining(client, tmp_path)
    start = clock.now

    anyio.run(backend._heartbeat, client, 60.0, {})  # type: ignore[arg-type]

    # joined on the first request whose status arrived: the subscription is live
    assert len(client.sent) == lost + 1
    # each lost status cost a short retry, not the grace (nor a whole try of the join)
    assert clock.now - start < _registry_backend._STATUS_GRACE


def test_a_kernel_publishing_no_status_for_control_requests_joins_after_the_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    monkeypatch.setattr(_registry_backend.time, "monotonic", clock)
    client = _Client(lost=10**6)
    backend = _Joining(client, tmp_path)
    start = clock.now

    anyio.run(backend._heartbeat, client, 60.0, {})  # type: ignore[arg-type]

    assert len(client.sent) >= 2
    assert _registry_backend._STATUS_GRACE <= clock.now - start < 60.0 / 5


def test_a_kernel_that_never_answers_and_is_gone_fails_after_one_try(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    monkeypatch.setattr(_registry_backend.time, "monotonic", clock)
    client = _Client(lost=10**6, replies=False)
    backend = _Joining(client, tmp_path, alive=False)
    start = clock.now

    with pytest.raises(KernelError) as caught:
        anyio.run(backend._heartbeat, client, 60.0, {})  # type: ignore[arg-type]

    assert caught.value.code is ErrorCode.KERNEL_START_FAILED
    assert len(client.sent) == 1
    assert clock.now - start < 60.0 / 5 + 1.0
