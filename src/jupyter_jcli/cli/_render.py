"""Text renderings of protocol responses for a person (the non ``-j`` mode).

Pure string building over the documents returned by :mod:`jupyter_jcli.outputs`; nothing here
reads files or decides what to read.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jupyter_jcli.cli._clip import clip
from jupyter_jcli.cli._emit import echo
from jupyter_jcli.notebook.io import first_line

__all__ = [
    "counted",
    "describe_image",
    "describe_selected",
    "echo_read",
    "format_bytes",
    "j_cli",
    "listing_lines",
    "next_page",
    "output_command",
    "output_summary",
    "pretty_json",
    "render_read",
    "source_label",
    "strip_ansi",
]

# CSI sequences (colours, cursor moves) and OSC sequences (titles, hyperlinks), per ECMA-48.
_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")

RASTER_ENCODING = "base64"


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (as found in IPython tracebacks)."""
    return _ANSI_RE.sub("", text)


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON text (two spaces), integers beyond 64 bits kept exact."""
    import orjson  # only for text mode: a ``-j`` read never pays for its import

    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # orjson cannot write integers beyond 64 bits; the stdlib can
        import json

        return json.dumps(value, indent=2, ensure_ascii=False)


def format_bytes(size: object) -> str:
    """``23,456 bytes`` for an int; ``? bytes`` for anything else."""
    return f"{size:,} bytes" if isinstance(size, int) else "? bytes"


def j_cli(*words: object) -> str:
    """A ``j-cli`` command line for a hint, each word quoted for the shell as needed."""
    return shlex.join(["j-cli", *map(str, words)])


def output_command(file_arg: str, cell_index: int, output_index: int, *extra: str) -> str:
    """The shell command that reads one output, for hints: ``j-cli notebook output ...``."""
    return j_cli(
        "notebook", "output", file_arg, "--cell", cell_index, "--output", output_index, *extra
    )


def source_label(source: Mapping[str, Any]) -> str:
    """``cell 3 of nb.ipynb (id abc)``, plus the ``.py`` mapping when one was used."""
    label = f"cell {source.get('cell_index')} of {source.get('path')}"
    if source.get("cell_name"):
        label += f" (name {source['cell_name']})"
    elif source.get("cell_id"):
        label += f" (id {source['cell_id']})"
    mapping = source.get("mapping")
    if mapping and mapping != "direct":
        requested = source.get("requested_path")
        requested_cell = source.get("requested_cell_index")
        label += f", mapped by {mapping} from {requested} cell {requested_cell}"
    return label


def output_summary(entry: Mapping[str, Any]) -> str:
    """One line describing a directory entry of ``list_outputs`` (without its index)."""
    problem = entry.get("problem")
    if isinstance(problem, Mapping):
        return f"problem {problem.get('code')}: {problem.get('message')}"
    output_type = entry.get("output_type")
    if output_type == "stream":
        return f"{entry.get('name')}, {entry.get('total_characters'):,} characters"
    if output_type == "error":
        evalue = clip(first_line(str(entry.get("evalue"))), 60)
        lines = entry.get("traceback_lines")
        return f"{entry.get('ename')}: {evalue} ({lines} traceback lines)"
    parts: list[str] = []
    count = entry.get("execution_count")
    if output_type == "execute_result" and count is not None:
        parts.append(f"Out[{count}]")
    sizes = entry.get("mime_bytes")
    sizes = sizes if isinstance(sizes, Mapping) else {}
    problems = entry.get("mime_problems")
    problems = problems if isinstance(problems, Mapping) else {}
    types = entry.get("available_mime_types") or []

    def describe(mime: str) -> str:
        problem = problems.get(mime)
        if isinstance(problem, Mapping):
            return f"{mime} (problem {problem.get('code')}: {problem.get('message')})"
        return f"{mime} ({format_bytes(sizes[mime])})" if mime in sizes else str(mime)

    parts.append(", ".join(describe(str(mime)) for mime in types) or "no data")
    return " ".join(parts)


def listing_lines(listing: Mapping[str, Any], file_arg: str) -> list[str]:
    """A table of the outputs in a ``list_outputs`` response, with a hint to read one."""
    source = listing.get("source") or {}
    outputs: Sequence[Mapping[str, Any]] = listing.get("outputs") or []
    count = listing.get("output_count", len(outputs))
    lines = [f"{source_label(source)}: {count} output{'' if count == 1 else 's'}"]
    if not outputs:
        return lines
    lines.append(f"  {'#':>3}  {'type':<16} details")
    for entry in outputs:
        output_type = str(entry.get("output_type", "?"))
        lines.append(f"  {entry.get('output_index'):>3}  {output_type:<16} {output_summary(entry)}")
    cell_index = int(source.get("requested_cell_index", source.get("cell_index", 0)))
    lines.append(f"read one: {output_command(file_arg, cell_index, 0)}")
    return lines


def describe_image(selected: Mapping[str, Any]) -> str:
    """``image/png, 23,456 bytes, 640x480 px`` (dimensions only when known)."""
    text = f"{selected.get('mime_type')}, {format_bytes(selected.get('bytes'))}"
    width, height = selected.get("width"), selected.get("height")
    if isinstance(width, int) and isinstance(height, int):
        text += f", {width}x{height} px"
    return text


def describe_selected(result: Mapping[str, Any]) -> str:
    """Short description of a read: output type, selected MIME type, alternatives."""
    output_type = result.get("output_type")
    selected = result.get("selected")
    if isinstance(selected, Mapping):
        others = [
            m for m in result.get("available_mime_types") or [] if m != selected.get("mime_type")
        ]
        text = f"{output_type}, {selected.get('mime_type')}"
        if others:
            text += f" (also: {', '.join(map(str, others))})"
        return text
    stream = result.get("stream")
    if output_type == "stream" and isinstance(stream, Mapping):
        return f"stream {stream.get('name')}"
    return str(output_type)


def window_note(window: Mapping[str, Any], file_arg: str, cell: int, output: int) -> str:
    """``characters 0-99999 of 250000; next: j-cli ... --offset 100000`` for a text window."""
    offset = int(window.get("offset", 0))
    returned = int(window.get("returned_characters", 0))
    total = window.get("total_characters")
    following = next_page(window, lambda *words: output_command(file_arg, cell, output, *words))
    return f"characters {offset}-{offset + returned} of {total}" + (
        f"; {following}" if following else ""
    )


def next_page(window: Mapping[str, Any], command: Callable[..., str]) -> str | None:
    """``next page: <command>`` for a text window that has one (``command(*words)``: the
    read with ``words``, ``--offset N`` and the window's ``--mime``), else ``None``."""
    if "next_offset" not in window:
        return None
    mime = ("--mime", str(window["mime_type"])) if window.get("mime_type") else ()
    return f"next page: {command('--offset', str(window['next_offset']), *mime)}"


def render_read(result: Mapping[str, Any], file_arg: str) -> None:
    """Print a ``read_output`` response of a notebook's output for a person
    (:func:`echo_read`, its hints as ``j-cli notebook output`` commands)."""
    source = result.get("source") or {}
    cell = int(source.get("requested_cell_index", source.get("cell_index", 0)))
    output = int(source.get("output_index", 0))
    echo_read(
        result,
        f"{source_label(source)}, output {output}",
        lambda window: window_note(window, file_arg, cell, output),
        "save it: " + output_command(file_arg, cell, output, "--save", "PATH"),
    )


def echo_read(
    result: Mapping[str, Any],
    header: str,
    page_note: Callable[[Mapping[str, Any]], str | None],
    save_hint: str | None = None,
) -> None:
    """Print a ``read_output`` response for a person.

    The content (text page, traceback, JSON, image description) goes to stdout; the header,
    ``page_note`` of a text window (``None``: no note) and ``save_hint`` of an image go to
    stderr as ``# ...`` lines, so ``> file`` captures the content alone.
    """
    echo(f"# {header}: {describe_selected(result)}", err=True)
    stream, error, selected = result.get("stream"), result.get("error"), result.get("selected")
    window: Mapping[str, Any] | None = None
    if isinstance(stream, Mapping):
        window = stream
    elif isinstance(error, Mapping):
        echo(f"{error.get('ename')}: {error.get('evalue')}")
        for line in error.get("traceback") or []:
            echo(strip_ansi(str(line)))
    elif isinstance(selected, Mapping):
        if selected.get("encoding") == RASTER_ENCODING:
            echo(describe_image(selected))
            if save_hint is not None:
                echo(f"# {save_hint}", err=True)
        elif selected.get("encoding") == "json":
            echo(pretty_json(selected.get("data")))
        else:
            window = selected
    if window is not None:
        text = str(window.get("data", ""))
        echo(text, nl=not text.endswith("\n"))
        note = page_note(window)
        if note is not None:
            echo(f"# {note}", err=True)


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun`` in agreement: ``1 cell``, ``2 cells`` (``plural`` when it is
    not ``noun + "s"``)."""
    if count == 1:
        return f"{count:,} {noun}"
    return f"{count:,} {plural if plural is not None else noun + 's'}"
