"""``j-cli notebook show`` is bounded in total, in text and ``-j``: a page ends at its cell
count or its size bound, says what it left out and names the command of the next page, and
the pages together show every cell once."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from jcli_helpers import run_cli

from jupyter_jcli.cli._show import SHOW_MAX_DOCUMENT_BYTES, SHOW_MAX_TOTAL_CHARACTERS

CELLS = 200
OUTPUTS_PER_CELL = 40


def _display(cell: int, output: int) -> dict[str, object]:
    text = f"cell {cell} output {output}: " + "v" * 40
    return {"output_type": "display_data", "metadata": {}, "data": {"text/plain": text}}


def big_notebook(folder: Path, cells: int = CELLS, per_cell: int = OUTPUTS_PER_CELL) -> Path:
    document = {
        "cells": [
            {"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": i + 1,
             "source": f"show_{i}()", "outputs": [_display(i, k) for k in range(per_cell)]}
            for i in range(cells)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }  # fmt: skip
    path = folder / "big.ipynb"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _cells_in(stdout: str) -> list[int]:
    return [int(line.split()[2]) for line in stdout.splitlines() if line.startswith("── cell ")]


def _next(stdout: str) -> list[str] | None:
    line = next((line for line in stdout.splitlines() if "the next page: " in line), None)
    return None if line is None else shlex.split(line.split("the next page: ", 1)[1])


def test_the_text_tour_is_paged_within_its_bound_and_the_pages_show_every_cell_once(
    tmp_path: Path,
) -> None:
    path = big_notebook(tmp_path)
    seen: list[int] = []
    args: list[str] | None = ["j-cli", "notebook", "show", str(path)]
    pages = 0
    while args is not None and pages < CELLS:
        run = run_cli(*args[1:])
        assert run.exit_code == 0, run.stderr
        assert len(run.stdout) <= SHOW_MAX_TOTAL_CHARACTERS + 2_000  # the page and its footer
        seen += _cells_in(run.stdout)
        args = _next(run.stdout)
        pages += 1
    assert pages > 1 and seen == list(range(CELLS))


def test_one_cell_longer_than_a_page_is_cut_naming_the_read_of_its_outputs(
    tmp_path: Path,
) -> None:
    path = big_notebook(tmp_path, cells=2, per_cell=4_000)
    run = run_cli("notebook", "show", str(path))
    assert run.exit_code == 0 and len(run.stdout) <= SHOW_MAX_TOTAL_CHARACTERS + 2_000
    assert _cells_in(run.stdout) == [0]
    outputs = shlex.join(["j-cli", "notebook", "outputs", str(path), "--cell", "0"])
    assert any(line.endswith(outputs) for line in run.stdout.splitlines())
    assert _next(run.stdout) == ["j-cli", "notebook", "show", str(path), "--start", "1"]


def test_the_json_tour_is_paged_within_its_bound_with_next_call(tmp_path: Path) -> None:
    path = big_notebook(tmp_path)
    seen: list[int] = []
    call: str | None = shlex.join(["j-cli", "-j", "notebook", "show", str(path)])
    pages = 0
    while call is not None and pages < CELLS:
        run = run_cli(*shlex.split(call)[1:])
        assert run.exit_code == 0, run.stdout
        document = run.json()
        assert len(run.stdout) <= SHOW_MAX_DOCUMENT_BYTES + 10_000
        seen += [listing["source"]["cell_index"] for listing in document["cells"]]
        assert document["omitted_cells"] == CELLS - len(seen)
        call = document["next_call"]
        pages += 1
    assert pages > 1 and seen == list(range(CELLS))


def test_one_cell_with_100000_outputs_keeps_the_json_page_in_its_bound_with_a_notice(
    tmp_path: Path,
) -> None:
    path = big_notebook(tmp_path, cells=2, per_cell=100_000)
    run = run_cli("-j", "notebook", "show", str(path))
    assert run.exit_code == 0, run.stdout[-300:]
    assert len(run.stdout.encode()) <= SHOW_MAX_DOCUMENT_BYTES
    document = run.json()
    (listing,) = document["cells"]
    shown = len(listing["outputs"])
    assert listing["output_count"] == 100_000 and 0 < shown < 100_000
    assert listing["omitted_outputs"] == 100_000 - shown
    assert [entry["output_index"] for entry in listing["outputs"]] == list(range(shown))
    listed = shlex.join(["j-cli", "-j", "notebook", "outputs", str(path), "--cell", "0"])
    assert listed in listing["notice"] and "--output K" in listing["notice"]
    assert document["omitted_cells"] == 1
    assert document["next_call"] == shlex.join(
        ["j-cli", "-j", "notebook", "show", str(path), "--start", "1"]
    )


def test_chosen_cells_page_on_with_the_cells_left_and_limit_bounds_the_count(
    tmp_path: Path,
) -> None:
    path = big_notebook(tmp_path, cells=5, per_cell=1)
    document = run_cli(
        "-j", "notebook", "show", str(path), "--cell", "4", "--cell", "1", "--cell", "3",
        "--limit", "1",
    ).json()  # fmt: skip
    assert [listing["source"]["cell_index"] for listing in document["cells"]] == [4]
    assert document["omitted_cells"] == 2
    assert shlex.split(document["next_call"])[5:] == ["--cell", "1", "--cell", "3"]
    whole = run_cli("-j", "notebook", "show", str(path)).json()
    assert (len(whole["cells"]), whole["omitted_cells"], whole["next_call"]) == (5, 0, None)


def _directory_over_the_transport_bound(folder: Path) -> tuple[Path, int]:
    """A one-cell notebook whose whole output directory is over the 32 MiB transport bound
    (each output's entry carries a problem per malformed MIME value, so the bound is passed
    at 50,000 outputs in a 6 MB file rather than at 270,000 one-line streams in 19 MB)."""
    malformed = {mime: 1 for mime in ("text/html", "text/markdown", "image/png", "image/svg+xml")}
    count = 50_000
    output = {"output_type": "display_data", "metadata": {}, "data": malformed}
    document = {
        "cells": [
            {"cell_type": "code", "id": "c0", "metadata": {}, "execution_count": 1,
             "source": "flood()", "outputs": [output] * count}
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }  # fmt: skip
    path = folder / "flood.ipynb"
    path.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
    return path, count


def test_a_cell_whose_whole_directory_passes_the_transport_bound_still_shows_its_first_outputs(
    tmp_path: Path,
) -> None:
    path, count = _directory_over_the_transport_bound(tmp_path)
    run = run_cli("-j", "notebook", "show", str(path))
    assert run.exit_code == 0, run.stdout[-300:]
    assert len(run.stdout.encode()) <= SHOW_MAX_DOCUMENT_BYTES
    (listing,) = run.json()["cells"]
    assert listing["status"] == "ok" and listing["output_count"] == count
    shown = len(listing["outputs"])
    assert shown > 0 and listing["omitted_outputs"] == count - shown
    text = run_cli("notebook", "show", str(path))
    assert text.exit_code == 0 and "OUTPUT_TOO_LARGE" not in text.stdout
    assert "[0] display_data" in text.stdout


@pytest.mark.parametrize("command", ["show", "overview"])
def test_a_start_past_the_last_cell_is_a_usage_error_and_the_end_itself_an_empty_page(
    tmp_path: Path, command: str
) -> None:
    path = big_notebook(tmp_path, cells=3, per_cell=1)
    past = run_cli("-j", "notebook", command, str(path), "--start", "4")
    assert past.exit_code == 2
    assert past.json()["code"] == "USAGE_ERROR"
    assert past.json()["details"] == {"start": 4, "cell_count": 3}
    assert run_cli("notebook", command, str(path), "--start", "4").exit_code == 2
    end = run_cli("-j", "notebook", command, str(path), "--start", "3")
    assert (end.exit_code, end.json()["status"], end.json()["cells"]) == (0, "ok", [])


def test_the_text_header_of_a_one_cell_notebook_says_1_cell(tmp_path: Path) -> None:
    path = big_notebook(tmp_path, cells=1, per_cell=1)
    header = run_cli("notebook", "show", str(path)).stdout.splitlines()[0]
    assert header.startswith(f"{path}: 1 cell, showing 1 with outputs")
