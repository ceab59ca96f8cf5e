"""Lone surrogates in a cell reach every document command's text and JSON output as U+FFFD."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jcli_helpers import code_cell, run_cli, write_notebook

STREAM = {"output_type": "stream", "name": "stdout", "text": "out \ud800\n"}


@pytest.mark.parametrize(
    ("command", "shows_text"),
    [
        (["notebook", "overview"], True),
        (["notebook", "read"], True),
        (["notebook", "graph", "--format", "json"], False),
        (["notebook", "search", "{nb}", "x"], True),
    ],
)
def test_document_commands_replace_lone_surrogates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], shows_text: bool
) -> None:
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(tmp_path / "cache"))
    nb = write_notebook(tmp_path / "s.ipynb", [code_cell([STREAM], source="x = 1  # \udfff")])
    args = [arg.replace("{nb}", str(nb)) for arg in command]
    if "{nb}" not in command:
        args.append(str(nb))

    text = run_cli(*args)
    doc = run_cli("-j", *args)

    assert text.exit_code == 0, text.stderr
    assert doc.exit_code == 0, doc.stdout
    assert "\\udfff" not in doc.stdout and "\\ud800" not in doc.stdout
    assert ("\ufffd" in text.stdout + json.dumps(doc.json(), ensure_ascii=False)) is shows_text
    if command[1] in {"overview", "graph"}:  # the surrogate did not stop the analysis
        assert '"defines":["x"]' in doc.stdout
