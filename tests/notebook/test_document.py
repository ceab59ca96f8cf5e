"""Document: load without writing, mutations with revs, byte-stable atomic saves."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError, UsageError
from jupyter_jcli.notebook._jsonstyle import detect_style, dumps_notebook
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.io import parse_notebook

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(folder))
    return folder


def _copy(tmp_path: Path, name: str = SORTING) -> Path:
    target = tmp_path / "work" / name
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(NOTEBOOKS / name, target)
    return target


def _changed_lines(before: bytes, after: bytes) -> list[str]:
    import difflib

    diff = difflib.unified_diff(
        before.decode().splitlines(), after.decode().splitlines(), n=0, lineterm=""
    )
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_loading_writes_nothing_and_creates_no_cache(tmp_path: Path, cache: Path) -> None:
    path = _copy(tmp_path)
    before = os.stat(path)
    document = Document.load(path)
    assert len(document.cells) == 46
    assert not any(view.name_stored for view in document.cells)
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns
    assert path.read_bytes() == (NOTEBOOKS / SORTING).read_bytes()
    assert not cache.exists()
    assert sorted(p.name for p in path.parent.iterdir()) == [SORTING]


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda path: path.name)
def test_saving_an_unchanged_fixture_gives_back_the_same_bytes(path: Path) -> None:
    raw = path.read_bytes()
    notebook = parse_notebook(raw, path=path)
    if notebook.get("metadata", {}).get("orig_nbformat") == 3:
        assert detect_style(raw, notebook) is None  # upgraded in memory: rewritten as v4
        return
    style = detect_style(raw, notebook)
    assert style is not None
    assert dumps_notebook(notebook, style) == raw


def test_a_notebook_with_unsorted_keys_keeps_its_key_order(tmp_path: Path) -> None:
    path = _copy(tmp_path, "raw_cell_with_non_dict_yaml_content.ipynb")
    document = Document.load(path)
    cell = document.cell("content")
    document.update_cell("content", expected_rev=cell.rev, source="---\nOther.\n---")
    text = path.read_text(encoding="utf-8")
    assert text.index('"outputs": []') < text.index('"id": "0b3bde0a"')
    assert "Other." in text


def test_the_first_mutation_stores_names_then_an_edit_touches_only_that_cell(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    original = path.read_bytes()
    document = Document.load(path)
    names = [view.name for view in document.cells]
    cell = document.cell("x-sort")
    first = document.update_cell("x-sort", expected_rev=cell.rev, source="x.sort()\nx")
    stored = [view.name for view in document.cells]
    assert stored == names
    assert all(view.name_stored for view in document.cells)
    old_cells = json.loads(original)["cells"]
    new_cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for index, (old, new) in enumerate(zip(old_cells, new_cells, strict=True)):
        assert new["metadata"].pop("jupyter_mcp") == {"name": names[index]}
        if index != cell.index:
            assert new == old
        else:
            assert {**new, "source": old["source"]} == old
    assert first.written == (path,)

    second_before = path.read_bytes()
    cell = document.cell("l")
    document.update_cell("l", expected_rev=cell.rev, source="L = [2, 1]\nsorted(L)")
    changed = _changed_lines(second_before, path.read_bytes())
    assert sorted(changed) == sorted(
        [
            '-    "L = [3, 1, 4, 1, 5, 9, 2, 6]\\n",',
            '-    "sorted(L)  # returns a sorted copy"',
            '+    "L = [2, 1]\\n",',
            '+    "sorted(L)"',
        ]
    )
    reread = json.loads(path.read_text(encoding="utf-8"))
    assert reread["metadata"] == json.loads(original)["metadata"]
    assert (reread["nbformat"], reread["nbformat_minor"]) == (4, 4)


def test_update_keeps_outputs_and_execution_count_as_stale(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    cell = document.cell("l")
    before = json.loads(path.read_text())["cells"][cell.index]
    result = document.update_cell("l", expected_rev=cell.rev, source="sorted([3, 2])")
    after = json.loads(path.read_text())["cells"][cell.index]
    assert after["outputs"] == before["outputs"] and after["outputs"]
    assert after["execution_count"] == before["execution_count"]
    assert result.cell is not None
    assert result.cell.rev != cell.rev
    assert result.changed == ("l",)
    assert result.previous_structure_rev != result.structure_rev == document.structure_rev


def test_changing_the_type_drops_what_nbformat_forbids(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    cell = document.cell("l")
    document.update_cell("l", expected_rev=cell.rev, cell_type="markdown")
    markdown = json.loads(path.read_text())["cells"][cell.index]
    assert markdown["cell_type"] == "markdown"
    assert "outputs" not in markdown and "execution_count" not in markdown
    back = document.cell("l")
    document.update_cell("l", expected_rev=back.rev, cell_type="code")
    code = json.loads(path.read_text())["cells"][cell.index]
    assert code["outputs"] == [] and code["execution_count"] is None


def test_add_cell_after_an_anchor_and_at_both_ends(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    anchor = document.cell("import-numpy")
    added = document.add_cell("y = np.ones(3)", after="import-numpy", expected_rev=anchor.rev)
    assert added.cell is not None
    assert (added.cell.name, added.cell.index) == ("y", anchor.index + 1)
    start = document.add_cell("# Setup", cell_type="markdown", position="start", name="intro")
    assert start.cell is not None and start.cell.index == 0
    end = document.add_cell("print('done')", position="end", expected_rev=document.structure_rev)
    assert end.cell is not None and end.cell.index == len(document.cells) - 1
    before = document.cell("intro")
    document.add_cell(
        "z = 0", before="sorting-arrays", expected_rev=document.cell("sorting-arrays").rev
    )
    assert document.cell("z").index == before.index + 1
    cells = json.loads(path.read_text())["cells"]
    new = cells[document.cell("y").index]
    assert new == {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {"jupyter_mcp": {"name": "y"}},
        "outputs": [],
        "source": ["y = np.ones(3)"],
    }
    assert Document.load(path).cells == document.cells


def test_new_cells_get_an_nbformat_id_only_from_minor_version_5(tmp_path: Path) -> None:
    modern = _copy(tmp_path, "jupyterlab-slideshow_1441.ipynb")
    document = Document.load(modern)
    result = document.add_cell("x = 1")
    assert result.cell is not None and result.cell.cell_id is not None
    ids = [cell["id"] for cell in json.loads(modern.read_text())["cells"]]
    assert len(set(ids)) == len(ids) == 2
    legacy = Document.load(_copy(tmp_path))
    result = legacy.add_cell("x = 1")
    assert result.cell is not None and result.cell.cell_id is None


def test_remove_and_move_cells(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    count = len(document.cells)
    target = document.cell("sorted")
    removed = document.remove_cell("sorted", expected_rev=target.rev)
    assert removed.cell is None and removed.removed == target
    assert len(document.cells) == count - 1
    with pytest.raises(NotebookError) as info:
        document.cell("sorted")
    assert info.value.code == ErrorCode.CELL_NOT_FOUND

    moving = document.cell("x-sort")
    moved = document.move_cell("x-sort", expected_rev=moving.rev, before="l")
    assert moved.cell is not None
    assert moved.cell.index == document.cell("l").index - 1
    assert moved.changed == ("x-sort",)
    document.move_cell("x-sort", expected_rev=moving.rev, position="end")
    assert document.cells[-1].name == "x-sort"
    document.move_cell("x-sort", expected_rev=moving.rev, after="sorting-arrays")
    assert document.cells[1].name == "x-sort"
    assert [view.name for view in Document.load(path).cells] == [v.name for v in document.cells]


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda d: d.update_cell("nope", expected_rev="0" * 12, source="x"), "CELL_NOT_FOUND"),
        (lambda d: d.add_cell("x", after="nope", expected_rev="0" * 12), "CELL_NOT_FOUND"),
        (lambda d: d.move_cell("l", expected_rev=d.cell("l").rev, after="nope"), "CELL_NOT_FOUND"),
        (lambda d: d.update_cell("l", expected_rev="0" * 12, source="x"), "REV_MISMATCH"),
        (lambda d: d.remove_cell("l", expected_rev="0" * 12), "REV_MISMATCH"),
        (lambda d: d.add_cell("x", after="l", expected_rev="0" * 12), "REV_MISMATCH"),
        (lambda d: d.add_cell("x", position="end", expected_rev="0" * 12), "REV_MISMATCH"),
        (lambda d: d.add_cell("x", name="l"), "NAME_CONFLICT"),
        (
            lambda d: d.update_cell("l", expected_rev=d.cell("l").rev, new_name="sorted"),
            "NAME_CONFLICT",
        ),
        (lambda d: d.add_cell("x", name="Bad Name"), "INVALID_NAME"),
        (lambda d: d.add_cell("x", cell_type="heading"), "INVALID_CELL_TYPE"),
        (
            lambda d: d.update_cell("l", expected_rev=d.cell("l").rev, cell_type="heading"),
            "INVALID_CELL_TYPE",
        ),
        (lambda d: d.add_cell("x", before="l", after="l", expected_rev="0"), "USAGE_ERROR"),
        (lambda d: d.add_cell("x", after="l"), "USAGE_ERROR"),
        (lambda d: d.move_cell("l", expected_rev=d.cell("l").rev, before="l"), "USAGE_ERROR"),
    ],
)
def test_refused_mutations_leave_the_file_and_document_untouched(
    tmp_path: Path, cache: Path, call: object, code: str
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    cells = document.cells
    with pytest.raises((NotebookError, UsageError)) as info:
        call(document)  # type: ignore[operator]
    assert info.value.code == code
    assert path.read_bytes() == (NOTEBOOKS / SORTING).read_bytes()
    assert document.cells == cells
    assert not any(cache.glob("snapshots/*/0*"))


def test_rev_mismatch_carries_the_current_state_of_the_cell(tmp_path: Path) -> None:
    document = Document.load(_copy(tmp_path))
    current = document.cell("l")
    with pytest.raises(NotebookError) as info:
        document.update_cell("l", expected_rev="deadbeef0000", source="x")
    assert info.value.code == ErrorCode.REV_MISMATCH
    details = info.value.details
    assert details["name"] == "l"
    assert details["rev"] == current.rev
    assert details["index"] == current.index
    assert details["source"] == current.source
    assert details["expected_rev"] == "deadbeef0000"


def test_the_write_is_atomic_and_keeps_the_file_mode(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    os.chmod(path, 0o640)
    document = Document.load(path)
    document.add_cell("x = 1")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == [SORTING]


def test_a_failed_write_reports_notebook_write_failed_and_keeps_the_file(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)

    def refuse(source: object, target: object, **_dir_fds: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(NotebookError) as info:
        document.add_cell("x = 1")
    assert info.value.code == ErrorCode.NOTEBOOK_WRITE_FAILED
    assert path.read_bytes() == (NOTEBOOKS / SORTING).read_bytes()
    assert sorted(p.name for p in path.parent.iterdir()) == [SORTING]
    assert not any(cache.glob("snapshots/*/0*"))


def _outside_edit(path: Path, index: int, source: str) -> None:
    """A second writer: another process rewrites one cell, Jupyter style."""
    code = (
        "import json, sys\n"
        "path, index, source = sys.argv[1], int(sys.argv[2]), sys.argv[3]\n"
        "nb = json.load(open(path, encoding='utf-8'))\n"
        "nb['cells'][index]['source'] = source.splitlines(True)\n"
        "text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + '\\n'\n"
        "open(path, 'w', encoding='utf-8').write(text)\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(path), str(index), source], check=True, timeout=60
    )


def test_an_outside_edit_to_another_cell_is_kept(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    target = document.cell("x-sort")
    other = document.cell("l")
    _outside_edit(path, other.index, "L = ['edited', 'outside']")
    result = document.update_cell("x-sort", expected_rev=target.rev, source="x.sort()")
    assert result.reloaded
    fresh = Document.load(path)
    assert fresh.cell("l").source == "L = ['edited', 'outside']"
    assert fresh.cell("x-sort").source == "x.sort()"


def test_an_outside_edit_to_the_target_cell_is_refused_with_its_new_state(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    target = document.cell("x-sort")
    _outside_edit(path, target.index, "x.sort(kind='stable')")
    outside = path.read_bytes()
    with pytest.raises(NotebookError) as info:
        document.update_cell("x-sort", expected_rev=target.rev, source="x.sort()")
    assert info.value.code == ErrorCode.REV_MISMATCH
    assert info.value.details["source"] == "x.sort(kind='stable')"
    assert path.read_bytes() == outside
    assert document.cell("x-sort").source == "x.sort(kind='stable')"


def test_an_outside_edit_to_the_anchor_refuses_an_add(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    anchor = document.cell("x-sort")
    _outside_edit(path, anchor.index, "x.sort(kind='stable')")
    with pytest.raises(NotebookError) as info:
        document.add_cell("y = 1", after="x-sort", expected_rev=anchor.rev)
    assert info.value.code == ErrorCode.REV_MISMATCH
