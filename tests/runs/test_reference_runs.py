"""Run folders saved by the reference jupyter-jcli 0.9.7 are runs of ours: read through the
protocol and cleaned by retention (migration). The fixtures are real run folders its
``j-cli exec`` wrote (tests/fixtures/runs/jcli-0.9.7/README.md)."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, OutputProtocolError
from jupyter_jcli.outputs.manifest import open_manifest
from jupyter_jcli.runs import clean_runs, save_run

FIXTURES = Path(__file__).parents[1] / "fixtures" / "runs" / "jcli-0.9.7"
RICH = "3ec8a7f2-a257-4d32-8c96-94b3d262d49a"
"""stdout, a PNG saved as ``output-1.png``, an HTML display, an execute_result."""
FAILED = "8d7209ed-8d67-4f90-9032-ba61a18c0e43"
"""an HTML display, then a ZeroDivisionError."""
DAY = 86_400.0


def copied(cwd: Path, run_id: str) -> Path:
    """The reference's run folder ``run_id`` copied into ``cwd/.j-cli/outputs``."""
    folder = cwd / ".j-cli" / "outputs" / run_id
    shutil.copytree(FIXTURES / run_id, folder)
    return folder


def created_at(folder: Path) -> float:
    value: float = json.loads((folder / "manifest.json").read_text("utf-8"))["created_at"]
    return value


def rewrite(folder: Path, change: Any) -> None:
    path = folder / "manifest.json"
    document = json.loads(path.read_text("utf-8"))
    change(document)
    path.write_text(json.dumps(document), "utf-8")


def test_a_reference_run_lists_and_reads_every_output_its_image_from_its_file(
    tmp_path: Path,
) -> None:
    folder = copied(tmp_path, RICH)
    run = open_manifest(folder / "manifest.json")
    listing = run.list_outputs()
    assert [o["output_type"] for o in listing["outputs"]] == [
        "stream", "display_data", "display_data", "execute_result",
    ]  # fmt: skip
    assert listing["source"]["run_id"] == RICH and listing["source"]["run_status"] == "complete"
    assert listing["source"]["format"] == "jupyter-jcli-0.9.7"
    assert listing["source"]["created"].startswith("2026-")
    assert not any("mime_problems" in entry for entry in listing["outputs"])
    image = run.read_output(1)["selected"]
    assert image["mime_type"] == "image/png" and (image["width"], image["height"]) == (4, 3)
    assert base64.b64decode(image["data"]) == (folder / "output-1.png").read_bytes()
    assert run.read_output(2, mime_type="text/html")["selected"]["data"] == "<b>bold</b> table"
    assert run.read_output(0)["stream"]["data"] == "hello\n"
    assert run.read_output(3)["selected"]["data"] == "42"


def test_a_reference_run_that_failed_reads_its_error(tmp_path: Path) -> None:
    run = open_manifest(copied(tmp_path, FAILED))
    error = run.read_output(1)["error"]
    assert (error["ename"], error["evalue"]) == ("ZeroDivisionError", "division by zero")


def test_reference_runs_past_retention_are_deleted_and_recent_ones_kept(tmp_path: Path) -> None:
    rich, failed = copied(tmp_path, RICH), copied(tmp_path, FAILED)
    now = created_at(failed) + 2 * DAY
    dry = clean_runs(tmp_path, days=1, max_runs=50, dry_run=True, now=now)
    assert dry.runs == 2 and sorted(dry.deleted) == sorted([rich, failed]) and dry.kept == []
    assert rich.exists() and failed.exists()
    kept = clean_runs(tmp_path, days=7, max_runs=1, now=now)
    assert kept.deleted == [rich] and not rich.exists() and failed.exists()
    assert clean_runs(tmp_path, days=1, now=now).deleted == [failed]
    assert list((tmp_path / ".j-cli" / "outputs").iterdir()) == []


