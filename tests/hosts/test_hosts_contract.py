"""One contract for every integration: the same notebook, the same calls, the same answers.

The read-only MCP server (through the MCP SDK's own stdio client) answers each call; the
``j-cli -j`` JSON that the native adapters run must give the same answers (checked through
j-cli's entry point in this process, in the project folder); then Node's test runner drives
the installed OpenCode and DSH plugins (``tests/hosts/node/``), which run ``j-cli`` as a
process, with the same calls and compares their answers with the server's.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from hosts_helpers import run_json, run_process

from jupyter_jcli.hosts import Scope, setup_host
from tool_results import checked_result

NODE_DIR = Path(__file__).parent / "node"
NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
TEXT_NB = "text_outputs_and_images.ipynb"  # cell 5: HTML + plain; 9: two PNGs; 11: an error
STREAM_NB = "01.06-Errors-and-Debugging.ipynb"  # cell 6: a stdout stream
WAIT_SECONDS = 120
RASTERS = {"image/png", "image/jpeg", "image/webp", "image/gif"}

CALLS: list[dict[str, Any]] = [
    {"file_path": TEXT_NB, "cell_index": 5},
    {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0},
    {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0, "mime_type": "text/plain"},
    {
        "file_path": TEXT_NB,
        "cell_index": 6,
        "output_index": 1,
        "supported_mime_types": ["text/plain"],
    },
    {"file_path": TEXT_NB, "cell_index": 9},
    {"file_path": TEXT_NB, "cell_index": 9, "output_index": 1},
    {"file_path": TEXT_NB, "cell_index": 11, "output_index": 0},
    {"file_path": STREAM_NB, "cell_index": 6, "output_index": 0, "offset": 3, "limit": 10},
    # an adapter's capability list filters bundles only: a stream and an error read normally
    {
        "file_path": STREAM_NB,
        "cell_index": 6,
        "output_index": 0,
        "supported_mime_types": ["image/png"],
    },
    {
        "file_path": TEXT_NB,
        "cell_index": 11,
        "output_index": 0,
        "supported_mime_types": ["text/html"],
    },
    {"file_path": TEXT_NB, "cell_index": 5, "output_index": 7},
    {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0, "mime_type": "image/png"},
    {"file_path": TEXT_NB, "cell_index": 99},
    {"file_path": "missing.ipynb", "cell_index": 0},
    {"file_path": TEXT_NB, "cell_index": 5, "limit": 10},
]
CLI_CANNOT_EXPRESS = 1  # the last call (read options without output_index) is refused by the tool
LOOSE_ERRORS = ("FILE_NOT_FOUND", "USAGE_ERROR")
"""Errors raised by each front end's own argument and path handling (the MCP server resolves a
path against its roots, a CLI against its folder): the same code, front-end wording."""


def error_answer(document: dict[str, Any]) -> dict[str, Any]:
    """An error in the compared shape: the code, plus the whole error JSON for protocol errors."""
    assert document["schema_version"] == 1 and document["status"] == "error"
    code = document["code"]
    return {"is_error": True, "code": code, "json": None if code in LOOSE_ERRORS else document}


@pytest.fixture
def contract_project(project: Path) -> Path:
    shutil.copyfile(NOTEBOOKS / STREAM_NB, project / STREAM_NB)
    return project


def _split_image(document: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The MCP server's raster rule: base64 moves out of the JSON into an image."""
    selected = document.get("selected")
    if (
        isinstance(selected, dict)
        and selected.get("encoding") == "base64"
        and selected.get("mime_type") in RASTERS
    ):
        rest = {k: v for k, v in selected.items() if k != "data"}
        rest["delivered_as"] = "image_content"
        image = {"mime_type": selected["mime_type"], "data": selected["data"]}
        return {**document, "selected": rest}, [image]
    return document, []


def _cli_answer(capsys: pytest.CaptureFixture[str], call: dict[str, Any]) -> dict[str, Any]:
    """``j-cli -j notebook ...`` for one call, run from the project folder."""
    argv = ["notebook"]
    if "output_index" in call:
        argv += ["output", call["file_path"], "--cell", str(call["cell_index"])]
        argv += ["--output", str(call["output_index"])]
        if "mime_type" in call:
            argv += ["--mime", call["mime_type"]]
        if "supported_mime_types" in call:
            argv += ["--supported-mime", ",".join(call["supported_mime_types"])]
        for key in ("offset", "limit"):
            if key in call:
                argv += [f"--{key}", str(call[key])]
    else:
        argv += ["outputs", call["file_path"], "--cell", str(call["cell_index"])]
    status, document = run_json(capsys, *argv)
    if status != 0:
        return error_answer(document)
    json_doc, images = _split_image(document)
    return {"is_error": False, "json": json_doc, "images": images}


