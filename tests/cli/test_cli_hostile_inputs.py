"""Regression tests for hostile inputs of the ``j-cli notebook`` commands: codes, exit
statuses and one JSON document, never a traceback."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import jupytext
import pytest
from jcli_helpers import EXAMPLE, code_cell, png_b64, run_cli, write_notebook

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.notebook import io

STREAM = {"output_type": "stream", "name": "stdout", "text": "hi\n"}


def _surrogate_notebook(path: Path) -> Path:
    cell = code_cell([STREAM], source="\ud800x = 1")
    cell["metadata"] = {"jupyter_mcp": {"name": "n\udfff"}}
    return write_notebook(path, [cell])  # json.dumps escapes the lone surrogates


@pytest.mark.parametrize("command", ["cells", "show"])
def test_lone_surrogates_in_cells_are_printed_as_replacement_characters(
    tmp_path: Path, command: str
) -> None:
    nb = _surrogate_notebook(tmp_path / "s.ipynb")
    text = run_cli("notebook", command, nb)
    assert text.exit_code == 0, text.stderr
    assert "\ufffdx = 1" in text.stdout
    doc = run_cli("-j", "notebook", command, nb)
    assert doc.exit_code == 0
    assert "\\ud800" not in doc.stdout
    assert "\ufffd" in json.dumps(doc.json(), ensure_ascii=False)


def test_cells_pages_with_start_limit_and_next_start(tmp_path: Path) -> None:
    nb = write_notebook(tmp_path / "many.ipynb", [code_cell([], source=f"x{i}") for i in range(25)])
    first = run_cli("-j", "notebook", "cells", nb, "--limit", "10").json()
    assert (first["cell_count"], first["start"], first["returned_cells"]) == (25, 0, 10)
    assert first["next_start"] == 10
    seen = [c["cell_index"] for c in first["cells"]]
    start = first["next_start"]
    while True:
        page = run_cli("-j", "notebook", "cells", nb, "--start", str(start), "--limit", "10")
        doc = page.json()
        seen += [c["cell_index"] for c in doc["cells"]]
        if "next_start" not in doc:
            break
        start = doc["next_start"]
    assert seen == list(range(25))
    text = run_cli("notebook", "cells", nb, "--limit", "10").stdout
    assert "--start 10" in text


def test_cells_has_a_bounded_default_page(tmp_path: Path) -> None:
    from jupyter_jcli.workbench import CELLS_PAGE_LIMIT

    count = CELLS_PAGE_LIMIT + 5
    nb = write_notebook(tmp_path / "big.ipynb", [code_cell([]) for _ in range(count)])
    doc = run_cli("-j", "notebook", "cells", nb).json()
    assert doc["cell_count"] == count
    assert doc["returned_cells"] == len(doc["cells"]) == CELLS_PAGE_LIMIT
    assert doc["next_start"] == CELLS_PAGE_LIMIT


def test_a_cells_page_over_the_transport_bound_is_output_too_large(tmp_path: Path) -> None:
    huge_id = "n" * (3 * 1024 * 1024)  # names are cut to a bounded length; ids are shown whole
    cells = []
    for index in range(12):
        cell = code_cell([])
        cell["id"] = f"{huge_id}{index}"
        cells.append(cell)
    nb = write_notebook(tmp_path / "names.ipynb", cells)
    run = run_cli("-j", "notebook", "cells", nb)
    assert run.exit_code == 1
    doc = run.json()
    assert doc["code"] == ErrorCode.OUTPUT_TOO_LARGE
    smaller = doc["details"]["limit"]
    assert run_cli("-j", "notebook", "cells", nb, "--limit", str(smaller)).exit_code == 0


@pytest.mark.parametrize(
    "args",
    [["--start", "-1"], ["--limit", "0"], ["--start", "99"], ["--start", "1", "--start", "2"]],
)
def test_bad_cells_pages_are_usage_errors(args: list[str]) -> None:
    run = run_cli("-j", "notebook", "cells", EXAMPLE, *args)
    assert run.exit_code == 2
    assert run.json()["code"] == ErrorCode.USAGE_ERROR


def test_cells_of_a_paired_py_show_stable_ids_of_the_mapped_notebook_cells(
    tmp_path: Path,
) -> None:
    cells = [code_cell([STREAM], source=f"y = {i}") for i in range(3)]
    for index, cell in enumerate(cells):
        cell["id"] = f"cell-{index}"
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    text = jupytext.writes(jupytext.reads(json.dumps(notebook), fmt="ipynb"), fmt="py:percent")
    py = tmp_path / "nb.py"
    py.write_text(text + "\n# %%\nnew_cell = 1\n", encoding="utf-8")
    first = run_cli("-j", "notebook", "cells", py).json()
    second = run_cli("-j", "notebook", "cells", py).json()
    assert first == second
    ids = [c["id"] for c in first["cells"]]
    assert ids == ["cell-0", "cell-1", "cell-2", None]
    assert first["cells"][3]["mapping_problem"]["code"] == ErrorCode.CELL_MAPPING_UNRELIABLE
    assert first["source"]["pair_out_of_sync"]["newer"] == "text"  # the .py has a new cell
    lines = run_cli("notebook", "cells", py).stdout.splitlines()
    assert lines[1].startswith("warning: pair out of sync")
    del lines[1]
    assert "y-2" in lines[2]  # the names the overview shows
    assert "nb:-" in lines[4]


@pytest.mark.parametrize("json_flag", [[], ["-j"]])
def test_show_of_a_missing_cell_is_cell_not_found_before_anything_is_printed(
    json_flag: list[str],
) -> None:
    run = run_cli(*json_flag, "notebook", "show", EXAMPLE, "--cell", "24", "--cell", "999")
    assert run.exit_code == 1
    if json_flag:
        assert run.json()["code"] == ErrorCode.CELL_NOT_FOUND
    else:
        assert run.stdout == ""
        assert ErrorCode.CELL_NOT_FOUND in run.stderr


def test_show_of_a_repeated_cell_shows_it_once() -> None:
    run = run_cli("notebook", "show", EXAMPLE, "--cell", "24", "--cell", "24")
    assert run.stdout.count("── cell 24") == 1
    doc = run_cli("-j", "notebook", "show", EXAMPLE, "--cell", "24", "--cell", "24").json()
    assert [c["source"]["cell_index"] for c in doc["cells"]] == [24]


def test_show_parses_the_notebook_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = write_notebook(
        tmp_path / "many.ipynb", [code_cell([STREAM, STREAM], source=f"x{i}") for i in range(60)]
    )
    calls: Counter[str] = Counter()
    original = io._parse_read  # read_notebook's one parse

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls["parse"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(io, "_parse_read", counted)
    assert run_cli("notebook", "show", nb).exit_code == 0
    assert run_cli("-j", "notebook", "show", nb).exit_code == 0
    assert run_cli("-j", "notebook", "cells", nb).exit_code == 0
    assert calls["parse"] == 3


def _png_notebook(tmp_path: Path) -> Path:
    bundle = {"output_type": "display_data", "metadata": {}, "data": {"image/png": png_b64()}}
    return write_notebook(tmp_path / "p.ipynb", [code_cell([bundle])])


def _save(nb: Path, target: str, *extra: str) -> Any:
    return run_cli("-j", "notebook", "output", nb, "--cell", "0", "--output", "0",
                   "--save", target, *extra)  # fmt: skip


def test_save_refuses_a_symlink_even_with_force(tmp_path: Path) -> None:
    nb = _png_notebook(tmp_path)
    real = tmp_path / "real.png"
    real.write_bytes(b"keep")
    link = tmp_path / "link.png"
    link.symlink_to(real)
    for extra in ([], ["--force"]):
        run = _save(nb, str(link), *extra)
        assert run.exit_code == 1
        assert run.json()["code"] == ErrorCode.FILE_EXISTS
    assert link.is_symlink()
    assert real.read_bytes() == b"keep"


def test_save_refuses_a_dangling_symlink(tmp_path: Path) -> None:
    nb = _png_notebook(tmp_path)
    dangling = tmp_path / "dangling.png"
    dangling.symlink_to(tmp_path / "nowhere.png")
    run = _save(nb, str(dangling))
    assert run.json()["code"] == ErrorCode.FILE_EXISTS
    assert dangling.is_symlink()
    assert not (tmp_path / "nowhere.png").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_save_with_force_never_replaces_a_fifo_or_a_directory(tmp_path: Path) -> None:
    nb = _png_notebook(tmp_path)
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    folder = tmp_path / "dir.png"
    folder.mkdir()
    for target in (fifo, folder):
        run = _save(nb, str(target), "--force")
        assert run.json()["code"] == ErrorCode.FILE_EXISTS
    assert fifo.is_fifo()
    assert folder.is_dir()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_save_with_force_never_replaces_a_device() -> None:
    nb = EXAMPLE
    run = run_cli("-j", "notebook", "output", nb, "--cell", "24", "--output", "0",
                  "--save", "/dev/full", "--force")  # fmt: skip
    assert run.json()["code"] == ErrorCode.FILE_EXISTS
    assert Path("/dev/full").is_char_device()


def test_save_with_force_replaces_a_regular_file_and_an_empty_path_is_a_usage_error(
    tmp_path: Path,
) -> None:
    nb = _png_notebook(tmp_path)
    target = tmp_path / "out.png"
    target.write_bytes(b"old")
    assert _save(nb, str(target), "--force").exit_code == 0
    assert target.read_bytes().startswith(b"\x89PNG")
    empty = _save(nb, "")
    assert empty.exit_code == 2
    assert empty.json()["code"] == ErrorCode.USAGE_ERROR


@pytest.mark.parametrize(
    "argv",
    [["-j", "--help"], ["-j", "notebook", "cells", "-h"], ["-j", "notebook", "--help"],
     ["-j", "notebook", "output", "--help"], ["-j", "cell", "--help"]],
)  # fmt: skip
def test_help_with_j_is_one_json_document(argv: list[str]) -> None:
    run = run_cli(*argv)
    assert run.exit_code == 0
    doc = run.json()
    assert doc["status"] == "ok"
    assert "Usage:" in doc["help"]


def test_help_without_j_stays_text() -> None:
    run = run_cli("notebook", "cells", "--help")
    assert run.exit_code == 0
    assert run.stdout.startswith("Usage:")


OUTPUT = ["notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "0"]


@pytest.mark.parametrize(
    "args",
    [
        [*OUTPUT, "--mime", ""],
        [*OUTPUT, "--mime", "text/plain", "--mime", "text/html"],
        [*OUTPUT, "--supported-mime", ""],
        [*OUTPUT, "--supported-mime", ","],
        [*OUTPUT, "--supported-mime", "text/plain,,text/html"],
        [*OUTPUT, "--offset", "1_0"],
        [*OUTPUT, "--offset", "\u0663"],
        [*OUTPUT, "--limit", " 5"],
        [*OUTPUT, "--limit", "+5"],
        ["notebook", "output", str(EXAMPLE), "--cell", "18", "--output", "\u0660"],
        ["notebook", "outputs", str(EXAMPLE), "--cell", "18", "--cell", "24"],
        ["notebook", "cells", str(EXAMPLE), "--limit", "1e3"],
    ],
)
def test_odd_arguments_are_usage_errors(args: list[str]) -> None:
    run = run_cli("-j", *args)
    assert run.exit_code == 2
    assert run.json()["code"] == ErrorCode.USAGE_ERROR


@pytest.mark.parametrize("ref", ["1_8", "\uff12\uff14", "\u0663", " 3", "+3"])
def test_a_cell_reference_that_is_not_ascii_digits_is_a_name_never_an_index(ref: str) -> None:
    for command in (["outputs"], ["output", "--output", "0"], ["show"]):
        run = run_cli("-j", "notebook", command[0], EXAMPLE, "--cell", ref, *command[1:])
        assert run.exit_code == 1
        doc = run.json()
        assert doc["code"] == ErrorCode.CELL_NOT_FOUND
        assert doc["details"]["name"] == ref


def test_negative_ascii_integers_still_parse_and_reach_the_protocol() -> None:
    run = run_cli("-j", "notebook", "outputs", EXAMPLE, "--cell", "-1")
    assert run.exit_code == 1
    assert run.json()["code"] == ErrorCode.CELL_NOT_FOUND


def test_strict_integers_apply_to_commands_registered_by_others() -> None:
    from jupyter_jcli.cli import cli
    from jupyter_jcli.cli._app import run

    run(["--version"])  # hardening happens at the entry point
    stack: list[Any] = [cli]
    int_params = []
    while stack:
        command = stack.pop()
        stack.extend(getattr(command, "commands", {}).values())
        int_params += [p for p in command.params if type(p.type).__name__.startswith("StrictInt")]
    assert int_params
    for param in int_params:
        with pytest.raises(Exception) as excinfo:
            param.type.convert("1_0", param, None)
        assert type(excinfo.value).__name__ == "BadParameter"


def test_a_symlink_loop_through_the_cli_is_file_not_found(tmp_path: Path) -> None:
    loop = tmp_path / "loop.ipynb"
    loop.symlink_to(tmp_path / "loop2.ipynb")
    (tmp_path / "loop2.ipynb").symlink_to(loop)
    for command in (["output", str(loop), "--cell", "0", "--output", "0"], ["cells", str(loop)]):
        run = run_cli("-j", "notebook", *command)
        assert run.exit_code == 1
        assert run.json()["code"] == ErrorCode.FILE_NOT_FOUND


def test_a_nul_byte_in_the_path_is_a_usage_error() -> None:
    run = run_cli("-j", "notebook", "cells", "a\0b.ipynb")
    assert run.exit_code == 2
    assert run.json()["code"] == ErrorCode.USAGE_ERROR


@pytest.mark.parametrize("command", [["cells"], ["show"], ["outputs", "--cell", "0"]])
def test_errors_of_every_read_command_name_the_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("broken.ipynb").write_text("{", encoding="utf-8")
    name, *rest = command
    run = run_cli("-j", "notebook", name, "broken.ipynb", *rest)
    doc = run.json()
    assert doc["code"] == ErrorCode.NOTEBOOK_READ_FAILED
    assert doc["details"]["path"] == str((tmp_path / "broken.ipynb").resolve())


def test_a_json_output_with_a_big_integer_is_exact_in_both_modes(tmp_path: Path) -> None:
    big = 2**80
    bundle = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"application/json": {"n": big}},
    }
    # The protocol's read keeps the integer exact (the standard library's value: see
    # notebook.io); the lone surrogate keeps orjson from parsing the file in any process.
    odd = {"output_type": "stream", "name": "stdout", "text": "\ud800"}
    nb = write_notebook(tmp_path / "big.ipynb", [code_cell([bundle, odd])])
    run = run_cli("-j", "notebook", "output", nb, "--cell", "0", "--output", "0")
    assert run.exit_code == 0
    selected = run.json()["selected"]
    assert selected["data"] == {"n": big}
    assert selected["bytes"] == len(json.dumps({"n": big}, separators=(",", ":")))
    text = run_cli("notebook", "output", nb, "--cell", "0", "--output", "0")
    assert text.exit_code == 0
    assert str(big) in text.stdout


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def test_outputs_of_a_cell_with_deep_json_and_mistyped_values_list_every_problem(
    tmp_path: Path,
) -> None:
    deep = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"application/json": _nested(600)},
    }
    typed = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": 5}}
    nb = write_notebook(tmp_path / "deep.ipynb", [code_cell([STREAM, deep, typed])])
    run = run_cli("-j", "notebook", "outputs", nb, "--cell", "0")
    assert run.exit_code == 0
    entries = run.json()["outputs"]
    assert entries[0]["total_characters"] == 3
    assert entries[1]["mime_problems"]["application/json"]["code"] == ErrorCode.OUTPUT_DATA_INVALID
    assert entries[2]["mime_problems"]["text/plain"]["code"] == ErrorCode.OUTPUT_DATA_INVALID
    for index in (1, 2):
        read = run_cli("-j", "notebook", "output", nb, "--cell", "0", "--output", str(index))
        assert read.exit_code == 1
        assert read.json()["code"] == ErrorCode.OUTPUT_DATA_INVALID
    text = run_cli("notebook", "outputs", nb, "--cell", "0")
    assert text.exit_code == 0
    assert text.stdout.count(f"problem {ErrorCode.OUTPUT_DATA_INVALID}") == 2
    assert run_cli("notebook", "show", nb).exit_code == 0


@pytest.mark.parametrize("kind", ["truncated", "dangling link"])
def test_a_broken_notebook_gets_one_error_document_from_every_reading_command(
    tmp_path: Path, kind: str
) -> None:
    nb = tmp_path / "broken.ipynb"
    if kind == "truncated":
        whole = write_notebook(tmp_path / "whole.ipynb", [code_cell([STREAM])]).read_bytes()
        nb.write_bytes(whole[: len(whole) // 2])
    else:
        nb.symlink_to(tmp_path / "gone.ipynb")
    answers = {
        command: run_cli("-j", "notebook", command, nb)
        for command in ("overview", "show", "cells", "read", "graph")
    }
    documents = {command: run.json() for command, run in answers.items()}
    expected = ErrorCode.NOTEBOOK_READ_FAILED if kind == "truncated" else ErrorCode.FILE_NOT_FOUND
    assert {document["code"] for document in documents.values()} == {expected}
    assert len({json.dumps(document, sort_keys=True) for document in documents.values()}) == 1
    assert all(run.exit_code == 1 for run in answers.values())
