"""A Jupyter Server contents manager as before Jupyter Server 2.11: its ``get`` takes no
``require_hash``, so the server answers without a ``hash`` (started by the contents-store
tests with ``--ServerApp.contents_manager_class=nohash_contents.NoHashContentsManager``)."""

from __future__ import annotations

from typing import Any

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager


class NoHashContentsManager(AsyncLargeFileManager):  # type: ignore[misc]
    """The default manager, without hashes."""

    async def get(  # type: ignore[override]
        self, path: str, content: bool = True, type: str | None = None, format: str | None = None
    ) -> dict[str, Any]:
        model: dict[str, Any] = await super().get(path, content=content, type=type, format=format)
        return model
