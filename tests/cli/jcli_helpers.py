"""Helpers of the command-line tests: run ``j-cli`` in memory, build notebooks on disk.

Imported by the test modules of this folder as ``jcli_helpers`` (pytest puts the folder on
``sys.path``); also used by ``tests/test_corpus.py``.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from jupyter_jcli.cli import run

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "tests" / "fixtures" / "notebooks"
EXAMPLE = NOTEBOOKS / "05.04-Feature-Engineering.ipynb"
"""The Quick start notebook as shipped: cell 18 a pandas table (HTML + plain), 24 a PNG, 28 a
stream. A frozen copy of ``examples/``, which the Quick start's ``j-cli run`` rewrites."""


@dataclass
class Run:
    """One ``j-cli`` invocation: exit status and the two streams as text."""

    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        """The single JSON document on stdout (fails the test if there is not exactly one)."""
        assert self.stdout.endswith("\n"), self.stdout[-200:]
        assert self.stdout.count("\n") == 1, "more than one line on stdout"
        document = json.loads(self.stdout)
        assert isinstance(document, dict)
        assert document["schema_version"] == 1
        return document


def run_cli(*args: str | Path) -> Run:
    """Run ``j-cli`` through its real entry point (:func:`jupyter_jcli.cli.run`), capturing
    stdout and stderr separately."""
    runner = CliRunner()
    with runner.isolation() as streams:
        exit_code = run([str(arg) for arg in args])
        sys.stdout.flush()
        sys.stderr.flush()
        stdout = streams[0].getvalue().decode("utf-8")
        stderr = streams[1].getvalue().decode("utf-8") if streams[1] is not None else ""
    return Run(exit_code, stdout, stderr)


def tiny_png(width: int = 3, height: int = 2) -> bytes:
    """A valid PNG (8-bit greyscale) of the given size, built by hand (no imaging library)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = b"".join(b"\x00" + bytes(range(width)) for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def code_cell(outputs: Sequence[Any], source: str = "x = 1") -> dict[str, Any]:
    """An nbformat 4 code cell with the given outputs."""
    return {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "source": source,
        "outputs": list(outputs),
    }


def write_notebook(path: Path, cells: Sequence[Any]) -> Path:
    """Write an nbformat 4.4 notebook holding ``cells`` to ``path``."""
    document = {"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": list(cells)}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def png_b64(width: int = 3, height: int = 2) -> str:
    """:func:`tiny_png` as base64 with a trailing newline, as notebooks store it."""
    return base64.b64encode(tiny_png(width, height)).decode("ascii") + "\n"


def never_run_notebook(folder: Path, sources: Sequence[str]) -> Path:
    """``folder/nb.ipynb``: one code cell per source (ids ``c0``, ``c1``...), never run."""
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "execution_count": None, "outputs": []}
        for i, source in enumerate(sources)
    ]  # fmt: skip
    path = folder / "nb.ipynb"
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path
