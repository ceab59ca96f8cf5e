"""jupyter-jcli 0.9.7's command line beyond the protocol, on real kernels: ``j-cli vars NB``
and ``j-cli exec --display-mode``; and ``j-cli kernelspec list``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jcli_helpers import never_run_notebook, run_cli
from live_helpers import start, stop

from jupyter_jcli.errors import ErrorCode


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A notebook with a live kernel (``j-cli kernel start``), stopped at the end."""
    monkeypatch.chdir(tmp_path)
    path = never_run_notebook(tmp_path, ["x = 1"])
    start(path)
    try:
        yield path
    finally:
        stop(path)


def exec_json(*args: str | Path) -> dict[str, Any]:
    done = run_cli("-j", "exec", *args)
    assert done.exit_code in (0, 1), done.stdout + done.stderr
    return done.json()


def kernel_facts(path: Path) -> tuple[str, int, int]:
    """The shell's display setting, its post_run_cell callbacks and its execution count, as
    a cell run now reads them (that cell counts one execution)."""
    code = (
        "_s = get_ipython()\n"
        "(_s.ast_node_interactivity, len(_s.events.callbacks['post_run_cell']), "
        "_s.execution_count)"
    )
    document = exec_json(path, "--code", code)
    mode, callbacks, count = ast.literal_eval(document["outputs"][0]["data"]["text/plain"][0])
    return str(mode), int(callbacks), int(count)


def results(document: dict[str, Any]) -> list[str]:
    return [
        "".join(output["data"]["text/plain"])
        for output in document.get("outputs", [])  # -j answers may leave out empty fields
        if output["output_type"] == "execute_result"
    ]


def variables(path: Path) -> dict[str, Any]:
    done = run_cli("-j", "vars", path)
    assert done.exit_code == 0, done.stdout + done.stderr
    return done.json()


@pytest.mark.kernel
def test_vars_lists_user_variables_with_type_and_a_short_fact_and_hides_the_rest(
    live: Path,
) -> None:
    code = (
        "import os\nfrom os import path as ospath\n"
        "n = 1\ns = 'hello'\nitems = [1, 2, 3]\n_hidden = 1\n"
        "class Grid:\n    shape = (2, 3)\n"
        "grid = Grid()\n"
        "def f():\n    pass\n"
    )
    assert exec_json(live, "--code", code)["ok"] is True
    _, _, count_before = kernel_facts(live)
    document = variables(live)
    listed = {entry["name"]: entry for entry in document["variables"]}
    assert list(listed) == ["n", "s", "items", "Grid", "grid", "f"]  # definition order
    assert listed["n"] == {"name": "n", "type": "int", "repr": "1"}
    assert listed["s"] == {"name": "s", "type": "str", "length": 5, "repr": "'hello'"}
    assert listed["items"] == {"name": "items", "type": "list", "length": 3}
    assert listed["grid"]["shape"] == [2, 3]
    assert listed["f"]["type"] == "function"
    assert document["omitted"] == 0 and document["variable_count"] == 6
    # a silent probe: the next cell's count follows the last one, and nothing was left behind
    _, _, count_after = kernel_facts(live)
    assert count_after == count_before + 1
    assert [entry["name"] for entry in variables(live)["variables"]] == list(listed)
    text = run_cli("vars", live)
    assert text.exit_code == 0
    assert text.stdout.splitlines()[0].split() == ["NAME", "TYPE", "VALUE"]
    assert "items" in text.stdout and "len 3" in text.stdout


@pytest.mark.kernel
def test_vars_is_bounded_and_says_what_it_left_out(live: Path) -> None:
    code = "for _i in range(260):\n    globals()[f'v{_i:03d}'] = _i\ndel _i"
    assert exec_json(live, "--code", code)["ok"] is True
    document = variables(live)
    listed = len(document["variables"])
    assert 0 < listed <= 200
    assert listed + document["omitted"] == 260 == document["variable_count"]
    assert document["omitted_names"][0] == f"v{listed:03d}"
    assert document["notice"]


def test_vars_without_a_live_kernel_is_kernel_not_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = never_run_notebook(tmp_path, ["x = 1"])
    done = run_cli("-j", "vars", path)
    assert done.exit_code == 1
    assert done.json()["code"] == ErrorCode.KERNEL_NOT_RUNNING


@pytest.mark.kernel
def test_display_mode_all_shows_every_expression_for_that_run_only(live: Path) -> None:
    mode, callbacks, count = kernel_facts(live)
    assert mode == "last_expr"
    shown = exec_json(live, "--display-mode", "all", "--code", "1 + 1\n'two'\ny = 3\ny")
    assert results(shown) == ["2", "'two'", "3"]
    assert shown["run"]["execution_count"] == count  # the facts cell answered the next count
    plain = exec_json(live, "--code", "1 + 1\n'two'")
    assert results(plain) == ["'two'"]
    # the setting and the shell's callbacks are as they were; only the runs were counted
    assert kernel_facts(live) == (mode, callbacks, count + 3)
    names = [entry["name"] for entry in variables(live)["variables"]]
    assert names == ["y"]


@pytest.mark.kernel
def test_display_mode_is_restored_when_the_code_raises(live: Path) -> None:
    mode, callbacks, count = kernel_facts(live)
    failed = exec_json(live, "--display-mode", "all", "--code", "1\n2\nraise ValueError('no')")
    assert not failed.get("ok") and failed["run"]["ename"] == "ValueError"
    assert results(failed) == ["1", "2"]
    assert kernel_facts(live) == (mode, callbacks, count + 2)


@pytest.mark.kernel
def test_display_mode_last_expr_or_assign_shows_an_assignment_on_a_scratch_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = "a = 6\nb = a * 7"
    assert results(exec_json("--display-mode", "last_expr_or_assign", "--code", code)) == ["42"]
    assert results(exec_json("--code", code)) == []


def test_an_unknown_display_mode_is_a_usage_error_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = run_cli("-j", "exec", "--display-mode", "every", "--code", "1")
    assert done.exit_code == 2
    assert done.json()["code"] == ErrorCode.USAGE_ERROR
    assert not (tmp_path / ".j-cli").exists()


def test_the_workbench_refuses_an_unknown_display_mode() -> None:
    from jupyter_jcli.errors import UsageError
    from jupyter_jcli.workbench._display_mode import DISPLAY_MODES, check_display_mode

    assert check_display_mode(None) is None
    assert [check_display_mode(mode) for mode in DISPLAY_MODES] == list(DISPLAY_MODES)
    with pytest.raises(UsageError) as refused:
        check_display_mode("every")
    assert refused.value.code == ErrorCode.USAGE_ERROR


def test_kernelspec_list_names_the_installed_kernelspecs() -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    done = run_cli("-j", "kernelspec", "list")
    assert done.exit_code == 0
    document = done.json()
    assert document["operation"] == "kernelspec_list"
    specs = {entry["name"]: entry for entry in document["kernelspecs"]}
    assert sorted(specs) == sorted(KernelSpecManager().find_kernel_specs())
    python = specs["python3"]
    assert python["language"] == "python" and python["display_name"]
    assert (Path(python["resource_dir"]) / "kernel.json").is_file()
    text = run_cli("kernelspec", "list")
    assert text.exit_code == 0
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["NAME", "DISPLAY_NAME", "LANGUAGE"]
    assert any(line.split()[0] == "python3" and line.split()[-1] == "python" for line in lines)
