"""``j-cli kernelspec list``: the kernelspecs installed on this machine.

Read through ``jupyter_client``'s ``KernelSpecManager.get_all_specs`` (the same search path
``jupyter kernelspec list`` uses; a kernelspec whose ``kernel.json`` cannot be read is left
out by it, with a warning on stderr). ``-j`` prints
``{"schema_version", "status", "operation": "kernelspec_list", "kernelspecs": [{"name",
"display_name", "language", "resource_dir"}, ...]}``: jupyter-jcli 0.9.7's ``kernelspecs``
entries (``name``, ``display_name``, ``language``) plus where each lives. Reads only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

import click

from jupyter_jcli.cli._clip import clip
from jupyter_jcli.cli._emit import emit_result, ok_document

__all__ = ["KernelspecEntry", "kernelspec", "kernelspec_lines", "list_kernelspecs"]

_NAME_WIDTH = 20
_DISPLAY_WIDTH = 32
_LANGUAGE_WIDTH = 10


class KernelspecEntry(TypedDict):
    """One installed kernelspec: its ``name`` (what ``--kernel`` and a notebook's
    ``metadata.kernelspec.name`` use), ``display_name``, ``language`` and ``resource_dir``
    (the folder holding its ``kernel.json``)."""

    name: str
    display_name: str
    language: str
    resource_dir: str


def list_kernelspecs() -> list[KernelspecEntry]:
    """The kernelspecs ``jupyter_client`` finds on this machine, sorted by name."""
    from jupyter_client.kernelspec import KernelSpecManager

    specs: Mapping[str, Any] = KernelSpecManager().get_all_specs()
    entries: list[KernelspecEntry] = []
    for name in sorted(specs):
        found: Mapping[str, Any] = specs[name] if isinstance(specs[name], Mapping) else {}
        raw = found.get("spec")
        spec: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        entries.append(
            {
                "name": name,
                "display_name": str(spec.get("display_name") or name),
                "language": str(spec.get("language") or ""),
                "resource_dir": str(found.get("resource_dir") or ""),
            }
        )
    return entries


@click.group()
def kernelspec() -> None:
    """The kernelspecs installed on this machine (what --kernel NAME can start)."""


@kernelspec.command("list")
def list_command() -> None:
    """List the installed kernelspecs: name, display name, language (-j: and where)."""
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
