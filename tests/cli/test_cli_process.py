"""The installed ``j-cli`` in real subprocesses: exit statuses, streams, lazy imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from jcli_helpers import EXAMPLE

from jupyter_jcli.errors import ErrorCode

HEAVY_MODULES = ("jupyter_client", "zmq", "mcp", "jupytext", "nbformat", "IPython", "PIL")
"""Modules the read path must not import (jupytext only for .py, nbformat only for v3)."""

TIMEOUT = 60


def _console_script() -> Path:
    folder = Path(sys.executable).parent
    script = folder / ("j-cli.exe" if os.name == "nt" else "j-cli")
    assert script.exists(), f"the j-cli console script is not installed in {folder}"
    return script


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(_console_script()), *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        check=False,
    )


def test_installed_j_cli_reads_an_output_as_one_json_document() -> None:
    proc = _run("-j", "notebook", "output", EXAMPLE, "--cell", "18", "--output", "0")
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert proc.stdout.count("\n") == 1
    doc = json.loads(proc.stdout)
    assert doc["status"] == "ok"
    assert doc["selected"]["mime_type"] == "text/html"


def test_installed_j_cli_exit_statuses_for_protocol_and_usage_errors(tmp_path: Path) -> None:
    missing = _run("-j", "notebook", "outputs", tmp_path / "nope.ipynb", "--cell", "0")
    assert (missing.returncode, missing.stderr) == (1, "")
    assert json.loads(missing.stdout)["code"] == ErrorCode.FILE_NOT_FOUND
    usage = _run("-j", "notebook", "outputs", EXAMPLE, "--cell", "one", "--cell", "two")
    assert (usage.returncode, usage.stderr) == (2, "")
    assert json.loads(usage.stdout)["code"] == ErrorCode.USAGE_ERROR
    text = _run("notebook", "output", EXAMPLE, "--cell", "18", "--output", "7")
    assert text.returncode == 1
    assert text.stdout == ""
    assert text.stderr.startswith(f"error {ErrorCode.OUTPUT_NOT_FOUND}: ")


def test_installed_j_cli_show_runs_the_quick_start() -> None:
    proc = _run("notebook", "show", EXAMPLE)
    assert proc.returncode == 0
    assert "image/png" in proc.stdout
    assert "Traceback" not in proc.stderr


_IMPORT_PROBE = textwrap.dedent(
    """
    import contextlib, json, os, sys
    from jupyter_jcli.cli import run
    heavy, commands = json.loads(sys.argv[1])
    report = []
    sink = open(os.devnull, "w", encoding="utf-8")
    for args in commands:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            status = run(args)
        loaded = sorted({name.split(".")[0] for name in sys.modules} & set(heavy))
        report.append({"args": args, "status": status, "loaded": loaded})
    print(json.dumps(report))
    """
)


def _probe(commands: list[list[str]]) -> list[dict[str, object]]:
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE, json.dumps([HEAVY_MODULES, commands])],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    report: list[dict[str, object]] = json.loads(proc.stdout)
    return report


def test_help_and_read_commands_import_nothing_heavy() -> None:
    nb = str(EXAMPLE)
    report = _probe(
        [
            ["--help"],
            ["notebook", "--help"],
            ["-j", "notebook", "outputs", nb, "--cell", "24"],
            ["-j", "notebook", "output", nb, "--cell", "24", "--output", "0"],
            ["notebook", "output", nb, "--cell", "18", "--output", "0", "--mime", "text/plain"],
            ["notebook", "cells", nb],
            ["notebook", "show", nb],
        ]
    )
    assert [entry["status"] for entry in report] == [0] * 7
    assert [entry["loaded"] for entry in report] == [[]] * 7


def test_reading_a_py_file_is_what_brings_jupytext_in(tmp_path: Path) -> None:
    script = tmp_path / "alone.py"
    script.write_text("# %%\nx = 1\n", "utf-8")
    report = _probe(
        [["-j", "notebook", "cells", str(EXAMPLE)], ["-j", "notebook", "cells", str(script)]]
    )
    assert report[0]["loaded"] == []
    assert report[1]["status"] == 0
    assert "jupytext" in report[1]["loaded"]  # the probe does see heavy imports
