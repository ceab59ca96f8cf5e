"""The cell-level record of a mutation (``_revert.record_mutation``): the same record whether
the cells kept their places (the common edit) or not."""

from __future__ import annotations

import copy
from typing import Any

from jupyter_jcli.notebook._revert import record_mutation, revert


def _cells() -> list[dict[str, Any]]:
    return [
        {"cell_type": "code", "metadata": {}, "source": f"x{i} = {i}\n", "outputs": []}
        for i in range(4)
    ]


def test_an_update_in_place_records_only_the_changed_cell_and_no_order() -> None:
    before = _cells()
    names = ["a", "b", "c", "d"]
    after = [before[0], copy.deepcopy(before[1]), dict(before[2]), before[3]]
    after[2]["source"] = "changed\n"
    record = record_mutation(before, names, after, list(names))
    assert record["order"] is None
    assert [entry["key"] for entry in record["cells"]] == ["b2"]
    entry = record["cells"][0]
    assert (entry["name_before"], entry["name_after"]) == ("c", "c")
    assert entry["leaves"] == [{"path": ["source"], "before": "x2 = 2\n", "after": "changed\n"}]
    reverted = revert(record, after, names)
    assert reverted.cells == before


def test_a_rename_in_place_records_the_new_name_without_an_order() -> None:
    before = _cells()
    after = [before[0], before[1], dict(before[2], source="y\n"), before[3]]
    record = record_mutation(before, ["a", "b", "c", "d"], after, ["a", "b", "e", "d"])
    assert record["order"] is None
    assert [(e["key"], e["name_before"], e["name_after"]) for e in record["cells"]] == [
        ("b2", "c", "e")
    ]
