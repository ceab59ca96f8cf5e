"""Error outputs: ename and evalue, the frames that matter, no control sequences."""

from __future__ import annotations

import linecache
import sys
from typing import Any

import pytest
from IPython.core.ultratb import AutoFormattedTB

from jupyter_jcli.condense import condense_outputs


def _deep_chain(depth: int) -> Any:
    """``depth`` distinct functions calling each other (no recursion for tracebacks to fold)."""
    source = "def f0():\n    return {}['missing']\n" + "".join(
        f"def f{i}():\n    return f{i - 1}()\n" for i in range(1, depth)
    )
    filename = f"/srv/lib/python3.11/site-packages/deep/chain{depth}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[f"f{depth - 1}"]


def _recurse(depth: int) -> None:
    _deep_chain(depth)()


def _chained() -> None:
    try:
        _recurse(3)
    except KeyError as err:
        raise ValueError("could not look it up") from err


def _error_output(function: Any, mode: str) -> dict[str, Any]:
    """A real IPython colour traceback, as ipykernel stores it in an error output."""
    try:
        function()
    except Exception:
        etype, value, tb = sys.exc_info()
        assert etype is not None and value is not None
        formatter = AutoFormattedTB(mode=mode, theme_name="linux")
        traceback = formatter.structured_traceback(etype, value, tb)
        return {
            "output_type": "error",
            "ename": etype.__name__,
            "evalue": str(value),
            "traceback": traceback,
        }
    raise AssertionError("the function did not raise")


@pytest.mark.parametrize("mode", ["Context", "Plain", "Verbose"])
def test_ipython_colour_tracebacks_lose_every_escape(mode: str) -> None:
    output = _error_output(lambda: _recurse(30), mode)
    assert any("\x1b[" in entry for entry in output["traceback"])
    result = condense_outputs([output], cell_index=5)
    (part,) = result.parts
    assert part.kind == "error"
    assert "\x1b" not in result.text
    assert part.text.startswith("KeyError: 'missing'")
    assert part.omitted_frames > 20
    assert f"[… {part.omitted_frames} frames omitted …]" in part.text


def test_the_first_frame_and_the_raising_frame_are_kept() -> None:
    output = _error_output(lambda: _recurse(30), "Context")
    text = condense_outputs([output]).parts[0].text
    assert "_error_output" in text.split("\n")[1]  # the first frame: where the call came in
    assert "return {}['missing']" in text  # the last frame: where it was raised


def test_a_chained_exception_is_summarised_by_its_final_line() -> None:
    output = _error_output(_chained, "Context")
    text = condense_outputs([output]).parts[0].text
    lines = text.split("\n")
    assert lines[0] == "ValueError: could not look it up"
    assert lines[1].startswith("[chained from an earlier exception: KeyError: 'missing'")
    assert 'raise ValueError("could not look it up") from err' in text


def test_a_plain_python_traceback_in_one_string_is_split_into_frames() -> None:
    import traceback

    try:
        _recurse(20)
    except KeyError as err:
        joined = "".join(traceback.format_exception(err))
    output = {
        "output_type": "error",
        "ename": "KeyError",
        "evalue": "'missing'",
        "traceback": [joined],
    }
    part = condense_outputs([output]).parts[0]
    assert part.omitted_frames >= 15
    assert 'File "' in part.text


def test_a_huge_error_value_is_cut_to_the_budget() -> None:
    output = {
        "output_type": "error",
        "ename": "ValueError",
        "evalue": "bad value " + "x" * 200_000,
        "traceback": ["\x1b[31mValueError\x1b[0m: bad value " + "x" * 200_000],
    }
    result = condense_outputs([output], budget=1_000, cell_index=1)
    assert len(result.text) <= 1_000
    assert result.truncated and "read_notebook_output cell_index=1 output_index=0" in result.text


def test_a_malformed_error_output_is_shown_not_raised() -> None:
    result = condense_outputs([{"output_type": "error", "traceback": "not a list"}])
    assert result.parts[0].kind == "error" and result.parts[0].text == "Error"
