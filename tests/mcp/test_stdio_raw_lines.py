"""Both MCP servers over stdio answer every line a host sends, even a broken one.

The SDK's stdio transport drops a line it cannot parse (no reply at all, the host waits for
its own timeout); :mod:`jupyter_jcli.mcp._stdio` answers it: -32700 with ``id: null`` for a
line that is not JSON, -32600 for JSON that is no JSON-RPC message, and a request holding a
lone-surrogate escape is served with U+FFFD in its place.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from workbench_client import PLOTS_NB, populate_root, server_env

from jupyter_jcli.mcp._stdio import INVALID_REQUEST, PARSE_ERROR, scrub_surrogates
from tool_results import checked_result

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

PROCESS_TIMEOUT = 60
SERVERS = {
    "jupyter-mcp": "jupyter_jcli.mcp.workbench",
    "jcli-notebook-output": "jupyter_jcli.mcp.readonly",
}
_INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    '"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}'
)
_INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _call(message_id: int, name: str, arguments_json: str) -> str:
    """A raw ``tools/call`` line; ``arguments_json`` goes in verbatim (escapes and all)."""
    return (
        f'{{"jsonrpc":"2.0","id":{message_id},"method":"tools/call",'
        f'"params":{{"name":"{name}","arguments":{arguments_json}}}}}'
    )


async def _exchange(module: str, root: Path, lines: list[str], count: int) -> list[dict[str, Any]]:
    """Send raw ``lines`` to the server; return the first ``count`` stdout messages."""
    stdin = "".join(line + "\n" for line in lines).encode()
    responses: list[dict[str, Any]] = []
    with anyio.fail_after(PROCESS_TIMEOUT), (root.parent / "err.log").open("wb") as err:
        async with await anyio.open_process(
            [sys.executable, "-m", module, "--root", str(root)],
            stderr=err,
            env=server_env(root.parent / "cache"),
        ) as process:
            assert process.stdin is not None
            assert process.stdout is not None
            await process.stdin.send(stdin)
            buffer = b""
            while len(responses) < count:
                buffer += await process.stdout.receive()
                *done, buffer = buffer.split(b"\n")
                responses += [json.loads(line) for line in done]
            await process.stdin.aclose()
            assert await process.wait() == 0
    return responses


def _tool_for(server: str) -> str:
    return "notebook_overview" if server == "jupyter-mcp" else "read_notebook_output"


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_a_line_that_is_not_json_gets_a_parse_error_with_a_null_id(
    server: str, tmp_path: Path
) -> None:
    root = populate_root(tmp_path / "root")
    lines = [_INITIALIZE, _INITIALIZED, "this is not json", "[1, 2", '{"jsonrpc":"2.0",']
    lines.append('{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}')
    responses = await _exchange(SERVERS[server], root, lines, 5)
    by_order = responses[1:]
    assert [r.get("id") for r in by_order] == [None, None, None, 9]
    assert [r["error"]["code"] for r in by_order[:3]] == [PARSE_ERROR] * 3
    assert "tools" in by_order[3]["result"]  # the server still serves afterwards
    assert "unparseable" in (root.parent / "err.log").read_text()


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_json_that_is_no_json_rpc_message_gets_invalid_request(
    server: str, tmp_path: Path
) -> None:
    root = populate_root(tmp_path / "root")
    lines = [_INITIALIZE, _INITIALIZED, '{"id": 7}', "42"]
    responses = await _exchange(SERVERS[server], root, lines, 3)
    assert [(r["id"], r["error"]["code"]) for r in responses[1:]] == [
        (7, INVALID_REQUEST),
        (None, INVALID_REQUEST),
    ]


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_a_lone_surrogate_escape_is_served_as_u_fffd(server: str, tmp_path: Path) -> None:
    root = populate_root(tmp_path / "root")
    arguments = '{"file_path":"nb\\ud800.ipynb","cell_index":0}'
    if server == "jupyter-mcp":
        arguments = '{"path":"nb\\ud800.ipynb"}'
    lines = [_INITIALIZE, _INITIALIZED, _call(2, _tool_for(server), arguments)]
    responses = await _exchange(SERVERS[server], root, lines, 2)
    result = responses[1]
    assert result["id"] == 2
    is_error, document = checked_result(_tool_for(server), result["result"])
    assert is_error and document["code"] == "FILE_NOT_FOUND"
    assert "nb\ufffd.ipynb" in json.dumps(document, ensure_ascii=False)


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_an_error_result_on_the_wire_is_the_error_json_without_structured_content(
    server: str, tmp_path: Path
) -> None:
    """What a TypeScript client receives: no ``structuredContent`` to check against the
    success schema, and the error JSON as the only (text) content, for a domain error and for
    arguments our schema check refuses alike."""
    root = populate_root(tmp_path / "root")
    tool = _tool_for(server)
    missing = '{"path":"missing.ipynb"}'
    if server == "jcli-notebook-output":
        missing = '{"file_path":"missing.ipynb","cell_index":0}'
    lines = [_INITIALIZE, _INITIALIZED, _call(2, tool, missing), _call(3, tool, "{}")]
    responses = await _exchange(SERVERS[server], root, lines, 3)
    results = {r["id"]: r["result"] for r in responses[1:]}
    for result in results.values():
        assert result["isError"] is True and "structuredContent" not in result, result
        assert [block["type"] for block in result["content"]] == ["text"]
    assert checked_result(tool, results[2])[1]["code"] == "FILE_NOT_FOUND"
    assert checked_result(tool, results[3])[1]["code"] == "USAGE_ERROR"


async def test_a_surrogate_in_a_real_request_does_not_stop_later_requests(tmp_path: Path) -> None:
    root = populate_root(tmp_path / "root")
    lines = [
        _INITIALIZE,
        _INITIALIZED,
        _call(2, "search_cells", f'{{"path":"{PLOTS_NB}","query":"x\\udc00y"}}'),
        _call(3, "notebook_overview", f'{{"path":"{PLOTS_NB}"}}'),
    ]
    responses = await _exchange(SERVERS["jupyter-mcp"], root, lines, 3)
    assert sorted(r["id"] for r in responses[1:]) == [2, 3]
    _, overview = checked_result(
        "notebook_overview", next(r for r in responses if r["id"] == 3)["result"]
    )
    assert overview["cell_count"] == 13


def test_scrub_surrogates_replaces_keys_and_nested_strings() -> None:
    value = {"a\ud800": ["b\udfff", {"c": "ok"}, 3, None, True]}
    assert scrub_surrogates(value) == {"a\ufffd": ["b\ufffd", {"c": "ok"}, 3, None, True]}
