"""``j-cli vars NB``: the user variables on a notebook's live kernel (as ``list_variables``).

One silent probe (:meth:`jupyter_jcli.workbench.Workbench.list_variables`): no cell, no
execution count, nothing imported or left in the namespace; IPython's own names, modules and
``_`` names hidden; bounded (the rest counted and named). ``-j`` prints the workbench's
document, whose ``variables`` entries carry ``name`` and ``type`` as jupyter-jcli 0.9.7's
``vars -j`` does, with ``shape``, ``length`` or ``repr`` instead of its ``value`` string. No
live kernel: ``KERNEL_NOT_RUNNING`` (start one with ``j-cli kernel start NB``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from jupyter_jcli.cli._clip import clip
from jupyter_jcli.cli._emit import emit_result
from jupyter_jcli.cli._params import FILE_PATH
from jupyter_jcli.cli._server_options import current_server, store_options

__all__ = ["variable_lines", "vars_command"]

_NAME_WIDTH = 24
_TYPE_WIDTH = 28
_FACT_WIDTH = 60


@click.command("vars")
@store_options
@click.argument("notebook", metavar="NB", type=FILE_PATH)
def vars_command(notebook: str) -> None:
    """List the user variables on NB's live kernel: name, type, and shape, length or a
    short repr.

    Runs nothing the user sees (a silent probe: no cell, no execution count, nothing
    imported). IPython's own names, modules and names starting with _ are left out; at most
    200 variables and 8,000 characters, the rest counted and named. Needs a live kernel
    (`j-cli kernel start NB`, or jupyter-mcp's): else KERNEL_NOT_RUNNING.
    """
    import anyio

    from jupyter_jcli.workbench import shared_workbench

    server = current_server()

    async def listing() -> dict[str, Any]:
        async with shared_workbench(server=server) as workbench:
            return (await workbench.list_variables(notebook)).to_dict()

    document = anyio.run(listing)
    emit_result(lambda: document, lambda: variable_lines(document))


def _fact(variable: Mapping[str, Any]) -> str:
    if "shape" in variable:
        return "shape " + "x".join(str(n) for n in variable["shape"])
    parts = []
    if "length" in variable:
        parts.append(f"len {variable['length']}")
    if "repr" in variable:
        parts.append(str(variable["repr"]))
    if "error" in variable:
        parts.append(f"<{variable['error']}>")
    return "  ".join(parts)


def variable_lines(document: Mapping[str, Any]) -> list[str]:
    """The text rendering: a ``NAME TYPE VALUE`` table (the reference's columns), then a
    count and what was left out."""
    variables: list[Mapping[str, Any]] = list(document.get("variables") or [])
    if not variables and not document.get("omitted"):
        return [f"no user variables on the kernel of {document.get('notebook_path')}"]
    lines = [f"{'NAME':<{_NAME_WIDTH}} {'TYPE':<{_TYPE_WIDTH}} VALUE"]
    for variable in variables:
        name = clip(str(variable.get("name", "")), _NAME_WIDTH)
        kind = clip(str(variable.get("type", "")), _TYPE_WIDTH)
        fact = clip(_fact(variable), _FACT_WIDTH)
        lines.append(f"{name:<{_NAME_WIDTH}} {kind:<{_TYPE_WIDTH}} {fact}".rstrip())
    lines.append(f"{document.get('variable_count')} variable(s) on {document.get('notebook_path')}")
    if document.get("notice"):
        lines.append(str(document["notice"]))
    return lines
