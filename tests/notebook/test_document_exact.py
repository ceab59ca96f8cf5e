"""A write keeps every value it does not own exactly (issue 9, item 9).

Integers beyond 64 bits, and number literals that a double cannot hold or that Python spells
differently, come back as written after an edit of another cell, in metadata and in
``application/json`` outputs; the file keeps its JSON style so later edits change only the
edited cell's lines.
"""

from __future__ import annotations

import difflib
import json
import shutil
import uuid
from pathlib import Path

import pytest

from jupyter_jcli.notebook import _exact
from jupyter_jcli.notebook._exact import JsonNumber, dumps_exact, loads_exact
from jupyter_jcli.notebook.document import CellOutputs, Document

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"
BIG = 2**70 + 123  # not a double: a rounded copy compares unequal
LITERALS = ["1.50", "1e400", "1E5", "1e-7", "3.14159265358979323846264338327950288", "-0"]


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(folder))
    return folder


def _notebook_with_numbers(
    tmp_path: Path, *, literals: bool = False, in_metadata: bool = True
) -> Path:
    """Sorting, Jupyter style, with big integers in notebook metadata, a cell's metadata and
    an ``application/json`` output of its cell 1; with ``literals``, also the odd
    :data:`LITERALS` in that output (``1e400`` makes orjson refuse the file: the read path
    then parses it with the standard library, so only the file without them is read lossily).
    """
    path = tmp_path / SORTING
    shutil.copyfile(NOTEBOOKS / SORTING, path)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    numbers = {"big": BIG, "negative": -(2**64) - 1, "max64": 2**64 - 1}
    if in_metadata:
        notebook["metadata"]["numbers"] = numbers
        notebook["cells"][1]["metadata"]["numbers"] = numbers
    notebook["cells"][1]["cell_type"] = "code"
    notebook["cells"][1]["execution_count"] = 1
    notebook["cells"][1]["outputs"] = [
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"application/json": {"ids": [BIG, -BIG], "n": 1}},
        }
    ]
    text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    for index, literal in enumerate(LITERALS if literals else []):
        text = text.replace('"n": 1', f'"n": 1,\n      "v{index}": {literal}', 1)
    path.write_text(text, encoding="utf-8")
    return path


def _changed_lines(before: bytes, after: bytes) -> list[str]:
    diff = difflib.unified_diff(
        before.decode().splitlines(), after.decode().splitlines(), n=0, lineterm=""
    )
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_big_integers_in_metadata_and_json_outputs_survive_an_edit_of_another_cell(
    tmp_path: Path,
) -> None:
    path = _notebook_with_numbers(tmp_path)
    Document.load(path).add_cell("x = 1", position="end")
    written = loads_exact(path.read_text(encoding="utf-8"))
    numbers = {"big": BIG, "negative": -(2**64) - 1, "max64": 2**64 - 1}
    assert written["metadata"]["numbers"] == numbers
    assert written["cells"][1]["metadata"]["numbers"] == numbers
    assert written["cells"][1]["outputs"][0]["data"]["application/json"]["ids"] == [BIG, -BIG]


def test_number_literals_are_written_back_as_they_were_read(tmp_path: Path) -> None:
    path = _notebook_with_numbers(tmp_path, literals=True)
    document = Document.load(path)
    last = document.cells[-1]
    document.update_cell(last.name, expected_rev=last.rev, source="y = 2")
    text = path.read_text(encoding="utf-8")
    for index, literal in enumerate(LITERALS):
        assert f'"v{index}": {literal},' in text or f'"v{index}": {literal}\n' in text
    assert "Infinity" not in text


@pytest.mark.parametrize("literals", [False, True], ids=["big-ints", "big-ints-and-literals"])
def test_a_file_with_such_numbers_keeps_its_style_so_a_later_edit_changes_only_its_cell(
    tmp_path: Path, literals: bool
) -> None:
    path = _notebook_with_numbers(tmp_path, literals=literals)
    document = Document.load(path)
    document.add_cell("x = 1", position="end")  # stores every cell's name once
    before = path.read_bytes()
    target = document.cells[5]
    document.update_cell(target.name, expected_rev=target.rev, source="edited = True")
    changed = _changed_lines(before, path.read_bytes())
    removed = [line for line in changed if line.startswith("-")]
    assert [line for line in changed if line.startswith("+")] == ['+    "edited = True"']
    assert len(removed) == len(target.source.splitlines())


