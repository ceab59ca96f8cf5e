"""The results of condensing: parts, images and the whole, each convertible to JSON."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypedDict

__all__ = [
    "CondensedImage",
    "CondensedImageDict",
    "CondensedOutputs",
    "CondensedOutputsDict",
    "CondensedPart",
    "CondensedPartDict",
    "PartKind",
    "ReadHint",
]

PartKind = Literal["stream", "table", "text", "error", "image", "described", "json", "invalid"]
"""What a part shows: merged stream text, an HTML table as CSV/JSON rows, a text
representation (plain, Markdown, LaTeX, the text of HTML), a condensed error, a raster image,
a one-line description (SVG, Plotly, Vega, widgets, unknown types), JSON, or a malformed
output's problem."""


@dataclass(frozen=True)
class ReadHint:
    """A structured "how to read what was cut" hint, as it appears in a part's text.

    The condensed text names the read as a ``read_notebook_output`` tool call (the MCP front
    ends show it as is); :attr:`text` is the exact substring of the part's text that names
    it, so another front end can replace it with its own command (``j-cli notebook output
    FILE --cell C --output K ...``) without parsing text.

    Attributes:
        cell_index: the cell (``None`` when the caller gave none).
        output_index: the output to read.
        mime_type: the MIME type to ask for, or ``None`` (automatic choice).
        offset: the first character of the page, or ``None`` (the whole text).
        limit: the page size in characters, or ``None``.
        text: the substring of the part's text naming this read.
        lead: words before :attr:`text` that belong to the hint (``"then "`` for the
            second read of a range spanning outputs), kept by a front end that rewrites it.
    """

    cell_index: int | None
    output_index: int
    mime_type: str | None = None
    offset: int | None = None
    limit: int | None = None
    text: str = field(default="", compare=False)
    lead: str = field(default="", compare=False)

    def options(self) -> list[str]:
        """The read as command-line options: ``--output K``, then ``--mime``, ``--offset``
        and ``--limit`` where set."""
        words = ["--output", str(self.output_index)]
        if self.mime_type is not None:
            words += ["--mime", self.mime_type]
        if self.offset is not None:
            words += ["--offset", str(self.offset)]
        if self.limit is not None:
            words += ["--limit", str(self.limit)]
        return words


class CondensedImageDict(TypedDict):
    """JSON form of :class:`CondensedImage` (``data`` as base64)."""

    output_index: int
    mime_type: str
    data: str
    bytes: int
    width: int
    height: int
    original_width: int
    original_height: int


class CondensedPartDict(TypedDict):
    """JSON form of :class:`CondensedPart`."""

    output_index: int
    output_indices: list[int]
    kind: str
    mime_type: str | None
    name: str | None
    text: str
    truncated: bool
    omitted_characters: int
    omitted_lines: int
    omitted_rows: int
    omitted_frames: int


class CondensedOutputsDict(TypedDict):
    """JSON form of :class:`CondensedOutputs`."""

    text: str
    budget: int
    truncated: bool
    parts: list[CondensedPartDict]
    images: list[CondensedImageDict]
    omitted_outputs: list[int]


@dataclass(frozen=True)
class CondensedImage:
    """A raster output as image content for a model (e.g. an MCP ``ImageContent``).

    Attributes:
        data: the encoded image (PNG or JPEG bytes).
        mime_type: ``image/png`` or ``image/jpeg``.
        width: pixel width sent.
        height: pixel height sent.
        original_width: pixel width stored in the notebook.
        original_height: pixel height stored in the notebook.
        output_index: the physical index of the output in ``cell.outputs``.
    """

    data: bytes
    mime_type: str
    width: int
    height: int
    original_width: int
    original_height: int
    output_index: int

    def to_dict(self) -> CondensedImageDict:
        """JSON-safe form; ``data`` is canonical base64, ``bytes`` its decoded size."""
        return {
            "output_index": self.output_index,
            "mime_type": self.mime_type,
            "data": base64.b64encode(self.data).decode("ascii"),
            "bytes": len(self.data),
            "width": self.width,
            "height": self.height,
            "original_width": self.original_width,
            "original_height": self.original_height,
        }


@dataclass(frozen=True)
class CondensedPart:
    """What one output (or one merged stream) contributes to the condensed text.

    Attributes:
        output_index: the physical index of the (first) output in ``cell.outputs``.
        output_indices: every output merged into this part (several for a stream).
        kind: see :data:`PartKind`.
        mime_type: the MIME type shown, for ``display_data``/``execute_result``; else None.
        name: the stream name (``stdout``, ``stderr``) for streams; else None.
        text: the part's text as it appears in :attr:`CondensedOutputs.text` (after its
            ``[output ...]`` header line).
        truncated: True when something of this output was left out.
        omitted_characters: characters left out (raw stored characters for streams and text).
        omitted_lines: line breaks inside what was left out.
        omitted_rows: table rows left out.
        omitted_frames: traceback frames left out.
        read_hints: the reads named in :attr:`text` (see :class:`ReadHint`), in order.
    """

    output_index: int
    output_indices: tuple[int, ...]
    kind: PartKind
    mime_type: str | None
    name: str | None
    text: str
    truncated: bool
    omitted_characters: int = 0
    omitted_lines: int = 0
    omitted_rows: int = 0
    omitted_frames: int = 0
    read_hints: tuple[ReadHint, ...] = ()

    def to_dict(self) -> CondensedPartDict:
        """JSON-safe form (:attr:`read_hints` are for front ends; the text carries them)."""
        return {
            "output_index": self.output_index,
            "output_indices": list(self.output_indices),
            "kind": self.kind,
            "mime_type": self.mime_type,
            "name": self.name,
            "text": self.text,
            "truncated": self.truncated,
            "omitted_characters": self.omitted_characters,
            "omitted_lines": self.omitted_lines,
            "omitted_rows": self.omitted_rows,
            "omitted_frames": self.omitted_frames,
        }


@dataclass(frozen=True)
class CondensedOutputs:
    """A cell's outputs as a model should see them.

    Attributes:
        text: what the model reads; at most ``budget`` characters, always.
        images: raster outputs as downscaled images, in output order.
        parts: one entry per shown output (streams of one name merged), in output order.
        truncated: True when anything was cut or left out.
        budget: the character budget ``text`` was fitted to.
        omitted_outputs: indexes of outputs left out entirely (the budget could not even
            hold their header); the text says so.
    """

    text: str
    images: list[CondensedImage]
    parts: list[CondensedPart]
    truncated: bool
    budget: int
    omitted_outputs: tuple[int, ...] = ()

    def to_dict(self) -> CondensedOutputsDict:
        """JSON-safe form (images as base64)."""
        return {
            "text": self.text,
            "budget": self.budget,
            "truncated": self.truncated,
            "parts": [p.to_dict() for p in self.parts],
            "images": [i.to_dict() for i in self.images],
            "omitted_outputs": list(self.omitted_outputs),
        }

    def text_with_hints(self, command: Callable[[ReadHint], str]) -> str:
        """:attr:`text` with each read hint of the parts (its :attr:`ReadHint.text`, found in
        order) replaced by ``command(hint)``, the hint's ``lead`` kept."""
        text = self.text
        pieces: list[str] = []
        cursor = 0
        for part in self.parts:
            for hint in part.read_hints:
                found = text.find(hint.lead + hint.text, cursor)
                if found < 0:
                    continue
                pieces += [text[cursor:found], hint.lead + command(hint)]
                cursor = found + len(hint.lead) + len(hint.text)
        pieces.append(text[cursor:])
        return "".join(pieces)
