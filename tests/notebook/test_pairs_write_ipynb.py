"""An .ipynb paired with a text file (jupytext.formats) is edited as the pair; a pair whose
.ipynb holds newer, different inputs is refused (PAIR_OUT_OF_SYNC), never silently reverted."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.document import CellOutputs, Document
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV, SnapshotStore, undo
from jupyter_jcli.workbench import update_cell

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"
PAIRABLE = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb") if ".v3." not in path.name)


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


def _jupytext(*args: str | Path) -> None:
    """The real jupytext command line, as a user runs it (its entry point, in this process)."""
    from jupytext.cli import jupytext

    assert jupytext(["--quiet", *map(str, args)]) == 0


def _pair(tmp_path: Path, name: str = SORTING, fmt: str = "py:percent") -> tuple[Path, Path]:
    """``cp NAME p.ipynb; jupytext --set-formats ipynb,FMT p.ipynb`` (creates the text file)."""
    folder = tmp_path / "work"
    folder.mkdir(exist_ok=True)
    ipynb = folder / "p.ipynb"
    shutil.copyfile(NOTEBOOKS / name, ipynb)
    _jupytext("--set-formats", f"ipynb,{fmt}", ipynb)
    suffix = ".md" if fmt == "md" else ".py"
    text = ipynb.with_suffix(suffix)
    assert text.is_file()
    return ipynb, text


def _make_newer(path: Path, than: Path) -> None:
    """Set ``path``'s mtime one second after ``than``'s (no sleeping)."""
    other = os.stat(than)
    os.utime(path, ns=(other.st_atime_ns, other.st_mtime_ns + 1_000_000_000))


def _ipynb_sources(path: Path) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]]


def test_an_edit_through_the_ipynb_writes_the_paired_py_and_is_never_reverted(
    tmp_path: Path,
) -> None:
    """The reported sequence: edit x through the .ipynb, then a no-op edit through the .py."""
    ipynb, py = _pair(tmp_path)
    document = Document.load(ipynb)
    assert document.paired_py == py
    cell = document.cell("l")
    result = document.update_cell("l", expected_rev=cell.rev, source="L = [9, 8]\nsorted(L)")
    assert set(result.written) == {ipynb, py}
    assert "L = [9, 8]\nsorted(L)" in py.read_text()
    assert "L = [9, 8]\nsorted(L)" in _ipynb_sources(ipynb)
    through_py = Document.load(py)
    target = through_py.cell("x-sort")
    outcome = update_cell(py, "x-sort", expected_rev=target.rev, source=target.source)
    assert outcome.written == ()
    assert Document.load(py).cell("l").source == "L = [9, 8]\nsorted(L)"
    assert Document.load(ipynb).cell("l").source == "L = [9, 8]\nsorted(L)"
    assert "L = [9, 8]\nsorted(L)" in _ipynb_sources(ipynb)


def test_the_pair_seen_from_either_file_is_the_same_notebook(tmp_path: Path) -> None:
    ipynb, py = _pair(tmp_path)
    from_ipynb = Document.load(ipynb)
    from_py = Document.load(py)
    assert [(v.name, v.rev) for v in from_ipynb.cells] == [(v.name, v.rev) for v in from_py.cells]
    assert from_ipynb.notebook_path == from_py.notebook_path == ipynb


def test_undo_through_the_ipynb_restores_both_files(tmp_path: Path) -> None:
    ipynb, py = _pair(tmp_path)
    before = (ipynb.read_bytes(), py.read_bytes())
    document = Document.load(ipynb)
    document.add_cell("w = 1", position="end")
    [snapshot] = SnapshotStore(ipynb).snapshots()
    assert [entry.path for entry in snapshot.files] == [ipynb, py]
    assert undo(ipynb).restored == (ipynb, py)
    assert (ipynb.read_bytes(), py.read_bytes()) == before


def test_outputs_written_through_the_ipynb_keep_the_pair_in_sync(tmp_path: Path) -> None:
    ipynb, py = _pair(tmp_path)
    document = Document.load(ipynb)
    cell = document.cell("l")
    stream = [{"output_type": "stream", "name": "stdout", "text": "ran\n"}]
    document.write_outputs({"l": CellOutputs(cell.rev, stream, 3)})
    _make_newer(ipynb, py)  # outputs alone leave the .py as it was: older, same inputs
    again = Document.load(py)
    result = again.update_cell("l", expected_rev=cell.rev, source="L = [1]")
    assert set(result.written) == {ipynb, py}


@pytest.mark.parametrize("name", PAIRABLE)
def test_a_fresh_jupytext_pair_of_every_fixture_is_in_sync_and_editable_from_the_ipynb(
    tmp_path: Path, name: str
) -> None:
    ipynb, py = _pair(tmp_path, name)
    _make_newer(ipynb, py)  # same inputs: the order of the writes does not matter
    document = Document.load(ipynb)
    result = document.add_cell("added = 1", position="end")
    assert set(result.written) == {ipynb, py}
    assert py.read_text().rstrip().endswith("added = 1")
    assert _ipynb_sources(ipynb)[-1] == "added = 1"
    assert [(v.name, v.rev) for v in Document.load(py).cells] == [
        (v.name, v.rev) for v in document.cells
    ]


def test_a_markdown_pair_is_written_in_its_own_format(tmp_path: Path) -> None:
    ipynb, md = _pair(tmp_path, fmt="md")
    document = Document.load(ipynb)
    assert document.paired_py == md
    cell = document.cell("l")
    document.update_cell("l", expected_rev=cell.rev, source="L = [5, 4]")
    assert '```python jupyter_mcp={"name": "l"}\nL = [5, 4]\n```' in md.read_text()
    assert "L = [5, 4]" in _ipynb_sources(ipynb)


@pytest.mark.parametrize("via", ["ipynb", "py"])
def test_a_pair_whose_ipynb_holds_newer_inputs_is_refused(tmp_path: Path, via: str) -> None:
    """Someone edited the .ipynb with a tool that ignores the pairing: jupytext refuses such
    a pair, and so do we, instead of taking the .py's older inputs."""
    ipynb, py = _pair(tmp_path)
    notebook = json.loads(ipynb.read_text())
    index = Document.load(ipynb).cell("l").index
    notebook["cells"][index]["source"] = ["L = ['edited', 'in', 'ipynb']"]
    ipynb.write_text(json.dumps(notebook, indent=1))
    _make_newer(ipynb, py)
    before = (ipynb.read_bytes(), py.read_bytes())
    target = ipynb if via == "ipynb" else py
    document = Document.load(target)  # reads still work
    other = document.cell("x-sort")
    with pytest.raises(NotebookError) as info:
        document.update_cell("x-sort", expected_rev=other.rev, source="x.sort()")
    assert info.value.code == ErrorCode.PAIR_OUT_OF_SYNC
    details = info.value.details
    assert details["newer"] == "notebook"
    assert details["notebook_path"] == str(ipynb)
    assert details["text_path"] == str(py)
    assert details["notebook_mtime_ns"] > details["text_mtime_ns"]
    with pytest.raises(NotebookError) as info:
        document.write_outputs({"x-sort": CellOutputs(other.rev, [], 1)})
    assert info.value.code == ErrorCode.PAIR_OUT_OF_SYNC
    assert (ipynb.read_bytes(), py.read_bytes()) == before
    assert SnapshotStore(ipynb).snapshots() == []
    # jupytext --sync takes the newer .ipynb's inputs; then the edit applies and keeps them.
    _jupytext("--sync", ipynb)
    result = Document.load(target).update_cell("x-sort", expected_rev=other.rev, source="x.sort()")
    assert set(result.written) == {ipynb, py}
    assert "L = ['edited', 'in', 'ipynb']" in py.read_text()
    assert "L = ['edited', 'in', 'ipynb']" in _ipynb_sources(ipynb)


