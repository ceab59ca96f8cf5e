"""Run records follow the cell (its nbformat id), not its name: a rename, or the undo of one,
keeps every cell's run status on the live kernel. Real ``j-cli`` processes on a real
ipykernel (issue 27, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_kernel_live import jcli, jcli_json, names, notebook, ran, rev

pytestmark = pytest.mark.kernel


def _statuses(path: Path) -> dict[str, str]:
    status, overview = jcli_json("notebook", "overview", path)
    assert status == 0, overview
    return {cell["name"]: cell["status"] for cell in overview["cells"]}


def _without_ids(path: Path) -> None:
    """``path`` as nbformat 4.4 wrote it: no cell ids."""
    document = json.loads(path.read_text(encoding="utf-8"))
    for cell in document["cells"]:
        del cell["id"]
    document["nbformat_minor"] = 4
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


@pytest.mark.parametrize("ids", [True, False], ids=["nbformat-4.5", "no-cell-ids"])
def test_a_renamed_cell_keeps_its_run_status_and_so_does_its_undo(
    tmp_path: Path, ids: bool
) -> None:
    path = notebook(tmp_path, ["import time\nbase = 1", "y = base + 1"])
    if not ids:
        _without_ids(path)
    first, second = names(path)
    status, started = jcli_json("kernel", "start", path)
    assert status == 0, started
    try:
        status, whole = jcli_json("run", path, "--stale")
        assert status == 0 and ran(whole) == [first, second]

        status, renamed = jcli_json(
            "cell", "update", path, first, "--expected-rev", rev(path, first),
            "--rename", "load-base",
        )  # fmt: skip
        assert status == 0, renamed
        assert renamed["stale"] == []
        assert _statuses(path) == {"load-base": "fresh", second: "fresh"}
        status, again = jcli_json("run", path, "--stale")
        assert status == 0 and ran(again) == []

        status, undone = jcli_json("notebook", "undo", path)
        assert status == 0, undone
        assert undone["stale"] == []
        assert _statuses(path) == {first: "fresh", second: "fresh"}
        status, again = jcli_json("run", path, "--stale")
        assert status == 0 and ran(again) == []
    finally:
        assert jcli("-j", "kernel", "stop", path).returncode == 0
