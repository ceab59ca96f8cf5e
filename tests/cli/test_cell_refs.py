"""Every ``j-cli`` command that takes a cell takes a name or an index, through one resolver
with one error; ``notebook cells`` shows the overview's names; ``notebook show`` prints whole
sources (bounded)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import jupytext
import pytest
from jcli_helpers import EXAMPLE, NOTEBOOKS, code_cell, run_cli

from jupyter_jcli.cli._cell_ref import parse_cell_ref
from jupyter_jcli.cli._show import SHOW_SOURCE_MAX_LINES
from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.notebook.names import assign_names
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV

CHART = ("24", "matplotlib-inline")
"""The example's chart cell, by index and by the name the overview gives it."""
TABLE = ("18", "import-pandas")


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    monkeypatch.setenv("JUPYTER_MCP_DISABLE_SUMMARIES", "1")
    return folder


def _copy(tmp_path: Path, label: str) -> Path:
    folder = tmp_path / label
    folder.mkdir()
    return Path(shutil.copy(EXAMPLE, folder / EXAMPLE.name))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ok(*args: str | Path) -> dict[str, Any]:
    run = run_cli("-j", *args)
    assert run.exit_code == 0, run.stdout
    return run.json()


READS = [
    (["notebook", "outputs", "{nb}", "--cell", "{cell}"], CHART),
    (["notebook", "output", "{nb}", "--cell", "{cell}", "--output", "0"], CHART),
    (["notebook", "output", "{nb}", "--cell", "{cell}", "--output", "0", "--mime", "text/plain"],
     TABLE),
    (["notebook", "show", "{nb}", "--cell", "{cell}"], CHART),
    (["notebook", "read", "{nb}", "--cell", "{cell}", "--budget", "3000"], TABLE),
]  # fmt: skip


@pytest.mark.parametrize(("args", "cell"), READS)
def test_a_read_command_gives_the_same_answer_for_a_cells_name_and_its_index(
    args: list[str], cell: tuple[str, str]
) -> None:
    before = _digest(EXAMPLE)
    by_index, by_name = (_ok(*[arg.format(nb=EXAMPLE, cell=ref) for arg in args]) for ref in cell)
    assert by_index == by_name
    assert _digest(EXAMPLE) == before  # resolving a name never stores it


@pytest.mark.parametrize(
    "args",
    [
        ["notebook", "outputs", "{nb}", "--cell", "{cell}"],
        ["notebook", "output", "{nb}", "--cell", "{cell}", "--output", "0"],
        ["notebook", "show", "{nb}", "--cell", "{cell}"],
        ["notebook", "read", "{nb}", "--cell", "{cell}"],
        ["notebook", "summarize", "{nb}", "--cell", "{cell}"],
        ["cell", "update", "{nb}", "{cell}", "--expected-rev", "x", "--source", "y = 1"],
        ["cell", "remove", "{nb}", "{cell}", "--expected-rev", "x"],
        ["cell", "move", "{nb}", "{cell}", "--expected-rev", "x", "--end"],
        ["cell", "move", "{nb}", "data", "--expected-rev", "x", "--after", "{cell}"],
        ["cell", "add", "{nb}", "--source", "y = 1", "--before", "{cell}", "--expected-rev", "x"],
        ["run", "{nb}", "--cell", "{cell}"],
    ],
)
@pytest.mark.parametrize(("ref", "detail"), [("matplotlib-inlin", "name"), ("43", "cell_index")])
def test_every_cell_argument_refuses_an_unknown_name_or_index_with_cell_not_found(
    tmp_path: Path, args: list[str], ref: str, detail: str
) -> None:
    nb = _copy(tmp_path, "nb")
    before = _digest(nb)
    run = run_cli("-j", *[arg.format(nb=nb, cell=ref) for arg in args])
    assert run.exit_code == 1
    doc = run.json()
    assert doc["code"] == ErrorCode.CELL_NOT_FOUND
    details = doc["details"]
    assert details["cell_count"] == 43
    assert details[detail] == (ref if detail == "name" else int(ref))
    if detail == "name":
        assert details["close_names"][0] == "matplotlib-inline"
    assert _digest(nb) == before
    assert not (tmp_path / "cache").exists()  # refused before any snapshot


