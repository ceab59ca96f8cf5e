"""Turning the raster parts of a plan into images and their one-line descriptions."""

from __future__ import annotations

from collections.abc import Sequence

from jupyter_jcli.condense._images import downscale, probe
from jupyter_jcli.condense._model import CondensedImage
from jupyter_jcli.condense._plan import Plan, fixed_renderer

__all__ = ["attach_images", "attached_as"]


def attached_as(number: int) -> str:
    """The words of an image line naming the attached image ``number`` (0-based, the
    image's position in the condensed outputs' ``images``; a front end that sends images of
    several cells in one result renumbers these words to the result's own order)."""
    return f"attached as image {number}"


def _size(count: int) -> str:
    return f"{count / 1000:,.1f} KB" if count >= 1000 else f"{count} bytes"


def attach_images(
    plans: Sequence[Plan],
    *,
    include_images: bool,
    max_side: int,
    max_bytes: int,
    max_images: int,
) -> list[CondensedImage]:
    """Downscale the rasters of ``plans`` (the first ``max_images``) and describe every one.

    Each raster plan's text becomes one line: what was stored, and either which attached
    image shows it (its 0-based number in the returned list, see :func:`attached_as`; pixel
    size, type, bytes) or why it is not attached.
    """
    images: list[CondensedImage] = []
    for plan in plans:
        source = plan.raster
        if source is None:
            continue
        stored = source.mime_type
        if source.raw is None:
            plan.render = fixed_renderer(f"{stored} not shown: {source.problem}")
            continue
        dims = probe(source.raw)
        shape = f"{dims[0]}x{dims[1]} px, " if dims else ""
        what = f"{stored}, {shape}{_size(len(source.raw))}"
        if not include_images:
            plan.render = fixed_renderer(f"{what}; not attached (images are off)")
            continue
        if len(images) >= max_images:
            plan.render = fixed_renderer(f"{what}; not attached (limit of {max_images} images)")
            continue
        try:
            image = downscale(
                source.raw,
                stored,
                max_side=max_side,
                max_bytes=max_bytes,
                output_index=plan.output_index,
            )
        except ValueError as err:
            plan.render = fixed_renderer(f"{what}; not attached: {err}")
            continue
        images.append(image)
        if image.data is source.raw:
            detail = "as stored"
        else:
            detail = f"{image.width}x{image.height} px, {image.mime_type}, {_size(len(image.data))}"
        reference = attached_as(len(images) - 1)
        plan.render = fixed_renderer(f"{what}; {reference} ({detail})")
    return images
