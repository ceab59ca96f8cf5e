"""A name belongs to the cell that had it: a cell pasted or inserted in JupyterLab never takes
the name (and so the run status or a ``run --cell``) of a cell that ran. Real ``j-cli``
processes on a real ipykernel; the paste and the insert are written into the file as
JupyterLab saves them (issue 27, item 6)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from test_kernel_live import jcli, jcli_json, notebook, ran

pytestmark = pytest.mark.kernel


def _overview(path: Path) -> list[tuple[str, str]]:
    status, overview = jcli_json("notebook", "overview", path)
    assert status == 0, overview
    return [(cell["name"], cell["status"]) for cell in overview["cells"]]


def _insert(path: Path, index: int, cell: dict[str, Any]) -> None:
    """Save ``cell`` at ``index`` as JupyterLab would (the file rewritten whole)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    document["cells"].insert(index, cell)
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


def _cells(path: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return cells


def test_a_copy_pasted_above_a_cell_that_ran_does_not_take_its_name(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["alpha = 1\nprint('original')", "beta = alpha + 1"])
    status, started = jcli_json("kernel", "start", path)
    assert status == 0, started
    try:
        status, whole = jcli_json("run", path, "--stale")
        assert status == 0 and ran(whole) == ["alpha", "beta"]
        pasted = copy.deepcopy(_cells(path)[0])  # metadata, name included, copied
        pasted.update(id="pasted1", source="alpha = 99\nprint('copy')", outputs=[])
        _insert(path, 0, pasted)

        assert _overview(path) == [("alpha-2", "never_run"), ("alpha", "fresh"), ("beta", "fresh")]
        status, one = jcli_json("run", path, "--cell", "alpha", "--only")
        assert status == 0 and ran(one) == ["alpha"]
        assert one["run"]["cells"][0]["outputs"]["text"].endswith("\noriginal\n")
    finally:
        assert jcli("-j", "kernel", "stop", path).returncode == 0


def test_a_cell_inserted_above_a_cell_that_ran_does_not_take_its_derived_name(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1", "x = 2"])
    status, started = jcli_json("kernel", "start", path)
    assert status == 0, started
    try:
        status, whole = jcli_json("run", path, "--stale")
        assert status == 0 and ran(whole) == ["x", "x-2"]
        inserted = {"cell_type": "code", "id": "new1", "metadata": {}, "source": "x = 5",
                    "execution_count": None, "outputs": []}  # fmt: skip
        _insert(path, 1, inserted)

        assert [name for name, _status in _overview(path)] == ["x", "x-3", "x-2"]
        assert _cells(path)[2]["source"] == "x = 2"
    finally:
        assert jcli("-j", "kernel", "stop", path).returncode == 0
