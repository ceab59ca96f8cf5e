"""The public analysis API: caching, errors, graph views, JSON, renderers, lazy IPython."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jupyter_jcli.analysis import (
    CellInput,
    analyze_cell,
    build_graph,
    is_history_name,
    stale_after_edit,
    to_dot,
    to_mermaid,
)
from jupyter_jcli.errors import AnalysisError, ErrorCode


def _nb(*sources: str) -> list[CellInput]:
    return [CellInput(key=f"k{i}", cell_type="code", source=s) for i, s in enumerate(sources)]


def test_analysis_is_cached_by_source() -> None:
    first = analyze_cell("cached_name = 41 + 1")
    assert analyze_cell("cached_name = 41 + 1") is first
    assert analyze_cell("cached_name = 41 + 2") is not first


def test_markdown_and_raw_cells_have_no_effects() -> None:
    for kind in ("markdown", "raw"):
        eff = analyze_cell("x = y", kind)
        assert eff.cell_type == kind
        assert not (eff.defines or eff.uses or eff.mutates)


def test_a_cell_without_a_type_is_refused_with_its_code() -> None:
    with pytest.raises(AnalysisError) as exc:
        analyze_cell("x = 1", "")
    assert exc.value.code == ErrorCode.INVALID_CELL_TYPE


def test_a_cell_of_a_type_nbformat_allows_but_we_do_not_know_is_opaque() -> None:
    effects = analyze_cell("x = 1", "heading")  # nbformat 4's unrecognized_cell
    assert effects.cell_type == "heading"
    assert not effects.defines and not effects.uses
    graph = build_graph([CellInput("a", "code", "x = 1"), CellInput("b", "sql", "select x"),
                         CellInput("c", "code", "print(x)")])  # fmt: skip
    assert graph.edges == ((0, 2),)


def test_duplicate_keys_are_refused() -> None:
    cells = [CellInput("same", "code", "a = 1"), CellInput("same", "code", "b = 2")]
    with pytest.raises(AnalysisError) as exc:
        build_graph(cells)
    assert exc.value.code == ErrorCode.NAME_CONFLICT


def test_unknown_keys_are_refused() -> None:
    graph = build_graph(_nb("a = 1"))
    with pytest.raises(AnalysisError) as exc:
        graph.node("nope")
    assert exc.value.code == ErrorCode.CELL_NOT_FOUND
    with pytest.raises(AnalysisError) as exc:
        stale_after_edit(graph, ["nope"])
    assert exc.value.code == ErrorCode.CELL_NOT_FOUND


def test_syntax_error_location_is_given_in_cell_lines() -> None:
    eff = analyze_cell("a = 1\nb = (\n")
    assert eff.syntax_error is not None
    assert eff.syntax_error.line == 2
    magic = analyze_cell("%%time\na = 1\nb = )")
    assert magic.syntax_error is not None
    assert magic.syntax_error.line == 3


def test_parents_and_children_by_key() -> None:
    graph = build_graph(_nb("a = 1", "b = 2", "c = a + b", "d = c"))
    assert graph.parents("k2") == ["k0", "k1"]
    assert graph.children("k0") == ["k2"]
    assert graph.children("k3") == []
    assert graph.edge_names[(0, 2)] == {"a"}
    assert len(graph) == 4


def test_to_dict_is_json_with_keys_and_findings() -> None:
    graph = build_graph(_nb("import numpy as np", "x = np.ones(3)", "print(y)", "x.fill(0)"))
    doc = json.loads(json.dumps(graph.to_dict()))
    assert [c["key"] for c in doc["cells"]] == ["k0", "k1", "k2", "k3"]
    assert doc["cells"][1]["parents"] == ["k0"]
    assert doc["cells"][1]["defines"] == ["x"]
    assert doc["cells"][3]["mutates"] == ["x"]
    assert {
        "parent": "k0",
        "child": "k1",
        "parent_index": 0,
        "child_index": 1,
        "names": ["np"],
    } in doc["edges"]
    assert doc["findings"] == [
        {
            "kind": "unresolved_name",
            "cell": "k2",
            "index": 2,
            "names": ["y"],
            "message": doc["findings"][0]["message"],
            "line": None,
        }
    ]


def test_stale_after_edit_with_the_graph_before_the_edit() -> None:
    before = build_graph(_nb("y = 1\nz = 2", "print(y)", "print(z)"))
    after = build_graph(_nb("z = 2", "print(y)", "print(z)"))
    # cell k1 read y from k0; after the edit it reads nothing from k0 but must still re-run
    assert stale_after_edit(after, ["k0"]) == ["k0", "k2"]
    assert stale_after_edit(after, ["k0"], before=before) == ["k0", "k1", "k2"]


def test_mermaid_and_dot_render_nodes_edges_and_escape_names() -> None:
    cells = [
        CellInput('load "data"', "code", "df = 1"),
        CellInput("notes", "markdown", "# notes"),
        CellInput("use", "code", "print(df)"),
        CellInput("broken", "code", "x = ("),
        CellInput("shell", "code", "%%bash\nls"),
    ]
    graph = build_graph(cells)
    mermaid = to_mermaid(graph)
    assert mermaid.startswith("flowchart TD\n")
    assert 'c0["load #34;data#34;"]' in mermaid
    assert 'c0 -->|"df"| c2' in mermaid
    assert "c1[" not in mermaid  # markdown cells are not drawn
    assert "class c3 error" in mermaid
    assert "class c4 opaque" in mermaid
    dot = to_dot(graph)
    assert dot.startswith("digraph notebook {")
    assert 'c0 [label="load \\"data\\""];' in dot
    assert 'c0 -> c2 [label="df"];' in dot
    assert 'c3 [label="broken", color=red];' in dot
    assert 'c4 [label="shell", style=dashed];' in dot
    assert dot.rstrip().endswith("}")


def test_edge_labels_are_capped() -> None:
    graph = build_graph(_nb("a = b = c = d = e = f = 1", "print(a, b, c, d, e, f)"))
    assert 'c0 -->|"a, b, c, d, +2"| c1' in to_mermaid(graph)


def test_history_names() -> None:
    assert all(
        is_history_name(n) for n in ["_", "__", "___", "_7", "_i", "_ii", "_i7", "Out", "In"]
    )
    assert not any(is_history_name(n) for n in ["_x", "____", "out", "_private", "i"])


def test_plain_python_never_imports_ipython() -> None:
    code = (
        "import sys\n"
        "from jupyter_jcli.analysis import CellInput, build_graph\n"
        "g = build_graph([CellInput('a', 'code', 'import os\\nx = [i for i in range(3)]'),\n"
        "                 CellInput('b', 'code', 'print(x, os.sep)')])\n"
        "assert g.edges == ((0, 1),)\n"
        "print('IPython' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"


def test_a_lone_surrogate_in_a_comment_or_string_does_not_stop_the_analysis() -> None:
    effects = analyze_cell("x = 'a\udfff'  # \ud800\ny = x")

    assert effects.syntax_error is None
    assert effects.defines == frozenset({"x", "y"})
