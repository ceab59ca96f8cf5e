"""The workbench server's pure plumbing: argument checks, progress values, image lifting."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from jupyter_jcli.errors import UsageError
from jupyter_jcli.mcp._arguments import check_arguments
from jupyter_jcli.mcp._kernel_tools import KERNEL_TOOLS
from jupyter_jcli.mcp._progress import HEARTBEAT_ENV, ProgressReporter, heartbeat_interval
from jupyter_jcli.mcp._workbench_calls import SENT_BEFORE, SentImages, lift_images
from jupyter_jcli.mcp._workbench_tools import DOCUMENT_TOOLS

SPECS = {spec.name: spec for spec in (*DOCUMENT_TOOLS, *KERNEL_TOOLS)}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _problems(tool: str, arguments: dict[str, Any]) -> list[str]:
    with pytest.raises(UsageError) as caught:
        check_arguments(tool, SPECS[tool].input_schema, arguments)
    assert caught.value.code == "USAGE_ERROR"
    problems: list[str] = caught.value.details["problems"]
    return problems


def test_defaults_are_filled_and_given_values_kept() -> None:
    checked = check_arguments(
        "read_cells", SPECS["read_cells"].input_schema, {"path": "a.ipynb", "budget": 10}
    )
    assert checked == {
        "path": "a.ipynb",
        "budget": 10,
        "include_images": True,
        "resend_images": False,
    }


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("read_cells", {}, ["path: required"]),
        ("read_cells", {"path": ""}, ["path: must have at least 1 character(s)"]),
        ("read_cells", {"path": "a", "budget": True}, ["budget: expected integer"]),
        ("read_cells", {"path": "a", "budget": 0}, ["budget: must be >= 1"]),
        ("read_cells", {"path": "a", "names": ["x", 3]}, ["names[1]: expected string"]),
        ("execute_cells", {"path": "a", "names": []}, ["names: must have at least 1 item(s)"]),
        ("execute_cells", {"path": "a", "names": ["x"], "timeout": 0}, ["timeout: must be > 0"]),
        ("add_cell", {"path": "a", "source": "", "position": "middle"}, ["position: must be one"]),
        ("notebook_overview", {"path": "a", "verbose": 1}, ["verbose: unknown argument"]),
        (
            "create_notebook",
            {"path": "a", "cells": [{"cell_type": "code"}]},
            ["cells[0].source: required"],
        ),
    ],
)
def test_each_violation_is_named(tool: str, arguments: dict[str, Any], expected: list[str]) -> None:
    problems = _problems(tool, arguments)
    assert len(problems) == len(expected)
    for problem, start in zip(problems, expected, strict=True):
        assert problem.startswith(start), problems


def test_timeout_accepts_integers_and_floats() -> None:
    schema = SPECS["execute_cells"].input_schema
    for timeout in (1, 2.5):
        checked = check_arguments(
            "execute_cells", schema, {"path": "a", "names": ["x"], "timeout": timeout}
        )
        assert checked["timeout"] == timeout


@pytest.mark.anyio
async def test_progress_strictly_increases_across_reports_and_heartbeats() -> None:
    sent: list[tuple[float, float | None, str | None]] = []

    async def send(progress: float, total: float | None, message: str | None) -> None:
        sent.append((progress, total, message))

    reporter = ProgressReporter(send, interval=10.0)
    await reporter.report(0, 3, "running a")
    await reporter._beat()
    await reporter._beat()
    await reporter.report(0.3, 3, "running a (5 s)")  # below the heartbeat: nudged up
    await reporter.report(1, 3, "running b")
    await reporter.report(1, 3, "running b again")  # equal: nudged up
    values = [value for value, _, _ in sent]
    assert all(b > a for a, b in itertools.pairwise(values)), values
    assert values[1] < 1 and values[2] < 1  # heartbeats stay below the next whole cell
    assert "elapsed" in (sent[1][2] or "")
    assert values[4] == 1


@pytest.mark.anyio
async def test_a_failing_progress_send_does_not_fail_the_operation() -> None:
    async def send(progress: float, total: float | None, message: str | None) -> None:
        raise ConnectionError("client gone")

    reporter = ProgressReporter(send, interval=10.0)
    await reporter.report(1, 2, "x")
    assert reporter.last == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 10.0), ("0.5", 0.5), ("60", 10.0), ("0", 10.0), ("-1", 10.0), ("soon", 10.0)],
)
def test_heartbeat_interval_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: float
) -> None:
    if value is None:
        monkeypatch.delenv(HEARTBEAT_ENV, raising=False)
    else:
        monkeypatch.setenv(HEARTBEAT_ENV, value)
    assert math.isclose(heartbeat_interval(), expected)


def test_lift_images_moves_raster_base64_out_and_keeps_the_rest() -> None:
    document = {
        "cells": [
            {
                "outputs": {
                    "images": [
                        {"mime_type": "image/png", "data": "iVBORw0KGgo=", "bytes": 8},
                        {"mime_type": "image/svg+xml", "data": "<svg/>"},
                    ]
                }
            },
            {"outputs": None},
            {"outputs": {"images": [{"mime_type": "image/jpeg", "data": "/9j/"}]}},
        ],
        "data": "not an image list",
    }
    reply = lift_images(document)
    assert [(image.mime_type, image.data) for image in reply.images] == [
        ("image/png", "iVBORw0KGgo="),
        ("image/jpeg", "/9j/"),
    ]
    first = reply.document["cells"][0]["outputs"]["images"]
    assert first[0] == {
        "mime_type": "image/png",
        "bytes": 8,
        "delivered_as": "image_content",
        "image": 0,
    }
    assert first[1] == {"mime_type": "image/svg+xml", "data": "<svg/>"}  # not a raster
    assert reply.document["cells"][2]["outputs"]["images"][0]["image"] == 1
    assert reply.document["data"] == "not an image list"
    assert document["cells"][0]["outputs"]["images"][0]["data"] == "iVBORw0KGgo="  # not mutated


def _plot_cell(name: str, rev: str, data: str) -> dict[str, object]:
    line = "image/png, 1200x1000 px, 80.0 KB; attached as image 0 (1024x853 px, image/png)"
    return {
        "name": name,
        "rev": rev,
        "outputs": {
            "text": f"[output 0: display_data, image/png]\n{line}",
            "images": [{"mime_type": "image/png", "data": data, "output_index": 0}],
        },
    }


def _read(*cells: dict[str, object]) -> dict[str, object]:
    return {"operation": "read_cells", "path": "/nb.ipynb", "cells": list(cells)}


def test_image_lines_name_the_position_of_their_image_in_the_whole_result() -> None:
    reply = lift_images(_read(_plot_cell("a", "r1", "AAAA"), _plot_cell("b", "r2", "BBBB")))
    texts = [cell["outputs"]["text"] for cell in reply.document["cells"]]
    assert "attached as image 0 (" in texts[0]
    assert "attached as image 1 (" in texts[1]
    assert [image.data for image in reply.images] == ["AAAA", "BBBB"]


def test_an_image_sent_before_in_the_session_is_referred_to_unless_resent() -> None:
    sent = SentImages()
    first = lift_images(_read(_plot_cell("a", "r1", "AAAA")), sent)
    again = lift_images(_read(_plot_cell("a", "r1", "AAAA"), _plot_cell("b", "r2", "BBBB")), sent)
    forced = lift_images(_read(_plot_cell("a", "r1", "AAAA")), sent, resend=True)
    edited = lift_images(_read(_plot_cell("a", "r9", "AAAA")), sent)
    assert len(first.images) == 1
    assert [image.data for image in again.images] == ["BBBB"]
    cell_a, cell_b = again.document["cells"]
    assert cell_a["outputs"]["images"][0]["delivered_as"] == SENT_BEFORE
    assert "image" not in cell_a["outputs"]["images"][0]
    assert "sent before in this session" in cell_a["outputs"]["text"]
    assert "attached as image 0 (" in cell_b["outputs"]["text"]  # numbered among those sent
    assert [image.data for image in forced.images] == ["AAAA"]
    assert [image.data for image in edited.images] == ["AAAA"]  # another rev: sent again
