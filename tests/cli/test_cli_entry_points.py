"""Ways in: ``python -m jupyter_jcli``, ``main`` as a click command (CliRunner, embedding),
and the console script's exit statuses (issue 8, rows 10 and 11)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from jcli_helpers import EXAMPLE, code_cell, run_cli, write_notebook

from jupyter_jcli.cli import EXIT_ERROR, EXIT_OK, EXIT_USAGE, main, run
from jupyter_jcli.errors import ErrorCode

TIMEOUT = 60
STREAM = {"output_type": "stream", "name": "stderr", "text": ["first line\n", "second line\n"]}


def _stream_notebook(tmp_path: Path) -> Path:
    return write_notebook(tmp_path / "stream.ipynb", [code_cell([STREAM])])


def _module(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_jcli", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        check=False,
        cwd=cwd,
    )


def test_python_dash_m_jupyter_jcli_runs_the_cli_with_its_exit_statuses(tmp_path: Path) -> None:
    read = _module("-j", "notebook", "output", EXAMPLE, "--cell", "18", "--output", "0")
    assert (read.returncode, read.stderr) == (EXIT_OK, "")
    assert json.loads(read.stdout)["selected"]["mime_type"] == "text/html"
    missing = _module("-j", "notebook", "outputs", tmp_path / "nope.ipynb", "--cell", "0")
    assert (missing.returncode, json.loads(missing.stdout)["code"]) == (
        EXIT_ERROR,
        ErrorCode.FILE_NOT_FOUND,
    )
    usage = _module("-j", "notebook", "outputs", EXAMPLE, "--bogus")
    assert (usage.returncode, json.loads(usage.stdout)["code"]) == (
        EXIT_USAGE,
        ErrorCode.USAGE_ERROR,
    )


def test_python_dash_m_help_names_the_program_j_cli() -> None:
    done = _module("-j", "--help")
    assert done.returncode == EXIT_OK
    document = json.loads(done.stdout)
    assert document["command"] == "j-cli"
    assert document["help"].startswith("Usage: j-cli ")


def test_main_is_a_click_command() -> None:
    assert isinstance(main, click.Group)
    assert main.name == "j-cli"
    assert "notebook" in main.list_commands(click.Context(main))  # loaded on demand
    assert isinstance(main.get_command(click.Context(main), "notebook"), click.Group)


@pytest.mark.parametrize(
    ("args", "exit_code", "code"),
    [
        (["--json", "notebook", "output", "{nb}", "--cell", "0", "--output", "0"], 0, None),
        (
            ["-j", "notebook", "output", "{nb}", "--cell", "0", "--output", "5"],
            1,
            "OUTPUT_NOT_FOUND",
        ),
        (["-j", "notebook", "output", "{nb}", "--cell", "0"], 2, "USAGE_ERROR"),
        (["--json", "no-such-command"], 2, "USAGE_ERROR"),
    ],
)
def test_clirunner_invokes_main_with_the_console_scripts_exit_codes_and_json(
    tmp_path: Path, args: list[str], exit_code: int, code: str | None
) -> None:
    nb = _stream_notebook(tmp_path)
    result = CliRunner().invoke(main, [arg.replace("{nb}", str(nb)) for arg in args])
    assert result.exit_code == exit_code, result.output
    document: dict[str, Any] = json.loads(result.output)
    assert document["status"] == ("ok" if code is None else "error")
    assert document.get("code") == code


def test_clirunner_reads_a_stream_with_an_adapters_repeated_capability_list(
    tmp_path: Path,
) -> None:
    nb = _stream_notebook(tmp_path)
    supported = [
        arg
        for mime in ("image/png", "text/html", "text/plain")
        for arg in ("--supported-mime", mime)
    ]
    result = CliRunner().invoke(
        main, ["--json", "notebook", "output", str(nb), "--cell", "0", "--output", "0", *supported]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["stream"]["data"] == "first line\nsecond line\n"
    assert result.output == json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def test_calling_main_exits_with_the_status_and_run_returns_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["-j", "notebook", "outputs", "/no/such.ipynb", "--cell", "0"])
    assert caught.value.code == EXIT_ERROR
    assert json.loads(capsys.readouterr().out)["code"] == ErrorCode.FILE_NOT_FOUND
    assert run(["-j", "--version"]) == EXIT_OK
    assert main.main(["-j", "--version"], standalone_mode=False) == EXIT_OK


def test_main_embeds_in_another_click_group() -> None:
    @click.group()
    def tools() -> None:
        """A host's own command line."""

    tools.add_command(main)
    result = CliRunner().invoke(
        tools, ["j-cli", "notebook", "outputs", str(EXAMPLE), "--cell", "18"]
    )
    assert result.exit_code == 0, result.output
    assert "1 output" in result.output


@pytest.mark.parametrize(
    "late",
    [
        ["notebook", "outputs", str(EXAMPLE), "--cell", "18", "-j"],
        ["notebook", "--json", "outputs", str(EXAMPLE), "--cell", "18"],
        ["notebook", "outputs", "-j", str(EXAMPLE), "--cell", "no-such-cell"],
    ],
    ids=["after-the-command", "after-the-group", "an-error"],
)
def test_json_after_the_command_name_answers_as_before_it(late: list[str]) -> None:
    first = run_cli("-j", *(word for word in late if word not in ("-j", "--json")))
    answered = run_cli(*late)
    assert (answered.exit_code, answered.stdout) == (first.exit_code, first.stdout)
    assert answered.stdout.startswith('{"schema_version":1')


def test_a_value_spelled_like_the_json_switch_stays_the_options_value() -> None:
    answered = run_cli("-j", "notebook", "outputs", str(EXAMPLE), "--cell", "-j")
    assert answered.exit_code == EXIT_ERROR
    assert answered.json()["code"] == ErrorCode.CELL_NOT_FOUND
