"""Run folders and retention at their edges: a ``.j-cli`` that is not a folder, a run id
already taken, a run folder that gained a file, manifests retention cannot trust."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.runs import clean_runs, save_run
from jupyter_jcli.runs._folders import make_saved_run_folder, remove_saved_run_folder

NOW = time.time()
OLD = NOW - 30 * 86_400.0


def _old_run(cwd: Path) -> Path:
    return save_run(cwd, [], origin={}, execution={}, now=OLD).folder


def test_a_dot_jcli_that_is_a_file_is_refused_as_unsafe_and_left_as_it_is(tmp_path: Path) -> None:
    (tmp_path / ".j-cli").write_text("mine", encoding="utf-8")
    with pytest.raises(JcliError) as caught:
        save_run(tmp_path, [], origin={}, execution={})
    assert caught.value.code == ErrorCode.RUN_FOLDER_UNSAFE
    assert (tmp_path / ".j-cli").read_text(encoding="utf-8") == "mine"


def test_a_run_id_already_taken_is_a_write_failure_and_its_folder_is_untouched(
    tmp_path: Path,
) -> None:
    first = make_saved_run_folder(tmp_path, "20260101T000000Z-00000000")
    (first / "manifest.json").write_text("{}", encoding="utf-8")
    with pytest.raises(JcliError) as caught:
        make_saved_run_folder(tmp_path, "20260101T000000Z-00000000")
    assert caught.value.code == ErrorCode.FILE_WRITE_FAILED
    assert caught.value.details["path"] == str(first)
    assert os.listdir(first) == ["manifest.json"]


def test_removing_a_run_folder_that_gained_an_unlisted_file_keeps_the_folder_and_the_file(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "manifest.json").write_text("{}", encoding="utf-8")
    (folder / "notes.txt").write_text("keep me", encoding="utf-8")
    assert remove_saved_run_folder(folder, ["manifest.json", "output-0.png"]) is False
    assert os.listdir(folder) == ["notes.txt"]


def test_negative_settings_passed_as_arguments_are_usage_errors_and_nothing_is_deleted(
    tmp_path: Path,
) -> None:
    run = _old_run(tmp_path)
    for settings in ({"days": -1.0}, {"max_runs": -1}):
        with pytest.raises(JcliError) as caught:
            clean_runs(tmp_path, **settings)  # type: ignore[arg-type]
        assert caught.value.code == ErrorCode.USAGE_ERROR
    assert run.is_dir()


@pytest.mark.parametrize("raw", ["inf", "nan", "-0.5"])
def test_a_retention_age_from_the_environment_that_is_not_finite_and_positive_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    run = _old_run(tmp_path)
    monkeypatch.setenv("JCLI_OUTPUT_RETENTION_DAYS", raw)
    with pytest.raises(JcliError) as caught:
        clean_runs(tmp_path)
    assert caught.value.code == ErrorCode.OUTPUT_CLEAN_CONFIG_INVALID
    assert caught.value.details == {"JCLI_OUTPUT_RETENTION_DAYS": raw}
    assert run.is_dir()


@pytest.mark.parametrize("created", [12345, None, "not a date"])
def test_an_old_run_whose_created_time_cannot_be_read_is_kept_as_uncertain(
    tmp_path: Path, created: object
) -> None:
    run = _old_run(tmp_path)
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["created"] = created
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    report = clean_runs(tmp_path, days=0)
    assert report.deleted == []
    assert [(k.path, k.reason) for k in report.kept] == [(run, "uncertain")]
    assert run.is_dir()


def test_a_run_folder_whose_manifest_is_a_folder_is_kept_as_having_no_manifest(
    tmp_path: Path,
) -> None:
    run = _old_run(tmp_path)
    (run / "manifest.json").unlink()
    (run / "manifest.json").mkdir()
    report = clean_runs(tmp_path, days=0)
    assert [(k.path, k.reason) for k in report.kept] == [(run, "no_manifest")]
    assert (run / "manifest.json").is_dir()


def test_a_run_folder_with_more_files_than_a_run_writes_is_kept_unread(tmp_path: Path) -> None:
    run = _old_run(tmp_path)
    for i in range(1001):
        (run / f"f{i}").touch()
    report = clean_runs(tmp_path, days=0)
    assert [(k.path, k.reason, k.detail) for k in report.kept] == [
        (run, "foreign_files", "1002 entries")
    ]
    assert len(os.listdir(run)) == 1002


def test_a_file_symlinked_into_a_run_folder_keeps_the_run_and_the_link_target(
    tmp_path: Path,
) -> None:
    run = _old_run(tmp_path)
    target = tmp_path / "precious.txt"
    target.write_text("data", encoding="utf-8")
    (run / "output-0.png").symlink_to(target)
    report = clean_runs(tmp_path, days=0)
    assert [(k.path, k.reason, k.detail) for k in report.kept] == [(run, "symlink", "output-0.png")]
    assert target.read_text(encoding="utf-8") == "data"
