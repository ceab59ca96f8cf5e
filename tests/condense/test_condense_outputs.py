"""condense_outputs end to end: real notebooks, merged streams, budgets and bad input."""

from __future__ import annotations

import base64
import csv
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from jupyter_jcli.condense import DEFAULT_BUDGET, condense_outputs
from jupyter_jcli.errors import ErrorCode, JcliError

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
CORPUS = sorted(p for p in NOTEBOOKS.glob("*.ipynb"))


def _cells(path: Path) -> list[tuple[int, list[Any]]]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = notebook.get("cells")
    if not isinstance(cells, list):  # nbformat 3 keeps cells under worksheets
        cells = [c for w in notebook.get("worksheets", []) for c in w.get("cells", [])]
    return [(i, c["outputs"]) for i, c in enumerate(cells) if c.get("outputs")]


def _stream(name: str, text: str | list[str]) -> dict[str, Any]:
    return {"output_type": "stream", "name": name, "text": text}


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_every_cell_of_the_real_notebooks_condenses_within_bounds(path: Path) -> None:
    for index, outputs in _cells(path):
        for budget in (DEFAULT_BUDGET, 600):
            result = condense_outputs(outputs, budget=budget, cell_index=index)
            assert len(result.text) <= budget
            assert "\x1b" not in result.text
            json.dumps(result.to_dict())
            for image in result.images:
                assert max(image.width, image.height) <= 1024 and len(image.data) <= 300_000
                with Image.open(io.BytesIO(image.data)) as opened:
                    assert opened.size == (image.width, image.height)


def test_a_pandas_table_from_a_real_notebook_becomes_csv_with_the_right_header() -> None:
    cells = dict(_cells(NOTEBOOKS / "03.08-Aggregation-and-Grouping.ipynb"))
    result = condense_outputs(cells[6], cell_index=6)
    (part,) = result.parts
    assert part.kind == "table" and part.mime_type == "text/html"
    rows = list(csv.reader(io.StringIO(part.text.split("\n", 1)[1])))
    assert rows[0] == ["", "method", "number", "orbital_period", "mass", "distance", "year"]
    assert rows[1][:2] == ["0", "Radial Velocity"]


def test_a_plot_from_a_real_notebook_becomes_an_image() -> None:
    path = NOTEBOOKS / "04.03-Errorbars.ipynb"
    index, outputs = next(
        (i, o) for i, o in _cells(path) if any("image/png" in x.get("data", {}) for x in o)
    )
    result = condense_outputs(outputs, cell_index=index)
    assert result.images and result.parts[0].kind == "image"
    stored = base64.b64decode("".join(outputs[0]["data"]["image/png"]))
    with Image.open(io.BytesIO(stored)) as original:
        assert (result.images[0].original_width, result.images[0].original_height) == original.size


def test_real_tracebacks_have_no_escape_characters() -> None:
    errors = [
        (i, o)
        for i, o in _cells(NOTEBOOKS / "01.06-Errors-and-Debugging.ipynb")
        if any(x["output_type"] == "error" for x in o)
    ]
    assert errors
    for index, outputs in errors:
        part = condense_outputs(outputs, cell_index=index).parts[-1]
        assert part.kind == "error" and "\x1b" not in part.text
        assert part.text.startswith("ZeroDivisionError: division by zero")


def test_streams_merge_by_name_in_order_of_first_appearance() -> None:
    outputs = [
        _stream("stdout", "out 1\n"),
        _stream("stderr", "warn 1\n"),
        {
            "output_type": "execute_result",
            "execution_count": 1,
            "metadata": {},
            "data": {"text/plain": "42"},
        },
        _stream("stdout", ["out ", "2\n"]),
        _stream("stderr", "warn 2\n"),
    ]
    result = condense_outputs(outputs, cell_index=0)
    assert [(p.kind, p.name, p.output_indices) for p in result.parts] == [
        ("stream", "stdout", (0, 3)),
        ("stream", "stderr", (1, 4)),
        ("text", None, (2,)),
    ]
    assert result.parts[0].text == "out 1\nout 2\n"
    assert result.parts[1].text == "warn 1\nwarn 2\n"
    assert result.text.startswith("[outputs 0, 3: stdout, merged]\nout 1\nout 2\n")


def test_a_carriage_return_in_one_output_overwrites_the_line_of_the_previous_one() -> None:
    outputs = [
        _stream("stderr", "  0%|          | 0/10"),
        _stream("stderr", "\r100%|##########| 10/10\n"),
    ]
    assert condense_outputs(outputs).parts[0].text == "100%|##########| 10/10\n"


