"""jupyter-jcli: safe, cheap Jupyter notebook work for coding agents and people.

The package is layered; the one description of the layers is the import-linter contract
(``[tool.importlinter]`` in ``pyproject.toml``, enforced by ``lint-imports``), and
``docs/contributing/architecture.md`` says what each package owns. Importing this package
imports nothing heavy.

:func:`lazy_exports` is here, not in a submodule, so that a package using it loads no other
module of ours when it is imported.
"""

from __future__ import annotations

TYPE_CHECKING = False  # imported by every console script first: no ``typing`` import
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], public: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The ``__getattr__``, ``__dir__`` (PEP 562) and ``__all__`` of the package whose
    ``globals()`` is ``namespace``, from its one table of public names: importing the package
    imports no submodule, and a public name is imported from its module the first time it is
    read (then kept in the package's namespace).

    A package writes each public name twice: in the table, and in an ``if TYPE_CHECKING:``
    import of the same module, which is what mypy reads (the package modules are listed with
    ``implicit_reexport`` in ``pyproject.toml``, so the import is the export); a test checks
    that the two agree (``tests/test_package_faces.py``)::

        if TYPE_CHECKING:
            from jupyter_jcli.kernels._local import LocalBackend, installed_kernelspecs

        _PUBLIC = {"_local": "LocalBackend installed_kernelspecs"}

        if not TYPE_CHECKING:  # mypy sees no __getattr__, so an unknown name is an error
            __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)

    Args:
        namespace: the package's ``globals()`` (its ``__name__``).
        public: per module, the public names it gives, separated by spaces (as
            :func:`collections.namedtuple` takes its fields); a key without a dot is a submodule
            of the package (``"_pool"``), one with a dot a module of ours
            (``"jupyter_jcli.errors"``).
    """
    package = namespace["__name__"]
    home = {name: module for module, names in public.items() for name in names.split()}

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(
            importlib.import_module(module if "." in module else f"{package}.{module}"), name
        )
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *home})

    return __getattr__, __dir__, sorted(home)
