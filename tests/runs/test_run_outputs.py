"""Run outputs: what stays inline, what is saved, and reading a saved run through the protocol."""

from __future__ import annotations

import base64
import json
import os
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, JcliError, OutputProtocolError
from jupyter_jcli.outputs import list_outputs, read_output
from jupyter_jcli.outputs.manifest import MANAGED_BY, open_manifest
from jupyter_jcli.runs import (
    INLINE_ITEM_LIMIT,
    INLINE_TEXT_LIMIT,
    clean_runs,
    save_run,
    stays_inline,
)

MIXED = Path(__file__).parents[1] / "fixtures" / "outputs" / "mixed_outputs.json"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAAAAAB8yeLVAAAAD0lEQVR4nGNgYGBgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg=="
)
ORIGIN = {"operation": "exec"}
EXECUTION = {"status": "ok", "execution_count": 1}


def mixed() -> list[Any]:
    with MIXED.open(encoding="utf-8") as handle:
        outputs: list[Any] = json.load(handle)
    return outputs


def stream(text: str, name: str = "stdout") -> dict[str, Any]:
    return {"output_type": "stream", "name": name, "text": text}


def png_output(text: str = "<Figure>") -> dict[str, Any]:
    data = {"text/plain": text, "image/png": base64.b64encode(PNG).decode() + "\n"}
    return {"output_type": "display_data", "data": data, "metadata": {}}


def bundle(data: dict[str, Any], kind: str = "display_data") -> dict[str, Any]:
    return {"output_type": kind, "data": data, "metadata": {}}


def error(lines: int) -> dict[str, Any]:
    return {"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["t"] * lines}


@pytest.mark.parametrize(
    ("outputs", "inline"),
    [
        ([], True),
        ([stream("x" * INLINE_TEXT_LIMIT)], True),
        ([stream("x" * 2000), stream("y" * 2001, "stderr")], False),
        ([stream("x" * (INLINE_TEXT_LIMIT + 1))], False),
        ([error(1)], True),
        ([bundle({"text/plain": "42"}, "execute_result")], True),
        ([bundle({"text/html": "<b>"}, "execute_result")], False),
        ([bundle({"text/plain": "<HTML>", "text/html": "<b>bold</b>"})], False),
        ([bundle({"text/plain": "<Markdown>", "text/markdown": "*md*"})], False),
        ([bundle({"text/latex": "$x$"})], False),
        ([png_output()], False),
        ([bundle({"application/json": {}})], False),
        ([stream(str(i), "stdout" if i % 2 else "stderr") for i in range(INLINE_ITEM_LIMIT)],
         True),
        ([stream(str(i), "stdout" if i % 2 else "stderr") for i in range(INLINE_ITEM_LIMIT + 1)],
         False),
        ([error(INLINE_ITEM_LIMIT - 1)], True),
        ([error(INLINE_ITEM_LIMIT)], False),
        (["not an output"], False),
    ],
    ids=[
        "nothing", "text-at-the-limit", "text-over-the-limit-in-two-streams", "text-over-the-limit",
        "short-error", "text-plain", "text-html-alone", "text-html-beside-text-plain",
        "text-markdown", "text-latex", "an-image", "json", "items-at-the-limit",
        "items-over-the-limit", "traceback-lines-at-the-limit", "traceback-lines-over-the-limit",
        "malformed",
    ],
)  # fmt: skip
def test_only_short_text_only_results_stay_inline(outputs: list[Any], inline: bool) -> None:
    assert stays_inline(outputs) is inline


def test_a_saved_run_keeps_rasters_as_real_files_and_no_base64_in_the_manifest(
    tmp_path: Path,
) -> None:
    saved = save_run(tmp_path, [stream("hi\n"), png_output()], origin=ORIGIN, execution=EXECUTION)
    assert saved.folder.parent == tmp_path / ".j-cli" / "outputs"
    assert sorted(os.listdir(saved.folder)) == ["manifest.json", "output-1.png"]
    assert (saved.folder / "output-1.png").read_bytes() == PNG
    manifest = json.loads(saved.manifest_path.read_text(encoding="utf-8"))
    assert manifest["managed_by"] == MANAGED_BY and manifest["status"] == "complete"
    assert manifest["outputs"][1]["data"]["image/png"] == {
        "type": "file", "path": str(saved.folder / "output-1.png"), "mime": "image/png",
        "bytes": len(PNG),
    }  # fmt: skip
    assert manifest["source"] == {"kind": "inline", "cwd": str(tmp_path), "run_id": saved.run_id}
    assert isinstance(manifest["created_at"], float) and manifest["cwd"] == str(tmp_path)
    assert base64.b64encode(PNG).decode() not in saved.manifest_path.read_text(encoding="utf-8")
    assert [dict(f, path="") for f in saved.files] == [
        {"name": "output-1.png", "output_index": 1, "mime_type": "image/png", "bytes": len(PNG),
         "path": ""}
    ]  # fmt: skip


def _no_raster_sizes(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**entry, "mime_bytes": {m: n for m, n in entry["mime_bytes"].items() if "image/" not in m}}
        if "mime_bytes" in entry
        else entry
        for entry in entries
    ]


