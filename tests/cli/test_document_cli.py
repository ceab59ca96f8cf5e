"""``j-cli notebook overview|graph|read|undo`` and ``j-cli cell ...``: JSON contracts, text
mode, exit statuses, and that the read commands never write anything."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import shutil
from pathlib import Path

import pytest
from jcli_helpers import EXAMPLE, NOTEBOOKS, run_cli

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.notebook.document import CellOutputs


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of the Quick start notebook (cell 18 a pandas table, 24 a PNG)."""
    folder = tmp_path / "work"
    folder.mkdir()
    target = folder / EXAMPLE.name
    shutil.copyfile(EXAMPLE, target)
    return target


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """A three-cell chain a -> b -> c, unnamed, nbformat 4.5."""
    folder = tmp_path / "small"
    folder.mkdir()
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "execution_count": None, "outputs": []}
        for i, source in enumerate(["a = 1", "b = a + 1", "c = b * 2"])
    ]  # fmt: skip
    path = folder / "small.ipynb"
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _rev(path: Path, name: str) -> str:
    doc = run_cli("-j", "notebook", "overview", path).json()
    return str(next(c["rev"] for c in doc["cells"] if c["name"] == name))


def test_overview_json_contract(example: Path) -> None:
    run = run_cli("-j", "notebook", "overview", example)
    assert (run.exit_code, run.stderr) == (0, "")
    doc = run.json()
    assert doc["status"] == "ok"
    assert doc["operation"] == "notebook_overview"
    assert doc["cell_count"] == len(doc["cells"]) == 43
    assert isinstance(doc["lint_summary"], dict)
    cell = next(c for c in doc["cells"] if c["name"] == "import-pandas")
    assert set(cell) >= {"index", "name", "cell_type", "rev", "first_line", "defines", "uses",
                         "mutates", "parents", "children", "findings"}  # fmt: skip
    assert cell["defines"] == ["pd"]
    assert "import-tfidfvectorizer" in cell["children"]


def test_overview_pages_like_the_mcp_tool_naming_the_next_page_as_a_j_cli_command(
    example: Path,
) -> None:
    from jupyter_jcli.workbench import DEFAULT_OVERVIEW_LIMIT

    doc = run_cli("-j", "notebook", "overview", example, "--start", "40", "--limit", "2").json()
    assert [c["index"] for c in doc["cells"]] == [40, 41]
    assert doc["cell_count"] == 43 and doc["start"] == 40
    page = ["j-cli", "-j", "notebook", "overview", str(example), "--start", "42", "--limit", "2"]
    assert doc["next_call"] == shlex.join(page)
    last = run_cli("-j", "notebook", "overview", example, "--start", "40").json()
    assert last["next_call"] is None
    text = run_cli("notebook", "overview", example, "--limit", "5").stdout.splitlines()
    assert ": cells 0-4 of 43," in text[0]
    page = ["j-cli", "notebook", "overview", str(example), "--start", "5", "--limit", "5"]
    assert text[-1] == f"… 38 more cells: {shlex.join(page)}"
    default = run_cli("notebook", "overview", "--help").stdout
    assert f"[default: {DEFAULT_OVERVIEW_LIMIT};" in default


def test_overview_text_is_an_aligned_table_with_lint(small: Path) -> None:
    small.write_text(small.read_text().replace('"c = b * 2"', '"c = b * z"'), encoding="utf-8")
    run = run_cli("notebook", "overview", small)
    assert run.exit_code == 0
    lines = run.stdout.splitlines()
    assert lines[0].endswith("lint: 1 unresolved_name")
    header = lines[1]
    assert header.split() == ["#", "name", "type", "rev", "status", "defines", "uses", "parents",
                              "first", "line"]  # fmt: skip
    rev_column = header.index("rev")
    assert all(len(line) > rev_column and line[rev_column - 2 : rev_column] == "  "
               for line in lines[2:5])  # fmt: skip
    assert "unresolved_name" in run.stdout.split("lint (1):")[1]


@pytest.mark.parametrize(("fmt", "start"), [("mermaid", "flowchart TD"), ("dot", "digraph")])
def test_graph_text_and_json(example: Path, fmt: str, start: str) -> None:
    text = run_cli("notebook", "graph", example, "--format", fmt)
    assert text.exit_code == 0 and text.stdout.startswith(start)
    doc = run_cli("-j", "notebook", "graph", example, "--format", fmt).json()
    assert doc["format"] == fmt and doc["text"] == text.stdout
    assert doc["graph"]["edges"]


