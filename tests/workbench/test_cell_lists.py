"""``workbench._cell_lists.bounded_cell_lists``: one notice per document, whatever was cut,
and an execution's cells bounded whether they ran or were skipped."""

from __future__ import annotations

from typing import Any

from jupyter_jcli.workbench._cell_lists import CELLS_LISTED, bounded_cell_lists

REST = "j-cli -j notebook overview nb.ipynb"


def _run(ran: int, skipped: int, *, error_at: int | None = None) -> dict[str, Any]:
    cells = [
        {"name": f"c{i}", "status": "error" if i == error_at else "ok"} for i in range(ran)
    ] + [{"name": f"s{i}", "status": "skipped"} for i in range(skipped)]
    names = [cell["name"] for cell in cells]
    return {
        "operation": "run_stale",
        "plan": names,
        "still_stale": names[ran - 1 :],
        "written": names[:ran],
        "cells": cells,
    }


def test_a_stopped_run_cutting_several_lists_has_one_notice_naming_the_rest_once() -> None:
    bounded = bounded_cell_lists(_run(6, 394, error_at=5), REST)
    notice = bounded["notice"]
    assert notice.count(REST) == 1 and notice.endswith(REST)
    for what in ("plan holds", "still_stale holds", "skipped after the stop"):
        assert what in notice
    assert (bounded["plan_count"], bounded["skipped_count"], bounded["ran_count"]) == (400, 394, 6)
    assert len(bounded["cells"]) == 6 + CELLS_LISTED


def test_a_long_run_lists_its_first_cells_and_the_one_that_stopped_it() -> None:
    bounded = bounded_cell_lists(_run(1000, 0), REST)
    assert [c["name"] for c in bounded["cells"]] == [f"c{i}" for i in range(CELLS_LISTED)]
    assert bounded["ran_count"] == 1000 and "of the 1,000 cells run" in bounded["notice"]
    stopped = bounded_cell_lists(_run(150, 10, error_at=149), REST)
    names = [c["name"] for c in stopped["cells"]]
    assert names[: CELLS_LISTED + 1] == [*(f"c{i}" for i in range(CELLS_LISTED)), "c149"]
    assert len(names) == CELLS_LISTED + 1 + 10


def test_a_short_run_is_whole_and_an_earlier_notice_keeps_its_own_sentence() -> None:
    short = bounded_cell_lists(_run(3, 2), REST)
    assert len(short["cells"]) == 5 and "notice" not in short
    earlier = bounded_cell_lists({**_run(CELLS_LISTED + 1, 0), "notice": "kernel restarted"}, REST)
    assert earlier["notice"].startswith("kernel restarted. plan holds")
