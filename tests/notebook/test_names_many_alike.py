"""Naming many cells of one base name: the same names as ever, in linear work."""

from __future__ import annotations

import pytest

from jupyter_jcli.notebook import names


def _cell(source: str, name: str | None = None) -> dict[str, object]:
    metadata = {"jupyter_mcp": {"name": name}} if name else {}
    return {"cell_type": "code", "source": source, "metadata": metadata}


def test_cells_of_one_base_name_get_increasing_suffixes_with_one_candidate_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[int] = []
    suffixed = names._suffixed

    def counting(base: str, counter: int) -> str:
        built.append(counter)
        return suffixed(base, counter)

    monkeypatch.setattr(names, "_suffixed", counting)
    assigned = names.assign_names([_cell("total = 1") for _ in range(2000)])
    assert assigned == ["total", *(f"total-{k}" for k in range(2, 2001))]
    assert len(built) == 1999  # one candidate per suffixed cell, not k per cell


def test_resuming_suffixes_skips_nothing_that_stored_names_left_free() -> None:
    cells = [
        _cell("x = 1", "x-3"),
        _cell("x = 1"),
        _cell("x = 1", "x-2"),
        _cell("x = 1"),
        _cell("x = 1"),
        _cell("x = 1", "x"),
    ]
    assert names.assign_names(cells) == ["x-3", "x-4", "x-2", "x-5", "x-6", "x"]


def test_unique_name_takes_the_first_free_suffix() -> None:
    assert names.unique_name("a", {"a"}) == "a-2"
    assert names.unique_name("a", ["a", "a-2", "a-3"]) == "a-4"
    assert names.unique_name("a", ["b"]) == "a"
