"""A folder swapped for a link to an outside folder between a tool's root check and its open
(issue 9 item 3), deterministically: a hook in that window, both servers, in process through
the MCP SDK's own client. No call may read or write the outside folder."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from jupyter_jcli.mcp import _roots
from jupyter_jcli.mcp import readonly as readonly_server
from jupyter_jcli.mcp import workbench as workbench_server
from jupyter_jcli.workbench import Workbench
from tool_results import checked_result

WAIT_SECONDS = 60


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _notebook(word: str) -> str:
    output = {"output_type": "stream", "name": "stdout", "text": f"{word}\n"}
    cell = {
        "cell_type": "code",
        "id": "c0",
        "metadata": {},
        "execution_count": 1,
        "source": f"print('{word}')",
        "outputs": [output],
    }
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]})


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """``root/sub/nb.ipynb`` (INSIDE) and ``outside/nb.ipynb`` (OUTSIDE)."""
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUPYTER_MCP_DISABLE_SUMMARIES", "1")
    root, outside = (tmp_path / "root").resolve(), (tmp_path / "outside").resolve()
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "nb.ipynb").write_text(_notebook("INSIDE"), encoding="utf-8")
    (outside / "nb.ipynb").write_text(_notebook("OUTSIDE"), encoding="utf-8")
    return root, root / "sub", outside


def _swap_after_check(
    monkeypatch: pytest.MonkeyPatch, module: Any, sub: Path, outside: Path
) -> list[Path]:
    """After the tool's root check resolved its path: rename ``sub`` away and put a link to
    ``outside`` in its place (once)."""
    original: Callable[..., Path] = module.resolve_in_roots
    swapped: list[Path] = []

    def resolve(*args: Any, **kwargs: Any) -> Path:
        resolved = original(*args, **kwargs)
        if not swapped:
            sub.rename(sub.with_name("sub_away"))
            os.symlink(outside, sub)
            swapped.append(resolved)
        return resolved

    monkeypatch.setattr(module, "resolve_in_roots", resolve)
    return swapped


def _document(tool: str, result: types.CallToolResult) -> dict[str, Any]:
    _is_error, document = checked_result(tool, result)
    return document


async def _call_workbench(root: Path, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    with anyio.fail_after(WAIT_SECONDS):
        async with Workbench() as workbench:
            server = workbench_server.build_server((root,), workbench)
            async with Client(server) as client:
                return _document(tool, await client.call_tool(tool, arguments))


@pytest.mark.anyio
async def test_read_cells_never_reads_a_folder_swapped_in_after_the_root_check(
    layout: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, sub, outside = layout
    swapped = _swap_after_check(monkeypatch, _roots, sub, outside)
    document = await _call_workbench(root, "read_cells", {"path": str(sub / "nb.ipynb")})
    assert swapped
    assert "OUTSIDE" not in json.dumps(document)
    assert document["code"] == "PATH_NOT_ALLOWED"


@pytest.mark.anyio
async def test_add_cell_never_writes_a_folder_swapped_in_after_the_root_check(
    layout: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, sub, outside = layout
    before = (outside / "nb.ipynb").read_bytes()
    swapped = _swap_after_check(monkeypatch, _roots, sub, outside)
    arguments = {"path": str(sub / "nb.ipynb"), "source": "x = 1"}
    document = await _call_workbench(root, "add_cell", arguments)
    assert swapped
    assert document["code"] == "PATH_NOT_ALLOWED"
    assert (outside / "nb.ipynb").read_bytes() == before
    assert sorted(path.name for path in outside.iterdir()) == ["nb.ipynb"]


@pytest.mark.anyio
async def test_read_notebook_output_never_reads_a_folder_swapped_in_after_the_root_check(
    layout: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, sub, outside = layout
    swapped = _swap_after_check(monkeypatch, _roots, sub, outside)
    arguments = {"file_path": str(sub / "nb.ipynb"), "cell_index": 0, "output_index": 0}
    with anyio.fail_after(WAIT_SECONDS):
        async with Client(readonly_server.build_server((root,))) as client:
            document = _document(
                "read_notebook_output", await client.call_tool("read_notebook_output", arguments)
            )
    assert swapped
    assert "OUTSIDE" not in json.dumps(document)
    assert document["code"] == "PATH_NOT_ALLOWED"


@pytest.mark.anyio
async def test_without_a_swap_the_same_calls_work(layout: tuple[Path, Path, Path]) -> None:
    root, sub, _outside = layout
    document = await _call_workbench(root, "read_cells", {"path": str(sub / "nb.ipynb")})
    assert document["status"] == "ok"
    assert "INSIDE" in json.dumps(document)
    arguments = {"path": str(sub / "nb.ipynb"), "source": "x = 1"}
    document = await _call_workbench(root, "add_cell", arguments)
    assert document["status"] == "ok"
