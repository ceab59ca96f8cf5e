"""The one rule text output follows to fit a value into a column or a line.

A value longer than its room is cut and ends with ``…`` (one character), so a table's columns
stay aligned whatever a cell name, a first line or a list holds; ``-j`` documents always
carry the whole value.
"""

from __future__ import annotations

__all__ = ["clip"]


def clip(text: str, width: int) -> str:
    """``text`` when it has at most ``width`` characters (``width`` >= 1), else its first
    ``width - 1`` characters and ``…``: exactly ``width`` characters."""
    return text if len(text) <= width else text[: width - 1] + "…"
