"""Helpers shared by the host tests: running j-cli, snapshotting folders, npm installs."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.cli import run

JCLI = Path(sys.executable).parent / "j-cli"
RUN_TIMEOUT_S = 120
INSTALL_TIMEOUT_S = 1200


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


def npm_install(packages: Mapping[str, str]) -> Path:
    """The npm prefix holding ``packages`` (name -> pinned version), installed once and cached.

    ``npm install --prefix`` into a staging folder under the system temp dir, renamed to a folder
    keyed by the package set (``jcli-host-clis-<sha256 prefix>``) once complete, so later runs
    and other tests with the same set reuse it. Skips the test when npm is absent.
    """
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the real-host tests install their packages with npm")
    key = hashlib.sha256(json.dumps(dict(packages), sort_keys=True).encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"jcli-host-clis-{key}"
    with _install_lock(folder.with_name(f"{folder.name}.lock")):
        if not (folder / "installed.json").is_file():
            _install(npm, packages, folder)
    return folder


@contextmanager
def _install_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created): parallel workers (``pytest -n``) and other
    runs wait for one install of a package set instead of each downloading it. The wait is
    bounded by the installer's own timeout (``INSTALL_TIMEOUT_S``)."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _install(npm: str, packages: Mapping[str, str], folder: Path) -> None:
    """``npm install --prefix`` into a staging folder, renamed to ``folder`` once complete."""
    key = folder.name.removeprefix("jcli-host-clis-")
    staging = Path(tempfile.mkdtemp(prefix=f"jcli-host-clis-{key}-", dir=folder.parent))
    specs = [f"{name}@{version}" for name, version in packages.items()]
    done = subprocess.run(
        [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund", *specs],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"npm install failed:\n{done.stdout}\n{done.stderr}"
    (staging / "installed.json").write_text(json.dumps(dict(packages)))
    try:
        staging.rename(folder)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
