"""Writing results: one compact JSON document, or text for a person; errors either way."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click
import orjson

from jupyter_jcli.errors import JcliError

__all__ = ["CliState", "dumps", "emit_error", "emit_json", "json_mode"]


@dataclass
class CliState:
    """Per-invocation settings shared by every command (the click context object).

    Attributes:
        json_mode: True when ``-j``/``--json`` was given.
    """

    json_mode: bool = False


def json_mode() -> bool:
    """Whether the running command was asked for JSON (``j-cli -j ...``)."""
    state = click.get_current_context().find_object(CliState)
    return bool(state and state.json_mode)


def dumps(document: Mapping[str, Any]) -> bytes:
    """Serialize a document compactly as UTF-8 JSON, non-ASCII kept.

    orjson refuses strings holding lone surrogates (possible in paths and messages built from
    undecodable file names); those documents fall back to the standard library with ASCII
    escapes, which is still one valid JSON document.
    """
    try:
        return orjson.dumps(document)
    except TypeError:
        import json

        return json.dumps(document, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def emit_json(document: Mapping[str, Any]) -> None:
    """Write ``document`` as one line of compact JSON to stdout."""
    click.echo(dumps(document))


def emit_error(error: JcliError, *, json_mode: bool) -> None:
    """Render an error: its JSON document on stdout in JSON mode, else
    ``error CODE: message`` on stderr."""
    if json_mode:
        emit_json(error.to_dict())
    else:
        click.echo(f"error {error.code}: {error.message}", err=True)