def test_graph_json_format_and_bad_format(example: Path) -> None:
    doc = run_cli("-j", "notebook", "graph", example, "--format", "json").json()
    assert "text" not in doc
    assert {"cells", "edges", "findings"} <= set(doc["graph"])
    plain = run_cli("notebook", "graph", example, "--format", "json")
    assert json.loads(plain.stdout)["edges"] == doc["graph"]["edges"]
    bad = run_cli("-j", "notebook", "graph", example, "--format", "svg")
    assert bad.exit_code == 2
    assert bad.json()["code"] == ErrorCode.USAGE_ERROR


def test_read_json_has_base64_images_and_csv_tables(example: Path) -> None:
    run = run_cli("-j", "notebook", "read", example, "--cell", "import-pandas",
                  "--cell", "matplotlib-inline")  # fmt: skip
    doc = run.json()
    assert [c["name"] for c in doc["cells"]] == ["import-pandas", "matplotlib-inline"]
    table = doc["cells"][0]["outputs"]
    assert "CSV" in table["text"] and "<table" not in table["text"]
    (image,) = doc["cells"][1]["outputs"]["images"]
    assert image["mime_type"] == "image/png"
    data = base64.b64decode(image["data"], validate=True)
    assert len(data) == image["bytes"] and data.startswith(b"\x89PNG")
    assert doc["characters"] <= doc["budget"]


def test_read_text_describes_images_and_respects_the_budget(example: Path) -> None:
    run = run_cli("notebook", "read", example, "--cell", "matplotlib-inline")
    assert run.exit_code == 0
    assert "image/png" in run.stdout and "362x248" in run.stdout
    assert "iVBOR" not in run.stdout  # no base64 in text mode
    small = run_cli("-j", "notebook", "read", example, "--budget", "800").json()
    assert small["characters"] <= 800 and small["truncated"]
    assert small["omitted_cells"]
    text = run_cli("notebook", "read", example, "--budget", "800")
    assert "more cells not shown" in text.stdout


def test_read_errors(example: Path) -> None:
    missing = run_cli("-j", "notebook", "read", example, "--cell", "no-such-cell")
    assert missing.exit_code == 1
    assert missing.json()["code"] == ErrorCode.CELL_NOT_FOUND
    zero = run_cli("-j", "notebook", "read", example, "--budget", "0")
    assert zero.exit_code == 2
    assert zero.json()["code"] == ErrorCode.USAGE_ERROR


def test_read_commands_never_write(example: Path, tmp_path: Path) -> None:
    before = _tree(tmp_path)
    raw = example.read_bytes()
    for args in (
        ["notebook", "overview"],
        ["notebook", "graph"],
        ["notebook", "graph", "--format", "json"],
        ["notebook", "read"],
        ["notebook", "read", "--budget", "50"],
    ):
        for mode in ([], ["-j"]):
            assert run_cli(*mode, args[0], args[1], example, *args[2:]).exit_code == 0
    assert example.read_bytes() == raw
    assert _tree(tmp_path) == before


def test_cell_mutations_json_contract_and_undo(small: Path) -> None:
    original = small.read_bytes()
    add = run_cli("-j", "cell", "add", small, "--source", "d = c", "--end").json()
    assert add["operation"] == "add_cell"
    assert add["cell"]["name"] == "d" and add["stale"] == ["d"]
    update = run_cli("-j", "cell", "update", small, "a", "--expected-rev", _rev(small, "a"),
                     "--source", "a = 2").json()  # fmt: skip
    assert update["stale"] == ["a", "b", "c", "d"]
    assert update["previous_cell"]["rev"] != update["cell"]["rev"]
    move = run_cli("-j", "cell", "move", small, "d", "--expected-rev", _rev(small, "d"),
                   "--start").json()  # fmt: skip
    assert move["cell"]["index"] == 0 and move["stale"] == ["d"]
    remove = run_cli("-j", "cell", "remove", small, "b", "--expected-rev", _rev(small, "b")).json()
    assert remove["removed"]["name"] == "b" and remove["cell"] is None
    assert remove["stale"] == ["c"]
    for expected_op in ("remove_cell", "move_cell", "update_cell", "add_cell"):
        undo = run_cli("-j", "notebook", "undo", small).json()
        assert undo["undone"] == expected_op
    assert small.read_bytes() == original
    empty = run_cli("-j", "notebook", "undo", small)
    assert empty.exit_code == 1
    assert empty.json()["code"] == ErrorCode.UNDO_EMPTY


def test_notebook_undo_names_the_cells_it_changed_in_json_and_text(small: Path) -> None:
    run_cli("-j", "cell", "add", small, "--source", "d = c", "--end")
    run_cli("-j", "cell", "update", small, "b", "--expected-rev", _rev(small, "b"),
            "--source", "b = a + 5")  # fmt: skip
    run_cli("-j", "cell", "remove", small, "c", "--expected-rev", _rev(small, "c"))
    removed = run_cli("-j", "notebook", "undo", small).json()
    assert removed["undone"] == "remove_cell" and not removed["merged"]
    assert removed["changed"] == ["c"]
    updated = run_cli("-j", "notebook", "undo", small).json()
    assert updated["undone"] == "update_cell" and updated["changed"] == ["b"]
    text = run_cli("notebook", "undo", small)
    assert text.stdout.startswith("undid add_cell: restored ")
    assert "reverted cells: `d`" in text.stdout.splitlines()


