"""File-level protocol functions on real notebooks and paired .py files."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jupytext
import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError, OutputProtocolError
from jupyter_jcli.outputs.notebook import (
    ResolvedCell,
    list_notebook_outputs,
    read_notebook_output,
    resolve_notebook_cell,
)

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
BAD = NOTEBOOKS / "bad"
ALL_NOTEBOOKS = sorted(NOTEBOOKS.glob("*.ipynb"))
RASTERS = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff"}


def _stored_cells(path: Path) -> list[dict[str, Any]]:
    from jupyter_jcli.notebook.io import read_notebook

    cells: list[dict[str, Any]] = read_notebook(path)["cells"]
    return cells


def _joined(value: object) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _write_pair(folder: Path, name: str, notebook: dict[str, Any] | None = None) -> Path:
    """Copy a real notebook (or ``notebook``) into ``folder`` with its py:percent twin."""
    document = notebook if notebook is not None else json.loads((NOTEBOOKS / name).read_bytes())
    nb_path = folder / name
    nb_path.write_text(json.dumps(document), encoding="utf-8")
    py_path = nb_path.with_suffix(".py")
    py_path.write_text(jupytext.writes(jupytext.read(nb_path), fmt="py:percent"), "utf-8")
    return py_path


def _assert_ipynb_provenance(source: dict[str, Any], path: Path, index: int) -> None:
    cell = _stored_cells(path)[index]
    assert source["kind"] == "notebook"
    assert source["path"] == str(path.resolve())
    assert Path(source["path"]).is_absolute()
    assert source["cell_index"] == index
    assert (source["requested_path"], source["requested_cell_index"]) == (source["path"], index)
    assert source["cell_type"] == cell["cell_type"]
    assert source["mapping"] == "direct"
    assert source.get("cell_id") == cell.get("id")
    assert source.get("execution_count") == cell.get("execution_count")
    assert "source_start_line" not in source


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.name)
def test_every_output_of_every_real_cell_is_listed_and_read(path: Path) -> None:
    cells = _stored_cells(path)
    for cell_index, cell in enumerate(cells):
        stored = cell.get("outputs", [])
        directory = list_notebook_outputs(path, cell_index)
        assert directory["status"] == "ok"
        _assert_ipynb_provenance(directory["source"], path, cell_index)
        assert directory["output_count"] == len(stored)
        assert [e["output_index"] for e in directory["outputs"]] == list(range(len(stored)))
        for output_index, output in enumerate(stored):
            read = read_notebook_output(path, cell_index, output_index)
            assert read["source"]["output_index"] == output_index
            _assert_ipynb_provenance(read["source"], path, cell_index)
            assert read["output_type"] == output["output_type"]
            selected = read.get("selected")
            if selected is None:
                continue
            assert selected["mime_type"] in output["data"]
            if selected["encoding"] == "base64":
                decoded = base64.b64decode(selected["data"], validate=True)
                assert decoded.startswith(RASTERS[selected["mime_type"]])
                assert base64.b64decode(_joined(output["data"][selected["mime_type"]])) == decoded
            elif selected["encoding"] == "utf-8" and not selected["truncated"]:
                assert selected["data"] == _joined(output["data"][selected["mime_type"]])


def test_fixture_set_has_plots_tables_streams_errors_plotly_and_latex() -> None:
    kinds: set[str] = set()
    for path in ALL_NOTEBOOKS:
        for cell in _stored_cells(path):
            for output in cell.get("outputs", []):
                kinds.add(output["output_type"])
                kinds.update(output.get("data", {}))
    assert {"stream", "error", "display_data", "execute_result"} <= kinds
    assert {"image/png", "text/html", "text/latex", "application/vnd.plotly.v1+json"} <= kinds


def test_nbformat_3_notebook_reads_its_upgraded_outputs() -> None:
    path = NOTEBOOKS / "text_outputs_and_images.v3.ipynb"
    error = read_notebook_output(path, 11, 0)
    assert error["output_type"] == "error"
    assert "cell_id" not in error["source"]
    plot = read_notebook_output(path, 9, 0)
    assert plot["selected"]["mime_type"] == "image/png"


def test_options_reach_the_protocol() -> None:
    path = NOTEBOOKS / "01.06-Errors-and-Debugging.ipynb"
    cell_index, output_index = next(
        (c, o)
        for c, cell in enumerate(_stored_cells(path))
        for o, out in enumerate(cell.get("outputs", []))
        if out["output_type"] == "stream" and len(_joined(out["text"])) > 10
    )
    page = read_notebook_output(path, cell_index, output_index, offset=2, limit=5)["stream"]
    assert (page["offset"], page["returned_characters"], page["next_offset"]) == (2, 5, 7)
    plot = NOTEBOOKS / "04.03-Errorbars.ipynb"
    plain = read_notebook_output(plot, 4, 0, mime_type="text/plain")
    assert plain["selected"]["mime_type"] == "text/plain"
    with pytest.raises(OutputProtocolError) as caught:
        read_notebook_output(plot, 4, 0, supported_mime_types=["text/html"])
    assert caught.value.code is ErrorCode.MIME_NOT_SUPPORTED
    with pytest.raises(OutputProtocolError) as caught:
        read_notebook_output(plot, 4, 0, max_transport_bytes=1000)
    assert caught.value.code is ErrorCode.OUTPUT_TOO_LARGE


def test_markdown_cell_has_zero_outputs() -> None:
    path = NOTEBOOKS / "01.06-Errors-and-Debugging.ipynb"
    assert list_notebook_outputs(path, 0)["output_count"] == 0
    with pytest.raises(OutputProtocolError) as caught:
        read_notebook_output(path, 0, 0)
    assert caught.value.code is ErrorCode.OUTPUT_NOT_FOUND


def test_malformed_outputs_value_is_output_data_invalid(tmp_path: Path) -> None:
    notebook = json.loads((NOTEBOOKS / "jupyter.ipynb").read_bytes())
    notebook["cells"][1]["outputs"] = {"0": "not a list"}
    path = tmp_path / "broken_outputs.ipynb"
    path.write_text(json.dumps(notebook), "utf-8")
    with pytest.raises(OutputProtocolError) as caught:
        list_notebook_outputs(path, 1)
    assert caught.value.code is ErrorCode.OUTPUT_DATA_INVALID


def test_named_cell_carries_its_name(tmp_path: Path) -> None:
    notebook = json.loads((NOTEBOOKS / "jupyterlab-slideshow_1441.ipynb").read_bytes())
    notebook["cells"][0]["metadata"]["jupyter_mcp"] = {"name": "title-slide"}
    path = tmp_path / "named.ipynb"
    path.write_text(json.dumps(notebook), "utf-8")
    resolved = resolve_notebook_cell(path, 0)
    assert isinstance(resolved, ResolvedCell)
    assert resolved.source["cell_name"] == "title-slide"
    assert resolved.source["cell_id"] == notebook["cells"][0]["id"]
    assert resolved.cell == notebook["cells"][0]
    assert resolved.notebook_path == path.resolve()


def test_py_cell_reads_outputs_of_the_paired_notebook_cell(tmp_path: Path) -> None:
    py_path = _write_pair(tmp_path, "04.03-Errorbars.ipynb")
    read = read_notebook_output(py_path, 4, 0)
    lines = py_path.read_text(encoding="utf-8").splitlines()
    markers = [i for i, line in enumerate(lines) if line.startswith("# %%")]
    filled = [i + 1 for i in range(markers[4] + 1, markers[5]) if lines[i].strip()]
    assert read["source"] == {
        "kind": "notebook",
        "path": str((tmp_path / "04.03-Errorbars.ipynb").resolve()),
        "cell_index": 4,
        "cell_type": "code",
        "mapping": "content",
        "requested_path": str(py_path.resolve()),
        "requested_cell_index": 4,
        "execution_count": _stored_cells(NOTEBOOKS / "04.03-Errorbars.ipynb")[4]["execution_count"],
        "source_start_line": filled[0],
        "source_end_line": filled[-1],
        "output_index": 0,
    }
    direct = read_notebook_output(NOTEBOOKS / "04.03-Errorbars.ipynb", 4, 0)
    assert read["selected"] == direct["selected"]


def test_py_cell_moved_and_named_maps_by_id(tmp_path: Path) -> None:
    notebook = json.loads((NOTEBOOKS / "text_outputs_and_images.ipynb").read_bytes())
    notebook["cells"][11]["metadata"]["jupyter_mcp"] = {"name": "raise-error"}
    py_path = _write_pair(tmp_path, "moved.ipynb", notebook)
    text = jupytext.read(py_path)
    text.cells.insert(0, text.cells.pop(11))
    text.cells[0].source += "\n# edited in the .py"
    py_path.write_text(jupytext.writes(text, fmt="py:percent"), "utf-8")
    directory = list_notebook_outputs(py_path, 0)
    assert directory["source"]["mapping"] == "id"
    assert directory["source"]["cell_index"] == 11
    assert directory["source"]["cell_name"] == "raise-error"
    assert directory["source"]["requested_cell_index"] == 0
    assert directory["outputs"][0]["output_type"] == "error"


def test_duplicated_py_source_is_cell_mapping_unreliable(tmp_path: Path) -> None:
    name = "01.06-Errors-and-Debugging.ipynb"
    py_path = _write_pair(tmp_path, name)
    sources = [
        (c["cell_type"], _joined(c["source"]).strip()) for c in _stored_cells(NOTEBOOKS / name)
    ]
    duplicated = next(i for i, key in enumerate(sources) if sources.count(key) > 1)
    with pytest.raises(OutputProtocolError) as caught:
        list_notebook_outputs(py_path, duplicated)
    assert caught.value.code is ErrorCode.CELL_MAPPING_UNRELIABLE
    assert isinstance(caught.value.__cause__, NotebookError)
    assert caught.value.details["cell_index"] == duplicated


def test_py_without_pair_is_notebook_pair_not_found(tmp_path: Path) -> None:
    py_path = tmp_path / "alone.py"
    py_path.write_text("# %%\nprint('hi')\n", "utf-8")
    with pytest.raises(OutputProtocolError) as caught:
        list_notebook_outputs(py_path, 0)
    assert caught.value.code is ErrorCode.NOTEBOOK_PAIR_NOT_FOUND


@pytest.mark.parametrize("index", [-1, 13, True, "0", 1.5, None])
def test_bad_cell_index_is_cell_not_found(index: Any) -> None:
    with pytest.raises(OutputProtocolError) as caught:
        list_notebook_outputs(NOTEBOOKS / "04.03-Errorbars.ipynb", index)
    assert caught.value.code is ErrorCode.CELL_NOT_FOUND
    assert caught.value.details["cell_count"] == 13


@pytest.mark.parametrize("index", [-1, 13, False])
def test_bad_py_cell_index_is_cell_not_found(tmp_path: Path, index: Any) -> None:
    py_path = _write_pair(tmp_path, "04.03-Errorbars.ipynb")
    with pytest.raises(OutputProtocolError) as caught:
        read_notebook_output(py_path, index, 0)
    assert caught.value.code is ErrorCode.CELL_NOT_FOUND
    assert caught.value.details["cell_count"] == 13


@pytest.mark.parametrize("name", sorted(p.name for p in BAD.glob("*.ipynb")))
def test_broken_notebook_is_notebook_read_failed(name: str) -> None:
    with pytest.raises(OutputProtocolError) as caught:
        list_notebook_outputs(BAD / name, 0)
    assert caught.value.code is ErrorCode.NOTEBOOK_READ_FAILED
    assert isinstance(caught.value.__cause__, NotebookError)


@pytest.mark.parametrize("name", ["absent.ipynb", "absent.py"])
def test_missing_file_is_file_not_found(tmp_path: Path, name: str) -> None:
    with pytest.raises(OutputProtocolError) as caught:
        read_notebook_output(tmp_path / name, 0, 0)
    assert caught.value.code is ErrorCode.FILE_NOT_FOUND


def test_directory_without_a_known_suffix_is_file_type_unsupported() -> None:
    with pytest.raises(OutputProtocolError) as caught:
        resolve_notebook_cell(NOTEBOOKS, 0)
    assert caught.value.code is ErrorCode.FILE_TYPE_UNSUPPORTED
    with pytest.raises(OutputProtocolError) as caught:
        resolve_notebook_cell(BAD.parent.parent, 0)
    assert caught.value.code is ErrorCode.FILE_TYPE_UNSUPPORTED


def test_directory_with_notebook_suffix_is_file_not_found(tmp_path: Path) -> None:
    (tmp_path / "folder.ipynb").mkdir()
    with pytest.raises(OutputProtocolError) as caught:
        resolve_notebook_cell(tmp_path / "folder.ipynb", 0)
    assert caught.value.code is ErrorCode.FILE_NOT_FOUND


@pytest.mark.parametrize("name", ["notes.txt", "notebook.json", "notebook.md", "Makefile"])
def test_other_suffixes_are_file_type_unsupported(tmp_path: Path, name: str) -> None:
    target = tmp_path / name
    target.write_bytes((NOTEBOOKS / "jupyter.ipynb").read_bytes())
    with pytest.raises(OutputProtocolError) as caught:
        list_notebook_outputs(target, 0)
    assert caught.value.code is ErrorCode.FILE_TYPE_UNSUPPORTED


def _imported_after(code: str) -> list[str]:
    probe = (
        "import sys\n"
        f"{code}\n"
        "print(sorted(m for m in ('jupytext', 'nbformat') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    imported: list[str] = json.loads(done.stdout.strip().replace("'", '"'))
    return imported


def test_reading_an_ipynb_imports_neither_jupytext_nor_nbformat() -> None:
    path = NOTEBOOKS / "05.11-K-Means.ipynb"
    code = (
        "from jupyter_jcli.outputs.notebook import read_notebook_output\n"
        f"read_notebook_output({str(path)!r}, 5, 0)"
    )
    assert _imported_after(code) == []


def test_reading_a_py_imports_jupytext(tmp_path: Path) -> None:
    py_path = _write_pair(tmp_path, "jupyter.ipynb")
    code = (
        "from jupyter_jcli.outputs.notebook import list_notebook_outputs\n"
        f"list_notebook_outputs({str(py_path)!r}, 1)"
    )
    assert "jupytext" in _imported_after(code)


def test_reads_never_write(tmp_path: Path) -> None:
    py_path = _write_pair(tmp_path, "text_outputs_and_images.ipynb")
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.rglob("*")}
    for index in range(12):
        list_notebook_outputs(py_path, index)
        list_notebook_outputs(tmp_path / "text_outputs_and_images.ipynb", index)
    after = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.rglob("*")}
    assert after == before
