"""Run manifests retention and reads cannot trust, and run folders whose raster files were
changed after the run: each found out with its code and reason (in-process)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, OutputProtocolError
from jupyter_jcli.outputs.manifest import open_manifest
from jupyter_jcli.runs import save_run

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAAAAAB8yeLVAAAAD0lEQVR4nGNgYGBgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg=="
)
FIGURE = {
    "output_type": "display_data",
    "metadata": {},
    "data": {"image/png": base64.b64encode(PNG).decode() + "\n", "text/plain": "<Figure>"},
}


def _saved(tmp_path: Path) -> Path:
    run = save_run(tmp_path, [FIGURE], origin={}, execution={})
    return run.manifest_path


def _rewrite(manifest: Path, **changes: Any) -> None:
    document = json.loads(manifest.read_text(encoding="utf-8"))
    document.update(changes)
    manifest.write_text(json.dumps(document), encoding="utf-8")


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"schema_version": 99}, "schema_version"),
        ({"files": [{"name": "../escape.png", "output_index": 0, "mime_type": "image/png"}]},
         "bad_files"),
        ({"files": "output-0.png"}, "bad_files"),
        ({"run_id": 7}, "bad_run_id"),
    ],
    ids=["newer-schema", "file-outside-the-folder", "files-not-a-list", "no-run-id"],
)  # fmt: skip
def test_a_manifest_that_breaks_the_schema_is_invalid_with_its_reason(
    tmp_path: Path, changes: dict[str, Any], reason: str
) -> None:
    manifest = _saved(tmp_path)
    _rewrite(manifest, **changes)
    with pytest.raises(OutputProtocolError) as caught:
        open_manifest(manifest)
    assert caught.value.code == ErrorCode.RUN_MANIFEST_INVALID
    assert caught.value.details["reason"] == reason


def test_a_raster_file_replaced_by_a_folder_reads_as_invalid_data_and_its_text_still_reads(
    tmp_path: Path,
) -> None:
    manifest = _saved(tmp_path)
    image = manifest.parent / "output-0.png"
    image.unlink()
    image.mkdir()
    run = open_manifest(manifest)
    assert run.output_count == 1
    with pytest.raises(OutputProtocolError) as caught:
        run.read_output(0)
    assert caught.value.code == ErrorCode.OUTPUT_DATA_INVALID
    assert caught.value.details["reason"] == "not_a_file"
    assert caught.value.details["mime_type"] == "image/png"
    plain = run.read_output(0, mime_type="text/plain")
    assert plain["selected"]["data"] == "<Figure>"


def test_a_file_entry_for_an_output_that_does_not_hold_it_is_ignored(tmp_path: Path) -> None:
    manifest = _saved(tmp_path)
    document = json.loads(manifest.read_text(encoding="utf-8"))
    document["files"] += [
        {"name": "output-0.png", "output_index": 5, "mime_type": "image/png"},
        {"name": "output-0.png", "output_index": 0, "mime_type": "image/jpeg"},
    ]
    manifest.write_text(json.dumps(document), encoding="utf-8")
    read = open_manifest(manifest).read_output(0)
    assert read["selected"]["mime_type"] == "image/png"
    assert base64.b64decode(read["selected"]["data"]) == PNG
