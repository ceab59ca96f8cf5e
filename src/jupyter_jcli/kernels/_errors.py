"""The kernel layer's own errors, built in one place for every caller."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jupyter_jcli.errors import ErrorCode, KernelError

__all__ = ["kernel_died"]


def kernel_died(doing: str, details: Mapping[str, Any]) -> KernelError:
    """``KERNEL_DIED``: the kernel process ended while it was ``doing`` something (for
    example ``"running cell 'load'"``); ``details`` name what was running."""
    return KernelError(
        ErrorCode.KERNEL_DIED,
        f"the kernel died while {doing}; the next execution starts a new kernel (every cell "
        "is then stale)",
        dict(details),
    )
