"""The ``-j`` contract: one JSON document on stdout, exit 0/1/2, every error with a code."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from jcli_helpers import EXAMPLE, code_cell, png_b64, run_cli, tiny_png, write_notebook

from jupyter_jcli.errors import ErrorCode


def test_outputs_lists_the_cells_outputs_as_one_json_document() -> None:
    run = run_cli("-j", "notebook", "outputs", EXAMPLE, "--cell", "18")
    assert run.exit_code == 0
    assert run.stderr == ""
    doc = run.json()
    assert doc["status"] == "ok"
    assert doc["source"]["path"] == str(EXAMPLE)
    assert doc["source"]["cell_index"] == 18
    assert doc["output_count"] == 1
    assert doc["outputs"][0]["available_mime_types"] == ["text/html", "text/plain"]


def test_output_selects_the_png_of_a_plot_and_returns_canonical_base64() -> None:
    run = run_cli("-j", "notebook", "output", EXAMPLE, "--cell", "24", "--output", "0")
    assert run.exit_code == 0
    assert run.stderr == ""
    selected = run.json()["selected"]
    assert selected["mime_type"] == "image/png"
    assert selected["encoding"] == "base64"
    raw = base64.b64decode(selected["data"], validate=True)
    assert raw.startswith(b"\x89PNG\r\n\x1a\n")
    assert selected["bytes"] == len(raw)
    assert (selected["width"], selected["height"]) == (362, 248)


def test_output_of_a_pandas_table_is_html_by_default_and_plain_on_request() -> None:
    base = ("-j", "notebook", "output", EXAMPLE, "--cell", "18", "--output", "0")
    html = run_cli(*base).json()["selected"]
    assert html["mime_type"] == "text/html"
    assert "<table" in html["data"]
    plain = run_cli(*base, "--mime", "text/plain").json()["selected"]
    assert plain["mime_type"] == "text/plain"
    assert "evil" in plain["data"]
    assert plain["returned_characters"] == len(plain["data"]) == plain["total_characters"]


@pytest.mark.parametrize(
    ("supported", "expected"),
    [
        (["--supported-mime", "text/plain"], "text/plain"),
        (["--supported-mime", "image/png, text/plain"], "text/plain"),
        (["--supported-mime", "text/plain", "--supported-mime", "text/html"], "text/html"),
    ],
)
def test_supported_mime_accepts_repeats_and_commas(supported: list[str], expected: str) -> None:
    run = run_cli("-j", "notebook", "output", EXAMPLE, "--cell", "18", "--output", "0", *supported)
    assert run.exit_code == 0
    assert run.json()["selected"]["mime_type"] == expected


def test_an_explicit_mime_outside_the_supported_set_is_refused() -> None:
    run = run_cli(
        "-j", "notebook", "output", EXAMPLE, "--cell", "18", "--output", "0",
        "--mime", "text/html", "--supported-mime", "text/plain",
    )  # fmt: skip
    assert run.exit_code == 1
    assert run.json()["code"] == ErrorCode.MIME_NOT_SUPPORTED


def test_offset_and_limit_page_through_a_huge_stream(tmp_path: Path) -> None:
    text = "".join(f"line {i:06d} é\n" for i in range(30_000))  # ~420k characters
    nb = write_notebook(
        tmp_path / "huge.ipynb",
        [code_cell([{"output_type": "stream", "name": "stdout", "text": text}])],
    )
    pages: list[str] = []
    offset = 0
    for _ in range(20):  # bounded: 420k characters in pages of 100k
        doc = run_cli(
            "-j", "notebook", "output", nb, "--cell", "0", "--output", "0",
            "--offset", str(offset), "--limit", "100000",
        ).json()["stream"]  # fmt: skip
        assert doc["offset"] == offset
        assert doc["returned_characters"] == len(doc["data"])
        assert doc["total_characters"] == len(text)
        assert doc["truncated"] is True  # every page of this text is only a part of it
        pages.append(doc["data"])
        if "next_offset" not in doc:
            break
        offset = doc["next_offset"]
    assert "".join(pages) == text
    assert len(pages) == 5


def test_the_default_text_page_is_bounded_and_says_where_to_go_next(tmp_path: Path) -> None:
    text = "x" * 250_000
    nb = write_notebook(
        tmp_path / "big.ipynb",
        [code_cell([{"output_type": "stream", "name": "stdout", "text": text}])],
    )
    doc = run_cli("-j", "notebook", "output", nb, "--cell", "0", "--output", "0").json()["stream"]
    assert doc["returned_characters"] == 100_000
    assert doc["truncated"] is True
    assert doc["next_offset"] == 100_000


def _display(data: dict[str, object]) -> dict[str, object]:
    return {"output_type": "display_data", "metadata": {}, "data": data}


def _bad_notebooks(tmp_path: Path) -> dict[str, Path]:
    png = png_b64()
    files = {
        "truncated": tmp_path / "truncated.ipynb",
        "no_cells": tmp_path / "no_cells.ipynb",
        "dir": tmp_path / "folder.ipynb",
        "txt": tmp_path / "notes.txt",
    }
    files["truncated"].write_text('{"nbformat": 4, "nbformat_minor": 4, "cells": [', "utf-8")
    files["no_cells"].write_text('{"nbformat": 4, "nbformat_minor": 4, "metadata": {}}', "utf-8")
    files["dir"].mkdir()
    files["txt"].write_text("hello", "utf-8")
    files["outputs"] = write_notebook(
        tmp_path / "outputs.ipynb",
        [
            code_cell([{"output_type": "stream", "name": "stdout", "text": "hi\n"}]),
            code_cell([_display({"image/png": "%%%"})]),
            code_cell([_display({"image/jpeg": png})]),
            code_cell([{"output_type": "stream", "name": "stdout", "text": 42}]),
            code_cell([{"output_type": "made_up", "data": {}}]),
            code_cell([_display({"image/png": png})]),
            {"cell_type": "code", "metadata": {}, "source": "", "outputs": "oops"},
        ],
    )  # fmt: skip
    return files


# (arguments after "-j notebook", expected code); FILE names refer to _bad_notebooks.
PROTOCOL_ERRORS = [
    (["output", "{missing}", "--cell", "0", "--output", "0"], ErrorCode.FILE_NOT_FOUND),
    (["outputs", "{missing}", "--cell", "0"], ErrorCode.FILE_NOT_FOUND),
    (["cells", "{missing}"], ErrorCode.FILE_NOT_FOUND),
    (["show", "{missing}"], ErrorCode.FILE_NOT_FOUND),
    (["outputs", "{dir}", "--cell", "0"], ErrorCode.FILE_NOT_FOUND),
    (["outputs", "{txt}", "--cell", "0"], ErrorCode.FILE_TYPE_UNSUPPORTED),
    (["outputs", "{truncated}", "--cell", "0"], ErrorCode.NOTEBOOK_READ_FAILED),
    (["cells", "{truncated}"], ErrorCode.NOTEBOOK_READ_FAILED),
    (["outputs", "{no_cells}", "--cell", "0"], ErrorCode.NOTEBOOK_READ_FAILED),
    (["outputs", "{outputs}", "--cell", "99"], ErrorCode.CELL_NOT_FOUND),
    (["outputs", "{outputs}", "--cell", "-1"], ErrorCode.CELL_NOT_FOUND),
    (["output", "{outputs}", "--cell", "0", "--output", "5"], ErrorCode.OUTPUT_NOT_FOUND),
    (["output", "{outputs}", "--cell", "0", "--output", "-1"], ErrorCode.OUTPUT_NOT_FOUND),
    (["output", "{outputs}", "--cell", "1", "--output", "0"], ErrorCode.OUTPUT_DATA_INVALID),
    (["output", "{outputs}", "--cell", "2", "--output", "0"], ErrorCode.OUTPUT_DATA_INVALID),
    (["output", "{outputs}", "--cell", "3", "--output", "0"], ErrorCode.OUTPUT_DATA_INVALID),
    (["output", "{outputs}", "--cell", "4", "--output", "0"], ErrorCode.OUTPUT_TYPE_UNSUPPORTED),
    (["outputs", "{outputs}", "--cell", "6"], ErrorCode.OUTPUT_DATA_INVALID),
    (["output", "{outputs}", "--cell", "0", "--output", "0", "--offset", "-1"],
     ErrorCode.INVALID_WINDOW),
    (["output", "{outputs}", "--cell", "0", "--output", "0", "--limit", "0"],
     ErrorCode.INVALID_WINDOW),
    (["output", "{outputs}", "--cell", "0", "--output", "0", "--offset", "4"],
     ErrorCode.INVALID_WINDOW),
    (["output", "{outputs}", "--cell", "5", "--output", "0", "--offset", "1"],
     ErrorCode.WINDOW_NOT_SUPPORTED),
    (["output", "{outputs}", "--cell", "0", "--output", "0", "--mime", "text/plain"],
     ErrorCode.MIME_NOT_APPLICABLE),
    (["output", "{outputs}", "--cell", "5", "--output", "0", "--mime", "text/html"],
     ErrorCode.MIME_NOT_FOUND),
    (["output", "{outputs}", "--cell", "5", "--output", "0", "--supported-mime", "text/plain"],
     ErrorCode.MIME_NOT_SUPPORTED),
]  # fmt: skip

USAGE_ERRORS = [
    ["output", "{outputs}", "--cell", "", "--output", "0"],
    ["output", "{outputs}", "--cell", "0"],
    ["output", "{outputs}", "--output", "0"],
    ["output", "--cell", "0", "--output", "0"],
    ["output", "{outputs}", "--cell", "0", "--output", "0", "--limit", "many"],
    ["output", "{outputs}", "--cell", "0", "--output", "0", "--force"],
    ["outputs", "{outputs}", "--cell", "0", "--no-such-option"],
    ["no-such-command"],
    [],
]


def _fill(args: list[str], files: dict[str, Path], tmp_path: Path) -> list[str]:
    names = {name: str(path) for name, path in files.items()}
    names["missing"] = str(tmp_path / "missing.ipynb")
    return [arg.format(**names) for arg in args]


@pytest.mark.parametrize(("args", "code"), PROTOCOL_ERRORS)
def test_bad_input_gets_its_code_as_one_json_document(
    tmp_path: Path, args: list[str], code: ErrorCode
) -> None:
    run = run_cli("-j", "notebook", *_fill(args, _bad_notebooks(tmp_path), tmp_path))
    assert run.exit_code == 1
    assert run.stderr == ""
    doc = run.json()
    assert doc["status"] == "error"
    assert doc["code"] == code
    assert isinstance(doc["message"], str) and doc["message"]


@pytest.mark.parametrize(("args", "code"), PROTOCOL_ERRORS)
def test_bad_input_in_text_mode_is_one_error_line_on_stderr(
    tmp_path: Path, args: list[str], code: ErrorCode
) -> None:
    run = run_cli("notebook", *_fill(args, _bad_notebooks(tmp_path), tmp_path))
    assert run.exit_code == 1
    assert run.stdout == "" or args[0] == "show"
    assert run.stderr.startswith(f"error {code}: ")
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("args", USAGE_ERRORS)
def test_usage_errors_exit_2_with_code_usage_error(tmp_path: Path, args: list[str]) -> None:
    filled = _fill(args, _bad_notebooks(tmp_path), tmp_path)
    prefix = ["notebook"] if args else []
    run = run_cli("-j", *prefix, *filled)
    assert run.exit_code == 2
    assert run.stderr == ""
    doc = run.json()
    assert doc["status"] == "error"
    assert doc["code"] == ErrorCode.USAGE_ERROR
    text = run_cli(*prefix, *filled)
    assert text.exit_code == 2
    assert "Traceback" not in text.stderr


def test_json_flag_placed_after_the_command_is_understood_as_before_it() -> None:
    run = run_cli("notebook", "outputs", EXAMPLE, "--cell", "18", "-j")
    assert run.exit_code == 0
    assert run.json() == run_cli("-j", "notebook", "outputs", EXAMPLE, "--cell", "18").json()


def test_an_unexpected_exception_is_reported_as_internal_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import jupyter_jcli.outputs.notebook as api

    def boom(*_args: object, **_kwargs: object) -> dict[str, object]:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(api.NotebookOutputs, "list_outputs", boom)
    run = run_cli("-j", "notebook", "outputs", EXAMPLE, "--cell", "18")
    assert run.exit_code == 1
    doc = run.json()
    assert doc["code"] == ErrorCode.INTERNAL_ERROR
    assert doc["details"] == {"exception": "RuntimeError"}
    text = run_cli("notebook", "outputs", EXAMPLE, "--cell", "18")
    assert text.stderr.startswith("error INTERNAL_ERROR: ")
    assert "Traceback" not in text.stderr


def test_version_in_text_and_json() -> None:
    assert run_cli("--version").stdout.startswith("j-cli ")
    doc = run_cli("-j", "--version").json()
    assert doc["status"] == "ok"
    assert doc["version"]


def test_help_exits_0_and_names_the_commands() -> None:
    run = run_cli("notebook", "--help")
    assert run.exit_code == 0
    for command in ("cells", "output", "outputs", "show"):
        assert command in run.stdout


def test_save_writes_the_decoded_image_atomically_and_refuses_to_overwrite(
    tmp_path: Path,
) -> None:
    target = tmp_path / "plot.png"
    base = ("notebook", "output", EXAMPLE, "--cell", "24", "--output", "0", "--save", target)
    first = run_cli("-j", *base)
    assert first.exit_code == 0
    doc = first.json()
    saved = target.read_bytes()
    assert saved.startswith(b"\x89PNG")
    assert doc["saved"] == {"path": str(target), "mime_type": "image/png", "bytes": len(saved)}
    assert "data" not in doc["selected"]
    assert doc["selected"]["bytes"] == len(saved)
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]  # no temporary left

    target.write_bytes(b"keep me")
    refused = run_cli("-j", *base)
    assert refused.exit_code == 1
    assert refused.json()["code"] == ErrorCode.FILE_EXISTS
    assert target.read_bytes() == b"keep me"

    forced = run_cli(*base, "--force")
    assert forced.exit_code == 0
    assert "saved image/png" in forced.stdout
    assert target.read_bytes() == saved


def test_save_reports_a_missing_folder_and_a_non_image(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "plot.png"
    run = run_cli(
        "-j", "notebook", "output", EXAMPLE, "--cell", "24", "--output", "0", "--save", missing
    )
    assert run.json()["code"] == ErrorCode.FILE_WRITE_FAILED
    stream = run_cli(
        "-j", "notebook", "output", EXAMPLE, "--cell", "28", "--output", "0",
        "--save", tmp_path / "out.png",
    )  # fmt: skip
    assert stream.exit_code == 2
    assert stream.json()["code"] == ErrorCode.USAGE_ERROR
    assert not (tmp_path / "out.png").exists()
    jpeg = run_cli(
        "-j", "notebook", "output", EXAMPLE, "--cell", "24", "--output", "0",
        "--save", tmp_path / "plot.jpg",
    )  # fmt: skip
    assert jpeg.exit_code == 2
    assert jpeg.json()["code"] == ErrorCode.USAGE_ERROR
    assert jpeg.json()["details"]["suffix_type"] == "image/jpeg"
    assert list(tmp_path.iterdir()) == []


def test_save_writes_a_whole_svg_as_text(tmp_path: Path) -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect/></svg>'
    nb = write_notebook(
        tmp_path / "svg.ipynb",
        [code_cell([{"output_type": "display_data", "metadata": {},
                     "data": {"image/svg+xml": svg, "image/png": png_b64()}}])],
    )  # fmt: skip
    target = tmp_path / "figure.svg"
    run = run_cli(
        "-j", "notebook", "output", nb, "--cell", "0", "--output", "0",
        "--mime", "image/svg+xml", "--save", target,
    )  # fmt: skip
    assert run.exit_code == 0
    assert target.read_text("utf-8") == svg
    png_target = tmp_path / "figure.png"
    run_cli("notebook", "output", nb, "--cell", "0", "--output", "0", "--save", png_target)
    assert png_target.read_bytes() == tiny_png()


def test_every_json_document_is_compact_utf8(tmp_path: Path) -> None:
    nb = write_notebook(
        tmp_path / "u.ipynb",
        [code_cell([{"output_type": "stream", "name": "stdout", "text": "héllo ✓\n"}])],
    )
    run = run_cli("-j", "notebook", "output", nb, "--cell", "0", "--output", "0")
    assert "héllo ✓" in run.stdout
    assert ", " not in run.stdout.replace("héllo ✓", "")
    assert json.loads(run.stdout)["stream"]["data"] == "héllo ✓\n"
