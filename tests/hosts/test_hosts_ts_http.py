"""``jupyter-mcp`` over streamable HTTP through the official TypeScript SDK's
``StreamableHTTPClientTransport`` (markers ``hosts``, ``kernel``).

The real ``jupyter-mcp`` process serves on a free port of 127.0.0.1 with a bearer token
(:mod:`mcp_http_helpers`); the Node script of ``test_hosts_ts_client.py`` (same pinned
``@modelcontextprotocol/sdk``, same npm cache) connects by URL with the token as a header,
lists the tools, reads, edits, runs cells on a real kernel and is refused a path outside the
root; lists, stops and starts (kept) the notebook's kernel and runs on the kept one. A client
with a wrong token or none cannot connect: the SDK reports HTTP 401.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hosts_helpers import npm_install
from test_hosts_ts_client import SDK_PACKAGES, check_as_the_model_sees_it, run_ts_client

from jupyter_jcli.mcp import workbench
from jupyter_jcli.workbench import create_notebook
from mcp_http_helpers import running_http_server

pytestmark = [pytest.mark.hosts, pytest.mark.kernel, pytest.mark.timeout(600)]

NB = "work.ipynb"
WRONG = "x" * 32

Call = tuple[str, str, dict[str, Any], "str | None"]


def _calls(outside: Path) -> list[Call]:
    return [
        ("overview", "notebook_overview", {"path": NB}, None),
        ("read", "read_cells", {"path": NB}, None),
        (
            "update",
            "update_cell",
            {
                "path": NB,
                "name": "setup",
                "expected_rev": {"$from": "overview", "pointer": "/cells/0/rev"},
                "source": "x = 41",
            },
            None,
        ),
        ("execute", "execute_cells", {"path": NB, "names": ["setup", "show"]}, None),
        ("inspect", "inspect_variable", {"path": NB, "name": "x"}, None),
        ("outside", "notebook_overview", {"path": str(outside)}, "PATH_NOT_ALLOWED"),
        ("kernels", "list_kernels", {}, None),
        ("stop", "stop_kernel", {"path": NB}, None),
        ("stop-again", "stop_kernel", {"path": NB}, "KERNEL_NOT_RUNNING"),
        ("start", "start_kernel", {"path": NB}, None),
        ("start-outside", "start_kernel", {"path": str(outside)}, "PATH_NOT_ALLOWED"),
        ("execute-kept", "execute_cells", {"path": NB, "names": ["setup", "show"]}, None),
        ("stop-all", "stop_kernel", {"all": True}, None),
    ]


def _plan_entry(name: str, url: str, headers: dict[str, str], calls: list[Call]) -> dict[str, Any]:
    return {
        "name": name,
        "url": url,
        "headers": headers,
        "calls": [{"label": label, "tool": tool, "arguments": a} for label, tool, a, _ in calls],
    }


def test_typescript_sdk_http_client_reads_edits_and_runs_cells_with_the_token_only(
    tmp_path: Path,
) -> None:
    sdk = npm_install(SDK_PACKAGES)
    root = (tmp_path / "project").resolve()
    root.mkdir()
    cells = [{"source": "x = 20", "name": "setup"}, {"source": "print(x + 1)", "name": "show"}]
    create_notebook(root / NB, cells=cells)
    outside = tmp_path / "elsewhere" / NB
    outside.parent.mkdir()
    create_notebook(outside, cells=[{"source": "1", "name": "one"}])
    calls = _calls(outside)
    with running_http_server("jupyter-mcp", root, tmp_path) as server:
        plan = {
            "servers": [
                _plan_entry(
                    "token", server.url, {"Authorization": f"Bearer {server.token}"}, calls
                ),
                _plan_entry(
                    "wrong", server.url, {"Authorization": "Bearer " + "x" * 32}, calls[:1]
                ),
                _plan_entry("none", server.url, {}, calls[:1]),
            ]
        }
        report = run_ts_client(sdk, plan, tmp_path)
        log = server.stderr()
    by_name = {entry["name"]: entry for entry in report["servers"]}
    served = by_name["token"]
    assert "connect_error" not in served, (served, log)
    assert sorted(tool["name"] for tool in served["tools"]) == sorted(
        tool.name for tool in workbench.tools()
    )
    for entry, (_, _, _, expected) in zip(served["calls"], calls, strict=True):
        check_as_the_model_sees_it(entry, expected)
    results = {entry["label"]: entry.get("structured_content") for entry in served["calls"]}
    assert [cell["status"] for cell in results["execute"]["cells"]] == ["ok", "ok"]
    assert "42" in results["execute"]["cells"][1]["outputs"]["text"]
    assert results["inspect"]["repr"] == "41"  # the edit reached the kernel's run
    assert "x = 41" in (root / NB).read_text()
    (listed,) = results["kernels"]["kernels"]  # the kernel the server started for the run
    assert [k["pid"] for k in results["stop"]["stopped"]] == [listed["pid"]]
    kept = results["start"]["kernel"]
    assert results["start"]["started"] is True and kept["keep"] is True
    assert results["execute-kept"]["kernel"]["pid"] == kept["pid"]  # the run joined it
    assert results["execute-kept"]["kernel_started"] is False
    assert [k["pid"] for k in results["stop-all"]["stopped"]] == [kept["pid"]]
    for refused in ("wrong", "none"):
        assert by_name[refused]["connect_error"]["code"] == 401, by_name[refused]
