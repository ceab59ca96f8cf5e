"""Rendering a parsed table: CSV when uniform, JSON rows otherwise, rows cut from the middle."""

from __future__ import annotations

import csv
import io
import json

from jupyter_jcli.condense._tables import KEEP_HEAD_ROWS, KEEP_TAIL_ROWS, Table
from jupyter_jcli.condense._text import clip

__all__ = ["render_table"]


def _csv_line(row: list[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(row)
    return buffer.getvalue().rstrip("\n")


def _row_line(table: Table, row: list[str]) -> str:
    if table.uniform:
        return _csv_line(row)
    return json.dumps(row, ensure_ascii=False)


def _header_lines(table: Table) -> list[str]:
    if table.uniform:
        return [_csv_line(table.header[0])] if table.header else []
    if not table.header:
        return []
    width = max(len(r) for r in table.header)
    if len(table.header) == 1:
        labels: list[object] = list(table.header[0])
    else:
        labels = [[r[i] if i < len(r) else "" for r in table.header] for i in range(width)]
    return [json.dumps({"columns": labels}, ensure_ascii=False)]


def render_table(table: Table, limit: int, *, ordinal: str, how_to_read: str) -> tuple[str, int]:
    """Render one table within ``limit`` characters, cutting rows from its middle.

    Args:
        table: the parsed table.
        limit: the most characters to return.
        ordinal: how to name the table in its title line (e.g. ``"table 1 of 2"``).
        how_to_read: the call that reads the full HTML, named in the cut note.

    Returns:
        ``(text, omitted_rows)``. The first line says the shape and format; a note line
        ``[… N rows omitted (rows a-b of R); full table: <how_to_read> …]`` replaces the cut.
        When not even one row fits, the column header is left out too, so that the note and
        its read stay whole wherever ``limit`` allows it.
    """
    form = "CSV" if table.uniform else "JSON rows, spans expanded"
    title = f"[{ordinal}: {table.rows:,} rows x {table.columns:,} columns, {form}]"
    if table.caption:
        title = f"{title} {table.caption}"
    header = _header_lines(table)
    head_count = min(len(table.head), KEEP_HEAD_ROWS)
    tail_count = min(len(table.tail), KEEP_TAIL_ROWS) if table.rows > len(table.head) else 0
    head_lines = [_row_line(table, r) for r in table.head[:head_count]]
    tail_rows = list(table.tail)
    tail_lines = [_row_line(table, r) for r in tail_rows[len(tail_rows) - tail_count :]]
    while True:
        shown = head_count + tail_count
        omitted = table.rows - shown
        lines = [title, *header, *head_lines[:head_count]]
        if omitted > 0:
            first = head_count + 1
            lines.append(
                f"[… {omitted:,} rows omitted (rows {first:,}-{first + omitted - 1:,} of"
                f" {table.rows:,}); full table: {how_to_read} …]"
            )
        lines.extend(tail_lines[len(tail_lines) - tail_count :] if tail_count else [])
        text = "\n".join(lines)
        if len(text) <= limit:
            return text, max(0, omitted)
        if shown == 0:  # no row fits: the column header goes before the read does
            bare = "\n".join([title, *lines[1 + len(header) :]])
            return clip(bare, limit), max(0, omitted)
        if head_count > tail_count or tail_count == 0:
            head_count -= 1
        else:
            tail_count -= 1
