"""Pairing .py files with notebooks and mapping cells, on real notebooks through jupytext."""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.pairing import (
    CellMapping,
    find_paired_notebook,
    map_py_cell,
    read_py,
    resolve_py_cell,
)

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
ROUND_TRIP = [
    "01.06-Errors-and-Debugging.ipynb",
    "01.07-Timing-and-Profiling.ipynb",
    "03.02-Data-Indexing-and-Selection.ipynb",
    "05.11-K-Means.ipynb",
    "Notebook_with_R_magic.ipynb",
    "Notebook_with_html_and_latex_cells.ipynb",
    "The_flavors_of_raw_cells.ipynb",
    "plotly_graphs.ipynb",
    "raw_cell_with_complex_yaml_like_content.ipynb",
    "text_outputs_and_images.ipynb",
]

Edit = Callable[[Any], None]


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((NOTEBOOKS / name).read_bytes())
    return loaded


def _key(cell: dict[str, Any]) -> tuple[str, str]:
    source = cell["source"]
    text = "".join(source) if isinstance(source, list) else source
    return cell["cell_type"], "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def _write_pair(
    folder: Path,
    notebook: dict[str, Any],
    *,
    stem: str = "nb",
    fmt: str = "py:percent",
    edit_py: Edit | None = None,
    py_folder: Path | None = None,
) -> tuple[Path, Path]:
    """Write ``notebook`` as ``stem.ipynb`` and its jupytext text twin (edited by ``edit_py``)."""
    folder.mkdir(parents=True, exist_ok=True)
    nb_path = folder / f"{stem}.ipynb"
    nb_path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    text_nb = jupytext.reads(nb_path.read_text(encoding="utf-8"), fmt="ipynb")
    if edit_py is not None:
        edit_py(text_nb)
    py_path = (py_folder or folder) / f"{stem}.py"
    py_path.parent.mkdir(parents=True, exist_ok=True)
    py_path.write_text(jupytext.writes(text_nb, fmt=fmt), encoding="utf-8")
    return nb_path, py_path


def _name(cell: dict[str, Any], name: str) -> None:
    cell.setdefault("metadata", {})["jupyter_mcp"] = {"name": name}


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_every_cell_of_a_real_py_percent_twin_maps_back_or_is_refused(
    tmp_path: Path, name: str
) -> None:
    notebook = _load(name)
    nb_path, py_path = _write_pair(tmp_path, notebook)
    counts = Counter(_key(cell) for cell in notebook["cells"])
    assert len(read_py(py_path).cells) == len(notebook["cells"])
    for index, cell in enumerate(notebook["cells"]):
        if counts[_key(cell)] == 1:
            assert map_py_cell(py_path, index) == CellMapping(
                py_path=py_path.resolve(),
                py_cell_index=index,
                notebook_path=nb_path.resolve(),
                notebook_cell_index=index,
                mapping="content",
            )
        else:
            with pytest.raises(NotebookError) as caught:
                map_py_cell(py_path, index)
            assert caught.value.code is ErrorCode.CELL_MAPPING_UNRELIABLE
            assert index in caught.value.details["py_duplicates"]


def test_real_notebooks_with_duplicated_sources_exist_in_the_round_trip_set() -> None:
    duplicated = [
        name
        for name in ROUND_TRIP
        if max(Counter(_key(c) for c in _load(name)["cells"]).values()) > 1
    ]
    assert duplicated


def test_light_format_twin_maps_back(tmp_path: Path) -> None:
    notebook = _load("text_outputs_and_images.ipynb")
    _, py_path = _write_pair(tmp_path, notebook, fmt="py:light")
    assert "# %%" not in py_path.read_text(encoding="utf-8")
    mapped = [map_py_cell(py_path, i).notebook_cell_index for i in range(len(notebook["cells"]))]
    assert mapped == list(range(len(notebook["cells"])))


