"""Every output of every cell of every real notebook in ``tests/fixtures/notebooks/``.

Each output is read through the API (automatic selection, then every MIME type explicitly,
then a text page in the middle), and a sample through the command line in ``-j`` mode; every
response is checked against the protocol rules, computed here independently of the
implementation: schema and provenance, selection order, base64 round trip and signature,
window arithmetic, JSON untruncated, transport bound.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from jupyter_jcli.cli import run
from jupyter_jcli.errors import JcliError
from jupyter_jcli.notebook.io import read_notebook
from jupyter_jcli.outputs import MAX_TRANSPORT_BYTES, read_output
from jupyter_jcli.outputs.notebook import (
    list_notebook_outputs,
    read_notebook_output,
    resolve_notebook_cell,
)

NOTEBOOKS = Path(__file__).parent / "fixtures" / "notebooks"
CORPUS = sorted(NOTEBOOKS.glob("*.ipynb"))

RASTERS = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
TEXTS = ("text/html", "text/markdown", "text/plain")
CLI_SAMPLE_EVERY = 3
"""Every third output (in corpus order) is also read through ``j-cli -j``."""


def is_json_type(mime: str) -> bool:
    return mime.endswith("+json") or (mime.startswith("application/") and mime.endswith("json"))


def selection_order(available: list[str]) -> list[str]:
    """The spec's automatic order restricted to the types present (issue 2, section 3)."""
    fixed = ["image/png", "image/jpeg", "image/webp", "image/gif", *TEXTS, "application/json"]
    other_json = sorted(m for m in available if m != "application/json" and is_json_type(m))
    order = [m for m in fixed if m in available] + other_json
    return order + (["image/svg+xml"] if "image/svg+xml" in available else [])


def joined(value: Any) -> str:
    text = "".join(value) if isinstance(value, list) else value
    assert isinstance(text, str)
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def check_envelope(
    doc: Mapping[str, Any], path: Path, cell_index: int, cell: Mapping[str, Any]
) -> None:
    assert doc["schema_version"] == 1
    assert doc["status"] == "ok"
    source = doc["source"]
    assert source["kind"] == "notebook"
    assert source["path"] == source["requested_path"] == str(path.resolve())
    assert source["cell_index"] == source["requested_cell_index"] == cell_index
    assert source["mapping"] == "direct"
    if isinstance(cell.get("id"), str) and cell["id"]:
        assert source["cell_id"] == cell["id"]
    assert len(orjson.dumps(doc)) <= MAX_TRANSPORT_BYTES


def check_window(window: Mapping[str, Any], full: str) -> None:
    data, offset = window["data"], window["offset"]
    assert window["returned_characters"] == len(data)
    assert window["total_characters"] == len(full)
    assert offset + len(data) <= len(full)
    assert data == full[offset : offset + len(data)]
    remains = offset + len(data) < len(full)
    assert window["truncated"] == (offset > 0 or remains)
    assert ("next_offset" in window) == remains
    if remains:
        assert window["next_offset"] == offset + len(data)
    assert window["bytes"] == len(data.encode("utf-8"))


def check_selected(doc: Mapping[str, Any], output: Mapping[str, Any]) -> None:
    selected = doc["selected"]
    mime = selected["mime_type"]
    value = output["data"][mime]
    if mime in RASTERS:
        assert selected["encoding"] == "base64"
        raw = base64.b64decode(selected["data"], validate=True)
        assert base64.b64encode(raw).decode("ascii") == selected["data"]
        assert selected["bytes"] == len(raw)
        assert raw.startswith(RASTERS[mime])
        assert raw == base64.b64decode("".join(joined(value).split()))
    elif selected["encoding"] == "json":
        assert is_json_type(mime)
        assert selected["data"] == value
        compact = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        assert selected["bytes"] == len(compact.encode("utf-8"))
    else:
        assert selected["encoding"] == "utf-8"
        check_window(selected, joined(value))


def check_read(doc: Mapping[str, Any], output: Mapping[str, Any], output_index: int) -> None:
    assert doc["source"]["output_index"] == output_index
    output_type = output["output_type"]
    assert doc["output_type"] == output_type
    if output_type == "stream":
        assert doc["available_mime_types"] == []
        assert doc["stream"]["name"] == output["name"]
        check_window(doc["stream"], joined(output["text"]))
    elif output_type == "error":
        error = doc["error"]
        assert (error["ename"], error["evalue"]) == (output["ename"], output["evalue"])
        assert error["traceback"] == output["traceback"]
    else:
        assert doc["available_mime_types"] == list(output["data"])
        check_selected(doc, output)


