"""Each package's ``__init__`` is its face: its public names are loaded on first use from one
table (``_PUBLIC``, through :func:`jupyter_jcli.lazy_exports`), and mypy reads the same names
from an ``if TYPE_CHECKING:`` import beside it. Importing a package costs nothing; every public
name resolves to the object of the module that defines it; the two lists agree."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import jupyter_jcli

SOURCE = Path(jupyter_jcli.__file__).parent
PACKAGES = sorted(path.parent.name for path in SOURCE.glob("*/__init__.py"))
HEAVY = {"jupyter_client", "zmq", "anyio", "asyncio", "nbformat", "jupytext", "PIL", "mcp"}


def _package(name: str) -> ModuleType:
    return importlib.import_module(f"jupyter_jcli.{name}")


def _home(package: str, module: str) -> str:
    return module if "." in module else f"jupyter_jcli.{package}.{module}"


def _faces(package: str) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The ``if TYPE_CHECKING:`` imports and the ``_PUBLIC`` table of a package's
    ``__init__``, each as module -> names."""
    tree = ast.parse((SOURCE / package / "__init__.py").read_text(encoding="utf-8"))
    imported: dict[str, set[str]] = {}
    table: dict[str, set[str]] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        ):
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module, package
                names = {alias.name for alias in statement.names}
                imported.setdefault(statement.module, set()).update(names)
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "_PUBLIC":
            value = ast.literal_eval(node.value)  # type: ignore[union-attr]
            table = {_home(package, module): set(names.split()) for module, names in value.items()}
    # Typing helpers the face itself uses are not public names.
    imported.pop("typing", None)
    imported.pop("collections.abc", None)
    return imported, table


@pytest.mark.parametrize("package", PACKAGES)
def test_mypys_imports_and_the_lazy_table_name_the_same_names(package: str) -> None:
    imported, table = _faces(package)
    assert table, f"jupyter_jcli.{package} has no _PUBLIC table"
    assert imported == table


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves_to_its_modules_object(package: str) -> None:
    face = _package(package)
    _, table = _faces(package)
    assert sorted(face.__all__) == sorted(name for names in table.values() for name in names)
    for module, names in table.items():
        for name in names:
            assert getattr(face, name) is getattr(importlib.import_module(module), name)
            assert name in dir(face)


@pytest.mark.parametrize("package", PACKAGES)
def test_an_unknown_name_is_an_attribute_error(package: str) -> None:
    with pytest.raises(AttributeError):
        _ = _package(package).no_such_name


@pytest.mark.parametrize("package", PACKAGES)
def test_importing_a_package_imports_none_of_its_modules_and_nothing_heavy(
    package: str, tmp_path: Path
) -> None:
    probe = (
        f"import json, sys\nimport jupyter_jcli.{package}\nprint(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    assert not HEAVY & {name.split(".")[0] for name in modules}
    ours = {name for name in modules if name.startswith("jupyter_jcli")}
    assert ours == {"jupyter_jcli", f"jupyter_jcli.{package}"}