def test_magic_cells_are_commented_in_py_and_map_back(tmp_path: Path) -> None:
    notebook = _load("01.07-Timing-and-Profiling.ipynb")
    _, py_path = _write_pair(tmp_path, notebook)
    text = py_path.read_text(encoding="utf-8")
    magic_cells = [
        i
        for i, cell in enumerate(notebook["cells"])
        if cell["cell_type"] == "code" and "".join(cell["source"]).lstrip().startswith("%")
    ]
    assert len(magic_cells) >= 5
    assert "\n# %timeit" in text or "\n# %%timeit" in text
    for index in magic_cells:
        mapping = map_py_cell(py_path, index)
        assert (mapping.notebook_cell_index, mapping.mapping) == (index, "content")


def test_r_cell_magic_maps_back(tmp_path: Path) -> None:
    notebook = _load("Notebook_with_R_magic.ipynb")
    _, py_path = _write_pair(tmp_path, notebook)
    r_cells = [i for i, c in enumerate(notebook["cells"]) if "%%R" in "".join(c["source"])]
    assert r_cells
    for index in r_cells:
        assert map_py_cell(py_path, index).notebook_cell_index == index


def test_edited_cell_is_unreliable(tmp_path: Path) -> None:
    notebook = _load("04.03-Errorbars.ipynb")
    target = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code")

    def edit(nb: Any) -> None:
        nb.cells[target].source += "\nprint('edited')"

    _, py_path = _write_pair(tmp_path, notebook, edit_py=edit)
    with pytest.raises(NotebookError) as caught:
        map_py_cell(py_path, target)
    assert caught.value.code is ErrorCode.CELL_MAPPING_UNRELIABLE
    assert caught.value.details["reason"] == "no_match"
    assert caught.value.details["candidates"] == []
    assert map_py_cell(py_path, target + 1).notebook_cell_index == target + 1


def test_trailing_whitespace_and_surrounding_blank_lines_do_not_break_content_match(
    tmp_path: Path,
) -> None:
    notebook = _load("04.03-Errorbars.ipynb")
    target = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code")

    def edit(nb: Any) -> None:
        lines = nb.cells[target].source.split("\n")
        nb.cells[target].source = "\n".join(line + "   " for line in lines) + "\n\n"

    _, py_path = _write_pair(tmp_path, notebook, edit_py=edit)
    assert map_py_cell(py_path, target).mapping == "content"


def test_edited_cell_with_a_shared_name_maps_by_id(tmp_path: Path) -> None:
    notebook = _load("04.03-Errorbars.ipynb")
    target = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code")
    _name(notebook["cells"][target], "basic-errorbars")

    def edit(nb: Any) -> None:
        nb.cells[target].source = "# rewritten entirely\nplt.show()"

    _, py_path = _write_pair(tmp_path, notebook, edit_py=edit)
    assert 'jupyter_mcp={"name": "basic-errorbars"}' in py_path.read_text(encoding="utf-8")
    mapping = map_py_cell(py_path, target)
    assert (mapping.notebook_cell_index, mapping.mapping) == (target, "id")


def test_name_survives_a_move_in_the_py_file(tmp_path: Path) -> None:
    notebook = _load("jupyter.ipynb")
    _name(notebook["cells"][1], "moved")

    def move(nb: Any) -> None:
        nb.cells.append(nb.cells.pop(1))
        nb.cells[-1].source = "edited and moved"

    _, py_path = _write_pair(tmp_path, notebook, edit_py=move)
    last = len(notebook["cells"]) - 1
    mapping = map_py_cell(py_path, last)
    assert (mapping.notebook_cell_index, mapping.mapping) == (1, "id")


def test_duplicated_sources_with_distinct_names_map_by_id(tmp_path: Path) -> None:
    notebook = _load("01.06-Errors-and-Debugging.ipynb")
    counts = Counter(_key(c) for c in notebook["cells"])
    duplicated = [i for i, c in enumerate(notebook["cells"]) if counts[_key(c)] > 1]
    assert len(duplicated) >= 2
    for number, index in enumerate(duplicated):
        _name(notebook["cells"][index], f"debug-step-{number}")
    _, py_path = _write_pair(tmp_path, notebook)
    for index in duplicated:
        mapping = map_py_cell(py_path, index)
        assert (mapping.notebook_cell_index, mapping.mapping) == (index, "id")


