"""Condensed outputs: a cell's saved outputs rendered for a model's context.

Pure: works on nbformat output dicts (``cell["outputs"]``), reads no file, starts no kernel.

What a model gets (:func:`condense_outputs`):

- one text, never longer than the character budget, made of one part per output, each
  introduced by a ``[output K: ...]`` line;
- streams of the same name merged in order (stdout and stderr apart, in order of first
  appearance), rendered as a terminal would show them (``\\r`` progress bars end as their
  final line, backspaces applied, every control sequence removed);
- long text cut head and tail with a marker giving the omitted size and the exact
  ``read_notebook_output cell_index=C output_index=K offset=N limit=L`` call that reads it;
- HTML tables as CSV (uniform) or JSON rows (spans, multi-level headers), rows cut from the
  middle with a count; never the ``text/plain`` repr as well;
- errors as ``ename: evalue`` and the frames that matter, control sequences removed;
- PNG/JPEG (and GIF/WebP) as images downscaled to fit a pixel and a byte cap; SVG, Plotly,
  Vega/Vega-Lite and widget outputs described in one line.

The budget is split max-min fair: outputs that need little get all they need, the rest share
what remains equally, so one huge output cannot starve the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jupyter_jcli.errors import UsageError

from ._budget import allocate
from ._images import DEFAULT_IMAGE_MAX_BYTES, DEFAULT_IMAGE_MAX_PIXELS
from ._model import (
    CondensedImage,
    CondensedImageDict,
    CondensedOutputs,
    CondensedOutputsDict,
    CondensedPart,
    CondensedPartDict,
    PartKind,
    ReadHint,
)
from ._plan import Plan, Rendered, plan_outputs
from ._rasters import attach_images
from ._text import clip

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_IMAGE_MAX_BYTES",
    "DEFAULT_IMAGE_MAX_PIXELS",
    "DEFAULT_MAX_IMAGES",
    "CondensedImage",
    "CondensedImageDict",
    "CondensedOutputs",
    "CondensedOutputsDict",
    "CondensedPart",
    "CondensedPartDict",
    "PartKind",
    "ReadHint",
    "condense_outputs",
]

DEFAULT_BUDGET = 10_000
"""Default character budget of the condensed text of one cell (about 2,500 tokens)."""
DEFAULT_MAX_IMAGES = 8
"""Default number of raster outputs returned as images per call; later ones are described."""
_MIN_BODY = 40  # characters a shown part gets at the least


def _check_positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name} must be a positive integer, got {value!r}.", {name: repr(value)})
    return value


def _omitted_note(indices: Sequence[int]) -> str:
    listed = ", ".join(map(str, indices[:5])) + (", …" if len(indices) > 5 else "")
    return (
        f"[… {len(indices)} more outputs not shown ({listed}): the budget is spent;"
        " read each with read_notebook_output …]"
    )


def _fit_count(headers: list[str], budget: int) -> int:
    """How many leading parts fit with at least ``_MIN_BODY`` characters each."""
    used = 0
    for count, header in enumerate(headers):
        rest = len(headers) - count - 1
        need = len(header) + 1 + _MIN_BODY + (1 if count else 0)
        note = len(_omitted_note(list(range(rest)))) + 1 + 8 if rest else 0
        if used + need + note > budget:
            return count
        used += need
    return len(headers)


def condense_outputs(
    outputs: Sequence[Mapping[str, Any]],
    *,
    budget: int = DEFAULT_BUDGET,
    cell_index: int | None = None,
    include_images: bool = True,
    image_max_pixels: int = DEFAULT_IMAGE_MAX_PIXELS,
    image_max_bytes: int = DEFAULT_IMAGE_MAX_BYTES,
    max_images: int = DEFAULT_MAX_IMAGES,
) -> CondensedOutputs:
    """Condense a cell's saved outputs for a model's context.

    Args:
        outputs: the cell's ``outputs`` list (nbformat v4 output dicts). Malformed entries are
            described in the text, never raised on.
        budget: the most characters :attr:`CondensedOutputs.text` may hold (>= 1).
        cell_index: the cell's physical index in the notebook, named in every
            ``read_notebook_output`` hint; None leaves it out of the hints.
        include_images: return rasters as images (else they are described in one line).
        image_max_pixels: cap on the longer side of a returned image, in pixels (>= 1).
        image_max_bytes: cap on the encoded size of a returned image, in bytes (>= 1).
        max_images: the most images returned (>= 0); later rasters are described.

    Returns:
        The condensed outputs. ``text`` length <= ``budget`` for any input.

    Raises:
        UsageError: ``USAGE_ERROR`` when ``budget``, ``image_max_pixels`` or
            ``image_max_bytes`` is not a positive integer or ``max_images`` is negative.
    """
    _check_positive("budget", budget)
    _check_positive("image_max_pixels", image_max_pixels)
    _check_positive("image_max_bytes", image_max_bytes)
    if isinstance(max_images, bool) or not isinstance(max_images, int) or max_images < 0:
        raise UsageError(f"max_images must be >= 0, got {max_images!r}.")
    plans = plan_outputs(outputs, cell_index)
    headers = [p.header() for p in plans]
    kept_count = _fit_count(headers, budget)
    kept, dropped = plans[:kept_count], plans[kept_count:]
    omitted = [i for p in dropped for i in (p.output_indices or [p.output_index])]
    note = _omitted_note(omitted) if omitted else ""

    images = attach_images(
        kept,
        include_images=include_images,
        max_side=image_max_pixels,
        max_bytes=image_max_bytes,
        max_images=max_images,
    )
    overhead = sum(len(h) + 1 for h in headers[:kept_count]) + max(0, kept_count - 1)
    overhead += len(note) + 1 if note else 0
    room = max(0, budget - overhead)
    first = [p.render(room) for p in kept]
    demands = [len(r.text) if not r.truncated else room + 1 for r in first]
    rooms = allocate(demands, room)
    rendered: list[Rendered] = [
        r if demand <= share else plan.render(share)
        for plan, r, demand, share in zip(kept, first, demands, rooms, strict=True)
    ]
    blocks = [
        f"{header}\n{r.text}" if r.text else header
        for header, r in zip(headers[:kept_count], rendered, strict=True)
    ]
    if note:
        blocks.append(note)
    text = "\n".join(blocks)
    truncated = bool(omitted) or any(r.truncated for r in rendered)
    if len(text) > budget:
        text, truncated = clip(text, budget), True
    parts = [_part(plan, r) for plan, r in zip(kept, rendered, strict=True)]
    return CondensedOutputs(text, images, parts, truncated, budget, tuple(omitted))


def _part(plan: Plan, rendered: Rendered) -> CondensedPart:
    return CondensedPart(
        output_index=plan.output_index,
        output_indices=tuple(plan.output_indices or [plan.output_index]),
        kind=plan.kind,
        mime_type=plan.mime_type,
        name=plan.name,
        text=rendered.text,
        truncated=rendered.truncated,
        omitted_characters=rendered.omitted_characters,
        omitted_lines=rendered.omitted_lines,
        omitted_rows=rendered.omitted_rows,
        omitted_frames=rendered.omitted_frames,
        read_hints=tuple(hint for hint in rendered.hints if hint.text in rendered.text),
    )
