"""The workbench package loads its operations on first use: importing it costs nothing, and
every public name still resolves to the object of the submodule that defines it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_jcli import workbench

HEAVY = {"jupyter_client", "zmq", "anyio", "asyncio", "nbformat", "jupytext", "PIL", "mcp"}


def test_importing_the_workbench_imports_no_kernel_client_and_none_of_its_operations(
    tmp_path: Path,
) -> None:
    probe = (
        "import json, sys\nimport jupyter_jcli.workbench\nprint(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    assert not HEAVY & {name.split(".")[0] for name in modules}
    ours = {name for name in modules if name.startswith("jupyter_jcli.")}
    assert ours == {"jupyter_jcli.workbench"}


@pytest.mark.parametrize("name", workbench.__all__)
def test_every_public_name_resolves_to_its_submodules_object(name: str) -> None:
    home = workbench._HOME[name]
    defined = getattr(importlib.import_module(f"jupyter_jcli.workbench.{home}"), name)
    assert getattr(workbench, name) is defined
    assert name in dir(workbench)


def test_the_public_names_are_exactly_those_the_package_loads() -> None:
    assert sorted(workbench.__all__) == sorted(workbench._HOME)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = workbench.no_such_operation  # type: ignore[attr-defined]
