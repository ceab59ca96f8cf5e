"""``search_cells``: find text in a notebook's sources, names, cached summaries and outputs.

What is searched, per cell (fields in this order):

- ``sources``: the cell's source (every cell type);
- ``names``: the cell's name (stored, or computed as every operation computes it);
- ``summaries``: the cached model summary only (``metadata.jupyter_mcp.summary`` while still
  valid, see :mod:`jupyter_jcli.summaries`): its tldr, description and output summary; the
  summary API is never called;
- ``outputs``: the condensed text of the saved outputs (:func:`jupyter_jcli.condense.
  condense_outputs`: streams as a terminal shows them, ANSI and other control sequences
  removed, errors as ``ename: evalue`` and their frames, tables as CSV, text representations);
  images and one-line descriptions (SVG, Plotly, widgets) are not searched.

Bounds: each text is searched up to :data:`MAX_FIELD_CHARS` characters (the condensed outputs
of one cell are rendered within :data:`OUTPUT_TEXT_BUDGET`); the cells cut are listed in
``clipped``. At most ``max_results`` matches are returned (``truncated`` says more exist).
The query is a case-insensitive substring, or a regular expression checked and matched with
a deadline (:mod:`jupyter_jcli.workbench._search_pattern`).
"""

from __future__ import annotations

import bisect
import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from jupyter_jcli._json import json_fields
from jupyter_jcli.errors import UsageError
from jupyter_jcli.notebook.document import CellView, Document
from jupyter_jcli.workbench._envelope import result_document
from jupyter_jcli.workbench._load import open_document, outputs_of
from jupyter_jcli.workbench._search_pattern import compile_query

__all__ = [
    "DEFAULT_SEARCH_CONTEXT",
    "DEFAULT_SEARCH_RESULTS",
    "MAX_FIELD_CHARS",
    "MAX_SEARCH_CONTEXT",
    "MAX_SEARCH_RESULTS",
    "OUTPUT_TEXT_BUDGET",
    "SEARCH_FIELDS",
    "SearchField",
    "SearchMatch",
    "SearchOutcome",
    "search_cells",
]

SearchField = Literal["sources", "names", "summaries", "outputs"]
"""Where :func:`search_cells` looks."""
SEARCH_FIELDS: tuple[SearchField, ...] = ("sources", "names", "summaries", "outputs")
"""Every field, in the order matches are reported within a cell."""
DEFAULT_SEARCH_RESULTS = 50
"""Default most matches returned."""
MAX_SEARCH_RESULTS = 1_000
"""Largest ``max_results`` accepted."""
DEFAULT_SEARCH_CONTEXT = 80
"""Default characters of context on each side of a match in its snippet."""
MAX_SEARCH_CONTEXT = 1_000
"""Largest ``context_chars`` accepted."""
MAX_FIELD_CHARS = 100_000
"""Characters of one cell's text searched per field (source, or condensed outputs)."""
OUTPUT_TEXT_BUDGET = 20_000
"""Character budget of the condensed outputs of one cell (what ``outputs`` searches)."""
MATCH_TEXT_MAX = 200
"""Longest matched text reported (longer matches are cut in the middle with ``…``)."""

_SEARCHED_PARTS = frozenset({"stream", "table", "text", "error", "json"})
_SUMMARY_PARTS = ("tldr", "description", "output_summary")


@dataclass(frozen=True)
class SearchMatch:
    """One match.

    Attributes:
        index: the cell's physical zero-based position.
        name: the cell's name.
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
        rev: the cell's rev.
        field: where the match is (``sources``, ``names``, ``summaries``, ``outputs``).
        line: 1-based line of the match start in the searched text (the source, the output
            part's condensed text, the summary part; 1 for a name).
        column: 1-based column of the match start in that line.
        match: the matched text (newlines shown as ``⏎``; cut to :data:`MATCH_TEXT_MAX`).
        snippet: the match with up to ``context_chars`` characters of its line on each side
            (``…`` where the line goes on).
        output_index: for ``outputs``, the index of the output in ``cell.outputs`` (the
            first of a merged stream); else ``None``.
        summary_part: for ``summaries``, ``tldr``, ``description`` or ``output_summary``.
    """

    index: int
    name: str
    cell_type: str
    rev: str
    field: SearchField
    line: int
    column: int
    match: str
    snippet: str
    output_index: int | None = None
    summary_part: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return json_fields(self)


