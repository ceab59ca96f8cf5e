"""Reading a ``.py`` file with jupytext, and the lines that hold each of its cells.

jupytext (``jupytext.jupytext.TextNotebookConverter.reads``) parses a script by handing the
remaining lines to its format's cell reader, one cell at a time, each reader saying where the
next cell starts. We run that same reader loop, in the one parse, with a reader that also
records which lines each cell took, so the spans agree with jupytext's cells by construction
(no parser of our own). A cell's span is its first and last non-blank line after its start
marker (``# %%``, ``# +``) and before an end marker (``# -``), 1-based and inclusive, as the
reference jupyter-jcli 0.9.7 reports them (``source_start_line``/``source_end_line``).
"""

from __future__ import annotations

import copy
import re
from typing import Any

__all__ = ["LineSpan", "read_script"]

LineSpan = tuple[int, int]
"""``(first_line, last_line)``, 1-based and inclusive."""


def _format_of(text: str, extension: str) -> dict[str, Any]:
    """The format jupytext reads ``text`` with: the header's, else jupytext's guess."""
    from jupytext.formats import guess_format, read_format_from_metadata

    fmt: dict[str, Any] = {"extension": extension}
    format_name = read_format_from_metadata(text, extension)
    if format_name:
        fmt["format_name"] = format_name
    else:
        format_name, options = guess_format(text, extension)
        if format_name:
            fmt["format_name"] = format_name
        fmt.update(options)
    return fmt


def _span(block: list[str], start: int, reader: Any) -> LineSpan | None:
    """The span of one cell whose lines are ``block``, the first at 0-based line ``start``."""
    first, stop = 0, len(block)
    for name in ("start_code_re", "alternative_start_code_re"):
        start_re: re.Pattern[str] | None = getattr(reader, name, None)
        if block and start_re is not None and start_re.match(block[0]):
            first = 1
    content = [i for i in range(first, stop) if block[i].strip()]
    end_re: re.Pattern[str] | None = getattr(reader, "end_code_re", None)
    if content and end_re is not None and end_re.match(block[content[-1]]):
        content.pop()
    if not content:
        return None
    return start + content[0] + 1, start + content[-1] + 1


def read_script(text: str, extension: str = ".py") -> tuple[Any, list[LineSpan | None] | None]:
    """Parse a script with jupytext once, and say which lines each cell took.

    The same steps as ``jupytext.reads(text, fmt={"extension": extension})`` (the format from
    the header, else jupytext's guess; ``TextNotebookConverter.reads``; the metadata
    rearranged and the text representation recorded), with the reader loop recording spans.

    Args:
        text: the script's text.
        extension: its suffix (``.py``).

    Returns:
        ``(notebook, spans)``: the notebook node jupytext reads, and one span per cell (None
        for a cell with no non-blank line, and for a header cell made from root-level
        metadata), or None for all when they cannot be tied to the cells (a format that adds
        or drops cells outside the reader loop).

    Raises:
        Exception: whatever jupytext raises on input it cannot parse.
    """
    from jupytext.formats import rearrange_jupytext_metadata
    from jupytext.header import insert_or_test_version_number
    from jupytext.jupytext import TextNotebookConverter

    fmt = _format_of(text, extension)
    converter = TextNotebookConverter(fmt, None)
    total = len(text.splitlines())
    found: list[LineSpan | None] = []
    base = converter.implementation.cell_reader_class

    class _Recording(base):  # type: ignore[misc, valid-type]
        def read(self, lines: list[str]) -> Any:
            cell, pos = super().read(lines)
            found.append(_span(lines[:pos], total - len(lines), self))
            return cell, pos

    implementation = copy.copy(converter.implementation)  # the registry's object is shared
    implementation.cell_reader_class = _Recording
    converter.implementation = implementation
    notebook = converter.reads(text)
    rearrange_jupytext_metadata(notebook.metadata)
    format_name = fmt.get("format_name")
    if format_name and insert_or_test_version_number():
        representation = notebook.metadata.setdefault("jupytext", {})
        representation.setdefault("text_representation", {}).update(
            {"extension": extension, "format_name": format_name}
        )
    return notebook, _tie(len(notebook.cells), found, str(format_name or ""))


def _tie(
    cells: int, found: list[LineSpan | None], format_name: str
) -> list[LineSpan | None] | None:
    if format_name.startswith("sphinx"):
        return None  # adds and filters cells outside the reader loop
    if cells == len(found):
        return found
    if cells == len(found) + 1:  # a raw cell made from the header, before the reader loop
        return [None, *found]
    return None