def test_a_tqdm_stream_with_ten_thousand_updates_shows_its_final_line() -> None:
    bar = "".join(
        f"\r{i * 100 // 9999:3d}%|{'#' * (i // 1000)}| {i}/9999 [00:0{i % 10}<00:00]"
        for i in range(10_000)
    )
    result = condense_outputs([_stream("stderr", bar + "\n"), _stream("stdout", "trained\n")])
    assert result.parts[0].text == "100%|#########| 9999/9999 [00:09<00:00]\n"
    assert not result.truncated


def test_a_fifty_megabyte_stream_leaves_room_for_the_other_outputs() -> None:
    big = "".join(f"step {i:08d} loss 0.{i % 997:03d}\n" for i in range(2_000_000))
    assert len(big) >= 50_000_000
    outputs = [
        _stream("stdout", big),
        _stream("stderr", "\x1b[33mUserWarning\x1b[0m: careful\n"),
        {
            "output_type": "execute_result",
            "execution_count": 2,
            "metadata": {},
            "data": {"text/plain": "'done'"},
        },
    ]
    result = condense_outputs(outputs, budget=3_000, cell_index=8)
    assert len(result.text) <= 3_000
    stdout, stderr, value = result.parts
    assert stderr.text == "UserWarning: careful\n" and value.text == "'done'"
    assert stdout.truncated and stdout.omitted_characters > 49_000_000
    assert "read_notebook_output cell_index=8 output_index=0 offset=" in stdout.text
    assert stdout.text.startswith("step 00000000 loss 0.000\n")
    assert stdout.text.endswith(f"step 01999999 loss 0.{1_999_999 % 997:03d}\n")


def test_a_scikit_learn_estimator_shows_its_repr_not_its_parameter_documentation() -> None:
    outputs = json.loads(
        (Path(__file__).parents[1] / "fixtures/outputs/sklearn_estimator.json").read_text()
    )
    result = condense_outputs(outputs, cell_index=7)
    (part,) = result.parts
    assert part.kind == "text" and part.mime_type == "text/plain"
    assert (
        result.text == "[output 0: execute_result, text/plain (text/html too)]\nLinearRegression()"
    )


def test_a_bundle_with_an_html_table_and_plain_text_shows_the_table_only() -> None:
    html = (
        "<table><thead><tr><th></th><th>x</th></tr></thead>"
        "<tbody><tr><th>0</th><td>1</td></tr></tbody></table>"
    )
    output = {
        "output_type": "execute_result",
        "execution_count": 3,
        "metadata": {},
        "data": {"text/html": html, "text/plain": "   x\n0  1"},
    }
    result = condense_outputs([output])
    assert result.parts[0].kind == "table"
    assert "0  1" not in result.text and ",x\n0,1" in result.text


@pytest.mark.parametrize(
    ("data", "kind", "mime", "shown"),
    [
        (
            {"text/markdown": "# Title", "text/plain": "<IPython.core.display.Markdown object>"},
            "text",
            "text/markdown",
            "# Title",
        ),
        ({"text/latex": "$x^2$", "text/plain": "x**2"}, "text", "text/plain", "x**2"),
        (
            {"text/latex": "$x^2$", "text/plain": "<IPython.core.display.Latex object>"},
            "text",
            "text/latex",
            "$x^2$",
        ),
        (
            {
                "text/html": "<b>bold</b> <script>var x;</script>text",
                "text/plain": "<IPython.core.display.HTML object>",
            },
            "text",
            "text/html",
            "bold text",
        ),
        ({"application/json": {"a": [1, 2]}}, "json", "application/json", '{"a": [1, 2]}'),
        (
            {"application/pdf": "JVBERi0="},
            "described",
            None,
            "no representation to show; MIME types: application/pdf",
        ),
    ],
)
def test_text_representations_are_shown_as_text(
    data: dict[str, Any], kind: str, mime: str | None, shown: str
) -> None:
    part = condense_outputs([{"output_type": "display_data", "metadata": {}, "data": data}]).parts[
        0
    ]
    assert (part.kind, part.mime_type, part.text) == (kind, mime, shown)


def test_osc_hyperlinks_and_backspaces_in_text_plain_are_rendered() -> None:
    plain = "see \x1b]8;;https://example.org\x1b\\the docs\x1b]8;;\x1b\\ or b\bbo\bol\bld"
    part = condense_outputs(
        [{"output_type": "execute_result", "metadata": {}, "data": {"text/plain": plain}}]
    ).parts[0]
    assert part.text == "see the docs or bold"


def test_malformed_outputs_are_described_and_do_not_stop_the_others() -> None:
    outputs: list[Any] = [
        "not a dict",
        {"output_type": "stream", "name": "stdout", "text": 5},
        {"output_type": "mystery"},
        {"output_type": "display_data", "data": "nope"},
        _stream("stdout", "fine\n"),
    ]
    result = condense_outputs(outputs)
    assert [p.kind for p in result.parts] == ["invalid", "invalid", "invalid", "invalid", "stream"]
    assert result.parts[-1].text == "fine\n"


