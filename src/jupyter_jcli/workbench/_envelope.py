"""The opening fields of every successful workbench result's JSON document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_jcli.errors import SCHEMA_VERSION

__all__ = ["ok_fields"]


def ok_fields(operation: str, path: Path) -> dict[str, Any]:
    """``schema_version``, ``status: "ok"``, ``operation`` and ``path`` (as a string), in
    that order: the start of a result's ``to_dict``."""
    return {
        "schema_version": SCHEMA_VERSION,
        "status": "ok",
        "operation": operation,
        "path": str(path),
    }
