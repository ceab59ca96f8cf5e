"""Lists of cells that grow with the notebook stay bounded in j-cli answers, text and ``-j``:
the first ones, the whole count, and a notice naming the command that pages the rest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jcli_helpers import never_run_notebook, run_cli

from jupyter_jcli.cli._document_render import NAMES_SHOWN
from jupyter_jcli.cli._lists import CELLS_LISTED

CHAIN = 2_000
"""Cells of the chained notebook: every cell uses the one above, so editing the first stales
them all (far more than a list holds)."""


def _chain(folder: Path) -> Path:
    sources = ["x0 = 0", *(f"x{i} = x{i - 1} + 1" for i in range(1, CHAIN))]
    return never_run_notebook(folder, sources)


def _rev_of_first(path: Path) -> str:
    overview = run_cli("-j", "notebook", "overview", path, "--limit", "1").json()
    rev: str = overview["cells"][0]["rev"]
    return rev


def _assert_bounded(document: dict[str, Any], key: str, count: int, file_arg: Path) -> None:
    assert len(document[key]) == CELLS_LISTED and document[f"{key}_count"] == count
    assert f"j-cli -j notebook overview {file_arg}" in document["notice"]


def test_an_edit_staling_thousands_of_cells_lists_the_first_ones_with_the_count_and_a_notice(
    tmp_path: Path,
) -> None:
    path = _chain(tmp_path)
    run = run_cli("-j", "cell", "update", path, "x0", "--expected-rev", _rev_of_first(path),
                  "--source", "x0 = 1")  # fmt: skip
    assert run.exit_code == 0, run.stdout[-500:]
    document = run.json()
    _assert_bounded(document, "stale", CHAIN, path)
    assert document["stale"][:2] == ["x0", "x1"]
    assert document["changed"] == ["x0"] and document["changed_count"] == 1
    assert len(run.stdout) < 10_000

    undo = run_cli("-j", "notebook", "undo", path)
    assert undo.exit_code == 0, undo.stdout[-500:]
    _assert_bounded(undo.json(), "stale", CHAIN, path)


def test_the_text_of_an_edit_staling_thousands_of_cells_names_the_first_and_the_command(
    tmp_path: Path,
) -> None:
    path = _chain(tmp_path)
    run = run_cli("cell", "update", path, "x0", "--expected-rev", _rev_of_first(path),
                  "--source", "x0 = 1")  # fmt: skip
    assert run.exit_code == 0, run.stderr
    (line,) = [line for line in run.stdout.splitlines() if line.startswith("stale (")]
    assert line.startswith(f"stale ({CHAIN:,}): `x0`, `x1`")
    assert line.count("`") == 2 * NAMES_SHOWN
    assert f"and {CHAIN - NAMES_SHOWN:,} more" in line
    assert f"j-cli notebook overview {path}" in line
    assert "-j lists them all" not in run.stdout


def test_reading_a_huge_notebook_lists_the_first_omitted_cells_with_their_count(
    tmp_path: Path,
) -> None:
    path = _chain(tmp_path)
    run = run_cli("-j", "notebook", "read", path, "--budget", "1000")
    assert run.exit_code == 0, run.stdout[-500:]
    document = run.json()
    shown = len(document["cells"])
    _assert_bounded(document, "omitted_cells", CHAIN - shown, path)
    assert document["omitted_cells"][0] == f"x{shown}"
    assert len(run.stdout) < 20_000


def test_a_short_stale_list_is_whole_with_its_count_and_no_notice(tmp_path: Path) -> None:
    path = never_run_notebook(tmp_path, ["a = 1", "b = a", "c = 3"])
    run = run_cli("-j", "cell", "update", path, "a", "--expected-rev", _rev_of_first(path),
                  "--source", "a = 2")  # fmt: skip
    document = run.json()
    assert document["stale"] == ["a", "b"] and document["stale_count"] == 2
    assert "notice" not in document


@pytest.mark.kernel
def test_a_run_stopped_early_lists_the_first_skipped_cells_with_their_count_and_a_notice(
    tmp_path: Path,
) -> None:
    after = CELLS_LISTED + 50
    path = never_run_notebook(tmp_path, ["x = 1", "1 / 0", *(f"y{i} = x" for i in range(after))])
    run = run_cli("-j", "run", path)
    assert run.exit_code == 1, run.stdout[-500:]
    document = run.json()["run"]
    cells = document["cells"]
    assert [c["status"] for c in cells[:2]] == ["ok", "error"]
    assert len(cells) == 2 + CELLS_LISTED and document["skipped_count"] == after
    assert {c["status"] for c in cells[2:]} == {"skipped"}
    assert document["still_stale_count"] == after + 1 and document["plan_count"] == after + 2
    assert len(document["still_stale"]) == CELLS_LISTED == len(document["plan"])
    assert "skipped after the stop" in document["notice"]
    assert f"j-cli -j notebook overview {path}" in document["notice"]

    text = run_cli("run", path)
    assert text.exit_code == 1
    lines = text.stdout.splitlines()
    assert not any("skipped 0.00s" in line for line in lines)  # no row per skipped cell
    (skipped,) = [line for line in lines if line.startswith("skipped (")]
    assert skipped.startswith(f"skipped ({after}), not run after the stop: `y0`, `y1`")
    assert f"and {after - NAMES_SHOWN} more" in skipped
    assert any(line.startswith("[1] `x` (cell 0): ok") for line in lines)
    assert any(line.startswith("[2] `expr-1-0` (cell 1): error") for line in lines)