def corpus_outputs() -> Iterator[tuple[Path, int, dict[str, Any], int, dict[str, Any]]]:
    for path in CORPUS:
        for cell_index, cell in enumerate(read_notebook(path)["cells"]):
            for output_index, output in enumerate(cell.get("outputs") or []):
                yield path, cell_index, cell, output_index, output


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    with CliRunner().isolation() as streams:
        status = run(list(args))
        sys.stdout.flush()
        stdout = streams[0].getvalue().decode("utf-8")
    assert stdout.count("\n") == 1
    return status, json.loads(stdout)


def test_the_corpus_is_varied() -> None:
    kinds = {f"nbformat 4.{read_notebook(path)['nbformat_minor']}" for path in CORPUS}
    for _, _, _, _, output in corpus_outputs():
        kinds.add(output["output_type"])
        kinds.update(output.get("data", {}))
    for wanted in ("stream", "error", "image/png", "text/html", "text/latex", "nbformat 4.4"):
        assert wanted in kinds
    assert any(is_json_type(kind) for kind in kinds)


def test_every_cell_listing_follows_the_protocol() -> None:
    listed = 0
    for path in CORPUS:
        for cell_index, cell in enumerate(read_notebook(path)["cells"]):
            doc = list_notebook_outputs(path, cell_index)
            check_envelope(doc, path, cell_index, cell)
            outputs = cell.get("outputs") or []
            assert doc["output_count"] == len(outputs) == len(doc["outputs"])
            for index, (entry, output) in enumerate(zip(doc["outputs"], outputs, strict=True)):
                assert entry["output_index"] == index
                assert entry["output_type"] == output["output_type"]
                if "data" in output:
                    assert entry["available_mime_types"] == list(output["data"])
                    assert list(entry["mime_bytes"]) == list(output["data"])
            listed += 1
    assert listed > 100


def test_every_output_reads_by_the_rules_through_the_api() -> None:
    reads = 0
    for path, cell_index, cell, output_index, output in corpus_outputs():
        available = list(output.get("data") or {})
        order = selection_order(available)
        try:
            doc = read_notebook_output(path, cell_index, output_index)
        except JcliError as err:  # only a bundle with no automatically selectable type
            assert "data" in output and not order, (path.name, cell_index, err.code)
            assert err.code == "MIME_NOT_SUPPORTED"
        else:
            check_envelope(doc, path, cell_index, cell)
            check_read(doc, output, output_index)
            if available:
                assert doc["selected"]["mime_type"] == order[0]
            reads += 1
        resolved = resolve_notebook_cell(path, cell_index)
        for mime in available:  # every representation, asked for explicitly
            explicit = read_output(
                resolved.cell["outputs"], output_index, source=resolved.source, mime_type=mime
            )
            assert explicit["selected"]["mime_type"] == mime
            check_read(explicit, output, output_index)
            reads += 1
        text = joined(output["text"]) if output["output_type"] == "stream" else None
        if text and len(text) > 2:  # a page from the middle
            page = read_output(
                resolved.cell["outputs"], output_index, source=resolved.source,
                offset=1, limit=len(text) // 2,
            )  # fmt: skip
            check_window(page["stream"], text)
            assert page["stream"]["truncated"] is True
    assert reads > 200


def test_a_sample_of_outputs_reads_the_same_through_the_cli() -> None:
    sampled = 0
    for number, (path, cell_index, _, output_index, _) in enumerate(corpus_outputs()):
        if number % CLI_SAMPLE_EVERY:
            continue
        args = ("notebook", "output", str(path), "--cell", str(cell_index))
        status, doc = run_json("-j", *args, "--output", str(output_index))
        try:
            expected = read_notebook_output(path, cell_index, output_index)
        except JcliError as err:
            assert (status, doc) == (1, err.to_dict())
        else:
            assert status == 0
            assert doc == json.loads(orjson.dumps(expected))
        sampled += 1
    assert sampled > 30


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_cells_and_show_of_every_notebook_succeed_in_json(path: Path) -> None:
    status, cells = run_json("-j", "notebook", "cells", str(path))
    assert status == 0
    with_outputs = [c["cell_index"] for c in cells["cells"] if c["output_count"]]
    status, show = run_json("-j", "notebook", "show", str(path))
    assert status == 0
    assert [c["source"]["cell_index"] for c in show["cells"]] == with_outputs
