"""What ``j-cli run`` shows while it runs (``cli._run_live.LiveView``), without a kernel."""

from __future__ import annotations

import anyio
import pytest

from jupyter_jcli.cli._run_live import LIVE_LINES, LiveView


def stream(text: str, name: str = "stdout") -> dict[str, str]:
    return {"output_type": "stream", "name": name, "text": text}


def test_on_a_terminal_the_run_shows_the_cell_its_streams_and_elapsed_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    view = LiveView(live=True)
    anyio.run(view.progress, 0.0, 2.0, "running load (1/2)")
    view.output(stream("loading "))
    view.output(stream("done\nwarn\n", "stderr"))
    anyio.run(view.progress, 0.5, 2.0, "running load (5 s)")
    view.output({"output_type": "display_data", "data": {"text/plain": "x"}})
    anyio.run(view.progress, 1.0, 2.0, "running fit (2/2)")
    view.finish()
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "[0/2] running load (1/2)"
    assert err[1:3] == ["    | ! done", "    | ! warn"]
    assert err[3].startswith("    | ... still running (")
    assert err[4:6] == ["    | loading ", "[1/2] running fit (2/2)"]


def test_streamed_output_is_bounded_per_cell_and_the_rest_counted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    view = LiveView(live=True)
    anyio.run(view.progress, 0.0, 1.0, "running loop (1/1)")
    view.output(stream("".join(f"line {i}\n" for i in range(LIVE_LINES + 25))))
    view.finish()
    err = capsys.readouterr().err.splitlines()
    shown = [line for line in err if line.startswith("    | line ")]
    assert len(shown) == LIVE_LINES
    assert err[-1] == "    | ... 25 more lines (saved in the notebook)"


def test_off_a_terminal_the_run_shows_one_line_per_cell(
    capsys: pytest.CaptureFixture[str],
) -> None:
    view = LiveView(live=False)
    anyio.run(view.progress, 0.0, 1.0, "running a (1/1)")
    view.output(stream("printed\n"))
    anyio.run(view.progress, 0.5, 1.0, "running a (5 s)")
    anyio.run(view.progress, 1.0, 1.0, "done: 1 cells")
    view.finish()
    assert capsys.readouterr().err.splitlines() == ["[0/1] running a (1/1)", "[1/1] done: 1 cells"]
