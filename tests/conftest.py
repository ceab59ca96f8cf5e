"""Shared test configuration: fixture paths; every test's own kernel registry; the order
of a parallel run; one bytecode cache for every Python process the run starts."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

PROCESS_MARKERS = ("hosts", "server", "kernel")
"""Markers of the tests that start processes (kernels, a Jupyter Server, host CLIs): the long
ones, which a parallel run (``pytest -n 4``, pytest-xdist) starts first."""


def pytest_configure(config: pytest.Config) -> None:
    """Under ``PYTHONDONTWRITEBYTECODE`` every process the run starts (each ``j-cli``
    command, kernel, supervisor, MCP server, Jupyter Server, pytest-xdist worker) compiles
    every module it imports from source again (IPython, jupyter_server, the MCP SDK, pandas,
    our package): a large part of the suite's CPU time. Give the run one bytecode cache
    instead, under pytest's cache folder (``PYTHONPYCACHEPREFIX``, so no ``__pycache__`` is
    written into the source tree or the virtual environment), for this process and, through
    the environment, for every process it starts (workers are started after this hook). A
    run that writes bytecode anyway is left as it is."""
    cache = getattr(config, "cache", None)  # None with ``-p no:cacheprovider``
    if not sys.dont_write_bytecode or cache is None:
        return
    prefix = str(cache.mkdir("bytecode"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


@pytest.fixture
def fixtures_dir() -> Path:
    """The folder of shipped test fixtures (real notebooks and hand-made output lists)."""
    return FIXTURES


@pytest.fixture(autouse=True)
def kernel_registry(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Each test's own kernel registry folder (``$JUPYTER_JCLI_RUNTIME_DIR``, inherited by
    the processes it starts); every kernel registered there is stopped when the test ends."""
    from jupyter_jcli.kernels import RUNTIME_DIR_ENV

    root = tmp_path_factory.mktemp("jcli-runtime")
    monkeypatch.setenv(RUNTIME_DIR_ENV, str(root))
    yield root
    stop_registered_kernels(root)


def stop_registered_kernels(root: Path) -> None:
    """Stop every kernel registered under ``root`` (bounded per kernel)."""
    from jupyter_jcli.kernels import KernelRegistry

    registry = KernelRegistry(root)
    if not any(root.glob("*.json")):
        return
    import anyio

    from jupyter_jcli.kernels import stop_registered

    async def stop_all() -> None:
        for file in root.glob("*.json"):
            entry = registry.read_file(file)
            if entry is not None:
                await stop_registered(registry, Path(entry.notebook_path))

    anyio.run(stop_all)


def _start_rank(item: pytest.Item) -> tuple[bool, float]:
    """Earlier first: process-starting tests, and among them those declaring a longer
    ``timeout`` (the README walk-through, the host CLIs)."""
    starts_processes = any(item.get_closest_marker(name) for name in PROCESS_MARKERS)
    timeout = item.get_closest_marker("timeout")
    declared = float(timeout.args[0]) if timeout is not None and timeout.args else 0.0
    return (not starts_processes, -declared)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker, start the long tests first (:func:`_start_rank`; a stable
    sort, so the order within a rank stays the collection order), so that no worker runs one
    alone at the end. Every worker sorts the same collection the same way, as xdist requires;
    a run without ``-n`` keeps the collection order."""
    if hasattr(config, "workerinput"):
        items.sort(key=_start_rank)
