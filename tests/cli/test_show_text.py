"""``j-cli notebook show`` in text mode on a notebook with JSON-only and malformed outputs,
and on its paired ``.py`` (in-process): what a person reads for each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jcli_helpers import run_cli

OUTPUTS = [
    {"output_type": "display_data", "metadata": {}, "data": {"application/json": {"k": [1, 2]}}},
    {"output_type": "bogus"},
    {"output_type": "execute_result", "execution_count": 1, "metadata": {},
     "data": {"text/plain": "1"}},
]  # fmt: skip


@pytest.fixture
def paired(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    cell = {"cell_type": "code", "id": "a1", "metadata": {}, "execution_count": 1,
            "source": "x = 1", "outputs": OUTPUTS}  # fmt: skip
    document = {
        "cells": [cell],
        "metadata": {"jupytext": {"formats": "ipynb,py:percent"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "nb.ipynb").write_text(json.dumps(document), encoding="utf-8")
    (tmp_path / "nb.py").write_text("# %%\nx = 1\n", encoding="utf-8")
    return tmp_path


def _body(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("── cell 0"))
    end = lines.index("", start)
    return lines[start:end]


def test_json_prints_indented_a_bad_output_names_its_problem_and_a_result_its_count(
    paired: Path,
) -> None:
    result = run_cli("notebook", "show", "nb.ipynb")
    assert result.exit_code == 0, result.stderr
    body = _body(result.stdout)
    assert body[:4] == ["── cell 0 x (code)", "   x = 1", "   [0] display_data application/json:",
                        "   {"]  # fmt: skip
    assert '     "k": [' in body
    assert any(line.startswith("   [1] bogus: problem OUTPUT_TYPE_UNSUPPORTED: ") for line in body)
    assert body[-2:] == ["   [2] execute_result Out[1] text/plain:", "   1"]


def test_the_paired_script_shows_the_notebooks_outputs_and_says_how_it_mapped_them(
    paired: Path,
) -> None:
    result = run_cli("notebook", "show", "nb.py")
    assert result.exit_code == 0, result.stderr
    body = _body(result.stdout)
    notebook, script = paired / "nb.ipynb", paired / "nb.py"
    assert body[2] == (
        f"   (cell 0 of {notebook.resolve()} (id a1), mapped by content from "
        f"{script.resolve()} cell 0)"
    )
    assert body[3:] == _body(run_cli("notebook", "show", "nb.ipynb").stdout)[2:]
