"""Both MCP servers through the official TypeScript SDK's client (marker ``hosts``).

``@modelcontextprotocol/sdk`` (the client inside Claude Code, Cursor, VS Code) is installed
from npm at a pinned version (:func:`hosts_helpers.npm_install`, cached). The Node script
``node/ts_sdk_client.mjs`` lists each server's tools, then calls every tool of ``jupyter-mcp``
(all 24, real kernels) and ``read_notebook_output`` of ``jcli-notebook-output`` once on a
success path and once on an error path, on real notebooks. What the model would see is
checked: a success validates (the SDK checks ``structuredContent`` against the tool's
``outputSchema`` and throws ``-32602`` on a mismatch) and carries structured content; an error
is ``isError`` whose first text content is the error JSON with the expected code.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hosts_helpers import npm_install, run_process

from jupyter_jcli.mcp import readonly, workbench
from jupyter_jcli.mcp._model_text import model_view
from jupyter_jcli.workbench._cell_lists import CELLS_LISTED
from tool_results import PROTOCOL_TOOL, empty_fields

pytestmark = [pytest.mark.hosts, pytest.mark.kernel, pytest.mark.timeout(1500)]

SDK_PACKAGES = {"@modelcontextprotocol/sdk": "1.32.2"}
SCRIPT = Path(__file__).parent / "node" / "ts_sdk_client.mjs"
NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
TEXT_NB = "text_outputs_and_images.ipynb"  # cell 9: two PNGs
WORK_NB = "work.ipynb"
CHAIN_NB = "chain.ipynb"
NODE_TIMEOUT_S = 900
NO_REV = "000000000000"

Call = tuple[str, str, dict[str, Any], "str | None"]
"""(label, tool, arguments, expected error code or None for a success)."""


def _ref(label: str, pointer: str) -> dict[str, str]:
    """An argument taken from an earlier call's structured content (see the Node script)."""
    return {"$from": label, "pointer": pointer}


def new_tool_calls() -> list[Call]:
    """The tools of issue 25 on the notebook ``workbench_calls`` made and ran, each on a
    success path and an error path."""
    return [
        ("code", "execute_code", {"path": WORK_NB, "code": "w = 1\nprint(w)"}, None),
        ("code-missing", "execute_code", {"path": "gone.ipynb", "code": "1"}, "FILE_NOT_FOUND"),
        ("variables", "list_variables", {"path": WORK_NB}, None),
        ("variables-none", "list_variables", {"path": CHAIN_NB}, "KERNEL_NOT_RUNNING"),
        ("source-read", "notebook_overview", {"path": WORK_NB}, None),
        (
            "source-edit",
            "edit_cell_source",
            {
                "path": WORK_NB,
                "name": "setup",
                "expected_rev": _ref("source-read", "/cells/0/rev"),
                "old_string": "21",
                "new_string": "22",
            },
            None,
        ),
        (
            "source-edit-absent",
            "edit_cell_source",
            {
                "path": WORK_NB,
                "name": "setup",
                "expected_rev": _ref("source-edit", "/cell/rev"),
                "old_string": "no such text",
                "new_string": "x",
            },
            "OLD_STRING_COUNT",
        ),
        ("clear", "clear_outputs", {"path": WORK_NB, "names": ["setup"]}, None),
        ("clear-unknown", "clear_outputs", {"path": WORK_NB, "names": ["nope"]}, "CELL_NOT_FOUND"),
    ]


def kernel_tool_calls() -> list[Call]:
    """``list_kernels``, ``start_kernel`` and ``stop_kernel`` once ``workbench_calls`` ran
    ``WORK_NB``'s cells (on a kernel the server started for them): a kept kernel started,
    listed and stopped, every kernel stopped, and a run after the stop on a new kernel."""
    return [
        ("kernels", "list_kernels", {}, None),
        ("kernels-bad-argument", "list_kernels", {"path": WORK_NB}, "USAGE_ERROR"),
        ("kernel-start", "start_kernel", {"path": CHAIN_NB, "idle_timeout": 600}, None),
        ("kernel-start-missing", "start_kernel", {"path": "missing.ipynb"}, "FILE_NOT_FOUND"),
        ("kernels-two", "list_kernels", {}, None),
        ("kernel-stop", "stop_kernel", {"path": CHAIN_NB}, None),
        ("kernel-stop-again", "stop_kernel", {"path": CHAIN_NB}, "KERNEL_NOT_RUNNING"),
        ("kernel-stop-all", "stop_kernel", {"all": True}, None),
        ("kernel-stop-neither", "stop_kernel", {}, "USAGE_ERROR"),
        ("execute-after-stop", "execute_cells", {"path": WORK_NB, "names": ["setup"]}, None),
    ]


