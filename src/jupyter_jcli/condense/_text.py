"""Head-and-tail cuts of long text, with a marker that says what was left out and how to read it.

Two kinds of text are cut here:

- *windowed* text: one or more raw stored values (the merged outputs of one stream, or one
  text MIME value) rendered line by line. The cut happens on rendered lines, but the marker
  names the omitted range in the raw stored text, in the saved-output protocol's own terms
  (``read_notebook_output cell_index=C output_index=K [mime_type=M] offset=N limit=L``, in
  the tool's argument names; offsets count Unicode code points of the joined stored value),
  so a reader can fetch exactly what was left out;
- *derived* text (a condensed traceback, a JSON dump, the text of an HTML page): the marker
  counts what was omitted and names the output to read in full.

Only the lines that are shown are rendered, so a 50 MB stream costs about what its head and
tail cost. Every function here returns at most ``limit`` characters.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from jupyter_jcli.condense._model import ReadHint
from jupyter_jcli.condense._terminal import has_controls

__all__ = [
    "Cut",
    "Segment",
    "clip",
    "cut_derived",
    "cut_windowed",
    "read_hint",
]

_HEAD_SHARE = 0.4  # of the room left after the marker; the tail (where logs end) gets the rest
_MAX_SCAN_LINES = 50_000  # lines rendered per side at most, whatever they render to
_ELLIPSIS = "…"
_MAX_LISTED = 8  # outputs named one by one in a marker that spans several


@dataclass(frozen=True)
class Segment:
    """One stored text value: the output it belongs to and its raw (joined) text."""

    output_index: int
    text: str


@dataclass(frozen=True)
class Cut:
    """A possibly shortened text.

    Attributes:
        text: what to show, at most the requested limit in characters.
        truncated: True when something was left out.
        omitted_characters: characters left out (raw stored characters for windowed text).
        omitted_lines: line breaks inside the omitted range.
    """

    text: str
    truncated: bool
    omitted_characters: int = 0
    omitted_lines: int = 0
    hints: tuple[ReadHint, ...] = ()


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``…`` when cut."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    return text[: limit - 1] + _ELLIPSIS


def read_hint(
    cell_index: int | None,
    output_index: int,
    *,
    mime_type: str | None = None,
    offset: int | None = None,
    limit: int | None = None,
) -> ReadHint:
    """The read of (part of) one stored output, with its ``read_notebook_output`` call text."""
    words = ["read_notebook_output"]
    if cell_index is not None:
        words.append(f"cell_index={cell_index}")
    words.append(f"output_index={output_index}")
    if mime_type is not None:
        words.append(f"mime_type={mime_type}")
    if offset is not None:
        words.append(f"offset={offset}")
    if limit is not None:
        words.append(f"limit={limit}")
    return ReadHint(cell_index, output_index, mime_type, offset, limit, " ".join(words))


@dataclass
class _Side:
    """Rendered pieces taken from one end of the text and the raw position reached."""

    pieces: list[str]
    size: int
    raw_edge: int  # head: first raw index not shown; tail: first raw index shown
    partial_dirty: bool = False


class _Limits(NamedTuple):
    """What one side (head or tail) may take: ``cap`` characters, each line through
    ``render``; a part of the first line when ``allow_partial``; at most ``max_lines`` lines;
    repeats of a line folded into a count note when ``collapse``."""

    cap: int
    render: Callable[[str], str]
    allow_partial: bool
    max_lines: int | None = None
    collapse: bool = False


def _repeat_note(count: int) -> str:
    return f"[… the line above repeated {count:,} more times …]\n"


def _folded(piece: str, count: int) -> str:
    """``count`` more copies of ``piece``: a count note when that is shorter, else the copies."""
    note = _repeat_note(count)
    return note if len(note) < count * len(piece) else piece * count


def _take_head(raw: str, stop: int, limits: _Limits) -> _Side:
    cap, render, allow_partial, max_lines, collapse = limits
    side = _Side([], 0, 0)
    pos = 0
    scanned = 0
    last = ""  # the last line piece shown (repeats of it fold into ``run``)
    run = 0
    lines = 0
    while pos < stop and scanned < _MAX_SCAN_LINES:
        newline = raw.find("\n", pos, stop)
        end = stop if newline == -1 else newline
        line = raw[pos:end]
        shown = render(line)
        piece = shown + ("\n" if newline != -1 else "")
        scanned += 1
        if collapse and lines and piece == last:
            if side.size + len(_folded(piece, run + 1)) > cap:
                break
            run += 1
            pos = end + 1 if newline != -1 else end
            side.raw_edge = pos
            continue
        if run:
            folded = _folded(last, run)
            side.pieces.append(folded)
            side.size += len(folded)
            run = 0
        if max_lines is not None and lines >= max_lines:
            return side
        if side.size + len(piece) > cap:
            room = cap - side.size
            if allow_partial and not side.pieces and room > 0:
                side.pieces.append(shown[:room])
                side.size += room
                if has_controls(line):
                    side.partial_dirty = True
                    side.raw_edge = pos
                else:
                    side.raw_edge = pos + room
            return side
        side.pieces.append(piece)
        side.size += len(piece)
        last = piece
        lines += 1
        pos = end + 1 if newline != -1 else end
        side.raw_edge = pos
    if run:
        folded = _folded(last, run)
        side.pieces.append(folded)
        side.size += len(folded)
    return side


def _take_tail(raw: str, start: int, limits: _Limits) -> _Side:
    cap, render, allow_partial, max_lines, collapse = limits
    side = _Side([], 0, len(raw))
    end = len(raw)  # exclusive end of the current line's text (before its own newline)
    scanned = 0
    last = ""
    run = 0
    lines = 0

    def fold() -> None:
        # pieces are collected backwards: the note goes before the line it follows
        folded = _folded(last, run)
        side.pieces.insert(len(side.pieces) - 1, folded)
        side.size += len(folded)

    # The text after the last newline is a line of its own (possibly empty).
    while end >= start and scanned < _MAX_SCAN_LINES:
        newline = raw.rfind("\n", start, end)
        begin = start if newline == -1 else newline + 1
        line = raw[begin:end]
        shown = render(line)
        has_break = end < len(raw)
        piece = shown + ("\n" if has_break else "")
        scanned += 1
        if collapse and lines and piece == last:
            if side.size + len(_folded(piece, run + 1)) > cap:
                break
            run += 1
            side.raw_edge = begin
        else:
            if run:
                fold()
                run = 0
            if max_lines is not None and lines >= max_lines:
                break
            if side.size + len(piece) > cap:
                room = cap - side.size
                if allow_partial and not side.pieces and room > 0:
                    kept = piece[-room:]
                    side.pieces.append(kept)
                    side.size += len(kept)
                    side.raw_edge = end if has_controls(line) else end - len(kept) + int(has_break)
                break
            side.pieces.append(piece)
            side.size += len(piece)
            side.raw_edge = begin
            last = piece
            lines += 1 if piece else 0  # the empty text after a final newline is no line
        if newline == -1:
            break
        end = newline
    if run:
        fold()
    side.pieces.reverse()
    return side


def _locate(starts: Sequence[int], position: int) -> int:
    """Index of the segment holding raw ``position`` (segments are laid end to end)."""
    return max(0, bisect.bisect_right(starts, position) - 1)


def _window_marker(
    segments: Sequence[Segment],
    starts: Sequence[int],
    begin: int,
    end: int,
    *,
    cell_index: int | None,
    mime_type: str | None,
) -> tuple[str, tuple[ReadHint, ...]]:
    first = _locate(starts, begin)
    last = _locate(starts, max(begin, end - 1))
    if first == last:
        seg = segments[first]
        local = begin - starts[first]
        hint = read_hint(
            cell_index, seg.output_index, mime_type=mime_type, offset=local, limit=end - begin
        )
        return hint.text, (hint,)
    head = segments[first]
    tail = segments[last]
    first_hint = read_hint(
        cell_index,
        head.output_index,
        mime_type=mime_type,
        offset=begin - starts[first],
        limit=starts[first] + len(head.text) - begin,
    )
    how = first_hint.text
    middle = [segments[i].output_index for i in range(first + 1, last)]
    if len(middle) <= _MAX_LISTED:
        how += f", then outputs {', '.join(map(str, middle))} in full" if middle else ""
    else:
        how += f", then the {len(middle)} outputs {middle[0]} … {middle[-1]} of this stream in full"
    tail_limit = end - starts[last]
    tail_text = f"output_index={tail.output_index} offset=0 limit={tail_limit}"
    tail_hint = ReadHint(
        cell_index, tail.output_index, mime_type, 0, tail_limit, tail_text, "then "
    )
    how += f", then {tail_text}"
    return how, (first_hint, tail_hint)


def cut_windowed(
    segments: Sequence[Segment],
    limit: int,
    *,
    render: Callable[[str], str],
    cell_index: int | None,
    mime_type: str | None = None,
    max_lines: tuple[int, int] | None = None,
) -> Cut:
    """Render raw stored text line by line and cut it head and tail to ``limit`` characters.

    Args:
        segments: stored values in order, joined end to end before rendering (a ``\\r`` in
            one output may overwrite a partial line of the previous one, as on a terminal).
        limit: the most characters to return.
        render: renders one raw line (no ``\\n``) to what is shown; never longer than the line.
        cell_index: the cell, named in the marker; None leaves it out.
        mime_type: the MIME type to name in the marker (None for streams).
        max_lines: the most lines shown (head, tail) when the text is cut (a long log
            needs only its first and last lines next to the exact read); None: as many as
            ``limit`` holds.

    Text that does not fit ``limit`` as stored is shown with runs of identical lines folded
    into one line and a count (``[… the line above repeated N more times …]``, used only
    where shorter than the lines it stands for); when that fits, nothing else is cut.

    Returns:
        The cut text. When cut, one marker line sits between head and tail:
        ``[… N raw characters (L lines) omitted; read exactly: read_notebook_output
        cell_index=C output_index=K offset=N limit=M …]``. The range includes a partly shown
        line whenever that line held control characters (its raw and shown positions differ).
    """
    raw = "".join(s.text for s in segments)
    starts: list[int] = []
    position = 0
    for s in segments:
        starts.append(position)
        position += len(s.text)
    whole = _take_head(raw, len(raw), _Limits(limit, render, allow_partial=False))
    if whole.raw_edge >= len(raw) and whole.size <= limit:
        return Cut("".join(whole.pieces), truncated=False)
    folded = _take_head(raw, len(raw), _Limits(limit, render, False, collapse=True))
    if folded.raw_edge >= len(raw) and folded.size <= limit:
        return Cut("".join(folded.pieces), truncated=False)
    head_lines, tail_lines = max_lines if max_lines is not None else (None, None)
    digits = len(str(len(raw)))
    full_span, _ = _window_marker(
        segments, starts, 0, len(raw), cell_index=cell_index, mime_type=mime_type
    )
    # Any real span names at most as many outputs; its numbers have at most ``digits`` digits.
    worst = len(_marker(len(raw), len(raw), full_span)) + 4 * digits + 2
    room = limit - worst
    if room < 2:
        return Cut(clip(_short_marker(len(raw)), limit), True, len(raw), raw.count("\n"))
    head_cap = int(room * _HEAD_SHARE)
    head = _take_head(raw, len(raw), _Limits(head_cap, render, True, head_lines, collapse=True))
    tail = _take_tail(
        raw, head.raw_edge, _Limits(room - head.size, render, True, tail_lines, collapse=True)
    )
    begin, end = head.raw_edge, max(head.raw_edge, tail.raw_edge)
    omitted_lines = raw.count("\n", begin, end)
    how, hints = _window_marker(
        segments, starts, begin, end, cell_index=cell_index, mime_type=mime_type
    )
    marker = _marker(end - begin, omitted_lines, how)
    head_text = "".join(head.pieces)
    glue = "" if not head_text or head_text.endswith("\n") else "\n"
    text = f"{head_text}{glue}{marker}\n{''.join(tail.pieces)}"
    return Cut(clip(text, limit), True, end - begin, omitted_lines, hints)


def _marker(characters: int, lines: int, how: str) -> str:
    return f"[… {characters:,} raw characters ({lines:,} lines) omitted; read exactly: {how} …]"


def _short_marker(omitted: int) -> str:
    return f"[… {omitted:,} characters omitted …]"


def cut_derived(text: str, limit: int, *, how_to_read: str, hint: ReadHint | None = None) -> Cut:
    """Cut already rendered ``text`` head and tail, by lines, to ``limit`` characters.

    Args:
        text: the rendered text.
        limit: the most characters to return.
        how_to_read: what the marker tells the reader to call for the full content.
        hint: the structured form of the read named in ``how_to_read`` (kept in the cut).

    Returns:
        The cut text, with the marker ``[… N characters (L lines) omitted; in full:
        <how_to_read> …]`` between head and tail when cut.
    """
    if len(text) <= limit:
        return Cut(text, truncated=False)
    worst = f"[… {len(text):,} characters ({len(text):,} lines) omitted; in full: {how_to_read} …]"
    room = limit - len(worst) - 2
    if room < 2:
        return Cut(clip(_short_marker(len(text)), limit), True, len(text), text.count("\n"))

    def identity(line: str) -> str:
        return line

    head = _take_head(text, len(text), _Limits(int(room * _HEAD_SHARE), identity, True))
    tail = _take_tail(text, head.raw_edge, _Limits(room - head.size, identity, True))
    begin, end = head.raw_edge, max(head.raw_edge, tail.raw_edge)
    omitted_lines = text.count("\n", begin, end)
    marker = (
        f"[… {end - begin:,} characters ({omitted_lines:,} lines) omitted;"
        f" in full: {how_to_read} …]"
    )
    head_text = "".join(head.pieces)
    glue = "" if not head_text or head_text.endswith("\n") else "\n"
    joined = f"{head_text}{glue}{marker}\n{''.join(tail.pieces)}"
    hints = (hint,) if hint is not None else ()
    return Cut(clip(joined, limit), True, end - begin, omitted_lines, hints)
