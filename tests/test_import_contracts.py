"""The project's import-linter contract ``private`` (tests/import_contracts.py), run by
``lint-imports`` in .ci/run: a private module is imported only from inside its package."""

from __future__ import annotations

import grimp
import pytest

from import_contracts import PrivateModulesContract, owner_of_private


def _graph(*imports: tuple[str, str]) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for importer, imported in imports:
        graph.add_import(importer=importer, imported=imported, line_number=1, line_contents="")
    return graph


def _check(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    contract = PrivateModulesContract("private", {}, {"packages": ["app"]})
    check = contract.check(graph, verbose=False)
    illegal = sorted((importer, imported) for importer, imported, _ in check.metadata["illegal"])
    assert check.kept is not illegal
    return illegal


@pytest.mark.parametrize(
    ("module", "owner"),
    [
        ("app.kernels._shared", "app.kernels"),
        ("app.kernels._shared.inner", "app.kernels"),
        ("app.a._b.c._d", "app.a._b.c"),
        ("app.kernels.testing", None),
        ("app.__main__", None),
        ("app", None),
    ],
)
def test_a_module_is_private_to_the_parent_of_its_innermost_private_part(
    module: str, owner: str | None
) -> None:
    assert owner_of_private(module) == owner


def test_a_package_imports_its_own_private_modules_and_others_faces() -> None:
    graph = _graph(
        ("app.kernels._pool", "app.kernels._shared"),
        ("app.kernels", "app.kernels._pool"),
        ("app.workbench._session", "app.kernels"),
        ("app.workbench._session", "app.notebook.io"),
    )
    assert _check(graph) == []


def test_an_import_of_another_packages_private_module_breaks_the_contract() -> None:
    graph = _graph(
        ("app.workbench._session", "app.kernels._shared"),
        ("app.cli", "app.notebook._open.inner"),
        ("app.kernels._pool", "app.kernels._shared"),
    )
    assert _check(graph) == [
        ("app.cli", "app.notebook._open.inner"),
        ("app.workbench._session", "app.kernels._shared"),
    ]
