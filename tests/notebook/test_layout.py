"""Writes in proportion (``notebook._layout``): in every indented JSON style a notebook may be
stored in, splicing the changed cells into the file's bytes gives exactly the bytes of a whole
serialisation, and reading the new bytes back reuses the unchanged cells' values."""

from __future__ import annotations

import copy
import itertools
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.notebook._jsonstyle import JsonStyle, dumps_notebook
from jupyter_jcli.notebook._layout import cell_layout, splice, spliced_cells

STYLES = [
    JsonStyle(indent=indent, sort_keys=sort_keys, ensure_ascii=ascii_, crlf=crlf)
    for indent, sort_keys, ascii_, crlf in itertools.product(
        (1, 2, 4), (True, False), (True, False), (False, True)
    )
]


def _notebook() -> dict[str, Any]:
    cells = []
    for index in range(6):
        cells.append(
            {
                "cell_type": "code" if index % 2 else "markdown",
                "id": f"c{index}",
                "metadata": {"tags": ["x"], "jupyter_mcp": {"name": f"cell-{index}"}},
                "source": [f"# été {index}\n", "x = {'a': [1, 2.5, None]}"],
                **(
                    {
                        "execution_count": index,
                        "outputs": [
                            {"output_type": "stream", "name": "stdout", "text": ["ü\r\n", "\udcff"]}
                        ],
                    }
                    if index % 2
                    else {}
                ),
            }
        )
    return {"metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4,
            "nbformat_minor": 5, "cells": cells}  # fmt: skip


def _edits(cells: list[dict[str, Any]]) -> dict[str, tuple[list[dict[str, Any]], list[int | None]]]:
    changed = copy.deepcopy(cells[2])
    changed["source"] = "y = 2\n"
    new = {"cell_type": "raw", "id": "new", "metadata": {}, "source": "raw text"}
    n = len(cells)
    return {
        "update": ([*cells[:2], changed, *cells[3:]], [*range(n)]),
        "add": ([*cells[:3], new, *cells[3:]], [0, 1, 2, None, 3, 4, 5]),
        "remove": (cells[:1] + cells[2:], [0, 2, 3, 4, 5]),
        "move": ([cells[4], *cells[:4], *cells[5:]], [4, 0, 1, 2, 3, 5]),
    }


@pytest.mark.parametrize("style", STYLES, ids=repr)
@pytest.mark.parametrize("edit", ["update", "add", "remove", "move"])
def test_a_spliced_file_equals_the_whole_serialisation_in_every_indented_style(
    style: JsonStyle, edit: str
) -> None:
    notebook = _notebook()
    raw = dumps_notebook(notebook, style)
    layout = cell_layout(raw, style, len(notebook["cells"]))
    assert layout is not None
    cells, origins = _edits(notebook["cells"])[edit]
    spliced = splice(layout, style, notebook["cells"], cells, origins)
    assert spliced == dumps_notebook({**notebook, "cells": cells}, style)
    found = spliced_cells(layout, notebook["cells"], spliced, style, Path("nb.ipynb"))
    assert found is not None
    read_back, new_layout = found
    assert read_back == cells
    assert len(new_layout.spans) == len(cells)


def test_a_compact_file_has_no_layout() -> None:
    style = JsonStyle(indent=None)
    assert cell_layout(dumps_notebook(_notebook(), style), style, 6) is None


def test_a_file_whose_cells_are_not_the_counted_ones_has_no_layout() -> None:
    style = JsonStyle()
    assert cell_layout(dumps_notebook(_notebook(), style), style, 5) is None


@pytest.mark.parametrize("style", STYLES[:4], ids=repr)
@pytest.mark.parametrize("edit", ["update", "add", "remove", "move"])
def test_spliced_bytes_give_the_layout_a_scan_finds_and_share_the_copied_cells(
    style: JsonStyle, edit: str
) -> None:
    notebook = _notebook()
    raw = dumps_notebook(notebook, style)
    layout = cell_layout(raw, style, len(notebook["cells"]))
    assert layout is not None
    cells, origins = _edits(notebook["cells"])[edit]
    spliced = splice(layout, style, notebook["cells"], cells, origins)
    assert spliced is not None
    [made] = layout.made
    assert made.data is spliced
    assert type(spliced) is bytes  # never a copy into a bytes subclass
    scanned = cell_layout(spliced, style, len(cells))
    assert scanned is not None
    assert made.spans == scanned.spans
    found = spliced_cells(layout, notebook["cells"], spliced, style, Path("nb.ipynb"))
    assert found is not None
    read_back, new_layout = found
    assert new_layout.spans == scanned.spans
    for cell, copied in zip(read_back, made.copied, strict=True):
        if copied is not None:
            assert cell is notebook["cells"][copied]
    # Bytes made from another layout are scanned, with the same result.
    other = cell_layout(raw, style, len(notebook["cells"]))
    assert other is not None
    again = spliced_cells(other, notebook["cells"], spliced, style, Path("nb.ipynb"))
    assert again is not None
    assert again[0] == read_back
    assert again[1].spans == scanned.spans


def test_splicing_a_large_file_allocates_its_new_bytes_once() -> None:
    style = JsonStyle()
    notebook = _notebook()
    for cell in notebook["cells"]:
        cell["source"] = "x" * 500_000
    raw = dumps_notebook(notebook, style)
    layout = cell_layout(raw, style, len(notebook["cells"]))
    assert layout is not None
    cells, origins = _edits(notebook["cells"])["update"]
    tracemalloc.start()
    try:
        spliced = splice(layout, style, notebook["cells"], cells, origins)
        _kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert spliced == dumps_notebook({**notebook, "cells": cells}, style)
    # the new file (about the old one's size) and the one re-serialised cell, no copy
    assert peak < len(raw) * 1.5
