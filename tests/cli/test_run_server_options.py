"""``j-cli run`` and ``j-cli mcp workbench`` with ``--server-url``/``--token``/``--server-root``:
the config reaches the backend factory (faked here: the kernel is the in-process fake, a
person's shared kernel when it says ``attached``), a bad URL fails before anything runs, and
the token is never printed."""

from __future__ import annotations

import hashlib
import json
from functools import partial
from pathlib import Path

import pytest
from jcli_helpers import run_cli

from jupyter_jcli import kernels
from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.kernels import KernelOrigin, ServerConfig
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV
from kernel_fakes import python_backend

TOKEN = "never-print-this-token"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    for name in ("URL", "TOKEN", "ROOT"):
        monkeypatch.delenv(f"JUPYTER_JCLI_SERVER_{name}", raising=False)
    monkeypatch.delenv("JUPYTER_JCLI_KERNEL_USERNAME", raising=False)
    return folder


def notebook(folder: Path) -> Path:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "execution_count": None, "outputs": []}
        for i, source in enumerate(["a = 20", "print(a + 1)"])
    ]  # fmt: skip
    path = folder / "nb.ipynb"
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


OURS = KernelOrigin()


def fake_server(
    monkeypatch: pytest.MonkeyPatch, origin: KernelOrigin = OURS
) -> list[ServerConfig | None]:
    asked: list[ServerConfig | None] = []

    def factory(server: ServerConfig | None) -> kernels.BackendFactory:
        asked.append(server)
        return partial(python_backend, origin=origin)

    monkeypatch.setattr(kernels, "backend_factory", factory)
    return asked


def test_run_with_a_server_url_runs_on_the_servers_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = fake_server(monkeypatch)
    path = notebook(tmp_path)
    url = "http://127.0.0.1:8888/lab-prefix"
    options = ("--server-url", url, "--token", TOKEN, "--server-root", tmp_path)
    run = run_cli("-j", "run", path, *options)
    assert run.exit_code == 0, run.stdout
    # the run's workbench, and the read-only one of the closing overview: the same server
    assert asked == [ServerConfig(url + "/", TOKEN, server_root=tmp_path.resolve())] * 2
    assert run.json()["ok"] is True
    assert TOKEN not in run.stdout


def test_run_takes_the_server_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = fake_server(monkeypatch)
    monkeypatch.setenv("JUPYTER_JCLI_SERVER_URL", "https://hub.example.org/user/ana/")
    monkeypatch.setenv("JUPYTER_JCLI_SERVER_TOKEN", TOKEN)
    run = run_cli("-j", "run", notebook(tmp_path))
    assert run.exit_code == 0, run.stdout
    assert [(s.url, s.token) for s in asked if s] == [
        ("https://hub.example.org/user/ana/", TOKEN)
    ] * 2  # the run's workbench and the closing overview's


def test_run_on_a_shared_kernel_says_whose_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_server(monkeypatch, KernelOrigin(attached=True, started_by="JupyterLab session 9a"))
    run = run_cli("run", notebook(tmp_path), "--server-url", "http://lab:8888")
    assert run.exit_code == 0, run.stdout
    assert "on the shared kernel of JupyterLab session 9a" in run.stdout
    document = run_cli("-j", "run", notebook(tmp_path), "--server-url", "http://lab:8888").json()
    assert document["run"]["kernel"]["attached"] is True
    assert document["run"]["kernel"]["started_by"] == "JupyterLab session 9a"


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("--server-url", "ftp://lab:8888"), "server_url"),
        (("--server-url", "lab:8888"), "server_url"),
        (("--server-root", "/tmp"), "server_root"),
    ],
)
def test_a_bad_server_option_is_a_usage_error_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], option: str
) -> None:
    asked = fake_server(monkeypatch)
    path = notebook(tmp_path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    run = run_cli("-j", "run", path, *args, "--token", TOKEN)
    assert run.exit_code == 2
    document = run.json()
    assert (document["code"], document["details"].get("option")) == ("USAGE_ERROR", option)
    assert TOKEN not in run.stdout
    assert asked == []
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_mcp_workbench_refuses_a_bad_url_as_json(tmp_path: Path) -> None:
    run = run_cli("-j", "mcp", "workbench", "--root", tmp_path, "--server-url", "ftp://x")
    assert run.exit_code == 2
    document = run.json()
    assert document["code"] == ErrorCode.USAGE_ERROR
    assert document["details"].get("option") == "server_url"


def test_the_server_options_are_in_the_help_of_every_command_that_runs_code() -> None:
    for command in (("run",), ("exec",), ("mcp", "workbench")):
        shown = run_cli(*command, "--help").stdout
        for flag in (
            "--server-url URL",
            "--token TOKEN",
            "--server-root DIR",
            "--kernel-username NAME",
        ):
            assert flag in shown, (command, flag)


def test_the_kernel_username_option_and_variable_reach_the_server_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = fake_server(monkeypatch)
    url = "http://127.0.0.1:8888/"
    given = run_cli(
        "-j", "run", notebook(tmp_path), "--server-url", url, "--kernel-username", "ana"
    )
    assert given.exit_code == 0, given.stdout
    monkeypatch.setenv("JUPYTER_JCLI_KERNEL_USERNAME", "bo")
    from_env = run_cli("-j", "run", notebook(tmp_path), "--server-url", url)
    assert from_env.exit_code == 0, from_env.stdout
    assert [s.kernel_username for s in asked if s] == ["ana", "ana", "bo", "bo"]
