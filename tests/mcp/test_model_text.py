"""The model's view of a result (the text content): what it keeps, what it drops."""

from __future__ import annotations

import json
from typing import Any

from jupyter_jcli.mcp._model_text import model_view
from jupyter_jcli.mcp._results import json_result
from tool_results import empty_fields

PATH = "/work/root/eda.ipynb"
KERNEL = {
    "notebook_path": PATH,
    "state": "idle",
    "epoch": "e1",
    "kernelspec_name": "python3",
    "pid": 4242,
    "cwd": "/work/root",
    "running_cell": None,
    "attached": False,
    "started_by": None,
    "kernel_id": None,
    "server_url": None,
}


def _outputs(text: str) -> dict[str, Any]:
    return {
        "text": text,
        "budget": 2000,
        "truncated": False,
        "omitted_outputs": [],
        "parts": [{"output_index": 0, "kind": "stream", "truncated": False}],
        "images": [],
    }


def _executed(name: str, index: int, outputs: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "name": name,
        "index": index,
        "rev": f"rev-{name}",
        "status": "ok",
        "execution_count": index + 1,
        "duration_s": 0.0132,
        "output_count": 1 if outputs else 0,
        "outputs": outputs,
        "ename": None,
        "evalue": None,
        "written": True,
        "not_written_reason": None,
        "interrupted_by": None,
        "kernel_killed": False,
    }


EXECUTE = {
    "schema_version": 1,
    "status": "ok",
    "operation": "execute_cells",
    "path": PATH,
    "notebook_path": PATH,
    "ok": True,
    "stopped_at": None,
    "error": None,
    "epoch": "e1",
    "kernel_started": True,
    "kernel_restarted": False,
    "kernel": KERNEL,
    "image_count": 0,
    "cells": [
        _executed("load", 0, _outputs("[output 0: stdout]\nloaded\n")),
        _executed("fit", 1, None),
    ],
    "written": ["load", "fit"],
    "still_stale": [],
}


def test_an_execution_keeps_names_revs_statuses_and_outputs_and_nothing_empty() -> None:
    view = model_view(EXECUTE)
    assert view == {
        "status": "ok",
        "ok": True,
        "epoch": "e1",
        "kernel_started": True,
        "kernel": {"state": "idle", "kernelspec_name": "python3"},
        "cells": [
            {
                "name": "load",
                "index": 0,
                "rev": "rev-load",
                "status": "ok",
                "outputs": "[output 0: stdout]\nloaded\n",
            },
            {"name": "fit", "index": 1, "rev": "rev-fit", "status": "ok"},
        ],
    }
    assert not empty_fields(view)


def test_a_failed_execution_keeps_what_went_wrong() -> None:
    failed = dict(EXECUTE)
    cell = _executed("fit", 1, _outputs("[output 0: error]\nValueError: bad"))
    cell.update(status="error", ename="ValueError", evalue="bad")
    skipped = _executed("score", 2, None)
    skipped.update(status="skipped", written=False, execution_count=None)
    failed.update(ok=False, stopped_at="fit", cells=[cell, skipped], still_stale=["fit", "score"])
    view = model_view(failed)
    assert view["ok"] is False and view["stopped_at"] == "fit"
    assert view["cells"][0]["ename"] == "ValueError" and view["cells"][0]["evalue"] == "bad"
    skipped_view = {"name": "score", "index": 2, "rev": "rev-score", "status": "skipped"}
    assert view["cells"][1] == skipped_view
    assert view["still_stale"] == ["fit", "score"]


def test_an_edit_result_is_its_cell_structure_rev_and_what_went_stale() -> None:
    edit = {
        "schema_version": 1,
        "status": "ok",
        "operation": "add_cell",
        "path": PATH,
        "cell": {"index": 9, "name": "coefs", "cell_type": "code", "rev": "c371"},
        "removed": None,
        "previous_cell": None,
        "structure_rev": "s2",
        "previous_structure_rev": "s1",
        "changed": ["coefs"],
        "stale": ["coefs"],
        "reloaded": False,
        "written": [PATH],
    }
    view = model_view(edit)
    assert view == {
        "status": "ok",
        "cell": {"index": 9, "name": "coefs", "rev": "c371"},
        "structure_rev": "s2",
        "stale": ["coefs"],
    }
    reloaded = model_view({**edit, "reloaded": True, "written": [PATH, "/work/root/eda.py"]})
    assert reloaded["reloaded"] is True  # another program's edit was kept: the model is told
    assert reloaded["written"] == [PATH, "/work/root/eda.py"]


def test_a_variable_lists_its_columns_as_name_and_dtype() -> None:
    variable = {
        "schema_version": 1,
        "status": "ok",
        "operation": "inspect_variable",
        "path": PATH,
        "notebook_path": PATH,
        "name": "df",
        "type": "pandas.DataFrame",
        "length": 442,
        "shape": [442, 2],
        "dtype": None,
        "schema": [{"name": "age", "dtype": "float64"}, {"name": "sex", "dtype": "int64"}],
        "schema_total": 2,
        "repr": "   age  sex\n0  0.1    1",
        "repr_chars": len("   age  sex\n0  0.1    1"),
        "truncated": False,
        "epoch": "e1",
    }
    assert model_view(variable) == {
        "status": "ok",
        "name": "df",
        "type": "pandas.DataFrame",
        "length": 442,
        "shape": [442, 2],
        "schema": ["age: float64", "sex: int64"],
        "repr": "   age  sex\n0  0.1    1",
    }
    empty = model_view({**variable, "length": 0, "shape": [0, 2], "repr": "", "repr_chars": 0})
    assert empty["length"] == 0  # an empty frame says so


def test_a_read_keeps_cell_zero_and_says_how_many_cells_it_left_out() -> None:
    read = {
        "schema_version": 1,
        "status": "ok",
        "operation": "read_cells",
        "path": PATH,
        "structure_rev": "s1",
        "budget": 800,
        "characters": 790,
        "truncated": True,
        "image_count": 0,
        "cells": [
            {
                "index": 0,
                "name": "intro",
                "cell_type": "markdown",
                "rev": "r0",
                "source": "# EDA",
                "source_omitted_characters": 0,
                "output_count": 0,
                "truncated": False,
                "outputs": None,
                "status": None,
            }
        ],
        "omitted_cells": ["load", "fit"],
        "next_call": "read_cells start=1 stop=3 budget=800",
        "epoch": None,
    }
    assert model_view(read) == {
        "status": "ok",
        "structure_rev": "s1",
        "truncated": True,
        "cells": [
            {"index": 0, "name": "intro", "cell_type": "markdown", "rev": "r0", "source": "# EDA"}
        ],
        "next_call": "read_cells start=1 stop=3 budget=800",
        "omitted": 2,
    }


def test_the_text_content_is_the_view_and_the_structured_content_the_whole_document() -> None:
    result = json_result(EXECUTE, view=model_view)
    assert result.structured_content == EXECUTE
    first = result.content[0]
    assert first.type == "text"
    assert json.loads(first.text) == model_view(EXECUTE)
    assert "duration_s" not in first.text and "/work/root" not in first.text