@dataclass(frozen=True)
class SearchOutcome:
    """What :func:`search_cells` found.

    Attributes:
        path: the file searched (absolute).
        query: the query as given.
        regex: whether it was a regular expression.
        fields: the fields searched, in report order.
        matches: the matches, in document order (then field, then position).
        truncated: more matches exist than ``max_results``.
        cell_count: cells in the notebook.
        clipped: ``(cell name, field)`` of texts searched only up to their bound.
        pair_out_of_sync: as :class:`~jupyter_jcli.workbench.Overview` has it.
    """

    path: Path
    query: str
    regex: bool
    fields: tuple[SearchField, ...]
    matches: tuple[SearchMatch, ...]
    truncated: bool
    cell_count: int
    clipped: tuple[tuple[str, SearchField], ...]
    pair_out_of_sync: Mapping[str, Any] | None = dataclasses.field(default=None, kw_only=True)

    JSON_KEYS: ClassVar[str] = (
        "query regex fields match_count truncated cell_count pair_out_of_sync? cells"
        " clipped matches"
    )
    """The keys of :meth:`to_dict`, in order."""

    @property
    def cells(self) -> tuple[str, ...]:
        """Names of the cells with at least one match, in document order."""
        return tuple(dict.fromkeys(match.name for match in self.matches))

    def to_dict(self) -> dict[str, Any]:
        """The JSON document."""
        return result_document(
            "search_cells",
            self,
            self.JSON_KEYS,
            match_count=len(self.matches),
            clipped=[{"name": name, "field": field} for name, field in self.clipped],
        )


@dataclass(frozen=True)
class _Text:
    view: CellView
    field: SearchField
    text: str
    output_index: int | None = None
    summary_part: str | None = None


def search_cells(
    path: str | os.PathLike[str],
    query: str,
    *,
    regex: bool = False,
    fields: Sequence[str] = SEARCH_FIELDS,
    max_results: int = DEFAULT_SEARCH_RESULTS,
    context_chars: int = DEFAULT_SEARCH_CONTEXT,
) -> SearchOutcome:
    """Search a notebook's cells for a substring (case-insensitive) or a regular expression.

    Reads only: nothing is written and no summary is requested (see the module doc for what
    each field holds and the bounds).

    Args:
        path: an ``.ipynb`` or a py:percent ``.py`` paired with one.
        query: the text to find (case-insensitive), or a Python :mod:`re` pattern when
            ``regex`` (matched case-insensitively; ``(?-i:...)`` makes a part exact).
        regex: treat ``query`` as a regular expression.
        fields: some of ``sources``, ``names``, ``summaries``, ``outputs`` (a comma-separated
            string is accepted too).
        max_results: most matches returned, 1 to :data:`MAX_SEARCH_RESULTS`.
        context_chars: characters of the line shown each side of a match, 0 to
            :data:`MAX_SEARCH_CONTEXT`.

    Returns:
        The :class:`SearchOutcome`.

    Raises:
        UsageError: ``USAGE_ERROR`` for unknown or no fields or out-of-range numbers, and the
            query's refusals from :func:`~jupyter_jcli.workbench._search_pattern.compile_query`
            and its matcher (details ``reason``).
        NotebookError: the read codes of :meth:`Document.load
            <jupyter_jcli.notebook.document.Document.load>`.
    """
    chosen = _fields(fields)
    _check_int("max_results", max_results, 1, MAX_SEARCH_RESULTS)
    _check_int("context_chars", context_chars, 0, MAX_SEARCH_CONTEXT)
    pattern = compile_query(query, regex=bool(regex))
    document = open_document(path)
    texts, clipped = _texts(document, chosen)
    found = pattern.find([item.text for item in texts], max_results + 1)
    truncated = len(found) > max_results
    line_starts: dict[int, list[int]] = {}
    matches = []
    for number, start, end in found[:max_results]:
        item = texts[number]
        if number not in line_starts:
            line_starts[number] = [0, *(i + 1 for i, c in enumerate(item.text) if c == "\n")]
        matches.append(_match(item, line_starts[number], start, end, context_chars))
    return SearchOutcome(
        path=document.path,
        query=query,
        regex=bool(regex),
        fields=chosen,
        matches=tuple(matches),
        truncated=truncated,
        cell_count=len(document.cells),
        clipped=tuple(clipped),
        pair_out_of_sync=document.pair_out_of_sync,
    )


