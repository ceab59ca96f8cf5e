"""A refused ``j-cli cell ...`` writes nothing: no file change, no snapshot, no temporary file.

The notebooks hold a cell the analysis refuses (one without a ``cell_type``, which nbformat does
not allow): every mutation answers ``INVALID_CELL_TYPE`` and a retry finds the file as it was
(issue 9, item 6: the new cell and an undo snapshot used to be written first). A cell of a type
nbformat allows but we do not know (``"sql"``: nbformat 4's ``unrecognized_cell``) is opaque,
not refused: it is kept as it is and every mutation goes through.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from jcli_helpers import run_cli

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.notebook.document import Document
from odd_notebooks import folder_and_snapshots, with_odd_cell


def _mutations(path: Path) -> dict[str, list[str | Path]]:
    cells = Document.load(path).cells
    first, second = cells[0], cells[1]
    return {
        "add": ["cell", "add", path, "--source", "y = 2"],
        "add-after": ["cell", "add", path, "--source", "y = 2", "--after", first.name,
                      "--expected-rev", first.rev],
        "update": ["cell", "update", path, second.name, "--expected-rev", second.rev,
                   "--source", "z = 3"],
        "rename": ["cell", "update", path, second.name, "--expected-rev", second.rev,
                   "--rename", "renamed"],
        "remove": ["cell", "remove", path, second.name, "--expected-rev", second.rev],
        "move": ["cell", "move", path, first.name, "--expected-rev", first.rev, "--end"],
    }  # fmt: skip


@pytest.mark.parametrize("mutation", ["add", "add-after", "update", "rename", "remove", "move"])
def test_a_refused_mutation_leaves_file_snapshots_and_folder_unchanged_even_on_retry(
    tmp_path: Path, cache: Path, mutation: str
) -> None:
    path = with_odd_cell(tmp_path, "")
    before = folder_and_snapshots(path, cache)
    args = _mutations(path)[mutation]
    for _attempt in range(2):
        run = run_cli("-j", *args)
        assert run.exit_code == 1
        assert run.json()["code"] == ErrorCode.INVALID_CELL_TYPE
        assert folder_and_snapshots(path, cache) == before


@pytest.mark.parametrize("mutation", ["add", "add-after", "update", "rename", "remove", "move"])
def test_a_cell_of_a_type_nbformat_allows_but_we_do_not_know_is_kept_opaque(
    tmp_path: Path, cache: Path, mutation: str
) -> None:
    path = with_odd_cell(tmp_path, "sql")
    odd = json.loads(path.read_text(encoding="utf-8"))["cells"][3]
    run = run_cli("-j", *_mutations(path)[mutation])
    assert run.exit_code == 0, run.output
    kept = [
        c
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if c.get("cell_type") == "sql"
    ]
    assert [{k: v for k, v in c.items() if k != "metadata"} for c in kept] == [
        {k: v for k, v in odd.items() if k != "metadata"}
    ]
    overview = run_cli("-j", "notebook", "overview", path)
    assert overview.exit_code == 0, overview.output


def test_undo_after_a_refused_add_has_nothing_to_undo(tmp_path: Path, cache: Path) -> None:
    path = with_odd_cell(tmp_path, "")
    raw = path.read_bytes()
    assert run_cli("-j", "cell", "add", path, "--source", "y = 2").exit_code == 1
    run = run_cli("-j", "notebook", "undo", path)
    assert run.exit_code == 1
    assert run.json()["code"] == ErrorCode.UNDO_EMPTY
    assert path.read_bytes() == raw


def test_the_refusal_names_the_cell_without_a_type(tmp_path: Path) -> None:
    path = with_odd_cell(tmp_path, "")
    run = run_cli("-j", "cell", "add", path, "--source", "x = 1", "--end")
    document = run.json()
    assert document["code"] == ErrorCode.INVALID_CELL_TYPE
    assert document["details"]["index"] == 3
    assert document["details"]["cell_type"] == ""


def _with_source_file(command: str, path: Path, source: Path) -> list[str | Path]:
    """The arguments of ``command`` on ``path`` with its code or source from ``source``."""
    if command == "exec":
        return ["exec", path, "--code-file", source]
    if command == "cell update":
        cell = Document.load(path).cells[0]
        return ["cell", "update", path, cell.name, "--expected-rev", cell.rev,
                "--source-file", source]  # fmt: skip
    return ["cell", "add", path, "--source-file", source]


@pytest.mark.parametrize("command", ["exec", "cell update", "cell add"])
def test_a_code_or_source_file_that_is_not_utf8_is_an_invalid_source_and_changes_nothing(
    tmp_path: Path, command: str
) -> None:
    from jcli_helpers import never_run_notebook

    path = never_run_notebook(tmp_path, ["x = 1"])
    before = path.read_bytes()
    bad = tmp_path / "latin1.py"
    bad.write_bytes("print('café')\n".encode("latin-1"))
    run = run_cli("-j", *_with_source_file(command, path, bad))
    assert run.exit_code == 1
    assert run.json()["code"] == ErrorCode.INVALID_SOURCE
    assert run.json()["details"]["reason"] == "not_utf8"
    assert path.read_bytes() == before


@pytest.mark.timeout(60)  # a FIFO read without O_NONBLOCK would block here for ever
@pytest.mark.parametrize("kind", ["fifo", "device"])
@pytest.mark.parametrize("command", ["exec", "cell update", "cell add"])
def test_a_code_or_source_file_that_is_not_a_regular_file_is_an_invalid_source_at_once(
    tmp_path: Path, command: str, kind: str
) -> None:
    from jcli_helpers import never_run_notebook

    path = never_run_notebook(tmp_path, ["x = 1"])
    before = path.read_bytes()
    if kind == "fifo":
        bad: Path = tmp_path / "pipe.py"
        os.mkfifo(bad)
    else:
        bad = Path(os.devnull)
    run = run_cli("-j", *_with_source_file(command, path, bad))
    assert run.exit_code == 1
    assert run.json()["code"] == ErrorCode.INVALID_SOURCE
    assert run.json()["details"]["reason"] == "not_regular"
    assert path.read_bytes() == before


@pytest.mark.parametrize("command", ["exec", "cell update", "cell add"])
def test_code_or_source_on_stdin_that_is_not_utf8_is_an_invalid_source_as_from_a_file(
    tmp_path: Path, command: str
) -> None:
    import sys

    from click.testing import CliRunner
    from jcli_helpers import never_run_notebook

    from jupyter_jcli.cli import run

    path = never_run_notebook(tmp_path, ["x = 1"])
    before = path.read_bytes()
    with CliRunner().isolation(input="print('café')\n".encode("latin-1")) as streams:
        code = run([str(arg) for arg in ["-j", *_with_source_file(command, path, Path("-"))]])
        sys.stdout.flush()
        document = json.loads(streams[0].getvalue())
    assert code == 1
    assert document["code"] == ErrorCode.INVALID_SOURCE
    assert document["details"]["reason"] == "not_utf8"
    assert path.read_bytes() == before