def _rev(path: Path, name: str) -> str:
    cells = _ok("notebook", "overview", path)["cells"]
    return str(next(c["rev"] for c in cells if c["name"] == name))


MUTATIONS = [
    ["cell", "update", "{nb}", "{cell}", "--expected-rev", "{rev}", "--source", "x = [1, 2]"],
    ["cell", "remove", "{nb}", "{cell}", "--expected-rev", "{rev}"],
    ["cell", "move", "{nb}", "{cell}", "--expected-rev", "{rev}", "--start"],
    ["cell", "move", "{nb}", "import-pandas", "--expected-rev", "{pandas_rev}", "--before",
     "{cell}"],
    ["cell", "add", "{nb}", "--source", "x = 2", "--after", "{cell}", "--expected-rev", "{rev}"],
]  # fmt: skip


@pytest.mark.parametrize("args", MUTATIONS)
def test_an_edit_by_index_does_what_the_same_edit_by_name_does(
    tmp_path: Path, args: list[str]
) -> None:
    results = []
    for ref in CHART:
        nb = _copy(tmp_path, f"by-{ref}")
        revs = {"rev": _rev(nb, CHART[1]), "pandas_rev": _rev(nb, TABLE[1])}
        doc = _ok(*[arg.format(nb=nb, cell=ref, **revs) for arg in args])
        results.append((nb.read_bytes(), doc["changed"], doc.get("stale")))
    assert results[0] == results[1]
    assert results[0][0] != EXAMPLE.read_bytes()  # the edit happened


@pytest.mark.kernel
def test_run_cell_takes_an_index(tmp_path: Path) -> None:
    cells = [code_cell([], source=source) for source in ("v = 'a'", "v += 'b'", "print(v)")]
    path = tmp_path / "nb.ipynb"
    document = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    for index, cell in enumerate(cells):
        cell["id"] = f"c{index}"
        cell["execution_count"] = None
    path.write_text(json.dumps(document), encoding="utf-8")
    run = run_cli(
        "-j", "run", path, "--cell", "0", "--cell", "print-v", "--only", "--timeout", "30"
    )
    assert run.exit_code == 0, run.stdout
    ran = run.json()["run"]["cells"]
    assert [(c["index"], c["name"]) for c in ran] == [(0, "v"), (2, "print-v")]
    assert ran[1]["outputs"]["text"].endswith("a\n")


def test_a_paired_py_cell_is_addressed_by_the_name_the_overview_of_the_py_gives_it(
    tmp_path: Path,
) -> None:
    cells = [code_cell([], source=f"y = {i}") for i in range(3)]
    for index, cell in enumerate(cells):
        cell["id"] = f"cell-{index}"
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": f"out {index}\n"}]
    cells[1]["metadata"] = {"jupyter_mcp": {"name": "middle"}}
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    py = tmp_path / "nb.py"
    script = jupytext.writes(jupytext.reads(json.dumps(notebook), fmt="ipynb"), fmt="py:percent")
    header, body = script.split("# ---\n\n", 1)
    py.write_text(f"{header}# ---\n\n# %%\nfirst = 0\n\n{body}", encoding="utf-8")
    listing = _ok("notebook", "cells", py)["cells"]
    assert [c["name"] for c in listing] == ["first", "y", "middle", "y-2"]
    overview = _ok("notebook", "overview", py)["cells"]
    assert [c["name"] for c in overview] == [c["name"] for c in listing]
    by_name = _ok("notebook", "outputs", py, "--cell", "middle")
    assert by_name == _ok("notebook", "outputs", py, "--cell", "2")
    assert (by_name["source"]["cell_index"], by_name["source"]["requested_cell_index"]) == (1, 2)
    unmapped = run_cli("-j", "notebook", "outputs", py, "--cell", "first")
    assert unmapped.json()["code"] == ErrorCode.CELL_MAPPING_UNRELIABLE


