"""summarize_cells against a local Messages API: batching, parsing, cache, failures."""

from __future__ import annotations

import json
import socket
from typing import TYPE_CHECKING, Any

import pytest
from fake_messages_api import (
    NOTEBOOKS,
    FakeMessagesAPI,
    Recorded,
    Reply,
    echo_summaries,
    error_reply,
    message_reply,
)

from jupyter_jcli.errors import ErrorCode, UsageError
from jupyter_jcli.notebook.io import read_notebook
from jupyter_jcli.summaries import (
    DEFAULT_MODEL,
    FALLBACK_MARK,
    TLDR_MAX,
    Summary,
    summarize_cells,
    summary_key,
    with_cached_summary,
)
from jupyter_jcli.summaries._prompt import BATCH_CELLS

if TYPE_CHECKING:
    import anthropic


def _cells(name: str = "02.08-Sorting.ipynb", count: int | None = None) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = read_notebook(NOTEBOOKS / name)["cells"]
    return cells if count is None else cells[:count]


def _joined(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _client(api: FakeMessagesAPI, **options: Any) -> anthropic.Anthropic:
    """A client of the local Messages API (the SDK is imported here, not at collection: it
    costs seconds of CPU in every pytest-xdist worker that never runs these tests)."""
    import anthropic

    return anthropic.Anthropic(api_key="sk-ant-explicit", base_url=api.url, **options)


def _assert_fallback(summary: Summary, reason: str) -> None:
    assert summary.source == "fallback"
    assert summary.fallback_reason == reason
    assert summary.model is None
    for text in (summary.tldr, summary.description, summary.output_summary):
        assert text.startswith(FALLBACK_MARK)


def test_one_request_summarizes_many_cells_with_the_default_model(
    credentials: FakeMessagesAPI,
) -> None:
    cells = _cells(count=20)
    result = summarize_cells(cells)

    assert len(credentials.requests) == 1
    request = credentials.requests[0]
    assert request.path == "/v1/messages"
    assert request.body["model"] == DEFAULT_MODEL == "claude-haiku-4-5"
    assert "sk-ant-test-dummy" in request.headers.get("x-api-key", "") + request.headers.get(
        "authorization", ""
    )
    assert "JSON" in request.body["system"]
    keys = [summary_key(cell) for cell in cells]
    assert sorted(request.keys) == sorted(set(keys))
    payload = json.loads(request.user_text[request.user_text.index("[") :])
    assert [item["source"] for item in payload] == [_joined(cell) for cell in cells]
    assert list(result) == list(dict.fromkeys(keys))
    for key, summary in result.items():
        assert summary.source == "llm"
        assert summary.tldr == f"Summary of {key}"
        assert summary.description == f"The model describes cell {key}. In two sentences."
        assert summary.model == "claude-haiku-4-5-20251001"
        assert summary.cached is False
        assert summary.fallback_reason is None


def test_the_prompt_carries_condensed_outputs_and_clips_long_sources(
    credentials: FakeMessagesAPI,
) -> None:
    long_source = "x = 1\n" * 5_000
    cells = [
        {"cell_type": "code", "source": long_source, "metadata": {}, "outputs": []},
        {
            "cell_type": "code",
            "source": "print('hi')",
            "metadata": {},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "\x1b[31mred 42\n"}],
        },
    ]
    summarize_cells(cells)
    (request,) = credentials.requests
    items = json.loads(request.user_text[request.user_text.index("[") :])
    assert len(items[0]["source"]) < len(long_source)
    assert "characters cut" in items[0]["source"]
    assert items[0]["source"].startswith("x = 1\n")
    assert "red 42" in items[1]["outputs"]
    assert "\x1b" not in items[1]["outputs"]


