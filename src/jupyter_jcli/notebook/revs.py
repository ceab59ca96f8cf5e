"""Cell revs and the notebook structure rev: short content hashes for optimistic locking.

A cell's rev is the first :data:`REV_LENGTH` hex digits of
``sha256(cell_type + "\\0" + source)`` over UTF-8, where ``source`` is the joined nbformat
source (a list of lines and the same text as one string give the same rev). Metadata, outputs
and execution counts do not change a rev: it names what the cell *is*, not what it printed.
Python's ``hash()`` is never used (it is salted per process).

The structure rev hashes the ordered ``(name, rev)`` pairs of all cells, so it changes when a
cell is added, removed, moved, renamed or edited.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

__all__ = ["REV_LENGTH", "cell_rev", "structure_rev"]

REV_LENGTH = 12
"""Hex digits in a rev (48 bits)."""


def cell_rev(cell_type: str, source: str) -> str:
    """The rev of a cell.

    Args:
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
        source: the cell's joined source text.

    Returns:
        :data:`REV_LENGTH` lowercase hex digits.
    """
    digest = hashlib.sha256(f"{cell_type}\0{source}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:REV_LENGTH]


def structure_rev(cells: Iterable[tuple[str, str]]) -> str:
    """The structure rev of a notebook.

    Args:
        cells: ``(name, rev)`` of every cell, in document order.

    Returns:
        :data:`REV_LENGTH` lowercase hex digits; an empty notebook has a rev too.
    """
    digest = hashlib.sha256(b"structure\n")
    for name, rev in cells:
        digest.update(f"{name}\0{rev}\n".encode())
    return digest.hexdigest()[:REV_LENGTH]
