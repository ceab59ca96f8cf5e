"""``j-cli kernel start|list|stop|restart|interrupt --server-url`` on a real Jupyter Server
(marker ``server``): the server's notebook sessions are its live kernels, those we start and
those a person opened alike. Every wait is bounded."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from jupyter_jcli.cli import run
from jupyter_jcli.errors import ErrorCode
from server_helpers import RunningServer, write_notebook

pytestmark = pytest.mark.server


def jcli(server: RunningServer, *args: str | Path) -> tuple[int, dict[str, Any]]:
    """``j-cli -j ARGS --server-url … --token … --server-root …`` in memory: exit status
    and the JSON document."""
    where = ("--server-url", server.url, "--token", server.token, "--server-root", server.root)
    runner = CliRunner()
    with runner.isolation() as streams:
        status = run(["-j", *map(str, args), *map(str, where)])
        sys.stdout.flush()
        out = streams[0].getvalue().decode("utf-8")
    assert out.count("\n") == 1, out
    document: dict[str, Any] = json.loads(out)
    return status, document


def server_sessions(server: RunningServer) -> list[dict[str, Any]]:
    with server.client() as rest:
        answer = rest.get("api/sessions")
        answer.raise_for_status()
        sessions: list[dict[str, Any]] = answer.json()
        return sessions


def test_a_kernel_started_on_a_server_is_a_session_listed_controlled_and_stopped(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["x = 1"])
    status, started = jcli(jupyter_server, "kernel", "start", path)
    assert status == 0 and started["started"] is True
    kernel = started["kernel"]
    assert kernel["transport"] == "server" and kernel["notebook_path"] == str(path.resolve())
    try:
        assert jcli(jupyter_server, "kernel", "start", path)[1]["started"] is False
        status, listed = jcli(jupyter_server, "kernel", "list")
        assert status == 0
        mine = [k for k in listed["kernels"] if k["notebook_path"] == str(path.resolve())]
        assert [k["kernel_id"] for k in mine] == [kernel["kernel_id"]]
        status, interrupted = jcli(jupyter_server, "kernel", "interrupt", path)
        assert status == 0 and interrupted["kernel"]["kernel_id"] == kernel["kernel_id"]
        status, restarted = jcli(jupyter_server, "kernel", "restart", path)
        assert status == 0 and restarted["restarted"] is True
        assert restarted["kernel"]["kernel_id"] == kernel["kernel_id"]  # in place
    finally:
        status, stopped = jcli(jupyter_server, "kernel", "stop", path)
    assert status == 0 and [k["kernel_id"] for k in stopped["stopped"]] == [kernel["kernel_id"]]
    assert all(s["kernel"]["id"] != kernel["kernel_id"] for s in server_sessions(jupyter_server))
    status, again = jcli(jupyter_server, "kernel", "stop", path)
    assert status != 0 and again["code"] == ErrorCode.KERNEL_NOT_RUNNING.value
    status, gone = jcli(jupyter_server, "kernel", "interrupt", path)
    assert status != 0 and gone["code"] == ErrorCode.KERNEL_NOT_RUNNING.value


def test_a_session_a_person_opened_is_listed_as_the_notebooks_kernel(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["y = 2"], name="theirs")
    session = rest_session(jupyter_server, path)
    try:
        status, listed = jcli(jupyter_server, "kernel", "list")
        assert status == 0
        (theirs,) = [k for k in listed["kernels"] if k["notebook_path"] == str(path.resolve())]
        assert theirs["session_id"] == session["id"]
        assert theirs["kernel_id"] == session["kernel"]["id"]
        assert theirs["kernelspec"] == "python3"
    finally:
        with jupyter_server.client() as rest:
            rest.delete(f"api/sessions/{session['id']}")


def test_a_notebook_outside_the_servers_root_is_refused(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["z = 3"])
    elsewhere = tmp_path / "elsewhere"  # a folder (a missing one is a USAGE_ERROR)
    elsewhere.mkdir()
    where = ("--server-url", jupyter_server.url, "--token", jupyter_server.token)
    runner = CliRunner()
    with runner.isolation() as streams:
        status = run(["-j", "kernel", "start", str(path), *where, "--server-root", str(elsewhere)])
        sys.stdout.flush()
        document = json.loads(streams[0].getvalue().decode("utf-8"))
    assert status != 0 and document["code"] == ErrorCode.SERVER_PATH_OUTSIDE_ROOT.value


def test_a_run_told_to_keep_its_server_kernel_leaves_a_session_kernel_list_shows(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["kept = 41", "kept + 1"], name="kept")
    status, ran = jcli(jupyter_server, "run", path, "--keep")
    assert status == 0 and ran["ok"] is True
    try:
        status, listed = jcli(jupyter_server, "kernel", "list")
        assert status == 0
        (kept,) = [k for k in listed["kernels"] if k["notebook_path"] == str(path.resolve())]
        assert kept["keep"] is True and kept["started_command"]  # the run's, which kept it
        status, again = jcli(jupyter_server, "run", path, "--all")
        assert status == 0 and again["ok"] is True  # the next command joins the kept kernel
        status, still = jcli(jupyter_server, "kernel", "list")
        assert [
            k["kernel_id"] for k in still["kernels"] if k["notebook_path"] == str(path.resolve())
        ] == [kept["kernel_id"]]
    finally:
        jcli(jupyter_server, "kernel", "stop", path)
    assert all(s["kernel"]["id"] != kept["kernel_id"] for s in server_sessions(jupyter_server))


def test_a_run_without_keep_leaves_no_session_on_the_server(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["once = 1"], name="once")
    status, ran = jcli(jupyter_server, "run", path)
    assert status == 0 and ran["ok"] is True
    _status, listed = jcli(jupyter_server, "kernel", "list")
    assert [k for k in listed["kernels"] if k["notebook_path"] == str(path.resolve())] == []


def test_a_restart_naming_another_or_a_missing_kernelspec_restarts_nothing(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["x = 1"], name="named")
    status, started = jcli(jupyter_server, "kernel", "start", path)
    assert status == 0
    try:
        missing = jcli(jupyter_server, "kernel", "restart", path, "--kernel", "typo")
        other = jcli(jupyter_server, "kernel", "restart", path, "--kernel", "python2")
        same = jcli(jupyter_server, "kernel", "restart", path, "--kernel", "python3")
        status, listed = jcli(jupyter_server, "kernel", "list")
    finally:
        jcli(jupyter_server, "kernel", "stop", path)
    assert missing[0] == 1 and missing[1]["code"] == ErrorCode.KERNELSPEC_NOT_FOUND.value
    assert "--kernel" in missing[1]["details"]["hint"]
    assert other[0] == 1 and other[1]["code"] == ErrorCode.KERNELSPEC_NOT_FOUND.value
    assert same[0] == 0 and same[1]["restarted"] is True
    mine = [k for k in listed["kernels"] if k["notebook_path"] == str(path.resolve())]
    assert [k["kernel_id"] for k in mine] == [started["kernel"]["kernel_id"]]


def jcli_process(server: RunningServer, *args: str | Path) -> Any:
    """``j-cli -j ARGS --server-url … --token … --server-root …`` as its own process (its
    command line is what the ledger records): the running process (``Popen``, stdout piped)."""
    where = ("--server-url", server.url, "--token", server.token, "--server-root", server.root)
    return subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli", "-j", *map(str, args), *map(str, where)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def finished(process: Any, timeout: float = 120.0) -> dict[str, Any]:
    """The JSON document of a :func:`jcli_process` that exits 0 (bounded)."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def rest_session(server: RunningServer, path: Path) -> dict[str, Any]:
    """A session for the notebook at ``path`` created through the server's REST API (as
    JupyterLab opens one), not by any process of ours: its model."""
    relative = path.resolve().relative_to(server.root.resolve()).as_posix()
    with server.client() as rest:
        body = {"path": relative, "type": "notebook", "name": path.name}
        made = rest.post("api/sessions", json={**body, "kernel": {"name": "python3"}})
        made.raise_for_status()
        session: dict[str, Any] = made.json()
        return session