def workbench_calls(outside: Path) -> list[Call]:
    """Every ``jupyter-mcp`` tool on a success path and on an error path, in a working order."""
    cells = [
        {"source": "x = 21", "name": "setup"},
        {"source": "y = x * 2\nprint(y)", "name": "double"},
    ]
    chain = [  # more cells than a list of cells holds: run_stale's plan is cut
        {"source": f"x{i} = x{i - 1} + 1" if i else "x0 = 1", "name": f"c{i}"}
        for i in range(CELLS_LISTED + 50)
    ]
    return [
        ("create", "create_notebook", {"path": WORK_NB, "cells": cells}, None),
        ("create-exists", "create_notebook", {"path": TEXT_NB}, "FILE_EXISTS"),
        ("overview", "notebook_overview", {"path": WORK_NB}, None),
        ("overview-page", "notebook_overview", {"path": WORK_NB, "start": 1, "limit": 1}, None),
        ("overview-outside", "notebook_overview", {"path": str(outside)}, "PATH_NOT_ALLOWED"),
        (
            "overview-bad-argument",
            "notebook_overview",
            {"path": WORK_NB, "colour": 1},
            "USAGE_ERROR",
        ),
        ("read", "read_cells", {"path": TEXT_NB}, None),
        ("read-again", "read_cells", {"path": TEXT_NB, "start": 9, "stop": 10}, None),
        (
            "read-resend",
            "read_cells",
            {"path": TEXT_NB, "start": 9, "stop": 10, "resend_images": True},
            None,
        ),
        (
            "read-unknown",
            "read_cells",
            {"path": WORK_NB, "names": ["no-such-cell"]},
            "CELL_NOT_FOUND",
        ),
        ("add", "add_cell", {"path": WORK_NB, "source": "z = y + 1", "name": "plus-one"}, None),
        (
            "add-unknown-anchor",
            "add_cell",
            {"path": WORK_NB, "source": "1", "after": "no-such-cell", "expected_rev": NO_REV},
            "CELL_NOT_FOUND",
        ),
        (
            "update",
            "update_cell",
            {
                "path": WORK_NB,
                "name": "plus-one",
                "expected_rev": _ref("add", "/cell/rev"),
                "source": "z = y + 2",
            },
            None,
        ),
        (
            "update-unknown",
            "update_cell",
            {"path": WORK_NB, "name": "no-such-cell", "expected_rev": NO_REV, "source": "x"},
            "CELL_NOT_FOUND",
        ),
        (
            "update-stale-rev",
            "update_cell",
            {"path": WORK_NB, "name": "setup", "expected_rev": NO_REV, "source": "x = 1"},
            "REV_MISMATCH",
        ),
        (
            "move",
            "move_cell",
            {
                "path": WORK_NB,
                "name": "plus-one",
                "expected_rev": _ref("update", "/cell/rev"),
                "after": "double",
            },
            None,
        ),
        (
            "move-stale-rev",
            "move_cell",
            {"path": WORK_NB, "name": "setup", "expected_rev": NO_REV, "position": "end"},
            "REV_MISMATCH",
        ),
        (
            "remove",
            "remove_cell",
            {"path": WORK_NB, "name": "plus-one", "expected_rev": _ref("move", "/cell/rev")},
            None,
        ),
        (
            "remove-unknown",
            "remove_cell",
            {"path": WORK_NB, "name": "no-such-cell", "expected_rev": NO_REV},
            "CELL_NOT_FOUND",
        ),
        ("undo", "undo_last", {"path": WORK_NB}, None),
        ("undo-nothing", "undo_last", {"path": TEXT_NB}, "UNDO_EMPTY"),
        ("search", "search_cells", {"path": WORK_NB, "query": "x"}, None),
        (
            "search-bad-regex",
            "search_cells",
            {"path": WORK_NB, "query": "(", "regex": True},
            "USAGE_ERROR",
        ),
        ("summarize", "summarize_cells", {"path": WORK_NB}, None),
        (
            "summarize-unknown",
            "summarize_cells",
            {"path": WORK_NB, "names": ["no-such-cell"]},
            "CELL_NOT_FOUND",
        ),
        ("interrupt-no-kernel", "interrupt_kernel", {"path": WORK_NB}, "KERNEL_NOT_RUNNING"),
        (
            "inspect-no-kernel",
            "inspect_variable",
            {"path": WORK_NB, "name": "y"},
            "KERNEL_NOT_RUNNING",
        ),
        ("execute", "execute_cells", {"path": WORK_NB, "names": ["setup", "double"]}, None),
        (
            "execute-unknown",
            "execute_cells",
            {"path": WORK_NB, "names": ["no-such-cell"]},
            "CELL_NOT_FOUND",
        ),
        ("run-stale", "run_stale", {"path": WORK_NB}, None),
        ("run-background", "run_stale", {"path": WORK_NB, "background": True}, None),
        (
            "run-status",
            "run_status",
            {
                "path": WORK_NB,
                "run_id": {"$from": "run-background", "pointer": "/run_id"},
                "wait_s": 60,
            },
            None,
        ),
        ("run-status-unknown", "run_status", {"path": WORK_NB, "run_id": "no"}, "RUN_NOT_FOUND"),
        ("run-stale-missing", "run_stale", {"path": "missing.ipynb"}, "FILE_NOT_FOUND"),
        ("inspect", "inspect_variable", {"path": WORK_NB, "name": "y"}, None),
        (
            "inspect-unknown",
            "inspect_variable",
            {"path": WORK_NB, "name": "nope"},
            "VARIABLE_NOT_FOUND",
        ),
        ("interrupt", "interrupt_kernel", {"path": WORK_NB}, None),
        ("restart", "restart_kernel", {"path": WORK_NB}, None),
        ("restart-force", "restart_kernel", {"path": WORK_NB, "force": True}, None),
        ("restart-outside", "restart_kernel", {"path": str(outside)}, "PATH_NOT_ALLOWED"),
        ("chain-create", "create_notebook", {"path": CHAIN_NB, "cells": chain}, None),
        ("chain-plan", "run_stale", {"path": CHAIN_NB, "dry_run": True}, None),  # a cut list
        ("chain-read", "read_cells", {"path": CHAIN_NB, "budget": 1_000}, None),  # a cut list
        *output_calls(outside),
        ("unknown-tool", "no_such_tool", {"path": WORK_NB}, "USAGE_ERROR"),
        *new_tool_calls(),
        *kernel_tool_calls(),
    ]


