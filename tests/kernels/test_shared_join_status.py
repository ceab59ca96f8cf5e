"""Joining a shared kernel: a ``kernel_info`` status published before this client's iopub
subscription took (ZeroMQ's slow joiner) costs a short grace, not a whole try of the join."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_jcli.kernels import _shared_backend
from jupyter_jcli.kernels._registry import KernelRegistry
from jupyter_jcli.kernels._shared_backend import SharedBackend


class _Clock:
    """A monotonic clock that moves 10 ms at every reading (the join's loop reads it)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 0.01
        return self.now


class _Client:
    """Answers every ``kernel_info_request`` on control; its iopub status is lost for the
    first ``lost`` requests (published before the subscription was live)."""

    def __init__(self, lost: int) -> None:
        self.sent: list[str] = []
        self._ids = (f"m{i}" for i in itertools.count())
        self._lost = lost
        self.queues: dict[str, list[dict[str, Any]]] = {"control": [], "iopub": []}

    async def request(self, channel: str, msg_type: str, content: dict[str, Any]) -> Any:
        assert (channel, msg_type) == ("control", "kernel_info_request")
        msg_id = next(self._ids)
        self.sent.append(msg_id)
        parent = {"parent_header": {"msg_id": msg_id}}
        self.queues["control"].append({**parent, "content": {"status": "ok"}})
        if len(self.sent) > self._lost:
            self.queues["iopub"].append({**parent, "content": {"execution_state": "idle"}})
        return {"header": {"msg_id": msg_id}}


class _Joining(SharedBackend):
    def __init__(self, client: _Client, tmp_path: Path) -> None:
        super().__init__(KernelRegistry(tmp_path / "registry"), keep=False, idle_timeout=60.0)
        self.client = client

    async def _take(self, channel: Any, timeout: float) -> Any:
        queue = self.client.queues[channel]
        return queue.pop(0) if queue else None

    async def is_alive(self) -> bool:
        return True


@pytest.mark.parametrize("lost", [1, 3])
def test_a_status_lost_to_the_subscription_is_asked_again_after_a_short_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lost: int
) -> None:
    clock = _Clock()
    monkeypatch.setattr(_shared_backend.time, "monotonic", clock)
    client = _Client(lost)
    backend = _Joining(client, tmp_path)
    start = clock.now

    anyio.run(backend._heartbeat, client, 60.0, {})  # type: ignore[arg-type]

    # joined on the first request whose status arrived (or on the second reply, lost=3)
    assert len(client.sent) == min(lost + 1, 2)
    # each lost status cost the grace, not a whole try of the 60 s join (12 s)
    assert clock.now - start < 60.0 / 5