def test_content_match_claimed_by_another_cells_name_is_unreliable(tmp_path: Path) -> None:
    notebook = _load("jupyter.ipynb")
    _name(notebook["cells"][2], "claimed")
    original_source = "".join(notebook["cells"][2]["source"])

    def edit(nb: Any) -> None:
        nb.cells[2].source = "rewritten, still named"
        nb.cells[4].source = original_source
        nb.cells[4].cell_type = nb.cells[2].cell_type

    _, py_path = _write_pair(tmp_path, notebook, edit_py=edit)
    assert map_py_cell(py_path, 2).notebook_cell_index == 2
    with pytest.raises(NotebookError) as caught:
        map_py_cell(py_path, 4)
    assert caught.value.code is ErrorCode.CELL_MAPPING_UNRELIABLE
    assert caught.value.details["reason"] == "conflict"
    assert caught.value.details["claimed_by"] == [2]


def test_content_match_onto_a_differently_named_cell_is_unreliable(tmp_path: Path) -> None:
    notebook = _load("jupyter.ipynb")
    _name(notebook["cells"][3], "old-name")

    def rename(nb: Any) -> None:
        nb.cells[3].metadata["jupyter_mcp"] = {"name": "new-name"}

    _, py_path = _write_pair(tmp_path, notebook, edit_py=rename)
    with pytest.raises(NotebookError) as caught:
        map_py_cell(py_path, 3)
    assert caught.value.code is ErrorCode.CELL_MAPPING_UNRELIABLE
    assert caught.value.details["clashing"] == ["name"]


def test_duplicated_name_is_unreliable(tmp_path: Path) -> None:
    notebook = _load("jupyter.ipynb")
    _name(notebook["cells"][1], "twice")
    _name(notebook["cells"][3], "twice")
    _, py_path = _write_pair(tmp_path, notebook)
    with pytest.raises(NotebookError) as caught:
        map_py_cell(py_path, 1)
    assert caught.value.code is ErrorCode.CELL_MAPPING_UNRELIABLE
    assert caught.value.details["reason"] == "duplicate_name"
    assert caught.value.details["candidates"] == [1, 3]


def test_explicit_cell_id_on_the_percent_line_maps_an_edited_cell(tmp_path: Path) -> None:
    notebook = _load("raw_cell_with_complex_yaml_like_content.ipynb")
    assert notebook["nbformat_minor"] == 5
    code = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code")
    cell_id = notebook["cells"][code]["id"]

    def edit(nb: Any) -> None:
        nb.cells[code].metadata["id"] = cell_id
        nb.cells[code].source = "completely different"

    _, py_path = _write_pair(tmp_path, notebook, edit_py=edit)
    assert f'id="{cell_id}"' in py_path.read_text(encoding="utf-8")
    mapping = map_py_cell(py_path, code)
    assert (mapping.notebook_cell_index, mapping.mapping) == (code, "id")


def test_random_ids_jupytext_gives_py_cells_are_never_used(tmp_path: Path) -> None:
    notebook = _load("raw_cell_with_complex_yaml_like_content.ipynb")
    code = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code")

    def edit(nb: Any) -> None:
        nb.cells[code].source = "completely different"

    _, py_path = _write_pair(tmp_path, notebook, edit_py=edit)
    with pytest.raises(NotebookError) as caught:
        map_py_cell(py_path, code)
    assert caught.value.code is ErrorCode.CELL_MAPPING_UNRELIABLE


def test_pairing_recorded_with_prefix_folders_is_followed(tmp_path: Path) -> None:
    notebook = _load("text_outputs_and_images.ipynb")
    notebook["metadata"]["jupytext"] = {"formats": "notebooks//ipynb,scripts//py:percent"}
    nb_path, py_path = _write_pair(tmp_path / "notebooks", notebook, py_folder=tmp_path / "scripts")
    assert "notebooks//ipynb,scripts//py:percent" in py_path.read_text(encoding="utf-8")
    assert find_paired_notebook(py_path) == nb_path.resolve()
    assert map_py_cell(py_path, 5).notebook_path == nb_path.resolve()