def output_calls(outside: Path) -> list[Call]:
    """``read_notebook_output`` (the same tool in both servers): successes and errors."""
    return [
        ("outputs", "read_notebook_output", {"file_path": TEXT_NB, "cell_index": 9}, None),
        (
            "image",
            "read_notebook_output",
            {"file_path": TEXT_NB, "cell_index": 9, "output_index": 0},
            None,
        ),
        (
            "output-unknown-cell",
            "read_notebook_output",
            {"file_path": TEXT_NB, "cell_index": 99},
            "CELL_NOT_FOUND",
        ),
        (
            "output-outside",
            "read_notebook_output",
            {"file_path": str(outside), "cell_index": 0},
            "PATH_NOT_ALLOWED",
        ),
        (
            "output-old-argument",
            "read_notebook_output",
            {"path": TEXT_NB, "cell_index": 9},
            "USAGE_ERROR",
        ),
    ]


def _server(name: str, module: str, root: Path, calls: list[Call], cache: Path) -> dict[str, Any]:
    env = {
        key: value for key, value in os.environ.items() if not key.endswith(("API_KEY", "TOKEN"))
    }
    env.update(JUPYTER_JCLI_CACHE_DIR=str(cache), JUPYTER_MCP_DISABLE_SUMMARIES="1")
    return {
        "name": name,
        "command": sys.executable,
        "args": ["-m", module, "--root", str(root)],
        "cwd": str(root),
        "env": env,
        "calls": [
            {"label": label, "tool": tool, "arguments": args} for label, tool, args, _ in calls
        ],
    }


