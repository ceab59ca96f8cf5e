"""HTML tables: uniform ones as CSV, ragged ones as JSON rows, long ones cut with a count."""

from __future__ import annotations

import csv
import io
import json

from jupyter_jcli.condense import condense_outputs
from jupyter_jcli.condense._table_render import render_table
from jupyter_jcli.condense._tables import parse_html

_STYLE = "<style scoped>.dataframe tbody tr th { vertical-align: top; }</style>"


def _pandas_html(rows: int, *, truncated_note: bool = False) -> str:
    """The HTML pandas writes for a DataFrame with columns a, b, name (no pandas needed)."""
    body = "".join(
        f"<tr><th>{i}</th><td>{i * 2}</td><td>{i / 4:.2f}</td><td>n&amp;{i}</td></tr>\n"
        for i in range(rows)
    )
    note = f"<p>{rows} rows \u00d7 3 columns</p>" if truncated_note else ""
    return (
        f'<div>{_STYLE}<table border="1" class="dataframe"><thead>'
        '<tr style="text-align: right;"><th></th><th>a</th><th>b</th><th>name</th></tr>'
        f"</thead><tbody>{body}</tbody></table>{note}</div>"
    )


def _pandas_text(rows: int) -> str:
    return "      a     b  name\n" + "".join(
        f"{i:<5} {i * 2} {i / 4:.2f} n&{i}\n" for i in range(rows)
    )


def test_a_uniform_table_becomes_csv_with_its_header() -> None:
    parsed = parse_html(_pandas_html(3))
    text, omitted = render_table(parsed.tables[0], 10_000, ordinal="table", how_to_read="R")
    lines = text.split("\n")
    assert lines[0] == "[table: 3 rows x 4 columns, CSV]"
    assert list(csv.reader(io.StringIO("\n".join(lines[1:])))) == [
        ["", "a", "b", "name"],
        ["0", "0", "0.00", "n&0"],
        ["1", "2", "0.25", "n&1"],
        ["2", "4", "0.50", "n&2"],
    ]
    assert omitted == 0


def test_a_pandas_index_name_row_is_folded_into_the_header() -> None:
    html = (
        "<table><thead><tr><th></th><th>data1</th><th>data2</th></tr>"
        "<tr><th>key</th><th></th><th></th></tr></thead>"
        "<tbody><tr><th>A</th><td>1</td><td>2</td></tr></tbody></table>"
    )
    text, _ = render_table(parse_html(html).tables[0], 1000, ordinal="table", how_to_read="R")
    assert text.split("\n")[1:] == ["key,data1,data2", "A,1,2"]


def test_row_spans_of_a_multiindex_become_json_rows_with_the_span_repeated() -> None:
    html = (
        "<table><thead><tr><th></th><th></th><th>total</th></tr></thead><tbody>"
        '<tr><th rowspan="2">California</th><th>2010</th><td>37253956</td></tr>'
        "<tr><th>2020</th><td>39538223</td></tr>"
        '<tr><th rowspan="2">Texas</th><th>2010</th><td>25145561</td></tr>'
        "<tr><th>2020</th><td>29145505</td></tr></tbody></table>"
    )
    text, _ = render_table(parse_html(html).tables[0], 1000, ordinal="table", how_to_read="R")
    lines = text.split("\n")
    assert "JSON rows" in lines[0]
    assert json.loads(lines[1]) == {"columns": ["", "", "total"]}
    assert [json.loads(x) for x in lines[2:]] == [
        ["California", "2010", "37253956"],
        ["California", "2020", "39538223"],
        ["Texas", "2010", "25145561"],
        ["Texas", "2020", "29145505"],
    ]


