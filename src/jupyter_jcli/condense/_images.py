"""Raster images downscaled with Pillow to fit a pixel cap and a byte cap.

Defaults (see :data:`DEFAULT_IMAGE_MAX_PIXELS`, :data:`DEFAULT_IMAGE_MAX_BYTES`): the longer
side at most 1024 px and the encoded image at most 300 KB. Both sit well inside what vision
models take without resizing on their side (Anthropic documents about 1568 px on the long edge
and 5 MB per image), and 300 KB of base64 keeps a tool result cheap.

Rules:

- PNG and JPEG that already fit both caps are passed through byte for byte.
- Otherwise the image is resized (Lanczos) to fit the pixel cap and re-encoded as the
  smallest of: optimized PNG; for a chart-like image (at most 4,096 distinct colours after
  resizing: flat colours and their anti-aliasing), a 256-colour palette PNG (resampling
  blends colours, so a plain PNG of a downscaled chart can be twice its original's size);
  for a photo-like one (more colours, no transparency), JPEG (quality 85). An alpha channel
  that is opaque everywhere is dropped first.
- The result is never larger in bytes than the stored image: over that, or over the byte
  cap, the sides shrink by a quarter at a time (JPEG quality stepping down for photos) until
  it fits or reaches 64 px (then the byte cap alone decides).
- GIF and WebP are converted the same way (first frame), since not every client shows them.

Pillow is imported inside :func:`downscale` only.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from jupyter_jcli.condense._model import CondensedImage

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

__all__ = [
    "DEFAULT_IMAGE_MAX_BYTES",
    "DEFAULT_IMAGE_MAX_PIXELS",
    "downscale",
    "probe",
]

DEFAULT_IMAGE_MAX_PIXELS = 1024
"""Default cap on the longer side of a returned image, in pixels."""
DEFAULT_IMAGE_MAX_BYTES = 300_000
"""Default cap on the encoded size of a returned image, in bytes."""
_PHOTO_COLOURS = 4096
_PALETTE_COLOURS = 256
_MIN_SIDE = 64


def probe(raw: bytes) -> tuple[int, int] | None:
    """Pixel ``(width, height)`` from the image header, or None when Pillow cannot read it."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as image:
            width, height = image.size
            return int(width), int(height)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return None


def _fits(width: int, height: int, max_side: int) -> bool:
    return max(width, height) <= max_side


def downscale(
    raw: bytes, mime_type: str, *, max_side: int, max_bytes: int, output_index: int
) -> CondensedImage:
    """Fit a raster image into ``max_side`` pixels (longer side) and ``max_bytes`` bytes.

    Args:
        raw: the decoded image bytes.
        mime_type: the stored MIME type (``image/png``, ``image/jpeg``, ``image/gif`` or
            ``image/webp``).
        max_side: cap on the longer side, in pixels (>= 1).
        max_bytes: cap on the encoded size, in bytes (>= 1).
        output_index: the output's physical index in ``cell.outputs``, kept on the image.

    Returns:
        The image to send (``image/png`` or ``image/jpeg``) with its dimensions.

    Raises:
        ValueError: when Pillow cannot read the image, or it cannot be made to fit
            ``max_bytes`` even at the smallest size tried (the caller describes it instead).
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as opened:
            original_width, original_height = opened.size
            native = {"PNG": "image/png", "JPEG": "image/jpeg"}.get(opened.format or "")
            if (
                native is not None
                and len(raw) <= max_bytes
                and _fits(original_width, original_height, max_side)
            ):
                return CondensedImage(
                    raw,
                    native,
                    original_width,
                    original_height,
                    original_width,
                    original_height,
                    output_index,
                )
            if opened.format == "JPEG":
                opened.draft("RGB", (max_side, max_side))  # decode at a reduced scale: fast
            opened.seek(0)
            image = opened.convert("RGBA" if _has_alpha(opened) else "RGB")
            if image.mode == "RGBA" and image.getchannel("A").getextrema()[0] == 255:
                image = image.convert("RGB")  # opaque everywhere: the alpha says nothing
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as err:
        raise ValueError(f"unreadable image: {err}") from err
    side = max_side
    quality = 85
    fallback: CondensedImage | None = None  # the first fit of the byte cap, if never smaller
    while True:
        frame = image.copy()
        frame.thumbnail((side, side), Image.Resampling.LANCZOS)
        data, chosen = _encode(frame, quality)
        result = CondensedImage(
            data, chosen, frame.width, frame.height, original_width, original_height, output_index
        )
        if len(data) <= max_bytes and len(data) <= len(raw):
            return result
        if fallback is None and len(data) <= max_bytes:
            fallback = result
        if max(frame.size) <= _MIN_SIDE:
            if fallback is not None:
                return fallback
            raise ValueError(f"image does not fit {max_bytes} bytes even at {frame.size}")
        side = max(_MIN_SIDE, int(max(frame.size) * 0.75))
        quality = max(50, quality - 10)


def _has_alpha(image: PILImage) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or (
        image.mode == "P" and "transparency" in image.info
    )


def _encode(image: PILImage, quality: int) -> tuple[bytes, str]:
    """The smallest of optimized PNG, palette PNG (chart-like) and JPEG (photo-like)."""
    from PIL import Image

    png = io.BytesIO()
    image.save(png, format="PNG", optimize=True)
    best = (png.getvalue(), "image/png")
    chart_like = image.getcolors(_PHOTO_COLOURS) is not None
    if chart_like:
        method = Image.Quantize.MEDIANCUT if image.mode == "RGB" else Image.Quantize.FASTOCTREE
        palette = image.quantize(_PALETTE_COLOURS, method=method, dither=Image.Dither.NONE)
        quantized = io.BytesIO()
        palette.save(quantized, format="PNG", optimize=True)
        if quantized.tell() < len(best[0]):
            best = (quantized.getvalue(), "image/png")
    photo_like = image.mode == "RGB" and not chart_like
    if photo_like:
        jpeg = io.BytesIO()
        image.save(jpeg, format="JPEG", quality=quality, optimize=True)
        if jpeg.tell() < len(best[0]):
            best = (jpeg.getvalue(), "image/jpeg")
    return best
