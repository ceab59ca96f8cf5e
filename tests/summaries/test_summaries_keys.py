"""Content keys and the pure metadata cache functions."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from jupyter_jcli.summaries import (
    SUMMARY_KEY_LENGTH,
    Summary,
    cache_entry,
    cached_summary,
    fallback_summary,
    summary_key,
    with_cached_summary,
)

CELL: dict[str, Any] = {
    "cell_type": "code",
    "execution_count": 3,
    "id": "abc",
    "metadata": {"jupyter_mcp": {"name": "plot"}, "tags": ["keep"]},
    "source": ["import numpy as np\n", "np.arange(3)"],
    "outputs": [
        {
            "output_type": "execute_result",
            "execution_count": 3,
            "metadata": {},
            "data": {"text/plain": ["array([0, 1, 2])"]},
        },
        {"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]},
    ],
}


def _variant(**changes: Any) -> dict[str, Any]:
    cell = copy.deepcopy(CELL)
    cell.update(changes)
    return cell


def _model_summary(cell: dict[str, Any], tldr: str = "Makes an array") -> Summary:
    return Summary(
        key=summary_key(cell),
        tldr=tldr,
        description="Imports numpy and evaluates np.arange(3).",
        output_summary="Shows array([0, 1, 2]).",
        source="llm",
        model="claude-haiku-4-5",
    )


def test_a_key_is_short_lowercase_hex() -> None:
    assert re.fullmatch(f"[0-9a-f]{{{SUMMARY_KEY_LENGTH}}}", summary_key(CELL))


def test_the_key_ignores_execution_counts_metadata_ids_and_line_splitting() -> None:
    same = _variant(execution_count=99, id="other", metadata={})
    same["source"] = "import numpy as np\nnp.arange(3)"
    same["outputs"][0]["execution_count"] = 99
    same["outputs"][0]["metadata"] = {"image/png": {"width": 10}}
    same["outputs"][0]["data"]["text/plain"] = "array([0, 1, 2])"
    same["outputs"][1]["text"] = "a\nb\n"
    same["outputs"][1]["transient"] = {"display_id": "x"}
    assert summary_key(same) == summary_key(CELL)


@pytest.mark.parametrize(
    "change",
    [
        {"source": "import numpy as np\nnp.arange(4)"},
        {"cell_type": "markdown"},
        {"outputs": []},
        {"outputs": [{"output_type": "stream", "name": "stderr", "text": "a\nb\n"}]},
    ],
    ids=["source", "type", "no-outputs", "other-stream"],
)
def test_the_key_changes_with_type_source_and_outputs(change: dict[str, Any]) -> None:
    assert summary_key(_variant(**change)) != summary_key(CELL)


def test_the_key_tolerates_malformed_cells() -> None:
    weird = {"cell_type": None, "source": 12, "outputs": ["x", {"data": "y"}, 3]}
    assert len(summary_key(weird)) == SUMMARY_KEY_LENGTH
    assert summary_key({}) == summary_key({"cell_type": "", "source": "", "outputs": []})


def test_a_cached_summary_is_read_back_while_the_content_is_unchanged() -> None:
    summary = _model_summary(CELL)
    cached_cell = with_cached_summary(CELL, summary)
    entry = cached_cell["metadata"]["jupyter_mcp"]["summary"]
    assert entry == {
        "hash": summary.key,
        "tldr": summary.tldr,
        "description": summary.description,
        "output_summary": summary.output_summary,
        "model": "claude-haiku-4-5",
    }
    assert cached_cell["metadata"]["jupyter_mcp"]["name"] == "plot"
    assert cached_cell["metadata"]["tags"] == ["keep"]
    assert "summary" not in CELL["metadata"]["jupyter_mcp"]  # input untouched

    back = cached_summary(cached_cell)
    assert back is not None
    assert (back.tldr, back.description, back.output_summary) == (
        summary.tldr,
        summary.description,
        summary.output_summary,
    )
    assert back.cached and back.source == "llm" and back.model == "claude-haiku-4-5"
    rerun = copy.deepcopy(cached_cell)
    rerun["execution_count"] = 42
    assert cached_summary(rerun) is not None


def test_a_cached_summary_is_ignored_once_the_content_changes() -> None:
    cached_cell = with_cached_summary(CELL, _model_summary(CELL))
    edited = copy.deepcopy(cached_cell)
    edited["source"] = "np.arange(5)"
    assert cached_summary(edited) is None
    new_outputs = copy.deepcopy(cached_cell)
    new_outputs["outputs"][1]["text"] = "c\n"
    assert cached_summary(new_outputs) is None


@pytest.mark.parametrize(
    "entry",
    [
        "text",
        {"tldr": "x", "description": "d", "output_summary": "o"},
        {"hash": "KEY", "tldr": "", "description": "d", "output_summary": "o"},
        {"hash": "KEY", "tldr": "x", "description": 3, "output_summary": "o"},
        {"hash": "KEY", "tldr": "x", "description": "d"},
    ],
    ids=["not-object", "no-hash", "empty-tldr", "bad-description", "no-output-summary"],
)
def test_malformed_cache_entries_are_ignored(entry: Any) -> None:
    cell = copy.deepcopy(CELL)
    if isinstance(entry, dict) and entry.get("hash") == "KEY":
        entry["hash"] = summary_key(cell)
    cell["metadata"]["jupyter_mcp"]["summary"] = entry
    assert cached_summary(cell) is None


def test_oversized_cached_texts_are_bounded_on_read() -> None:
    cell = copy.deepcopy(CELL)
    cell["metadata"]["jupyter_mcp"]["summary"] = {
        "hash": summary_key(cell),
        "tldr": "word " * 100,
        "description": "line\n" * 500,
        "output_summary": "o",
        "model": 5,
    }
    summary = cached_summary(cell)
    assert summary is not None
    assert len(summary.tldr) <= 100 and "\n" not in summary.description
    assert summary.model is None


def test_fallbacks_and_summaries_of_other_content_are_not_cached() -> None:
    fallback = fallback_summary(CELL, reason="disabled")
    assert cache_entry(fallback) is None
    assert with_cached_summary(CELL, fallback) == CELL
    other = _model_summary(_variant(source="x = 1"))
    assert with_cached_summary(CELL, other) == CELL


def test_a_cell_without_metadata_gets_it() -> None:
    cell = {"cell_type": "markdown", "source": "# Title"}
    cached_cell = with_cached_summary(cell, _model_summary(cell, tldr="Title"))
    assert cached_cell["metadata"]["jupyter_mcp"]["summary"]["tldr"] == "Title"
    assert "metadata" not in cell