def test_multi_level_column_headers_give_one_label_list_per_column() -> None:
    html = (
        "<table><thead>"
        '<tr><th></th><th colspan="2">survived</th></tr>'
        "<tr><th>class</th><th>First</th><th>Second</th></tr>"
        "</thead><tbody><tr><th>female</th><td>0.97</td><td>0.92</td></tr></tbody></table>"
    )
    text, _ = render_table(parse_html(html).tables[0], 1000, ordinal="table", how_to_read="R")
    lines = text.split("\n")
    assert json.loads(lines[1]) == {
        "columns": [["", "class"], ["survived", "First"], ["survived", "Second"]]
    }
    assert json.loads(lines[2]) == ["female", "0.97", "0.92"]


def test_a_hundred_thousand_row_dataframe_is_cut_with_a_row_count() -> None:
    output = {
        "output_type": "execute_result",
        "execution_count": 4,
        "metadata": {},
        "data": {"text/html": _pandas_html(100_000), "text/plain": _pandas_text(100_000)},
    }
    result = condense_outputs([output], budget=4_000, cell_index=2)
    assert len(result.text) <= 4_000
    (part,) = result.parts
    assert part.kind == "table" and part.truncated
    assert part.text.startswith("[table: 100,000 rows x 4 columns, CSV]\n,a,b,name\n")
    shown = [line for line in part.text.split("\n")[2:] if not line.startswith("[")]
    assert part.omitted_rows == 100_000 - len(shown)
    assert shown[0] == "0,0,0.00,n&0" and shown[-1] == "99999,199998,24999.75,n&99999"
    assert "rows omitted" in part.text
    assert "read_notebook_output cell_index=2 output_index=0 mime_type=text/html" in part.text
    assert "      a     b  name" not in result.text  # never the text/plain repr as well


def test_text_around_a_table_is_kept_as_caption_and_footer() -> None:
    html = "<p>df1</p>" + _pandas_html(2, truncated_note=True)
    parsed = parse_html(html)
    assert parsed.tables[0].caption == "df1"
    assert parsed.footer == "2 rows \u00d7 3 columns"


def test_several_tables_in_one_bundle_are_all_shown() -> None:
    html = "<div><p>left</p>" + _pandas_html(2) + "<p>right</p>" + _pandas_html(3) + "</div>"
    result = condense_outputs(
        [{"output_type": "display_data", "metadata": {}, "data": {"text/html": html}}]
    )
    assert "[table 1 of 2: 2 rows x 4 columns, CSV] left" in result.text
    assert "[table 2 of 2: 3 rows x 4 columns, CSV] right" in result.text


def test_a_long_table_with_row_spans_parsed_in_full_and_skimmed_agree_on_its_ends() -> None:
    def html(rows: int, filler: str) -> str:
        body = "".join(
            f'<tr><th rowspan="2">g{i}</th><th>x</th><td>{i}{filler}</td></tr>'
            f"<tr><th>y</th><td>{i}</td></tr>"
            for i in range(rows)
        )
        return f"<table><thead><tr><th></th><th></th><th>v</th></tr></thead>{body}</table>"

    small = parse_html(html(2_000, "")).tables[0]  # under 1 MB: parsed in full
    big = parse_html(html(2_000, " " * 600)).tables[0]  # over 1 MB: skimmed
    assert small.rows == big.rows == 4_000
    assert small.head == [[c.strip() for c in row] for row in big.head]
    assert list(small.tail) == [[c.strip() for c in row] for row in big.tail]


def test_a_table_with_no_room_for_a_row_keeps_its_whole_read_hint() -> None:
    parsed = parse_html(_pandas_html(40))
    how = "read_notebook_output cell_index=1 output_index=0 mime_type=text/html"
    title = "[table: 40 rows x 4 columns, CSV]"
    note = f"[… 40 rows omitted (rows 1-40 of 40); full table: {how} …]"
    limit = len(title) + 1 + len(note)  # no room for the column header as well
    text, omitted = render_table(parsed.tables[0], limit, ordinal="table", how_to_read=how)
    assert text == f"{title}\n{note}" and omitted == 40