def listed_kernel(server: RunningServer, path: Path) -> dict[str, Any]:
    """The notebook's kernel as ``j-cli -j kernel list --server-url`` shows it."""
    status, listed = jcli(server, "kernel", "list")
    assert status == 0, listed
    (kernel,) = [k for k in listed["kernels"] if k["notebook_path"] == str(path.resolve())]
    return kernel


def test_a_session_kernel_start_created_is_listed_kept_with_its_command_epoch_and_runs(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["a = 1", "b = a + 1", "print(b)"], name="started")
    started = finished(jcli_process(jupyter_server, "kernel", "start", path))["kernel"]
    try:
        kernel = listed_kernel(jupyter_server, path)
        assert kernel["kernel_id"] == started["kernel_id"]
        assert (kernel["keep"], kernel["epoch"], kernel["runs"]) == (True, None, 0)
        command = kernel["started_command"]
        assert "kernel start" in command and str(path) in command, command
        assert jupyter_server.token not in command and "--token ***" in command
        assert started["started_command"] == command  # start's own result says the same
        status, ran = jcli(jupyter_server, "run", path, "--all")
        assert status == 0 and ran["ok"] is True
        after = listed_kernel(jupyter_server, path)
        assert (after["epoch"], after["runs"]) == (ran["run"]["epoch"], 3)
        assert (after["keep"], after["started_command"]) == (True, command)
    finally:
        status, stopped = jcli(jupyter_server, "kernel", "stop", path)
    # A stop result describes each kernel as stopped, as for a local kernel: ``stopping``,
    # no runs (its records went with it), the rest as it was.
    (gone,) = stopped["stopped"]
    assert (gone["state"], gone["runs"], gone["keep"]) == ("stopping", 0, True)
    assert (gone["epoch"], gone["started_command"]) == (after["epoch"], command)


