"""The command line speaks its own words (issue 27, item 8): an empty or missing
``--expected-rev`` is a usage error naming that option, not a rev that "changed" or an MCP
argument; ``-j`` is understood after the command's name as before it (the click app and the
click-free read lane answer alike); an empty or BOM-prefixed notebook is refused with a reason
a person can act on; ``--save`` of an error output is refused plainly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jcli_helpers import code_cell, never_run_notebook, run_cli, write_notebook
from live_helpers import LANE

from jupyter_jcli.errors import ErrorCode, UsageError
from jupyter_jcli.notebook.document import Document


def overview_rev(path: Path, name: str) -> str:
    return Document.load(path).cell(name).rev


@pytest.mark.parametrize("command", ["update", "remove", "move"])
def test_an_empty_expected_rev_is_a_usage_error_and_changes_nothing(
    tmp_path: Path, command: str
) -> None:
    path = never_run_notebook(tmp_path, ["x = 1", "y = 2"])
    before = path.read_bytes()
    extra = {"update": ["--source", "x = 3"], "remove": [], "move": ["--end"]}[command]

    run = run_cli("-j", "cell", command, path, "x", "--expected-rev", "", *extra)

    assert run.exit_code == 2 and run.json()["code"] == ErrorCode.USAGE_ERROR
    assert run.json()["details"]["parameter"] == "expected_rev"
    assert path.read_bytes() == before


def test_an_empty_rev_given_to_the_library_is_a_usage_error_not_a_mismatch(
    tmp_path: Path,
) -> None:
    from jupyter_jcli.workbench import update_cell

    path = never_run_notebook(tmp_path, ["x = 1"])
    with pytest.raises(UsageError) as refused:
        update_cell(path, "x", expected_rev="", source="x = 2")
    assert refused.value.code == ErrorCode.USAGE_ERROR
    assert refused.value.details["name"] == "x"


def test_adding_next_to_a_cell_without_its_rev_names_the_option(tmp_path: Path) -> None:
    path = never_run_notebook(tmp_path, ["x = 1"])
    before = path.read_bytes()

    run = run_cli("-j", "cell", "add", path, "--source", "y = 2", "--after", "x")

    assert run.exit_code == 2 and run.json()["code"] == ErrorCode.USAGE_ERROR
    assert run.json()["details"]["option"] == "--expected-rev"
    assert path.read_bytes() == before
    rev = overview_rev(path, "x")
    assert run_cli("cell", "add", path, "--source", "y = 2", "--after", "x",
                   "--expected-rev", rev).exit_code == 0  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        ("notebook", "overview", "-j", "{nb}"),
        ("notebook", "overview", "{nb}", "-j"),
        ("notebook", "-j", "overview", "{nb}"),
        ("notebook", "overview", "{nb}", "--json"),
        ("kernel", "list", "-j"),
        ("notebook", "outputs", "{nb}", "--cell", "0", "-j"),
    ],
    ids=["before-file", "after-file", "after-group", "long", "kernel-list", "outputs"],
)
def test_j_after_the_command_gives_the_same_document_as_before_it(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    path = write_notebook(tmp_path / "nb.ipynb", [code_cell([], "x = 1")])
    words = [str(path) if word == "{nb}" else word for word in args]
    plain = [word for word in words if word not in ("-j", "--json")]

    after = run_cli(*words)
    before = run_cli("-j", *plain)

    assert after.exit_code == before.exit_code == 0
    assert after.json() == before.json()


def test_the_click_free_read_lane_and_click_agree_on_j_after_the_command(
    tmp_path: Path,
) -> None:
    path = write_notebook(tmp_path / "nb.ipynb", [code_cell([], "x = 1")])

    def console(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", LANE, *args], capture_output=True, text=True,
            encoding="utf-8", timeout=60, check=False,
        )  # fmt: skip

    lane = console("-j", "notebook", "outputs", str(path), "--cell", "0")
    after = console("notebook", "outputs", str(path), "--cell", "0", "-j")

    assert lane.returncode == after.returncode == 0
    assert json.loads(lane.stdout) == json.loads(after.stdout)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [(b"", "empty"), (b"\n  \n", "empty"), (b"\xef\xbb\xbf", "utf8_bom")],
    ids=["0-bytes", "blank", "bom-only"],
)
@pytest.mark.parametrize(
    "args",
    [("notebook", "overview"), ("notebook", "outputs", "--cell", "0"), ("run",)],
    ids=["overview", "outputs", "run"],
)
def test_an_empty_or_bom_prefixed_notebook_is_refused_with_its_reason(
    tmp_path: Path, raw: bytes, reason: str, args: tuple[str, ...]
) -> None:
    path = tmp_path / "nb.ipynb"
    if reason == "utf8_bom":
        good = write_notebook(tmp_path / "good.ipynb", [code_cell([], "x = 1")])
        raw += good.read_bytes()
    path.write_bytes(raw)

    run = run_cli("-j", args[0], *args[1:2], path, *args[2:])

    assert run.exit_code == 1
    assert run.json()["code"] == ErrorCode.NOTEBOOK_READ_FAILED
    assert run.json()["details"]["reason"] == reason
    assert path.read_bytes() == raw


def test_save_of_an_error_output_is_a_usage_error(tmp_path: Path) -> None:
    error = {"output_type": "error", "ename": "ValueError", "evalue": "x", "traceback": []}
    path = write_notebook(tmp_path / "nb.ipynb", [code_cell([error])])

    run = run_cli("-j", "notebook", "output", path, "--cell", "0", "--output", "0",
                  "--save", tmp_path / "out.png")  # fmt: skip

    assert run.exit_code == 2 and run.json()["code"] == ErrorCode.USAGE_ERROR
    assert "a error" not in run.json()["message"]  # used to say "a error output"
    assert not (tmp_path / "out.png").exists()


@pytest.mark.kernel
def test_output_show_lists_every_manifest_the_shell_expands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for letter in "ab":  # two runs, each saving its long output
        assert run_cli("exec", "--code", f"print({letter!r} * 5000)").exit_code == 0
    manifests = sorted(tmp_path.glob(".j-cli/outputs/*/manifest.json"))
    assert len(manifests) == 2

    listed = run_cli("-j", "output", "show", *manifests)
    text = run_cli("output", "show", *manifests)
    one = run_cli("-j", "output", "show", manifests[0], "--output", "0")
    ambiguous = run_cli("-j", "output", "show", *manifests, "--output", "0")

    assert listed.exit_code == 0
    runs = listed.json()["runs"]
    assert [run["source"]["path"] for run in runs] == [str(m) for m in manifests]
    assert text.exit_code == 0 and text.stdout.count("read one:") == 2
    assert one.exit_code == 0 and one.json()["stream"]["data"].startswith("a")
    assert ambiguous.exit_code == 2 and ambiguous.json()["code"] == ErrorCode.USAGE_ERROR
