"""Both front ends on notebooks that exist only on a server (issue 26, items 1 and 2), as a
user runs them: the real ``jupyter-mcp`` console script driven by the MCP SDK's stdio client,
and the real ``j-cli`` console script, each with ``--store contents`` (the contents API),
in an agent folder that is not the server's root.

On a plain Jupyter Server without collaboration (``contents_server``): overview, an edit
guarded by its rev, undo, a change saved on the server meanwhile refused (``REV_MISMATCH``,
the server's text kept), ``run_stale`` (the kernel runs on the server, in the notebook's
server folder; the outputs land in the server's file) and the saved-output reads. On a real
JupyterHub (``jupyterhub``, ``hub_user_env``: the user server's ``/user/NAME/`` URL and the
user's Hub API token in the environment): overview, edit, ``run_stale``, undo. Nothing is
written under the agent's folder."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.stdio import StdioServerParameters
from workbench_client import error_code, ok, open_session, server_env

from jupyter_jcli.kernels import SERVER_TOKEN_ENV, SERVER_URL_ENV
from remote_servers import RunningHub, contents_server, hub_user_env, jupyterhub  # noqa: F401
from server_helpers import RunningServer, write_notebook

pytestmark = [pytest.mark.anyio, pytest.mark.server, pytest.mark.kernel]

CLI_WAIT = 180.0
"""Seconds one ``j-cli`` command may take (a run starts a kernel on the server)."""
SOURCES = ["# load\nimport os\nx = 20", "# show\nprint(x + 1, os.getcwd())"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _console_script(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def _on_server(root: Path) -> str:
    """A notebook written into a folder of the server's root only; its server path."""
    folder = root / f"proj-{secrets.token_hex(4)}"
    folder.mkdir()
    write_notebook(folder, SOURCES, "demo")
    return f"{folder.name}/demo.ipynb"


def _cells(root: Path, path: str) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads((root / path).read_text(encoding="utf-8"))["cells"]
    return cells


def _sources(root: Path, path: str) -> list[str]:
    return ["".join(cell["source"]) for cell in _cells(root, path)]


def _stdout(root: Path, path: str, index: int) -> str:
    return "".join("".join(out.get("text", "")) for out in _cells(root, path)[index]["outputs"])