def _edit_py(py: Path, ipynb: Path) -> None:
    """A person edits the text file (x-sort's second line), after the notebook."""
    py.write_text(py.read_text().replace("sorted('python')", "sorted('jupyter')"))
    _make_newer(py, ipynb)


@pytest.mark.parametrize("via", ["ipynb", "py"])
def test_a_newer_py_with_different_inputs_is_refused_until_the_sides_agree(
    tmp_path: Path, via: str
) -> None:
    """Issue 27 item 7: jupytext's newer-wins rule would drop whatever the .ipynb changed;
    with no record that the .ipynb is unchanged since the sides last agreed, a write is
    refused, and every read says the pair is out of sync and which side it shows."""
    ipynb, py = _pair(tmp_path)
    _edit_py(py, ipynb)
    before = (ipynb.read_bytes(), py.read_bytes())
    document = Document.load(ipynb if via == "ipynb" else py)
    facts = document.pair_out_of_sync
    assert facts is not None
    assert (facts["newer"], facts["shown"], facts["writes"]) == ("text", "text", "refused")
    assert (facts["notebook_path"], facts["text_path"]) == (str(ipynb), str(py))
    target = document.cell("x-sort")
    with pytest.raises(NotebookError) as info:
        document.update_cell("x-sort", expected_rev=target.rev, source="x.sort()")
    assert info.value.code == ErrorCode.PAIR_OUT_OF_SYNC
    assert info.value.details["newer"] == "text"
    assert (ipynb.read_bytes(), py.read_bytes()) == before
    _jupytext("--sync", py)  # takes the newer text file's inputs: now they agree
    synced = Document.load(ipynb if via == "ipynb" else py)
    assert synced.pair_out_of_sync is None
    synced.update_cell("x-sort", expected_rev=target.rev, source="x.sort()")
    assert any("sorted('jupyter')" in source for source in _ipynb_sources(ipynb))


