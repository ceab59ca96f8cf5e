"""Head and tail cuts: bounded, and the marker names exactly the raw range left out."""

from __future__ import annotations

import re

from jupyter_jcli.condense._terminal import render_line
from jupyter_jcli.condense._text import Segment, cut_derived, cut_windowed

_REPEAT = re.compile(r"\[… the line above repeated ([\d,]+) more times …\]\n")
_HINT = re.compile(r"output_index=(\d+)(?: mime_type=\S+)? offset=(\d+) limit=(\d+)")


def _omitted(segments: list[Segment], marker_line: str) -> str:
    """The raw text a reader gets by following every read hint of the marker."""
    by_index = {s.output_index: s.text for s in segments}
    pieces = []
    for output, offset, limit in _HINT.findall(marker_line):
        text = by_index[int(output)]
        pieces.append(text[int(offset) : int(offset) + int(limit)])
    middle = re.search(r"then outputs ([\d, ]+) in full", marker_line)
    if middle:
        in_full = [by_index[int(i)] for i in middle.group(1).split(", ")]
        pieces[1:1] = in_full
    return "".join(pieces)


def _split(text: str) -> tuple[str, str, str]:
    head, marker, tail = re.split(r"(\[… [\d,]+ (?:raw )?characters .*? …\])\n", text, maxsplit=1)
    return head, marker, tail


def test_short_text_is_returned_whole() -> None:
    cut = cut_windowed([Segment(0, "a\nb\n")], 100, render=render_line, cell_index=1)
    assert cut.text == "a\nb\n"
    assert not cut.truncated


def test_the_marker_reads_back_exactly_what_was_left_out() -> None:
    raw = "".join(f"line {i}\n" for i in range(5000))
    segments = [Segment(2, raw)]
    cut = cut_windowed(segments, 600, render=render_line, cell_index=7)
    assert cut.truncated and len(cut.text) <= 600
    head, marker, tail = _split(cut.text)
    assert "read_notebook_output cell_index=7 output_index=2 offset=" in marker
    assert head + _omitted(segments, marker) + tail == raw
    assert cut.omitted_lines == _omitted(segments, marker).count("\n")


def test_a_cut_across_several_outputs_names_each_of_them() -> None:
    segments = [Segment(i * 2, "".join(f"out{i} line {j}\n" for j in range(300))) for i in range(6)]
    raw = "".join(s.text for s in segments)
    cut = cut_windowed(segments, 800, render=render_line, cell_index=0)
    head, marker, tail = _split(cut.text)
    assert "then outputs" in marker and "then output_index=10 offset=0" in marker
    assert head + _omitted(segments, marker) + tail == raw


def test_a_mime_value_cut_names_its_mime_type() -> None:
    segments = [Segment(1, "x" * 10_000)]
    cut = cut_windowed(segments, 300, render=render_line, cell_index=4, mime_type="text/plain")
    head, marker, tail = _split(cut.text)
    assert "output_index=1 mime_type=text/plain offset=" in marker
    assert head.rstrip("\n") + _omitted(segments, marker) + tail == segments[0].text


def _unfold(text: str) -> str:
    """``text`` with every repeat note replaced by the lines it stands for."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    for line in lines:
        note = _REPEAT.fullmatch(line)
        out.extend([out[-1]] * int(note.group(1).replace(",", "")) if note else [line])
    return "".join(out)


def test_a_fifty_megabyte_stream_is_cut_to_the_limit() -> None:
    line = "epoch 0001 loss=0.123456 accuracy=0.987654 lr=0.001 elapsed=12.3s\n"
    raw = line * (50_000_000 // len(line))
    cut = cut_windowed([Segment(0, raw)], 5_000, render=render_line, cell_index=3)
    assert len(cut.text) <= 5_000
    head, marker, tail = _split(cut.text)
    assert head.startswith(line) and _unfold(tail).endswith(line)
    offset = int(re.search(r"offset=(\d+)", marker).group(1))  # type: ignore[union-attr]
    limit = int(re.search(r"limit=(\d+)", marker).group(1))  # type: ignore[union-attr]
    assert offset == len(_unfold(head)) and offset + limit == len(raw) - len(_unfold(tail))
    assert cut.omitted_characters == limit


def test_repeated_lines_fold_into_one_line_with_a_count() -> None:
    raw = "start\n" + "warning: slow\n" * 2000 + "done\n"
    cut = cut_windowed([Segment(0, raw)], 300, render=render_line, cell_index=0)
    assert not cut.truncated
    assert (
        cut.text == "start\nwarning: slow\n[… the line above repeated 1,999 more times …]\ndone\n"
    )
    assert _unfold(cut.text) == raw


def test_a_long_log_shows_a_few_lines_each_side_of_the_exact_read() -> None:
    raw = "".join(f"step {i}: loss={1 / (i + 1):.4f}\n" for i in range(3000))
    cut = cut_windowed(
        [Segment(0, raw)], 20_000, render=render_line, cell_index=2, max_lines=(5, 10)
    )
    head, marker, tail = _split(cut.text)
    assert head.count("\n") == 5 and tail.count("\n") == 10
    assert head + _omitted([Segment(0, raw)], marker) + tail == raw


def test_a_single_huge_line_is_cut_inside_the_line() -> None:
    raw = "0123456789" * 1_000_000
    cut = cut_windowed([Segment(0, raw)], 1_000, render=render_line, cell_index=None)
    assert len(cut.text) <= 1_000
    head, marker, tail = _split(cut.text)
    assert "cell_index=" not in marker
    assert head.rstrip("\n") + _omitted([Segment(0, raw)], marker) + tail == raw


def test_controls_in_a_cut_stream_are_rendered_and_the_range_covers_raw_lines() -> None:
    raw = "".join(f"\x1b[32mstep {i}\x1b[0m\r\x1b[32mstep {i} done\x1b[0m\n" for i in range(3000))
    cut = cut_windowed([Segment(0, raw)], 500, render=render_line, cell_index=0)
    assert "\x1b" not in cut.text and "\r" not in cut.text
    assert cut.text.startswith("step 0 done\n")
    assert cut.text.endswith("step 2999 done\n")


def test_every_limit_is_respected() -> None:
    raw = "".join(f"row {i}: " + "y" * (i % 37) + "\n" for i in range(400))
    for limit in range(0, 700, 7):
        assert (
            len(cut_windowed([Segment(0, raw)], limit, render=render_line, cell_index=9).text)
            <= limit
        )
        assert (
            len(cut_derived(raw, limit, how_to_read="read_notebook_output output_index=0").text)
            <= limit
        )
