"""Sharing a character budget between parts, max-min fair."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["allocate"]


def allocate(demands: Sequence[int], total: int) -> list[int]:
    """Split ``total`` characters between parts that ask for ``demands``, max-min fair.

    Parts asking less than an equal share get what they ask; what they leave is shared
    equally by the others (water filling). The result never sums above ``total``.

    Args:
        demands: characters each part would use if it had room (>= 0).
        total: characters available (>= 0).

    Returns:
        The room of each part, in the order of ``demands``.
    """
    rooms = [0] * len(demands)
    remaining = max(0, total)
    order = sorted(range(len(demands)), key=lambda i: demands[i])
    for position, index in enumerate(order):
        share = remaining // (len(order) - position)
        rooms[index] = min(max(0, demands[index]), share)
        remaining -= rooms[index]
    return rooms
