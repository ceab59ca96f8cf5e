"""Writes race other programs: an outside save in the window before the replace is merged, not
lost (issue 9 item 5); a killed writer's temporary files are cleared by the next write (item 8)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook import _commit as commit_module
from jupyter_jcli.notebook._atomic import STALE_SECONDS, atomic_write_bytes, writer_scope
from jupyter_jcli.notebook.document import WRITE_ATTEMPTS, CellOutputs, Document
from jupyter_jcli.notebook.snapshots import SnapshotStore

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(folder))
    return folder


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "nb" / SORTING
    target.parent.mkdir()
    shutil.copyfile(NOTEBOOKS / SORTING, target)
    return target


def _outside_save(path: Path, marker: str) -> None:
    """Save as an editor does: read, add a Markdown cell, write a temporary file, rename."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "markdown", "metadata": {}, "source": marker})
    tmp = path.with_name(f".~{path.name}")
    tmp.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _sources(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]) for cell in cells]


def _save_in_the_window(monkeypatch: pytest.MonkeyPatch, path: Path, times: int) -> list[str]:
    """Save ``path`` from outside while each of the first ``times`` writes is prepared: after
    the mutation re-read the file, before it replaces it (``_commit.render_files`` runs there)."""
    original = commit_module.render_files
    markers: list[str] = []

    def render(*args: Any, **kwargs: Any) -> list[bytes]:
        rendered = original(*args, **kwargs)
        if len(markers) < times:
            markers.append(f"outside save {len(markers)}")
            _outside_save(path, markers[-1])
        return rendered

    monkeypatch.setattr(commit_module, "render_files", render)
    return markers


def test_an_outside_save_in_the_window_before_the_replace_is_kept_and_reported(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    markers = _save_in_the_window(monkeypatch, path, times=1)
    result = document.add_cell("ours = 1")
    assert result.reloaded
    sources = _sources(path)
    assert markers[0] in sources
    assert "ours = 1" in sources
    assert len(SnapshotStore(path).snapshots()) == 1  # the abandoned attempt left none


def test_an_outside_save_in_the_window_of_an_output_write_is_kept(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    code = next(cell for cell in document.cells if cell.cell_type == "code")
    markers = _save_in_the_window(monkeypatch, path, times=1)
    output = {"output_type": "stream", "name": "stdout", "text": "ran\n"}
    written = document.write_outputs({code.name: CellOutputs(code.rev, [output], 7)})
    assert written == (code.name,)
    assert markers[0] in _sources(path)
    cell = json.loads(path.read_text(encoding="utf-8"))["cells"][code.index]
    assert cell["execution_count"] == 7


def test_a_file_saved_outside_at_every_attempt_is_refused_with_write_conflict(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    markers = _save_in_the_window(monkeypatch, path, times=WRITE_ATTEMPTS)
    with pytest.raises(NotebookError) as caught:
        document.add_cell("ours = 1")
    assert caught.value.code == ErrorCode.WRITE_CONFLICT
    assert caught.value.details["attempts"] == WRITE_ATTEMPTS
    sources = _sources(path)
    assert "ours = 1" not in sources
    assert all(marker in sources for marker in markers)
    assert SnapshotStore(path).snapshots() == []


def test_a_compared_write_refuses_a_file_that_no_longer_holds_what_was_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f.ipynb"
    path.write_bytes(b"theirs")
    with pytest.raises(NotebookError) as caught:
        atomic_write_bytes(path, b"ours", expected=b"what we read")
    assert caught.value.code == ErrorCode.WRITE_CONFLICT
    assert path.read_bytes() == b"theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.ipynb"]


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)
    return child.pid


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_the_next_write_removes_stale_temporaries_of_dead_writers_only(
    tmp_path: Path, cache: Path
) -> None:
    path = _copy(tmp_path)
    folder = path.parent
    dead = folder / f".{path.name}.jcli-{_dead_pid()}-0a1b2c3d.tmp"
    legacy = folder / f".{path.name}.k3j_x9qz.tmp"  # earlier versions' mkstemp name
    live = folder / f".{path.name}.jcli-{os.getpid()}-0a1b2c3d.tmp"
    fresh = folder / f".{path.name}.jcli-{_dead_pid()}-deadbeef.tmp"
    someone_elses = folder / f".{path.name}.swp"
    for file in (dead, legacy, live, fresh, someone_elses):
        file.write_bytes(b"partial")
    for file in (dead, legacy, live, someone_elses):
        _age(file, STALE_SECONDS * 2)
    Document.load(path).add_cell("x = 1")
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted([path.name, live.name, fresh.name, someone_elses.name])


_KILLED_WRITER = """
import os, signal, sys
from jupyter_jcli.notebook.document import Document

real_replace = os.replace

def killed(src, dst, **kwargs):
    if os.fspath(dst) == os.path.basename(sys.argv[1]):  # the notebook's own rename
        os.kill(os.getpid(), signal.SIGKILL)  # killed between the temporary file and it
    real_replace(src, dst, **kwargs)

document = Document.load(sys.argv[1])
os.replace = killed
document.add_cell("x = 1")
"""


def test_a_writer_killed_before_its_rename_leaves_nothing_after_the_next_write(
    tmp_path: Path, cache: Path
) -> None:
    path = _copy(tmp_path)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, str(path)], timeout=120, check=False
    )
    assert killed.returncode == -9
    [leftover] = [p for p in path.parent.iterdir() if p.name != path.name]
    _age(leftover, STALE_SECONDS * 2)
    Document.load(path).add_cell("y = 2")
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_a_fresh_temporary_of_a_dead_writer_of_this_machine_goes_at_once_a_foreign_one_waits(
    tmp_path: Path, cache: Path
) -> None:
    scope = writer_scope()
    if scope is None:
        pytest.skip("no boot id and pid namespace to name the writer's scope on this system")
    path = _copy(tmp_path)
    folder = path.parent
    here = folder / f".{path.name}.jcli-{_dead_pid()}-{scope}-0a1b2c3d.tmp"
    elsewhere = folder / f".{path.name}.jcli-{_dead_pid()}-{'f' * 12}-0a1b2c3d.tmp"
    for file in (here, elsewhere):
        file.write_bytes(b"partial")
    Document.load(path).add_cell("x = 1")
    assert sorted(p.name for p in folder.iterdir()) == sorted([path.name, elsewhere.name])


def test_a_writer_killed_before_its_rename_leaves_nothing_after_the_very_next_write(
    tmp_path: Path, cache: Path
) -> None:
    if writer_scope() is None:
        pytest.skip("no boot id and pid namespace to name the writer's scope on this system")
    path = _copy(tmp_path)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, str(path)], timeout=120, check=False
    )
    assert killed.returncode == -9
    assert [p for p in path.parent.iterdir() if p.name != path.name]  # its temporary file
    Document.load(path).add_cell("y = 2")
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
