"""The summary cache in a notebook file: Document.set_cell_metadata and write_summary_cache."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from fake_messages_api import NOTEBOOKS, FakeMessagesAPI

from jupyter_jcli.errors import ErrorCode, UsageError
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.io import read_notebook
from jupyter_jcli.notebook.snapshots import SnapshotStore
from jupyter_jcli.summaries import (
    cached_summary,
    summarize_cells,
    summary_key,
    write_summary_cache,
)

SORTING = "02.08-Sorting.ipynb"


def _copy(tmp_path: Path, name: str = SORTING) -> Path:
    target = tmp_path / "work" / name
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(NOTEBOOKS / name, target)
    os.chmod(target, 0o644)
    return target


def _changed_lines(before: bytes, after: bytes) -> list[str]:
    import difflib

    diff = difflib.unified_diff(
        before.decode().splitlines(), after.decode().splitlines(), n=0, lineterm=""
    )
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _snapshots(path: Path, cache: Path) -> list[Any]:
    return SnapshotStore(path, base_dir=cache).snapshots()


def test_set_cell_metadata_writes_only_that_entry_without_a_snapshot(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    cache = tmp_path / "cache"
    before = path.read_bytes()
    document = Document.load(path, cache_dir=cache)
    target = document.cells[2]

    written = document.set_cell_metadata("summary", {target.name: (target.rev, {"hash": "abc"})})

    assert written == (target.name,)
    after = path.read_bytes()
    cells = json.loads(after)["cells"]
    assert cells[2]["metadata"]["jupyter_mcp"] == {"summary": {"hash": "abc"}}
    assert all("jupyter_mcp" not in cell["metadata"] for i, cell in enumerate(cells) if i != 2)
    changed = _changed_lines(before, after)
    assert [line for line in changed if line.startswith("-")] == ['-   "metadata": {},']
    added = [line[1:].strip() for line in changed if line.startswith("+")]
    assert added == [
        '"metadata": {',
        '"jupyter_mcp": {',
        '"summary": {',
        '"hash": "abc"',
        "}",
        "}",
        "},",
    ]
    assert _snapshots(path, cache) == []
    assert document.files[0].raw == after
    assert document.cells[2].name_stored is False


def test_set_cell_metadata_skips_unchanged_values_and_stale_revs(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path, cache_dir=tmp_path / "cache")
    first, second = document.cells[2], document.cells[4]
    document.set_cell_metadata("summary", {first.name: (first.rev, {"hash": "abc"})})
    mtime = os.stat(path).st_mtime_ns
    raw = path.read_bytes()

    written = document.set_cell_metadata(
        "summary",
        {
            first.name: (first.rev, {"hash": "abc"}),  # already stored
            second.name: ("000000000000", {"hash": "def"}),  # computed for other content
            "no-such-cell": ("000000000000", {"hash": "ghi"}),
        },
    )
    assert written == ()
    assert path.read_bytes() == raw
    assert os.stat(path).st_mtime_ns == mtime


def test_set_cell_metadata_reloads_an_outside_edit_and_keeps_it(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    cache = tmp_path / "cache"
    document = Document.load(path, cache_dir=cache)
    edited, kept = document.cells[2], document.cells[4]

    notebook = json.loads(path.read_bytes())
    notebook["cells"][2]["source"] = ["L = [9, 8]\n", "sorted(L)"]
    notebook["cells"].append({"cell_type": "markdown", "metadata": {}, "source": ["Added."]})
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")

    written = document.set_cell_metadata(
        "summary",
        {edited.name: (edited.rev, {"hash": "old"}), kept.name: (kept.rev, {"hash": "new"})},
    )
    assert written == (kept.name,)
    on_disk = json.loads(path.read_bytes())
    assert on_disk["cells"][2]["source"] == ["L = [9, 8]\n", "sorted(L)"]
    assert "jupyter_mcp" not in on_disk["cells"][2]["metadata"]
    assert on_disk["cells"][4]["metadata"]["jupyter_mcp"]["summary"] == {"hash": "new"}
    assert on_disk["cells"][-1]["source"] == ["Added."]
    assert len(document.cells) == len(on_disk["cells"])
    assert _snapshots(path, cache) == []


@pytest.mark.parametrize("key", ["name", ""])
def test_set_cell_metadata_refuses_the_name_entry(tmp_path: Path, key: str) -> None:
    path = _copy(tmp_path)
    document = Document.load(path, cache_dir=tmp_path / "cache")
    view = document.cells[0]
    with pytest.raises(UsageError) as caught:
        document.set_cell_metadata(key, {view.name: (view.rev, "other-name")})
    assert caught.value.code == ErrorCode.USAGE_ERROR
    assert path.read_bytes() == (NOTEBOOKS / SORTING).read_bytes()


def test_set_cell_metadata_keeps_a_stored_name_and_undo_ignores_the_cache(
    tmp_path: Path,
) -> None:
    from jupyter_jcli.notebook.snapshots import undo

    path = _copy(tmp_path)
    cache = tmp_path / "cache"
    document = Document.load(path, cache_dir=cache)
    view = document.cells[2]
    result = document.update_cell(view.name, expected_rev=view.rev, new_name="sorted-list")
    assert result.cell is not None
    document.set_cell_metadata("summary", {"sorted-list": (result.cell.rev, {"hash": "x"})})
    section = json.loads(path.read_bytes())["cells"][2]["metadata"]["jupyter_mcp"]
    # the notebook has no cell ids: the rename keeps the name the cell's runs go by
    assert section == {"name": "sorted-list", "first_name": view.name, "summary": {"hash": "x"}}
    assert len(_snapshots(path, cache)) == 1

    undo(path, base_dir=cache)  # the rename goes back; the cache written since stays
    cells = json.loads(path.read_bytes())["cells"]
    assert cells[2]["metadata"] == {"jupyter_mcp": {"summary": {"hash": "x"}}}
    cells[2]["metadata"] = {}
    assert cells == json.loads((NOTEBOOKS / SORTING).read_bytes())["cells"]


def test_write_summary_cache_then_no_second_request(
    tmp_path: Path, credentials: FakeMessagesAPI
) -> None:
    path = _copy(tmp_path)
    cache = tmp_path / "cache"
    cells = read_notebook(path)["cells"]
    summaries = summarize_cells(cells)
    requests = len(credentials.requests)
    assert requests >= 1

    written = write_summary_cache(path, summaries, cache_dir=cache)
    non_empty = [cell for cell in cells if "".join(cell["source"]).strip()]
    assert len(written) == len(non_empty)
    assert _snapshots(path, cache) == []
    reread = read_notebook(path)["cells"]
    for cell in reread:
        cached = cached_summary(cell)
        if "".join(cell["source"]).strip():
            assert cached is not None and cached.tldr == summaries[summary_key(cell)].tldr
            assert cell["metadata"]["jupyter_mcp"]["summary"]["model"] == cached.model

    again = summarize_cells(reread)
    assert len(credentials.requests) == requests
    assert all(s.cached for s in again.values() if s.fallback_reason != "empty_cell")
    assert write_summary_cache(path, again, cache_dir=cache) == ()


def test_write_summary_cache_never_writes_fallbacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_MCP_DISABLE_SUMMARIES", "1")
    path = _copy(tmp_path)
    summaries = summarize_cells(read_notebook(path)["cells"])
    assert all(summary.source == "fallback" for summary in summaries.values())
    assert write_summary_cache(path, summaries, cache_dir=tmp_path / "cache") == ()
    assert path.read_bytes() == (NOTEBOOKS / SORTING).read_bytes()


def test_undo_after_an_outside_edit_and_a_cache_write_keeps_both(tmp_path: Path) -> None:
    from jupyter_jcli.notebook.snapshots import undo

    path = _copy(tmp_path)
    cache = tmp_path / "cache"
    document = Document.load(path, cache_dir=cache)
    view = document.cells[2]
    document.update_cell(view.name, expected_rev=view.rev, source="L = [1]")
    notebook = json.loads(path.read_bytes())
    notebook["cells"][0]["source"] = ["# Edited elsewhere"]
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")

    target = document.cells[4]
    assert document.set_cell_metadata("summary", {target.name: (target.rev, {"hash": "h"})})
    undo(path, base_dir=cache)
    cells = json.loads(path.read_bytes())["cells"]
    assert cells[0]["source"] == ["# Edited elsewhere"]
    assert (
        cells[2]["source"] == json.loads((NOTEBOOKS / SORTING).read_bytes())["cells"][2]["source"]
    )
    assert cells[4]["metadata"]["jupyter_mcp"]["summary"] == {"hash": "h"}


def test_a_paired_notebook_gets_no_cache_in_its_text_file(
    tmp_path: Path, credentials: FakeMessagesAPI
) -> None:
    import jupytext

    folder = tmp_path / "pair"
    folder.mkdir()
    ipynb = folder / "sorting.ipynb"
    shutil.copyfile(NOTEBOOKS / SORTING, ipynb)
    notebook = jupytext.read(ipynb)
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    jupytext.write(notebook, ipynb)
    py = folder / "sorting.py"
    jupytext.write(notebook, py, fmt="py:percent")
    before = (ipynb.read_bytes(), py.read_bytes())

    summaries = summarize_cells(Document.load(py).notebook_dict()["cells"])
    assert any(summary.source == "llm" for summary in summaries.values())
    assert write_summary_cache(py, summaries, cache_dir=tmp_path / "cache") == ()
    assert (ipynb.read_bytes(), py.read_bytes()) == before
    # through the .ipynb of the pair nothing is written either: a pair is written as a whole
    assert write_summary_cache(ipynb, summaries, cache_dir=tmp_path / "cache") == ()
    assert (ipynb.read_bytes(), py.read_bytes()) == before
