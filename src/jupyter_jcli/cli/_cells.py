"""``j-cli notebook cells`` as text: one summary line per cell, to find the cell to read.

The document is :func:`jupyter_jcli.workbench.list_saved_cells`'s (one page of the file's
cells, ``--start``, ``--limit``, ``next_start``); a ``.py``'s cells show the paired notebook
cell each maps to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jupyter_jcli.cli._clip import clip

__all__ = ["LABEL_WIDTH", "TEXT_LINE_WIDTH", "cell_lines"]

TEXT_LINE_WIDTH = 60
"""Longest first line shown in the text rendering."""
LABEL_WIDTH = 36
"""Widest name/id column in the text rendering (an nbformat id is up to 64 characters)."""


def cell_lines(document: Mapping[str, Any], file_arg: str | None = None) -> list[str]:
    """The text rendering of :func:`~jupyter_jcli.workbench.list_saved_cells`: a header, one
    line per cell, and how to get the next page when there is one (``file_arg`` as the user
    typed it)."""
    source = document.get("source") or {}
    is_py = source.get("kind") == "py"
    lines = [f"{source.get('path')}: {document.get('cell_count')} cells"]
    if is_py:
        paired = source.get("paired_notebook")
        if paired:
            lines[0] += f", paired with {paired}"
        else:
            problem = source.get("pairing_problem") or {}
            lines[0] += f", no paired notebook ({problem.get('code')})"
    from jupyter_jcli.cli._document_render import pair_lines
    from jupyter_jcli.cli._render import j_cli

    lines.extend(pair_lines(source.get("pair_out_of_sync")))
    cells: list[Mapping[str, Any]] = list(document.get("cells") or [])
    labels = [str(cell.get("name") or cell.get("id") or "-") for cell in cells]
    width = min(max((len(label) for label in labels), default=1), LABEL_WIDTH)
    for cell, label in zip(cells, labels, strict=True):
        name = clip(label, width)
        line = f"{cell.get('cell_index'):>4}  {cell.get('cell_type', '?'):<8}  {name:<{width}}"
        if is_py and source.get("paired_notebook"):
            if cell.get("notebook_cell_index") is not None:
                line += f"  nb:{cell['notebook_cell_index']:<4}"
            else:
                line += "  nb:-   "
        line += f"  {clip(str(cell.get('first_line', '')), TEXT_LINE_WIDTH)}"
        if cell.get("output_count"):
            types = ", ".join(cell.get("output_types", []))
            line += f"  [{cell['output_count']} out: {types}]"
        lines.append(line)
    next_start = document.get("next_start")
    if isinstance(next_start, int):
        remaining = int(document.get("cell_count", 0)) - next_start
        command = j_cli("notebook", "cells", file_arg or source.get("path"), "--start", next_start)
        lines.append(f"… {remaining} more cells; next page: {command}")
    return lines
