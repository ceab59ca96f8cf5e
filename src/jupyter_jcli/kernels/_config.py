"""Defaults and bounds of the kernel layer, and the execute-timeout environment override."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from jupyter_jcli.errors import UsageError

__all__ = [
    "DEFAULT_BUSY_WAIT",
    "DEFAULT_EXECUTE_TIMEOUT",
    "DEFAULT_KERNELSPEC",
    "DEFAULT_STARTUP_TIMEOUT",
    "EXECUTE_TIMEOUT_ENV",
    "POLL_INTERVAL",
    "SETTLE_TIMEOUT",
    "SHUTDOWN_TIMEOUT",
    "STOP_GRACE",
    "STOP_WAIT",
    "execute_timeout",
    "kernelspec_name_from_metadata",
    "seconds_setting",
]

DEFAULT_EXECUTE_TIMEOUT = 600.0
"""Seconds one execution may run before it is interrupted and reported ``timeout``."""
EXECUTE_TIMEOUT_ENV = "JUPYTER_JCLI_EXECUTE_TIMEOUT"
"""Environment variable overriding :data:`DEFAULT_EXECUTE_TIMEOUT` (seconds, > 0)."""
DEFAULT_BUSY_WAIT = 0.0
"""Seconds a request waits for a kernel another execution holds before ``KERNEL_BUSY``.
0 refuses at once: a racing caller learns at once that the kernel is taken (and by which
cell) instead of silently spending its own time budget waiting."""
DEFAULT_STARTUP_TIMEOUT = 60.0
"""Seconds a kernel may take to start and answer ``kernel_info`` before ``KERNEL_START_FAILED``."""
SETTLE_TIMEOUT = 10.0
"""Seconds a kernel may take to become idle after an interrupt; past it the kernel is shut down
and the next execution starts a new one."""
SHUTDOWN_TIMEOUT = 5.0
"""Seconds a graceful shutdown may take before the kernel process is killed."""
STOP_GRACE = 5.0
"""Seconds an execution that a restart or shutdown stops is given, after its interrupt, to
end (its last outputs arrive); past it the execution is abandoned and the kernel killed."""
STOP_WAIT = 20.0
"""Seconds a restart or shutdown waits for the caller holding the kernel to let it go once
its running execution was asked to stop (the execution ends within :data:`STOP_GRACE`; the
rest is for the holder, e.g. writing the outputs into the notebook)."""
POLL_INTERVAL = 0.25
"""Seconds between liveness checks of the kernel process while waiting for messages."""
DEFAULT_KERNELSPEC = "python3"
"""The kernelspec used when a notebook's metadata names none."""


def execute_timeout(timeout: float | None) -> float:
    """The execution timeout to use, in seconds.

    Args:
        timeout: an explicit timeout; ``None`` means the environment variable
            ``JUPYTER_JCLI_EXECUTE_TIMEOUT`` if set, else :data:`DEFAULT_EXECUTE_TIMEOUT`.

    Raises:
        UsageError: ``USAGE_ERROR`` when the value is not a finite number > 0.
    """
    return seconds_setting(
        timeout, option="timeout", env=EXECUTE_TIMEOUT_ENV, default=DEFAULT_EXECUTE_TIMEOUT
    )


def seconds_setting(value: float | None, *, option: str, env: str, default: float) -> float:
    """A duration setting, in seconds: ``value``, else the environment variable ``env`` if
    set, else ``default``.

    Raises:
        UsageError: ``USAGE_ERROR`` (details: the option or variable and its value) when the
            value is not a finite number > 0.
    """
    source = option
    raw: Any = value
    if value is None:
        text = os.environ.get(env, "").strip()
        if not text:
            return default
        source = env
        try:
            raw = float(text)
        except ValueError:
            raw = text
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise UsageError(f"{source} must be a number of seconds > 0", {source: str(raw)})
    if not math.isfinite(raw) or raw <= 0:
        raise UsageError(f"{source} must be a number of seconds > 0", {source: raw})
    return float(raw)


def kernelspec_name_from_metadata(metadata: Mapping[str, Any] | None) -> str:
    """The kernelspec a notebook asks for: ``metadata.kernelspec.name``, else ``python3``.

    Args:
        metadata: the notebook-level metadata dict (nbformat ``metadata``), or ``None``.
    """
    spec = (metadata or {}).get("kernelspec")
    if isinstance(spec, Mapping):
        name = spec.get("name")
        if isinstance(name, str) and name.strip():
            return name.strip()
    return DEFAULT_KERNELSPEC
