"""The one dispatcher of both servers: every registered tool's notebook goes through the one root
resolver (pair included) before its operation runs. In process, through the SDK's client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import jupytext
import mcp_types as types
import pytest
from mcp import Client

from jupyter_jcli.kernels import KernelPool
from jupyter_jcli.mcp import readonly as readonly_server
from jupyter_jcli.mcp import workbench as workbench_server
from jupyter_jcli.workbench import Workbench
from kernel_fakes import python_backend
from tool_results import checked_result

WAIT_SECONDS = 60
_SAMPLES = {"string": "x", "integer": 0, "number": 1, "boolean": False}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _arguments(tool: types.Tool, path: str) -> dict[str, Any]:
    """Schema-valid arguments naming ``path``: a sample value for each required property."""
    schema = tool.input_schema
    arguments: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = schema["properties"][name]
        kind = prop["type"][0] if isinstance(prop["type"], list) else prop["type"]
        arguments[name] = ["x"] if kind == "array" else _SAMPLES[kind]
    arguments["file_path" if "file_path" in schema["properties"] else "path"] = path
    return arguments


@pytest.fixture
def pair_outside(tmp_path: Path) -> tuple[Path, Path]:
    """``proj/scripts/nb.py`` (the root) paired with ``proj/notebooks/nb.ipynb`` (outside)."""
    notebooks, scripts = tmp_path / "proj" / "notebooks", tmp_path / "proj" / "scripts"
    notebooks.mkdir(parents=True)
    scripts.mkdir()
    formats = "notebooks//ipynb,scripts//py:percent"
    cell = {"cell_type": "code", "id": "c0", "metadata": {}, "execution_count": None}
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"jupytext": {"formats": formats}},
        "cells": [{**cell, "source": "x = 1", "outputs": []}],
    }
    text = json.dumps(notebook)
    (notebooks / "nb.ipynb").write_text(text, encoding="utf-8")
    py_text = jupytext.writes(jupytext.reads(text, fmt="ipynb"), fmt="py:percent")
    (scripts / "nb.py").write_text(py_text, encoding="utf-8")
    return scripts.resolve(), notebooks / "nb.ipynb"


@pytest.mark.anyio
async def test_every_tool_of_both_servers_refuses_a_py_whose_pair_lies_outside_the_roots(
    pair_outside: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUPYTER_MCP_DISABLE_SUMMARIES", "1")
    root, outside = pair_outside
    before = outside.read_bytes()
    codes: dict[str, str] = {}
    with anyio.fail_after(WAIT_SECONDS):
        pool = KernelPool(backend_factory=python_backend)
        async with Workbench(cache_dir=tmp_path / "cache", pool=pool) as workbench:
            servers = {
                "jupyter-mcp": workbench_server.build_server((root,), workbench),
                "jcli-notebook-output": readonly_server.build_server((root,)),
            }
            for server_name, server in servers.items():
                async with Client(server) as client:
                    for tool in (await client.list_tools()).tools:
                        if not {"path", "file_path"} & set(tool.input_schema["properties"]):
                            continue  # names no notebook (list_kernels)
                        result = await client.call_tool(tool.name, _arguments(tool, "nb.py"))
                        is_error, document = checked_result(tool.name, result)
                        assert is_error
                        codes[f"{server_name}/{tool.name}"] = document["code"]
    assert len(codes) == len(workbench_server.tools())  # all but list_kernels, plus the read
    assert set(codes.values()) == {"PATH_NOT_ALLOWED"}, codes
    assert outside.read_bytes() == before
    assert sorted(path.name for path in outside.parent.iterdir()) == ["nb.ipynb"]
