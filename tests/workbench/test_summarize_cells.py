"""summarize_cells: fallbacks without a model, and the model path against a local Messages API.

The local API is the one the summary tests use (``tests/summaries/fake_messages_api.py``),
imported from that folder, served here on loopback.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from wb_helpers import copy_fixture, make_notebook, tree_state

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.summaries import CACHE_FIELD, DEFAULT_MODEL, FALLBACK_MARK, summary_key
from jupyter_jcli.workbench import search_cells, summarize_cells, undo_last

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "summaries"))
from fake_messages_api import (
    CREDENTIAL_ENV,
    HANG_LIMIT,
    FakeMessagesAPI,
    error_reply,
    handler_for,
)

SORTING = "02.08-Sorting.ipynb"


@pytest.fixture(autouse=True)
def no_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key, profile, proxy or summary setting from the machine running the tests."""
    for name in CREDENTIAL_ENV:
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "anthropic-config"
    config.mkdir()
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(config))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    """A local Messages API with a dummy key pointed at it; shut down after the test."""
    state = FakeMessagesAPI()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(state))
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", state.url)
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=HANG_LIMIT)


def _cached_entries(path: Path) -> dict[int, Any]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {
        index: cell["metadata"]["jupyter_mcp"][CACHE_FIELD]
        for index, cell in enumerate(cells)
        if CACHE_FIELD in cell.get("metadata", {}).get("jupyter_mcp", {})
    }


def test_disabled_summaries_are_fallbacks_for_code_and_markdown_and_nothing_is_written(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_MCP_DISABLE_SUMMARIES", "1")
    path = copy_fixture("The_flavors_of_raw_cells.ipynb", work)
    before = tree_state(work)
    views = Document.load(path).cells

    outcome = summarize_cells(path)

    expected = [v for v in views if v.cell_type in ("code", "markdown")]
    assert len(expected) < len(views)  # the raw cells are left out
    assert [(c.index, c.name, c.rev) for c in outcome.cells] == [
        (v.index, v.name, v.rev) for v in expected
    ]
    for cell in outcome.cells:
        assert cell.source == "fallback" and not cell.cached
        assert cell.summary.fallback_reason in ("disabled", "empty_cell")
        for text in (cell.summary.tldr, cell.summary.description, cell.summary.output_summary):
            assert text.startswith(FALLBACK_MARK)
    assert outcome.written == ()
    assert tree_state(work) == before


def test_without_credentials_named_cells_fall_back_in_the_order_given(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    views = Document.load(path).cells
    second, first = views[13].name, views[2].name

    outcome = summarize_cells(path, names=[second, first, second])

    assert [c.name for c in outcome.cells] == [second, first]
    assert {c.summary.fallback_reason for c in outcome.cells} == {"no_credentials"}
    assert outcome.model == DEFAULT_MODEL
    document = outcome.to_dict()
    assert document["operation"] == "summarize_cells"
    assert document["counts"] == {"llm": 0, "fallback": 2, "cached": 0}
    assert document["cells"][0]["summary"]["tldr"].startswith(FALLBACK_MARK)


def test_an_unknown_cell_name_is_cell_not_found(work: Path) -> None:
    path = copy_fixture(SORTING, work)

    with pytest.raises(JcliError) as caught:
        summarize_cells(path, names=["no-such-cell"])

    assert caught.value.code == ErrorCode.CELL_NOT_FOUND


def test_model_summaries_are_cached_in_the_file_and_a_second_call_sends_nothing(
    work: Path, api: FakeMessagesAPI
) -> None:
    path = make_notebook(
        work,
        [
            ("markdown", "# Totals"),
            "prices = [3, 1, 2]\ntotal = sum(prices)",
            "print(total)",
            "",
        ],
    )

    first = summarize_cells(path, model="claude-test-model")

    assert len(api.requests) == 1
    assert api.requests[0].body["model"] == "claude-test-model"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    asked = {summary_key(cell) for cell in cells[:3]}
    assert set(api.requests[0].keys) == asked  # the empty cell is never sent
    assert [c.source for c in first.cells] == ["llm", "llm", "llm", "fallback"]
    assert first.cells[3].summary.fallback_reason == "empty_cell"
    assert not any(c.cached for c in first.cells)
    assert first.written == tuple(c.name for c in first.cells[:3])
    entries = _cached_entries(path)
    assert sorted(entries) == [0, 1, 2]
    for index, entry in entries.items():
        assert entry["hash"] == summary_key(cells[index])
        assert entry["tldr"] == f"Summary of {entry['hash']}"

    second = summarize_cells(path)

    assert len(api.requests) == 1
    assert [c.cached for c in second.cells] == [True, True, True, False]
    assert [c.summary.tldr for c in second.cells] == [c.summary.tldr for c in first.cells]
    assert second.written == ()
    assert second.to_dict()["counts"] == {"llm": 3, "fallback": 1, "cached": 3}


def test_the_cache_write_is_not_an_undoable_edit_and_search_finds_the_summaries(
    work: Path, api: FakeMessagesAPI
) -> None:
    path = make_notebook(work, ["revenue = 10", "cost = 4"])

    outcome = summarize_cells(path, names=[Document.load(path).cells[1].name])

    assert len(outcome.written) == 1
    with pytest.raises(JcliError) as caught:
        undo_last(path)
    assert caught.value.code == ErrorCode.UNDO_EMPTY
    key = outcome.cells[0].summary.key
    found = search_cells(path, f"Summary of {key}", fields=["summaries"])
    assert [(m.index, m.summary_part) for m in found.matches] == [(1, "tldr")]


def test_an_api_failure_falls_back_and_caches_nothing(work: Path, api: FakeMessagesAPI) -> None:
    api.respond = lambda _record: error_reply(400, "invalid_request_error")
    path = make_notebook(work, ["a = 1", "b = a + 1"])
    before = tree_state(work)

    outcome = summarize_cells(path)

    assert api.requests
    assert [c.summary.fallback_reason for c in outcome.cells] == ["api_error", "api_error"]
    assert outcome.written == ()
    assert tree_state(work) == before


def test_an_edited_cell_is_summarized_again_and_the_others_stay_cached(
    work: Path, api: FakeMessagesAPI
) -> None:
    path = make_notebook(work, ["a = 1", "b = a + 1"])
    summarize_cells(path)
    document = Document.load(path)
    document.update_cell(document.cells[1].name, expected_rev=document.cells[1].rev, source="b = 2")

    outcome = summarize_cells(path)

    assert len(api.requests) == 2
    assert api.requests[1].keys == [outcome.cells[1].summary.key]
    assert [c.cached for c in outcome.cells] == [True, False]
    assert outcome.written == (outcome.cells[1].name,)