def _save_on_server(url: str, token: str, path: str, index: int, source: str) -> None:
    """Another client (JupyterLab) changes cell ``index`` and saves through the API."""
    headers = {"Authorization": f"token {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=30.0) as client:
        model = client.get(f"api/contents/{path}").json()
        model["content"]["cells"][index]["source"] = source
        saved = {"type": "notebook", "format": "json", "content": model["content"]}
        assert client.put(f"api/contents/{path}", json=saved).status_code == 200


def _agent(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    folder.mkdir()
    return folder


def _nothing_written(agent: Path) -> None:
    assert [path for path in agent.rglob("*")] == []


def _mcp_params(agent: Path, env: dict[str, str], *server: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=_console_script("jupyter-mcp"),
        args=["--root", str(agent), *server, "--store", "contents"],
        cwd=agent,
        env=env,
    )


def _jcli(
    agent: Path, env: dict[str, str], *args: str, store: str = "contents"
) -> tuple[int, dict[str, Any]]:
    """``j-cli -j ARGS``, with ``--store STORE`` unless ``store`` is ``auto`` (nothing named:
    the default)."""
    chosen = [] if store == "auto" else ["--store", store]
    done = subprocess.run(
        [_console_script("j-cli"), "-j", *args, *chosen],
        cwd=agent,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_WAIT,
        check=False,
    )
    document: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, document


def _names(document: dict[str, Any]) -> dict[str, str]:
    return {cell["name"]: cell["rev"] for cell in document["cells"]}


async def test_jupyter_mcp_works_on_a_notebook_only_in_the_servers_root(
    contents_server: RunningServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    root, agent = contents_server.root, _agent(tmp_path)
    path = _on_server(root)
    env = server_env(tmp_path / "cache", JUPYTER_JCLI_SERVER_TOKEN=contents_server.token)
    params = _mcp_params(agent, env, "--server-url", contents_server.url)
    async with open_session(params, tmp_path / "mcp.log") as session:
        revs = _names(await ok(session, "notebook_overview", path=path))
        assert list(revs) == ["load", "show"]
        edited = await ok(session, "update_cell", path=path, name="show",
                          expected_rev=revs["show"], source="# show\nprint(x * 2)")  # fmt: skip
        assert _sources(root, path)[1] == "# show\nprint(x * 2)"
        await ok(session, "undo_last", path=path)
        assert _sources(root, path) == SOURCES

        _save_on_server(
            contents_server.url, contents_server.token, path, 1, "# show\nprint('theirs')"
        )
        stale = {"expected_rev": revs["show"], "source": "# show\nprint(0)"}
        refused = await error_code(session, "update_cell", path=path, name="show", **stale)
        assert refused == "REV_MISMATCH"
        assert _sources(root, path)[1] == "# show\nprint('theirs')"  # never overwritten
        assert edited["cell"]["rev"] != revs["show"]

        revs = _names(await ok(session, "notebook_overview", path=path))
        await ok(session, "update_cell", path=path, name="show", expected_rev=revs["show"],
                 source=SOURCES[1])  # fmt: skip
        ran = await ok(session, "run_stale", path=path)
        assert [cell["status"] for cell in ran["cells"]] == ["ok", "ok"]
        folder = str(root / Path(path).parent)  # the kernel runs in the server's folder
        assert _stdout(root, path, 1) == f"21 {folder}\n"
        revs = _names(await ok(session, "notebook_overview", path=path))
        await ok(session, "update_cell", path=path, name="show", expected_rev=revs["show"],
                 source="# show\nprint(x * 3)")  # fmt: skip
        await ok(session, "execute_cells", path=path, names=["show"])
        assert _stdout(root, path, 1) == "60\n"
        listed = await ok(session, "read_notebook_output", file_path=path, cell_index=1)
        assert listed["source"]["cell_index"] == 1 and listed["output_count"] == 1
        assert listed["outputs"][0]["total_characters"] == len("60\n")  # the saved output
    _nothing_written(agent)


async def test_jupyter_mcp_works_on_a_jupyterhub_user_servers_notebook(
    hub_user_env: RunningHub,  # noqa: F811
    tmp_path: Path,
) -> None:
    root, agent = hub_user_env.root, _agent(tmp_path)
    path = _on_server(root)
    assert os.environ[SERVER_URL_ENV].endswith(f"/user/{hub_user_env.user}/")
    assert os.environ[SERVER_TOKEN_ENV]
    params = _mcp_params(agent, server_env(tmp_path / "cache"))  # URL and token: environment
    async with open_session(params, tmp_path / "mcp.log") as session:
        revs = _names(await ok(session, "notebook_overview", path=path))
        await ok(session, "update_cell", path=path, name="load", expected_rev=revs["load"],
                 source="# load\nimport os\nx = 40")  # fmt: skip
        assert _sources(root, path)[0] == "# load\nimport os\nx = 40"
        ran = await ok(session, "run_stale", path=path)
        assert [cell["status"] for cell in ran["cells"]] == ["ok", "ok"]
        assert _stdout(root, path, 1) == f"41 {root / Path(path).parent}\n"
        await ok(session, "undo_last", path=path)
        assert _sources(root, path) == SOURCES
        assert _stdout(root, path, 1) == f"41 {root / Path(path).parent}\n"  # outputs kept
    _nothing_written(agent)


def test_j_cli_works_on_a_notebook_only_in_the_servers_root(
    contents_server: RunningServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    root, agent = contents_server.root, _agent(tmp_path)
    path = _on_server(root)
    env = server_env(
        tmp_path / "cache",
        JUPYTER_JCLI_SERVER_URL=contents_server.url,
        JUPYTER_JCLI_SERVER_TOKEN=contents_server.token,
    )
    code, overview = _jcli(agent, env, "notebook", "overview", path)
    assert code == 0 and overview["status"] == "ok", overview
    revs = _names(overview)
    code, edited = _jcli(agent, env, "cell", "update", path, "show", "--expected-rev",
                         revs["show"], "--source", "# show\nprint(x * 2)")  # fmt: skip
    assert code == 0, edited
    assert _sources(root, path)[1] == "# show\nprint(x * 2)"
    code, undone = _jcli(agent, env, "notebook", "undo", path)
    assert code == 0 and undone["undone"] == "update_cell", undone
    assert _sources(root, path) == SOURCES

    _save_on_server(contents_server.url, contents_server.token, path, 1, "# show\nprint('theirs')")
    code, refused = _jcli(agent, env, "cell", "update", path, "show", "--expected-rev",
                          revs["show"], "--source", "# show\nprint(0)")  # fmt: skip
    assert code != 0 and refused["code"] == "REV_MISMATCH", refused
    assert _sources(root, path)[1] == "# show\nprint('theirs')"  # never overwritten

    code, ran = _jcli(agent, env, "run", path)
    assert code == 0 and ran["ok"] is True, ran
    assert _stdout(root, path, 1) == "theirs\n"
    assert _cells(root, path)[0]["execution_count"] == 1
    code, listed = _jcli(agent, env, "notebook", "outputs", path, "--cell", "1")
    assert code == 0 and listed["output_count"] == 1, listed
    code, read = _jcli(agent, env, "notebook", "output", path, "--cell", "1", "--output", "0")
    assert code == 0 and read["status"] == "ok", read
    assert "theirs" in json.dumps(read)
    _nothing_written(agent)


def test_j_cli_works_on_a_jupyterhub_user_servers_notebook(
    hub_user_env: RunningHub,  # noqa: F811
    tmp_path: Path,
) -> None:
    root, agent = hub_user_env.root, _agent(tmp_path)
    path = _on_server(root)
    env = server_env(tmp_path / "cache")  # URL and token from the environment (the fixture)
    env.pop("JUPYTER_JCLI_STORE", None)  # auto: the Hub's root is no folder here, no rooms
    code, overview = _jcli(agent, env, "notebook", "overview", path, store="auto")
    assert code == 0, overview
    revs = _names(overview)
    code, edited = _jcli(agent, env, "cell", "update", path, "load", "--expected-rev",
                         revs["load"], "--source", "# load\nimport os\nx = 40")  # fmt: skip
    assert code == 0, edited
    code, ran = _jcli(agent, env, "run", path, store="auto")
    assert code == 0 and ran["ok"] is True, ran
    assert _stdout(root, path, 1) == f"41 {root / Path(path).parent}\n"
    code, undone = _jcli(agent, env, "notebook", "undo", path)
    assert code == 0 and undone["undone"] == "update_cell", undone
    assert _sources(root, path) == SOURCES
    assert _stdout(root, path, 1) == f"41 {root / Path(path).parent}\n"  # outputs kept
    _nothing_written(agent)


async def test_jupyter_mcp_auto_keeps_a_notebook_under_its_root_local(
    contents_server: RunningServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    """``auto`` with a server takes the contents store only for a path that is no file
    here: a tool's relative path is relative to ``--root``, not to the process's folder."""
    agent = _agent(tmp_path)
    write_notebook(agent, SOURCES, "local")
    env = server_env(tmp_path / "cache", JUPYTER_JCLI_SERVER_TOKEN=contents_server.token)
    env.pop("JUPYTER_JCLI_STORE", None)
    params = StdioServerParameters(
        command=_console_script("jupyter-mcp"),
        args=["--root", str(agent), "--server-url", contents_server.url],
        cwd=tmp_path,  # not the root
        env=env,
    )
    async with open_session(params, tmp_path / "mcp.log") as session:
        revs = _names(await ok(session, "notebook_overview", path="local.ipynb"))
        await ok(session, "update_cell", path="local.ipynb", name="show",
                 expected_rev=revs["show"], source="# show\nprint(x * 2)")  # fmt: skip
    assert _sources(agent, "local.ipynb")[1] == "# show\nprint(x * 2)"
    assert not (contents_server.root / "local.ipynb").exists()


def test_j_cli_runs_a_paired_script_on_the_server_through_its_jupytext(
    contents_server: RunningServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A paired ``.py`` on the server is read and written by the server's jupytext; ``j-cli
    run`` of it runs its notebook's cells (it is no local script to run whole)."""
    import jupytext
    import nbformat

    root, agent = contents_server.root, _agent(tmp_path)
    folder = root / f"pair-{secrets.token_hex(4)}"
    folder.mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in SOURCES]
    jupytext.write(notebook, folder / "demo.ipynb")
    jupytext.write(notebook, folder / "demo.py", fmt="py:percent")
    script, path = f"{folder.name}/demo.py", f"{folder.name}/demo.ipynb"
    env = server_env(
        tmp_path / "cache",
        JUPYTER_JCLI_SERVER_URL=contents_server.url,
        JUPYTER_JCLI_SERVER_TOKEN=contents_server.token,
    )
    code, overview = _jcli(agent, env, "notebook", "overview", script)
    assert code == 0, overview
    code, edited = _jcli(agent, env, "cell", "update", script, "show", "--expected-rev",
                         _names(overview)["show"], "--source", "# show\nprint(x * 2)")  # fmt: skip
    assert code == 0, edited
    assert "print(x * 2)" in (folder / "demo.py").read_text(encoding="utf-8")
    code, ran = _jcli(agent, env, "run", script)
    assert code == 0 and ran["ok"] is True, ran
    assert _stdout(root, path, 1) == "40\n"
    _nothing_written(agent)
