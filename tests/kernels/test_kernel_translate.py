"""iopub messages -> nbformat v4 outputs, replayed from scripted sequences (no kernel)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import nbformat
import pytest

from jupyter_jcli.kernels import DisplayRegistry, DisplayUpdate, OutputCollector


def msg(kind: str, **content: Any) -> dict[str, Any]:
    return {
        "header": {"msg_type": kind, "msg_id": f"x-{kind}"},
        "parent_header": {"msg_id": "req"},
        "metadata": {},
        "content": content,
    }


def out(name: str, text: str) -> dict[str, Any]:
    return msg("stream", name=name, text=text)


def display(
    data: dict[str, Any], display_id: str | None = None, kind: str = "display_data"
) -> dict[str, Any]:
    content: dict[str, Any] = {"data": data, "metadata": {}}
    if display_id is not None:
        content["transient"] = {"display_id": display_id}
    return msg(kind, **content)


def stream(name: str, text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": name, "text": text}


def shown(text: str, kind: str = "display_data") -> dict[str, Any]:
    return {"output_type": kind, "data": {"text/plain": text}, "metadata": {}}


@dataclass
class Case:
    name: str
    messages: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    execution_count: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


CASES = [
    Case("one stream chunk", [out("stdout", "hi\n")], [stream("stdout", "hi\n")]),
    Case(
        "adjacent chunks of one stream merge",
        [out("stdout", "a"), out("stdout", "b\n"), out("stdout", "c\n")],
        [stream("stdout", "ab\nc\n")],
    ),
    Case(
        "interleaved stdout and stderr stay separate outputs",
        [out("stdout", "1\n"), out("stderr", "w\n"), out("stdout", "2\n"), out("stdout", "3\n")],
        [stream("stdout", "1\n"), stream("stderr", "w\n"), stream("stdout", "2\n3\n")],
    ),
    Case(
        "a display between two chunks keeps them apart",
        [out("stdout", "a\n"), display({"text/plain": "D"}), out("stdout", "b\n")],
        [stream("stdout", "a\n"), shown("D"), stream("stdout", "b\n")],
    ),
    Case(
        "carriage-return progress keeps the last version of the line",
        [out("stderr", "10%\r"), out("stderr", "20%\r"), out("stderr", "100%\n")],
        [stream("stderr", "100%\n")],
    ),
    Case(
        "carriage returns inside one chunk",
        [out("stdout", "a\rb\rc\n")],
        [stream("stdout", "c\n")],
    ),
    Case("CR LF is a newline", [out("stdout", "a\r\nb\r\n")], [stream("stdout", "a\nb\n")]),
    Case(
        "CR then LF across chunks is a newline that keeps the line",
        [out("stdout", "abc\r"), out("stdout", "\nnext")],
        [stream("stdout", "abc\nnext")],
    ),
    Case(
        "a trailing CR waits for the next chunk",
        [out("stdout", "head\n"), out("stdout", "50%\r")],
        [stream("stdout", "head\n50%\r")],
    ),
    Case(
        "overwriting never reaches finished lines",
        [out("stdout", "done\n"), out("stdout", "\rx"), out("stdout", "\ry\n")],
        [stream("stdout", "done\ny\n")],
    ),
    Case(
        "a shorter rewrite replaces the whole line",
        [out("stdout", "loading....\r"), out("stdout", "ok\n")],
        [stream("stdout", "ok\n")],
    ),
    Case(
        "backspace erases the character before it",
        [out("stdout", "abc\b\bd\n")],
        [stream("stdout", "ad\n")],
    ),
    Case(
        "clear_output empties at once",
        [out("stdout", "a\n"), display({"text/plain": "D"}), msg("clear_output", wait=False)],
        [],
    ),
    Case(
        "clear_output wait clears when the next output arrives",
        [out("stdout", "old\n"), msg("clear_output", wait=True), out("stdout", "new\n")],
        [stream("stdout", "new\n")],
    ),
    Case(
        "clear_output wait with no output after keeps the outputs",
        [out("stdout", "kept\n"), msg("clear_output", wait=True)],
        [stream("stdout", "kept\n")],
    ),
    Case(
        "clear_output wait: a display update is not an output",
        [
            display({"text/plain": "v1"}, "p"),
            msg("clear_output", wait=True),
            msg(
                "update_display_data",
                data={"text/plain": "v2"},
                metadata={},
                transient={"display_id": "p"},
            ),
        ],
        [shown("v2")],
    ),
    Case(
        "clear_output wait repeated in a loop keeps only the last frame",
        [
            msg("clear_output", wait=True),
            display({"text/plain": "frame 1"}),
            msg("clear_output", wait=True),
            display({"text/plain": "frame 2"}),
            msg("clear_output", wait=True),
            out("stdout", "frame 3\n"),
        ],
        [stream("stdout", "frame 3\n")],
    ),
    Case(
        "a stream after a clear starts a new output",
        [out("stdout", "a"), msg("clear_output", wait=False), out("stdout", "b")],
        [stream("stdout", "b")],
    ),
    Case(
        "transient is dropped from display_data",
        [display({"text/html": "<b>x</b>", "text/plain": "x"}, "d1")],
        [
            {
                "output_type": "display_data",
                "data": {"text/html": "<b>x</b>", "text/plain": "x"},
                "metadata": {},
            }
        ],
    ),
    Case(
        "execute_result carries execution_count, transient dropped",
        [
            msg("execute_input", code="1", execution_count=7),
            msg(
                "execute_result",
                data={"text/plain": "1"},
                metadata={},
                execution_count=7,
                transient={"display_id": "r"},
            ),
        ],
        [
            {
                "output_type": "execute_result",
                "data": {"text/plain": "1"},
                "metadata": {},
                "execution_count": 7,
            }
        ],
        execution_count=7,
    ),
    Case(
        "error keeps ename, evalue, traceback",
        [msg("error", ename="ValueError", evalue="bad", traceback=["tb1", "tb2"])],
        [
            {
                "output_type": "error",
                "ename": "ValueError",
                "evalue": "bad",
                "traceback": ["tb1", "tb2"],
            }
        ],
    ),
    Case(
        "update_display_data replaces data and metadata of the output with that id",
        [
            display({"text/plain": "0%"}, "bar"),
            out("stdout", "between\n"),
            msg(
                "update_display_data",
                data={"text/plain": "100%"},
                metadata={"m": 1},
                transient={"display_id": "bar"},
            ),
        ],
        [
            {"output_type": "display_data", "data": {"text/plain": "100%"}, "metadata": {"m": 1}},
            stream("stdout", "between\n"),
        ],
    ),
    Case(
        "a display_data with a known id updates the earlier one and is appended",
        [display({"text/plain": "v1"}, "same"), display({"text/plain": "v2"}, "same")],
        [shown("v2"), shown("v2")],
    ),
    Case(
        "an update for an unknown display id is ignored",
        [
            display({"text/plain": "v1"}, "a"),
            msg(
                "update_display_data",
                data={"text/plain": "z"},
                metadata={},
                transient={"display_id": "nope"},
            ),
        ],
        [shown("v1")],
    ),
    Case(
        "status, execute_input, comms and unknown messages add nothing",
        [
            msg("status", execution_state="busy"),
            msg("execute_input", code="x", execution_count=3),
            msg("comm_open", comm_id="c", target_name="t", data={}),
            msg("something_new", x=1),
            msg("status", execution_state="idle"),
        ],
        [],
        execution_count=3,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_translation_case(case: Case) -> None:
    collector = OutputCollector()
    for m in case.messages:
        collector.handle(m)
    assert collector.outputs == case.outputs
    assert collector.execution_count == case.execution_count
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x", outputs=collector.outputs)
    nb.cells.append(cell)
    nbformat.validate(nbformat.from_dict(nb))


def test_handle_returns_the_output_each_message_carried() -> None:
    collector = OutputCollector()
    assert collector.handle(out("stdout", "a")) == stream("stdout", "a")
    assert collector.handle(out("stdout", "b")) == stream("stdout", "b")
    assert collector.handle(msg("status", execution_state="idle")) is None
    update = msg(
        "update_display_data", data={"text/plain": "u"}, metadata={}, transient={"display_id": "q"}
    )
    assert collector.handle(update) == shown("u")
    assert collector.outputs == [stream("stdout", "ab")]


def test_an_update_reaches_the_output_of_an_earlier_cell() -> None:
    registry = DisplayRegistry()
    first = OutputCollector(registry, "plot")
    first.handle(out("stdout", "before\n"))
    first.handle(display({"text/plain": "v1"}, "fig"))
    first.finish()
    second = OutputCollector(registry, "tweak")
    second.handle(
        msg(
            "update_display_data",
            data={"text/plain": "v2"},
            metadata={"w": 3},
            transient={"display_id": "fig"},
        )
    )
    second.handle(
        msg(
            "update_display_data",
            data={"text/plain": "v3"},
            metadata={},
            transient={"display_id": "fig"},
        )
    )
    assert second.outputs == []
    assert second.display_updates == [DisplayUpdate("plot", 1, {"text/plain": "v3"}, {})]


def test_an_update_reaches_every_cell_showing_the_id_and_this_cell_too() -> None:
    registry = DisplayRegistry()
    for key in ("a", "b"):
        c = OutputCollector(registry, key)
        c.handle(display({"text/plain": key}, "shared"))
        c.finish()
    third = OutputCollector(registry, "c")
    third.handle(display({"text/plain": "c"}, "shared"))
    assert third.outputs == [shown("c")]
    assert [(u.cell_key, u.output_index, u.data) for u in third.display_updates] == [
        ("a", 0, {"text/plain": "c"}),
        ("b", 0, {"text/plain": "c"}),
    ]


def test_re_executing_a_cell_forgets_its_earlier_display_ids() -> None:
    registry = DisplayRegistry()
    first = OutputCollector(registry, "cell")
    first.handle(display({"text/plain": "v1"}, "d"))
    first.finish()
    again = OutputCollector(registry, "cell")
    again.handle(
        msg(
            "update_display_data",
            data={"text/plain": "v2"},
            metadata={},
            transient={"display_id": "d"},
        )
    )
    assert again.display_updates == []
    assert again.outputs == []
    again.finish()
    assert registry.targets("d") == []


def test_cleared_outputs_are_no_longer_display_targets() -> None:
    registry = DisplayRegistry()
    c = OutputCollector(registry, "cell")
    c.handle(display({"text/plain": "v1"}, "d"))
    c.handle(msg("clear_output", wait=False))
    c.handle(display({"text/plain": "other"}, "e"))
    c.finish()
    assert registry.targets("d") == []
    assert registry.targets("e") == [("cell", 0)]


def test_code_without_a_cell_key_registers_nothing() -> None:
    registry = DisplayRegistry()
    c = OutputCollector(registry, None)
    c.handle(display({"text/plain": "v1"}, "d"))
    c.finish()
    assert registry.targets("d") == []


def test_ten_thousand_carriage_return_updates_collapse_to_one_line() -> None:
    collector = OutputCollector()
    collector.handle(out("stdout", "start\n"))
    for i in range(10_000):
        collector.handle(out("stderr", f"{i / 100:.2f}% |{'#' * (i // 500)}|\r"))
    collector.handle(out("stderr", "done\n"))
    assert collector.outputs == [stream("stdout", "start\n"), stream("stderr", "done\n")]


def test_many_lines_with_progress_between_keep_every_finished_line() -> None:
    collector = OutputCollector()
    for epoch in range(50):
        for step in range(20):
            collector.handle(out("stdout", f"epoch {epoch} step {step}\r"))
        collector.handle(out("stdout", f"epoch {epoch} done\n"))
    text = collector.outputs[0]["text"]
    assert text.splitlines() == [f"epoch {e} done" for e in range(50)]
    assert "\r" not in text
