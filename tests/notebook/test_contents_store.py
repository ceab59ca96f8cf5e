"""The contents-API store on real servers whose disk is not ours (marker ``server``): a
notebook that exists only in a Jupyter Server's root, then only in a JupyterHub user
server's root, read, edited and undone through ``StoreDocument``; another client's save
between our read and our write is refused, never overwritten; nothing is written under the
agent's folder but its cache. The store's own contract is ``test_store_contract.py``."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.kernels import SERVER_TOKEN_ENV, SERVER_URL_ENV
from jupyter_jcli.notebook.document import WRITE_ATTEMPTS
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV
from jupyter_jcli.notebook.store import ContentsStore, NotebookRef, Version
from jupyter_jcli.notebook.testing import open_document
from remote_servers import RunningHub, contents_server, hub_user_env, jupyterhub  # noqa: F401
from server_helpers import RunningServer, free_port, write_notebook

pytestmark = pytest.mark.server


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The agent's folder (its working directory), with its cache inside."""
    folder = tmp_path / "agent"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder / "cache"))
    return folder


def _only_cache_written(agent: Path) -> None:
    written = [path for path in agent.rglob("*") if path.is_file()]
    assert written and all(path.is_relative_to(agent / "cache") for path in written)


def _on_server(root: Path, sources: list[str]) -> str:
    """A notebook written straight into a server's root; its server path."""
    name = f"nb-{secrets.token_hex(4)}"
    write_notebook(root, sources, name)
    return f"{name}.ipynb"


def _saved_sources(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]) for cell in cells]


def _put(client: httpx.Client, path: str, notebook: dict[str, Any]) -> None:
    model = {"type": "notebook", "format": "json", "content": notebook}
    assert client.put(f"api/contents/{path}", json=model).status_code == 200


def test_a_notebook_only_on_the_server_is_read_edited_and_undone(
    contents_server: RunningServer,  # noqa: F811
    agent: Path,
) -> None:
    path = _on_server(contents_server.root, ["# load\nx = 1", "# show\nprint(x)"])
    assert not (agent / path).exists()
    with ContentsStore(contents_server.url, contents_server.token) as store:
        document = open_document(store.ref(path), store)
        assert [view.name for view in document.cells] == ["load", "show"]
        document.update_cell("show", expected_rev=document.cell("show").rev, source="print(-x)")
        document.add_cell("# more\ny = x + 1", after="load", expected_rev=document.cell("load").rev)
        saved = contents_server.root / path
        assert _saved_sources(saved) == ["# load\nx = 1", "# more\ny = x + 1", "print(-x)"]
        assert document.undo().operation == "add_cell"
        assert document.undo().operation == "update_cell"
        assert _saved_sources(saved) == ["# load\nx = 1", "# show\nprint(x)"]
        place = store.kernel_place(store.ref(path))
        assert (place.where, place.url, place.cwd) == ("server", contents_server.url, "")
    _only_cache_written(agent)


class _Racing(ContentsStore):
    """The real store, with another client saving the notebook right before each of our
    version checks (the worst moment: after our read, before our ``PUT``)."""

    def __init__(self, server: RunningServer, edit: Any) -> None:
        super().__init__(server.url, server.token)
        self.client = server.client()
        self.edit = edit
        self.saves = 0

    def _check(self, ref: NotebookRef, path: str, expected: Version) -> None:
        notebook = self.client.get(f"api/contents/{path}").json()["content"]
        self.edit(notebook, self.saves)
        _put(self.client, path, notebook)
        self.saves += 1
        super()._check(ref, path, expected)


def test_a_save_of_the_cell_between_our_read_and_write_is_a_rev_mismatch(
    contents_server: RunningServer,  # noqa: F811
    agent: Path,
) -> None:
    path = _on_server(contents_server.root, ["# load\nx = 1", "# show\nprint(x)"])

    def theirs(notebook: dict[str, Any], _save: int) -> None:
        notebook["cells"][1]["source"] = "# show\nprint('theirs')"

    store = _Racing(contents_server, theirs)
    with store:
        document = open_document(store.ref(path), store)
        with pytest.raises(NotebookError) as caught:
            document.update_cell("show", expected_rev=document.cell("show").rev, source="ours")
    assert caught.value.code == ErrorCode.REV_MISMATCH
    assert _saved_sources(contents_server.root / path)[1] == "# show\nprint('theirs')"
    assert store.undo_entries(store.ref(path)) == []


def test_saves_that_keep_landing_before_our_write_end_in_a_write_conflict(
    contents_server: RunningServer,  # noqa: F811
    agent: Path,
) -> None:
    path = _on_server(contents_server.root, ["# load\nx = 1", "# show\nprint(x)"])

    def theirs(notebook: dict[str, Any], save: int) -> None:
        notebook["cells"][0]["source"] = f"# load\nx = {save + 10}"

    store = _Racing(contents_server, theirs)
    with store:
        document = open_document(store.ref(path), store)
        with pytest.raises(NotebookError) as caught:
            document.update_cell("show", expected_rev=document.cell("show").rev, source="ours")
        assert caught.value.code == ErrorCode.WRITE_CONFLICT
        assert store.saves == WRITE_ATTEMPTS
        expected = [f"# load\nx = {WRITE_ATTEMPTS + 9}", "# show\nprint(x)"]
        assert _saved_sources(contents_server.root / path) == expected  # theirs, not ours
        assert store.undo_entries(store.ref(path)) == []


