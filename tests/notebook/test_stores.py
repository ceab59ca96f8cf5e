"""Which store a notebook opens in (``notebook.stores``, issue 24): ``--store`` and
``$JUPYTER_JCLI_STORE`` parsing and refusals, refs of each store, the active choice that
``open_notebook`` honours, and ``auto`` against a real Jupyter Server with and without the
collaboration extension (marker ``server``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, JcliError, UsageError
from jupyter_jcli.notebook import stores
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.store import NotebookRef, open_notebook, open_store
from jupyter_jcli.notebook.stores import StoreChoice, resolve_ref, store_kind, using_store
from jupyter_jcli.notebook.testing import MemoryStore, StoreDocument
from server_helpers import NO_COLLABORATION, running_server

NOTEBOOK = {
    "nbformat": 4,
    "nbformat_minor": 5,
    "metadata": {},
    "cells": [{"cell_type": "code", "id": "a", "metadata": {}, "source": "x = 1",
               "outputs": [], "execution_count": None}],
}  # fmt: skip


@pytest.mark.parametrize(
    ("value", "env", "kind"),
    [
        (None, None, "auto"),
        (None, "collab", "collab"),
        ("LOCAL", "collab", "local"),
        ("contents", None, "contents"),
        (None, "", "auto"),
    ],
)
def test_the_store_kind_comes_from_the_option_then_the_variable(
    value: str | None, env: str | None, kind: str
) -> None:
    environ = {} if env is None else {stores.STORE_ENV: env}
    assert store_kind(value, environ=environ) == kind


@pytest.mark.parametrize(("value", "env"), [("disk", None), (None, "room")])
def test_an_unknown_store_is_a_usage_error(value: str | None, env: str | None) -> None:
    environ = {} if env is None else {stores.STORE_ENV: env}
    with pytest.raises(UsageError) as caught:
        store_kind(value, environ=environ)
    assert caught.value.code == ErrorCode.USAGE_ERROR
    assert caught.value.details["option"] == ("store" if value else stores.STORE_ENV)


@pytest.mark.parametrize("kind", ["collab", "contents"])
def test_a_server_store_without_a_server_url_is_a_usage_error(kind: str) -> None:
    with pytest.raises(UsageError) as caught:
        StoreChoice(kind, environ={})
    assert caught.value.code == ErrorCode.USAGE_ERROR
    with pytest.raises(UsageError):
        open_store(kind)


def test_auto_and_local_without_a_server_open_local_files(tmp_path: Path) -> None:
    for kind in ("auto", "local"):
        choice = StoreChoice(kind, environ={})
        assert choice.local_only
        store, ref = choice.ref_for(tmp_path / "nb.ipynb")
        assert store.kind == "local"
        assert ref == NotebookRef.local(tmp_path / "nb.ipynb")


def test_a_server_store_names_a_notebook_by_its_path_under_the_root(tmp_path: Path) -> None:
    store = MemoryStore()
    store.kind = "contents"  # resolve_ref reads only the kind and base_url
    store.base_url = "http://host:1/"  # type: ignore[attr-defined]
    ref = resolve_ref(tmp_path / "sub" / "nb.ipynb", store, server_root=tmp_path)
    assert ref == NotebookRef("contents", "sub/nb.ipynb", "http://host:1/")
    with pytest.raises(JcliError) as caught:
        resolve_ref("/elsewhere/nb.ipynb", store, server_root=tmp_path)
    assert caught.value.code == ErrorCode.SERVER_PATH_OUTSIDE_ROOT
    assert resolve_ref("a/b.ipynb", MemoryStore()) == NotebookRef("memory", "a/b.ipynb")


def test_open_notebook_of_a_path_opens_it_in_the_active_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = MemoryStore({"nb.ipynb": NOTEBOOK})
    with using_store(StoreChoice.of(store)):
        document = open_notebook("nb.ipynb")
    assert isinstance(document, StoreDocument)
    assert document.ref == NotebookRef("memory", "nb.ipynb")
    (tmp_path / "nb.ipynb").write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    with using_store(StoreChoice("local", environ={})):
        assert type(open_notebook("nb.ipynb")) is Document
    assert type(open_notebook("nb.ipynb")) is Document  # nothing active: the file


def test_auto_and_collab_open_the_collaborative_store(monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_jcli.notebook.store import CollabStore

    url = "http://127.0.0.1:9"
    monkeypatch.setattr(stores, "_probed", {url: True})  # the server answered the probe
    for kind in ("auto", "collab"):
        store = StoreChoice(kind, server_url=f"{url}/", environ={}).store_for("nb.ipynb")
        assert isinstance(store, CollabStore)
        store.close()


def test_kernel_paths_of_server_refs_lie_under_the_path_root(tmp_path: Path) -> None:
    choice = StoreChoice("auto", server_url="http://h:1/", path_root=tmp_path, environ={})
    ref = NotebookRef("collab", "sub/nb.ipynb", "http://h:1/")
    assert choice.kernel_path(ref) == tmp_path / "sub" / "nb.ipynb"
    local = NotebookRef.local(tmp_path / "x.ipynb")
    assert choice.kernel_path(local) == tmp_path / "x.ipynb"


@pytest.mark.server
@pytest.mark.parametrize("collaboration", [True, False], ids=["collab", "plain"])
def test_auto_picks_collab_only_on_a_server_with_collaboration(
    collaboration: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "nb.ipynb").write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    monkeypatch.setattr(stores, "_probed", {})
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    with running_server(
        root, tmp_path / "work", extra_args=() if collaboration else NO_COLLABORATION
    ) as server:
        remote = StoreChoice("auto", server_url=server.url, token=server.token, environ={})
        shared = StoreChoice(
            "auto", server_url=server.url, token=server.token, server_root=root, environ={}
        )
        if collaboration:
            assert remote.kind_for("nb.ipynb") == "collab"
            assert remote.kind_for("missing.ipynb") == "collab"  # the route answered
            bad = StoreChoice("auto", server_url=server.url, token="wrong", environ={})
            monkeypatch.setattr(stores, "_probed", {})
            with pytest.raises(JcliError) as caught:
                bad.kind_for("nb.ipynb")
            assert caught.value.code == ErrorCode.SERVER_AUTH_FAILED
            monkeypatch.setattr(stores, "_probed", {})
            # --store contents beside rooms: its PUT would go beneath the live document (a
            # trial lost a person's typing so): refused before anything is read or written.
            contents = StoreChoice(
                "contents", server_url=server.url, token=server.token, environ={}
            )
            with pytest.raises(JcliError) as refused:
                contents.store_for("nb.ipynb")
            assert refused.value.code == ErrorCode.USAGE_ERROR
            assert refused.value.details["reason"] == "server_has_rooms"
        else:
            contents = StoreChoice(
                "contents", server_url=server.url, token=server.token, environ={}
            )
            assert contents.store_for("nb.ipynb").kind == "contents"
            assert remote.kind_for("nb.ipynb") == "contents"  # no such file here
            assert shared.kind_for(root / "nb.ipynb") == "local"  # the root is a folder here
