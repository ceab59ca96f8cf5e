"""``jcli-notebook-output`` trusted roots over MCP: --root, client roots (both protocol eras),
ROOTS_REQUIRED, and path safety (``..``, elsewhere, symlinks, .py pairs, ambiguity).

The roots logic runs in-process (the SDK's client on the server object, the roots given as
``--root`` would give them); the protocol-era test spawns the server over stdio, as a host
does, with and without client roots."""

from __future__ import annotations

import json
import shutil
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import jupytext
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientSession, ListRootsFnT
from memory_client import open_in_process
from readonly_client import (
    NOTEBOOKS,
    TEXT_NB,
    TOOL,
    WAIT_SECONDS,
    call,
    error_code,
    module_params,
    populate_root,
    roots_callback,
)

from jupyter_jcli.mcp import readonly as readonly_server
from jupyter_jcli.mcp._roots import roots_from_paths
from tool_results import checked_result

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return populate_root(tmp_path / "root")


def _session(
    *roots: Path, list_roots_callback: ListRootsFnT | None = None
) -> AbstractAsyncContextManager[ClientSession]:
    """A session on the server started with ``--root`` for each of ``roots`` (none: the
    client's roots), in this process."""
    server = readonly_server.build_server(roots_from_paths(roots) if roots else None)
    return open_in_process(server, list_roots_callback=list_roots_callback)


async def test_client_roots_are_used_without_root_option(root: Path, tmp_path: Path) -> None:
    async with _session(list_roots_callback=roots_callback(root)) as session:
        result, doc = await call(session, file_path=TEXT_NB, cell_index=9)
        outside, refused = await call(session, file_path=str(NOTEBOOKS / TEXT_NB), cell_index=9)
    assert not result.is_error
    assert doc["source"]["path"] == str(root / TEXT_NB)
    assert error_code(outside, refused) == "PATH_NOT_ALLOWED"


async def test_root_option_wins_over_client_roots(root: Path, tmp_path: Path) -> None:
    other = populate_root(tmp_path / "other")
    async with _session(root, list_roots_callback=roots_callback(other)) as session:
        inside, _ = await call(session, file_path=str(root / TEXT_NB), cell_index=9)
        result, doc = await call(session, file_path=str(other / TEXT_NB), cell_index=9)
    assert not inside.is_error
    assert error_code(result, doc) == "PATH_NOT_ALLOWED"


async def test_no_root_option_and_no_client_roots_is_roots_required(tmp_path: Path) -> None:
    async with _session() as session:
        result, doc = await call(session, file_path=str(NOTEBOOKS / TEXT_NB), cell_index=9)
    assert error_code(result, doc) == "ROOTS_REQUIRED"
    assert doc["details"]["client_supports_roots"] is False


async def test_client_with_an_empty_roots_list_is_roots_required(tmp_path: Path) -> None:
    async with _session(list_roots_callback=roots_callback()) as session:
        result, doc = await call(session, file_path=str(NOTEBOOKS / TEXT_NB), cell_index=9)
    assert error_code(result, doc) == "ROOTS_REQUIRED"
    assert doc["details"]["client_supports_roots"] is True


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_high_level_client_supplies_roots_in_both_protocol_eras(
    root: Path, mode: str
) -> None:
    """Handshake era: the server sends roots/list. 2026-07-28: it returns an
    InputRequiredResult carrying a roots/list input request, which the client answers."""
    with anyio.fail_after(WAIT_SECONDS):
        async with Client(
            module_params(), mode=mode, list_roots_callback=roots_callback(root)
        ) as client:
            result = await client.call_tool(TOOL, {"file_path": TEXT_NB, "cell_index": 9})
        async with Client(module_params(), mode=mode) as client:
            refused = await client.call_tool(TOOL, {"file_path": TEXT_NB, "cell_index": 9})
    assert checked_result(TOOL, result)[1]["output_count"] == 2
    is_error, document = checked_result(TOOL, refused)
    assert is_error and document["code"] == "ROOTS_REQUIRED"


