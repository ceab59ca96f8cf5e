"""Sharing a budget between parts, max-min fair: the one allocator of the package.

Used by :mod:`jupyter_jcli.condense` (characters between the outputs of one cell) and by
the workbench's reads (characters between cells, sources and outputs).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["UNBOUNDED", "allocate"]

UNBOUNDED = -1
"""A demand meaning "as much as it can get" (any negative demand means the same)."""


def allocate(demands: Sequence[int], total: int) -> list[int]:
    """Split ``total`` between parts that ask for ``demands``, max-min fair (water filling).

    A part asking no more than the fair level gets what it asks; the others split what
    remains equally, the remainder of the division going to the first of them by position.

    Args:
        demands: what each part would use if it had room; a negative demand
            (:data:`UNBOUNDED`) means "as much as it can get".
        total: what there is to share (a negative total counts as 0).

    Returns:
        One share per demand, in the order of ``demands``; they never add up to more than
        ``total``.
    """
    room = max(0, total)
    shares = [0] * len(demands)
    order = sorted(range(len(demands)), key=lambda i: (demands[i] < 0, max(demands[i], 0)))
    left = len(order)
    for position, index in enumerate(order):
        demand = demands[index]
        if 0 <= demand <= room // left:
            shares[index] = demand
            room -= demand
            left -= 1
            continue
        rest = sorted(order[position:])
        level, extra = divmod(room, len(rest))
        for rank, other in enumerate(rest):
            shares[other] = level + (1 if rank < extra else 0)
        break
    return shares