@pytest.mark.parametrize(
    "notebook",
    sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")),
)
def test_notebook_cells_shows_the_names_the_overview_shows(notebook: str) -> None:
    cells = _ok("notebook", "cells", NOTEBOOKS / notebook)["cells"]
    overview = _ok("notebook", "overview", NOTEBOOKS / notebook)["cells"]
    assert [c["name"] for c in cells] == [c["name"] for c in overview]


def test_cell_names_are_never_all_digits_so_a_digit_string_is_always_an_index() -> None:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# 2024"},
        {"cell_type": "markdown", "metadata": {}, "source": "## 1. 2. 3"},
        {"cell_type": "code", "metadata": {}, "source": "# 42\n1234", "outputs": []},
        {"cell_type": "code", "metadata": {"jupyter_mcp": {"name": "7"}}, "source": "7"},
        {"cell_type": "raw", "metadata": {"jupyter_mcp": {"name": "-1"}}, "source": "0"},
    ]
    names = assign_names(cells)
    assert all(isinstance(parse_cell_ref(name), str) for name in names), names
    assert all(not re.fullmatch(r"-?[0-9]+", name) for name in names)
    assert parse_cell_ref("-1") == -1
    assert parse_cell_ref("9" * 5000) == int("9" * 40)  # a huge index is out of range


def test_show_prints_a_cells_whole_source(tmp_path: Path) -> None:
    run = run_cli("notebook", "show", EXAMPLE, "--cell", CHART[1])
    assert run.exit_code == 0
    for line in ("%matplotlib inline", "x = np.array([1, 2, 3, 4, 5])", "plt.scatter(x, y);"):
        assert f"   {line}" in run.stdout.splitlines()


def test_show_cuts_a_very_long_source_and_says_how_to_read_all_of_it(tmp_path: Path) -> None:
    source = "\n".join(f"value_{i} = {i}" for i in range(3 * SHOW_SOURCE_MAX_LINES))
    cell = code_cell([{"output_type": "stream", "name": "stdout", "text": "hi\n"}], source)
    notebook = {"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [cell]}
    path = tmp_path / "long.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    lines = run_cli("notebook", "show", path).stdout.splitlines()
    assert f"   value_{SHOW_SOURCE_MAX_LINES - 1} = {SHOW_SOURCE_MAX_LINES - 1}" in lines
    assert f"   value_{SHOW_SOURCE_MAX_LINES} = {SHOW_SOURCE_MAX_LINES}" not in lines
    marker = next(line for line in lines if "source cut" in line)
    command = marker.split("read it all: ", 1)[1].split()
    assert command[:3] == ["j-cli", "notebook", "read"]
    whole = run_cli(*command[1:])
    assert whole.exit_code == 0
    assert source in whole.stdout


def test_show_cuts_one_huge_source_line_by_characters(tmp_path: Path) -> None:
    cell = code_cell([{"output_type": "stream", "name": "stdout", "text": "hi\n"}])
    cell["source"] = "x = '" + "a" * 100_000 + "'"
    notebook = {"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [cell]}
    path = tmp_path / "wide.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    out = run_cli("notebook", "show", path).stdout
    assert len(out) < 20_000
    assert "source cut: showing 1 of 1 lines" in out


def test_a_py_without_a_pair_is_named_from_its_own_cells(tmp_path: Path) -> None:
    py = tmp_path / "alone.py"
    py.write_text("# %%\nimport math\n\n# %%\nmath.pi\n", encoding="utf-8")
    listing = _ok("notebook", "cells", py)["cells"]
    assert [c["name"] for c in listing] == ["import-math", "math-pi"]
    found = run_cli("-j", "notebook", "outputs", py, "--cell", "math-pi").json()
    assert found["code"] == ErrorCode.NOTEBOOK_PAIR_NOT_FOUND  # resolved, then not mapped
    unknown = run_cli("-j", "notebook", "outputs", py, "--cell", "math").json()
    assert unknown["code"] == ErrorCode.CELL_NOT_FOUND


def test_summarize_takes_a_cells_name_or_its_index(tmp_path: Path) -> None:
    nb = _copy(tmp_path, "nb")
    by_index, by_name = (_ok("notebook", "summarize", nb, "--cell", ref) for ref in TABLE)
    assert by_index == by_name
    assert [c["name"] for c in by_index["cells"]] == [TABLE[1]]
