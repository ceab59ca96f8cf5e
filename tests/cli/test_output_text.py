"""``j-cli output show|clean`` in text mode (no ``-j``), on runs saved in-process (no kernel).

The JSON forms are checked on real kernels in ``test_exec_cli.py``; these check what a person
reads: the listing, each kind of output, the next-page hint, and the clean report.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from jcli_helpers import png_b64, run_cli

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.runs import save_run

ORIGIN = {"operation": "exec"}
EXECUTION = {"status": "ok", "execution_count": 1}
DAY = 86_400.0


def _outputs() -> list[dict[str, Any]]:
    lines = "".join(f"line {i}\n" for i in range(40))
    return [
        {"output_type": "stream", "name": "stdout", "text": lines},
        {"output_type": "error", "ename": "ValueError", "evalue": "bad value",
         "traceback": ["\x1b[31mTraceback\x1b[0m", "ValueError: bad value"]},
        {"output_type": "display_data", "metadata": {},
         "data": {"image/png": png_b64(4, 3), "text/plain": "<Figure>"}},
        {"output_type": "execute_result", "execution_count": 1, "metadata": {},
         "data": {"application/json": {"a": [1, 2]}, "text/plain": "{'a': [1, 2]}"}},
        {"output_type": "display_data", "metadata": {}, "data": {"text/html": "<b>bold</b>"}},
    ]  # fmt: skip


@pytest.fixture
def manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    saved = save_run(tmp_path, _outputs(), origin=ORIGIN, execution=EXECUTION)
    return str(saved.manifest_path)


def test_the_listing_names_every_output_and_the_command_that_reads_one(manifest: str) -> None:
    result = run_cli("output", "show", manifest)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("run ") and lines[0].endswith(": 5 outputs")
    kinds = [line.split()[1] for line in lines[1:6]]
    assert kinds == ["stream", "error", "display_data", "execute_result", "display_data"]
    assert "ValueError: bad value" in lines[2]
    assert lines[-1] == f"read one: j-cli output show {manifest} --output 0"


def test_a_stream_page_prints_its_text_and_the_next_page_command_on_stderr(manifest: str) -> None:
    result = run_cli("output", "show", manifest, "--output", "0", "--limit", "7")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "line 0\n"
    assert result.stderr.startswith("# output 0: ")
    hint = result.stderr.splitlines()[-1]
    assert hint.startswith(f"# next page: j-cli output show {manifest} --output 0 --offset ")
    offset = int(hint.rsplit(" ", 1)[1])
    rest = run_cli("output", "show", manifest, "--output", "0", "--offset", str(offset))
    assert rest.exit_code == 0
    assert ("line 0\n" + rest.stdout).startswith("line 0\nline 1\n")
    assert rest.stdout.endswith("line 39\n")
    assert "# next page" not in rest.stderr


def test_an_error_prints_its_name_value_and_traceback_without_ansi_colours(manifest: str) -> None:
    result = run_cli("output", "show", manifest, "--output", "1")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "ValueError: bad value",
        "Traceback",
        "ValueError: bad value",
    ]


def test_an_image_is_described_by_type_size_and_pixels_not_printed(manifest: str) -> None:
    result = run_cli("output", "show", manifest, "--output", "2")
    assert result.exit_code == 0, result.stderr
    line = result.stdout.strip()
    assert line.startswith("image/png, ") and line.endswith(" bytes, 4x3 px")
    assert "also: text/plain" in result.stderr
    plain = run_cli("output", "show", manifest, "--output", "2", "--mime", "text/plain")
    assert plain.stdout == "<Figure>\n"
    assert "# next page" not in plain.stderr


def test_json_data_prints_indented_and_other_text_prints_as_is(manifest: str) -> None:
    data = run_cli("output", "show", manifest, "--output", "3", "--mime", "application/json")
    assert data.exit_code == 0, data.stderr
    assert json.loads(data.stdout) == {"a": [1, 2]}
    assert '\n  "a": [' in data.stdout
    html = run_cli("output", "show", manifest, "--output", "4")
    assert html.stdout == "<b>bold</b>\n"


def test_read_options_without_an_output_index_are_a_usage_error(manifest: str) -> None:
    result = run_cli("-j", "output", "show", manifest, "--offset", "3")
    assert result.exit_code == 2
    assert result.json()["code"] == ErrorCode.USAGE_ERROR


def test_an_empty_run_lists_no_outputs_and_offers_no_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    saved = save_run(tmp_path, [], origin=ORIGIN, execution=EXECUTION)
    result = run_cli("output", "show", saved.manifest_path)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0].endswith(": 0 outputs")
    assert "read one" not in result.stdout


def test_clean_reports_the_runs_deleted_and_the_entries_kept_with_their_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    old = save_run(tmp_path, [], origin=ORIGIN, execution=EXECUTION, now=1_000_000.0)
    new = save_run(tmp_path, [], origin=ORIGIN, execution=EXECUTION)
    stray = tmp_path / ".j-cli" / "outputs" / "notes"
    stray.mkdir()
    dry = run_cli("output", "clean", "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        f"{old.folder.parent}: 2 runs, would delete 1",
        f"  would delete {old.folder}",
        f"  kept {stray}: no_manifest",
    ]
    assert old.folder.is_dir()
    done = run_cli("output", "clean")
    assert done.stdout.splitlines()[:2] == [
        f"{old.folder.parent}: 2 runs, deleted 1",
        f"  deleted {old.folder}",
    ]
    assert not old.folder.exists() and new.folder.is_dir() and stray.is_dir()


def test_clean_in_json_lists_kept_entries_with_path_reason_and_detail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = save_run(tmp_path, [], origin=ORIGIN, execution=EXECUTION)
    manifest = json.loads(run.manifest_path.read_text(encoding="utf-8"))
    manifest["created"] = "yesterday"
    run.manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    report = run_cli("-j", "output", "clean", "--days", "0").json()
    assert report["runs"] == 0 and report["deleted"] == []
    assert report["kept"] == [
        {"path": str(run.folder), "reason": "uncertain", "detail": "no readable 'created' time"}
    ]
    assert run.folder.is_dir()


def test_clean_where_there_is_no_outputs_folder_says_so_and_creates_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli("output", "clean")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "no .j-cli/outputs here: nothing to clean\n"
    assert os.listdir(tmp_path) == []
