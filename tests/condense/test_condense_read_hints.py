"""Every cut names its read twice: as text (the ``read_notebook_output`` call a model sees)
and as structured :class:`ReadHint` data on the part, so a front end can render its own
command without parsing text."""

from __future__ import annotations

from typing import Any

from jupyter_jcli.condense import ReadHint, condense_outputs


def _stream(text: str, name: str = "stdout") -> dict[str, Any]:
    return {"output_type": "stream", "name": name, "text": text}


def test_a_cut_stream_part_carries_its_read_as_data_and_text() -> None:
    text = "".join(f"line {i}\n" for i in range(5_000))
    condensed = condense_outputs([_stream(text)], budget=600, cell_index=3)
    [part] = condensed.parts
    [hint] = part.read_hints
    assert (hint.cell_index, hint.output_index, hint.mime_type) == (3, 0, None)
    assert hint.offset is not None and hint.limit is not None
    call = f"read_notebook_output cell_index=3 output_index=0 offset={hint.offset}"
    assert hint.text == f"{call} limit={hint.limit}"
    assert hint.text in condensed.text
    assert part.omitted_characters == hint.limit
    assert "read_hints" not in part.to_dict()  # the JSON (and MCP) form is unchanged


def test_a_range_over_two_outputs_names_both_reads() -> None:
    first = "".join(f"a{i}\n" for i in range(3_000))
    second = "".join(f"b{i}\n" for i in range(3_000))
    condensed = condense_outputs([_stream(first), _stream(second)], budget=600, cell_index=0)
    [part] = condensed.parts
    head, tail = part.read_hints
    assert (head.output_index, tail.output_index) == (0, 1)
    assert head.offset is not None and head.limit is not None
    assert head.offset + head.limit == len(first)
    assert (tail.offset, tail.lead) == (0, "then ")
    assert tail.lead + tail.text in part.text


def test_error_and_html_reads_are_structured_too() -> None:
    frames = [f"frame {i}\n" + "x" * 300 for i in range(40)]
    error = {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": frames}
    rows = "".join(f"<tr><td>{i}</td><td>{'v' * 40}</td></tr>" for i in range(400))
    table = {
        "output_type": "display_data",
        "data": {"text/html": f"<table><tr><th>a</th><th>b</th></tr>{rows}</table>"},
        "metadata": {},
    }
    condensed = condense_outputs([error, table], budget=1_500, cell_index=2)
    hints = {part.kind: part.read_hints for part in condensed.parts}
    assert hints["error"] == (ReadHint(2, 0),)
    assert hints["table"] == (ReadHint(2, 1, "text/html"),)
    for part in condensed.parts:
        for hint in part.read_hints:
            assert hint.text in part.text


def test_an_uncut_output_has_no_read_hints() -> None:
    condensed = condense_outputs([_stream("short\n")], budget=600, cell_index=0)
    assert condensed.parts[0].read_hints == ()
