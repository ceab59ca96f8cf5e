"""Rasters downscaled to fit the caps; SVG, Plotly, Vega and widgets described in one line."""

from __future__ import annotations

import base64
import io
import random

import pytest
from PIL import Image

from jupyter_jcli.condense import condense_outputs


def _png(width: int, height: int, *, noisy: bool) -> bytes:
    image = Image.new("RGB", (width, height), "white")
    if noisy:
        rng = random.Random(7)
        image.putdata(
            [
                (rng.randrange(256), rng.randrange(256), rng.randrange(256))
                for _ in range(width * height)
            ]
        )
    else:
        for x in range(0, width, 7):
            for y in range(height // 3, height // 3 + 3):
                image.putpixel((x, y), (31, 119, 180))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _display(mime: str, raw: bytes) -> dict[str, object]:
    encoded = base64.b64encode(raw).decode("ascii")
    wrapped = [encoded[i : i + 76] + "\n" for i in range(0, len(encoded), 76)]
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {mime: wrapped, "text/plain": ["<Figure size 2000x1000 with 1 Axes>"]},
    }


def test_a_large_plot_is_downscaled_to_the_pixel_cap() -> None:
    result = condense_outputs([_display("image/png", _png(2000, 1000, noisy=False))])
    (image,) = result.images
    assert (image.original_width, image.original_height) == (2000, 1000)
    assert max(image.width, image.height) <= 1024 and len(image.data) <= 300_000
    assert image.mime_type == "image/png"  # a plot stays lossless
    with Image.open(io.BytesIO(image.data)) as opened:
        assert opened.size == (image.width, image.height)
    assert "<Figure size" not in result.text
    assert "attached as image 0" in result.text


def test_a_photo_over_the_byte_cap_is_reencoded_to_fit() -> None:
    raw = _png(900, 700, noisy=True)
    assert len(raw) > 300_000
    result = condense_outputs([_display("image/png", raw)], image_max_bytes=120_000)
    (image,) = result.images
    assert len(image.data) <= 120_000
    assert image.mime_type == "image/jpeg"
    with Image.open(io.BytesIO(image.data)) as opened:
        assert opened.size == (image.width, image.height)


def test_a_small_image_is_passed_through_unchanged() -> None:
    raw = _png(300, 200, noisy=False)
    (image,) = condense_outputs([_display("image/png", raw)]).images
    assert image.data == raw and (image.width, image.height) == (300, 200)


def test_caps_are_honoured_when_set_small() -> None:
    raw = _png(640, 480, noisy=False)
    (image,) = condense_outputs(
        [_display("image/png", raw)], image_max_pixels=100, image_max_bytes=20_000
    ).images
    assert max(image.width, image.height) <= 100 and len(image.data) <= 20_000


def test_images_can_be_turned_off_and_are_then_described() -> None:
    result = condense_outputs(
        [_display("image/png", _png(64, 32, noisy=False))], include_images=False
    )
    assert result.images == []
    assert "image/png, 64x32 px" in result.text and "images are off" in result.text


def test_images_past_the_limit_are_described_not_attached() -> None:
    outputs = [_display("image/png", _png(40, 30, noisy=False)) for _ in range(4)]
    result = condense_outputs(outputs, max_images=2)
    assert [i.output_index for i in result.images] == [0, 1]
    assert result.text.count("limit of 2 images") == 2


def test_invalid_image_data_is_described() -> None:
    output = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"image/png": "@@not base64@@"},
    }
    result = condense_outputs([output])
    assert result.images == [] and "not valid base64" in result.text
    garbage = {"output_type": "display_data", "metadata": {}, "data": {"image/jpeg": "AAAA"}}
    result = condense_outputs([garbage])
    assert result.images == [] and "signature" in result.text


def test_to_dict_carries_images_as_base64() -> None:
    raw = _png(50, 40, noisy=False)
    document = condense_outputs([_display("image/png", raw)]).to_dict()
    assert base64.b64decode(document["images"][0]["data"]) == raw
    assert document["images"][0]["bytes"] == len(raw)


def _bundle(mime: str, value: object, plain: str = "") -> dict[str, object]:
    data: dict[str, object] = {mime: value}
    if plain:
        data["text/plain"] = plain
    return {"output_type": "display_data", "metadata": {}, "data": data}


def test_svg_plotly_vega_and_widgets_are_described_in_one_line_each() -> None:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="432pt" height="288pt"'
        ' viewBox="0 0 432 288"><title>Sine</title><path d="M0 0"/><path d="M1 1"/></svg>'
    )
    plotly = {
        "data": [{"type": "scatter", "x": [1, 2, 3], "y": [4, 5, 6]}, {"type": "bar", "y": [1, 2]}],
        "layout": {"title": {"text": "Sales"}, "xaxis": {"title": {"text": "month"}}},
    }
    vega = {
        "mark": "bar",
        "encoding": {"x": {"field": "a", "type": "nominal"}, "y": {"field": "b"}},
        "data": {"values": [{"a": 1, "b": 2}] * 12},
    }
    widget = {"model_id": "4f3a2b", "version_major": 2, "version_minor": 0}
    outputs = [
        _bundle("image/svg+xml", svg, "<Figure>"),
        _bundle("application/vnd.plotly.v1+json", plotly),
        _bundle("application/vnd.vegalite.v5+json", vega),
        _bundle("application/vnd.jupyter.widget-view+json", widget, "IntSlider(value=3)"),
    ]
    result = condense_outputs(outputs)
    texts = [p.text for p in result.parts]
    assert all(p.kind == "described" and "\n" not in p.text for p in result.parts)
    assert "432pt x 288pt" in texts[0] and "title 'Sine'" in texts[0] and "elements" in texts[0]
    assert texts[1].startswith("'Sales'; Plotly figure: 2 traces") and "5 points" in texts[1]
    assert "x: month" in texts[1]
    assert "Vega-Lite" in texts[2] and "mark bar" in texts[2] and "12 inline data rows" in texts[2]
    assert "model 4f3a2b" in texts[3] and "IntSlider(value=3)" in texts[3]


def _matplotlib_grid() -> bytes:
    """A real 1200x1000 matplotlib chart: a 4x3 grid of histograms (few flat colours)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("agg", force=True)
    import matplotlib.pyplot as plt

    rng = random.Random(3)
    figure, axes = plt.subplots(4, 3, figsize=(12, 10))
    for number, ax in enumerate(axes.flat):
        ax.hist([rng.gauss(number, 1 + number / 4) for _ in range(442)], bins=20)
        ax.set_title(f"feature {number}")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return buffer.getvalue()


def test_a_downscaled_chart_is_never_larger_in_bytes_than_the_stored_one() -> None:
    raw = _matplotlib_grid()
    (image,) = condense_outputs([_display("image/png", raw)]).images
    assert (image.original_width, image.original_height) == (1200, 1000)
    assert max(image.width, image.height) <= 1024
    assert len(image.data) <= len(raw)
    assert image.mime_type == "image/png"