def _outcome(call: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = call()
    except OutputProtocolError as err:
        return {"code": err.code}
    result.pop("source")
    return result


def test_every_output_of_a_saved_run_reads_as_it_reads_from_its_outputs(tmp_path: Path) -> None:
    outputs = mixed()
    saved = save_run(tmp_path, outputs, origin=ORIGIN, execution=EXECUTION)
    run = open_manifest(saved.manifest_path)
    listing = run.list_outputs()
    expected = list_outputs(outputs, source={})
    assert listing["source"]["kind"] == "run" and listing["source"]["path"] == str(
        saved.manifest_path
    )
    # a raster's size is that of its canonical base64 (the notebook's may hold line breaks)
    assert _no_raster_sizes(listing["outputs"]) == _no_raster_sizes(expected["outputs"])
    compared = 0
    for index, output in enumerate(outputs):
        data = output.get("data") if isinstance(output, dict) else None
        for mime in [None, *(data if isinstance(data, dict) else [])]:
            mine = _outcome(partial(run.read_output, index, mime_type=mime))
            theirs = _outcome(partial(read_output, outputs, index, mime_type=mime, source={}))
            assert mine == theirs, (index, mime)
            compared += 1
    assert compared > 40
    assert _outcome(lambda: run.read_output(0, offset=3, limit=5)) == _outcome(
        lambda: read_output(outputs, 0, offset=3, limit=5, source={})
    )
    assert _outcome(lambda: run.read_output(len(outputs))) == {"code": ErrorCode.OUTPUT_NOT_FOUND}


def test_a_moved_run_and_a_manifest_of_ours_naming_its_files_both_read(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    saved = save_run(tmp_path / "a", [png_output()], origin=ORIGIN, execution=EXECUTION)
    moved = tmp_path / "b" / saved.run_id
    moved.parent.mkdir()
    saved.folder.rename(moved)  # the recorded path now names nothing
    assert base64.b64decode(open_manifest(moved).read_output(0)["selected"]["data"]) == PNG
    manifest = json.loads((moved / "manifest.json").read_text("utf-8"))
    manifest["outputs"][0]["data"]["image/png"] = "output-0.png"  # as we wrote it before
    (moved / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    assert base64.b64decode(open_manifest(moved).read_output(0)["selected"]["data"]) == PNG
    assert clean_runs(tmp_path / "b", days=0).runs == 0  # not under b/.j-cli/outputs
    outputs = tmp_path / "b" / ".j-cli" / "outputs"
    outputs.mkdir(parents=True)
    moved.rename(outputs / saved.run_id)
    assert clean_runs(tmp_path / "b", days=0).deleted == [outputs / saved.run_id]


def test_a_missing_image_file_fails_only_the_reads_of_that_image(tmp_path: Path) -> None:
    saved = save_run(
        tmp_path, [png_output("a"), png_output("b")], origin=ORIGIN, execution=EXECUTION
    )
    (saved.folder / "output-0.png").unlink()
    run = open_manifest(saved.folder)  # the folder names the run too
    listing = run.list_outputs()
    problems = listing["outputs"][0]["mime_problems"]
    assert problems["image/png"]["code"] == ErrorCode.OUTPUT_DATA_INVALID
    assert "mime_problems" not in listing["outputs"][1]
    with pytest.raises(OutputProtocolError) as caught:
        run.read_output(0)
    assert caught.value.code == ErrorCode.OUTPUT_DATA_INVALID
    assert caught.value.details["reason"] == "missing"
    assert run.read_output(0, mime_type="text/plain")["selected"]["data"] == "a"
    assert run.read_output(0, supported_mime_types=["text/plain"])["selected"]["data"] == "a"
    assert base64.b64decode(run.read_output(1)["selected"]["data"]) == PNG


def test_an_image_file_replaced_by_a_symlink_is_never_followed(tmp_path: Path) -> None:
    saved = save_run(tmp_path, [png_output()], origin=ORIGIN, execution=EXECUTION)
    secret = tmp_path / "secret.png"
    secret.write_bytes(PNG)
    (saved.folder / "output-0.png").unlink()
    (saved.folder / "output-0.png").symlink_to(secret)
    with pytest.raises(OutputProtocolError) as caught:
        open_manifest(saved.manifest_path).read_output(0)
    assert caught.value.code == ErrorCode.OUTPUT_DATA_INVALID
    assert caught.value.details["reason"] == "symlink"


@pytest.mark.parametrize(
    "content",
    ["not json", "[]", '{"managed_by": "someone-else", "kind": "run_outputs"}',
     '{"managed_by": "jupyter-jcli", "kind": "run_outputs", "schema_version": 1, "outputs": 3}'],
    ids=["not-json", "not-an-object", "not-ours", "bad-outputs"],
)  # fmt: skip
def test_a_file_that_is_not_our_manifest_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(OutputProtocolError) as caught:
        open_manifest(path)
    assert caught.value.code == ErrorCode.RUN_MANIFEST_INVALID


@pytest.mark.parametrize("given", ["nope/manifest.json", "."], ids=["a-manifest", "a-folder"])
def test_a_missing_manifest_is_output_not_found_as_in_the_reference(
    tmp_path: Path, given: str
) -> None:
    with pytest.raises(OutputProtocolError) as caught:
        open_manifest(tmp_path / given)
    assert caught.value.code == ErrorCode.OUTPUT_NOT_FOUND


@pytest.mark.parametrize("which", [".j-cli", ".j-cli/outputs"])
def test_a_symlinked_run_folder_root_is_refused_and_nothing_is_written(
    tmp_path: Path, which: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd = tmp_path / "project"
    cwd.mkdir()
    if which == ".j-cli/outputs":
        (cwd / ".j-cli").mkdir()
    (cwd / which).symlink_to(elsewhere)
    with pytest.raises(JcliError) as caught:
        save_run(cwd, [png_output()], origin=ORIGIN, execution=EXECUTION)
    assert caught.value.code == ErrorCode.RUN_FOLDER_UNSAFE
    assert list(elsewhere.iterdir()) == []
