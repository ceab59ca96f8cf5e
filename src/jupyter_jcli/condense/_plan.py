"""From nbformat output dicts to parts: what each shows and how it renders in a given room.

Output shapes follow the nbformat v4 schema (``stream``: ``name``, ``text``; ``error``:
``ename``, ``evalue``, ``traceback``; ``display_data``/``execute_result``: ``data`` (a MIME
bundle) and ``metadata``). Multiline strings may be stored as a string or a list of strings.

Choice within a MIME bundle, first match wins:

1. a raster (``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``): an image;
2. ``text/html`` holding a ``<table>``: the table as CSV or JSON rows (never also the
   ``text/plain`` repr), unless the HTML is a display rather than data: then the
   ``text/plain`` repr, its header saying a ``text/html`` is there too. A display is an HTML
   value beside a one-line ``text/plain`` repr (an object's own summary, such as
   ``LinearRegression()``), or a scikit-learn estimator diagram (``sk-top-container``: its
   tables are parameter documentation);
3. a widget, Plotly, Vega/Vega-Lite or SVG value: one line of description;
4. ``text/markdown``; ``text/plain`` unless it is a bare ``<... object>`` repr;
   ``text/latex``; the visible text of ``text/html``; ``application/json`` and other JSON
   types; then any ``text/plain``;
5. otherwise a line listing the MIME types present.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jupyter_jcli.condense._described import describe, is_described
from jupyter_jcli.condense._errors import render_error
from jupyter_jcli.condense._model import PartKind, ReadHint
from jupyter_jcli.condense._table_render import render_table
from jupyter_jcli.condense._tables import parse_html
from jupyter_jcli.condense._terminal import render_line
from jupyter_jcli.condense._text import Cut, Segment, clip, cut_derived, cut_windowed, read_hint
from jupyter_jcli.outputs import RASTER_MIME_TYPES, OutputProtocolError, decode_raster

__all__ = [
    "STREAM_CUT_LINES",
    "Plan",
    "RasterSource",
    "Rendered",
    "fixed_renderer",
    "join_text",
    "plan_outputs",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
_OBJECT_REPR = re.compile(r"^<[\w.]+(?: object)?(?: at 0x[0-9a-fA-F]+)?>$")
_TEXT_ORDER = ("text/markdown", "text/plain", "text/latex")
STREAM_CUT_LINES = (5, 5)
"""Lines of a cut stream shown (head, tail) by default: a long log's first and last lines,
next to the exact read of everything between (a cell's view among many). ``None`` instead
(``condense_outputs(stream_lines=None)``) lets the character budget alone size both, for a
summary that has the budget to itself."""


@dataclass(frozen=True)
class Rendered:
    """A part's body fitted to a room, with what was left out."""

    text: str
    truncated: bool = False
    omitted_characters: int = 0
    omitted_lines: int = 0
    omitted_rows: int = 0
    omitted_frames: int = 0
    hints: tuple[ReadHint, ...] = ()


@dataclass(frozen=True)
class RasterSource:
    """A raster value to downscale: its decoded bytes (None when invalid) and stored type."""

    raw: bytes | None
    mime_type: str
    problem: str = ""


@dataclass
class Plan:
    """One part before budgeting: header, identity, and a renderer taking a room in chars."""

    output_index: int
    kind: PartKind
    label: str
    render: Callable[[int], Rendered]
    mime_type: str | None = None
    name: str | None = None
    output_indices: list[int] = field(default_factory=list)
    raster: RasterSource | None = None

    def header(self) -> str:
        """The ``[output K: ...]`` line that introduces the part."""
        indices = self.output_indices or [self.output_index]
        if len(indices) == 1:
            where = f"output {indices[0]}"
        elif len(indices) <= 4:
            where = "outputs " + ", ".join(map(str, indices))
        else:
            where = f"outputs {indices[0]}-{indices[-1]} ({len(indices)} outputs)"
        return f"[{where}: {self.label}]"


def join_text(value: object) -> str | None:
    """A stored text value as one string, lone surrogates as U+FFFD (same length)."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "".join(value)
    if not isinstance(value, str):
        return None
    return value if value.isascii() else _SURROGATE.sub("\ufffd", value)


def _from_cut(cut: Cut, **extra: int) -> Rendered:
    return Rendered(
        cut.text, cut.truncated, cut.omitted_characters, cut.omitted_lines, **extra, hints=cut.hints
    )


def fixed_renderer(text: str) -> Callable[[int], Rendered]:
    """A renderer for a text that is never cut except to fit a room smaller than it."""

    def render(limit: int) -> Rendered:
        shown = clip(text, limit)
        return Rendered(shown, shown != text, len(text) - len(shown))

    return render


def _stream_plan(
    index: int, name: str, cell: int | None, lines: tuple[int, int] | None
) -> tuple[Plan, list[Segment]]:
    segments: list[Segment] = []

    def render(limit: int) -> Rendered:
        cut = cut_windowed(segments, limit, render=render_line, cell_index=cell, max_lines=lines)
        return _from_cut(cut)

    plan = Plan(index, "stream", name, render, name=name, output_indices=[index])
    return plan, segments


def _error_plan(index: int, output: Mapping[str, Any], cell: int | None) -> Plan:
    view = render_error(output)
    hint = read_hint(cell, index)
    how = hint.text + " (the full traceback)"

    def render(limit: int) -> Rendered:
        cut = cut_derived(view.text, limit, how_to_read=how, hint=hint)
        return _from_cut(cut, omitted_frames=view.omitted_frames)

    return Plan(index, "error", "error", render)


def _table_plan(index: int, html: str, cell: int | None, output_type: str) -> Plan | None:
    if "<table" not in html.lower():
        return None
    parsed = parse_html(html)
    if not parsed.tables:
        return None
    hint = read_hint(cell, index, mime_type="text/html")
    how = hint.text
    tables = parsed.tables

    def render(limit: int) -> Rendered:
        pieces: list[str] = []
        used = 0
        omitted_rows = 0
        for number, table in enumerate(tables, start=1):
            share = (limit - used) // (len(tables) - number + 1) - 1
            ordinal = "table" if len(tables) == 1 else f"table {number} of {len(tables)}"
            text, omitted = render_table(table, max(0, share), ordinal=ordinal, how_to_read=how)
            pieces.append(text)
            used += len(text) + 1
            omitted_rows += omitted
        if parsed.footer:
            pieces.append(parsed.footer)
        full = "\n".join(pieces)
        shown = clip(full, limit)
        hints = (hint,) if how in shown else ()
        return Rendered(
            shown, omitted_rows > 0 or shown != full, omitted_rows=omitted_rows, hints=hints
        )

    label = f"{output_type}, text/html table"
    return Plan(index, "table", label, render, mime_type="text/html")


def _text_plan(index: int, mime: str, text: str, cell: int | None, output_type: str) -> Plan:
    segments = [Segment(index, text)]

    def render(limit: int) -> Rendered:
        cut = cut_windowed(segments, limit, render=render_line, cell_index=cell, mime_type=mime)
        return _from_cut(cut)

    return Plan(index, "text", f"{output_type}, {mime}", render, mime_type=mime)


def _derived_plan(
    index: int, kind: PartKind, mime: str, text: str, *, cell: int | None, output_type: str
) -> Plan:
    hint = read_hint(cell, index, mime_type=mime)

    def render(limit: int) -> Rendered:
        return _from_cut(cut_derived(text, limit, how_to_read=hint.text, hint=hint))

    return Plan(index, kind, f"{output_type}, {mime}", render, mime_type=mime)


def _is_display(html: str, plain: str) -> bool:
    """Whether an HTML value is a display of an object rather than data (see rule 2)."""
    stripped = plain.strip()
    if not stripped or _OBJECT_REPR.match(stripped):
        return False
    return "\n" not in stripped or "sk-top-container" in html


def _bundle_plan(index: int, output: Mapping[str, Any], cell: int | None) -> Plan:
    output_type = str(output.get("output_type"))
    data = output.get("data")
    if not isinstance(data, Mapping):
        return Plan(
            index, "invalid", "malformed", fixed_renderer(f"{output_type} without a MIME bundle")
        )
    bundle: dict[str, Any] = {k: v for k, v in data.items() if isinstance(k, str)}
    for mime in RASTER_MIME_TYPES:
        if mime in bundle:
            try:
                raw: bytes | None = decode_raster(mime, bundle[mime]).raw
                problem = ""
            except OutputProtocolError as err:
                raw, problem = None, err.message
            plan = Plan(
                index, "image", f"{output_type}, {mime}", fixed_renderer(""), mime_type=mime
            )
            plan.raster = RasterSource(raw, mime, problem)
            return plan
    html = join_text(bundle.get("text/html"))
    plain = join_text(bundle.get("text/plain")) or ""
    if html is not None and _is_display(html, plain):
        plan = _text_plan(index, "text/plain", plain, cell, output_type)
        plan.label += " (text/html too)"
        return plan
    if html is not None and (table := _table_plan(index, html, cell, output_type)):
        return table
    for mime, value in bundle.items():
        if is_described(mime):
            line = describe(mime, value, text_fallback=plain)
            return Plan(
                index, "described", f"{output_type}, {mime}", fixed_renderer(line), mime_type=mime
            )
    for mime in _TEXT_ORDER:
        text = join_text(bundle.get(mime))
        if text is not None and not (mime == "text/plain" and _OBJECT_REPR.match(text.strip())):
            return _text_plan(index, mime, text, cell, output_type)
    if html is not None:
        parsed = parse_html(html)
        visible = parsed.text or "(HTML with no visible text: scripts or styles only)"
        return _derived_plan(
            index, "text", "text/html", visible, cell=cell, output_type=output_type
        )
    for mime, value in bundle.items():
        if mime == "application/json" or mime.endswith("json"):
            dumped = json.dumps(value, ensure_ascii=False, default=str)
            return _derived_plan(index, "json", mime, dumped, cell=cell, output_type=output_type)
    if plain:
        return _text_plan(index, "text/plain", plain, cell, output_type)
    listed = ", ".join(sorted(bundle)) or "none"
    line = f"no representation to show; MIME types: {listed}"
    return Plan(index, "described", output_type, fixed_renderer(line))


def plan_outputs(
    outputs: Sequence[object],
    cell_index: int | None,
    stream_lines: tuple[int, int] | None = STREAM_CUT_LINES,
) -> list[Plan]:
    """One plan per output, in order; streams of one name merged into the first one's plan
    (a cut stream shows at most ``stream_lines`` (head, tail) lines, ``None``: as many as
    its room holds).

    Malformed outputs (not a dict, unknown ``output_type``, wrong field types) become
    ``invalid`` plans that say what is wrong; nothing raises.
    """
    plans: list[Plan] = []
    streams: dict[str, tuple[Plan, list[Segment]]] = {}
    for index, output in enumerate(outputs):
        if not isinstance(output, Mapping):
            plans.append(
                Plan(index, "invalid", "malformed", fixed_renderer("not an output object"))
            )
            continue
        output_type = output.get("output_type")
        if output_type == "stream":
            name = output.get("name") if isinstance(output.get("name"), str) else "stream"
            text = join_text(output.get("text"))
            if text is None:
                plans.append(
                    Plan(index, "invalid", "malformed", fixed_renderer("stream without text"))
                )
                continue
            if str(name) not in streams:
                streams[str(name)] = _stream_plan(index, str(name), cell_index, stream_lines)
                plans.append(streams[str(name)][0])
            plan, segments = streams[str(name)]
            if plan.output_indices[-1] != index:
                plan.output_indices.append(index)
            segments.append(Segment(index, text))
        elif output_type == "error":
            plans.append(_error_plan(index, output, cell_index))
        elif output_type in ("display_data", "execute_result"):
            plans.append(_bundle_plan(index, output, cell_index))
        else:
            line = f"unknown output_type {output_type!r}"
            plans.append(Plan(index, "invalid", "unknown", fixed_renderer(line)))
    for plan, _segments in streams.values():
        if len(plan.output_indices) > 1:
            plan.label = f"{plan.name}, merged"
    return plans
