"""Text renderings of the DAG for people: Mermaid and Graphviz DOT. Pure string builders."""

from __future__ import annotations

from jupyter_jcli.analysis._graph import NotebookGraph

__all__ = ["to_dot", "to_mermaid"]

_MAX_LABEL_NAMES = 4


def _names_label(names: frozenset[str]) -> str:
    ordered = sorted(names)
    extra = len(ordered) - _MAX_LABEL_NAMES
    shown = ", ".join(ordered[:_MAX_LABEL_NAMES])
    return f"{shown}, +{extra}" if extra > 0 else shown


def _mermaid_text(text: str) -> str:
    return "".join(f"#{ord(ch)};" if ch in '"#<>|[]{}()' or ch == "\n" else ch for ch in text)


def to_mermaid(graph: NotebookGraph) -> str:
    """The code cells and edges as a Mermaid ``flowchart TD`` (https://mermaid.js.org).

    Nodes are ``c<index>`` labelled with the cell key; edges carry the names that flow along
    them (at most four, then ``+N``). Cells with a syntax error get the ``error`` class,
    opaque and wildcard cells the ``opaque`` class.
    """
    lines = ["flowchart TD"]
    errors: list[str] = []
    opaque: list[str] = []
    for n in graph.cells:
        if n.cell_type != "code":
            continue
        lines.append(f'    c{n.index}["{_mermaid_text(n.key)}"]')
        if n.effects.syntax_error is not None:
            errors.append(f"c{n.index}")
        elif n.effects.is_opaque or n.effects.is_wildcard:
            opaque.append(f"c{n.index}")
    for p, c in graph.edges:
        label = _mermaid_text(_names_label(graph.edge_names[(p, c)]))
        lines.append(f'    c{p} -->|"{label}"| c{c}')
    if errors:
        lines.append("    classDef error stroke:#c00,stroke-width:2px")
        lines.append(f"    class {','.join(errors)} error")
    if opaque:
        lines.append("    classDef opaque stroke-dasharray:4 3")
        lines.append(f"    class {','.join(opaque)} opaque")
    return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_dot(graph: NotebookGraph) -> str:
    """The code cells and edges as a Graphviz DOT digraph (https://graphviz.org/doc/info/lang.html).

    Nodes are ``c<index>`` labelled with the cell key; edges carry the names that flow along
    them. Cells with a syntax error are drawn red, opaque and wildcard cells dashed.
    """
    lines = ["digraph notebook {", "    rankdir=TB;", "    node [shape=box];"]
    for n in graph.cells:
        if n.cell_type != "code":
            continue
        attrs = f'label="{_dot_text(n.key)}"'
        if n.effects.syntax_error is not None:
            attrs += ", color=red"
        elif n.effects.is_opaque or n.effects.is_wildcard:
            attrs += ", style=dashed"
        lines.append(f"    c{n.index} [{attrs}];")
    for p, c in graph.edges:
        label = _dot_text(_names_label(graph.edge_names[(p, c)]))
        lines.append(f'    c{p} -> c{c} [label="{label}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
