"""The warm path drops what it can no longer vouch for (in-process): a notebook deleted or
replaced by a folder since it was cached is refused as a fresh load refuses it, and its entry
is gone; clearing drops every entry."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._warm import DocumentCache, warm
from jupyter_jcli.notebook.document import Document

NOTEBOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "notebooks"
FIXTURES = ("03.05-Hierarchical-Indexing.ipynb", "02.08-Sorting.ipynb")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DocumentCache]:
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(tmp_path / "snapshots"))
    documents = DocumentCache()
    with warm(documents):
        yield documents


@pytest.fixture
def notebooks(tmp_path: Path) -> list[Path]:
    copies = []
    for name in FIXTURES:
        shutil.copyfile(NOTEBOOKS / name, tmp_path / name)
        copies.append((tmp_path / name).resolve())
    return copies


@pytest.mark.parametrize("change", ["deleted", "now-a-folder"])
def test_a_cached_notebook_that_is_gone_is_refused_and_its_entry_dropped(
    cache: DocumentCache, notebooks: list[Path], change: str
) -> None:
    path = notebooks[0]
    Document.load(path)
    assert len(cache) == 1
    path.unlink()
    if change == "now-a-folder":
        path.mkdir()
    with pytest.raises(NotebookError) as caught:
        Document.load(path)
    assert caught.value.code == ErrorCode.FILE_NOT_FOUND
    assert len(cache) == 0


def test_clearing_the_cache_drops_every_entry_and_the_next_load_reads_the_file(
    cache: DocumentCache, notebooks: list[Path]
) -> None:
    for path in notebooks:
        Document.load(path)
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0
    stores = cache.stores
    Document.load(notebooks[0])
    assert cache.stores == stores + 1 and len(cache) == 1
