"""``--save`` at its edges, in-process: responses that hold no whole image, and destinations
that cannot be written. Each refusal has its code and writes nothing."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
from jcli_helpers import tiny_png

from jupyter_jcli.cli._save import image_bytes, require_matching_suffix, save_bytes
from jupyter_jcli.errors import ErrorCode, JcliError

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'


def _read(selected: dict[str, Any]) -> dict[str, Any]:
    return {"output_type": "display_data", "selected": selected}


def test_a_raster_decodes_to_its_exact_bytes() -> None:
    data = base64.b64encode(tiny_png()).decode()
    read = _read({"mime_type": "image/png", "encoding": "base64", "data": data})
    assert image_bytes(read) == ("image/png", tiny_png())


def test_base64_that_does_not_decode_is_invalid_output_data() -> None:
    read = _read({"mime_type": "image/png", "encoding": "base64", "data": "not*base64!"})
    with pytest.raises(JcliError) as caught:
        image_bytes(read)
    assert caught.value.code == ErrorCode.OUTPUT_DATA_INVALID
    assert caught.value.details == {"mime_type": "image/png"}


@pytest.mark.parametrize("window", [{"truncated": True}, {"offset": 10}])
def test_an_svg_page_that_is_not_the_whole_document_is_a_usage_error(
    window: dict[str, Any],
) -> None:
    selected = {"mime_type": "image/svg+xml", "encoding": "utf-8", "data": SVG[:10], **window}
    with pytest.raises(JcliError) as caught:
        image_bytes(_read(selected))
    assert caught.value.code == ErrorCode.USAGE_ERROR


def test_a_whole_svg_is_saved_as_its_utf8_source() -> None:
    selected = {"mime_type": "image/svg+xml", "encoding": "utf-8", "data": SVG, "offset": 0}
    assert image_bytes(_read(selected)) == ("image/svg+xml", SVG.encode("utf-8"))


@pytest.mark.parametrize(
    "read",
    [
        _read({"mime_type": "text/plain", "encoding": "utf-8", "data": "<Figure>"}),
        _read({"mime_type": "application/json", "encoding": "json", "data": {}}),
        {"output_type": "stream", "stream": {"data": "hi"}},
    ],
    ids=["text", "json", "stream"],
)
def test_a_read_that_selected_no_image_is_a_usage_error(read: dict[str, Any]) -> None:
    with pytest.raises(JcliError) as caught:
        image_bytes(read)
    assert caught.value.code == ErrorCode.USAGE_ERROR


@pytest.mark.parametrize("path", ["", "a\0b.png", "-"], ids=["empty", "nul-byte", "dash"])
def test_an_empty_path_a_dash_or_one_with_a_nul_byte_is_a_usage_error(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(JcliError) as caught:
        save_bytes(path, b"x", force=True)
    assert caught.value.code == ErrorCode.USAGE_ERROR
    assert os.listdir(tmp_path) == []


def test_a_path_below_a_regular_file_is_a_write_failure_and_the_file_is_untouched(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "plot"
    blocker.write_bytes(b"mine")
    with pytest.raises(JcliError) as caught:
        save_bytes(str(blocker / "out.png"), tiny_png(), force=False)
    assert caught.value.code == ErrorCode.FILE_WRITE_FAILED
    assert blocker.read_bytes() == b"mine"
    assert os.listdir(tmp_path) == ["plot"]


def test_a_saved_file_gets_the_default_file_mode_and_no_temporary_is_left(
    tmp_path: Path,
) -> None:
    target = tmp_path / "out.png"
    save_bytes(str(target), tiny_png(), force=False)
    assert target.read_bytes() == tiny_png()
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask
    assert os.listdir(tmp_path) == ["out.png"]


def test_force_never_replaces_a_read_only_file(tmp_path: Path) -> None:
    target = tmp_path / "out.png"
    target.write_bytes(b"mine")
    target.chmod(0o444)
    with pytest.raises(JcliError) as caught:
        save_bytes(str(target), tiny_png(), force=True)
    assert caught.value.code == ErrorCode.FILE_WRITE_FAILED
    assert target.read_bytes() == b"mine"
    assert os.listdir(tmp_path) == ["out.png"]


@pytest.mark.parametrize(
    ("path", "mime_type"),
    [("chart.jpg", "image/png"), ("chart.PNG", "image/jpeg"), ("out/c.svg", "image/png")],
)
def test_a_suffix_naming_another_image_type_is_a_usage_error(path: str, mime_type: str) -> None:
    with pytest.raises(JcliError) as caught:
        require_matching_suffix(path, mime_type)
    assert caught.value.code == ErrorCode.USAGE_ERROR
    assert caught.value.details["mime_type"] == mime_type


@pytest.mark.parametrize(
    ("path", "mime_type"),
    [
        ("chart.png", "image/png"),
        ("chart.JPEG", "image/jpeg"),
        ("chart.svg", "image/svg+xml"),
        ("chart.bin", "image/png"),
        ("chart", "image/png"),
    ],
)
def test_a_matching_suffix_or_one_naming_no_image_type_passes(path: str, mime_type: str) -> None:
    require_matching_suffix(path, mime_type)
