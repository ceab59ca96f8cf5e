"""A notebook whose file name is not UTF-8 (a byte the file system allows, which Python spells
with a surrogate escape) works with every live-kernel command: its registry entry is keyed by
the name's bytes. Real ``j-cli`` processes on a real ipykernel."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from test_kernel_live import jcli, jcli_json, names, notebook, rev

from jupyter_jcli.kernels import KernelRegistry

pytestmark = pytest.mark.kernel


def test_a_notebook_named_with_a_non_utf8_byte_runs_edits_and_undoes(tmp_path: Path) -> None:
    plain = notebook(tmp_path, ["a = 1", "print(a + 1)"])
    path = tmp_path / os.fsdecode(b"caf\xe9.ipynb")  # latin-1, not UTF-8
    shutil.move(plain, path)
    first, second = names(path)
    assert jcli_json("notebook", "overview", path)[0] == 0
    status, started = jcli_json("kernel", "start", path)
    assert status == 0, started
    try:
        assert KernelRegistry().read(path) is not None
        status, whole = jcli_json("run", path, "--stale")
        assert status == 0, whole
        assert [c["status"] for c in whole["run"]["cells"]] == ["ok", "ok"]
        status, scratch = jcli_json("exec", path, "--code", "print(a * 7)")
        assert status == 0 and scratch["outputs"][0]["text"] == ["7\n"]
        status, edited = jcli_json(
            "cell", "update", path, first, "--expected-rev", rev(path, first),
            "--source", "a = 5",
        )  # fmt: skip
        assert status == 0, edited
        status, stale = jcli_json("run", path, "--stale")
        assert status == 0 and [c["name"] for c in stale["run"]["cells"]] == [first, second]
        assert stale["run"]["cells"][1]["outputs"]["text"].endswith("6\n")
        status, undone = jcli_json("notebook", "undo", path)
        assert status == 0, undone
        assert "a = 1" in path.read_text(encoding="utf-8")
        status, listed = jcli_json("kernel", "list")
        assert status == 0 and len(listed["kernels"]) == 1
    finally:
        assert jcli("-j", "kernel", "stop", "--all").returncode == 0
    assert KernelRegistry().read(path) is None
