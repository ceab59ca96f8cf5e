"""``notebook_graph``: the notebook's dependency DAG as Mermaid, Graphviz DOT or JSON."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from jupyter_jcli.analysis import GraphDict, to_dot, to_mermaid
from jupyter_jcli.errors import UsageError
from jupyter_jcli.workbench._envelope import result_document
from jupyter_jcli.workbench._load import load

__all__ = ["GRAPH_FORMATS", "GraphFormat", "GraphResult", "notebook_graph"]

GraphFormat = Literal["mermaid", "dot", "json"]
"""How :func:`notebook_graph` renders the DAG."""
GRAPH_FORMATS: tuple[GraphFormat, ...] = ("mermaid", "dot", "json")
"""Every :data:`GraphFormat`, the default first."""


@dataclass(frozen=True)
class GraphResult:
    """What :func:`notebook_graph` returns.

    Attributes:
        path: the file read (absolute).
        structure_rev: the notebook's structure rev when it was read.
        format: the rendering asked for.
        text: the Mermaid or DOT text; for ``json``, ``None``.
        graph: the graph as data (cells with effects, parents and children by name; edges
            with the names flowing along them; lint findings), for every format.
        pair_out_of_sync: as :class:`~jupyter_jcli.workbench.Overview` has it.
    """

    path: Path
    structure_rev: str
    format: GraphFormat
    text: str | None
    graph: GraphDict
    pair_out_of_sync: Mapping[str, Any] | None = field(default=None, kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document. ``text`` is present for mermaid and dot; ``graph`` always."""
        return result_document(
            "notebook_graph",
            self,
            "structure_rev format pair_out_of_sync? text? graph",
            graph=self.graph,
        )


def notebook_graph(
    path: str | os.PathLike[str],
    *,
    format: GraphFormat = "mermaid",
    cache_dir: Path | None = None,
) -> GraphResult:
    """The dependency DAG of a notebook, rendered for a person or as data. Reads only.

    Args:
        path: an ``.ipynb``, or a py:percent ``.py`` paired with one.
        format: ``"mermaid"`` (a ``flowchart TD``, https://mermaid.js.org), ``"dot"``
            (Graphviz, https://graphviz.org/doc/info/lang.html) or ``"json"``.
        cache_dir: snapshot cache base folder (unused by reads; accepted for symmetry).

    Returns:
        The :class:`GraphResult`.

    Raises:
        UsageError: ``USAGE_ERROR`` for an unknown format.
        NotebookError: the read codes of :meth:`Document.load`.
    """
    if format not in GRAPH_FORMATS:
        raise UsageError(
            f"format must be one of {', '.join(GRAPH_FORMATS)}, not {format!r}.",
            {"format": str(format), "choices": list(GRAPH_FORMATS)},
        )
    loaded = load(path, cache_dir=cache_dir)
    text: str | None = None
    if format == "mermaid":
        text = to_mermaid(loaded.graph)
    elif format == "dot":
        text = to_dot(loaded.graph)
    return GraphResult(
        path=loaded.document.path,
        structure_rev=loaded.document.structure_rev,
        format=format,
        text=text,
        graph=loaded.graph.to_dict(),
        pair_out_of_sync=loaded.document.pair_out_of_sync,
    )