def _first_json(entry: dict[str, Any]) -> dict[str, Any]:
    first = entry["content"][0]
    assert first["type"] == "text", entry
    document: dict[str, Any] = json.loads(first["text"])
    return document


def check_as_the_model_sees_it(entry: dict[str, Any], expected: str | None) -> dict[str, Any]:
    """One call's report: no SDK rejection; a success whose text is the model's view of its
    structured content (the structured content itself for ``read_notebook_output``), or an
    ``isError`` whose first text is the error JSON with ``expected``'s code."""
    label = entry["label"]
    assert entry["threw"] is False, f"{label}: the TypeScript client rejected the result: {entry}"
    document = _first_json(entry)
    if expected is None:
        assert entry["is_error"] is False, (label, document)
        assert entry["has_structured_content"] is True, label
        structured = entry["structured_content"]
        if entry["tool"] == PROTOCOL_TOOL:
            assert structured == document, label
        else:
            assert model_view(structured) == document, label
            assert not empty_fields(document), (label, document)
        assert document["status"] == "ok", (label, document)
    else:
        assert entry["is_error"] is True, (label, document)
        assert entry["has_structured_content"] is False, label
        assert document["schema_version"] == 1 and document["status"] == "error", document
        assert document["code"] == expected, (label, document)
        assert isinstance(document["message"], str) and document["message"], document
    return document


@pytest.fixture(scope="module")
def sdk_dir() -> Path:
    return npm_install(SDK_PACKAGES)


