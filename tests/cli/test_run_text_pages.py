"""The overview closing ``j-cli run`` in text is the first page of ``j-cli notebook overview``:
the same table, so the next page its last line names continues the same columns."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from jcli_helpers import never_run_notebook, run_cli


def _header(lines: list[str]) -> list[str]:
    return next(line for line in lines if line.startswith("#  ")).split()


@pytest.mark.kernel
def test_the_next_page_named_after_a_run_shows_the_columns_of_the_runs_closing_table(
    tmp_path: Path,
) -> None:
    path = never_run_notebook(tmp_path, ["x = 1"])
    document = json.loads(path.read_text(encoding="utf-8"))
    document["cells"] += [
        {"cell_type": "markdown", "id": f"m{i}", "metadata": {}, "source": f"note {i}"}
        for i in range(120)
    ]
    path.write_text(json.dumps(document), encoding="utf-8")
    run = run_cli("run", path)
    assert run.exit_code == 0, run.stderr
    lines = run.stdout.splitlines()
    more = next(line for line in lines if line.startswith("… 21 more cells: "))
    following = run_cli(*shlex.split(more.split(": ", 1)[1])[1:])
    assert following.exit_code == 0, following.stderr
    closing = lines[lines.index(f"{path}: 121 cells (1 never_run)") :]
    assert _header(closing) == _header(following.stdout.splitlines())
    assert _header(closing)[:5] == ["#", "name", "type", "rev", "status"]
