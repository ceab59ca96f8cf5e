"""The bounded summary of a saved inline run: the budget sizes a cut stream's head and tail
(not a fixed handful of lines), the cut and the notice name where the rest is, and an inline
answer's summary holds every output whole."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
from wb_helpers import make_notebook

from jupyter_jcli.runs import INLINE_TEXT_LIMIT
from jupyter_jcli.workbench import SUMMARY_BUDGET, Workbench
from jupyter_jcli.workbench._inline import INLINE_SUMMARY_BUDGET

pytestmark = pytest.mark.anyio

WAIT = 30.0


async def test_a_saved_ten_thousand_line_run_fills_its_summary_budget_head_and_tail(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, ["x = 1"])
    code = "for i in range(10_000):\n    print('line', i)"
    with anyio.fail_after(WAIT):
        outcome = await wb.execute_code(path, code, cwd=work)
    assert not outcome.inline and outcome.saved is not None and outcome.summary is not None
    text = outcome.summary.text
    shown = re.findall(r"^line (\d+)$", text, re.MULTILINE)
    head = [int(n) for n in shown if int(n) < 5_000]
    tail = [int(n) for n in shown if int(n) >= 5_000]
    assert head == list(range(len(head))) and tail == list(range(10_000 - len(tail), 10_000))
    assert len(head) > 50 and len(tail) > 50  # sized by the budget, not 5 + 5 lines
    assert SUMMARY_BUDGET * 0.8 <= len(text) <= SUMMARY_BUDGET
    assert outcome.summary.budget == SUMMARY_BUDGET and outcome.summary.truncated
    assert f"j-cli output show {outcome.saved.manifest_path} --output 0 --offset" in text
    assert outcome.notice is not None and str(outcome.saved.manifest_path) in outcome.notice


async def test_an_inline_answer_holds_every_output_whole_within_its_stated_budget(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, ["x = 1"])
    line = "y" * 99
    code = f"for i in range({INLINE_TEXT_LIMIT // 100}):\n    print({line!r})"
    with anyio.fail_after(WAIT):
        outcome = await wb.execute_code(path, code, cwd=work)
    assert outcome.inline and outcome.summary is not None
    assert outcome.summary.budget == INLINE_SUMMARY_BUDGET and not outcome.summary.truncated
    assert outcome.summary.text.count(line) == INLINE_TEXT_LIMIT // 100
