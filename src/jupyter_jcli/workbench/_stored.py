"""Outputs as a notebook stores them: nbformat's ``split_lines`` form.

Multi-line strings of streams and of ``text/*``, ``application/javascript`` and
``image/svg+xml`` data become lists of lines, as Jupyter writes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jupyter_jcli.kernels import Output

__all__ = ["file_outputs"]

_SPLIT_MIMES = frozenset({"application/javascript", "image/svg+xml"})


def _split(value: Any) -> Any:
    return value.splitlines(True) if isinstance(value, str) else value


def _split_bundle(data: dict[str, Any]) -> dict[str, Any]:
    return {
        mime: _split(value) if mime.startswith("text/") or mime in _SPLIT_MIMES else value
        for mime, value in data.items()
    }


def file_outputs(outputs: Sequence[Output]) -> list[Output]:
    """Outputs as nbformat's ``split_lines`` stores them (new dicts; the input is kept)."""
    result: list[Output] = []
    for output in outputs:
        stored = dict(output)
        if stored.get("output_type") == "stream":
            stored["text"] = _split(stored.get("text", ""))
        elif isinstance(stored.get("data"), dict):
            stored["data"] = _split_bundle(stored["data"])
        result.append(stored)
    return result
