"""Helpers shared by the host tests: running j-cli, snapshotting folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.cli import run

JCLI = Path(sys.executable).parent / "j-cli"
RUN_TIMEOUT_S = 120


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    """Run ``j-cli -j ARGS`` in-process; return the exit status and the one JSON document."""
    capsys.readouterr()
    status = run(["-j", *args])
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    document: dict[str, Any] = json.loads(lines[0])
    return status, document


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (relative path -> bytes)."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def run_process(
    args: list[str], *, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command with a bounded wait, capturing text output."""
    return subprocess.run(
        args,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        env=env if env is not None else dict(os.environ),
        check=False,
    )