def test_an_ipynb_edit_is_never_overwritten_by_a_later_py_edit(tmp_path: Path) -> None:
    """The reported sequence: the .ipynb edited by a tool that ignores the pairing, then the
    .py edited (so it is newer): the next edit is refused, both changes stay."""
    ipynb, py = _pair(tmp_path)
    document = Document.load(ipynb)
    cell = document.cell("l")
    document.update_cell("l", expected_rev=cell.rev, source="L = [1, 2]")  # agreed, recorded
    notebook = json.loads(ipynb.read_text())
    notebook["cells"][cell.index]["source"] = ["L = ['edited', 'in', 'ipynb']"]
    ipynb.write_text(json.dumps(notebook, indent=1))
    _edit_py(py, ipynb)
    before = (ipynb.read_bytes(), py.read_bytes())
    again = Document.load(py)
    assert again.pair_out_of_sync is not None
    assert again.pair_out_of_sync["writes"] == "refused"
    target = again.cell("x-sort")
    with pytest.raises(NotebookError) as info:
        again.update_cell("x-sort", expected_rev=target.rev, source="x.sort()")
    assert info.value.code == ErrorCode.PAIR_OUT_OF_SYNC
    assert (ipynb.read_bytes(), py.read_bytes()) == before


def test_a_py_edit_after_a_jcli_write_is_taken_into_the_notebook(tmp_path: Path) -> None:
    """The .ipynb is byte for byte what jupyter-jcli wrote with the .py: only the .py
    changed since, so an edit takes its inputs (nothing of the notebook's is lost)."""
    ipynb, py = _pair(tmp_path)
    document = Document.load(py)
    cell = document.cell("l")
    document.update_cell("l", expected_rev=cell.rev, source="L = [1, 2]")
    _edit_py(py, ipynb)
    reread = Document.load(ipynb)
    assert reread.pair_out_of_sync is not None
    assert reread.pair_out_of_sync["writes"] == "take_text"
    target = reread.cell("x-sort")
    reread.update_cell("x-sort", expected_rev=target.rev, source="x.sort()")
    assert any("sorted('jupyter')" in source for source in _ipynb_sources(ipynb))
    assert Document.load(py).pair_out_of_sync is None


def test_a_newer_py_with_the_same_inputs_is_in_sync(tmp_path: Path) -> None:
    ipynb, py = _pair(tmp_path)
    _make_newer(py, ipynb)
    document = Document.load(ipynb)
    assert document.pair_out_of_sync is None
    target = document.cell("x-sort")
    result = document.update_cell("x-sort", expected_rev=target.rev, source="x.sort()")
    assert set(result.written) == {ipynb, py}


def test_a_notebook_paired_with_several_text_files_reads_but_refuses_edits(
    tmp_path: Path,
) -> None:
    ipynb, _py = _pair(tmp_path, fmt="py:percent")
    _jupytext("--set-formats", "ipynb,py:percent,md", ipynb)
    assert ipynb.with_suffix(".md").is_file()
    before = ipynb.read_bytes()
    document = Document.load(ipynb)
    cell = document.cell("l")
    with pytest.raises(NotebookError) as info:
        document.update_cell("l", expected_rev=cell.rev, source="L = [0]")
    assert info.value.code == ErrorCode.FILE_TYPE_UNSUPPORTED
    assert len(info.value.details["paired_files"]) == 2
    assert ipynb.read_bytes() == before


def test_formats_naming_a_missing_text_file_leave_the_notebook_unpaired(tmp_path: Path) -> None:
    ipynb, py = _pair(tmp_path)
    py.unlink()
    document = Document.load(ipynb)
    assert document.paired_py is None
    cell = document.cell("l")
    result = document.update_cell("l", expected_rev=cell.rev, source="L = [3]")
    assert result.written == (ipynb,)
    assert not py.exists()


