"""A kernel that exits at start because one of its ports was taken (jupyter_client picks ports
by binding port 0 and releasing them, jupyter/jupyter_client#487) is started again with new
ports, by the local backend and by a registered kernel's supervisor alike; a kernel that keeps
exiting fails with ``KERNEL_START_FAILED`` after ``START_ATTEMPTS`` and leaves nothing behind.

The kernelspec here runs real ipykernel under a wrapper that, for its first launches, holds the
shell port written in the connection file, so ipykernel's own bind fails with
"Address already in use", exactly as in the race.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import LocalBackend
from jupyter_jcli.kernels._local import START_ATTEMPTS
from jupyter_jcli.kernels._registry import pid_alive

pytestmark = [pytest.mark.kernel, pytest.mark.anyio]

WAIT = 60.0
"""Upper bound (s) on any one test's kernel waits."""

J_CLI = Path(sys.executable).parent / "j-cli"
"""The installed console script, as a shell runs it."""

_WRAPPER = textwrap.dedent(
    """
    import json, os, socket, subprocess, sys

    launches, holds, connection_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(launches, "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()} {connection_file}\\n")
    with open(launches, encoding="utf-8") as f:
        launch = len(f.read().splitlines())
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file]
    if launch <= holds:
        with open(connection_file, encoding="utf-8") as f:
            info = json.load(f)
        taken = socket.socket()
        taken.bind((info["ip"], info["shell_port"]))
        taken.listen()
        sys.exit(subprocess.call(argv))
    os.execv(sys.executable, argv)
    """
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _port_taking_kernelspec(root: Path, holds: int) -> tuple[dict[str, str], Path]:
    """A kernelspec ``port-taken`` under ``root`` whose first ``holds`` launches find their
    shell port taken; returns the environment that finds it and the launch log (a pid a line)."""
    spec = root / "jupyter" / "kernels" / "port-taken"
    spec.mkdir(parents=True)
    wrapper = root / "wrapper.py"
    wrapper.write_text(_WRAPPER, encoding="utf-8")
    launches = root / "launches.txt"
    argv = [sys.executable, str(wrapper), str(launches), str(holds), "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "port taken", "language": "python"}),
        encoding="utf-8",
    )
    env = {"JUPYTER_PATH": str(root / "jupyter")}
    return env, launches


def _launched(launches: Path) -> list[int]:
    """The pid of each launch, in order."""
    return [int(line.split(" ", 1)[0]) for line in launches.read_text("utf-8").splitlines()]


def _connection_files(launches: Path) -> list[Path]:
    """The connection file of each launch, in order."""
    return [Path(line.split(" ", 1)[1]) for line in launches.read_text("utf-8").splitlines()]


async def test_a_kernel_whose_port_was_taken_is_started_again_and_then_runs_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env, launches = _port_taking_kernelspec(tmp_path, holds=START_ATTEMPTS - 1)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    backend = LocalBackend()
    with anyio.fail_after(WAIT):
        await backend.start(
            kernelspec_name="port-taken",
            cwd=tmp_path,
            startup_timeout=WAIT,
            notebook_path=tmp_path / "n.ipynb",
        )
    try:
        first = _launched(launches)
        assert len(first) == START_ATTEMPTS
        assert not any(pid_alive(pid) for pid in first[:-1])
        assert backend.pid == first[-1]  # the last launch exec-ed into the kernel itself
        client = backend._kc
        assert client is not None
        with anyio.fail_after(WAIT):
            reply = await client.execute(
                "", user_expressions={"v": "6 * 7"}, reply=True, timeout=WAIT
            )
        assert reply["content"]["user_expressions"]["v"]["data"]["text/plain"] == "42"
        # each launch had its own connection file; the failed ones' are gone
        files = _connection_files(launches)
        assert len(set(files)) == START_ATTEMPTS
        assert [file.exists() for file in files] == [False] * (START_ATTEMPTS - 1) + [True]
    finally:
        with anyio.fail_after(WAIT):
            await backend.shutdown(now=True, timeout=5.0)


async def test_a_kernel_that_keeps_exiting_fails_after_the_attempts_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env, launches = _port_taking_kernelspec(tmp_path, holds=START_ATTEMPTS + 5)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    backend = LocalBackend()
    with anyio.fail_after(WAIT), pytest.raises(KernelError) as failed:
        await backend.start(
            kernelspec_name="port-taken",
            cwd=tmp_path,
            startup_timeout=WAIT,
            notebook_path=tmp_path / "n.ipynb",
        )
    assert failed.value.code == ErrorCode.KERNEL_START_FAILED
    assert "died" in failed.value.details["reason"]
    pids = _launched(launches)
    assert len(pids) == START_ATTEMPTS
    assert not any(pid_alive(pid) for pid in pids)
    assert backend.pid is None
    assert not any(file.exists() for file in _connection_files(launches))


def test_a_registered_kernel_whose_port_was_taken_is_started_again_by_its_supervisor(
    tmp_path: Path,
) -> None:
    env, launches = _port_taking_kernelspec(tmp_path, holds=1)
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(
        json.dumps(
            {
                "nbformat": 4,
                "nbformat_minor": 5,
                "metadata": {
                    "kernelspec": {"name": "port-taken", "display_name": "port taken"},
                    "language_info": {"name": "python"},
                },
                "cells": [],
            }
        ),
        encoding="utf-8",
    )
    registry = tmp_path / "registry"
    full_env = {
        **os.environ,
        **env,
        "JUPYTER_JCLI_RUNTIME_DIR": str(registry),
    }

    def j_cli(*args: str) -> dict[str, object]:
        done = subprocess.run(
            [str(J_CLI), "-j", *args],
            env=full_env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=WAIT,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        answer: dict[str, object] = json.loads(done.stdout)
        return answer

    try:
        j_cli("kernel", "start", str(notebook))
        assert len(_launched(launches)) == 2
        answer = j_cli("exec", str(notebook), "--code", "print(6 * 7)")
        assert "42" in json.dumps(answer)
    finally:
        subprocess.run(
            [str(J_CLI), "-j", "kernel", "stop", "--all"],
            env=full_env,
            cwd=tmp_path,
            capture_output=True,
            timeout=WAIT,
            check=False,
        )
    assert not any(pid_alive(pid) for pid in _launched(launches))
