"""The project's own import-linter contract type (``contract_types`` in ``pyproject.toml``).

``private``: a private module (a name component that starts with ``_`` and is not a dunder,
e.g. ``jupyter_jcli.kernels._busy``) is imported only from inside the package that holds it
(``jupyter_jcli.kernels`` and its descendants); everyone else goes through the package's face,
its ``__init__`` or a public module. import-linter 2.17 (the lock's version on Python >= 3.11)
ships the same rule as ``private_modules``; 2.15 (the lock's version on Python 3.10) has no
such type, so the rule is kept here, on the API both versions share.
"""

from __future__ import annotations

from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck

__all__ = ["PrivateModulesContract", "owner_of_private"]


def owner_of_private(module: str) -> str | None:
    """The package a module is private to: the parent of its innermost private component
    (``a.b._c.d`` -> ``a.b``), or ``None`` when no component is private."""
    parts = module.split(".")
    for index in range(len(parts) - 1, 0, -1):
        part = parts[index]
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            return ".".join(parts[:index])
    return None


class PrivateModulesContract(Contract):
    """No module imports a private module of a package it is not inside.

    Options:
        - ``packages``: the packages whose modules are checked (each with its descendants).
    """

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph, verbose: bool) -> ContractCheck:  # type: ignore[no-untyped-def]
        prefixes = tuple(str(package) for package in self.packages)  # type: ignore[attr-defined]
        illegal = []
        for imported in sorted(graph.modules):
            owner = owner_of_private(imported)
            if owner is None or not imported.startswith(prefixes):
                continue
            for importer in sorted(graph.find_modules_that_directly_import(imported)):
                if importer != owner and not importer.startswith(f"{owner}."):
                    lines = [
                        detail["line_number"]
                        for detail in graph.get_import_details(importer=importer, imported=imported)
                    ]
                    illegal.append((importer, imported, lines))
        return ContractCheck(kept=not illegal, metadata={"illegal": illegal})

    def render_broken_contract(self, check: ContractCheck) -> None:
        output.print_error("A private module is imported from outside its package:", bold=False)
        output.new_line()
        for importer, imported, lines in check.metadata["illegal"]:
            shown = ", ".join(str(line) for line in lines)
            output.print_error(f"- {importer} -> {imported} (l.{shown})", bold=False)
            output.new_line()
        output.print_error(
            "Import it from the package's face (its __init__) instead, adding the name to "
            "the package's _PUBLIC table if it is not there yet.",
            bold=False,
        )
