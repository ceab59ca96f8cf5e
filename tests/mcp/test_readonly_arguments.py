"""``read_notebook_output``'s arguments are the Python API's (and jupyter-jcli 0.9.7's) names:
``file_path``, ``cell_index``, ``output_index``, ``mime_type``, ``offset``, ``limit``; and
``limit: null`` means the whole text. Both servers share the tool, so both are checked, each
in-process through the SDK's client (the stdio transport is covered by the process tests)."""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from memory_client import readonly_in_process, workbench_in_process
from readonly_client import TEXT_NB, TOOL, populate_root

from jupyter_jcli.mcp._output_tool import parse_output_arguments
from jupyter_jcli.outputs import DEFAULT_TEXT_LIMIT
from tool_results import checked_result

pytestmark = pytest.mark.anyio

SERVERS = ("jcli-notebook-output", "jupyter-mcp")
LONG_NB = "long_text.ipynb"
LONG_TEXT = "".join(f"line {n:06d} of a long saved result\n" for n in range(5_000))
"""A text/plain value longer than the default page (5,000 lines, 180,000 characters)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The real notebooks, plus one whose only output is a text longer than a default page."""
    folder = populate_root(tmp_path / "root")
    notebook = json.loads((folder / TEXT_NB).read_text(encoding="utf-8"))
    cell = notebook["cells"][5]
    cell["outputs"] = [
        {
            "output_type": "execute_result",
            "execution_count": cell.get("execution_count") or 1,
            "data": {"text/plain": LONG_TEXT},
            "metadata": {},
        }
    ]
    notebook["cells"] = [cell]
    (folder / LONG_NB).write_text(json.dumps(notebook), encoding="utf-8")
    return folder


def _open(server: str, root: Path, cache: Path) -> AbstractAsyncContextManager[ClientSession]:
    """A session on ``server`` started with ``--root root``, in this process."""
    if server == "jupyter-mcp":
        return workbench_in_process(root, cache)
    session: AbstractAsyncContextManager[ClientSession] = readonly_in_process(root)
    return session


async def _read(session: ClientSession, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    return checked_result(TOOL, await session.call_tool(TOOL, arguments))


def test_the_input_schema_names_the_python_apis_arguments() -> None:
    from jupyter_jcli.mcp._readonly_schema import INPUT_SCHEMA

    assert INPUT_SCHEMA["required"] == ["file_path", "cell_index"]
    assert {"file_path", "cell_index", "output_index", "mime_type", "offset", "limit"} <= set(
        INPUT_SCHEMA["properties"]
    )
    assert INPUT_SCHEMA["properties"]["limit"]["type"] == ["integer", "null"]


def test_limit_null_is_passed_on_as_none_and_means_nothing_for_a_listing() -> None:
    read = parse_output_arguments(
        {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0, "limit": None}
    )
    assert read.file_path == TEXT_NB
    assert read.read_options == {"limit": None}
    listing = parse_output_arguments({"file_path": TEXT_NB, "cell_index": 5, "limit": None})
    assert (listing.output_index, listing.read_options) == (None, {})
    plain = parse_output_arguments({"file_path": TEXT_NB, "cell_index": 5, "output_index": 0})
    assert plain.read_options == {}  # the library's default page


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_file_path_is_the_argument_and_path_is_refused(
    server: str, root: Path, in_process: Path
) -> None:
    async with _open(server, root, in_process) as session:
        _, listing = await _read(session, file_path=TEXT_NB, cell_index=5)
        _, read = await _read(
            session, file_path=TEXT_NB, cell_index=5, output_index=0, mime_type="text/plain"
        )
        is_error, refused = await _read(session, path=TEXT_NB, cell_index=5)
    assert listing["output_count"] == 1
    assert listing["source"]["path"] == str(root / TEXT_NB)
    assert read["selected"]["data"] == "   0\n0  4"
    assert is_error and refused["code"] == "USAGE_ERROR"
    assert sorted(refused["details"]["problems"]) == [
        "file_path: required",
        "path: unknown argument",
    ]


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_an_absent_limit_reads_the_default_page(
    server: str, root: Path, in_process: Path
) -> None:
    async with _open(server, root, in_process) as session:
        _, page = await _read(session, file_path=LONG_NB, cell_index=0, output_index=0)
    selected = page["selected"]
    assert selected["data"] == LONG_TEXT[:DEFAULT_TEXT_LIMIT]
    assert selected["next_offset"] == DEFAULT_TEXT_LIMIT


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_limit_null_reads_the_whole_text_from_offset(
    server: str, root: Path, in_process: Path
) -> None:
    async with _open(server, root, in_process) as session:
        is_error, whole = await _read(
            session, file_path=LONG_NB, cell_index=0, output_index=0, limit=None
        )
        _, rest = await _read(
            session, file_path=LONG_NB, cell_index=0, output_index=0, offset=7, limit=None
        )
    assert not is_error, whole
    assert whole["selected"]["data"] == LONG_TEXT
    assert whole["selected"]["returned_characters"] == len(LONG_TEXT)
    assert "next_offset" not in whole["selected"]
    assert rest["selected"]["data"] == LONG_TEXT[7:]
    assert "next_offset" not in rest["selected"]