def test_notebook_side_formats_find_a_py_without_header(tmp_path: Path) -> None:
    notebook = _load("jupyter.ipynb")
    notebook["metadata"]["jupytext"] = {"formats": "notebooks//ipynb,scripts//py:percent"}

    def strip_header(nb: Any) -> None:
        nb.metadata = {"jupytext": {"notebook_metadata_filter": "-all"}}

    nb_path, py_path = _write_pair(
        tmp_path / "notebooks", notebook, py_folder=tmp_path / "scripts", edit_py=strip_header
    )
    assert "formats" not in py_path.read_text(encoding="utf-8")
    assert find_paired_notebook(py_path) == nb_path.resolve()


def test_suffix_pairing_from_the_header_is_followed(tmp_path: Path) -> None:
    notebook = _load("jupyter.ipynb")
    notebook["metadata"]["jupytext"] = {"formats": "ipynb,.pct.py:percent"}
    nb_path = tmp_path / "analysis.ipynb"
    nb_path.write_text(json.dumps(notebook), encoding="utf-8")
    py_path = tmp_path / "analysis.pct.py"
    py_path.write_text(jupytext.writes(jupytext.read(nb_path), fmt="py:percent"), "utf-8")
    assert find_paired_notebook(py_path) == nb_path.resolve()


def test_same_stem_notebook_beside_is_the_default_pair(tmp_path: Path) -> None:
    nb_path, py_path = _write_pair(tmp_path, _load("jupyter.ipynb"), stem="beside")
    assert find_paired_notebook(py_path) == nb_path.resolve()


def test_py_paired_with_an_nbformat_3_notebook_maps_into_the_upgraded_cells(
    tmp_path: Path,
) -> None:
    v3 = NOTEBOOKS / "text_outputs_and_images.v3.ipynb"
    nb_path = tmp_path / "old.ipynb"
    nb_path.write_bytes(v3.read_bytes())
    upgraded = jupytext.reads(nbformat.writes(nbformat.read(str(v3), as_version=4)), fmt="ipynb")
    (tmp_path / "old.py").write_text(jupytext.writes(upgraded, fmt="py:percent"), "utf-8")
    paired = resolve_py_cell(tmp_path / "old.py", 11)
    assert paired.mapping.notebook_cell_index == 11
    assert paired.notebook["cells"][11]["outputs"][0]["output_type"] == "error"


def test_no_pair_is_notebook_pair_not_found(tmp_path: Path) -> None:
    _, py_path = _write_pair(tmp_path, _load("jupyter.ipynb"), stem="lonely")
    (tmp_path / "lonely.ipynb").unlink()
    with pytest.raises(NotebookError) as caught:
        find_paired_notebook(py_path)
    assert caught.value.code is ErrorCode.NOTEBOOK_PAIR_NOT_FOUND
    with pytest.raises(NotebookError) as caught:
        map_py_cell(py_path, 0)
    assert caught.value.code is ErrorCode.NOTEBOOK_PAIR_NOT_FOUND


def test_two_notebooks_claiming_one_py_is_notebook_pair_not_found(tmp_path: Path) -> None:
    notebook = _load("jupyter.ipynb")
    py_path = tmp_path / "scripts" / "twin.py"
    py_path.parent.mkdir()
    text_nb = jupytext.reads(json.dumps(notebook), fmt="ipynb")
    text_nb.metadata = {"jupytext": {"notebook_metadata_filter": "-all"}}
    py_path.write_text(jupytext.writes(text_nb, fmt="py:percent"), "utf-8")
    claims = {
        tmp_path / "twin.ipynb": "ipynb,scripts//py:percent",
        tmp_path / "notebooks" / "twin.ipynb": "notebooks//ipynb,scripts//py:percent",
    }
    for path, formats in claims.items():
        document = copy.deepcopy(notebook)
        document["metadata"]["jupytext"] = {"formats": formats}
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(document), "utf-8")
    with pytest.raises(NotebookError) as caught:
        find_paired_notebook(py_path)
    assert caught.value.code is ErrorCode.NOTEBOOK_PAIR_NOT_FOUND
    assert sorted(caught.value.details["candidates"]) == sorted(str(p.resolve()) for p in claims)


