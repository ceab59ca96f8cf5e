"""``j-cli run`` and the reads on a jupytext pair (issue 27 items 3, 4 and 7): the notebook
``run script.py`` creates is a real pair; a pair whose sides disagree is refused before any
cell runs, and every read says it is out of sync and which side it shows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from jcli_helpers import run_cli

from jupyter_jcli.errors import ErrorCode

SCRIPT = "# %%\nx = 1\nprint(x)\n\n# %%\nprint(x + 1)\n"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def _jupytext(*args: str | Path) -> int:
    """The real jupytext command line, as a user runs it."""
    from jupytext.cli import jupytext

    code: int = jupytext(["--quiet", *map(str, args)])
    return code


def _edit_first_cell(ipynb: Path, source: str) -> None:
    """A person edits the notebook with a tool that ignores the pairing (it gets newer)."""
    notebook = json.loads(ipynb.read_text("utf-8"))
    notebook["cells"][0]["source"] = source
    ipynb.write_text(json.dumps(notebook, indent=1), "utf-8")
    later = os.stat(ipynb.with_suffix(".py")).st_mtime_ns + 1_000_000_000
    os.utime(ipynb, ns=(later, later))


def test_the_notebook_run_creates_for_a_script_is_a_jupytext_pair(here: Path) -> None:
    """Item 4: formats set in the new notebook, the script left as it was, and jupytext's
    own --sync finds the pair (it said "not a paired notebook")."""
    from jupyter_jcli.workbench._script import PAIR_FORMATS, prepare_script

    script = here / "s.py"
    script.write_text(SCRIPT, "utf-8")
    plan = prepare_script(script)
    assert plan.created and plan.formats == PAIR_FORMATS
    ipynb = here / "s.ipynb"
    assert json.loads(ipynb.read_text("utf-8"))["metadata"]["jupytext"]["formats"] == PAIR_FORMATS
    assert script.read_text("utf-8") == SCRIPT
    _edit_first_cell(ipynb, "x = 10\nprint(x)")
    assert _jupytext("--sync", ipynb) == 0
    assert "x = 10" in script.read_text("utf-8")


@pytest.mark.kernel
def test_a_run_on_an_out_of_sync_pair_is_refused_before_any_cell_runs(here: Path) -> None:
    """Item 3: the reported sequence. Nothing runs (no cell printed, no kernel output
    saved), nothing is written, and the refusal names which side changed."""
    script = here / "s.py"
    script.write_text(SCRIPT, "utf-8")
    first = run_cli("-j", "run", script)
    assert first.exit_code == 0, first.stderr
    ipynb = here / "s.ipynb"
    assert first.json()["created_notebook"] == {  # item 4: the run says it made a pair
        "path": str(ipynb),
        "paired_with": str(script),
        "formats": "ipynb,py:percent",
    }
    _edit_first_cell(ipynb, "x = 10\nprint(x)")
    before = (ipynb.read_bytes(), script.read_bytes())
    refused = run_cli("-j", "run", script)
    assert refused.exit_code == 1
    error = refused.json()
    assert error["code"] == ErrorCode.PAIR_OUT_OF_SYNC
    assert error["details"]["newer"] == "notebook"
    assert "running" not in refused.stderr  # no cell started
    assert (ipynb.read_bytes(), script.read_bytes()) == before
    # the same through the notebook side
    through_ipynb = run_cli("-j", "run", ipynb)
    assert through_ipynb.json()["code"] == ErrorCode.PAIR_OUT_OF_SYNC
    assert (ipynb.read_bytes(), script.read_bytes()) == before


@pytest.mark.kernel
def test_editing_the_script_then_running_it_takes_the_edit(here: Path) -> None:
    """The everyday loop stays open: after a run wrote the pair, an edit of the script
    alone is taken (the notebook is unchanged since), and the outputs follow it."""
    script = here / "s.py"
    script.write_text(SCRIPT, "utf-8")
    assert run_cli("-j", "run", script).exit_code == 0
    script.write_text(SCRIPT.replace("x + 1", "x + 41"), "utf-8")
    later = os.stat(here / "s.ipynb").st_mtime_ns + 1_000_000_000
    os.utime(script, ns=(later, later))
    again = run_cli("-j", "run", script)
    assert again.exit_code == 0, again.stdout
    saved = json.loads((here / "s.ipynb").read_text("utf-8"))["cells"]
    assert "".join(saved[1]["source"]) == "print(x + 41)"
    assert saved[1]["outputs"][0]["text"] == ["42\n"]


def test_every_read_of_an_out_of_sync_pair_says_so(here: Path) -> None:
    """Item 7: overview and read, on either side, as JSON and as text."""
    from jupyter_jcli.workbench._script import prepare_script

    script = here / "s.py"
    script.write_text(SCRIPT, "utf-8")
    prepare_script(script)
    ipynb = here / "s.ipynb"
    _edit_first_cell(ipynb, "x = 10\nprint(x)")
    for path in (script, ipynb):
        for command in ("overview", "read", "cells", "show"):
            document = run_cli("-j", "notebook", command, path).json()
            # overview and read show the pair's model (the text file's inputs); cells and
            # show list the cells of the file named
            listing = command in ("cells", "show")
            facts = (document["source"] if listing else document)["pair_out_of_sync"]
            shown = "notebook" if listing and path == ipynb else "text"
            assert (facts["shown"], facts["newer"], facts["writes"]) == (
                shown,
                "notebook",
                "refused",
            )
            text = run_cli("notebook", command, path)
            assert text.exit_code == 0
            assert "pair out of sync" in text.stdout
    assert _jupytext("--sync", ipynb) == 0
    assert "pair_out_of_sync" not in run_cli("-j", "notebook", "overview", ipynb).json()


@pytest.mark.parametrize(
    "command",
    [("graph",), ("search", "print"), ("summarize",)],
    ids=["graph", "search", "summarize"],
)
def test_graph_search_and_summarize_of_an_out_of_sync_pair_say_so(
    here: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    """The trial's leftover of item 7: these reads showed the .py's cells without a word."""
    from jupyter_jcli.workbench._script import prepare_script

    monkeypatch.setenv("JUPYTER_MCP_DISABLE_SUMMARIES", "1")
    script = here / "s.py"
    script.write_text(SCRIPT, "utf-8")
    prepare_script(script)
    ipynb = here / "s.ipynb"
    _edit_first_cell(ipynb, "x = 10\nprint(x)")
    before = (ipynb.read_bytes(), script.read_bytes())
    for path in (script, ipynb):
        document = run_cli("-j", "notebook", command[0], path, *command[1:]).json()
        facts = document["pair_out_of_sync"]
        assert (facts["shown"], facts["newer"], facts["writes"]) == ("text", "notebook", "refused")
        text = run_cli("notebook", command[0], path, *command[1:])
        assert text.exit_code == 0
        assert "pair out of sync" in text.stdout + text.stderr
    assert (ipynb.read_bytes(), script.read_bytes()) == before
    assert _jupytext("--sync", ipynb) == 0
    assert "pair_out_of_sync" not in run_cli("-j", "notebook", command[0], ipynb).json()