async def test_path_safety(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    shutil.copyfile(NOTEBOOKS / TEXT_NB, secret / "private.ipynb")
    (root / "link.ipynb").symlink_to(secret / "private.ipynb")
    (root / "up").symlink_to(tmp_path, target_is_directory=True)
    refused = [
        {"file_path": "../secret/private.ipynb", "cell_index": 9},
        {"file_path": str(root / ".." / "secret" / "private.ipynb"), "cell_index": 9},
        {"file_path": str(secret / "private.ipynb"), "cell_index": 9},
        {"file_path": str(secret / "does-not-exist.ipynb"), "cell_index": 9},
        {"file_path": "/etc/passwd", "cell_index": 0},
        {"file_path": "link.ipynb", "cell_index": 9},
        {"file_path": str(root / "link.ipynb"), "cell_index": 9, "output_index": 0},
        {"file_path": "up/secret/private.ipynb", "cell_index": 9},
    ]
    async with _session(root) as session:
        for arguments in refused:
            result, doc = await call(session, **arguments)
            assert error_code(result, doc) == "PATH_NOT_ALLOWED", arguments
            if "secret" not in str(arguments["file_path"]):  # a symlink's target is never revealed
                assert str(secret) not in result.content[0].model_dump_json()
        allowed, _ = await call(session, file_path="up/root/" + TEXT_NB, cell_index=9)
    assert not allowed.is_error  # a symlinked way back into the root is still inside


def _write_py(notebook_path: Path, py_path: Path, formats: str | None = None) -> None:
    notebook = json.loads((NOTEBOOKS / TEXT_NB).read_text(encoding="utf-8"))
    if formats is not None:
        notebook["metadata"]["jupytext"] = {"formats": formats}
    notebook_path.parent.mkdir(parents=True, exist_ok=True)
    notebook_path.write_text(json.dumps(notebook), encoding="utf-8")
    text = jupytext.writes(jupytext.reads(json.dumps(notebook), fmt="ipynb"), fmt="py:percent")
    py_path.parent.mkdir(parents=True, exist_ok=True)
    py_path.write_text(text, encoding="utf-8")


async def test_a_py_file_reads_its_paired_notebook_only_inside_the_roots(tmp_path: Path) -> None:
    proj = (tmp_path / "proj").resolve()
    _write_py(proj / "pair.ipynb", proj / "pair.py")
    _write_py(
        proj / "notebooks" / "split.ipynb",
        proj / "scripts" / "split.py",
        formats="notebooks//ipynb,scripts//py:percent",
    )
    async with _session(proj) as session:
        paired, doc = await call(session, file_path="pair.py", cell_index=9, output_index=0)
        split_ok, _ = await call(session, file_path="scripts/split.py", cell_index=9)
    assert not paired.is_error
    assert doc["source"]["kind"] == "notebook"
    assert doc["source"]["requested_path"] == str(proj / "pair.py")
    assert doc["source"]["path"] == str(proj / "pair.ipynb")
    assert doc["selected"]["mime_type"] == "image/png"
    assert not split_ok.is_error

    scripts = proj / "scripts"
    async with _session(scripts) as session:
        result, refused = await call(session, file_path="split.py", cell_index=9)
    assert error_code(result, refused) == "PATH_NOT_ALLOWED"
    assert "notebooks" not in json.dumps(refused)


async def test_a_relative_path_in_two_roots_is_ambiguous(tmp_path: Path) -> None:
    first = populate_root(tmp_path / "first")
    second = populate_root(tmp_path / "second")
    (first / "only-here.ipynb").write_bytes((NOTEBOOKS / TEXT_NB).read_bytes())
    async with _session(first, second) as session:
        result, doc = await call(session, file_path=TEXT_NB, cell_index=9)
        unique, _ = await call(session, file_path="only-here.ipynb", cell_index=9)
        absolute, _ = await call(session, file_path=str(second / TEXT_NB), cell_index=9)
    assert error_code(result, doc) == "PATH_AMBIGUOUS"
    assert sorted(doc["details"]["matches"]) == sorted(
        [str(first / TEXT_NB), str(second / TEXT_NB)]
    )
    assert not unique.is_error
    assert not absolute.is_error


async def test_a_client_failing_roots_list_is_roots_required(tmp_path: Path) -> None:
    async def refuse(context: object) -> types.ErrorData:
        return types.ErrorData(code=-32603, message="no roots today")

    async with _session(list_roots_callback=refuse) as session:
        result, doc = await call(session, file_path=str(NOTEBOOKS / TEXT_NB), cell_index=9)
    assert error_code(result, doc) == "ROOTS_REQUIRED"
    assert doc["details"]["client_supports_roots"] is True