def test_reference_runs_and_ours_share_one_count_of_newest_runs(tmp_path: Path) -> None:
    old = copied(tmp_path, RICH)
    ours = save_run(tmp_path, [{"output_type": "stream", "name": "stdout", "text": "x"}],
                    origin={}, execution={})  # fmt: skip
    report = clean_runs(tmp_path, days=3650, max_runs=1)
    assert report.runs == 2 and report.deleted == [old] and ours.folder.exists()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda d: d["outputs"][1]["data"]["image/png"].update(path="output-1.png"), "not_ours"),
        (lambda d: d["outputs"][1]["data"]["image/png"].update(mime="image/jpeg"), "not_ours"),
        (lambda d: d["source"].update(run_id="another-run"), "not_ours"),
        (lambda d: d.update(run_id="another-run"), "not_ours"),
        (lambda d: d.update(status="publishing"), "incomplete"),
        (lambda d: d.update(created_at="yesterday"), "uncertain"),
    ],
    ids=["relative-image-path", "image-mime-mismatch", "another-source-run-id",
         "another-run-id", "not-complete", "created-at-not-a-time"],
)  # fmt: skip
def test_a_reference_run_retention_cannot_trust_is_kept_with_its_reason(
    tmp_path: Path, change: Any, reason: str
) -> None:
    folder = copied(tmp_path, RICH)
    rewrite(folder, change)
    report = clean_runs(tmp_path, days=0, max_runs=0)
    assert report.deleted == [] and [(k.path, k.reason) for k in report.kept] == [(folder, reason)]
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "output-1.png"]


def test_a_reference_run_with_a_file_it_does_not_name_is_kept(tmp_path: Path) -> None:
    folder = copied(tmp_path, FAILED)
    (folder / "notes.txt").write_text("mine", "utf-8")
    report = clean_runs(tmp_path, days=0, max_runs=0)
    assert [(k.path, k.reason) for k in report.kept] == [(folder, "foreign_files")]


def test_a_reference_run_still_publishing_is_kept_as_having_no_manifest(tmp_path: Path) -> None:
    folder = tmp_path / ".j-cli" / "outputs" / "active"
    folder.mkdir(parents=True)
    (folder / ".manifest.json.tmp").write_text("{", "utf-8")
    report = clean_runs(tmp_path, days=0, max_runs=0)
    assert [(k.path, k.reason) for k in report.kept] == [(folder, "no_manifest")]


def test_a_bad_image_reference_fails_only_the_reads_of_that_image(tmp_path: Path) -> None:
    folder = copied(tmp_path, RICH)
    rewrite(folder, lambda d: d["outputs"][1]["data"]["image/png"].update(path="output-1.png"))
    run = open_manifest(folder)
    listing = run.list_outputs()
    assert set(listing["outputs"][1]["mime_problems"]) == {"image/png"}
    with pytest.raises(OutputProtocolError) as caught:
        run.read_output(1, mime_type="image/png")
    assert caught.value.code == ErrorCode.OUTPUT_DATA_INVALID
    assert run.read_output(1, mime_type="text/plain")["selected"]["data"].startswith("<IPython")


def test_a_missing_image_file_of_a_reference_run_fails_only_its_reads(tmp_path: Path) -> None:
    folder = copied(tmp_path, RICH)
    (folder / "output-1.png").unlink()
    run = open_manifest(folder)
    with pytest.raises(OutputProtocolError) as caught:
        run.read_output(1)
    assert caught.value.code == ErrorCode.OUTPUT_DATA_INVALID
    assert caught.value.details["reason"] == "missing"
    assert run.read_output(2, mime_type="text/html")["selected"]["data"] == "<b>bold</b> table"


def test_a_file_shape_under_a_json_mime_is_data_never_a_file_to_delete(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep", "utf-8")
    folder = copied(tmp_path, FAILED)
    shape = {"type": "file", "path": str(outside), "mime": "application/json"}
    rewrite(folder, lambda d: d["outputs"][0]["data"].update({"application/json": shape}))
    run = open_manifest(folder)
    assert run.read_output(0, mime_type="application/json")["selected"]["data"] == shape
    assert clean_runs(tmp_path, days=0, max_runs=0).deleted == [folder]
    assert outside.read_text("utf-8") == "keep"