def test_many_outputs_on_a_small_budget_say_which_ones_were_left_out() -> None:
    outputs = [
        {"output_type": "execute_result", "metadata": {}, "data": {"text/plain": f"value {i}"}}
        for i in range(200)
    ]
    result = condense_outputs(outputs, budget=1_000)
    assert len(result.text) <= 1_000 and result.truncated
    assert result.omitted_outputs and result.omitted_outputs[-1] == 199
    assert f"{len(result.omitted_outputs)} more outputs not shown" in result.text


def test_the_note_on_left_out_outputs_names_the_tool_that_reads_them() -> None:
    from jupyter_jcli.mcp._readonly_schema import TOOL_NAME

    outputs = [
        {"output_type": "execute_result", "metadata": {}, "data": {"text/plain": f"value {i}"}}
        for i in range(200)
    ]
    result = condense_outputs(outputs, budget=1_000)
    note = result.text.splitlines()[-1]
    assert "more outputs not shown" in note
    assert TOOL_NAME in note
    assert "list_notebook_outputs" not in note  # no server offers a tool of that name


@pytest.mark.parametrize("argument", ["budget", "image_max_pixels", "image_max_bytes"])
@pytest.mark.parametrize("value", [0, -5, 2.5, True])
def test_bad_caps_are_usage_errors(argument: str, value: object) -> None:
    with pytest.raises(JcliError) as caught:
        condense_outputs([], **{argument: value})  # type: ignore[arg-type]
    assert caught.value.code == ErrorCode.USAGE_ERROR


@pytest.mark.parametrize("value", [(0, 5), (5,), (5, 2.5), [5, 5]])
def test_bad_stream_line_caps_are_usage_errors(value: object) -> None:
    with pytest.raises(JcliError) as caught:
        condense_outputs([], stream_lines=value)  # type: ignore[arg-type]
    assert caught.value.code == ErrorCode.USAGE_ERROR


def test_a_cut_stream_shows_as_many_lines_as_the_budget_holds_without_a_line_cap() -> None:
    text = "".join(f"step {i}\n" for i in range(10_000))
    stream = [{"output_type": "stream", "name": "stdout", "text": text}]
    capped = condense_outputs(stream, budget=4_000)
    sized = condense_outputs(stream, budget=4_000, stream_lines=None)
    assert capped.parts[0].omitted_lines > sized.parts[0].omitted_lines
    assert len(capped.text) < 1_000 and 3_500 < len(sized.text) <= 4_000
    assert sized.text.count("\nstep ") > 200 and sized.parts[0].truncated


def test_no_outputs_condense_to_an_empty_text() -> None:
    result = condense_outputs([])
    assert (result.text, result.parts, result.images, result.truncated) == ("", [], [], False)


def _random_output(rng: random.Random) -> Any:
    pieces = [
        "x",
        "\r",
        "\b",
        "\n",
        "\x1b[31m",
        "\x1b]8;;u\x07",
        "\x07",
        "é",
        "\t",
        "long " * 50,
        "\x1b",
        "\x9b",
    ]
    text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 400)))
    choice = rng.randrange(6)
    if choice == 0:
        return _stream(rng.choice(["stdout", "stderr"]), text)
    if choice == 1:
        return {"output_type": "error", "ename": "E", "evalue": text, "traceback": [text, text]}
    if choice == 2:
        rows = "".join(
            f"<tr><td rowspan='{rng.randrange(1, 3)}'>{text[:9]}</td><td>{i}</td></tr>"
            for i in range(rng.randrange(0, 80))
        )
        return {
            "output_type": "execute_result",
            "metadata": {},
            "data": {"text/html": f"<table>{rows}</table>", "text/plain": text},
        }
    if choice == 3:
        return {
            "output_type": "display_data",
            "metadata": {},
            "data": {"application/json": {"t": text}},
        }
    if choice == 4:
        return {
            "output_type": "display_data",
            "metadata": {},
            "data": {"text/plain": text.split("\n")},
        }
    return rng.choice(
        [None, {}, {"output_type": "stream"}, {"output_type": "display_data", "data": {}}]
    )


def test_the_text_never_exceeds_the_budget_for_any_input() -> None:
    rng = random.Random(20240531)
    for _ in range(300):
        outputs = [_random_output(rng) for _ in range(rng.randrange(0, 12))]
        budget = rng.choice([1, 2, 5, 17, 40, 100, 333, 1_000, 5_000])
        result = condense_outputs(outputs, budget=budget, cell_index=rng.choice([None, 3]))
        assert len(result.text) <= budget
        assert "\x1b" not in result.text
