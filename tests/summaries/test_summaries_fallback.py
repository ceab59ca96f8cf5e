"""Deterministic fallback summaries: every real fixture cell, and the rules case by case."""

from __future__ import annotations

import base64
import struct
from pathlib import Path
from typing import Any

import pytest
from fake_messages_api import NOTEBOOKS

from jupyter_jcli.notebook.io import read_notebook
from jupyter_jcli.summaries import (
    DESCRIPTION_MAX,
    FALLBACK_MARK,
    OUTPUT_SUMMARY_MAX,
    TLDR_MAX,
    Summary,
    fallback_summary,
    summarize_cells,
    summary_key,
)

FIXTURES = sorted(NOTEBOOKS.glob("*.ipynb"))


def _check_bounds(summary: Summary) -> None:
    assert summary.source == "fallback"
    for text, limit in (
        (summary.tldr, TLDR_MAX),
        (summary.description, DESCRIPTION_MAX),
        (summary.output_summary, OUTPUT_SUMMARY_MAX),
    ):
        assert text.startswith(FALLBACK_MARK)
        assert len(FALLBACK_MARK) < len(text) <= limit
        assert "\n" not in text and "\r" not in text


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_every_fixture_cell_gets_a_bounded_deterministic_fallback(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_MCP_DISABLE_SUMMARIES", "1")
    cells = read_notebook(path)["cells"]
    first = summarize_cells(cells)
    second = summarize_cells(read_notebook(path)["cells"])
    assert first == second
    assert set(first) == {summary_key(cell) for cell in cells}
    for cell in cells:
        summary = first[summary_key(cell)]
        _check_bounds(summary)
        assert summary.fallback_reason in ("disabled", "empty_cell")
        direct = fallback_summary(
            cell, reason="disabled", detail="JUPYTER_MCP_DISABLE_SUMMARIES is set"
        )
        if summary.fallback_reason == "disabled":
            assert direct == summary


def test_without_credentials_every_fixture_cell_falls_back(api: Any) -> None:
    cells = [cell for path in FIXTURES for cell in read_notebook(path)["cells"]]
    result = summarize_cells(cells)
    assert api.requests == []
    reasons = {summary.fallback_reason for summary in result.values()}
    assert reasons <= {"no_credentials", "empty_cell"} and "no_credentials" in reasons
    for summary in result.values():
        _check_bounds(summary)


def _code(source: str, outputs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": outputs or []}


def _summary(cell: dict[str, Any]) -> Summary:
    return fallback_summary(cell, reason="disabled")


def test_a_code_tldr_is_the_leading_comment_else_the_first_statement() -> None:
    commented = _summary(_code("#!/usr/bin/env python\n# %%\n# Load the data\ndf = load()"))
    assert commented.tldr == FALLBACK_MARK + "Load the data"
    plain = _summary(_code("\n\nimport numpy as np\n# later comment"))
    assert plain.tldr == FALLBACK_MARK + "import numpy as np"
    long = _summary(_code("x = " + "1 + " * 100 + "1"))
    assert len(long.tldr) == TLDR_MAX and long.tldr.endswith("…")


def test_a_code_description_lists_imports_definitions_assignments_and_calls() -> None:
    source = (
        "import numpy as np\n"
        "from sklearn.cluster import KMeans\n"
        "def fit(X):\n    return KMeans(4).fit(X)\n"
        "class Model:\n    pass\n"
        "X, y = np.random.rand(10, 2), None\n"
        "df['z'] = 1\n"
        "total += 1\n"
        "for i in range(3):\n    print(i)\n"
    )
    description = _summary(_code(source)).description
    assert description == (
        FALLBACK_MARK + "Code cell, 11 lines. Imports numpy, sklearn.cluster.KMeans. "
        "Defines fit(), class Model. Assigns X, y, df[…], total, i. "
        "Calls KMeans, np.random.rand, range, print."
    )


def test_magics_and_shell_lines_do_not_hide_the_python() -> None:
    source = "%matplotlib inline\n!pip install numpy\nfiles = !ls\nnp.sort?\nimport pandas as pd"
    description = _summary(_code(source)).description
    assert "Imports pandas." in description
    assert "Magics %matplotlib, !pip" in description
    cell_magic = _summary(_code("%%timeit\nsorted(L)"))
    assert cell_magic.tldr == FALLBACK_MARK + "%%timeit: sorted(L)"
    assert "Calls sorted." in cell_magic.description and "%%timeit" in cell_magic.description


def test_code_that_is_not_python_is_described_by_its_lines() -> None:
    summary = _summary(_code("%%R\nlibrary(ggplot2)\nx <- c(1, 2"))
    assert summary.tldr == FALLBACK_MARK + "%%R: library(ggplot2)"
    assert "Not parseable as Python" in summary.description
    assert "%%R" in summary.description


def test_markdown_uses_its_heading_or_first_sentence() -> None:
    heading = _summary({"cell_type": "markdown", "source": "<img src='x.png'/>\n## 2. *Data* ##"})
    assert heading.tldr == FALLBACK_MARK + "2. Data"
    assert heading.output_summary == FALLBACK_MARK + "No outputs (markdown cell)."
    text = _summary(
        {"cell_type": "markdown", "source": "See [the docs](http://x). Then run it.\n$x^2$"}
    )
    assert text.tldr == FALLBACK_MARK + "See the docs."
    assert "1 link" in text.description and "math" in text.description


def test_raw_cells_report_lines_and_format() -> None:
    summary = _summary(
        {"cell_type": "raw", "metadata": {"raw_mimetype": "text/x-rst"}, "source": "\n.. note::\n"}
    )
    assert summary.tldr == FALLBACK_MARK + ".. note::"
    assert "Format text/x-rst." in summary.description


def _png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR"
    return base64.b64encode(header + struct.pack(">II", width, height) + b"\x08\x06" * 20).decode()


def test_the_output_summary_gives_types_sizes_and_previews() -> None:
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": ["\x1b[1mEpoch 1\x1b[0m\n", "ok\n"]},
        {"output_type": "display_data", "data": {"image/png": _png(640, 480)}, "metadata": {}},
        {"output_type": "execute_result", "data": {"text/html": "<table><tr></tr></table>"}},
        {"output_type": "error", "ename": "ValueError", "evalue": "bad shape", "traceback": []},
        {"output_type": "stream", "name": "stderr", "text": "warn"},
    ]
    text = _summary(_code("run()", outputs)).output_summary
    assert text.startswith(FALLBACK_MARK + "5 outputs: stdout: 2 lines")
    assert "“Epoch 1”" in text
    assert "a PNG image (640x480 px" in text
    assert "result: an HTML table (1 rows shown)" in text
    assert "an error ValueError: bad shape" in text
    assert text.endswith("; and 1 more.")
    assert _summary(_code("x = 1")).output_summary == FALLBACK_MARK + "No outputs."


def test_malformed_outputs_are_described_not_raised() -> None:
    outputs: list[Any] = ["junk", {"output_type": "display_data", "data": 5}, {"foo": 1}]
    text = _summary(_code("x", outputs)).output_summary
    assert "a malformed output" in text and "a display without data" in text
    assert "an output of type None" in text


def test_fallbacks_carry_their_reason_and_detail() -> None:
    summary = fallback_summary(_code("x = 1"), reason="timeout", detail="APITimeoutError")
    assert (summary.fallback_reason, summary.fallback_detail) == ("timeout", "APITimeoutError")
    assert summary.to_dict()["fallback_reason"] == "timeout"
    assert summary.to_dict()["key"] == summary_key(_code("x = 1"))
