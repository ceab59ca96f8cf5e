"""A code cell past ``MAX_ANALYZED_SOURCE`` characters is not parsed: it is opaque, a wildcard
writer with unknown reads, and lint reports it ``too_large``."""

from __future__ import annotations

import json

import pytest

from jupyter_jcli.analysis import MAX_ANALYZED_SOURCE, CellInput, analyze_cell, build_graph

pytestmark = pytest.mark.timeout(60)  # a bound, not a timing assertion


def _huge(lines: int = 200_000) -> str:
    """Real Python over the cap: ``x0 = 0`` ... (about 2 MB)."""
    source = "\n".join(f"x{i % 1000} = {i}" for i in range(lines))
    assert len(source) > MAX_ANALYZED_SOURCE
    return source


def test_a_cell_over_the_cap_is_too_large_opaque_and_a_wildcard_writer() -> None:
    effects = analyze_cell(_huge())
    assert effects.too_large
    assert effects.is_opaque and effects.is_wildcard
    assert effects.defines == frozenset() and effects.uses == frozenset()
    assert effects.syntax_error is None


def test_a_cell_at_the_cap_is_analysed() -> None:
    source = "y = 1\n" + "#" * (MAX_ANALYZED_SOURCE - len("y = 1\n"))
    effects = analyze_cell(source)
    assert not effects.too_large
    assert effects.defines == frozenset({"y"})


def test_the_graph_binds_unknown_names_to_it_and_lint_reports_too_large() -> None:
    cells = [
        CellInput(key="setup", cell_type="code", source="a = 1"),
        CellInput(key="huge", cell_type="code", source=_huge()),
        CellInput(key="after", cell_type="code", source="print(x5, a)"),
    ]
    graph = build_graph(cells)
    assert graph.parents("after") == ["setup", "huge"]  # x5: only the wildcard can bind it
    assert graph.parents("huge") == []
    findings = [(f.kind, f.cell) for f in graph.findings]
    assert ("too_large", "huge") in findings
    assert ("wildcard_writer", "huge") in findings
    doc = json.loads(json.dumps(graph.to_dict()))
    assert [c["too_large"] for c in doc["cells"]] == [False, True, False]
