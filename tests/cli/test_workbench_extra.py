"""``j-cli notebook create|search|summarize``: JSON documents, text output, errors, exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jcli_helpers import NOTEBOOKS, run_cli

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV

_CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshots under tmp_path; no summary credentials from the machine."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    for name in _CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "no-anthropic-config"))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def _copy(name: str, folder: Path) -> Path:
    target = folder / name
    shutil.copyfile(NOTEBOOKS / name, target)
    return target


def test_create_writes_a_notebook_with_the_given_code_cells(work: Path) -> None:
    path = work / "new.ipynb"

    run = run_cli(
        "-j", "notebook", "create", path, "--cell-source", "import math",
        "--cell-source", "r = math.sqrt(2)",
    )  # fmt: skip

    assert run.exit_code == 0, run.stdout
    document = run.json()
    assert document["operation"] == "create_notebook"
    assert document["kernelspec"]["name"] == "python3"
    views = Document.load(path).cells
    assert [(c["name"], c["rev"]) for c in document["cells"]] == [(v.name, v.rev) for v in views]
    assert [v.source for v in views] == ["import math", "r = math.sqrt(2)"]


def test_create_refuses_an_existing_file_with_exit_1(work: Path) -> None:
    path = _copy("02.08-Sorting.ipynb", work)
    before = path.read_bytes()

    run = run_cli("-j", "notebook", "create", path)

    assert run.exit_code == 1
    assert run.json()["code"] == ErrorCode.FILE_EXISTS
    assert path.read_bytes() == before


def test_create_with_an_unknown_kernel_lists_the_installed_ones(work: Path) -> None:
    run = run_cli("-j", "notebook", "create", work / "k.ipynb", "--kernel", "nope-kernel")

    assert run.exit_code == 1
    document = run.json()
    assert document["code"] == ErrorCode.KERNELSPEC_NOT_FOUND
    assert "python3" in document["details"]["installed"]


def test_create_text_mode_names_the_file_and_its_cells(work: Path) -> None:
    run = run_cli("notebook", "create", work / "t.ipynb", "--cell-source", "import os")

    assert run.exit_code == 0
    assert run.stdout.splitlines()[0].startswith(f"created {work / 't.ipynb'} (kernelspec python3")
    assert "import-os · code · rev" in run.stdout


def test_search_json_lists_matches_in_error_outputs(work: Path) -> None:
    path = _copy("01.06-Errors-and-Debugging.ipynb", work)

    run = run_cli("-j", "notebook", "search", path, "ZeroDivisionError", "--in", "outputs")

    assert run.exit_code == 0
    document = run.json()
    assert document["fields"] == ["outputs"]
    assert document["match_count"] == len(document["matches"]) >= 4
    assert {m["field"] for m in document["matches"]} == {"outputs"}


def test_search_regex_and_max_results_bound_the_answer(work: Path) -> None:
    path = _copy("02.08-Sorting.ipynb", work)

    run = run_cli(
        "-j", "notebook", "search", path, r"np\.\w*sort", "--regex", "--max-results", "2",
    )  # fmt: skip

    document = run.json()
    assert document["regex"] is True and document["truncated"] is True
    assert len(document["matches"]) == 2


def test_search_text_mode_shows_where_each_match_is(work: Path) -> None:
    path = _copy("02.08-Sorting.ipynb", work)

    run = run_cli("notebook", "search", path, "np.argsort(x)", "--in", "sources")

    assert run.exit_code == 0
    lines = run.stdout.splitlines()
    assert "1 matches" in lines[0]
    assert lines[1].startswith("[13] ") and lines[1].endswith("2:5  i = np.argsort(x)")


@pytest.mark.parametrize(
    "arguments",
    [
        ("(unclosed", "--regex"),
        ("x", "--in", "cells"),
        ("x", "--max-results", "0"),
    ],
)
def test_search_usage_errors_exit_2(work: Path, arguments: tuple[str, ...]) -> None:
    path = _copy("02.08-Sorting.ipynb", work)

    run = run_cli("-j", "notebook", "search", path, *arguments)

    assert run.exit_code == 2
    assert run.json()["code"] == ErrorCode.USAGE_ERROR


def test_summarize_without_a_model_prints_marked_fallbacks(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_MCP_DISABLE_SUMMARIES", "1")
    path = _copy("02.08-Sorting.ipynb", work)
    before = path.read_bytes()
    name = Document.load(path).cells[13].name

    run = run_cli("-j", "notebook", "summarize", path, "--cell", name)

    document = run.json()
    assert [c["name"] for c in document["cells"]] == [name]
    assert document["cells"][0]["source"] == "fallback"
    assert document["cells"][0]["summary"]["tldr"].startswith("* ")
    assert document["written"] == []
    assert path.read_bytes() == before

    text = run_cli("notebook", "summarize", path, "--cell", name)
    assert text.exit_code == 0
    assert f"[13] {name} · code" in text.stdout
    assert "fallback: disabled" in text.stdout
    assert "texts starting with * are fallbacks" in text.stdout


def test_summarize_an_unknown_cell_is_cell_not_found(work: Path) -> None:
    path = _copy("02.08-Sorting.ipynb", work)

    run = run_cli("-j", "notebook", "summarize", path, "--cell", "no-such-cell")

    assert run.exit_code == 1
    assert json.loads(run.stdout)["code"] == ErrorCode.CELL_NOT_FOUND
