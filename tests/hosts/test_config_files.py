"""Reading and applying planned host config changes at their edges (in-process): configs
that are not UTF-8 files, a file that moved on since planning, a write that cannot happen,
and deletes that prune only empty folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._files import apply_changes, read_text
from jupyter_jcli.hosts._model import FileChange, SetupError


def test_a_missing_config_reads_as_none_and_a_folder_or_non_utf8_file_is_invalid(
    tmp_path: Path,
) -> None:
    assert read_text(tmp_path / "absent.json") is None
    (tmp_path / "latin1.json").write_bytes(b'{"name": "caf\xe9"}')
    for path, details in (
        (tmp_path, {"path": str(tmp_path)}),
        (tmp_path / "latin1.json", {"path": str(tmp_path / "latin1.json"), "byte": 13}),
    ):
        with pytest.raises(SetupError) as caught:
            read_text(path)
        assert caught.value.code == ErrorCode.CONFIG_INVALID
        assert caught.value.details == details


def test_a_config_below_a_regular_file_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("x", encoding="utf-8")
    with pytest.raises(SetupError) as caught:
        read_text(tmp_path / "home" / "config.json")
    assert caught.value.code == ErrorCode.CONFIG_INVALID


def test_a_file_changed_since_planning_writes_nothing_of_any_change(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    second.write_text("theirs", encoding="utf-8")
    changes = [FileChange(first, None, "ours"), FileChange(second, "planned on", "ours")]
    with pytest.raises(SetupError) as caught:
        apply_changes(changes)
    assert caught.value.code == ErrorCode.CONFIG_CHANGED
    assert caught.value.details == {"path": str(second)}
    assert not first.exists() and second.read_text(encoding="utf-8") == "theirs"


def test_a_write_into_a_folder_that_cannot_be_made_is_a_write_failure(tmp_path: Path) -> None:
    (tmp_path / "settings").symlink_to(tmp_path / "gone")  # a dangling link: no folder
    target = tmp_path / "settings" / "config.json"
    with pytest.raises(SetupError) as caught:
        apply_changes([FileChange(target, None, "{}")])
    assert caught.value.code == ErrorCode.FILE_WRITE_FAILED
    assert caught.value.details["path"] == str(target)
    assert not (tmp_path / "gone").exists()


def test_a_delete_prunes_the_folders_setup_made_but_stops_at_one_holding_other_files(
    tmp_path: Path,
) -> None:
    inner = tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    (tmp_path / "outer" / "someone-elses.txt").write_text("keep", encoding="utf-8")
    target = inner / "config.json"
    target.write_text("{}", encoding="utf-8")
    apply_changes([FileChange(target, "{}", None, prune_dirs=(inner, tmp_path / "outer"))])
    assert not inner.exists()
    assert (tmp_path / "outer" / "someone-elses.txt").read_text(encoding="utf-8") == "keep"