def test_a_session_a_run_created_for_itself_is_listed_not_kept_while_the_run_lives(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    wait = f"import pathlib, time\nwhile not pathlib.Path({str(go)!r}).exists(): time.sleep(0.1)"
    path = write_notebook(tmp_path, [wait], name="for-a-run")
    running = jcli_process(jupyter_server, "run", path)
    try:
        deadline = time.monotonic() + 120.0
        kernel = None
        while kernel is None or kernel["running_cell"] is None:  # the run's cell is waiting
            assert time.monotonic() < deadline and running.poll() is None
            _status, listed = jcli(jupyter_server, "kernel", "list")
            found = [k for k in listed["kernels"] if k["notebook_path"] == str(path.resolve())]
            kernel = found[0] if found else None
            time.sleep(0.2)
        assert kernel["keep"] is False
        assert kernel["started_command"].startswith("python -m jupyter_jcli -j run ")
        assert kernel["state"] == "busy" and kernel["running_cell"] == "import-pathlib"
        assert kernel["epoch"] is not None and kernel["runs"] == 0  # the run's; none done yet
    finally:
        go.touch()
        assert finished(running)["ok"] is True
    _status, listed = jcli(jupyter_server, "kernel", "list")
    assert [k for k in listed["kernels"] if k["notebook_path"] == str(path.resolve())] == []


def test_a_session_none_of_ours_created_is_kept_with_no_command_and_counts_our_runs(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["y = 2", "y + 1"], name="rest")
    session = rest_session(jupyter_server, path)
    try:
        theirs = listed_kernel(jupyter_server, path)
        assert (theirs["keep"], theirs["started_command"]) == (True, None)
        assert (theirs["epoch"], theirs["runs"]) == (None, 0)
        status, ran = jcli(jupyter_server, "run", path, "--all")  # joins it, leaves it
        assert status == 0 and ran["ok"] is True
        after = listed_kernel(jupyter_server, path)
        assert (after["keep"], after["started_command"]) == (True, None)
        assert (after["epoch"], after["runs"]) == (ran["run"]["epoch"], 2)
    finally:
        with jupyter_server.client() as rest:
            rest.delete(f"api/sessions/{session['id']}")
