"""``j-cli notebook map FILE.py``: how each cell of a paired script maps to the notebook.

The mapping is the one every ``.py`` read uses (:func:`jupyter_jcli.notebook.pairing.map_pair`
over :class:`~jupyter_jcli.notebook.pairing.PairedScript`): a shared cell name or id, else
the same type and source once on each side; anything else is said, never guessed. ``-j``
prints ``map_pair``'s document (jupyter-jcli 0.9.7's ``notebook map -j`` shape, without its
baseline fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from jupyter_jcli.cli._emit import emit_result
from jupyter_jcli.cli._params import FILE_PATH

__all__ = ["map_command", "map_lines"]


@click.command("map")
@click.argument("file", metavar="FILE.py", type=FILE_PATH)
def map_command(file: str) -> None:
    """How each cell of a paired script maps to the notebook's cells, and by which rule.

    Rule id: a shared cell name or id; rule content: the same type and source, once on each
    side. A cell no rule maps says why (never a guess by position); notebook cells nothing
    maps to are listed after. A .py without a paired notebook: NOTEBOOK_PAIR_NOT_FOUND.
    """
    from jupyter_jcli.notebook.pairing import map_pair

    document = map_pair(file)
    emit_result(lambda: document, lambda: map_lines(document))


def _value(value: object) -> str:
    return "-" if value is None else str(value)


def map_lines(document: Mapping[str, Any]) -> list[str]:
    """The text rendering: the two paths, then one line per row, as the reference prints
    them (``py=… ipynb=… lines=… alignment=… change=…``), with the reason of an unmapped
    cell."""
    lines = [
        f"python={document.get('python_path')}",
        f"notebook={document.get('notebook_path')}",
        f"mapped {document.get('mapped')} of {document.get('cell_count')} .py cells "
        f"({document.get('notebook_cell_count')} notebook cells)",
    ]
    for row in document.get("cells") or []:
        start, end = row.get("source_start_line"), row.get("source_end_line")
        span = "-" if start is None else f"{start}-{end}"
        words = [
            f"py={_value(row.get('python_index'))}",
            f"ipynb={_value(row.get('notebook_index'))}",
            f"name={_value(row.get('name'))}",
            f"type={_value(row.get('type'))}",
            f"lines={span}",
            f"alignment={_value(row.get('alignment'))}",
            f"change={_value(row.get('change'))}",
        ]
        if row.get("reason"):
            words.append(f"reason={row['reason']}")
        lines.append(" ".join(words))
    return lines
