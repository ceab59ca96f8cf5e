"""The installed ``j-cli`` writing into a pipe nobody reads (``j-cli ... | head`` after head
exited): it stops quietly with status 1, never a traceback (a real subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from jcli_helpers import NOTEBOOKS

TIMEOUT = 60
BIG = NOTEBOOKS / "05.11-K-Means.ipynb"


def _j_cli() -> Path:
    return Path(sys.executable).parent / ("j-cli.exe" if os.name == "nt" else "j-cli")


@pytest.mark.parametrize(
    "args",
    [("notebook", "show", BIG), ("-j", "notebook", "cells", BIG)],
    ids=["text", "json"],
)
def test_output_into_a_closed_pipe_ends_with_status_1_and_no_traceback(
    args: tuple[str | Path, ...],
) -> None:
    proc = subprocess.Popen(
        [str(_j_cli()), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # no reader from the start: the first write fails with EPIPE
    _, stderr = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 1
    assert b"Traceback" not in stderr
    assert b"BrokenPipeError" not in stderr