def test_notebook_undo_keeps_the_outputs_saved_since_and_names_a_conflict(small: Path) -> None:
    from jupyter_jcli.notebook.document import Document

    run_cli("-j", "cell", "update", small, "b", "--expected-rev", _rev(small, "b"),
            "--source", "b = a + 2")  # fmt: skip
    document = Document.load(small)
    stream = [{"output_type": "stream", "name": "stdout", "text": ["ran\n"]}]
    document.write_outputs({v.name: CellOutputs(v.rev, stream, 1) for v in document.cells})
    undo = run_cli("-j", "notebook", "undo", small).json()
    cells = json.loads(small.read_bytes())["cells"]
    assert [c["source"] for c in cells] == ["a = 1", "b = a + 1", "c = b * 2"]
    assert [(c["outputs"], c["execution_count"]) for c in cells] == [(stream, 1)] * 3
    assert undo["merged"] and undo["changed"] == ["b"] and undo["stale"] == ["b", "c"]

    run_cli("-j", "cell", "update", small, "c", "--expected-rev", _rev(small, "c"),
            "--source", "c = 0")  # fmt: skip
    small.write_text(small.read_text().replace("c = 0", "c = 5"), encoding="utf-8")
    refused = run_cli("-j", "notebook", "undo", small)
    assert refused.exit_code == 1
    assert refused.json()["code"] == ErrorCode.UNDO_CONFLICT
    assert refused.json()["details"]["conflicts"] == [
        {"cell": "c", "reason": "edited_since", "fields": ["source"]}
    ]


def test_cell_update_with_a_stale_rev_is_refused_with_the_current_state(small: Path) -> None:
    raw = small.read_bytes()
    run = run_cli("-j", "cell", "update", small, "b", "--expected-rev", "0" * 12,
                  "--source", "b = 0")  # fmt: skip
    assert run.exit_code == 1
    doc = run.json()
    assert doc["code"] == ErrorCode.REV_MISMATCH
    assert doc["details"]["rev"] == _rev(small, "b")
    assert doc["details"]["source"] == "b = a + 1"
    text = run_cli("cell", "remove", small, "b", "--expected-rev", "0" * 12)
    assert text.exit_code == 1 and text.stdout == ""
    assert text.stderr.startswith(f"error {ErrorCode.REV_MISMATCH}: ")
    assert small.read_bytes() == raw


@pytest.mark.parametrize(
    "args",
    [
        ["cell", "update", "{nb}", "b", "--source", "b = 1"],  # no --expected-rev
        ["cell", "update", "{nb}", "b", "--expected-rev", "x"],  # nothing to change
        ["cell", "add", "{nb}", "--source", "x = 1", "--start", "--end"],
        ["cell", "add", "{nb}", "--source", "x = 1", "--source-file", "-"],
        ["cell", "add", "{nb}"],  # no source
        ["cell", "add", "{nb}", "--source", "x = 1", "--type", "sql"],
        ["cell", "move", "{nb}", "b", "--expected-rev", "x"],  # nowhere to go
        ["cell", "move", "{nb}", "b", "--expected-rev", "x", "--before", "a", "--end"],
    ],
)
def test_bad_cell_options_are_usage_errors(small: Path, args: list[str]) -> None:
    raw = small.read_bytes()
    run = run_cli("-j", *[str(small) if a == "{nb}" else a for a in args])
    assert run.exit_code == 2
    assert run.json()["code"] == ErrorCode.USAGE_ERROR
    assert small.read_bytes() == raw


def test_cell_text_output_says_what_changed_and_what_went_stale(small: Path) -> None:
    source = small.parent / "new.py"
    source.write_text("b = a + 10\n", encoding="utf-8")
    run = run_cli("cell", "update", small, "b", "--expected-rev", _rev(small, "b"),
                  "--source-file", source, "--rename", "bee")  # fmt: skip
    assert run.exit_code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("updated code cell `bee` (index 1), rev ")
    assert "renamed from `b`" in lines[0]
    assert "stale (2): `bee`, `c`" in lines
    assert lines[-1].startswith("undo: j-cli notebook undo ")
    undo = run_cli("notebook", "undo", small)
    assert undo.stdout.startswith("undid update_cell: restored ")


