"""``j-cli`` over a store that is not the local disk (issue 24, item 4), in process: the
command line runs under an active ``notebook.stores`` choice of an in-memory store
(``notebook.testing.MemoryStore``), so every read, edit, undo and output write of its
``cell``, ``notebook`` and ``run`` commands goes through the store and no file is touched;
``--store`` and ``$JUPYTER_JCLI_STORE`` are checked before anything runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jcli_helpers import run_cli

from jupyter_jcli.notebook.store import NotebookRef
from jupyter_jcli.notebook.stores import StoreChoice, using_store
from jupyter_jcli.notebook.testing import MemoryStore

PATH = "work/demo.ipynb"
REF = NotebookRef("memory", PATH)


def _notebook(*sources: str) -> dict[str, Any]:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "outputs": [], "execution_count": None}
        for i, source in enumerate(sources)
    ]  # fmt: skip
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryStore]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("JUPYTER_JCLI_STORE", "JUPYTER_JCLI_SERVER_URL"):
        monkeypatch.delenv(name, raising=False)
    memory = MemoryStore({PATH: _notebook("x = 20", "print(x + 1)")})
    with using_store(StoreChoice.of(memory)):
        yield memory
    assert not (tmp_path / "work" / "demo.ipynb").exists()


def _json(*args: str) -> dict[str, Any]:
    done = run_cli("-j", *args)
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_overview_edit_and_undo_go_through_the_store(store: MemoryStore) -> None:
    overview = _json("notebook", "overview", PATH)
    assert overview["status"] == "ok", overview
    first = overview["cells"][0]
    edited = _json("cell", "update", PATH, first["name"], "--expected-rev", first["rev"],
                   "--source", "x = 1")  # fmt: skip
    assert edited["status"] == "ok", edited
    assert store.read(REF).notebook["cells"][0]["source"] == "x = 1"
    stale = _json("cell", "update", PATH, first["name"], "--expected-rev", first["rev"],
                  "--source", "x = 2")  # fmt: skip
    assert stale["code"] == "REV_MISMATCH"
    assert _json("notebook", "undo", PATH)["status"] == "ok"
    assert store.read(REF).notebook["cells"][0]["source"] == "x = 20"


@pytest.mark.kernel
def test_run_writes_the_outputs_through_the_store(store: MemoryStore, tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()  # the kernel's working folder; the notebook is the store's
    ran = _json("run", PATH, "--all")
    try:
        assert ran["status"] == "ok", ran
        outputs = store.read(REF).notebook["cells"][1]["outputs"]
        assert "".join(outputs[0]["text"]) == "21\n"
        listed = _json("notebook", "outputs", PATH, "--cell", "1")
        assert listed["status"] == "ok", listed
    finally:
        run_cli("kernel", "stop", str(tmp_path / PATH))


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("--store", "disk"), {}),
        ((), {"JUPYTER_JCLI_STORE": "room"}),
        (("--store", "collab"), {}),
        (("--store", "contents"), {}),
    ],
)
def test_a_bad_store_is_a_usage_error_before_anything_runs(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], env: dict[str, str]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for command in (("notebook", "overview", PATH), ("cell", "remove", PATH, "0",
                                                     "--expected-rev", "x")):  # fmt: skip
        done = run_cli("-j", *command, *args)
        assert json.loads(done.stdout)["code"] == "USAGE_ERROR"
        assert done.exit_code == 2
    assert len(store.read(REF).notebook["cells"]) == 2
