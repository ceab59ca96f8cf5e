"""What a new user of ``j-cli … --server-url`` hit on a real Jupyter Server (marker
``server``): a refused token, a ``--server-root`` that is not the server's root, and state
carried from one command to the next on the notebook's server kernel. Every wait is bounded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from jupyter_jcli.cli import run
from jupyter_jcli.errors import ErrorCode
from server_helpers import RunningServer, write_notebook

pytestmark = pytest.mark.server


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
