"""Condensing one cell's outputs: fit the parts to the budget, share it, render, assemble.

The public surface and the description of what a model gets live in
:mod:`jupyter_jcli.condense`; this module holds the algorithm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jupyter_jcli.condense._budget import allocate
from jupyter_jcli.condense._images import DEFAULT_IMAGE_MAX_BYTES, DEFAULT_IMAGE_MAX_PIXELS
from jupyter_jcli.condense._model import CondensedOutputs, CondensedPart
from jupyter_jcli.condense._plan import STREAM_CUT_LINES, Plan, Rendered, plan_outputs
from jupyter_jcli.condense._rasters import attach_images
from jupyter_jcli.condense._text import clip
from jupyter_jcli.errors import UsageError

__all__ = ["DEFAULT_BUDGET", "DEFAULT_MAX_IMAGES", "condense_outputs"]

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
    stream_lines: tuple[int, int] | None = STREAM_CUT_LINES,
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
        stream_lines: the most lines (head, tail) a cut stream shows, whatever room it has
            (:data:`~jupyter_jcli.condense._plan.STREAM_CUT_LINES`, a cell's compact view);
            ``None``: the budget alone sizes them (a summary with the budget to itself).

    Returns:
        The condensed outputs. ``text`` length <= ``budget`` for any input.

    Raises:
        UsageError: ``USAGE_ERROR`` when ``budget``, ``image_max_pixels`` or
            ``image_max_bytes`` is not a positive integer, ``max_images`` is negative or
            ``stream_lines`` is not ``None`` or two positive integers.
    """
    _check_positive("budget", budget)
    _check_positive("image_max_pixels", image_max_pixels)
    _check_positive("image_max_bytes", image_max_bytes)
    if isinstance(max_images, bool) or not isinstance(max_images, int) or max_images < 0:
        raise UsageError(f"max_images must be >= 0, got {max_images!r}.")
    if stream_lines is not None:
        if not isinstance(stream_lines, tuple) or len(stream_lines) != 2:
            raise UsageError(f"stream_lines must be (head, tail) or None, got {stream_lines!r}.")
        for side in stream_lines:
            _check_positive("stream_lines", side)
    plans = plan_outputs(outputs, cell_index, stream_lines)
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