def _shell(command: str, cwd: Path) -> None:
    """Run an advised command as a user would, with this environment's jupytext on PATH."""
    import subprocess
    import sys

    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    subprocess.run(
        ["bash", "-c", command], cwd=cwd, env={**os.environ, "PATH": path}, check=True, timeout=60
    )


def _make_older(path: Path, than: Path) -> None:
    """Set ``path``'s mtime two seconds before ``than``'s (nothing dated in the future, so a
    ``touch`` makes a file the more recent one, as it does for a user)."""
    other = os.stat(than)
    os.utime(path, ns=(other.st_atime_ns, other.st_mtime_ns - 2_000_000_000))


def _stem_pair(tmp_path: Path, formats_in: str) -> tuple[Path, Path]:
    """``s.ipynb`` and ``s.py`` with the same cells, the pairing named in the notebook's
    metadata (``"ipynb"``), in the script's header (``"text"``) or nowhere (``"none"``: a
    pair by stem only)."""
    import jupytext
    import nbformat

    folder = tmp_path / "work"
    folder.mkdir()
    ipynb, py = folder / "s.ipynb", folder / "s.py"
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("y = x + 1")]
    )
    text_nb = copy.deepcopy(notebook)
    if formats_in == "ipynb":
        notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    if formats_in == "text":
        text_nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    nbformat.write(notebook, ipynb)
    py.write_text(jupytext.writes(text_nb, fmt="py:percent"), "utf-8")
    return ipynb, py


@pytest.mark.parametrize("formats_in", ["ipynb", "text", "none"])
@pytest.mark.parametrize("changed", ["notebook", "text"])
@pytest.mark.parametrize("keep", ["notebook", "text"])
def test_the_commands_a_refusal_gives_make_the_pair_agree_keeping_the_side_asked(
    tmp_path: Path, formats_in: str, changed: str, keep: str
) -> None:
    """Item 3/7: the refusal says what to do, and doing it works whichever file names
    the pairing (real jupytext, run as a user runs it)."""
    ipynb, py = _stem_pair(tmp_path, formats_in)
    if changed == "notebook":
        notebook = json.loads(ipynb.read_text("utf-8"))
        notebook["cells"][0]["source"] = "x = 10"
        ipynb.write_text(json.dumps(notebook, indent=1), "utf-8")
        _make_older(py, ipynb)
        kept_source = "x = 10" if keep == "notebook" else "x = 1"
    else:
        py.write_text(py.read_text("utf-8").replace("x = 1\n", "x = 20\n"), "utf-8")
        _make_older(ipynb, py)
        kept_source = "x = 20" if keep == "text" else "x = 1"
    document = Document.load(py)
    target = document.cell(document.cells[1].name)
    with pytest.raises(NotebookError) as info:
        document.update_cell(target.name, expected_rev=target.rev, source="y = x + 2")
    assert info.value.code == ErrorCode.PAIR_OUT_OF_SYNC
    assert info.value.details["newer"] == changed
    _shell(info.value.details[f"keep_{keep}"], ipynb.parent)
    agreed = Document.load(py)
    assert agreed.pair_out_of_sync is None
    assert agreed.cells[0].source == kept_source
    agreed.update_cell(target.name, expected_rev=target.rev, source="y = x + 2")
    assert _ipynb_sources(ipynb)[0] == kept_source


def test_the_edit_the_script_then_run_it_loop_stays_open_edit_after_edit(tmp_path: Path) -> None:
    """A run's output write that took the .py's inputs leaves the sides agreed: the next .py
    edit is taken again, and the one after (the trial found the third refused)."""
    from jupyter_jcli.notebook.document import CellOutputs

    ipynb, py = _pair(tmp_path)
    document = Document.load(py)
    cell = document.cell("l")
    document.update_cell("l", expected_rev=cell.rev, source="L = [1, 2]")  # a write of ours
    for word in ("jupyter", "again", "more"):
        py.write_text(py.read_text().replace("sorted('", f"sorted('{word}"))
        _make_newer(py, ipynb)
        run = Document.load(py)
        assert run.pair_out_of_sync is not None
        assert run.pair_out_of_sync["writes"] == "take_text", word
        target = run.cell("x-sort")
        output = {"output_type": "stream", "name": "stdout", "text": [word]}
        run.write_outputs({"x-sort": CellOutputs(target.rev, [output], 1)})  # as a run does
        assert any(f"sorted('{word}" in source for source in _ipynb_sources(ipynb)), word
