"""search_cells on real notebooks: sources, names, cached summaries, output text; bounds."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from wb_helpers import copy_fixture, make_notebook, tree_state

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.summaries import Summary, summary_key, with_cached_summary
from jupyter_jcli.workbench import SEARCH_FIELDS, _search, _search_pattern, search_cells

SORTING = "02.08-Sorting.ipynb"
ERRORS = "01.06-Errors-and-Debugging.ipynb"
MIXED = "text_outputs_and_images.ipynb"


def _cells(path: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return cells


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def test_a_substring_is_found_in_sources_with_its_line_column_and_snippet(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    expected = [i for i, c in enumerate(_cells(path)) if "np.argsort" in _source(c).lower()]

    outcome = search_cells(path, "NP.ARGSORT", fields=["sources"])

    assert sorted({m.index for m in outcome.matches}) == expected
    views = Document.load(path).cells
    for match in outcome.matches:
        view = views[match.index]
        assert (match.name, match.rev, match.cell_type) == (view.name, view.rev, view.cell_type)
        assert match.field == "sources" and match.match.lower() == "np.argsort"
        line = view.source.splitlines()[match.line - 1]
        assert line[match.column - 1 :].lower().startswith("np.argsort")
        assert match.match in match.snippet
    code = next(m for m in outcome.matches if m.index == 13)
    assert (code.line, code.column, code.snippet) == (2, 5, "i = np.argsort(x)")
    assert not outcome.truncated and outcome.cell_count == len(views)


def test_error_output_text_is_searched_without_its_terminal_colours(work: Path) -> None:
    path = copy_fixture(ERRORS, work)
    cells = _cells(path)
    with_error = [
        (i, k)
        for i, c in enumerate(cells)
        for k, o in enumerate(c.get("outputs", []))
        if o["output_type"] == "error" and o["evalue"] == "division by zero"
    ]
    assert len(with_error) == 4

    outcome = search_cells(path, "division by zero")

    assert [(m.index, m.output_index) for m in outcome.matches] == with_error
    assert {m.field for m in outcome.matches} == {"outputs"}
    assert all(m.snippet == "ZeroDivisionError: division by zero" for m in outcome.matches)
    assert search_cells(path, "[0;31m", fields=["outputs"]).matches == ()
    assert any(
        "\x1b" in "".join(o["traceback"])
        for c in cells
        for o in c.get("outputs", [])
        if "traceback" in o
    )


def test_names_are_searched_as_every_operation_computes_them(work: Path) -> None:
    path = copy_fixture(ERRORS, work)
    names = [view.name for view in Document.load(path).cells]

    outcome = search_cells(path, "func2", fields=["names"])

    assert [m.name for m in outcome.matches] == [n for n in names if "func2" in n]
    assert len(outcome.matches) >= 3
    assert all(m.field == "names" and m.line == 1 and m.snippet == m.name for m in outcome.matches)


def test_a_regex_finds_what_re_finds_line_by_line(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    pattern = r"np\.(?:arg)?sort\(\w+"
    expected = [
        (i, n + 1, found.group(0))
        for i, c in enumerate(_cells(path))
        for n, line in enumerate(_source(c).splitlines())
        for found in re.finditer(pattern, line, re.IGNORECASE)
    ]

    outcome = search_cells(path, pattern, regex=True, fields=["sources"], max_results=200)

    assert [(m.index, m.line, m.match) for m in outcome.matches] == expected
    assert len(expected) == 5


def test_fields_are_reported_in_a_fixed_order_within_each_cell(work: Path) -> None:
    path = make_notebook(work, ["# print values\nprint('print me')"])

    outcome = search_cells(path, "print", fields="outputs,names,sources")

    assert outcome.fields == ("sources", "names", "outputs")
    assert [(m.field, m.line, m.column) for m in outcome.matches] == [
        ("sources", 1, 3),
        ("sources", 2, 1),
        ("sources", 2, 8),
        ("names", 1, 1),
    ]


def test_results_are_bounded_and_say_so(work: Path) -> None:
    path = copy_fixture(SORTING, work)
    everything = search_cells(path, "sort", max_results=1000)
    assert len(everything.matches) > 10 and not everything.truncated

    bounded = search_cells(path, "sort", max_results=3)

    assert bounded.truncated
    assert bounded.matches == everything.matches[:3]
    assert bounded.to_dict()["match_count"] == 3


def test_the_snippet_keeps_the_asked_context_and_marks_cut_lines(work: Path) -> None:
    line = "a" * 50 + "NEEDLE" + "b" * 50
    path = make_notebook(work, [f"x = 1\ny = '{line}'"])

    match = search_cells(path, "needle", fields=["sources"], context_chars=5).matches[0]

    assert match.snippet == "…aaaaaNEEDLEbbbbb…"
    assert match.line == 2 and match.column == len("y = '") + 51


def test_only_valid_cached_summaries_are_searched(work: Path) -> None:
    path = make_notebook(work, ["total = 1", "other = 2"])
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = notebook["cells"]

    def summary(cell: dict[str, Any], text: str) -> Summary:
        return Summary(summary_key(cell), text, "Adds up sales.", "Nothing.", "llm", "m")

    cells[0] = with_cached_summary(cells[0], summary(cells[0], "Computes the revenue total"))
    stale = summary(cells[1], "Old revenue note")
    cells[1] = with_cached_summary(cells[1], stale)
    cells[1]["source"] = "other = 3"  # the cache no longer describes this content
    path.write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")

    outcome = search_cells(path, "revenue")

    assert [(m.index, m.field, m.summary_part) for m in outcome.matches] == [
        (0, "summaries", "tldr")
    ]
    assert [m.summary_part for m in search_cells(path, "sales", fields=["summaries"]).matches] == [
        "description"
    ]


def test_images_are_not_searched(work: Path) -> None:
    path = copy_fixture(MIXED, work)
    raw = path.read_text(encoding="utf-8")
    assert "iVBORw0KGgo" in raw  # PNG signature in base64

    assert search_cells(path, "iVBORw0KGgo").matches == ()
    assert [m.index for m in search_cells(path, "undefined_variable", fields=["outputs"]).matches]


def test_search_writes_nothing(work: Path, cache: Path) -> None:
    path = copy_fixture(ERRORS, work)
    before = tree_state(work)

    search_cells(path, "func", regex=True)
    search_cells(path, "func")

    assert tree_state(work) == before
    assert not cache.exists()


def test_text_past_the_bound_is_not_searched_and_reported(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "MAX_FIELD_CHARS", 40)
    path = make_notebook(work, ["x = 1\n" + "#" * 60 + "\nlate_marker = 2", "late_marker = 3"])

    outcome = search_cells(path, "late_marker", fields=["sources"])

    assert [m.index for m in outcome.matches] == [1]
    assert outcome.clipped == ((Document.load(path).cells[0].name, "sources"),)


@pytest.mark.parametrize(
    ("query", "regex", "reason"),
    [
        ("np.sort(", True, "invalid_regex"),
        ("[a-", True, "invalid_regex"),
        (r"(a+)+$", True, "nested_quantifier"),
        (r"(?:\w*\s?)*x", True, "nested_quantifier"),
        ("", False, "empty_query"),
        ("x" * 1001, False, "query_too_long"),
    ],
)
def test_bad_queries_are_usage_errors(work: Path, query: str, regex: bool, reason: str) -> None:
    path = copy_fixture(SORTING, work)

    with pytest.raises(JcliError) as caught:
        search_cells(path, query, regex=regex)

    assert caught.value.code == ErrorCode.USAGE_ERROR
    assert caught.value.details["reason"] == reason


def test_a_literal_that_looks_like_a_broken_regex_is_just_text(work: Path) -> None:
    path = copy_fixture(SORTING, work)

    outcome = search_cells(path, "np.sort(", fields=["sources"])

    assert outcome.matches and all(m.match.lower() == "np.sort(" for m in outcome.matches)


def test_a_regex_that_backtracks_past_its_deadline_is_stopped(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search_pattern, "REGEX_TIMEOUT", 1.0)
    path = make_notebook(work, ["s = '" + "a" * 5000 + "'"])

    with pytest.raises(JcliError) as caught:
        search_cells(path, ".*.*.*.*.*x", regex=True, fields=["sources"])

    assert caught.value.code == ErrorCode.USAGE_ERROR
    assert caught.value.details["reason"] == "regex_timeout"


@pytest.mark.parametrize(
    "arguments",
    [
        {"fields": ["sources", "cells"]},
        {"fields": []},
        {"max_results": 0},
        {"max_results": 1001},
        {"context_chars": -1},
    ],
)
def test_bad_arguments_are_usage_errors(work: Path, arguments: dict[str, Any]) -> None:
    path = copy_fixture(SORTING, work)

    with pytest.raises(JcliError) as caught:
        search_cells(path, "sort", **arguments)

    assert caught.value.code == ErrorCode.USAGE_ERROR


def test_the_json_document_carries_provenance(work: Path) -> None:
    path = copy_fixture(ERRORS, work)

    document = search_cells(path, "xmode").to_dict()

    assert document["operation"] == "search_cells"
    assert document["path"] == str(path)
    assert document["fields"] == list(SEARCH_FIELDS)
    assert document["cells"] == list(dict.fromkeys(m["name"] for m in document["matches"]))
    assert set(document["matches"][0]) >= {"index", "name", "rev", "field", "line", "snippet"}
