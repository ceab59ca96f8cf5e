"""The installed ``j-cli`` editing a notebook in real subprocesses (source from stdin, undo
in a later process), with the snapshot cache under tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from jcli_helpers import EXAMPLE

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV

TIMEOUT = 60


def _run(
    cache: Path, *args: str | Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / ("j-cli.exe" if os.name == "nt" else "j-cli")
    return subprocess.run(
        [str(script), *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        check=False,
        env={**os.environ, CACHE_DIR_ENV: str(cache)},
    )


def test_edit_from_stdin_then_undo_in_another_process(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    notebook = tmp_path / "example.ipynb"
    shutil.copyfile(EXAMPLE, notebook)
    original = notebook.read_bytes()
    overview = json.loads(_run(cache, "-j", "notebook", "overview", notebook).stdout)
    rev = next(c["rev"] for c in overview["cells"] if c["name"] == "data")
    source = "data = [\n    {'price': 1, 'rooms': 2},\n]\n"
    edit = _run(cache, "-j", "cell", "update", notebook, "data", "--expected-rev", rev,
                "--source-file", "-", stdin=source)  # fmt: skip
    assert (edit.returncode, edit.stderr) == (0, "")
    doc = json.loads(edit.stdout)
    assert doc["stale"][0] == "data"
    assert {"import-dictvectorizer", "vec"} <= set(doc["stale"])
    assert any(cache.rglob("manifest.json"))
    again = _run(cache, "-j", "cell", "update", notebook, "data", "--expected-rev", rev,
                 "--source", "data = []")  # fmt: skip
    assert again.returncode == 1
    assert json.loads(again.stdout)["code"] == ErrorCode.REV_MISMATCH
    undo = _run(cache, "notebook", "undo", notebook)
    assert undo.returncode == 0 and undo.stdout.startswith("undid update_cell")
    assert notebook.read_bytes() == original


def test_usage_errors_exit_2_in_a_real_process(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run = _run(cache, "-j", "cell", "remove", EXAMPLE, "data")
    assert (run.returncode, run.stderr) == (2, "")
    assert json.loads(run.stdout)["code"] == ErrorCode.USAGE_ERROR
    assert not cache.exists()
