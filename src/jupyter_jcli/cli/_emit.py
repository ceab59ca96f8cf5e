"""Writing results: one compact JSON document, or text for a person; errors either way."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import click

from jupyter_jcli.errors import JcliError, ok_document
from jupyter_jcli.outputs import replace_surrogates, serialize_json

__all__ = [
    "CliState",
    "dumps",
    "echo",
    "emit_error",
    "emit_help",
    "emit_json",
    "json_mode",
    "ok_document",
]


class CliState:
    """Per-invocation settings shared by every command (the click context object); a plain
    class: the only dataclass a read would build (``dataclasses`` and its generated methods
    cost a cold read more than the rest of its settings).

    Attributes:
        json_mode: True when ``-j``/``--json`` was given.
    """

    def __init__(self, json_mode: bool = False) -> None:
        self.json_mode = json_mode


def json_mode() -> bool:
    """Whether the running command was asked for JSON (``j-cli -j ...``)."""
    state = click.get_current_context().find_object(CliState)
    return bool(state and state.json_mode)


def dumps(document: Mapping[str, Any]) -> bytes:
    """Serialize a document compactly as UTF-8 JSON, non-ASCII kept: the one JSON writer.

    The protocol's own serializer (:func:`jupyter_jcli.outputs.serialize_json`), so what is
    written is what the transport bound measured: lone surrogates (possible in cell sources,
    paths and messages built from undecodable names) become U+FFFD, NaN and infinities
    ``null``, integers beyond 64 bits stay exact.

    Raises:
        OutputProtocolError: ``OUTPUT_DATA_INVALID`` for a value that is not JSON at all.
    """
    return serialize_json(document)


def echo(text: str = "", *, err: bool = False, nl: bool = True, color: bool | None = None) -> None:
    """Write text for a person (stdout, or stderr with ``err``): the one text writer.

    Lone surrogates, which no terminal encoding can write, become U+FFFD, so a cell source
    or output holding one never crashes a command.
    """
    click.echo(replace_surrogates(text), err=err, nl=nl, color=color)


def emit_json(document: Mapping[str, Any]) -> None:
    """Write ``document`` as one line of compact JSON to stdout."""
    click.echo(dumps(document))


def emit_result(
    document: Callable[[], Mapping[str, Any]], lines: Callable[[], Iterable[str]]
) -> None:
    """A command's result: ``document()`` as JSON in ``--json`` mode, else each of ``lines()``
    as a line (each called only in its mode)."""
    if json_mode():
        emit_json(document())
        return
    for line in lines():
        echo(line)


def emit_help(ctx: click.Context) -> None:
    """Write a command's help: text, or with ``-j`` one JSON document
    ``{"schema_version": 1, "status": "ok", "command": ..., "help": ...}``."""
    state = ctx.find_object(CliState)
    text = ctx.get_help()
    if state is not None and state.json_mode:
        emit_json(ok_document(command=ctx.command_path, help=text))
    else:
        echo(text, color=ctx.color)


def emit_error(error: JcliError, *, json_mode: bool) -> None:
    """Render an error: its JSON document on stdout in JSON mode, else
    ``error CODE: message`` on stderr."""
    if json_mode:
        emit_json(error.to_dict())
    else:
        echo(f"error {error.code}: {error.message}", err=True)
