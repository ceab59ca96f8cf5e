"""Bounded lists of cells in ``j-cli -j`` documents.

A ``-j`` answer is one JSON document of bounded size, whatever the notebook holds: the lists
of cells that grow with the notebook are bounded by the workbench's one rule
(:mod:`jupyter_jcli.workbench._cell_lists`, which the MCP server's results follow too): at
most :data:`CELLS_LISTED` items, ``<key>_count`` beside each list (always, cut or not), and
when anything was cut the document's ``notice`` says what was left out and the command that
reads the rest (every cell's status, paged: ``j-cli -j notebook overview FILE --start N``).
Text mode bounds its lists the same way, at
:data:`~jupyter_jcli.cli._document_render.NAMES_SHOWN` names.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from jupyter_jcli.workbench import CELLS_LISTED, bounded_cell_lists

__all__ = ["CELLS_LISTED", "bounded", "statuses_command"]


def statuses_command(file_arg: str, *, json: bool = True) -> str:
    """The command that pages every cell of ``file_arg`` with its run status."""
    return shlex.join(["j-cli", *(["-j"] if json else []), "notebook", "overview", file_arg])


def bounded(document: Mapping[str, Any], file_arg: str) -> dict[str, Any]:
    """An operation's ``-j`` document with its lists of cells bounded
    (:func:`~jupyter_jcli.workbench._cell_lists.bounded_cell_lists`), the notice naming
    :func:`statuses_command` of ``file_arg``."""
    return bounded_cell_lists(document, statuses_command(file_arg))
