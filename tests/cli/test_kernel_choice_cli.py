"""``--kernel NAME`` on the command line against a notebook's live kernel (real kernels, each
command a process, as a shell runs it): a name that is not installed is refused before the
live kernel is touched (``kernel restart`` used to stop it first and lose its variables);
``run`` and ``exec`` refuse a kernelspec other than the live kernel's (they used to ignore
it and answer ok); nothing is reported running before the kernelspec is known to start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jcli_helpers import never_run_notebook

from jupyter_jcli.errors import ErrorCode

pytestmark = pytest.mark.kernel

TIMEOUT = 120.0
"""Seconds any one command may take (kernel start included, on a loaded machine)."""


def jcli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_jcli", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        check=False,
    )


def jcli_json(*args: str | Path) -> tuple[int, dict[str, Any]]:
    done = jcli("-j", *args)
    assert done.stdout.count("\n") == 1, done.stdout + done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, document


def live(path: Path) -> dict[str, Any]:
    """The notebook's kernel as ``kernel list`` shows it."""
    status, listed = jcli_json("kernel", "list")
    assert status == 0, listed
    (entry,) = [k for k in listed["kernels"] if k["notebook_path"] == str(path.resolve())]
    return entry


@pytest.fixture
def other_kernelspec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A second installed kernelspec, ``other`` (python3's, renamed), in a ``JUPYTER_PATH``
    the commands inherit."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3").to_dict()
    folder = tmp_path / "jupyter-path" / "kernels" / "other"
    folder.mkdir(parents=True)
    (folder / "kernel.json").write_text(json.dumps({**spec, "display_name": "Other"}))
    paths = [str(tmp_path / "jupyter-path"), os.environ.get("JUPYTER_PATH", "")]
    monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join(p for p in paths if p))
    return "other"


def test_a_restart_with_a_kernelspec_not_installed_keeps_the_live_kernel(
    tmp_path: Path,
) -> None:
    path = never_run_notebook(tmp_path, ["v = 42"])
    assert jcli_json("kernel", "start", path)[0] == 0
    assert jcli_json("run", path)[0] == 0
    before = live(path)

    status, refused = jcli_json("kernel", "restart", path, "--kernel", "typo")
    code, answer = jcli_json("exec", path, "--code", "v")

    assert status == 1 and refused["code"] == ErrorCode.KERNELSPEC_NOT_FOUND
    assert refused["details"]["source"] == "kernel_name"
    assert "--kernel" in refused["details"]["hint"]
    assert "pass --kernel" not in refused["message"]  # it was passed: pick an installed one
    after = live(path)
    assert (after["pid"], after["epoch"]) == (before["pid"], before["epoch"])
    assert code == 0 and answer["run"]["status"] == "ok"
    assert "42" in json.dumps(answer["outputs"])


def test_run_and_exec_refuse_a_kernelspec_not_installed_on_a_live_kernel(
    tmp_path: Path,
) -> None:
    path = never_run_notebook(tmp_path, ["v = 42"])
    assert jcli_json("kernel", "start", path)[0] == 0
    assert jcli_json("run", path)[0] == 0
    before = live(path)

    run = jcli_json("run", path, "--kernel", "typo")
    exec_ = jcli_json("exec", path, "--kernel", "typo", "--code", "v = 0")

    for status, refused in (run, exec_):
        assert status == 1 and refused["code"] == ErrorCode.KERNELSPEC_NOT_FOUND
        assert refused["details"]["kernelspec"] == "typo"
        assert refused["details"]["source"] == "kernel_name"
        assert "pass --kernel" not in refused["message"]
    assert live(path)["epoch"] == before["epoch"]
    value = jcli_json("exec", path, "--code", "v")[1]
    assert "42" in json.dumps(value["outputs"])  # the refused `v = 0` never ran


def test_run_and_exec_refuse_a_kernelspec_other_than_the_live_kernels(
    tmp_path: Path, other_kernelspec: str
) -> None:
    path = never_run_notebook(tmp_path, ["v = 42"])
    assert jcli_json("kernel", "start", path)[0] == 0

    run = jcli_json("run", path, "--kernel", other_kernelspec)
    exec_ = jcli_json("exec", path, "--kernel", other_kernelspec, "--code", "v = 0")
    start = jcli_json("kernel", "start", path, "--kernel", other_kernelspec)
    assert start[0] == 1 and start[1]["code"] == ErrorCode.KERNELSPEC_MISMATCH  # not ignored
    text = jcli("run", path, "--kernel", other_kernelspec)
    switched = jcli_json("kernel", "restart", path, "--kernel", other_kernelspec)
    after = jcli_json("run", path, "--kernel", other_kernelspec)

    for status, refused in (run, exec_):
        assert status == 1 and refused["code"] == ErrorCode.KERNELSPEC_MISMATCH
        assert refused["details"]["running_kernelspec"] == "python3"
        assert "j-cli kernel restart" in refused["details"]["hint"]
        assert "Restart the kernel with that kernelspec" not in refused["message"]  # said once
    assert text.returncode == 1 and "KERNELSPEC_MISMATCH" in text.stderr
    assert switched[0] == 0 and switched[1]["kernel"]["kernelspec"] == other_kernelspec
    assert after[0] == 0 and after[1]["run"]["kernel"]["kernelspec_name"] == other_kernelspec


def test_exec_without_a_notebook_of_a_kernelspec_not_installed_hints_the_installed(
    tmp_path: Path,
) -> None:
    status, refused = jcli_json("exec", "--kernel", "typo", "--code", "1")
    assert status == 1 and refused["code"] == ErrorCode.KERNELSPEC_NOT_FOUND
    assert refused["details"]["source"] == "kernel_name"
    assert "pass --kernel" not in refused["message"]  # it was passed: pick an installed one


def test_a_run_with_a_kernelspec_not_installed_reports_nothing_running(tmp_path: Path) -> None:
    path = never_run_notebook(tmp_path, ["v = 42"])
    document = json.loads(path.read_text(encoding="utf-8"))
    document["metadata"]["kernelspec"] = {"name": "python2", "display_name": "Python 2"}
    path.write_text(json.dumps(document), encoding="utf-8")

    done = jcli("run", path)

    assert done.returncode == 1 and "KERNELSPEC_NOT_FOUND" in done.stderr
    assert "running" not in done.stderr  # used to print "[0/1] running …" first


def test_exec_without_a_notebook_and_a_kernelspec_not_installed_names_no_notebook() -> None:
    status, refused = jcli_json("exec", "--kernel", "nonesuch", "--code", "1")

    assert status == 1 and refused["code"] == ErrorCode.KERNELSPEC_NOT_FOUND
    assert "--kernel" in refused["details"]["hint"]
    assert "notebook" not in refused["message"]  # used to say "set the notebook's kernelspec"


def test_commands_whose_kernel_never_starts_leave_no_execution_lock(
    tmp_path: Path, kernel_registry: Path
) -> None:
    path = never_run_notebook(tmp_path, ["v = 42"])
    document = json.loads(path.read_text(encoding="utf-8"))
    document["metadata"]["kernelspec"] = {"name": "python2", "display_name": "Python 2"}
    path.write_text(json.dumps(document), encoding="utf-8")

    done = [
        jcli("run", path),
        jcli("exec", path, "--code", "1"),
        jcli("-j", "exec", path, "--code", "1"),
        jcli("kernel", "restart", path),
    ]

    assert [d.returncode for d in done] == [1, 1, 1, 1]
    assert sorted(p.name for p in kernel_registry.iterdir()) == []  # a 0-byte <key>.exec stayed
