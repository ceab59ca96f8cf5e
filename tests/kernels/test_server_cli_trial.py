"""What a new user of ``j-cli … --server-url`` hit on a real Jupyter Server (marker
``server``): a refused token, a ``--server-root`` that is not the server's root, and state
carried from one command to the next on the notebook's server kernel. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from test_server_join import other_client

from jupyter_jcli.cli import run
from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.kernels import SERVER_TOKEN_ENV
from jupyter_jcli.workbench import shared_workbench
from server_helpers import RunningServer, write_notebook

pytestmark = pytest.mark.server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def jcli(
    server: RunningServer, *args: str | Path, token: str | None = None, root: Path | None = None
) -> tuple[int, dict[str, Any]]:
    """``j-cli -j ARGS --server-url … --token … --server-root …`` in memory: exit status and
    the JSON document (the server's own token and root unless given)."""
    where = (
        "--server-url",
        server.url,
        "--token",
        server.token if token is None else token,
        "--server-root",
        server.root if root is None else root,
    )
    runner = CliRunner()
    with runner.isolation() as streams:
        status = run(["-j", *map(str, args), *map(str, where)])
        sys.stdout.flush()
        out = streams[0].getvalue().decode("utf-8")
    assert out.count("\n") == 1, out
    document: dict[str, Any] = json.loads(out)
    return status, document


@pytest.mark.parametrize(
    "command",
    [("kernel", "list"), ("kernel", "start", "NB"), ("kernel", "stop", "NB"), ("kernel", "stop")],
    ids=["list", "start", "stop", "stop-all"],
)
def test_a_refused_token_fails_every_kernel_command_with_server_auth_failed(
    jupyter_server: RunningServer, tmp_path: Path, command: tuple[str, ...]
) -> None:
    path = write_notebook(tmp_path, ["x = 1"])
    args = [str(path) if part == "NB" else part for part in command]
    if command == ("kernel", "stop"):
        args.append("--all")
    status, document = jcli(jupyter_server, *args, token="not-the-token")
    assert (status, document["code"]) == (1, ErrorCode.SERVER_AUTH_FAILED)
    assert document["details"]["server_url"].rstrip("/") == jupyter_server.url.rstrip("/")


def ran(document: dict[str, Any]) -> list[str]:
    """The cells a ``j-cli -j run`` document says ran (not skipped)."""
    cells = document["run"].get("cells", [])  # empty fields are left out of -j run
    return [c["name"] for c in cells if c["status"] != "skipped"]


SOURCES = ["a = 1", "b = a + 1", "c = b * 10", "print(c)"]


@pytest.fixture
def kept_session(jupyter_server: RunningServer, tmp_path: Path) -> Any:
    """A notebook whose session ``j-cli kernel start --server-url`` started (stopped after)."""
    path = write_notebook(tmp_path, SOURCES)
    status, started = jcli(jupyter_server, "kernel", "start", path)
    assert status == 0, started
    try:
        yield path, started["kernel"]["kernel_id"]
    finally:
        jcli(jupyter_server, "kernel", "stop", path)


def test_run_stale_across_commands_on_a_server_kernel_runs_only_what_an_edit_made_stale(
    jupyter_server: RunningServer, kept_session: tuple[Path, str]
) -> None:
    path, _ = kept_session
    status, first = jcli(jupyter_server, "run", path, "--stale")
    assert (status, ran(first)) == (0, ["a", "b", "c", "print-c"])
    status, again = jcli(jupyter_server, "run", path, "--stale")
    assert (status, ran(again)) == (0, [])
    status, overview = jcli(jupyter_server, "run", path, "--cell", "print-c")
    assert (status, ran(overview)) == (0, ["print-c"])  # its fresh parents do not run again
    rev = next(c["rev"] for c in overview["overview"]["cells"] if c["name"] == "b")
    # The edit goes through the same server: the run opened the notebook's collaborative
    # room, and a write of the file behind an open room is what the stores exist to avoid.
    status, edited = jcli(
        jupyter_server, "cell", "update", path, "b", "--expected-rev", rev, "--source", "b = a + 2"
    )
    assert status == 0, edited
    status, after_edit = jcli(jupyter_server, "run", path, "--stale")
    assert (status, ran(after_edit)) == (0, ["b", "c", "print-c"])


def test_code_someone_else_ran_on_the_server_kernel_makes_every_cell_run_again(
    jupyter_server: RunningServer, kept_session: tuple[Path, str]
) -> None:
    path, kernel_id = kept_session
    assert ran(jcli(jupyter_server, "run", path, "--stale")[1]) == ["a", "b", "c", "print-c"]
    with other_client(jupyter_server, kernel_id) as person:
        person.run("a = 'changed by a person'")
    status, document = jcli(jupyter_server, "run", path, "--stale")
    assert (status, ran(document)) == (0, ["a", "b", "c", "print-c"])


def test_a_run_that_starts_the_server_kernel_says_so_and_one_that_joins_it_does_not(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, SOURCES)
    status, first = jcli(jupyter_server, "run", path, "--keep")  # no session yet: one starts
    try:
        assert (status, first["run"].get("kernel_started")) == (0, True), first
        status, again = jcli(jupyter_server, "run", path, "--cell", "a")  # joins the kept one
        assert (status, again["run"].get("kernel_started", False)) == (0, False), again
    finally:
        jcli(jupyter_server, "kernel", "stop", path)


def statuses(document: dict[str, Any]) -> dict[str, str]:
    """Each cell's status in an overview document."""
    return {c["name"]: c["status"] for c in document["cells"]}


def test_the_overview_after_a_server_run_shows_its_cells_fresh_until_someone_else_runs_code(
    jupyter_server: RunningServer, kept_session: tuple[Path, str]
) -> None:
    path, kernel_id = kept_session
    status, first = jcli(jupyter_server, "run", path, "--stale")
    assert status == 0, first
    fresh = dict.fromkeys(["a", "b", "c", "print-c"], "fresh")
    after = first["overview"]  # read by the run command once it left the kernel
    assert (statuses(after), after["kernel"]["kernel_id"]) == (fresh, kernel_id)
    assert after["kernel"]["epoch"] == first["run"]["epoch"]
    status, overview = jcli(jupyter_server, "notebook", "overview", path)  # another command
    assert (status, statuses(overview), overview["kernel"]["state"]) == (0, fresh, "idle")
    assert overview["kernel"].get("attached") is not True
    with other_client(jupyter_server, kernel_id) as person:
        person.run("a = 'changed by a person'")
    status, overview = jcli(jupyter_server, "notebook", "overview", path)
    assert (status, set(statuses(overview).values())) == (0, {"never_run"})
    assert overview["kernel"]["attached"] is True
    text = jcli_text(jupyter_server, "notebook", "overview", path)  # the kernel is live
    assert "no live kernel" not in text and "idle" in text and "not run here" in text, text


def jcli_text(server: RunningServer, *args: str | Path) -> str:
    """What ``j-cli ARGS --server-url … --token … --server-root …`` prints as text."""
    where = ("--server-url", server.url, "--token", server.token, "--server-root", server.root)
    runner = CliRunner()
    with runner.isolation() as streams:
        status = run([*map(str, args), *map(str, where)])
        sys.stdout.flush()
        out = streams[0].getvalue().decode("utf-8")
    assert status == 0, out
    return out


def test_a_server_kernel_restart_between_commands_makes_every_cell_run_again(
    jupyter_server: RunningServer, kept_session: tuple[Path, str]
) -> None:
    path, _ = kept_session
    assert ran(jcli(jupyter_server, "run", path, "--stale")[1]) == ["a", "b", "c", "print-c"]
    assert jcli(jupyter_server, "kernel", "restart", path)[0] == 0
    status, document = jcli(jupyter_server, "run", path, "--stale")
    assert (status, ran(document)) == (0, ["a", "b", "c", "print-c"])


def sessions_of(server: RunningServer) -> list[str]:
    """The paths of the server's sessions."""
    with server.client() as rest:
        return [s["path"] for s in rest.get("api/sessions").json()]


def test_a_server_root_that_is_no_folder_here_is_a_usage_error(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["x = 1"])
    status, document = jcli(jupyter_server, "kernel", "start", path, root=tmp_path / "missing")
    assert (status, document["code"]) == (2, ErrorCode.USAGE_ERROR)
    assert document["details"]["option"] == "server_root"


def test_a_server_root_other_than_the_local_servers_own_is_refused_before_any_session(
    jupyter_server: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(jupyter_server.runtime_dir))  # its jpserver file
    path = write_notebook(tmp_path, ["x = 1"])
    before = sessions_of(jupyter_server)
    for command in (("kernel", "start", path), ("run", path)):
        status, document = jcli(jupyter_server, *command, root=tmp_path)  # a folder inside
        assert (status, document["code"]) == (2, ErrorCode.USAGE_ERROR)
        assert document["details"]["server_root"] == str(jupyter_server.root.resolve())
    assert sessions_of(jupyter_server) == before
    status, started = jcli(jupyter_server, "kernel", "start", path)  # its own root: accepted
    assert status == 0, started
    jcli(jupyter_server, "kernel", "stop", path)


def wait_busy(server: RunningServer, kernel_id: str, limit: float = 60.0) -> None:
    """Until the server reports the kernel busy (bounded)."""
    deadline = time.monotonic() + limit
    with server.client() as rest:
        while rest.get(f"api/kernels/{kernel_id}").json()["execution_state"] != "busy":
            assert time.monotonic() < deadline, "the kernel never got busy"
            time.sleep(0.05)


@pytest.mark.parametrize(
    ("command", "reason"),
    [(("kernel", "interrupt"), "kernel_interrupted"), (("kernel", "restart"), "kernel_restarted")],
    ids=["interrupt", "restart"],
)
def test_a_cell_another_command_stops_on_a_server_kernel_ends_interrupted_naming_who_asked(
    jupyter_server: RunningServer,
    tmp_path: Path,
    command: tuple[str, ...],
    reason: str,
) -> None:
    path = write_notebook(tmp_path, ["import time\nprint('go', flush=True)\ntime.sleep(60)"])
    status, started = jcli(jupyter_server, "kernel", "start", path)
    assert status == 0, started
    where = ["--server-url", jupyter_server.url, "--token", jupyter_server.token]
    running = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter_jcli",
            "-j",
            "run",
            str(path),
            *where,
            "--server-root",
            str(jupyter_server.root),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_busy(jupyter_server, started["kernel"]["kernel_id"])
        assert jcli(jupyter_server, *command, path)[0] == 0
        out, _ = running.communicate(timeout=60)
    finally:
        running.kill()
        jcli(jupyter_server, "kernel", "stop", path)
    (cell,) = json.loads(out)["run"]["cells"]
    assert (cell["status"], cell["interrupted_by"]) == ("interrupted", reason)
    assert cell["interrupt_requested_by"] == f"{Path(sys.argv[0]).name} pid {os.getpid()}"


async def jcli_process(server: RunningServer, *args: str | Path) -> dict[str, Any]:
    """``j-cli -j ARGS`` on ``server`` as a process of its own (the token in the environment):
    its JSON document."""
    where = ["--server-url", server.url, "--server-root", str(server.root)]
    done = await anyio.run_process(
        [sys.executable, "-m", "jupyter_jcli", "-j", *map(str, args), *where],
        env={**os.environ, SERVER_TOKEN_ENV: server.token},
        check=False,
    )
    document: dict[str, Any] = json.loads(done.stdout)
    return document


@pytest.mark.anyio
async def test_what_a_process_still_on_the_server_kernel_ran_is_fresh_for_the_next_command(
    jupyter_server: RunningServer, kept_session: tuple[Path, str]
) -> None:
    path, _ = kept_session
    server = jupyter_server.config()
    with anyio.fail_after(120):
        async with shared_workbench(server=server) as mcp_like:  # as jupyter-mcp holds it
            assert (await mcp_like.run_stale(path)).still_stale == ()
            assert ran(await jcli_process(jupyter_server, "run", path, "--stale")) == []
            executed = await mcp_like.execute_cells(path, ["print-c"])
            assert executed.cells[0].status == "ok"  # both still on one kernel, one epoch
    assert ran(await jcli_process(jupyter_server, "run", path, "--stale")) == []