def run_ts_client(sdk: Path, plan: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """Run the Node script on ``plan``; return its report."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the TypeScript client test needs Node.js >= 20")
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    env = dict(os.environ)
    env["JCLI_MCP_SDK_DIR"] = str(sdk)
    done = run_process([node, str(SCRIPT), str(plan_file)], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_typescript_sdk_client_sees_every_tools_results_and_errors(
    sdk_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    shutil.copyfile(NOTEBOOKS / TEXT_NB, root / TEXT_NB)
    outside = tmp_path / "elsewhere" / TEXT_NB
    outside.parent.mkdir()
    shutil.copyfile(NOTEBOOKS / TEXT_NB, outside)
    root = root.resolve()
    plans = {
        "jupyter-mcp": workbench_calls(outside),
        "jcli-notebook-output": output_calls(outside),
    }
    modules = {
        "jupyter-mcp": "jupyter_jcli.mcp.workbench",
        "jcli-notebook-output": readonly.__name__,
    }
    plan = {
        "servers": [
            _server(name, modules[name], root, calls, tmp_path / "cache")
            for name, calls in plans.items()
        ]
    }
    report = run_ts_client(sdk_dir, plan, tmp_path)
    by_server = {server["name"]: server for server in report["servers"]}
    declared = {
        "jupyter-mcp": sorted(tool.name for tool in workbench.tools()),
        "jcli-notebook-output": [readonly.tool().name],
    }
    for name, calls in plans.items():
        served = by_server[name]
        listed = sorted(tool["name"] for tool in served["tools"])
        assert listed == declared[name]
        assert all(tool["has_output_schema"] for tool in served["tools"])
        called = {tool for _, tool, _, expected in calls if expected is None}
        failed = {tool for _, tool, _, expected in calls if expected is not None}
        assert called == set(listed) and set(listed) <= failed, name
        documents = {
            entry["label"]: check_as_the_model_sees_it(entry, expected)
            for entry, (_, _, _, expected) in zip(served["calls"], calls, strict=True)
        }
        image = next(entry for entry in served["calls"] if entry["label"] == "image")
        assert [block["type"] for block in image["content"]] == ["text", "image"]
        assert image["content"][1]["mime_type"] == "image/png"
        assert documents["image"]["selected"]["delivered_as"] == "image_content"
    assert len(declared["jupyter-mcp"]) == 24
    workbench_documents = {
        entry["label"]: _first_json(entry) for entry in by_server["jupyter-mcp"]["calls"]
    }
    assert workbench_documents["inspect"]["repr"] == "42"  # the kernel really ran the cells
    stale = workbench_documents["update-stale-rev"]["details"]
    assert (stale["name"], stale["expected_rev"]) == ("setup", NO_REV)
    assert stale["rev"] == workbench_documents["overview"]["cells"][0]["rev"]
    cut = workbench_documents["chain-plan"]
    assert (len(cut["plan"]), cut["plan_count"]) == (CELLS_LISTED, CELLS_LISTED + 50)
    assert "notebook_overview" in cut["notice"]
    read = by_label(by_server["jupyter-mcp"], "chain-read")["structured_content"]
    shown = len(read["cells"])
    assert len(read["omitted_cells"]) == CELLS_LISTED
    assert read["omitted_cells_count"] == CELLS_LISTED + 50 - shown
    assert workbench_documents["chain-read"]["omitted"] == read["omitted_cells_count"]
    entries = {entry["label"]: entry for entry in by_server["jupyter-mcp"]["calls"]}
    check_the_arguments_took_effect(entries)
    check_the_kernel_tools(entries)


def by_label(server: dict[str, Any], label: str) -> dict[str, Any]:
    """The report of the call ``label`` of ``server``."""
    entry: dict[str, Any] = next(e for e in server["calls"] if e["label"] == label)
    return entry


def check_the_arguments_took_effect(entries: dict[str, dict[str, Any]]) -> None:
    """The optional arguments the SDK sent changed the validated results: an overview page
    (``start``/``limit``), images attached again (``resend_images``), a forced restart."""
    whole, page = (entries[label]["structured_content"] for label in ("overview", "overview-page"))
    assert [cell["index"] for cell in page["cells"]] == [1]
    assert page["cells"][0]["name"] == whole["cells"][1]["name"] == "double"
    assert page["start"] == 1 and page["cell_count"] == whole["cell_count"] == 2
    again, resent = entries["read-again"], entries["read-resend"]
    sent = [
        image["delivered_as"]
        for cell in again["structured_content"]["cells"]
        for image in cell["outputs"]["images"]
    ]
    assert sent == ["sent_before", "sent_before"]
    assert [block["type"] for block in again["content"]] == ["text"]
    assert [block["type"] for block in resent["content"]] == ["text", "image", "image"]
    restart, forced = (
        entries[label]["structured_content"] for label in ("restart", "restart-force")
    )
    assert forced["previous_epoch"] == restart["epoch"] != forced["epoch"]


def check_the_kernel_tools(entries: dict[str, dict[str, Any]]) -> None:
    """The kernel tools' validated results: ``j-cli -j kernel list|start|stop``'s fields
    (:func:`~jupyter_jcli.workbench.kernel_dict`), the server's own kernel and a kept one
    listed, each stopped once, and the run after the stop on a new kernel."""
    content = {label: entry.get("structured_content") for label, entry in entries.items()}
    (own,) = content["kernels"]["kernels"]
    assert own["notebook_path"].endswith(WORK_NB) and own["keep"] is False
    kept = content["kernel-start"]
    assert kept["started"] is True and kept["kernel"]["keep"] is True
    assert kept["kernel"]["idle_timeout_s"] == 600
    assert sorted(kept["kernel"]) == sorted(own)
    listed = {k["pid"] for k in content["kernels-two"]["kernels"]}
    assert listed == {own["pid"], kept["kernel"]["pid"]}
    assert [k["pid"] for k in content["kernel-stop"]["stopped"]] == [kept["kernel"]["pid"]]
    assert [k["pid"] for k in content["kernel-stop-all"]["stopped"]] == [own["pid"]]
    after = content["execute-after-stop"]
    assert after["kernel_started"] is True and after["kernel_restarted"] is False
    assert after["kernel"]["pid"] not in listed