def test_a_paired_script_goes_through_the_servers_jupytext(
    contents_server: RunningServer,  # noqa: F811
    agent: Path,
) -> None:
    import jupytext

    name = f"pair-{secrets.token_hex(4)}"
    notebook = jupytext.reads("# %%\nx = 1\n\n# %%\nprint(x)\n", fmt="py:percent")
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    jupytext.write(notebook, contents_server.root / f"{name}.ipynb")
    jupytext.write(notebook, contents_server.root / f"{name}.py", fmt="py:percent")
    with ContentsStore(contents_server.url, contents_server.token) as store:
        document = open_document(store.ref(f"{name}.py"), store)
        target = document.cells[1]
        document.update_cell(target.name, expected_rev=target.rev, source="print(x * 2)")
    assert "print(x * 2)" in (contents_server.root / f"{name}.py").read_text(encoding="utf-8")
    assert _saved_sources(contents_server.root / f"{name}.ipynb")[1] == "print(x * 2)"


def test_refusals_carry_the_catalogues_codes(
    contents_server: RunningServer,  # noqa: F811
    agent: Path,
) -> None:
    path = _on_server(contents_server.root, ["x = 1"])
    (contents_server.root / "notes.txt").write_text("plain\n", encoding="utf-8")
    cases: list[tuple[ContentsStore, str, str]] = [
        (ContentsStore(contents_server.url, contents_server.token), "missing.ipynb", "read"),
        (ContentsStore(contents_server.url, "wrong-token"), path, "read"),
        (ContentsStore(contents_server.url, contents_server.token), "notes.txt", "read"),
        (ContentsStore(contents_server.url, contents_server.token), path, "create"),
        (ContentsStore(f"http://127.0.0.1:{free_port()}/", None, timeout=5.0), path, "read"),
    ]
    codes = []
    for store, where, action in cases:
        with store, pytest.raises(NotebookError) as caught:
            if action == "read":
                store.read(store.ref(where))
            else:
                store.create(store.ref(where), {"cells": [], "metadata": {}, "nbformat": 4})
        codes.append(caught.value.code)
    assert codes == [
        ErrorCode.FILE_NOT_FOUND,
        ErrorCode.SERVER_AUTH_FAILED,
        ErrorCode.FILE_TYPE_UNSUPPORTED,
        ErrorCode.FILE_EXISTS,
        ErrorCode.SERVER_UNREACHABLE,
    ]


def test_a_notebook_on_a_jupyterhub_user_server_is_read_edited_and_undone(
    hub_user_env: RunningHub,  # noqa: F811
    agent: Path,
) -> None:
    path = _on_server(hub_user_env.root, ["# load\nx = 1", "# show\nprint(x)"])
    url, token = os.environ[SERVER_URL_ENV], os.environ[SERVER_TOKEN_ENV]
    assert url.endswith(f"/user/{hub_user_env.user}/")
    with ContentsStore(url, token) as store:
        document = open_document(store.ref(path), store)
        assert [view.name for view in document.cells] == ["load", "show"]
        document.update_cell("show", expected_rev=document.cell("show").rev, source="print(2)")
        assert _saved_sources(hub_user_env.root / path)[1] == "print(2)"
        assert document.undo().operation == "update_cell"
        assert _saved_sources(hub_user_env.root / path)[1] == "# show\nprint(x)"
        assert store.kernel_place(store.ref(path)).url == url
    with ContentsStore(url, "not-a-hub-token") as refused, pytest.raises(NotebookError) as caught:
        refused.read(refused.ref(path))
    assert caught.value.code == ErrorCode.SERVER_AUTH_FAILED
    _only_cache_written(agent)


def test_a_server_without_hashes_is_versioned_by_its_content(
    tmp_path: Path, agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from server_helpers import NO_COLLABORATION, running_server

    tests = str(Path(__file__).parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")]))
    manager = "--ServerApp.contents_manager_class=nohash_contents.NoHashContentsManager"
    root = tmp_path / "root"
    root.mkdir()
    path = _on_server(root, ["# load\nx = 1", "# show\nprint(x)"])
    with (
        running_server(root, tmp_path / "work", extra_args=[*NO_COLLABORATION, manager]) as server,
        ContentsStore(server.url, server.token) as store,
        server.client() as client,
    ):
        read = store.read(store.ref(path))
        assert read.version.digest.startswith("content-sha256:")
        document = open_document(store.ref(path), store)
        document.update_cell("show", expected_rev=document.cell("show").rev, source="print(1)")
        assert _saved_sources(root / path)[1] == "print(1)"
        rev = document.cell("show").rev
        theirs = client.get(f"api/contents/{path}").json()["content"]
        theirs["cells"][1]["source"] = "print('theirs')"
        _put(client, path, theirs)
        with pytest.raises(NotebookError) as caught:
            document.update_cell("show", expected_rev=rev, source="")
    assert caught.value.code == ErrorCode.REV_MISMATCH
    assert _saved_sources(root / path)[1] == "print('theirs')"
