"""Shared test configuration: fixture paths; every test's own kernel registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


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
