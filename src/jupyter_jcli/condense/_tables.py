"""HTML tables (pandas and others) as CSV or JSON rows, with the text around them.

Parsing uses the standard library's :class:`html.parser.HTMLParser`. Cell spans follow the
HTML table model (WHATWG HTML, "4.9.12 Processing model"): ``colspan`` is clamped to 1..1000
and ``rowspan`` to 1..65534; a spanned cell's text is repeated in every grid slot it covers,
so each row stands on its own.

A table is *uniform* when it has no spans, at most one header row and rows of one width: it
is shown as CSV. Otherwise (row spans of a MultiIndex, multi-level column headers, ragged
rows) it is shown as JSON: a ``{"columns": [...]}`` line (a list of levels per column when
there are several header rows) and one JSON array per row. A pandas index-name row (the
second header row whose cells never clash with the first's) is folded into the first.

Only the first and last rows are kept while parsing. An HTML value over 1 MB is parsed in
chunks; once the open table has its first rows, the body rows between there and the last
200 KB are counted (``<tr`` tags, at C speed) instead of parsed, when that stretch holds no
other table structure. A row span reaching across that stretch is then not carried into the
last rows.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ["KEEP_HEAD_ROWS", "KEEP_TAIL_ROWS", "ParsedHtml", "Table", "parse_html"]

KEEP_HEAD_ROWS = 20
"""Body rows shown from the top of a long table (fewer when the budget is tight)."""
KEEP_TAIL_ROWS = 10
"""Body rows shown from the bottom of a long table (fewer when the budget is tight)."""
_MAX_CELL = 500  # characters kept per cell
_MAX_COLSPAN = 1000
_MAX_ROWSPAN = 65534
_MAX_COLUMNS = 2000
_BLOCK_TAGS = frozenset(
    {"p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table"}
    | {"pre", "blockquote", "section", "hr", "dt", "dd"}
)
_SKIP_TAGS = frozenset(("style", "script", "template", "head", "title"))
_SPACES = re.compile(r"\s+")
_BIG = 1_000_000  # characters of HTML parsed in full; past this, long tables are skimmed
_CHUNK = 200_000
_ROW = re.compile(r"<tr[\s>/]", re.IGNORECASE)
_STRUCTURE = re.compile(r"</?(?:table|thead|tfoot|caption)[\s>/]", re.IGNORECASE)


@dataclass
class Table:
    """One parsed table (its first and last body rows only).

    Attributes:
        caption: the ``<caption>``, or the text just before the table (pandas ``display``
            helpers put a name there), or "".
        header: header rows, spans expanded.
        head: the first body rows, spans expanded.
        tail: the last body rows (not overlapping ``head``).
        rows: how many body rows the table has in all.
        spanned: True when some cell spans more than one slot.
        widths: the distinct row widths seen.
    """

    caption: str = ""
    header: list[list[str]] = field(default_factory=list)
    head: list[list[str]] = field(default_factory=list)
    tail: deque[list[str]] = field(default_factory=lambda: deque(maxlen=KEEP_TAIL_ROWS))
    rows: int = 0
    spanned: bool = False
    widths: set[int] = field(default_factory=set)

    @property
    def columns(self) -> int:
        """The widest row."""
        return max(self.widths, default=0)

    @property
    def uniform(self) -> bool:
        """No spans, at most one header row, every row as wide as the others."""
        return not self.spanned and len(self.header) <= 1 and len(self.widths) <= 1


@dataclass
class ParsedHtml:
    """An HTML value: its tables, and its text outside tables (``footer``: after the last)."""

    tables: list[Table]
    text: str
    footer: str


@dataclass
class _Cell:
    parts: list[str]
    header: bool
    colspan: int
    rowspan: int


def _span(value: str | None, cap: int) -> int:
    try:
        number = int(value or "1")
    except ValueError:
        return 1
    return min(max(number, 1), cap)


def _collapse(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[Table] = []
        self.outside: list[str] = []  # text outside tables, block tags as "\n"
        self._since_table: list[str] = []
        self._depth = 0  # table nesting; only depth 1 is a table of its own
        self._skip = 0
        self._table: Table | None = None
        self._section = ""
        self._seen_thead = False
        self._row: list[_Cell] | None = None
        self._cell: _Cell | None = None
        self._caption: list[str] | None = None
        self._pending: dict[int, tuple[int, str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            self._skip += 1
            return
        if tag == "table":
            self._depth += 1
            if self._depth == 1:
                self._start_table()
                return
        if self._depth != 1:
            if self._depth == 0 and tag in _BLOCK_TAGS:
                self._text("\n")
            elif self._cell is not None and tag == "br":
                self._cell.parts.append(" ")
            return
        if tag in ("thead", "tbody", "tfoot"):
            self._section = tag
            self._seen_thead = self._seen_thead or tag == "thead"
        elif tag == "tr":
            self._end_row()
            self._row = []
        elif tag in ("td", "th"):
            self._end_cell()
            if self._row is None:
                self._row = []
            values = dict(attrs)
            self._cell = _Cell(
                [],
                tag == "th",
                _span(values.get("colspan"), _MAX_COLSPAN),
                _span(values.get("rowspan"), _MAX_ROWSPAN),
            )
        elif tag == "caption":
            self._caption = []
        elif tag == "br" and self._cell is not None:
            self._cell.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self._skip = max(0, self._skip - 1)
            return
        if tag == "table" and self._depth > 0:
            if self._depth == 1:
                self._end_table()
            self._depth -= 1
            return
        if self._depth == 0:
            if tag in _BLOCK_TAGS:
                self._text("\n")
            return
        if self._depth != 1:
            return
        if tag in ("td", "th"):
            self._end_cell()
        elif tag == "tr":
            self._end_row()
        elif tag in ("thead", "tbody", "tfoot"):
            self._end_row()
            self._section = ""
        elif tag == "caption" and self._caption is not None and self._table is not None:
            self._table.caption = _collapse("".join(self._caption))[:_MAX_CELL]
            self._caption = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._depth == 0:
            self._text(data)
        elif self._caption is not None:
            self._caption.append(data)
        elif self._cell is not None and sum(map(len, self._cell.parts)) < _MAX_CELL:
            self._cell.parts.append(data)

    def _text(self, data: str) -> None:
        self.outside.append(data)
        self._since_table.append(data)

    def _start_table(self) -> None:
        before = _collapse("".join(self._since_table))
        self._since_table = []
        self._table = Table(caption=before[-_MAX_CELL:])
        self._section = ""
        self._seen_thead = False
        self._row = None
        self._cell = None
        self._pending = {}

    def _end_cell(self) -> None:
        if self._cell is not None and self._row is not None:
            self._row.append(self._cell)
        self._cell = None

    def _expand(self, cells: list[_Cell]) -> list[str]:
        row: list[str] = []
        carried: dict[int, tuple[int, str]] = {}

        def fill() -> None:
            while len(row) in self._pending:
                remaining, text = self._pending.pop(len(row))
                if remaining > 1:
                    carried[len(row)] = (remaining - 1, text)
                row.append(text)

        for cell in cells:
            fill()
            text = _collapse("".join(cell.parts))[:_MAX_CELL]
            for _ in range(cell.colspan):
                if len(row) >= _MAX_COLUMNS:
                    break
                if cell.rowspan > 1:
                    carried[len(row)] = (cell.rowspan - 1, text)
                row.append(text)
        for column in sorted(self._pending):
            if column >= len(row):
                row.extend([""] * (column - len(row)))
                fill()
        self._pending = carried
        return row

    def _end_row(self) -> None:
        self._end_cell()
        table, cells = self._table, self._row
        self._row = None
        if table is None or cells is None or (not cells and not self._pending):
            return
        if any(c.colspan > 1 or c.rowspan > 1 for c in cells):
            table.spanned = True
        row = self._expand(cells)
        is_header = self._section == "thead" or (
            not self._seen_thead and table.rows == 0 and cells and all(c.header for c in cells)
        )
        if is_header:
            table.header.append(row)
        else:
            table.rows += 1
            if len(table.head) < KEEP_HEAD_ROWS:
                table.head.append(row)
            else:
                table.tail.append(row)
        table.widths.add(len(row))

    def skip_rows(self, count: int) -> None:
        """Count ``count`` body rows of the open table without parsing them."""
        self._end_row()
        if self._table is not None:
            self._table.rows += count  # rows in the tail deque were counted already
            self._table.tail.clear()
        self._pending = {}

    def skimmable(self) -> bool:
        """True inside the body of a top-level table that already has its first rows."""
        table = self._table
        return (
            table is not None
            and self._depth == 1
            and self._cell is None
            and table.rows >= KEEP_HEAD_ROWS
        )

    def _end_table(self) -> None:
        self._end_row()
        if self._table is not None and (self._table.rows or self._table.header):
            _fold_header(self._table)
            self.tables.append(self._table)
        self._table = None


def _fold_header(table: Table) -> None:
    """Merge header rows that never clash (pandas puts index names on a row of their own)."""
    rows = table.header
    index = len(rows) - 1
    while index > 0:
        upper, lower = rows[index - 1], rows[index]
        if len(upper) == len(lower) and all(
            not a or not b for a, b in zip(upper, lower, strict=True)
        ):
            rows[index - 1] = [a or b for a, b in zip(upper, lower, strict=True)]
            del rows[index]
        index -= 1


def parse_html(html: str) -> ParsedHtml:
    """Parse an HTML value into its tables and its text outside them.

    Args:
        html: the HTML text (a ``text/html`` value, joined).

    Returns:
        The tables in document order and the visible text outside them (block elements
        become line breaks, runs of blank space collapse).
    """
    parser = _Parser()
    if len(html) <= _BIG:
        parser.feed(html)
    else:
        _feed_skimming(parser, html)
    parser.close()
    if parser._table is not None:  # an unclosed table still counts
        parser._end_table()
    lines = [_collapse(line) for line in "".join(parser.outside).split("\n")]
    footer_lines = [_collapse(line) for line in "".join(parser._since_table).split("\n")]
    return ParsedHtml(
        tables=parser.tables,
        text="\n".join(line for line in lines if line),
        footer=" ".join(line for line in footer_lines if line) if parser.tables else "",
    )


def _feed_skimming(parser: _Parser, html: str) -> None:
    """Feed ``html`` in chunks, counting instead of parsing the middle rows of a long table."""
    position = 0
    while position < len(html):
        if parser.skimmable():
            start = _ROW.search(html, position)
            tail = max(
                html.rfind("<tr", 0, len(html) - _CHUNK), html.rfind("<TR", 0, len(html) - _CHUNK)
            )
            if (
                start is not None
                and tail > start.start()
                and _STRUCTURE.search(html, start.start(), tail) is None
            ):
                parser.feed(html[position : start.start()])
                skipped = sum(1 for _ in _ROW.finditer(html, start.start(), tail))
                parser.skip_rows(skipped)
                parser.feed(html[tail:])
                return
        end = min(len(html), position + _CHUNK)
        parser.feed(html[position:end])
        position = end
