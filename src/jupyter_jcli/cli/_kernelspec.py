"""``j-cli kernelspec list``: the kernelspecs installed on this machine.

Read by :func:`jupyter_jcli.workbench.list_kernelspecs` (``jupyter_client``'s
``KernelSpecManager.get_all_specs``, the search path ``jupyter kernelspec list`` uses; a
kernelspec whose ``kernel.json`` cannot be read is left out, with a warning on stderr).
``-j`` prints ``{"schema_version", "status", "operation": "kernelspec_list", "kernelspecs":
[{"name", "display_name", "language", "resource_dir"}, ...]}``: jupyter-jcli 0.9.7's ``kernelspecs``
entries (``name``, ``display_name``, ``language``) plus where each lives. Reads only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from jupyter_jcli.cli._clip import clip
from jupyter_jcli.cli._emit import emit_result, ok_document

if TYPE_CHECKING:
    from jupyter_jcli.workbench import KernelspecEntry

__all__ = ["kernelspec", "kernelspec_lines"]

_NAME_WIDTH = 20
_DISPLAY_WIDTH = 32
_LANGUAGE_WIDTH = 10


@click.group()
def kernelspec() -> None:
    """The kernelspecs installed on this machine (what --kernel NAME can start)."""


@kernelspec.command("list")
def list_command() -> None:
    """List the installed kernelspecs: name, display name, language (-j: and where)."""
    from jupyter_jcli.workbench import list_kernelspecs

    entries = list_kernelspecs()
    document = ok_document(operation="kernelspec_list", kernelspecs=entries)
    emit_result(lambda: document, lambda: kernelspec_lines(entries))


def kernelspec_lines(entries: list[KernelspecEntry]) -> list[str]:
    """The text rendering: the reference's ``NAME DISPLAY_NAME LANGUAGE`` table."""
    if not entries:
        return ["no kernelspecs installed (install one, e.g. `python -m ipykernel install --user`)"]
    lines = [f"{'NAME':<{_NAME_WIDTH}} {'DISPLAY_NAME':<{_DISPLAY_WIDTH}} LANGUAGE"]
    for entry in entries:
        name = clip(entry["name"], _NAME_WIDTH)
        display = clip(entry["display_name"], _DISPLAY_WIDTH)
        language = clip(entry["language"], _LANGUAGE_WIDTH)
        lines.append(f"{name:<{_NAME_WIDTH}} {display:<{_DISPLAY_WIDTH}} {language}".rstrip())
    return lines
