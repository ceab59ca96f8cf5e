"""jupyter-jcli: safe, cheap Jupyter notebook work for coding agents and people.

The package is layered; the one description of the layers is the import-linter contract
(``[tool.importlinter]`` in ``pyproject.toml``, enforced by ``lint-imports``), and
``docs/contributing/architecture.md`` says what each package owns. Importing this package
imports nothing heavy.

:func:`lazy_exports` is here, not in a submodule, so that a package using it (``kernels``,
``workbench``) loads no other module of ours when it is imported.
"""

from __future__ import annotations

TYPE_CHECKING = False  # imported by every console script first: no ``typing`` import
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], home: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` (PEP 562) of the package whose ``globals()`` is
    ``namespace``: importing the package imports no submodule, and a public name is imported
    from its submodule the first time it is read (then kept in the package's namespace).

    Args:
        namespace: the package's ``globals()`` (its ``__name__``, and ``__all__`` by the time
            ``__dir__`` is called).
        home: per public name, the submodule (relative name) that holds it.
    """
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace["__all__"]})

    return __getattr__, __dir__