async def _mcp_answers(project: Path, errlog: Path) -> tuple[list[dict[str, Any]], list[str]]:
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "jupyter_jcli.mcp.readonly", "--root", str(project)],
        cwd=project,
    )
    answers: list[dict[str, Any]] = []
    with anyio.fail_after(WAIT_SECONDS), errlog.open("a", encoding="utf-8") as err:
        async with (
            stdio_client(params, errlog=err) as (read_stream, write_stream),
            ClientSession(read_stream, write_stream) as session,
        ):
            await session.initialize()
            (tool,) = (await session.list_tools()).tools
            arguments = sorted(tool.input_schema["properties"])
            for call in CALLS:
                result = await session.call_tool("read_notebook_output", call)
                is_error, document = checked_result("read_notebook_output", result)
                if is_error:
                    answers.append(error_answer(document))
                    continue
                images = [
                    {"mime_type": block.mime_type, "data": block.data}
                    for block in result.content[1:]
                    if isinstance(block, types.ImageContent)
                ]
                answers.append({"is_error": False, "json": document, "images": images})
    return answers, arguments


def test_mcp_server_cli_opencode_tool_and_dsh_plugin_give_the_same_answers(
    contract_project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = write_contract(contract_project, tmp_path, capsys)
    # DSH loads .dsh/plugins/jcli.ts (plain JavaScript); Node 20 imports the same bytes as .mjs.
    module = tmp_path / "dsh-plugin.mjs"
    shutil.copyfile(contract_project / ".dsh" / "plugins" / "jcli.ts", module)
    env["JCLI_DSH_PLUGIN_MJS"] = str(module)
    run_node_tests(env, tmp_path)


def write_contract(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, str]:
    """The MCP server's answers to :data:`CALLS` (checked against the CLI's), the OpenCode and
    DSH plugins installed in ``project``, and the environment of the Node tests
    (``JCLI_CONTRACT``, ``JCLI_OPENCODE_PLUGIN``)."""
    expected, arguments = anyio.run(_mcp_answers, project, tmp_path / "server.log")
    assert [a["is_error"] for a in expected] == [False] * 10 + [True] * 5
    assert expected[8]["json"]["stream"]["name"] == "stdout"
    assert expected[9]["json"]["error"]["ename"]
    assert (
        expected[5]["images"] and expected[5]["json"]["selected"]["delivered_as"] == "image_content"
    )
    error_codes = [a["code"] for a in expected if a["is_error"]]
    assert error_codes == [
        "OUTPUT_NOT_FOUND",
        "MIME_NOT_FOUND",
        "CELL_NOT_FOUND",
        "FILE_NOT_FOUND",
        "USAGE_ERROR",
    ]
    for call, answer in zip(CALLS[:-CLI_CANNOT_EXPRESS], expected, strict=False):
        assert _cli_answer(capsys, call) == answer, call

    setup_host("opencode", Scope.PROJECT, project)
    setup_host("dsh", Scope.PROJECT, project)
    contract = tmp_path / "contract.json"
    contract.write_text(
        json.dumps(
            {
                "project": str(project),
                "loose_errors": list(LOOSE_ERRORS),
                "arguments": arguments,
                "calls": [{"args": c, "expected": a} for c, a in zip(CALLS, expected, strict=True)],
            }
        )
    )
    env = dict(os.environ)
    env["JCLI_CONTRACT"] = str(contract)
    env["JCLI_OPENCODE_PLUGIN"] = str(project / ".opencode" / "plugins" / "jcli.js")
    return env


def run_node_tests(env: dict[str, str], cwd: Path) -> str:
    """Run ``node --test`` on the adapter tests; fail with its report unless all pass."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node adapter tests need Node.js >= 20")
    files = sorted(str(p) for p in NODE_DIR.glob("*.test.mjs"))
    done = run_process([node, "--test", *files], cwd=cwd, env=env)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert "# fail 0" in report and "# skipped 0" in report, report
    assert "# pass 0" not in report, report
    return report
