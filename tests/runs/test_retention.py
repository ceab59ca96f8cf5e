"""Retention of run outputs over crafted run folders: what goes, what is kept and why."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.runs import MAX_RUNS_ENV, RETENTION_DAYS_ENV, clean_runs, save_run

DAY = 86_400.0
NOW = time.time()
STREAM = [{"output_type": "stream", "name": "stdout", "text": "x" * 5000}]


def saved(cwd: Path, age_days: float, outputs: list[Any] | None = None) -> Path:
    run = save_run(cwd, outputs or STREAM, origin={}, execution={}, now=NOW - age_days * DAY)
    return run.folder


def manifest_of(folder: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((folder / "manifest.json").read_text("utf-8"))
    return document


def test_runs_older_than_the_retention_age_are_deleted_and_recent_ones_kept(
    tmp_path: Path,
) -> None:
    old, recent = saved(tmp_path, 8), saved(tmp_path, 1)
    report = clean_runs(tmp_path, days=7, max_runs=50, now=NOW)
    assert report.deleted == [old] and report.runs == 2 and report.kept == []
    assert not old.exists() and recent.exists()


def test_only_the_newest_max_runs_are_kept(tmp_path: Path) -> None:
    folders = [saved(tmp_path, age / 100) for age in range(55)]  # folders[0] is the newest
    report = clean_runs(tmp_path, days=7, max_runs=50, now=NOW)
    assert sorted(report.deleted) == sorted(folders[50:])
    assert all(folder.exists() for folder in folders[:50])


def test_a_dry_run_reports_what_would_go_and_deletes_nothing(tmp_path: Path) -> None:
    old = saved(tmp_path, 30)
    report = clean_runs(tmp_path, days=7, max_runs=50, dry_run=True, now=NOW)
    assert report.deleted == [old] and old.exists()
    assert report.to_dict()["would_delete"] == [str(old)]


def test_the_current_run_is_never_eligible(tmp_path: Path) -> None:
    current = saved(tmp_path, 0)
    older = saved(tmp_path, 1)
    report = clean_runs(tmp_path, days=7, max_runs=0, keep=current, now=NOW)
    assert report.deleted == [older] and current.exists()


def test_settings_come_from_the_environment_and_bad_values_are_config_errors_as_in_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, recent = saved(tmp_path, 3), saved(tmp_path, 0.5)
    monkeypatch.setenv(RETENTION_DAYS_ENV, "2")
    assert clean_runs(tmp_path, dry_run=True, now=NOW).deleted == [old]
    monkeypatch.delenv(RETENTION_DAYS_ENV)
    monkeypatch.setenv(MAX_RUNS_ENV, "1")
    assert clean_runs(tmp_path, dry_run=True, now=NOW).deleted == [old]
    monkeypatch.setenv(MAX_RUNS_ENV, "many")
    with pytest.raises(JcliError) as caught:
        clean_runs(tmp_path, now=NOW)
    assert caught.value.code == ErrorCode.OUTPUT_CLEAN_CONFIG_INVALID
    assert old.exists() and recent.exists()


def crafted(tmp_path: Path) -> dict[str, Path]:
    """Old entries of every kind that retention must keep, beside one old complete run."""
    root = tmp_path / ".j-cli" / "outputs"
    entries = {"complete": saved(tmp_path, 30)}
    incomplete = saved(tmp_path, 30)
    manifest = manifest_of(incomplete)
    manifest["status"] = "running"
    (incomplete / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    entries["incomplete"] = incomplete
    no_manifest = saved(tmp_path, 30)
    (no_manifest / "manifest.json").unlink()
    entries["no_manifest"] = no_manifest
    foreign = saved(tmp_path, 30)
    (foreign / "notes.txt").write_text("mine", "utf-8")
    entries["foreign_files"] = foreign
    subfolder = saved(tmp_path, 30)
    (subfolder / "data").mkdir()
    entries["subfolder"] = subfolder
    not_ours = saved(tmp_path, 30)
    (not_ours / "manifest.json").write_text('{"managed_by": "someone"}', "utf-8")
    entries["not_ours"] = not_ours
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep", "utf-8")
    (root / "linked-run").symlink_to(outside)
    entries["symlink"] = root / "linked-run"
    inner_link = saved(tmp_path, 30)
    (inner_link / "extra.png").symlink_to(outside / "precious.txt")
    entries["inner_symlink"] = inner_link
    (root / "stray.txt").write_text("hello", "utf-8")
    entries["not_a_folder"] = root / "stray.txt"
    return entries


def test_incomplete_unknown_foreign_and_symlinked_entries_are_kept_with_their_reason(
    tmp_path: Path,
) -> None:
    entries = crafted(tmp_path)
    report = clean_runs(tmp_path, days=7, max_runs=0, now=NOW)
    assert report.deleted == [entries["complete"]]
    reasons = {kept.path: kept.reason for kept in report.kept}
    assert reasons == {
        entries["incomplete"]: "incomplete",
        entries["no_manifest"]: "no_manifest",
        entries["foreign_files"]: "foreign_files",
        entries["subfolder"]: "foreign_files",
        entries["not_ours"]: "not_ours",
        entries["symlink"]: "symlink",
        entries["inner_symlink"]: "symlink",
        entries["not_a_folder"]: "not_a_folder",
    }
    for name, path in entries.items():
        assert path.exists() or path.is_symlink() or name == "complete"
    assert (tmp_path / "outside" / "precious.txt").read_text("utf-8") == "keep"
    assert (entries["foreign_files"] / "notes.txt").read_text("utf-8") == "mine"


@pytest.mark.parametrize("which", [".j-cli", ".j-cli/outputs"])
def test_a_symlinked_root_is_refused_and_nothing_behind_it_is_touched(
    tmp_path: Path, which: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real = saved(elsewhere, 30)  # a real, old run inside the link's target
    cwd = tmp_path / "project"
    cwd.mkdir()
    target = elsewhere / ".j-cli"
    if which == ".j-cli/outputs":
        (cwd / ".j-cli").mkdir()
        target = target / "outputs"
    (cwd / which).symlink_to(target)
    with pytest.raises(JcliError) as caught:
        clean_runs(cwd, days=0, max_runs=0, now=NOW)
    assert caught.value.code == ErrorCode.RUN_FOLDER_UNSAFE
    assert real.exists()


def test_no_run_folder_means_nothing_to_clean_and_nothing_created(tmp_path: Path) -> None:
    report = clean_runs(tmp_path, now=NOW)
    assert report.folder is None and report.deleted == []
    assert not (tmp_path / ".j-cli").exists()
