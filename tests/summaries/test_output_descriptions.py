"""The fallback summary's words for the less common outputs (in-process, no model): SVG,
LaTeX, Markdown and JSON bundles, PNG data whose header cannot be read, and sizes in MB."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from jupyter_jcli.summaries._outputs import describe_outputs


def _display(data: dict[str, Any]) -> str:
    return describe_outputs([{"output_type": "display_data", "data": data}], "code")


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ({"image/svg+xml": "<svg/>"}, "1 output: display: an SVG image (6 B)."),
        ({"text/latex": "$$x^2$$"}, "1 output: display: LaTeX “$$x^2$$”."),
        ({"text/markdown": "# Title\nbody"}, "1 output: display: Markdown “# Title”."),
        ({"application/json": {"a": 1}}, "1 output: display: JSON data."),
        ({"image/png": "!!!!"}, "1 output: display: a PNG image (3 B)."),
        ({"image/png": "A"}, "1 output: display: a PNG image (0 B)."),
        ({"image/png": base64.b64encode(b"GIF89a" + b"0" * 30).decode()},
         "1 output: display: a PNG image (36 B)."),
    ],
    ids=["svg", "latex", "markdown", "json", "png-not-base64", "png-bad-padding",
         "png-without-png-header"],
)  # fmt: skip
def test_a_bundle_is_described_by_its_richest_type_and_no_size_is_guessed(
    data: dict[str, Any], text: str
) -> None:
    assert _display(data) == text


def test_a_stream_over_a_megabyte_gives_its_size_in_mb() -> None:
    text = describe_outputs(
        [{"output_type": "stream", "name": "stdout", "text": "x" * (2 * 1024 * 1024)}], "code"
    )
    assert text.startswith("1 output: stdout: 1 line, 2.0 MB “xxx")
