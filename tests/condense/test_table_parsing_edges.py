"""HTML tables as notebooks hold them beyond pandas' own shape (in-process): captions, line
breaks in cells, spans that are not numbers, nested and unclosed tables, and rows wider than
the column cap."""

from __future__ import annotations

from jupyter_jcli.condense._tables import parse_html


def test_a_caption_names_the_table_and_a_line_break_in_a_cell_becomes_a_space() -> None:
    [table] = parse_html(
        "<table><caption> Sales  by <b>region</b> </caption>"
        "<tr><th>region</th><th>total</th></tr>"
        "<tr><td>north<br>east</td><td>3</td></tr></table>"
    ).tables
    assert table.caption == "Sales by region"
    assert table.header == [["region", "total"]]
    assert table.head == [["north east", "3"]] and table.rows == 1


def test_a_span_that_is_not_a_number_or_below_one_counts_as_one_slot() -> None:
    [table] = parse_html(
        '<table><tr><td colspan="wide">a</td><td colspan="0">b</td><td rowspan="-3">c</td></tr>'
        "<tr><td>d</td><td>e</td><td>f</td></tr></table>"
    ).tables
    assert table.head[:2] == [["a", "b", "c"], ["d", "e", "f"]]
    assert not table.spanned
    assert table.uniform


def test_a_table_nested_in_a_cell_adds_its_text_to_that_cell_and_no_rows() -> None:
    parsed = parse_html(
        "<table><tr><th>k</th><th>v</th></tr>"
        "<tr><td>x</td><td><table><tr><td>inner</td></tr></table></td></tr></table>"
    )
    [table] = parsed.tables
    assert table.rows == 1
    assert table.head == [["x", "inner"]]


def test_an_unclosed_table_still_counts_with_the_rows_it_has() -> None:
    [table] = parse_html("<table><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4").tables
    assert table.rows == 2
    assert table.head == [["1", "2"], ["3", "4"]]


def test_a_row_wider_than_the_column_cap_is_cut_at_the_cap() -> None:
    [table] = parse_html('<table><tr><td colspan="1000">a</td><td colspan="1000">b</td>'
                         '<td colspan="1000">c</td></tr></table>').tables  # fmt: skip
    assert table.columns == 2000
    [row] = table.head
    assert row[:1] == ["a"] and row[1000:1001] == ["b"] and "c" not in row


def test_text_outside_tables_keeps_its_block_breaks() -> None:
    parsed = parse_html("<p>first</p><div>second</div><table><tr><td>1</td></tr></table>")
    assert parsed.text == "first\nsecond"