def test_model_comes_from_the_argument_then_the_environment(
    credentials: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    cells = _cells(count=3)
    monkeypatch.setenv("JUPYTER_MCP_SUMMARY_MODEL", "claude-from-env")
    summarize_cells(cells)
    summarize_cells(cells, model="claude-from-argument")
    assert [r.body["model"] for r in credentials.requests] == [
        "claude-from-env",
        "claude-from-argument",
    ]


def test_cached_summaries_are_never_requested_again(credentials: FakeMessagesAPI) -> None:
    cells = _cells(count=12)
    first = summarize_cells(cells)
    cached_cells = [with_cached_summary(cell, first[summary_key(cell)]) for cell in cells]

    second = summarize_cells(cached_cells)
    assert len(credentials.requests) == 1
    assert all(summary.cached and summary.source == "llm" for summary in second.values())
    assert [s.tldr for s in second.values()] == [s.tldr for s in first.values()]

    edited = [dict(cell) for cell in cached_cells]
    edited[2]["source"] = "L = [2, 1]\nsorted(L)"
    third = summarize_cells(edited)
    assert len(credentials.requests) == 2
    assert credentials.requests[1].keys == [summary_key(edited[2])]
    assert third[summary_key(edited[2])].cached is False
    assert sum(summary.cached for summary in third.values()) == len(third) - 1


def test_an_explicit_client_is_used_and_left_open(api: FakeMessagesAPI) -> None:
    client = _client(api)
    summarize_cells(_cells(count=4), client=client)
    summarize_cells([*_cells(count=4)[1:], {"cell_type": "code", "source": "1 + 1"}], client=client)
    assert len(api.requests) == 2
    assert "sk-ant-explicit" in api.requests[0].headers.get("x-api-key", "") + api.requests[
        0
    ].headers.get("authorization", "")
    assert not client.is_closed()
    client.close()


def test_a_server_error_falls_back_with_the_status_and_stops_later_requests(
    credentials: FakeMessagesAPI,
) -> None:
    credentials.respond = lambda record: error_reply(500)
    cells = [{"cell_type": "code", "source": f"value_{i} = {i}"} for i in range(BATCH_CELLS + 5)]
    result = summarize_cells(cells)

    # the SDK retries once (CLIENT_MAX_RETRIES); the second batch is not attempted
    assert len(credentials.requests) == 2
    assert credentials.requests[0].keys == credentials.requests[1].keys
    assert len(result) == len(cells)
    for summary in result.values():
        _assert_fallback(summary, "api_error")
        assert summary.fallback_detail is not None and "500" in summary.fallback_detail


def test_a_timeout_falls_back_without_hanging(api: FakeMessagesAPI) -> None:
    api.respond = lambda record: None
    cells = _cells(count=5)
    result = summarize_cells(cells, client=_client(api, max_retries=0), timeout=0.3)
    assert len(api.requests) == 1
    for summary in result.values():
        _assert_fallback(summary, "timeout")


def test_an_unreachable_api_falls_back_as_connection_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    result = summarize_cells(_cells(count=3), timeout=5)
    for summary in result.values():
        _assert_fallback(summary, "connection_error")


def test_a_prose_answer_falls_back_per_batch_and_later_batches_are_still_tried(
    credentials: FakeMessagesAPI,
) -> None:
    answers = iter([message_reply("These cells look great to me!"), None])

    def respond(record: Recorded) -> Reply:
        return next(answers) or echo_summaries(record)

    credentials.respond = respond
    cells = [{"cell_type": "code", "source": f"value_{i} = {i}"} for i in range(BATCH_CELLS + 3)]
    result = summarize_cells(cells)
    assert len(credentials.requests) == 2
    first, second = credentials.requests[0].keys, credentials.requests[1].keys
    assert len(first) == BATCH_CELLS and len(second) == 3
    for key in first:
        _assert_fallback(result[key], "malformed_response")
    for key in second:
        assert result[key].source == "llm"


@pytest.mark.parametrize("body", [b"<html>", b'{"foo": 1}', b"[]"], ids=["html", "object", "list"])
def test_a_body_that_is_not_a_message_falls_back(credentials: FakeMessagesAPI, body: bytes) -> None:
    credentials.respond = lambda record: (200, {"content-type": "application/json"}, body)
    result = summarize_cells(_cells(count=3))
    assert len(result) == 3
    for summary in result.values():
        _assert_fallback(summary, "malformed_response")
        assert summary.fallback_detail


def test_missing_and_malformed_entries_fall_back_for_their_cells_only(
    credentials: FakeMessagesAPI,
) -> None:
    cells = [{"cell_type": "code", "source": f"value_{i} = {i}"} for i in range(5)]
    keys = [summary_key(cell) for cell in cells]
    good = {"tldr": "Sets a value", "description": "d", "output_summary": "No outputs."}
    answer = {
        keys[0]: good,
        keys[1]: "not an object",
        keys[2]: {"tldr": "", "description": "d", "output_summary": "o"},
        keys[3]: {"tldr": "* Looks like a fallback " + "x" * 300, "description": "d"},
        "unknown-key": good,
    }
    credentials.respond = lambda record: message_reply(
        "Here you go:\n```json\n" + json.dumps(answer) + "\n```"
    )
    result = summarize_cells(cells)
    assert result[keys[0]].source == "llm" and result[keys[0]].tldr == "Sets a value"
    for key in keys[1:]:
        _assert_fallback(result[key], "missing_entry")
    assert "unknown-key" not in result


def test_model_texts_are_bounded_and_never_carry_the_fallback_mark(
    credentials: FakeMessagesAPI,
) -> None:
    cell = {"cell_type": "markdown", "source": "# Title"}
    key = summary_key(cell)
    entry = {"tldr": "** " + "long " * 80, "description": "a\n\nb", "output_summary": ""}
    credentials.respond = lambda record: message_reply(json.dumps({key: entry}))
    summary = summarize_cells([cell])[key]
    assert summary.source == "llm"
    assert len(summary.tldr) <= TLDR_MAX
    assert not summary.tldr.startswith("*")
    assert summary.description == "a b"
    assert summary.output_summary == ""


@pytest.mark.parametrize("config", ["empty-config-dir", "no-config-dir"])
def test_without_credentials_no_request_is_made(
    api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, config: str
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    if config == "no-config-dir":  # the SDK looks in ~/.config/anthropic
        monkeypatch.delenv("ANTHROPIC_CONFIG_DIR")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
    result = summarize_cells(_cells(count=6))
    assert api.requests == []
    assert len(result) == 6
    for summary in result.values():
        _assert_fallback(summary, "no_credentials")


def test_disabled_summaries_make_no_request(
    credentials: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_MCP_DISABLE_SUMMARIES", "1")
    result = summarize_cells(_cells(count=6))
    assert credentials.requests == []
    for summary in result.values():
        _assert_fallback(summary, "disabled")


def test_the_request_budget_bounds_the_requests(credentials: FakeMessagesAPI) -> None:
    cells = [{"cell_type": "code", "source": f"value_{i} = {i}"} for i in range(BATCH_CELLS * 3)]
    result = summarize_cells(cells, max_requests=2)
    assert len(credentials.requests) == 2
    sources = [summary.source for summary in result.values()]
    assert sources == ["llm"] * (BATCH_CELLS * 2) + ["fallback"] * BATCH_CELLS
    _assert_fallback(list(result.values())[-1], "request_limit")


def test_empty_and_duplicate_cells_are_not_requested(credentials: FakeMessagesAPI) -> None:
    cells = [
        {"cell_type": "code", "source": "", "outputs": []},
        {"cell_type": "code", "source": "x = 1"},
        {"cell_type": "code", "source": ["x = ", "1"], "execution_count": 7},
    ]
    result = summarize_cells(cells)
    assert len(result) == 2
    (request,) = credentials.requests
    assert request.keys == [summary_key(cells[1])]
    _assert_fallback(result[summary_key(cells[0])], "empty_cell")


@pytest.mark.parametrize(
    ("argument", "value"), [("timeout", 0), ("timeout", -1.0), ("max_requests", 0)]
)
def test_invalid_limits_are_usage_errors(argument: str, value: float) -> None:
    with pytest.raises(UsageError) as caught:
        summarize_cells([], **{argument: value})
    assert caught.value.code == ErrorCode.USAGE_ERROR