def test_output_and_cache_writes_keep_the_other_cells_numbers(tmp_path: Path) -> None:
    path = _notebook_with_numbers(tmp_path)
    document = Document.load(path)
    code = next(v for v in document.cells if v.cell_type == "code" and v.index > 1)
    stream = [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}]
    document.write_outputs({code.name: CellOutputs(code.rev, stream, 3)})
    document.set_cell_metadata("summary", {code.name: (code.rev, "prints ok")})
    written = loads_exact(path.read_text(encoding="utf-8"))
    assert written["cells"][1]["outputs"][0]["data"]["application/json"]["ids"] == [BIG, -BIG]
    assert written["metadata"]["numbers"]["big"] == BIG


def test_the_document_model_after_a_write_is_what_a_fresh_load_reads(tmp_path: Path) -> None:
    path = _notebook_with_numbers(tmp_path)
    document = Document.load(path)
    document.add_cell("x = 1", position="end")
    assert document.notebook_dict() == Document.load(path).notebook_dict()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("18446744073709551616", 2**64),
        ("-9223372036854775809", -(2**63) - 1),
        ("1.0", 1.0),
        ("0.1", 0.1),
        ("-0.0", -0.0),
        ("1e-07", 1e-07),
        ("1.50", JsonNumber("1.50")),
        ("1e400", JsonNumber("1e400")),
        ("-0", JsonNumber("-0")),
        ("1E5", JsonNumber("1E5")),
    ],
)
def test_exact_parsing_keeps_each_number_as_written(text: str, expected: object) -> None:
    value = loads_exact(f"[{text}]")
    assert value == [expected]
    assert type(value[0]) is type(expected)
    assert dumps_exact(value) == f"[{text}]"


def test_a_placeholder_token_found_in_the_data_is_replaced_by_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokens = iter([uuid.UUID(int=1), uuid.UUID(int=1), uuid.UUID(int=2)])
    monkeypatch.setattr(_exact.uuid, "uuid4", lambda: next(tokens))
    clash = f"\x00jcli-number-{uuid.UUID(int=1).hex}-0"
    value = [clash, JsonNumber("1.50")]
    assert loads_exact(dumps_exact(value)) == value


def test_an_edit_through_a_paired_py_file_keeps_the_notebooks_big_integers(
    tmp_path: Path,
) -> None:
    import jupytext

    ipynb = _notebook_with_numbers(tmp_path, in_metadata=False)  # a text file holds metadata
    notebook = jupytext.read(ipynb)
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    py = ipynb.with_suffix(".py")
    jupytext.write(notebook, py, fmt="py:percent")
    text = ipynb.read_text(encoding="utf-8")  # pair it without rounding the integers
    ipynb.write_text(
        text.replace('"metadata": {\n  "kernelspec"', '"metadata": {\n  "jupytext": '
                     '{\n   "formats": "ipynb,py:percent"\n  },\n  "kernelspec"', 1),
        encoding="utf-8",
    )  # fmt: skip
    document = Document.load(py)
    assert document.paired_py == py
    assert document.notebook_path == ipynb
    document.add_cell("y = 0", position="end")  # written by jupyter-jcli: the sides agree
    text = py.read_text(encoding="utf-8")
    py.write_text(text.replace("Up to this point", "Edited: up to this point", 1))
    document = Document.load(py)  # the cell rebuilt from the text file carries the outputs
    assert document.cells[1].source.startswith("Edited")
    document.add_cell("x = 1", position="end")
    written = loads_exact(ipynb.read_text(encoding="utf-8"))
    data = next(cell for cell in written["cells"] if cell.get("outputs"))["outputs"][0]["data"]
    assert data["application/json"]["ids"] == [BIG, -BIG]


def test_undo_merged_with_a_later_write_keeps_big_integers_and_puts_a_removed_cell_back_exactly(
    tmp_path: Path,
) -> None:
    path = _notebook_with_numbers(tmp_path)
    document = Document.load(path)
    holder = document.cells[1].name
    document.remove_cell(holder, expected_rev=document.cells[1].rev)
    # a write since the removal (a cache entry) makes the undo a merge, not a byte restore
    document.set_cell_metadata(
        "summary", {document.cells[0].name: (document.cells[0].rev, {"n": 1})}
    )
    document.undo()
    written = loads_exact(path.read_text(encoding="utf-8"))
    numbers = {"big": BIG, "negative": -(2**64) - 1, "max64": 2**64 - 1}
    assert written["metadata"]["numbers"] == numbers
    assert written["cells"][1]["metadata"]["numbers"] == numbers
    assert written["cells"][1]["outputs"][0]["data"]["application/json"]["ids"] == [BIG, -BIG]
