"""MCP progress for long tool calls: per-step reports and a heartbeat, always increasing.

MCP progress notifications (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress)
are sent only when the request's ``_meta`` carries a ``progressToken``; each notification's
``progress`` MUST increase. :class:`ProgressReporter` forwards the operation's own reports
(for example one per executed cell) and, while the operation runs, sends a heartbeat every
:func:`heartbeat_interval` seconds (default 10, overridable with the environment variable
``JUPYTER_MCP_HEARTBEAT_SECONDS``) saying how long it has been running. Values are made
strictly increasing: a heartbeat adds a shrinking step below the next whole unit, and a
report that would not increase is nudged just above the last value sent.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio

__all__ = [
    "DEFAULT_HEARTBEAT_SECONDS",
    "HEARTBEAT_ENV",
    "ProgressReporter",
    "SendProgress",
    "heartbeat_interval",
]

DEFAULT_HEARTBEAT_SECONDS = 10.0
HEARTBEAT_ENV = "JUPYTER_MCP_HEARTBEAT_SECONDS"

SendProgress = Callable[[float, float | None, str | None], Awaitable[None]]
"""Sends one ``notifications/progress`` (progress, total, message) for the current request."""

_log = logging.getLogger(__name__)


def heartbeat_interval() -> float:
    """Seconds between heartbeats: ``$JUPYTER_MCP_HEARTBEAT_SECONDS`` if a positive number
    (at most 10, the bound the server promises), else 10."""
    raw = os.environ.get(HEARTBEAT_ENV)
    if raw:
        try:
            value = float(raw)
        except ValueError:
            _log.warning("%s=%r is not a number; using %g s", HEARTBEAT_ENV, raw, 10.0)
        else:
            if math.isfinite(value) and value > 0:
                return min(value, DEFAULT_HEARTBEAT_SECONDS)
            _log.warning("%s=%r is not positive; using 10 s", HEARTBEAT_ENV, raw)
    return DEFAULT_HEARTBEAT_SECONDS


class ProgressReporter:
    """Progress for one request: the operation's reports plus a periodic heartbeat.

    Args:
        send: sends one progress notification (the SDK's ``report_progress`` of the request).
        interval: seconds between heartbeats.
    """

    def __init__(self, send: SendProgress, *, interval: float) -> None:
        self._send = send
        self._interval = interval
        self._last = -math.inf
        self._base = 0.0
        self._beats = 0
        self._total: float | None = None
        self._message = "started"
        self._started = time.monotonic()
        self._lock = anyio.Lock()

    @property
    def last(self) -> float:
        """The last progress value sent (``-inf`` before the first)."""
        return self._last

    async def report(self, progress: float, total: float | None, message: str) -> None:
        """Forward one of the operation's own reports (``ProgressCallback`` shape)."""
        async with self._lock:
            self._base, self._beats = progress, 0
            self._total = total
            self._message = message
            await self._emit(progress, total, message)

    async def _beat(self) -> None:
        async with self._lock:
            self._beats += 1
            value = self._base + 0.5 * (1 - 0.5**self._beats)
            elapsed = time.monotonic() - self._started
            await self._emit(value, self._total, f"{self._message} ({elapsed:.0f} s elapsed)")

    async def _emit(self, value: float, total: float | None, message: str) -> None:
        if value <= self._last:
            value = math.nextafter(self._last, math.inf)
        if total is not None and value > total:
            total = None  # a heartbeat overtaking the total: the total is no longer exact
        self._last = value
        try:
            await self._send(value, total, message)
        except Exception as err:  # the client went away: the operation goes on
            _log.warning("progress notification failed: %s: %s", type(err).__name__, err)

    @asynccontextmanager
    async def heartbeat(self) -> AsyncIterator[ProgressReporter]:
        """Send heartbeats while the ``async with`` body runs."""

        async def beat_forever() -> None:
            while True:
                await anyio.sleep(self._interval)
                await self._beat()

        async with anyio.create_task_group() as group:
            group.start_soon(beat_forever)
            try:
                yield self
            finally:
                group.cancel_scope.cancel()