def test_notebook_whose_formats_do_not_cover_the_py_is_not_a_pair(tmp_path: Path) -> None:
    notebook = _load("jupyter.ipynb")
    notebook["metadata"]["jupytext"] = {"formats": "ipynb,docs//md"}
    (tmp_path / "scripts").mkdir()
    (tmp_path / "twin.ipynb").write_text(json.dumps(notebook), "utf-8")
    py_path = tmp_path / "scripts" / "twin.py"
    py_path.write_text("# %%\nx = 1\n", "utf-8")
    with pytest.raises(NotebookError) as caught:
        find_paired_notebook(py_path)
    assert caught.value.code is ErrorCode.NOTEBOOK_PAIR_NOT_FOUND


def test_py_cell_index_out_of_range_is_cell_not_found(tmp_path: Path) -> None:
    notebook = _load("jupyter.ipynb")
    _, py_path = _write_pair(tmp_path, notebook)
    for index in (len(notebook["cells"]), -1):
        with pytest.raises(NotebookError) as caught:
            map_py_cell(py_path, index)
        assert caught.value.code is ErrorCode.CELL_NOT_FOUND
        assert caught.value.details["cell_count"] == len(notebook["cells"])


def test_missing_py_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotebookError) as caught:
        map_py_cell(tmp_path / "absent.py", 0)
    assert caught.value.code is ErrorCode.FILE_NOT_FOUND


def test_directory_named_py_is_file_not_found(tmp_path: Path) -> None:
    (tmp_path / "package.py").mkdir()
    with pytest.raises(NotebookError) as caught:
        find_paired_notebook(tmp_path / "package.py")
    assert caught.value.code is ErrorCode.FILE_NOT_FOUND


def test_non_py_text_file_is_file_type_unsupported(tmp_path: Path) -> None:
    target = tmp_path / "nb.md"
    target.write_text("# title\n", "utf-8")
    with pytest.raises(NotebookError) as caught:
        map_py_cell(target, 0)
    assert caught.value.code is ErrorCode.FILE_TYPE_UNSUPPORTED


def test_mapping_never_writes_or_syncs(tmp_path: Path) -> None:
    notebook = _load("01.07-Timing-and-Profiling.ipynb")

    def edit(nb: Any) -> None:
        nb.cells[3].source += "\n# edited"

    _, py_path = _write_pair(tmp_path, notebook, edit_py=edit)
    before = _snapshot(tmp_path)
    for index in range(len(notebook["cells"])):
        try:
            map_py_cell(py_path, index)
        except NotebookError as err:
            assert err.code is ErrorCode.CELL_MAPPING_UNRELIABLE
    assert _snapshot(tmp_path) == before


def test_py_cells_carry_no_random_jupytext_ids_and_read_the_same_twice(tmp_path: Path) -> None:
    _, py_path = _write_pair(tmp_path, _load("text_outputs_and_images.ipynb"))
    first, second = read_py(py_path), read_py(py_path)
    assert first.cells == second.cells
    assert all("id" not in cell for cell in first.cells)


def test_read_pair_maps_every_cell_like_map_py_cell(tmp_path: Path) -> None:
    from jupyter_jcli.notebook.pairing import read_pair

    _, py_path = _write_pair(tmp_path, _load("01.06-Errors-and-Debugging.ipynb"))
    paired = read_pair(py_path)
    assert paired.pairing_error is None
    for index in range(paired.cell_count):
        try:
            expected: CellMapping | ErrorCode = map_py_cell(py_path, index)
        except NotebookError as err:
            expected = err.code
        try:
            got: CellMapping | ErrorCode = paired.mapping(index)
        except NotebookError as err:
            got = err.code
        assert got == expected