def _fields(fields: Sequence[str]) -> tuple[SearchField, ...]:
    items = fields.split(",") if isinstance(fields, str) else list(fields)
    wanted = {str(item).strip() for item in items if str(item).strip()}
    unknown = sorted(wanted - set(SEARCH_FIELDS))
    if unknown or not wanted:
        raise UsageError(
            f"Search fields must be some of {', '.join(SEARCH_FIELDS)}; got "
            f"{', '.join(unknown) if unknown else 'none'}.",
            {"unknown": unknown, "allowed": list(SEARCH_FIELDS)},
        )
    return tuple(field for field in SEARCH_FIELDS if field in wanted)


def _check_int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UsageError(
            f"{name} must be an integer from {low} to {high}, got {value!r}.",
            {name: repr(value), "min": low, "max": high},
        )


def _texts(
    document: Document, fields: tuple[SearchField, ...]
) -> tuple[list[_Text], list[tuple[str, SearchField]]]:
    """Every text to search, in report order, each cut to :data:`MAX_FIELD_CHARS`."""
    cells = document.cell_dicts()
    outputs = [outputs_of(cell) for cell in cells] if "outputs" in fields else []
    texts: list[_Text] = []
    clipped: list[tuple[str, SearchField]] = []

    def add(item: _Text) -> None:
        if len(item.text) > MAX_FIELD_CHARS:
            if (item.view.name, item.field) not in clipped:
                clipped.append((item.view.name, item.field))
            item = _Text(
                item.view,
                item.field,
                item.text[:MAX_FIELD_CHARS],
                item.output_index,
                item.summary_part,
            )
        if item.text:
            texts.append(item)

    for view in document.cells:
        for field in fields:
            if field == "sources":
                add(_Text(view, field, view.source))
            elif field == "names":
                add(_Text(view, field, view.name))
            elif field == "summaries":
                for part, text in _summary_texts(cells[view.index]):
                    add(_Text(view, field, text, summary_part=part))
            elif outputs[view.index]:
                for output_index, text in _output_texts(outputs[view.index], view.index):
                    add(_Text(view, field, text, output_index=output_index))
    return texts, clipped


def _summary_texts(cell: Any) -> list[tuple[str, str]]:
    from jupyter_jcli.summaries import cached_summary

    summary = cached_summary(cell) if isinstance(cell, dict) else None
    if summary is None:
        return []
    return [(part, str(getattr(summary, part))) for part in _SUMMARY_PARTS]


def _output_texts(outputs: Sequence[Any], cell_index: int) -> list[tuple[int, str]]:
    from jupyter_jcli.condense import condense_outputs

    condensed = condense_outputs(
        outputs, budget=OUTPUT_TEXT_BUDGET, cell_index=cell_index, include_images=False
    )
    return [
        (part.output_index, part.text)
        for part in condensed.parts
        if part.kind in _SEARCHED_PARTS and part.text
    ]


def _match(
    item: _Text, line_starts: Sequence[int], start: int, end: int, context: int
) -> SearchMatch:
    text = item.text
    line = bisect.bisect_right(line_starts, start)
    line_start = line_starts[line - 1]
    end_line_end = text.find("\n", end)
    end_line_end = len(text) if end_line_end < 0 else end_line_end
    matched = _shown(text[start:end])
    left_from = max(line_start, start - context)
    right_to = min(end_line_end, end + context)
    left = ("…" if left_from > line_start else "") + text[left_from:start]
    right = text[end:right_to] + ("…" if right_to < end_line_end else "")
    return SearchMatch(
        index=item.view.index,
        name=item.view.name,
        cell_type=item.view.cell_type,
        rev=item.view.rev,
        field=item.field,
        line=line,
        column=start - line_start + 1,
        match=matched,
        snippet=left + matched + right,
        output_index=item.output_index,
        summary_part=item.summary_part,
    )


def _shown(text: str) -> str:
    flat = text.replace("\r\n", "⏎").replace("\n", "⏎")
    if len(flat) <= MATCH_TEXT_MAX:
        return flat
    half = (MATCH_TEXT_MAX - 1) // 2
    return flat[:half] + "…" + flat[-(MATCH_TEXT_MAX - 1 - half) :]