def test_cell_add_next_to_an_anchor_in_a_real_notebook(example: Path) -> None:
    rev = _rev(example, "import-pandas")
    source = "# check\nprint(pd.__version__)"
    doc = run_cli("-j", "cell", "add", example, "--source", source, "--after", "import-pandas",
                  "--expected-rev", rev, "--name", "check").json()  # fmt: skip
    assert doc["cell"] == {"index": 19, "name": "check", "cell_type": "code",
                           "rev": _rev(example, "check")}  # fmt: skip
    assert doc["stale"] == ["check"]
    missing_rev = run_cli("-j", "cell", "add", example, "--source", "x", "--after", "check")
    assert missing_rev.exit_code == 2
    assert missing_rev.json()["code"] == ErrorCode.USAGE_ERROR


def test_a_paired_py_file_is_edited_through_the_cli(tmp_path: Path) -> None:
    import jupytext

    ipynb = tmp_path / "sorting.ipynb"
    shutil.copyfile(NOTEBOOKS / "02.08-Sorting.ipynb", ipynb)
    notebook = jupytext.read(ipynb)
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    jupytext.write(notebook, ipynb)
    py = tmp_path / "sorting.py"
    jupytext.write(notebook, py, fmt="py:percent")
    doc = run_cli("-j", "cell", "add", py, "--source", "z = np.zeros(2)", "--end").json()
    assert sorted(doc["written"]) == sorted([str(ipynb), str(py)])
    assert "z = np.zeros(2)" in py.read_text(encoding="utf-8")
    assert run_cli("-j", "notebook", "undo", py).json()["restored"] == [str(ipynb), str(py)]


def test_read_text_turns_cut_hints_into_j_cli_commands_that_work(tmp_path: Path) -> None:
    import shlex

    stream = {"output_type": "stream", "name": "stdout", "text": "".join(
        f"line {i}\n" for i in range(3_000))}  # fmt: skip
    cell = {"cell_type": "code", "id": "c0", "metadata": {}, "source": "loop()",
            "execution_count": 1, "outputs": [stream]}  # fmt: skip
    path = tmp_path / "long.ipynb"
    document = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document), encoding="utf-8")
    run = run_cli("notebook", "read", path, "--budget", "1000")
    assert "read_notebook_output" not in run.stdout
    hint = next(line for line in run.stdout.splitlines() if "j-cli notebook output" in line)
    command = shlex.split(hint[hint.index("j-cli notebook output") :].rstrip("]… "))
    exact = run_cli("-j", *command[1:]).json()
    offset = int(command[command.index("--offset") + 1])
    limit = int(command[command.index("--limit") + 1])
    assert exact["status"] == "ok"
    assert exact["stream"]["data"] == stream["text"][offset : offset + limit]


def test_a_source_with_no_room_for_its_marker_says_it_was_cut_and_how_to_read_it(
    tmp_path: Path,
) -> None:
    import shlex

    path = tmp_path / "errorbars.ipynb"
    shutil.copyfile(NOTEBOOKS / "04.03-Errorbars.ipynb", path)
    document = run_cli("-j", "notebook", "read", path, "--budget", "1").json()
    [cell] = document["cells"]
    assert cell["source"] == "…"
    assert cell["source_omitted_characters"] > 0 and cell["truncated"]
    text = run_cli("notebook", "read", path, "--budget", "1").stdout
    hint = next(line for line in text.splitlines() if "characters of source cut" in line)
    command = shlex.split(hint[hint.index("j-cli notebook read") :].rstrip("]"))
    whole = run_cli("-j", *command[1:]).json()
    assert whole["cells"][0]["name"] == cell["name"]
    assert whole["cells"][0]["source_omitted_characters"] == 0
    assert whole["cells"][0]["source"].startswith("# Visualizing Uncertainties")


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_source_file_that_is_a_fifo_or_a_device_is_refused_at_once(
    small: Path, kind: str
) -> None:
    source = small.parent / "source.py"
    if kind == "fifo":
        os.mkfifo(source)
    else:
        source.symlink_to("/dev/zero")
    raw = small.read_bytes()
    for args in (
        ["cell", "update", small, "b", "--expected-rev", _rev(small, "b")],
        ["cell", "add", small, "--end"],
    ):
        run = run_cli("-j", *args, "--source-file", source)
        assert run.exit_code == 1
        assert run.json()["code"] == ErrorCode.INVALID_SOURCE  # a bad source, not notebook
        assert run.json()["details"]["reason"] == "not_regular"
    assert small.read_bytes() == raw


def test_every_error_document_has_details_even_when_there_are_none(small: Path) -> None:
    run = run_cli("-j", "notebook")
    assert run.exit_code == 2
    document = run.json()
    assert document["code"] == ErrorCode.USAGE_ERROR
    assert document["details"] == {}
